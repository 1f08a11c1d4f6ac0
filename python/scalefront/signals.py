"""Ctrl-C (SIGINT) and SIGTERM, handled from the `scalefront` console script's first instant (`scalefront.console`
installs the handlers before anything heavy is imported), so that a signal at any moment, imports included, ends
the command with one line and 130 or 143.

The handler raises once, in the main thread: `KeyboardInterrupt` for SIGINT, `Terminated` (a KeyboardInterrupt)
for SIGTERM, which unwinds the command through its `finally` clauses (work cancelled, temporaries removed). It
also records the signal (`signalled`): whatever exception the unwinding ends in (a library may wrap the
interruption in its own error, as Dask does while a cluster starts), the command reports the signal. A second
signal while the first unwinds is ignored, so that the clean-up itself is never cut short.

Two ways the interruption could still go astray, closed from the console script's handlers on (`install`): the
handler's exception raised where Python cannot pass it on (a weakref or finaliser callback, such as importlib's
module-lock callback while the command's modules load) is only reported as "ignored", and the command would go on
with every later signal ignored as if its clean-up ran: it is delivered again (`_redeliver`). And a native
library's threads may print to descriptor 2 as the interruption winds them down (polars' streaming sinks print a
Rust panic when it aborts their tasks): from the first signal on, descriptor 2 goes nowhere while Python's
`sys.stderr` keeps the real one for the command's one line (`_hide_native_stderr`), except under the terminal UI,
which draws on descriptor 2 (`keep_stderr`).

This module imports only the standard library and `scalefront.errors` (`import scalefront` itself is lazy).
"""

from __future__ import annotations

import contextlib
import os
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
    "keep_stderr",
    "signalled",
]

#: Exit statuses of a command ended by a signal: 128 + the signal, as shells report them.
EXIT_INTERRUPTED = 128 + signal.SIGINT
EXIT_TERMINATED = 128 + signal.SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM (a job scheduler's stop, `kill`): handled like Ctrl-C, so work is cancelled and temporaries removed."""


_received: list[int] = []
#: Whether the first signal hides what native code writes to descriptor 2 (the console script's commands), and the
#: process's real stderr once it did.
_hide_on_signal: list[bool] = [False]
_real_stderr: list[int] = []
#: The unraisable hook `install` found, for everything but a swallowed interruption.
_previous_unraisablehook: list[object] = []


def _on_signal(signum: int, frame: FrameType | None) -> None:
    if _received:
        return  # the first signal is being handled: let its clean-up finish
    _received.append(signum)
    _hide_native_stderr()
    raise Terminated if signum == signal.SIGTERM else KeyboardInterrupt


def _hide_native_stderr() -> None:
    """Descriptor 2 to /dev/null, `sys.stderr` (when it is the process's own) to a copy of the real one: what
    native threads print as they wind down is not shown, the command's own line is. Once; not under the UI."""
    if _real_stderr or not _hide_on_signal[0]:
        return
    with contextlib.suppress(Exception):  # a write the signal interrupted makes the flush reentrant: skip it
        sys.stderr.flush()
    try:
        real = os.dup(2)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 2)
        os.close(null)
    except (OSError, ValueError, AttributeError):
        return
    _real_stderr.append(real)
    if sys.stderr is sys.__stderr__:
        encoding = getattr(sys.stderr, "encoding", None) or "utf-8"
        # The process's stderr from now until it exits: not a file to close at the end of a block.
        sys.stderr = open(real, "w", buffering=1, encoding=encoding, errors="backslashreplace", closefd=False)  # noqa: SIM115


def _redeliver(unraisable: sys.UnraisableHookArgs) -> None:
    """The first signal's exception, swallowed where it was raised (reported as "Exception ignored in ..."),
    delivered again from a thread of its own, so that it lands in the main thread's own code once the callback
    returns; anything else goes to the previous hook."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt) and _received:
        signum = _received.pop()
        threading.Thread(target=signal.raise_signal, args=(signum,), daemon=True).start()
        return
    previous = _previous_unraisablehook[0] if _previous_unraisablehook else sys.__unraisablehook__
    previous(unraisable)  # type: ignore[operator]


def keep_stderr() -> None:
    """Leave descriptor 2 alone when a signal comes (the terminal UI: Textual draws on it and restores the
    terminal through it)."""
    _hide_on_signal[0] = False


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
    import logging  # here, not at the top: the handlers are installed before anything but the essentials loads

    logging.disable(logging.CRITICAL)  # asyncio's "Task exception was never retrieved" and the like
    term = terminated or signalled() == signal.SIGTERM
    print(f"scalefront: {'terminated' if term else 'interrupted'}; nothing was written", file=sys.stderr, flush=True)
    _hide_native_stderr()  # what native threads print after it, as the process winds down
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
            # A signal the parent ignores stays ignored, as Python itself leaves it (a shell script's background
            # job ignores SIGINT, so that a Ctrl-C meant for the script's foreground does not stop it).
            if signal.getsignal(s) is not signal.SIG_IGN:
                signal.signal(s, _on_signal)
        _hide_on_signal[0] = True
        if sys.unraisablehook is not _redeliver:
            _previous_unraisablehook[:] = [sys.unraisablehook]
            sys.unraisablehook = _redeliver
