"""Run a scenario's sweep and turn the result into polars frames: Pareto frontiers per group and the best
configuration per (fabric, GPU count).

The Rust engine runs in a worker thread with the GIL released; this module polls its handle for progress
(no callbacks from worker threads) and cancels it on Ctrl-C. Results arrive as numpy columns that own the
engine's vectors and become polars columns without per-row Python objects.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from scalefront import schema
from scalefront._core import SweepHandle, cell_sizes
from scalefront._core import run_sweep as core_run_sweep
from scalefront._enums import AXES
from scalefront.inputs.scenario.build import Scenario

__all__ = [
    "COLUMNS",
    "Progress",
    "SweepResult",
    "best_per",
    "choice_frame",
    "label_rows",
    "objective_column",
    "pareto",
    "run_sweep",
]

#: Column order of every exported frame: the core's schema (inputs, then metrics; see scalefront.schema).
COLUMNS = schema.COLUMNS
_DTYPES = {"float": pl.Float64, "count": pl.Int64, "flag": pl.Boolean, "text": pl.Utf8}


@dataclass
class Progress:
    done: int
    total: int
    feasible: int
    elapsed_s: float
    #: Rejected so far, by reason.
    rejected: dict[str, int] = field(default_factory=dict)
    #: Estimated work done and in all, in the engine's cost units (see `scalefront.engine.shards.cell_costs`): most
    #: configurations are rejected before any arithmetic, so work, not configurations, predicts the time left.
    #: `work_total` is None while the engine is still planning (counting the work of a huge space takes a while).
    work_done: int | None = None
    work_total: int | None = None

    @property
    def rate(self) -> float:
        """Configurations per second so far."""
        return self.done / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def eta_s(self) -> float | None:
        """Seconds left at the rate so far: by work when counted, else by configurations; None before any, or while
        the engine is still planning."""
        if self.work_done is not None:
            if self.work_total is None or self.work_done <= 0 or self.elapsed_s <= 0:
                return None
            return max(self.work_total - self.work_done, 0) * self.elapsed_s / self.work_done
        return (self.total - self.done) / self.rate if self.rate > 0 else None


@dataclass
class SweepResult:
    scenario: Scenario | None
    #: Every configuration kept by the engine (the union of each cell's frontier), labelled, in the engine's
    #: order (by each axis's index, `choices`).
    kept: pl.DataFrame
    evaluated: int
    feasible: int
    rejected: dict[str, int]
    cancelled: bool
    wall_s: float
    objectives: list[str] = field(default_factory=list)
    #: The scenario's name and group-by axes (kept here so that a merged result needs no scenario).
    name: str = ""
    group_by: list[str] = field(default_factory=list)
    #: Which cost `cost_to_train_usd` is: "rent" or "own" (the scenario's economics.cost_mode).
    cost_mode: str = "rent"
    #: The engine's index of each kept row on every axis (`AXES` order), the order a merge of shards restores.
    choices: pl.DataFrame | None = None

    def frontier(self, group_by: list[str] | None = None, objectives: list[str] | None = None) -> pl.DataFrame:
        """Non-dominated configurations per group (default: the scenario's group-by and objectives)."""
        return pareto(self.kept, group_by or self.group_by, objectives or self.objectives)

    def best_per_fabric_and_size(self) -> pl.DataFrame:
        """The fastest configuration (shortest time to train) for each (fabric, GPU count), and what it costs.
        Every cell keeps its fastest configuration whatever the objectives, since time is one of them or, if
        not, the frontier is taken per cell from rows the engine kept."""
        return best_per(self.kept, ["fabric", "gpus"], "time_to_train_days")


def objective_column(name: str) -> tuple[str, bool]:
    """(column, descending) for an objective: by its metric's direction (MFU is maximised, the rest minimised)."""
    return name, schema.column(name).direction == "max"


def label_rows(columns: dict[str, np.ndarray], scenario: Scenario) -> pl.DataFrame:
    """Engine columns (axis indices and degrees, metrics by the core's schema) to a labelled frame in the export
    schema: each input column from its axis (`Scenario.labels`) or shared by every row (`Scenario.constants`)."""
    n = len(columns["tp"])

    def values(name: str) -> np.ndarray:
        if name in scenario.labels:
            axis, labels = scenario.labels[name]
            if labels is None:
                return columns[axis]
            picked: np.ndarray = np.asarray(labels, dtype=object if isinstance(labels[0], str) else None)[columns[axis]]
            return picked
        value = scenario.constants[name]
        return np.full(n, value, dtype=object if isinstance(value, str) else None)

    series = [pl.Series(c.name, values(c.name), dtype=_DTYPES[c.kind]) for c in schema.INPUTS]
    series += [pl.Series(m.name, columns[m.name], dtype=_DTYPES[m.kind]) for m in schema.METRICS]
    return pl.DataFrame(series)


def pareto(frame: pl.DataFrame, group_by: list[str], objectives: list[str]) -> pl.DataFrame:
    """Rows of `frame` not dominated by another row of their group, on 2 or 3 objectives (MFU maximised).
    Ties on every objective keep the first row in the frame's order. Sorted by group, then objectives."""
    if frame.is_empty():
        return frame
    if not group_by:
        return pareto(frame.with_columns(pl.lit(0).alias("__all")), ["__all"], objectives).drop("__all")
    keys = [f"__o{i}" for i in range(len(objectives))]
    f = frame.with_row_index("__row").with_columns(
        [(-pl.col(o) if objective_column(o)[1] else pl.col(o)).alias(k) for o, k in zip(objectives, keys, strict=True)]
    )
    if len(objectives) == 2:
        # Sort by the first objective (ties: second, then row); a row survives when its second objective is
        # strictly below every earlier row's in its group.
        f = f.sort([*group_by, keys[0], keys[1], "__row"])
        best_before = pl.col(keys[1]).cum_min().shift(1).over(group_by)
        kept = f.filter(best_before.is_null() | (pl.col(keys[1]) < best_before))
    else:
        # Three objectives: remove every row some other row of its group dominates (groups are small).
        left = f.select([*group_by, "__row", *keys])
        right = left.rename({"__row": "__r2", **{k: f"{k}_b" for k in keys}})
        pairs = left.join(right, on=group_by, how="inner").filter(pl.col("__row") != pl.col("__r2"))
        no_worse = pl.all_horizontal([pl.col(f"{k}_b") <= pl.col(k) for k in keys])
        better = pl.any_horizontal([pl.col(f"{k}_b") < pl.col(k) for k in keys])
        same = pl.all_horizontal([pl.col(f"{k}_b") == pl.col(k) for k in keys])
        beaten = (
            pairs.filter((no_worse & better) | (same & (pl.col("__r2") < pl.col("__row")))).select("__row").unique()
        )
        kept = f.join(beaten, on="__row", how="anti").sort([*group_by, *keys, "__row"])
    return kept.drop(["__row", *keys])


def best_per(frame: pl.DataFrame, by: list[str], objective: str) -> pl.DataFrame:
    """The best row per group on one objective (ties: first row)."""
    if frame.is_empty():
        return frame
    col, descending = objective_column(objective)
    return (
        frame.with_row_index("__row")
        .sort([*by, col, "__row"], descending=[False] * len(by) + [descending, False])
        .group_by(by, maintain_order=True)
        .first()
        .drop("__row")
        .select(frame.columns)
    )


def choice_frame(columns: dict[str, np.ndarray]) -> pl.DataFrame:
    """The engine's axis indices of each row (`choice_<axis>`, uint32, in `AXES` order): sorting by them gives the
    engine's order of kept rows, which a merge of shards restores."""
    return pl.DataFrame([pl.Series(f"choice_{a}", columns[a], dtype=pl.UInt32) for a in AXES])


def _stream(
    handle: SweepHandle,
    thread: threading.Thread,
    scenario: Scenario,
    on_rows: Callable[[pl.DataFrame], None] | None,
    clock: Callable[[], float],
) -> Callable[..., None]:
    """A function that hands the rows arriving within `timeout` to `on_rows` (all of them when `until_empty`),
    then returns, so that progress and limits are checked every poll even when the writer is slower than the
    engine (the deadline is read from `clock`). Without rows it waits for the engine, at most `timeout`."""

    def drain(timeout: float, until_empty: bool = False) -> None:
        if on_rows is None:
            thread.join(timeout)
            return
        deadline = clock() + timeout
        chunk = handle.next_rows(timeout)
        while chunk is not None:
            on_rows(label_rows(chunk, scenario))
            if not until_empty and clock() >= deadline:
                return
            chunk = handle.next_rows(0.0 if not until_empty else 0.05)

    return drain


def _cancel_and_wait(handle: SweepHandle, thread: threading.Thread, streaming: bool) -> None:
    """Stop the engine and wait for it (a task, milliseconds), draining rows so no worker stays blocked."""
    handle.cancel()
    while thread.is_alive():
        if streaming:
            handle.next_rows(0.05)
        else:
            thread.join(0.05)


def run_sweep(
    scenario: Scenario,
    *,
    on_progress: Callable[[Progress], None] | None = None,
    on_rows: Callable[[pl.DataFrame], None] | None = None,
    poll_s: float = 0.1,
    handle: SweepHandle | None = None,
    cells: Sequence[int] | None = None,
    threads: int | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> SweepResult:
    """Run the scenario's sweep. `on_progress` is called from this thread every `poll_s`; `on_rows`, when
    given, receives every feasible configuration in labelled chunks, in enumeration order (for `--all`
    exports). An exception in either (Ctrl-C, a limit) cancels the engine, waits for it (milliseconds) and is
    re-raised. `handle`, when given, is the engine's handle to use: a caller may `pause()` it before or during
    the run (workers wait at their next task until `resume()`), `cancel()` it from another thread, or read
    `done()` / `held()`. `cells` (ascending cell indices, see `scalefront.engine.shards`) sweeps a shard only;
    `threads` limits the engine to that many threads (default: all cores). `clock` gives the elapsed times."""
    handle = handle or SweepHandle()
    if os.environ.get("SCALEFRONT_TEST_HOLD") == "1":
        # For the tests that interrupt a real process mid-sweep (tests/helpers/terminal.py): the engine waits at
        # its pause gate before its first task, so the sweep is still running whenever the signal comes.
        handle.pause()
    selected = None if cells is None else [int(c) for c in cells]
    total = _total(scenario, selected)

    def report() -> None:
        if on_progress:
            now = clock()
            rejected = dict(handle.rejected())
            work = (handle.work(), handle.work_total())
            on_progress(Progress(handle.done(), total, handle.feasible(), now - start, rejected, *work))

    start = clock()
    thread, box = _start(scenario, handle, on_rows is not None, selected, threads)
    drain = _stream(handle, thread, scenario, on_rows, clock)
    _poll(handle, thread, drain, report, poll_s, streaming=on_rows is not None)
    if "error" in box:
        raise box["error"]
    raw = box["result"]
    wall = clock() - start
    rejected = {k: v for k, v in raw["rejected"].items() if v}
    if on_progress:
        work = (handle.work(), handle.work_total())
        on_progress(Progress(raw["evaluated"], total, raw["feasible"], wall, rejected, *work))
    return _result(scenario, raw, rejected, wall)


def _start(
    scenario: Scenario, handle: SweepHandle, stream: bool, cells: list[int] | None, threads: int | None
) -> tuple[threading.Thread, dict[str, Any]]:
    """The engine, started in a worker thread (GIL released); its result or exception lands in the box."""
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["result"] = core_run_sweep(scenario.space, handle, stream, cells, threads)
        except BaseException as err:  # handed to the caller's thread
            box["error"] = err

    thread = threading.Thread(target=work, name="scalefront-sweep", daemon=True)
    thread.start()
    return thread, box


def _poll(
    handle: SweepHandle,
    thread: threading.Thread,
    drain: Callable[..., None],
    report: Callable[[], None],
    poll_s: float,
    streaming: bool,
) -> None:
    """Until the engine ends: hand over the rows that arrive, then report progress, every `poll_s`. Any exception
    here (Ctrl-C, a limit raised by `report`) stops the engine, waits for it and is re-raised."""
    try:
        while thread.is_alive():
            drain(poll_s)
            report()
        drain(0.0, until_empty=True)
    except BaseException:
        _cancel_and_wait(handle, thread, streaming)
        raise


def _result(scenario: Scenario, raw: dict[str, Any], rejected: dict[str, int], wall_s: float) -> SweepResult:
    """The engine's raw result as a labelled SweepResult."""
    return SweepResult(
        scenario=scenario,
        kept=label_rows(raw["frontier"], scenario),
        evaluated=raw["evaluated"],
        feasible=raw["feasible"],
        rejected=rejected,
        cancelled=raw["cancelled"],
        wall_s=wall_s,
        objectives=list(scenario.space["objectives"]),
        name=scenario.name,
        group_by=list(scenario.space["group_by"]),
        cost_mode=str(scenario.space["economics"]["cost_mode"]),
        choices=choice_frame(raw["frontier"]),
    )


def _total(scenario: Scenario, cells: list[int] | None) -> int:
    """Configurations of the whole space, or of the given cells (counted, not listed: milliseconds). Their work is
    estimated by the engine as it plans (`SweepHandle.work_total`), where Ctrl-C and the limits can stop it."""
    if cells is None:
        return scenario.size()
    sizes = cell_sizes(scenario.space)
    if cells and (cells[-1] >= len(sizes) or cells[0] < 0):
        raise ValueError(f"cell indices must be below {len(sizes)}")
    return int(sizes[cells].sum())
