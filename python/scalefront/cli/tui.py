"""`scalefront tui`, and `scalefront` alone on a terminal: the terminal UI (the `scalefront-tui` package, found
through its entry point)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from scalefront import api, signals
from scalefront.engine.limits import DEFAULT_MAX_CONFIGS, check_size
from scalefront.errors import UsageError
from scalefront.inputs.scenario.build import load_scenario
from scalefront.inputs.scenario.file import DEFAULT_SCENARIO

if TYPE_CHECKING:
    from scalefront.cli.parser import Commands


def add(sub: Commands) -> None:
    p = sub.add_parser(
        "tui",
        help="browse a scenario's trade-offs in the terminal UI (needs scalefront-tui)",
        description="Open the terminal UI on a scenario: its sweep's frontier, charts, a configuration's details, the "
        "fabric comparison and the scenario's form. The sweep holds the sweep command's default limits.",
    )
    p.add_argument("scenario", nargs="?", default=DEFAULT_SCENARIO, help="built-in scenario id or TOML file")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    ui = api.find_ui()
    if ui is None:
        raise UsageError(api.ui_missing_message())
    # A bad scenario, or one over the sweep's limit, is one line here, before the screen is taken over.
    scenario = load_scenario(args.scenario)
    check_size(scenario.path, scenario.size(), DEFAULT_MAX_CONFIGS)
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError(
            "the terminal UI needs a terminal; for a browser: scalefront serve SCENARIO; "
            "for batch work: scalefront sweep SCENARIO --out F"
        )
    signals.keep_stderr()  # the UI draws on descriptor 2: a signal must not take it away from Textual
    ui.run(args.scenario)
    return 0
