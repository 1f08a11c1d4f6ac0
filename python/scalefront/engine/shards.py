"""A sweep split by cells, for job arrays (SLURM, LSF, Kubernetes) and clusters, and the exact merge of its parts.

A *cell* is one cluster design (GPU, scale-up domain, GPU count, fabric, topology, precision); the engine keeps
each cell's Pareto sets, so the frontier of any group is the frontier of the union of its cells' kept rows. A
*shard* is a contiguous range of cells of about equal estimated cost (`plan_shards`): shard K of N sweeps its
cells (`run_shard`) and writes its kept rows, with each row's axis indices and its counts, to a Parquet *part*
whose metadata carries the scenario's fingerprint and K/N (`write_part`). `merge_parts` checks that the parts
are from one scenario and catalog, that none is missing or repeated, and merges them: the union of the kept rows
in the engine's order, then the same polars frontier as a one-machine run, so the merged frontier is the same
rows in the same order (and the same CSV bytes). `--all` parts hold every feasible row of their cells in
enumeration order; merged in shard order they are a one-machine `--all` export.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import polars as pl

from scalefront._core import __version__, cell_sizes, shard_ranges
from scalefront._core import cell_costs as core_cell_costs
from scalefront._enums import AXES
from scalefront.engine import cluster as engine
from scalefront.engine.export import Outputs, StreamWriter, check_target, write_lazy
from scalefront.engine.sweep import Progress, SweepResult, run_sweep
from scalefront.errors import UsageError
from scalefront.inputs.scenario.build import Scenario

__all__ = [
    "PART_KEY",
    "Part",
    "Shard",
    "cell_costs",
    "fingerprint",
    "merge_all_parts",
    "merge_parts",
    "merge_results",
    "parse_shard",
    "part_metadata",
    "plan_shards",
    "read_parts",
    "run_shard",
    "run_sweep_sharded",
    "write_part",
]

#: The Parquet key-value metadata key of a part.
PART_KEY = "scalefront.part"
#: Version of the part layout (columns and metadata); a merge refuses another.
PART_FORMAT = 1
CHOICE_COLUMNS = [f"choice_{a}" for a in AXES]
_KINDS = {"frontier": "a frontier part", "all": "an --all part"}


@dataclass(frozen=True)
class Shard:
    """Shard `index` (1-based) of `count`: cells `start` to `stop` (exclusive), their configurations and work."""

    index: int
    count: int
    start: int
    stop: int
    configurations: int
    work: int

    @property
    def cells(self) -> range:
        return range(self.start, self.stop)

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"


#: The most shards a sweep may be split into (a job array of a million jobs; more would be shards of no cells).
MAX_SHARDS = 1_000_000


def parse_shard(text: str) -> tuple[int, int]:
    """'K/N' with 1 <= K <= N <= MAX_SHARDS to (K, N)."""
    m = re.fullmatch(r"\s*(\d{1,7})\s*/\s*(\d{1,7})\s*", text)
    if not m or not 1 <= int(m[1]) <= int(m[2]) <= MAX_SHARDS:
        shown = text if len(text) <= 40 else text[:37] + "..."
        raise UsageError(f"--shard: expected K/N with 1 <= K <= N <= {MAX_SHARDS:,} (such as 3/64), got {shown!r}")
    return int(m[1]), int(m[2])


def cell_costs(scenario: Scenario) -> list[int]:
    """Estimated cost of each cell (see `scalefront_core::sweep::cells::cell_costs`)."""
    return [int(c) for c in core_cell_costs(scenario.space)]


def plan_shards(scenario: Scenario, count: int) -> list[Shard]:
    """Split the scenario's cells into `count` contiguous shards of about equal estimated cost (a shard is
    within one cell's cost of an equal share; with fewer cells than shards, some shards are empty)."""
    if count < 1:
        raise UsageError(f"the number of shards must be at least 1, got {count}")
    sizes, costs = cell_sizes(scenario.space), core_cell_costs(scenario.space)
    ranges = shard_ranges(costs.tolist(), count)
    return [Shard(k + 1, count, a, b, int(sizes[a:b].sum()), int(costs[a:b].sum())) for k, (a, b) in enumerate(ranges)]


def _canonical(value: Any) -> Any:
    """JSON-ready: tuples as lists, everything else as it is (floats keep their exact repr)."""
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    return value


