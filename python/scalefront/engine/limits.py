"""Limits a long sweep is checked against while it runs: its projected duration and the disk its `--all` export
needs. `SweepLimits` is called with every progress report (in-process or summed over a cluster) and raises
`LimitExceeded` at the first report over a limit; the sweep's caller then cancels the engine and writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from scalefront.engine.sweep import Progress
from scalefront.errors import UsageError

__all__ = ["ROW_BYTES", "LimitExceeded", "SweepLimits", "projected_s"]

#: CSV bytes per exported row, for disk projections (measured on the default scenario: ~420 bytes).
ROW_BYTES = 450
#: Projections start after this much time: the first moments (pool start, first cells) predict little.
SETTLE_S = 1.0


class LimitExceeded(UsageError):
    """A sweep was stopped because it would break a limit."""


def projected_s(p: Progress) -> float | None:
    """The sweep's projected duration: elapsed time plus the estimated time left (by estimated work when known),
    or None before anything was done. Never less than the time already spent."""
    eta = p.eta_s
    return None if eta is None else p.elapsed_s + eta


@dataclass
class SweepLimits:
    """`label` names the sweep in messages (the scenario's file), `size` is its configurations;
    `time_limit_s`: stop once it is projected (after SETTLE_S), or has run, longer than this;
    `all_out` / `free_bytes`: stop once its feasible rows are projected not to fit in the free space there."""

    label: str
    size: int
    time_limit_s: float
    all_out: str | None = None
    free_bytes: int = 0

    def __call__(self, p: Progress) -> None:
        self.check_time(p)
        self.check_disk(p)

    def check_time(self, p: Progress) -> None:
        """Over the limit: projected over it (after SETTLE_S), or still running past it (whatever the projection;
        a sweep held or stuck is stopped too). A finished sweep is never stopped."""
        if p.done >= p.total:
            return
        projected = projected_s(p)
        if p.elapsed_s > self.time_limit_s:
            projected = max(projected or 0.0, p.elapsed_s)
        elif p.elapsed_s < SETTLE_S or projected is None:
            return
        if projected > self.time_limit_s:
            raise LimitExceeded(
                f"{self.label}: {self.size:,} configurations would take about {projected:,.0f} s "
                f"({p.done:,} done in {p.elapsed_s:,.0f} s), over --time-limit {self.time_limit_s:g} s; "
                "narrow an axis or raise --time-limit"
            )

    def check_disk(self, p: Progress) -> None:
        if self.all_out is None or not p.done or p.elapsed_s < SETTLE_S:
            return
        rows = p.feasible / p.done * p.total
        if rows * ROW_BYTES > self.free_bytes:
            raise LimitExceeded(
                f"{self.all_out}: about {rows:,.0f} feasible rows (~{rows * ROW_BYTES / 1e9:,.1f} GB) will not "
                f"fit in the {self.free_bytes / 1e9:,.1f} GB free there; write the frontier only or narrow the space"
            )
