"""A sweep as `scalefront sweep` runs it, and a merge as `scalefront merge` runs it: one request in, the result and
its files out. Where the sweep runs (here, one shard of a job array, or a Dask cluster), the limits it is held to,
and the writers of its frontier, its `--all` rows and a shard's parts are decided here, not by the command line.

Every output is checked before any work; any stop (a limit, Ctrl-C, SIGTERM, an error) leaves no file behind.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from scalefront.engine.cluster import resolve
from scalefront.engine.export import Outputs, StreamWriter, check_target, write_frame
from scalefront.engine.limits import (
    DEFAULT_MAX_CONFIGS,
    DEFAULT_TIME_LIMIT_S,
    SweepLimits,
    check_size,
    engine_threads,
)
from scalefront.engine.shards import (
    Shard,
    merge_all_parts,
    merge_parts,
    part_metadata,
    plan_shards,
    read_parts,
    run_sweep_sharded,
    stage_part,
)
from scalefront.engine.sweep import COLUMNS, Progress, SweepResult, run_sweep
from scalefront.errors import UsageError
from scalefront.inputs.catalog.loader import Catalog, builtin_catalog
from scalefront.inputs.scenario.build import Scenario, load_scenario

__all__ = ["CLOCK", "SweepOutcome", "SweepPlan", "SweepRequest", "check_outputs", "merge", "sweep"]

#: The clock sweeps are timed with (tests inject their own).
CLOCK = time.perf_counter


@dataclass(frozen=True)
class SweepRequest:
    """One sweep: the scenario (a built-in id or a file) with its overrides, where to run it, its limits and its
    outputs. The defaults are the command line's."""

    scenario: str
    #: Catalog files merged over the built-in catalogs, in order.
    catalogs: tuple[str, ...] = ()
    group_by: list[str] | None = None
    objectives: list[str] | None = None
    #: The workload of a scenario's mix to sweep.
    workload: str | None = None
    #: The frontier's file (.csv or .parquet); with `shard`, the shard's part (.parquet).
    out: str | None = None
    #: Every feasible configuration, streamed to this file.
    all_out: str | None = None
    force: bool = False
    #: (K, N): sweep shard K of N only.
    shard: tuple[int, int] | None = None
    #: auto, local or a Dask scheduler address (see `scalefront.engine.cluster.resolve`).
    cluster: str | None = "auto"
    workers: int | None = None
    max_configs: int = DEFAULT_MAX_CONFIGS
    time_limit_s: float = DEFAULT_TIME_LIMIT_S


@dataclass(frozen=True)
class SweepPlan:
    """What a request resolved to, before any work: the scenario, the shard, the configurations to sweep and where
    (None: this process)."""

    scenario: Scenario
    shard: Shard | None
    size: int
    where: str | None


@dataclass(frozen=True)
class SweepOutcome:
    """A finished sweep or merge: its result and frontier (None for a merge of `--all` parts, which only writes)
    and the files written, in the order they were given."""

    result: SweepResult | None
    frontier: pl.DataFrame | None
    written: list[str]


def check_outputs(force: bool, **paths: str | None) -> None:
    """Every output file (by option name) writable, and no two the same, before any work is done."""
    given = {f"--{name.removesuffix('_out')}": path for name, path in paths.items() if path is not None}
    for option, path in given.items():
        try:
            check_target(path, force)
        except UsageError as err:
            raise UsageError(f"{option}: {err}") from None
    seen: dict[Path, str] = {}
    for option, path in given.items():
        first = seen.setdefault(Path(path).resolve(), option)
        if first != option:
            raise UsageError(f"{first} and {option} name the same file, {path}; give each its own")


def _check_sweep_outputs(r: SweepRequest) -> None:
    """Every output writable, before any work; a shard writes Parquet parts."""
    check_outputs(r.force, out=r.out, all_out=r.all_out)
    if r.shard:
        if not r.out:
            raise UsageError("--shard K/N writes the shard's part: give --out PART.parquet")
        for flag, path in (("--out", r.out), ("--all", r.all_out)):
            if path and Path(path).suffix.lower() != ".parquet":
                raise UsageError(f"{path}: a shard's {flag} part must be a .parquet file (it carries the metadata)")


def _where(r: SweepRequest) -> str | None:
    """None (this process) or the cluster to run on."""
    where = resolve(r.cluster, r.workers)
    if where is not None and r.shard:
        raise UsageError("--shard runs one shard in this process; drop --cluster (or run the whole sweep on it)")
    if where not in (None, "local") and r.all_out:
        raise UsageError(
            "--all from a cluster needs the workers to write beside it: use --cluster local, or run "
            "`sweep --shard K/N --all PART.parquet` jobs and `scalefront merge` their parts"
        )
    return where


