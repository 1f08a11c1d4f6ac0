"""The ``scalefront`` command: one module per subcommand (eval, sweep, merge, validate, bom, roi, calibrate, measure,
tui, serve), each parsing its options, building one request, calling the library and rendering the answer; ``types``
holds the argparse types and ``parser`` what the commands share (the one-line parser, the help formatter, the exit
statuses, the cluster, price and catalog options).

Errors in input (unknown names, malformed files, impossible parallelism, bad numbers) print one line to stderr
and exit with status 2; no traceback. A bug (a panic in the core) exits 70, a lost cluster worker 75, Ctrl-C 130
and SIGTERM 143, with nothing written.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence

from scalefront import api
from scalefront._core import __version__
from scalefront.cli import bom, calibrate, measure, merge, roi, serve, sweep, tui, validate
from scalefront.cli import eval as evaluate
from scalefront.cli.parser import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_TEMPFAIL,
    EXIT_TERMINATED,
    EXIT_USAGE,
    Parser,
)
from scalefront.errors import ClusterError, InternalError, ScalefrontError, UsageError, message_of
from scalefront.inputs.scenario.file import DEFAULT_SCENARIO

__all__ = ["Terminated", "UsageError", "build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="scalefront",
        description="Plan GPU training clusters with numbers: step time, scaling, memory and cost.",
    )
    parser.add_argument("--version", action="version", version=f"scalefront {__version__}")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=Parser)
    for command in (evaluate, sweep, merge, validate, bom, roi, calibrate, measure, tui, serve):
        command.add(sub)
    return parser


def _run_default(args: argparse.Namespace) -> int:
    """`scalefront` alone: the UI on the default scenario on a terminal, else the batch sweep of it."""
    ui = api.find_ui()
    if ui is not None and sys.stdin.isatty() and sys.stdout.isatty():
        return tui.run(argparse.Namespace(scenario=args.scenario))
    if ui is None:
        print(f"scalefront: {api.ui_missing_message()}", file=sys.stderr)
    else:
        print(
            "not a terminal: running the batch sweep of the default scenario (the UI needs a terminal)", file=sys.stderr
        )
    sweep_args = build_parser().parse_args(["sweep", args.scenario])
    return _run_command(sweep_args)


def _run_command(args: argparse.Namespace) -> int:
    run: Callable[[argparse.Namespace], int] = args.run
    return run(args)


class Terminated(KeyboardInterrupt):
    """SIGTERM (a job scheduler's stop, `kill`): handled like Ctrl-C, so work is cancelled and temporaries removed."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """While the command runs, SIGTERM raises Terminated in the main thread (elsewhere it cannot be handled)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "run"):
        args = argparse.Namespace(run=_run_default, scenario=DEFAULT_SCENARIO)
    try:
        with _sigterm_as_interrupt():
            return _run_command(args)
    except ScalefrontError as err:
        print(f"scalefront: error: {message_of(err)}", file=sys.stderr)
        return EXIT_USAGE
    except InternalError as err:
        print(f"scalefront: internal error (a bug, please report it): {message_of(err)}", file=sys.stderr)
        return EXIT_INTERNAL
    except ClusterError as err:
        print(f"scalefront: error: {message_of(err)}", file=sys.stderr)
        return EXIT_TEMPFAIL
    except Terminated:
        print("scalefront: terminated; nothing was written", file=sys.stderr)
        return EXIT_TERMINATED
    except KeyboardInterrupt:
        print("scalefront: interrupted; nothing was written", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0
