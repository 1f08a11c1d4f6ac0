"""Limits a long sweep is checked against while it runs: its projected duration and the disk its `--all` export
needs. `SweepLimits` is called with every progress report (in-process or summed over a cluster) and raises
`LimitExceeded` at the first report over a limit; the sweep's caller then cancels the engine and writes nothing.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from scalefront.engine.sweep import Progress
from scalefront.errors import UsageError

__all__ = [
    "DEFAULT_MAX_CONFIGS",
    "DEFAULT_TIME_LIMIT_S",
    "FASTEST_S_PER_UNIT",
    "ROW_BYTES",
    "LimitExceeded",
    "SweepLimits",
    "check_size",
    "engine_threads",
    "projected_s",
]

#: CSV bytes per exported row, for disk projections (measured on the default scenario: ~420 bytes).
ROW_BYTES = 450
#: Projections start after this much time: the first moments (pool start, first cells) predict little.
SETTLE_S = 1.0
#: The least time one unit of the engine's work (`Progress.work_total`) can take on one core: a fifth of the
#: fastest rate measured (~50 ns per unit per core on benchmarks/ten_billion.toml, 140-320 ns on a busy 2-core
#: machine). Once the engine has planned a sweep, work / cores x this is a floor on its time, so a sweep that
#: cannot meet --time-limit even at that rate is refused at once, before its first projection.
FASTEST_S_PER_UNIT = 10e-9
#: The limits a sweep gets when none are given (the sweep and roi commands' defaults, the UI's sweeps).
DEFAULT_MAX_CONFIGS = 10**11
DEFAULT_TIME_LIMIT_S = 1800.0


class LimitExceeded(UsageError):
    """A sweep was stopped because it would break a limit."""


def check_size(label: str, size: int, max_configs: int) -> None:
    """Refuse a space over `max_configs` configurations (counted, not listed: milliseconds), before any work."""
    if size > max_configs:
        raise LimitExceeded(
            f"{label}: the space has {size:,} configurations, over --max-configs {max_configs:,.0f}; "
            "narrow an axis (gpus, fabric, topology, the searched degrees) or raise --max-configs"
        )


def engine_threads() -> int:
    """The threads the engine runs on in this process (rayon's default: RAYON_NUM_THREADS, else every core)."""
    given = os.environ.get("RAYON_NUM_THREADS", "")
    return int(given) if given.isdigit() and int(given) > 0 else os.cpu_count() or 1


def projected_s(p: Progress) -> float | None:
    """The sweep's projected duration: elapsed time plus the estimated time left (by estimated work when known),
    or None before anything was done. Never less than the time already spent."""
    eta = p.eta_s
    return None if eta is None else p.elapsed_s + eta


def _seconds(s: float) -> str:
    """A duration as a message gives it, rounded up: a projection over a limit never reads as equal to it."""
    return f"{math.ceil(s * 10) / 10:,.1f} s" if s < 100 else f"{math.ceil(s):,} s"


@dataclass
class SweepLimits:
    """`label` names the sweep in messages (the scenario's file), `size` is its configurations;
    `time_limit_s`: stop once it is projected (after SETTLE_S), or has run, longer than this;
    `all_out` / `free_bytes`: stop once its feasible rows are projected not to fit in the free space there;
    `threads`: the engine's threads when it runs in this process (for the floor, FASTEST_S_PER_UNIT)."""

    label: str
    size: int
    time_limit_s: float
    all_out: str | None = None
    free_bytes: int = 0
    threads: int | None = None

    def __call__(self, p: Progress) -> None:
        self.check_time(p)
        self.check_disk(p)

    def check_time(self, p: Progress) -> None:
        """Over the limit: projected over it (after SETTLE_S), or still running past it (whatever the projection;
        a sweep held, stuck or still planning is stopped too). A finished sweep is never stopped."""
        if p.done >= p.total:
            return
        projected = projected_s(p)
        if p.elapsed_s > self.time_limit_s:
            raise LimitExceeded(f"{self.label}: {self.size:,} configurations: {self._so_far(p)}{self._advice()}")
        self._check_floor(p)
        if p.elapsed_s < SETTLE_S or projected is None or projected <= self.time_limit_s:
            return
        raise LimitExceeded(
            f"{self.label}: {self.size:,} configurations would take about {_seconds(projected)} "
            f"({p.done:,} done in {_seconds(p.elapsed_s)}){self._advice()}"
        )

    def _check_floor(self, p: Progress) -> None:
        """Refuse at once a planned sweep that would be over the limit even at the engine's fastest rate."""
        if self.threads is None or p.work_total is None:
            return
        left = max(p.work_total - (p.work_done or 0), 0)
        floor = p.elapsed_s + left * FASTEST_S_PER_UNIT / self.threads
        if floor > self.time_limit_s:
            raise LimitExceeded(
                f"{self.label}: {self.size:,} configurations would take at least {_seconds(floor)} on "
                f"{self.threads} cores (planned: {p.work_total:,} units of work){self._advice()}"
            )

    def _so_far(self, p: Progress) -> str:
        """What a sweep stopped at the limit had done by then."""
        planning = " (the engine was still planning them)" if p.work_total is None and p.work_done is not None else ""
        return f"{p.done:,} done in {_seconds(p.elapsed_s)}{planning}"

    def _advice(self) -> str:
        return f", over --time-limit {self.time_limit_s:g} s; narrow an axis or raise --time-limit"

    def check_disk(self, p: Progress) -> None:
        if self.all_out is None or not p.done or p.elapsed_s < SETTLE_S:
            return
        rows = p.feasible / p.done * p.total
        if rows * ROW_BYTES > self.free_bytes:
            raise LimitExceeded(
                f"{self.all_out}: about {rows:,.0f} feasible rows (~{rows * ROW_BYTES / 1e9:,.1f} GB) will not "
                f"fit in the {self.free_bytes / 1e9:,.1f} GB free there; write the frontier only or narrow the space"
            )
