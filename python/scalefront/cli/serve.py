"""`scalefront serve`: the terminal UI served to web browsers (needs scalefront-tui)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from scalefront import api
from scalefront.cli import types as arg
from scalefront.engine.limits import DEFAULT_MAX_CONFIGS, check_size
from scalefront.errors import UsageError
from scalefront.inputs.scenario.build import load_scenario
from scalefront.inputs.scenario.file import DEFAULT_SCENARIO

if TYPE_CHECKING:
    from scalefront.cli.parser import Commands


def add(sub: Commands) -> None:
    p = sub.add_parser(
        "serve",
        help="serve the UI to a web browser (needs scalefront-tui)",
        description="Serve the terminal UI to web browsers (the same app, each browser tab its own session, at "
        "most --max-sessions at once). It listens on 127.0.0.1 only and answers only pages it served itself: "
        "open the address on this machine, or tunnel it (ssh -L 8000:localhost:8000 HOST). Files written from a "
        "browser (exports, saved scenarios) go only into --export-dir. To expose it on a network, pass --host "
        "0.0.0.0: a random token is then required (printed in the address) unless you give --token, and, behind "
        "a proxy, --public-url.",
    )
    p.add_argument("scenario", nargs="?", default=DEFAULT_SCENARIO, help="built-in scenario id or TOML file")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1, this machine)")
    p.add_argument("--port", type=arg.port, default=8000, help="port to listen on (default: 8000)")
    p.add_argument(
        "--export-dir",
        type=Path,
        help="the only directory browser sessions may read model files from and write to (default: the working "
        "directory)",
    )
    p.add_argument("--token", help="require this token in the address (default: none on 127.0.0.1, random beyond)")
    p.add_argument(
        "--max-sessions",
        type=arg.positive_int,
        default=4,
        help="browser sessions (app processes, ~120 MB each) served at once (default: 4)",
    )
    p.add_argument("--public-url", help="the address browsers use, if not http://HOST:PORT (a proxy, a DNS name)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    ui = api.find_ui()
    if ui is None:
        raise UsageError(api.ui_missing_message())
    loaded = load_scenario(args.scenario)  # a bad scenario, or one over the sweep's limit, is refused before serving
    check_size(loaded.path, loaded.size(), DEFAULT_MAX_CONFIGS)
    scenario = args.scenario if not Path(args.scenario).exists() else str(Path(args.scenario).resolve())
    return ui.serve(
        scenario,
        host=args.host,
        port=args.port,
        public_url=args.public_url,
        export_dir=args.export_dir,
        token=args.token,
        max_sessions=args.max_sessions,
    )
