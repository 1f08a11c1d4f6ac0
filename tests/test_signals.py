"""Ctrl-C and SIGTERM at any moment (review 2, T18): the console script handles them before it imports anything
heavy, a signal that lands in the imports ends the command with one line, a second signal cannot cut the clean-up
short, and whatever a library turns the interruption into, the command reports the signal. And the limits act
before any expensive work (T9, T10): a space over --max-configs is refused before the engine is asked for anything,
and a planned sweep that cannot meet --time-limit at the engine's fastest rate is refused at once.

The signals are delivered by calling the handler itself, in this process: no timing, no real process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import types
from collections.abc import Iterator

import pytest

import scalefront.cli
import scalefront.engine.job
from helpers import assert_one_line_error, run, small_scenario
from scalefront import console, signals
from scalefront.engine.limits import LimitExceeded, SweepLimits
from scalefront.engine.sweep import Progress


@pytest.fixture
def handlers() -> Iterator[None]:
    """The test process's own handlers, put back afterwards (the console script installs its own for good)."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    hook = sys.unraisablehook
    yield
    for s, handler in saved.items():
        signal.signal(s, handler)
    signals._received.clear()
    sys.unraisablehook = hook
    signals._hide_on_signal[0] = False
    while signals._real_stderr:  # put descriptor 2 back where a test's signal hid it
        real = signals._real_stderr.pop()
        os.dup2(real, 2)
        os.close(real)


class _ImportsInterrupted:
    """A stand-in for `scalefront.cli` whose import is cut by `signum`, as a signal landing in the imports is."""

    def __init__(self, signum: int):
        self.signum = signum

    @property
    def run_command_line(self) -> object:
        handler = signal.getsignal(self.signum)
        assert callable(handler)
        handler(self.signum, None)  # raises, as the real handler does when the signal lands here
        raise AssertionError("the handler did not raise")


@pytest.mark.parametrize(
    "signum, status, word", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")]
)
def test_a_signal_during_the_imports_is_one_line(handlers, monkeypatch, capsys, signum, status, word):
    monkeypatch.setitem(sys.modules, "scalefront.cli", _ImportsInterrupted(signum))
    monkeypatch.setattr(sys, "argv", ["scalefront", "sweep"])
    assert console.main() == status
    out, err = capsys.readouterr()
    assert out == "" and err == f"scalefront: {word}; nothing was written\n"


def test_a_second_signal_while_the_first_unwinds_is_ignored(handlers):
    with signals.handling_signals():
        with pytest.raises(KeyboardInterrupt):
            signals._on_signal(signal.SIGINT, None)
        signals._on_signal(signal.SIGTERM, None)  # the clean-up of the first goes on
        assert signals.signalled() == signal.SIGINT


def test_whatever_the_interruption_became_the_signal_is_reported(handlers, monkeypatch, capsys):
    # Dask wraps a KeyboardInterrupt that lands while a cluster starts in "RuntimeError: Nanny failed to start";
    # once a signal came, any error is reported as the signal.
    def wrapped(args: object) -> int:
        try:
            signals._on_signal(signal.SIGTERM, None)
        except KeyboardInterrupt:
            raise RuntimeError("Nanny failed to start.") from None
        return 0

    monkeypatch.setattr(scalefront.cli, "_run_command", wrapped)
    code, out, err = run(["sweep"], capsys)
    assert (code, out, err) == (143, "", "scalefront: terminated; nothing was written\n")


def test_a_signal_swallowed_where_it_landed_is_delivered_again(handlers):
    """A signal that lands in a weakref callback (importlib's module-lock callback, 30 ms into `scalefront merge`)
    raises there, and Python only reports the exception as ignored: the command went on with every later SIGINT
    and SIGTERM ignored. The unraisable hook delivers it again, and it lands in the main thread's own code."""
    signals.install()
    signals._hide_on_signal[0] = False  # this process's stderr is pytest's
    with pytest.raises(KeyboardInterrupt) as swallowed:
        signals._on_signal(signal.SIGINT, None)
    lost = types.SimpleNamespace(
        exc_type=KeyboardInterrupt, exc_value=swallowed.value, exc_traceback=None, err_msg=None, object=None
    )
    with pytest.raises(KeyboardInterrupt):
        sys.unraisablehook(lost)  # type: ignore[arg-type]
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # the event: the handler raising here
            time.sleep(0.01)
    assert signals.signalled() == signal.SIGINT


