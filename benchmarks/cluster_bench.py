"""Cluster benchmark: a ~10^10-configuration sweep (benchmarks/ten_billion.toml) in one process against a local
Dask cluster of 2 worker processes, and the same sweep split in 64 shards run one after another (a job array
simulated on this machine), with the merge. Needs the cluster extra (`pip install '.[cluster]'`).

    python benchmarks/cluster_bench.py             # everything: ~10 min on 2 shared cores
    python benchmarks/cluster_bench.py --quick     # the built-in `large` scenario instead (~1 min)

(a) One process (the engine on all cores) and the local cluster (2 workers, one core each; the cluster is started
once, its start time reported apart) alternate 3 times; each pair's throughput ratio is taken within the pair (the
machine is shared: other work slows both of a pair alike), and so is the ratio of their CPU seconds (this process
and the cluster's processes), which other work on the machine does not inflate. The merged frontier must be
byte-identical to the one-process frontier. Overhead per shard: the cluster's core-seconds (wall x workers) less
the shards' own sweep time, per shard; and the round trip of an empty shard.
(b) 64 shards swept one after another in this process, each written as a Parquet part (as `sweep --shard K/64`
would), then merged (`scalefront merge`); per-shard time, merge time (3 runs), the merged CSV compared with (a)'s,
and the projected wall time on 64 machines of 32 cores: the slowest shard's sweep time scaled by the core ratio
(the engine scales with cores; its threads share nothing but counters), plus the fixed per-job cost (process start,
scenario, writing the part) and the merge.

Prints a readable report, then one JSON line. Medians of 3 runs.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

import scalefront
from scalefront.engine import cluster
from scalefront.engine.shards import (
    SHARDS_PER_SLOT,
    _sweep_on_worker,
    merge_parts,
    merge_results,
    plan_shards,
    run_shard,
    run_sweep_sharded,
    write_part,
)
from scalefront.engine.sweep import run_sweep
from scalefront.inputs.scenario import load_scenario

HERE = Path(__file__).resolve().parent
TARGET_CORES = 32
TARGET_MACHINES = 64


def _cores() -> int:
    return len(os.sched_getaffinity(0))


def _noop(_: int) -> int:
    return 0


def cpu_seconds() -> float:
    """CPU time of this process and every process it started (the local cluster's nannies and workers): busy
    time, which other work on a shared machine does not inflate the way it inflates wall time."""
    me = psutil.Process()
    total = sum(me.cpu_times()[:2])
    for child in me.children(recursive=True):
        with contextlib.suppress(psutil.Error):
            total += sum(child.cpu_times()[:2])
    return total


def one_process(scenario) -> tuple[float, float, str, object]:
    """Wall time, CPU seconds, frontier CSV and result of the sweep in this process (all cores)."""
    start, cpu = time.perf_counter(), cpu_seconds()
    result = run_sweep(scenario)
    csv = result.frontier().write_csv()
    return time.perf_counter() - start, cpu_seconds() - cpu, csv, result


def on_cluster(scenario, address: str) -> tuple[float, float, str, object]:
    """The same on the cluster (as `sweep --cluster ADDRESS`); CPU seconds of the driver and the workers."""
    start, cpu = time.perf_counter(), cpu_seconds()
    result = run_sweep_sharded(scenario, cluster=address)
    csv = result.frontier().write_csv()
    return time.perf_counter() - start, cpu_seconds() - cpu, csv, result


def shard_seconds(scenario, address: str) -> tuple[float, float, int]:
    """The sweep on the cluster again, through the same worker function, keeping each shard's own sweep time:
    (wall, the shards' sweep seconds in all, shards)."""
    jobs = [(scenario, s, None) for s in plan_shards(scenario, SHARDS_PER_SLOT * 2)]
    start = time.perf_counter()
    results = cluster.map_shards(_sweep_on_worker, jobs, cluster=address)
    merge_results(results).frontier().write_csv()
    return time.perf_counter() - start, sum(r.wall_s for r in results), len(jobs)


def part_a(scenario, runs: int) -> dict:
    print(f"(a) {scenario.name}: {scenario.size():,} configurations; one process vs a local cluster of 2 workers")
    started = time.perf_counter()
    with cluster.local_cluster(2) as address:
        start_s = time.perf_counter() - started
        print(f"  local cluster started in {start_s:.2f} s (not counted below)")
        pairs: list[tuple[float, float]] = []
        cpu_pairs: list[tuple[float, float]] = []
        reference = None
        for i in range(runs):
            # Alternate which goes first, so that a drift in the machine's load does not favour one.
            if i % 2 == 0:
                w1, c1, csv1, r1 = one_process(scenario)
                w2, c2, csv2, r2 = on_cluster(scenario, address)
            else:
                w2, c2, csv2, r2 = on_cluster(scenario, address)
                w1, c1, csv1, r1 = one_process(scenario)
            reference = reference or csv1
            identical = csv1 == csv2 == reference
            assert identical, "the cluster's frontier differs from the one-process frontier"
            pairs.append((w1, w2))
            cpu_pairs.append((c1, c2))
            print(
                f"  run {i + 1}: one process {w1:7.2f} s ({r1.evaluated / w1 / 1e6:6.1f}M/s, {c1:6.1f} CPU s), "
                f"cluster {w2:7.2f} s ({r2.evaluated / w2 / 1e6:6.1f}M/s, {c2:6.1f} CPU s), "
                f"wall ratio {w1 / w2:.2f}, CPU ratio {c1 / c2:.2f}, frontier identical"
            )
        # The cost of distribution: per shard of the sweep, and an empty shard's round trip.
        wall, shard_s, shards = shard_seconds(scenario, address)
        t = time.perf_counter()
        cluster.map_shards(_noop, list(range(64)), cluster=address)
        empty_s = (time.perf_counter() - t) / 64 * 2  # 2 workers run them side by side
    one = statistics.median(w for w, _ in pairs)
    many = statistics.median(w for _, w in pairs)
    ratio = statistics.median(w1 / w2 for w1, w2 in pairs)
    cpu_ratio = statistics.median(c1 / c2 for c1, c2 in cpu_pairs)
    per_shard = (wall * 2 - shard_s) / shards
    configs = scenario.size()
    print(
        f"  medians: one process {one:.2f} s, cluster {many:.2f} s: {configs / many / 1e6:.1f}M "
        f"configurations/s on the cluster, {ratio:.0%} of the one-process throughput (median of the pairs' ratios); "
        f"CPU time: the one process needs {cpu_ratio:.0%} of the cluster's CPU seconds for the same sweep"
    )
    print(
        f"  overhead per shard ({shards} shards): {per_shard:.3f} s of a worker (cluster core-seconds less the "
        f"shards' sweep time); an empty shard's round trip: {empty_s * 1000:.1f} ms"
    )
    return {
        "configs": configs,
        "one_process_s": round(one, 2),
        "cluster_s": round(many, 2),
        "cluster_configs_per_s": round(configs / many),
        "one_process_configs_per_s": round(configs / one),
        "throughput_ratio": round(ratio, 3),
        "cpu_ratio": round(cpu_ratio, 3),
        "cpu_pairs_s": [[round(a, 1), round(b, 1)] for a, b in cpu_pairs],
        "pairs_s": [[round(a, 2), round(b, 2)] for a, b in pairs],
        "cluster_start_s": round(start_s, 2),
        "shards": shards,
        "overhead_per_shard_s": round(per_shard, 3),
        "empty_shard_round_trip_s": round(empty_s, 4),
        "frontier_identical": True,
        "reference_csv": reference,
    }


def job_cost(scenario, scenario_path: Path) -> float:
    """The fixed cost of one `sweep --shard K/N` job: a process that starts, loads the scenario, splits it, sweeps
    an empty shard (with twice as many shards as cells, some are empty) and writes its part."""
    n = 2 * len(scalefront._core.cell_costs(scenario.space))
    empty = next(s for s in plan_shards(scenario, n) if s.start == s.stop)
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "scalefront", "sweep", str(scenario_path), "--shard", empty.label]
        start = time.perf_counter()
        subprocess.run([*cmd, "--out", str(Path(tmp) / "p.parquet")], check=True, capture_output=True)
        return time.perf_counter() - start


def part_b(scenario, scenario_path: Path, runs: int, reference_csv: str | None) -> dict:
    print(f"(b) the same sweep in {TARGET_MACHINES} shards, one after another in this process, then merged")
    per_shard: list[list[float]] = []
    merges: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(runs):
            times = []
            paths = []
            for shard in plan_shards(scenario, TARGET_MACHINES):
                start = time.perf_counter()
                result = run_shard(scenario, shard)
                paths.append(write_part(result, scenario, shard, Path(tmp) / f"part-{shard.index}.parquet", True))
                times.append(time.perf_counter() - start)
            per_shard.append(times)
            start = time.perf_counter()
            merged = merge_parts(paths)
            csv = merged.frontier().write_csv()
            merges.append(time.perf_counter() - start)
            if reference_csv is not None:
                assert csv == reference_csv, "the merged frontier differs from the one-process frontier"
            print(
                f"  run {run + 1}: shards {sum(times):.1f} s in all (min {min(times):.2f}, median "
                f"{statistics.median(times):.2f}, max {max(times):.2f} s), merge {merges[-1]:.2f} s"
                + (", frontier identical to (a)" if reference_csv is not None else "")
            )
    medians = [statistics.median(run[k] for run in per_shard) for k in range(TARGET_MACHINES)]
    fixed = statistics.median(job_cost(scenario, scenario_path) for _ in range(3))
    merge = statistics.median(merges)
    cores = _cores()
    slowest = max(medians)
    projected = slowest * cores / TARGET_CORES + fixed + merge
    print(
        f"  per shard (median of {runs} runs): min {min(medians):.2f} s, median {statistics.median(medians):.2f} s, "
        f"max {slowest:.2f} s on {cores} cores; merge {merge:.2f} s; a job's fixed cost (process, scenario, part) "
        f"{fixed:.2f} s"
    )
    print(
        f"  projected on {TARGET_MACHINES} machines x {TARGET_CORES} cores: slowest shard {slowest:.2f} s x "
        f"{cores}/{TARGET_CORES} + {fixed:.2f} s job + {merge:.2f} s merge = {projected:.1f} s "
        f"(one process here: {sum(medians):.1f} s of shards)"
    )
    return {
        "shards": TARGET_MACHINES,
        "shard_s_min": round(min(medians), 3),
        "shard_s_median": round(statistics.median(medians), 3),
        "shard_s_max": round(slowest, 3),
        "shards_total_s": round(sum(medians), 2),
        "merge_s": round(merge, 3),
        "job_fixed_s": round(fixed, 3),
        "projected_64x32_s": round(projected, 2),
        "cores_here": cores,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="the built-in large scenario instead of 10^10")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    path = HERE / "ten_billion.toml"
    if args.quick:
        from scalefront.inputs.scenario import builtin_scenarios

        path = Path(tempfile.mkdtemp()) / "large.toml"
        path.write_text(builtin_scenarios()["large"], encoding="utf-8")
    scenario = load_scenario(path)
    print(f"scalefront {scalefront.__version__}, {_cores()} cores here")
    a = part_a(scenario, args.runs)
    reference = a.pop("reference_csv")
    b = part_b(scenario, path, args.runs, reference)
    print(json.dumps({"a": a, "b": b}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
