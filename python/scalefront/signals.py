"""Ctrl-C (SIGINT) and SIGTERM, handled from the `scalefront` console script's first instant (`scalefront.console`
installs the handlers before anything heavy is imported), so that a signal at any moment, imports included, ends
the command with one line and 130 or 143.

The handler raises once, in the main thread: `KeyboardInterrupt` for SIGINT, `Terminated` (a KeyboardInterrupt)
for SIGTERM, which unwinds the command through its `finally` clauses (work cancelled, temporaries removed). It
also records the signal (`signalled`): whatever exception the unwinding ends in (a library may wrap the
interruption in its own error, as Dask does while a cluster starts), the command reports the signal. A second
signal while the first unwinds is ignored, so that the clean-up itself is never cut short.

This module imports only the standard library and `scalefront.errors` (`import scalefront` itself is lazy).
"""

from __future__ import annotations

import contextlib
import logging
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType

__all__ = [
    "EXIT_INTERRUPTED",
    "EXIT_TERMINATED",
    "Terminated",
    "handling_signals",
    "install",
    "interrupted_exit",
    "signalled",
]

#: Exit statuses of a command ended by a signal: 128 + the signal, as shells report them.
EXIT_INTERRUPTED = 128 + signal.SIGINT
EXIT_TERMINATED = 128 + signal.SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM (a job scheduler's stop, `kill`): handled like Ctrl-C, so work is cancelled and temporaries removed."""


_received: list[int] = []


def _on_signal(signum: int, frame: FrameType | None) -> None:
    if _received:
        return  # the first signal is being handled: let its clean-up finish
    _received.append(signum)
    raise Terminated if signum == signal.SIGTERM else KeyboardInterrupt


def signalled() -> int | None:
    """The signal that is ending this command, if one came."""
    return _received[0] if _received else None


def _unraisable_ignored(unraisable: object) -> None:
    """Errors raised in clean-up at exit (atexit callbacks, finalizers) after a signal: not shown."""


def interrupted_exit(terminated: bool = False) -> int:
    """Say which signal ended the command (SIGTERM when it came, or `terminated`), in one line; its exit status.

    What libraries print or log while they wind down at exit after that (Dask's at-exit close of a cluster whose
    start the signal cut short, asyncio's unretrieved task errors, ...) is the same interruption told again, with a
    traceback: it is not shown."""
    sys.unraisablehook = _unraisable_ignored
    logging.disable(logging.CRITICAL)  # asyncio's "Task exception was never retrieved" and the like
    term = terminated or signalled() == signal.SIGTERM
    print(f"scalefront: {'terminated' if term else 'interrupted'}; nothing was written", file=sys.stderr)
    return EXIT_TERMINATED if term else EXIT_INTERRUPTED


@contextlib.contextmanager
def handling_signals() -> Iterator[None]:
    """SIGINT and SIGTERM handled as the module says while the block runs (in the main thread; elsewhere a handler
    cannot be installed), the previous handlers restored afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, _on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    _received.clear()
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def install() -> None:
    """Handle SIGINT and SIGTERM as the module says from now on, for good (the console script's first step)."""
    if threading.current_thread() is threading.main_thread():
        for s in (signal.SIGINT, signal.SIGTERM):
            signal.signal(s, _on_signal)
