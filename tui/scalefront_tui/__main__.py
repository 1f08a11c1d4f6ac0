"""`python -m scalefront_tui [SCENARIO]`: the app itself, without the terminal check of `scalefront tui` (the
browser server, textual-serve, runs it with its web driver this way)."""

from __future__ import annotations

import sys

from scalefront.api import DEFAULT_SCENARIO
from scalefront_tui import run

if __name__ == "__main__":
    run(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_SCENARIO)
