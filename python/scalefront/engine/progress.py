"""A one-line progress display for long work: count, rate and ETA on a terminal, nothing when piped."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TextIO

from scalefront.units import RATE_SCALES, scale_of


class Progress(Protocol):
    """What a progress line shows: a sweep's (with its feasible count) or a Monte Carlo's."""

    @property
    def done(self) -> int: ...
    @property
    def total(self) -> int: ...
    @property
    def rate(self) -> float: ...
    @property
    def eta_s(self) -> float | None: ...


@dataclass(frozen=True)
class Steps:
    """Progress through a known number of steps (files read, Monte Carlo samples), for a progress line."""

    done: int
    total: int
    elapsed_s: float

    @property
    def rate(self) -> float:
        return self.done / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def eta_s(self) -> float | None:
        return (self.total - self.done) / self.rate if self.rate > 0 else None


def _count(x: float) -> str:
    scaled, suffix = scale_of(x, RATE_SCALES)
    return f"{scaled:.1f}{suffix}" if suffix else f"{x:.0f}"


class ProgressLine:
    """Redraws one line on `stream` (stderr) at most every `interval_s` of `clock`; silent unless it is a terminal."""

    def __init__(
        self,
        label: str,
        stream: TextIO | None = None,
        interval_s: float = 0.2,
        clock: Callable[[], float] = time.monotonic,
        noun: str = "configurations",
    ):
        self.noun = noun
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()
        self.label = label
        self.interval_s = interval_s
        self.clock = clock
        self._last = -float("inf")
        self._width = 0

    def __call__(self, p: Progress) -> None:
        now = self.clock()
        if not self.enabled or (now - self._last < self.interval_s and p.done < p.total):
            return
        self._last = now
        share = p.done / p.total if p.total else 1.0
        eta = f"ETA {p.eta_s:.0f}s" if p.eta_s is not None and p.done < p.total else "done"
        feasible = getattr(p, "feasible", None)
        line = f"{self.label} {p.done:,} / {p.total:,} {self.noun} ({share:.0%})  {_count(p.rate)}/s  {eta}" + (
            f"  feasible {feasible:,}" if feasible is not None else ""
        )
        self.stream.write("\r" + line.ljust(self._width))
        self.stream.flush()
        self._width = len(line)

    def clear(self) -> None:
        """Erase the line (before other output to the same terminal); the next call redraws it."""
        if self.enabled and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0
            self._last = -float("inf")

    def close(self) -> None:
        if self.enabled and self._width:
            self.stream.write("\n")
            self.stream.flush()
