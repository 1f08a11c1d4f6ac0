"""The real `scalefront` command in a pseudo-terminal of 80x24: with no arguments on a terminal it opens the UI,
sweeps the default scenario and shows the frontier (the days and cost of its first row on screen, no scrolling),
quits on q with status 0 and restores the terminal (leaves the alternate screen). Keys written in one burst reach
a dialog opened by the first of them; F1 opens the help; a running sweep says "esc cancels" and Esc cancels it;
a terminal resized below 60x20 says so; Ctrl-C quits at once (issue 21). The pseudo-terminal is the standard
library's (os.openpty); what it shows is read with pyte, a terminal emulator in Python."""

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

    def __init__(self, argv: list[str], cwd: Path, **extra_env: str):
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", LINES, COLUMNS, 0, 0))
        env = {**os.environ, "TERM": "xterm-256color", **extra_env}
        # The size is the terminal's own (set above, and changed by `resize`): COLUMNS and LINES would override it.
        for key in ("NO_COLOR", "TEXTUAL", "TEXTUAL_DRIVER", "CI_TEXTUAL_HEADLESS", "COLUMNS", "LINES"):
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

    def resize(self, columns: int, lines: int) -> None:
        """Resize the terminal, as a window manager does (the child gets SIGWINCH)."""
        fcntl.ioctl(self.master, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
        self.screen.resize(lines, columns)
        os.killpg(self.proc.pid, signal.SIGWINCH)

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
            if header is None:
                return False
            row = next((line for line in lines[header + 1 : header + 3] if first["fabric"] in line), "")
            return days in row and cost in row

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


def restored(out: bytes) -> bool:
    """The alternate screen was left after it was last entered."""
    return out.rfind(LEAVE_ALT_SCREEN) > out.rfind(ENTER_ALT_SCREEN) >= 0


def test_keys_typed_ahead_f1_and_ctrl_c_in_the_real_app(tmp_path):
    """The review's task 3 in one write (fast typing over SSH, an unbracketed paste): filter days<30, three
    columns right, sort, export (`xyz`, ctrl+u, a name: D14 left the field empty). The keys act in order: the
    file holds the filtered rows, cheapest first. Then F1 opens the help, which says how to quit; Ctrl-C quits
    with status 0."""
    import polars as pl

    term = Terminal(scalefront_command(), cwd=tmp_path)
    try:
        term.wait_for(lambda out: b"on the frontier of" in out, 60, "the sweep to finish")
        term.send(b"/days<30\rlllsexyz\x15typed-ahead.csv\r")
        term.wait_for(lambda _: (tmp_path / "typed-ahead.csv").exists(), 30, "the export typed ahead")
        written = pl.read_csv(tmp_path / "typed-ahead.csv")
        assert written.height > 0 and written["time_to_train_days"].max() < 30
        assert written["cost_to_train_usd"].to_list() == sorted(written["cost_to_train_usd"].to_list())
        term.send(b"\x1bOP")  # F1
        term.wait_for(lambda _: "ctrl+c and ctrl+q quit" in term.shows(), 30, "the help")
        term.send(b"\x03")  # Ctrl-C
        status = term.finish(10)
        assert status == 0, f"exit status {status}; last output: {bytes(term.output[-600:])!r}"
        assert restored(bytes(term.output)) and b"Traceback" not in bytes(term.output)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["typed-ahead.csv"]
    finally:
        term.close()


def test_a_running_sweep_says_esc_cancels_and_ctrl_c_quits_it(tmp_path):
    """The sweep is held at the engine's pause gate (SCALEFRONT_TEST_HOLD=1), so it is running whenever the keys
    arrive: at 80 columns the status line keeps "(esc cancels)"; Esc cancels; a terminal shrunk to 40x12 shows
    the size notice and the app comes back at 80x24; Ctrl-C during the next (held) sweep quits at once."""
    term = Terminal(scalefront_command(), cwd=tmp_path, SCALEFRONT_TEST_HOLD="1")
    try:
        term.wait_for(lambda _: "(esc cancels)" in term.shows(), 60, "the sweep's status line")
        term.wait_for(lambda _: "esc Cancel" in term.shows().splitlines()[-1], 30, "the footer's esc Cancel")
        term.send(b"\x1b")
        term.wait_for(lambda _: "sweep cancelled" in term.shows(), 30, "the sweep to be cancelled")
        term.resize(40, 12)
        term.wait_for(lambda _: "terminal too small: 40x12" in term.shows(), 30, "the size notice")
        term.resize(COLUMNS, LINES)
        term.wait_for(lambda _: "sweep cancelled" in term.shows(), 30, "the app at 80x24 again")
        term.send(b"r")
        term.wait_for(lambda _: "(esc cancels)" in term.shows(), 30, "the next sweep")
        term.send(b"\x03")
        status = term.finish(10)
        assert status == 0, f"exit status {status}; last output: {bytes(term.output[-600:])!r}"
        assert restored(bytes(term.output)) and b"Traceback" not in bytes(term.output)
    finally:
        term.close()


def test_the_roi_question_at_4096_gpus_and_a_quote_in_the_real_app(tmp_path):
    """The review's tasks 1 and 5 in the real app: `4` opens the ROI tab (its verdict at the largest count), `[ [`
    moves the verdict to 4,096 GPUs, Enter `30` Esc quotes IB at 30% over RoCE; the screen then shows the verdict
    of a fresh `compare_fabrics` with that quote (the CLI's --premium 1.3) at 4,096 GPUs, word for word."""
    draft = api.ScenarioDraft.open(api.DEFAULT_SCENARIO)
    view = api.compare_fabrics(draft, api.WhatIf("ib-ndr", "roce-400g", premium=1.3))
    head = (
        api.verdict_at(view, 4096).removeprefix(api.modes_text(view.result) + " ").partition(" The answer flips if ")[0]
    )
    term = Terminal(scalefront_command(), cwd=tmp_path)

    def shown() -> str:
        return " ".join(term.shows().split())

    try:
        term.wait_for(lambda out: b"on the frontier of" in out, 60, "the sweep to finish")
        term.send(b"4")
        term.wait_for(lambda _: "at 16,384 GPUs" in shown(), 60, "the verdict at the largest count")
        term.send(b"[[")
        term.wait_for(lambda _: "at 4,096 GPUs" in shown(), 30, "the verdict at 4,096 GPUs")
        term.send(b"\r30\x1b")
        term.wait_for(lambda _: head in shown(), 60, f"the verdict with the +30% quote: {head!r}")
        # A terminal app reads Esc and a key within ESCDELAY (Textual: 100 ms) as Alt+key: a q sent as soon as the
        # verdict shows could land in the field as Alt+q. A second Esc settles the first at once and goes back to
        # the Frontier tab, which shows only when both are read: then q quits.
        term.send(b"\x1b")
        term.wait_for(lambda _: "/ filter:" in shown(), 30, "the Frontier tab after a second Esc")
        term.send(b"q")
        status = term.finish(10)
        assert status == 0, f"exit status {status}; last output: {bytes(term.output[-600:])!r}"
        assert restored(bytes(term.output)) and b"Traceback" not in bytes(term.output)
    finally:
        term.close()