def _plan(r: SweepRequest) -> SweepPlan:
    """The request checked and resolved: outputs, scenario, cluster, shard and size, in that order."""
    _check_sweep_outputs(r)
    catalog = Catalog.load(*r.catalogs) if r.catalogs else builtin_catalog()
    scenario = load_scenario(r.scenario, catalog, group_by=r.group_by, objectives=r.objectives, workload=r.workload)
    where = _where(r)
    shard = plan_shards(scenario, r.shard[1])[r.shard[0] - 1] if r.shard else None
    size = shard.configurations if shard else scenario.size()
    check_size(scenario.path, size, r.max_configs)
    return SweepPlan(scenario, shard, size, where)


def _all_writer(r: SweepRequest, plan: SweepPlan) -> StreamWriter | None:
    """The --all writer in this process: a plain export, or a shard's --all part (Parquet with its metadata). On a
    cluster the workers write the rows themselves."""
    if not r.all_out or plan.where is not None:
        return None
    if plan.shard is None:
        return StreamWriter(r.all_out, r.force)
    return StreamWriter(r.all_out, r.force, metadata=part_metadata(plan.scenario, plan.shard, "all"))


def _run(
    r: SweepRequest, plan: SweepPlan, watch: Callable[[Progress], None], writer: StreamWriter | None
) -> SweepResult:
    """The sweep itself: on a cluster, on a shard's cells, or on the whole space here."""
    if plan.where is not None:
        return run_sweep_sharded(
            plan.scenario,
            cluster=plan.where,
            workers=r.workers,
            on_progress=watch,
            clock=CLOCK,
            all_out=r.all_out,
            force=r.force,
        )
    on_rows = writer.write if writer else None
    cells = plan.shard.cells if plan.shard else None
    return run_sweep(plan.scenario, on_progress=watch, on_rows=on_rows, cells=cells, clock=CLOCK)


def _sweep(
    r: SweepRequest, plan: SweepPlan, on_progress: Callable[[Progress], None] | None, outputs: Outputs
) -> SweepResult:
    """Run the sweep with the limits, streaming --all rows to their temporary file (staged in `outputs`). Any stop
    (a limit, Ctrl-C, SIGTERM, an error) removes every temporary file."""
    free = shutil.disk_usage(Path(r.all_out).resolve().parent).free if r.all_out else 0
    threads = engine_threads() if plan.where is None else None
    limits = SweepLimits(plan.scenario.path, plan.size, r.time_limit_s, r.all_out, free, threads)

    def watch(p: Progress) -> None:
        if on_progress:
            on_progress(p)
        limits(p)

    writer = _all_writer(r, plan)
    try:
        result = _run(r, plan, watch, writer)
        if writer is not None:
            outputs.stream(writer, pl.DataFrame(schema=result.kept.schema).select(COLUMNS))
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    return result


def sweep(
    request: SweepRequest,
    *,
    on_start: Callable[[SweepPlan], None] | None = None,
    on_progress: Callable[[Progress], None] | None = None,
) -> SweepOutcome:
    """Run a sweep request: check its outputs, load its scenario, resolve where it runs and its shard, refuse a
    space over `max_configs`, call `on_start(plan)`, sweep (progress to `on_progress`, stopped by the time and
    disk limits as a one-line UsageError), then write the frontier (or the shard's part) and the --all rows
    together: every output or none. Raises what the inputs raise (UsageError, CatalogError, ConfigurationError)
    before any work."""
    plan = _plan(request)
    if on_start:
        on_start(plan)
    with Outputs(request.force) as outputs:
        result = _sweep(request, plan, on_progress, outputs)
        frontier = result.frontier()
        if request.out and plan.shard:
            stage_part(result, plan.scenario, plan.shard, request.out, outputs)
        elif request.out:
            outputs.frame(frontier, request.out)
        outputs.commit()
    return SweepOutcome(result, frontier, [p for p in (request.out, request.all_out) if p])


def merge(parts: list[str], out: str | None, force: bool = False) -> SweepOutcome:
    """Merge the parts of a sharded sweep (`sweep --shard K/N`): frontier parts into the sweep's result and
    frontier (written to `out` when given), `--all` parts into `out` (required)."""
    if out is not None:  # --out '' is refused, not taken for "print"
        check_outputs(force, out=out)
    if read_parts(parts)[0].meta["kind"] == "all":
        if not out:
            raise UsageError("merging --all parts writes every feasible row: give --out FILE")
        merge_all_parts(parts, out, force)
        return SweepOutcome(None, None, [out])
    result = merge_parts(parts)
    frontier = result.frontier()
    if out:
        write_frame(frontier, out, force)
    return SweepOutcome(result, frontier, [out] if out else [])