def test_a_signal_the_parent_ignores_stays_ignored(handlers):
    # A shell script's background job starts with SIGINT ignored (POSIX), and Python leaves it so.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signals.install()
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    assert signal.getsignal(signal.SIGTERM) is signals._on_signal


def test_other_unraisable_errors_go_to_the_previous_hook(handlers, monkeypatch):
    seen: list[object] = []
    monkeypatch.setattr(sys, "unraisablehook", seen.append)
    signals.install()
    other = types.SimpleNamespace(exc_type=ValueError, exc_value=ValueError("x"), exc_traceback=None, object=None)
    sys.unraisablehook(other)  # type: ignore[arg-type]
    assert seen == [other]


#: A command interrupted while a native library's thread writes to descriptor 2 as it winds down (polars' streaming
#: CSV sink prints a Rust panic when the interruption aborts its tasks): in a real process, the console's handlers.
_NATIVE_NOISE = """
import os, signal, sys
from scalefront import signals
signals.install()
if sys.argv[1] == "ui":
    signals.keep_stderr()
try:
    signals._on_signal(signal.SIGINT, None)
except KeyboardInterrupt:
    os.write(2, b"thread 'async-executor-0' panicked at crates/polars-stream/src/nodes/io_sinks/writers/csv\\n")
    code = signals.interrupted_exit()
    os.write(2, b"note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\\n")
    sys.exit(code)
"""


@pytest.mark.parametrize("mode", ["command", "ui"])
def test_what_native_threads_print_after_a_signal_is_not_shown(mode):
    done = subprocess.run([sys.executable, "-c", _NATIVE_NOISE, mode], capture_output=True, text=True, timeout=60)
    assert done.returncode == 130 and done.stdout == ""
    if mode == "command":
        assert done.stderr == "scalefront: interrupted; nothing was written\n"
    else:  # the terminal UI keeps descriptor 2: Textual draws on it
        assert "panicked" in done.stderr and "scalefront: interrupted; nothing was written" in done.stderr


# ---------------------------------------------------------------- limits before any expensive work

#: 2 GPUs x 8,192 GPU counts (8 to 65,536) x 2 fabrics x 2 topologies x searched tp and pp x long lists: 2.5 x 10^10
#: configurations, counted combinatorially (listing them took minutes before).
HUGE = small_scenario(
    gpus="{ start = 8, stop = 65536, step = 8 }",
    tp='"search"',
    pp='"search"',
    vpp="[1, 2, 3, 4, 5, 6, 7, 8]",
    micro_batch="[1, 2, 4, 8, 16, 32]",
    recompute='["none", "selective", "full"]',
    zero="[0, 1, 2, 3]",
    overlap='["none", "dp", "full"]',
)


def test_a_space_over_max_configs_is_refused_before_the_engine_is_asked(tmp_path, monkeypatch, capsys):
    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the engine was started")

    monkeypatch.setattr(scalefront.engine.job, "run_sweep", never)
    monkeypatch.setattr(scalefront.engine.job, "plan_shards", never)
    (tmp_path / "huge.toml").write_text(HUGE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["sweep", "huge.toml", "--max-configs", "1e9"], capsys)
    assert_one_line_error(code, out, err, "huge.toml: the space has ", "over --max-configs 1,000,000,000")
    size = int(err.split("has ")[1].split(" configurations")[0].replace(",", ""))
    assert size > 10**10


def test_a_planned_sweep_that_cannot_meet_the_time_limit_is_refused_at_once():
    # 1e10 units of work on 2 cores at the fastest rate (10 ns a unit: FASTEST_S_PER_UNIT) is at least 50 s, over a
    # 5 s limit already
    # 0.1 s in, before any projection; 1e8 units (0.5 s) is not refused then.
    limits = SweepLimits("s.toml", 10**12, time_limit_s=5.0, threads=2)
    with pytest.raises(LimitExceeded, match=r"would take at least 50\.1 s on 2 cores .* over --time-limit 5 s"):
        limits(Progress(done=0, total=10**12, feasible=0, elapsed_s=0.1, work_done=0, work_total=10**10))
    limits(Progress(done=0, total=10**12, feasible=0, elapsed_s=0.1, work_done=0, work_total=10**8))
    # Still planning (no work total yet), nothing is refused before the limit; past it, the message says so.
    limits(Progress(done=0, total=10**12, feasible=0, elapsed_s=4.0, work_done=0, work_total=None))
    with pytest.raises(LimitExceeded, match=r": 0 done in 6\.0 s \(the engine was still planning them\), over"):
        limits(Progress(done=0, total=10**12, feasible=0, elapsed_s=6.0, work_done=0, work_total=None))
