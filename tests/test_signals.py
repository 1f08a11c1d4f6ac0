"""Ctrl-C and SIGTERM at any moment (review 2, T18): the console script handles them before it imports anything
heavy, a signal that lands in the imports ends the command with one line, a second signal cannot cut the clean-up
short, and whatever a library turns the interruption into, the command reports the signal. And the limits act
before any expensive work (T9, T10): a space over --max-configs is refused before the engine is asked for anything,
and a planned sweep that cannot meet --time-limit at the engine's fastest rate is refused at once.

The signals are delivered by calling the handler itself, in this process: no timing, no real process."""

from __future__ import annotations

import signal
import sys
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
    yield
    for s, handler in saved.items():
        signal.signal(s, handler)
    signals._received.clear()


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
