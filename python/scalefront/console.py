"""The `scalefront` console script: the Ctrl-C and SIGTERM handlers first (`scalefront.signals`, standard library
only; `import scalefront` is lazy), then the command line. A signal at any moment, imports included, ends the
command with one line and 130 or 143."""

from __future__ import annotations

import os
import sys

from scalefront import signals

__all__ = ["main"]


def main() -> int:
    """The console script: the handlers first (kept until the process ends), then the command line
    (`scalefront.cli.run_command_line`)."""
    signals.install()
    # numpy's OpenBLAS starts a thread per core when imported (~60 ms of CPU here, and threads that spin beside the
    # core's): scalefront's numerical work runs in the Rust core on its own threads, and numpy's linear algebra
    # is small fits (calibration). A user's own setting wins.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    try:
        from scalefront.cli import run_command_line

        return run_command_line(sys.argv[1:])
    except BaseException as err:
        if signals.signalled() is None and not isinstance(err, KeyboardInterrupt):
            raise
        return signals.interrupted_exit(isinstance(err, signals.Terminated))
