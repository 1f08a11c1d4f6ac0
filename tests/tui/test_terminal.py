"""The real `scalefront` command in a pseudo-terminal of 80x24: with no arguments on a terminal it opens the UI,
sweeps the default scenario and shows the frontier (the days and cost of its first row on screen, no scrolling),
quits on q with status 0 and restores the terminal (leaves the alternate screen). The pseudo-terminal is the
standard library's (os.openpty); what it shows is read with pyte, a terminal emulator in Python."""

from __future__ import annotations

import fcntl
import os
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pyte
import pytest

from scalefront import api

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")

COLUMNS, LINES = 80, 24
ENTER_ALT_SCREEN = b"\x1b[?1049h"
LEAVE_ALT_SCREEN = b"\x1b[?1049l"


def scalefront_command() -> list[str]:
    """The installed console script beside this interpreter, else `python -m scalefront`."""
    script = Path(sys.executable).with_name("scalefront")
    return [str(script)] if script.exists() else [sys.executable, "-m", "scalefront"]


class Terminal:
    """A child process on a pseudo-terminal of COLUMNS x LINES; `output` accumulates everything it wrote."""

    def __init__(self, argv: list[str], cwd: Path):
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", LINES, COLUMNS, 0, 0))
        env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": str(COLUMNS), "LINES": str(LINES)}
        for key in ("NO_COLOR", "TEXTUAL", "TEXTUAL_DRIVER", "CI_TEXTUAL_HEADLESS"):
            env.pop(key, None)
        self.proc = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env, start_new_session=True, close_fds=True
        )
        os.close(slave)  # the child holds it; reading the master gives EIO once the child has exited
        self.output = bytearray()
        self.eof = False
        self.screen = pyte.Screen(COLUMNS, LINES)
        self.stream = pyte.ByteStream(self.screen)

    def read(self, timeout: float) -> None:
        """Read what is available within `timeout` seconds (non-blocking, via select)."""
        if self.eof:
            time.sleep(timeout)
            return
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return
        try:
            data = os.read(self.master, 65536)
        except OSError:  # EIO: the slave side is closed
            data = b""
        if data:
            self.output += data
            self.stream.feed(data)
        else:
            self.eof = True

    def wait_for(self, predicate, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not predicate(bytes(self.output)):
            if time.monotonic() > deadline:
                pytest.fail(
                    f"timed out after {timeout:.0f} s waiting for {what}; last output: {bytes(self.output[-600:])!r}"
                )
            if self.proc.poll() is not None and self.eof:
                pytest.fail(
                    f"the command exited ({self.proc.returncode}) before {what}; last output: "
                    f"{bytes(self.output[-600:])!r}"
                )
            self.read(0.1)

    def shows(self) -> str:
        """The screen as the terminal shows it now."""
        return "\n".join(self.screen.display)

    def send(self, data: bytes) -> None:
        os.write(self.master, data)

    def finish(self, timeout: float) -> int | None:
        """Drain the output until the child exits and its side of the terminal closes; its exit status."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not (self.eof and self.proc.poll() is not None):
            self.read(0.1)
        return self.proc.poll()

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(5)
        os.close(self.master)


def test_scalefront_at_80x24_shows_the_answer_and_q_restores_the_terminal(tmp_path):
    draft = api.ScenarioDraft.open(api.DEFAULT_SCENARIO)
    first = api.frontier(api.SweepJob(draft).run()).row(0, named=True)
    days = api.column_spec("time_to_train_days").format(first["time_to_train_days"])
    cost = api.column_spec("cost_to_train_usd").format(first["cost_to_train_usd"])
    term = Terminal(scalefront_command(), cwd=tmp_path)
    try:
        term.wait_for(lambda out: ENTER_ALT_SCREEN in out, 30, "the UI to take over the screen")

        def first_row_on_screen(_: bytes) -> bool:
            lines = term.shows().splitlines()
            header = next(
                (i for i, line in enumerate(lines) if "days" in line and "cost" in line and "GPUs" in line), None
            )
            return header is not None and days in lines[header + 1] and cost in lines[header + 1]

        term.wait_for(first_row_on_screen, 60, f"the frontier's first row ({days} days, {cost}) under its header")
        screen = term.shows()
        assert first["fabric"] in screen and "scalefront" in screen.splitlines()[0]
        term.send(b"q")
        status = term.finish(10)
        assert status == 0, f"exit status {status}; last output: {bytes(term.output[-600:])!r}"
        out = bytes(term.output)
        assert b"Traceback" not in out
        # The terminal was restored: the alternate screen was left after it was last entered, and nothing
        # was drawn after that (only mode-resetting escape sequences may follow).
        assert out.rfind(LEAVE_ALT_SCREEN) > out.rfind(ENTER_ALT_SCREEN)
        tail = out[out.rfind(LEAVE_ALT_SCREEN) + len(LEAVE_ALT_SCREEN) :]
        assert all(not chunk or chunk.startswith(b"[") or chunk.startswith(b"]") for chunk in tail.split(b"\x1b")), tail
        assert not tail.replace(b"\r", b"").replace(b"\n", b"").split(b"\x1b")[0], tail
        # Nothing was written into the working directory.
        assert list(tmp_path.iterdir()) == []
    finally:
        term.close()
