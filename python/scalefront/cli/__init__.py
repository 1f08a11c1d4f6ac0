"""The ``scalefront`` command: one module per subcommand (eval, sweep, merge, validate, bom, roi, calibrate, measure,
inference, tui, serve), each parsing its options, building one request, calling the library and rendering the
answer; ``types`` holds the argparse types and ``parser`` what the commands share (the one-line parser, the help
formatter, the exit statuses, the cluster, price and catalog options).

Errors in input (unknown names, malformed files, impossible parallelism, bad numbers) print one line to stderr
and exit with status 2; no traceback. A bug (a panic in the core) exits 70, a lost cluster worker 75, Ctrl-C 130
and SIGTERM 143, with nothing written.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from types import ModuleType

from scalefront._core import __version__
from scalefront.cli.parser import EXIT_INTERNAL, EXIT_TEMPFAIL, EXIT_USAGE, Parser
from scalefront.errors import ClusterError, InternalError, ScalefrontError, UsageError, message_of
from scalefront.inputs.scenario.file import DEFAULT_SCENARIO
from scalefront.signals import Terminated, handling_signals, interrupted_exit, signalled

__all__ = ["Terminated", "UsageError", "build_parser", "main", "run_command_line"]


#: The commands, in the order help lists them, and the module of each (`scalefront.cli.<module>`).
COMMANDS = {
    "eval": "eval",
    "sweep": "sweep",
    "merge": "merge",
    "validate": "validate",
    "bom": "bom",
    "roi": "roi",
    "calibrate": "calibrate",
    "measure": "measure",
    "inference": "inference",
    "tui": "tui",
    "serve": "serve",
}


def _modules(argv: Sequence[str] | None) -> list[ModuleType]:
    """The modules of the commands the parser needs: the one `argv` starts with, else all of them (for the
    top-level help or version, a misspelt command, or none). A command's module imports what it runs with
    (polars, the catalogs, a UI), so `scalefront roi` does not import the measurement harness or the UI."""
    first = argv[0] if argv else None
    names = [first] if first in COMMANDS else list(COMMANDS)
    return [importlib.import_module(f"scalefront.cli.{COMMANDS[n]}") for n in names]


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The command line's parser: with every command, or with only the one `argv` names (see `_modules`)."""
    parser = Parser(
        prog="scalefront",
        description="Plan GPU training clusters with numbers: step time, scaling, memory and cost.",
    )
    parser.add_argument("--version", action="version", version=f"scalefront {__version__}")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=Parser, dest="command")
    for command in _modules(argv):
        command.add(sub)
    return parser


def _parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """The arguments; an unknown one is refused by the command's own parser, so that the line names the command
    and its --help (argparse reports it from the top-level parser, whatever command it follows)."""
    args, extras = parser.parse_known_args(argv)
    if extras:
        commands = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        own = commands.choices.get(getattr(args, "command", None) or "") if commands is not None else None
        (own or parser).error(f"unrecognized arguments: {' '.join(extras)}")
    return args


def _run_default(args: argparse.Namespace) -> int:
    """`scalefront` alone: the UI on the default scenario on a terminal, else the batch sweep of it."""
    from scalefront import api
    from scalefront.cli import tui

    ui = api.find_ui()
    if ui is not None and sys.stdin.isatty() and sys.stdout.isatty():
        return tui.run(argparse.Namespace(scenario=args.scenario))
    if ui is None:
        print(f"scalefront: {api.ui_missing_message()}", file=sys.stderr)
    else:
        print(
            "not a terminal: running the batch sweep of the default scenario (the UI needs a terminal)", file=sys.stderr
        )
    sweep_args = build_parser(["sweep"]).parse_args(["sweep", args.scenario])
    return _run_command(sweep_args)


def _run_command(args: argparse.Namespace) -> int:
    run: Callable[[argparse.Namespace], int] = args.run
    return run(args)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line in this process (`python -m scalefront.cli`, tests): Ctrl-C and SIGTERM handled while it
    runs (see `scalefront.console`, which the console script uses from its first instant)."""
    with handling_signals():
        return run_command_line(argv)


def run_command_line(argv: Sequence[str] | None = None) -> int:
    """Parse and run one command; its exit status. Every error is one line (see the module doc)."""
    parser = build_parser(sys.argv[1:] if argv is None else argv)
    args = _parse(parser, argv)
    if not hasattr(args, "run"):
        args = argparse.Namespace(run=_run_default, scenario=DEFAULT_SCENARIO)
    try:
        return _run_command(args)
    except BrokenPipeError:
        return 0
    except Exception as err:
        if signalled() is not None:  # an error the interruption caused (a cluster stopped mid-start, ...)
            return interrupted_exit()
        return _error_status(err)
    except KeyboardInterrupt as err:
        return interrupted_exit(isinstance(err, Terminated))


def _error_status(err: Exception) -> int:
    """One line for an error, and its exit status; anything else is re-raised (a bug: its traceback)."""
    if isinstance(err, ScalefrontError):
        print(f"scalefront: error: {message_of(err)}", file=sys.stderr)
        return EXIT_USAGE
    if isinstance(err, InternalError):
        print(f"scalefront: internal error (a bug, please report it): {message_of(err)}", file=sys.stderr)
        return EXIT_INTERNAL
    if isinstance(err, ClusterError):
        print(f"scalefront: error: {message_of(err)}", file=sys.stderr)
        return EXIT_TEMPFAIL
    raise err
