"""`python -m scalefront_tui [SCENARIO] [--export-dir DIR]`: the app itself, without the terminal check of
`scalefront tui`. The browser server (`scalefront serve`) runs each session's app this way, with Textual's web
driver and `--export-dir`: the app then reads and writes files only inside DIR, and ends when the server does."""

from __future__ import annotations

import argparse
import os
import threading
import time
from pathlib import Path

from scalefront.api import DEFAULT_SCENARIO
from scalefront_tui.app import run

#: Seconds between checks that the server which started a served app is still there.
PARENT_POLL_S = 0.5


def _end_with_parent() -> None:
    """A served app whose server is gone (killed without stopping its sessions) ends at once: nobody can reach
    it, and it would otherwise run on (a sweep in progress keeps a CPU busy)."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_S)
        os._exit(0)

    threading.Thread(target=watch, name="end-with-server", daemon=True).start()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m scalefront_tui")
    parser.add_argument("scenario", nargs="?", default=DEFAULT_SCENARIO)
    parser.add_argument("--export-dir", type=Path, help="served: read and write files only inside this directory")
    args = parser.parse_args()
    if args.export_dir is not None:
        _end_with_parent()
    run(args.scenario, export_dir=args.export_dir)


if __name__ == "__main__":
    main()
