"""A real `scalefront` process with its stderr on a pseudo-terminal (so that it draws its progress line), for the
tests that interrupt a running sweep with a signal.

The process runs with SCALEFRONT_TEST_HOLD=1: its sweep engine waits at the pause gate before its first task
(`scalefront.engine.sweep.run_sweep`), on every worker of a cluster too. The progress line is the event the tests wait
for, and the sweep cannot end before the signal arrives, however fast the machine."""

from __future__ import annotations

import os
import pty
import select
import subprocess
from pathlib import Path

import pytest

#: Upper bound of any wait on the process (a local Dask cluster takes seconds to start on a busy machine).
TIMEOUT_S = 120

#: The environment of a held process.
HELD = {**os.environ, "SCALEFRONT_TEST_HOLD": "1"}


def start_on_a_terminal(cmd: list[str], cwd: Path) -> tuple[subprocess.Popen[bytes], int]:
    """Start `cmd`, held, with its stderr on a pseudo-terminal, and wait until its progress line appears: the
    sweep is then running. Returns the process and the terminal's reading end."""
    master, slave = pty.openpty()
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=slave, env=HELD)
    os.close(slave)
    seen = b""
    while b"\rsweep " not in seen:
        ready, _, _ = select.select([master], [], [], TIMEOUT_S)
        assert ready, f"no progress line in {TIMEOUT_S} s: {seen!r}"
        try:
            seen += os.read(master, 4096)
        except OSError:  # the terminal closed: the process ended before drawing progress
            pytest.fail(f"the sweep ended before its progress line: {seen!r} {p.communicate()}")
    return p, master


def finish_on_a_terminal(p: subprocess.Popen[bytes], master: int) -> tuple[str, str]:
    """Wait for the process; its stdout and what it wrote to the terminal after the progress line."""
    try:
        out, _ = p.communicate(timeout=TIMEOUT_S)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    err = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        err += chunk
    os.close(master)
    return out.decode(), err.decode(errors="replace")