def fingerprint(scenario: Scenario) -> str:
    """A hash of what decides a sweep's rows: the space exactly as the engine gets it (catalog figures and prices
    included), the names behind its indices, and the scalefront version. Parts of one sweep share it."""
    doc = {
        "space": scenario.space,
        "labels": {
            "model": scenario.model_name,
            "gpu": scenario.gpu_names,
            "scale_up": scenario.scale_up_names,
            "gpus": scenario.gpu_counts,
            "fabric": scenario.fabric_names,
            "topology": scenario.topology_names,
            "oversubscription": scenario.oversubscriptions,
            "overlap": scenario.overlap_names,
        },
        "scalefront": __version__,
    }
    text = json.dumps(_canonical(doc), sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def run_shard(scenario: Scenario, shard: Shard, **kwargs: Any) -> SweepResult:
    """Sweep the shard's cells (`kwargs` as `run_sweep` takes them)."""
    return run_sweep(scenario, cells=shard.cells, **kwargs)


def part_metadata(scenario: Scenario, shard: Shard, kind: str, result: SweepResult | None = None) -> dict[str, str]:
    """The metadata of a part: what it is, where it comes from, and (for a frontier part) its counts. Nothing that
    varies between runs (no timing): a part's bytes depend on its input only."""
    doc: dict[str, Any] = {
        "format": PART_FORMAT,
        "kind": kind,
        "fingerprint": fingerprint(scenario),
        "scalefront": __version__,
        "scenario": scenario.name,
        "shard": shard.index,
        "shards": shard.count,
        "cells": [shard.start, shard.stop],
        "configurations": shard.configurations,
        "group_by": list(scenario.space["group_by"]),
        "objectives": list(scenario.space["objectives"]),
        "cost_mode": scenario.space["economics"]["cost_mode"],
    }
    if result is not None:
        doc.update(evaluated=result.evaluated, feasible=result.feasible, rejected=result.rejected)
    return {PART_KEY: json.dumps(doc, sort_keys=True)}


def write_part(result: SweepResult, scenario: Scenario, shard: Shard, path: str | Path, force: bool = False) -> Path:
    """Write a shard's kept rows, with their axis indices, to a Parquet part (atomically)."""
    with Outputs(force) as outputs:
        stage_part(result, scenario, shard, path, outputs)
        return outputs.commit()[0]


def stage_part(result: SweepResult, scenario: Scenario, shard: Shard, path: str | Path, outputs: Outputs) -> None:
    """A shard's kept rows, with their axis indices, as a Parquet part in `outputs` (placed at its commit)."""
    assert result.choices is not None, "a part needs the kept rows' axis indices"
    frame = pl.concat([result.kept, result.choices], how="horizontal")
    outputs.frame(frame, path, metadata=part_metadata(scenario, shard, "frontier", result))


@dataclass(frozen=True)
class Part:
    """A part file and what its metadata says."""

    path: Path
    meta: dict[str, Any]

    @property
    def shard(self) -> int:
        return int(self.meta["shard"])

    @property
    def shards(self) -> int:
        return int(self.meta["shards"])


def _read_part(path: str | Path) -> Part:
    if not str(path).strip():
        raise UsageError("a part's file name is empty; merge takes the parts `sweep --shard K/N` writes")
    p = Path(path)
    if not p.exists():
        raise UsageError(f"{p}: no such file")
    if not p.is_file():
        kind = "a directory" if p.is_dir() else "not a regular file"
        raise UsageError(f"{p} is {kind}; merge takes the .parquet parts `sweep --shard K/N` writes")
    try:
        raw = pl.read_parquet_metadata(p)
    except Exception:  # polars raises several kinds for a file that is not Parquet
        raise UsageError(f"{p}: not a Parquet file; merge takes the parts `sweep --shard K/N` writes") from None
    if PART_KEY not in raw:
        raise UsageError(f"{p}: not a scalefront part (no {PART_KEY} metadata); merge takes `sweep --shard` parts")
    try:
        meta = json.loads(raw[PART_KEY])
        int(meta["shard"]), int(meta["shards"]), meta["fingerprint"], meta["kind"]
    except (ValueError, KeyError, TypeError):
        raise UsageError(f"{p}: damaged {PART_KEY} metadata") from None
    if meta.get("format") != PART_FORMAT:
        raise UsageError(f"{p}: part format {meta.get('format')}, this scalefront reads format {PART_FORMAT}")
    return Part(p, meta)


def _check_same(parts: Sequence[Part]) -> None:
    """All parts from one sweep: one kind, one scalefront version, one fingerprint, one shard count."""
    first = parts[0]
    for part in parts[1:]:
        if part.meta["kind"] != first.meta["kind"]:
            raise UsageError(
                f"{part.path}: {_KINDS.get(part.meta['kind'], 'a part')}, but {first.path} is "
                f"{_KINDS.get(first.meta['kind'], 'another kind')}; merge frontier parts and --all parts separately"
            )
        if part.meta["scalefront"] != first.meta["scalefront"]:
            raise UsageError(
                f"{part.path}: written by scalefront {part.meta['scalefront']}, but {first.path} by "
                f"{first.meta['scalefront']}; rerun every shard with one version"
            )
        if part.meta["fingerprint"] != first.meta["fingerprint"]:
            raise UsageError(
                f"{part.path}: from a different scenario or catalog than {first.path} "
                f"(fingerprint {part.meta['fingerprint'][:12]} vs {first.meta['fingerprint'][:12]})"
            )
        if part.shards != first.shards:
            raise UsageError(
                f"{part.path}: shard {part.shard}/{part.shards}, but {first.path} is shard "
                f"{first.shard}/{first.shards}; merge the parts of one split"
            )


def _check_complete(parts: Sequence[Part]) -> None:
    """Every shard 1..N exactly once."""
    seen: dict[int, Part] = {}
    for part in parts:
        if part.shard in seen:
            raise UsageError(
                f"{part.path}: shard {part.shard}/{part.shards} again (also {seen[part.shard].path}); "
                "pass each shard's part once"
            )
        seen[part.shard] = part
    n = parts[0].shards
    missing = [k for k in range(1, n + 1) if k not in seen]
    if missing:
        shown = ", ".join(str(k) for k in missing[:10]) + (", ..." if len(missing) > 10 else "")
        raise UsageError(f"shard{'s' if len(missing) > 1 else ''} {shown} of {n} missing; nothing was merged")


def read_parts(paths: Sequence[str | Path]) -> list[Part]:
    """Read and check the parts of one split, in shard order."""
    if not paths:
        raise UsageError("merge: no parts given")
    parts = [_read_part(p) for p in paths]
    _check_same(parts)
    _check_complete(parts)
    return sorted(parts, key=lambda p: p.shard)


def merge_results(results: Sequence[SweepResult], wall_s: float | None = None) -> SweepResult:
    """Merge the results of disjoint sets of cells of one scenario: the union of their kept rows in the engine's
    order (by axis indices), counts added. Its frontier is a one-machine run's, row for row."""
    first = results[0]
    kept = pl.concat([r.kept for r in results], how="vertical")
    choices = pl.concat([r.choices for r in results if r.choices is not None], how="vertical")
    if choices.height != kept.height:
        raise ValueError("every merged result needs its kept rows' axis indices")
    order = pl.concat([kept, choices], how="horizontal").sort(CHOICE_COLUMNS, maintain_order=True)
    rejected: dict[str, int] = {}
    for r in results:
        for k, v in r.rejected.items():
            rejected[k] = rejected.get(k, 0) + v
    return SweepResult(
        scenario=first.scenario,
        kept=order.drop(CHOICE_COLUMNS),
        evaluated=sum(r.evaluated for r in results),
        feasible=sum(r.feasible for r in results),
        rejected=rejected,
        cancelled=any(r.cancelled for r in results),
        wall_s=wall_s if wall_s is not None else sum(r.wall_s for r in results),
        objectives=list(first.objectives),
        name=first.name,
        group_by=list(first.group_by),
        cost_mode=first.cost_mode,
        choices=order.select(CHOICE_COLUMNS),
    )


def _part_result(part: Part) -> SweepResult:
    frame = pl.read_parquet(part.path)
    m = part.meta
    return SweepResult(
        scenario=None,
        kept=frame.drop(CHOICE_COLUMNS),
        evaluated=int(m["evaluated"]),
        feasible=int(m["feasible"]),
        rejected={k: int(v) for k, v in m["rejected"].items()},
        cancelled=False,
        wall_s=math.nan,  # a part records no timing (see `part_metadata`)
        objectives=list(m["objectives"]),
        name=m["scenario"],
        group_by=list(m["group_by"]),
        cost_mode=str(m["cost_mode"]),
        choices=frame.select(CHOICE_COLUMNS),
    )


def merge_parts(paths: Sequence[str | Path]) -> SweepResult:
    """Check and merge frontier parts (see `read_parts`, `merge_results`)."""
    parts = read_parts(paths)
    if parts[0].meta["kind"] != "frontier":
        raise UsageError(f"{parts[0].path}: an --all part; merge_all_parts concatenates those")
    return merge_results([_part_result(p) for p in parts])


def merge_all_parts(paths: Sequence[str | Path], out: str | Path, force: bool = False) -> Path:
    """Check `--all` parts and concatenate them in shard order into `out` (.csv or .parquet), streamed: the rows
    of a one-machine `--all` export, in the same order."""
    parts = read_parts(paths)
    if parts[0].meta["kind"] != "all":
        raise UsageError(f"{parts[0].path}: a frontier part; merge_parts merges those")
    return write_lazy(pl.scan_parquet([p.path for p in parts]), out, force)


# ---------------------------------------------------------------------------------------------- on a cluster

#: Shards per cluster task slot: enough that a slow shard does not leave the other workers idle at the end. The
#: cost estimate balances work units, but a unit's time varies about 2x between cells (measured on
#: benchmarks/ten_billion.toml: 0.05-0.11 s per million units across 64 equal shards), and a shard costs ~10 ms
#: to send and return, so many small shards beat a few equal ones.
SHARDS_PER_SLOT = 16


def _sweep_on_worker(job: tuple[Scenario, Shard, str | None]) -> SweepResult:
    """One shard's sweep inside `scalefront.engine.cluster.map_shards`: on the worker's share of its cores, progress
    reported, stopped when the caller cancels; the kept rows come back as polars (Arrow) columns. With a rows
    directory (a local cluster's --all), the shard's feasible rows are streamed to a Parquet file there."""
    scenario, shard, rows_dir = job

    def watch(p: Progress) -> None:
        engine.report(done=p.done, work=p.work_done or 0, feasible=p.feasible)
        engine.stop_if_cancelled()  # run_sweep cancels the engine and re-raises

    writer = StreamWriter(Path(rows_dir) / _rows_file(shard), force=True) if rows_dir else None
    try:
        on_rows = writer.write if writer else None
        result = run_shard(scenario, shard, threads=engine.threads(), on_progress=watch, on_rows=on_rows)
    except BaseException:
        if writer:
            writer.abort()
        raise
    if writer:
        writer.commit(result.kept.clear())
    engine.report(done=result.evaluated, work=shard.work, feasible=result.feasible, final=True)
    return replace(result, scenario=None)


def _rows_file(shard: Shard) -> str:
    return f"rows-{shard.index:06d}.parquet"


def run_sweep_sharded(
    scenario: Scenario,
    *,
    cluster: str | None,
    workers: int | None = None,
    shards: int | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    clock: Callable[[], float] = time.perf_counter,
    all_out: str | Path | None = None,
    force: bool = False,
) -> SweepResult:
    """The scenario's sweep split into shards on a cluster (see `scalefront.engine.cluster.map_shards`), merged exactly:
    its frontier is a one-machine run's, row for row. `shards` defaults to SHARDS_PER_SLOT per task slot of the
    cluster. `on_progress` gets the whole cluster's progress; raising in it (a limit) or Ctrl-C stops every shard.
    `all_out` (a local cluster only: the workers write beside it) also writes every feasible row there, in the
    one-machine order: each shard streams its rows to a hidden file, concatenated in shard order at the end and
    removed, whatever happens."""
    total, work_total = scenario.size(), int(core_cell_costs(scenario.space).sum())
    start = clock()
    rows_dir = _rows_dir(all_out, force, cluster)

    def split(slots: int) -> list[tuple[Scenario, Shard, str | None]]:
        count = shards or SHARDS_PER_SLOT * slots
        return [(scenario, s, str(rows_dir) if rows_dir else None) for s in plan_shards(scenario, count)]

    def watch(state: engine.ShardProgress) -> None:
        if on_progress:
            done, work, feasible = (int(state.total(k)) for k in ("done", "work", "feasible"))
            on_progress(Progress(done, total, feasible, clock() - start, {}, work, work_total))

    try:
        results = engine.map_shards(_sweep_on_worker, split, cluster=cluster, workers=workers, on_progress=watch)
        if all_out is not None and rows_dir is not None:
            write_lazy(pl.scan_parquet(sorted(rows_dir.glob("rows-*.parquet"))), all_out, force)
    finally:
        if rows_dir is not None:
            shutil.rmtree(rows_dir, ignore_errors=True)
    merged = merge_results(results, wall_s=clock() - start)
    return replace(merged, scenario=scenario)


def _rows_dir(all_out: str | Path | None, force: bool, cluster: str | None) -> Path | None:
    """A hidden directory beside the --all target for the shards' rows (checked writable first)."""
    if all_out is None:
        return None
    if cluster not in (None, "local"):
        raise UsageError(
            "--all from a cluster needs the workers to write beside it: use --cluster local, or run "
            "`sweep --shard K/N --all PART.parquet` jobs and `scalefront merge` their parts"
        )
    target = check_target(all_out, force)
    return Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
