"""Sweep benchmark: the built-in `large` scenario end to end (engine + polars frontiers), peak memory as the
space grows from 10^6 to 10^9 configurations, and the naive baseline of calling `scalefront.evaluate` from a
Python loop.

    python benchmarks/sweep_bench.py            # everything (about a minute on 2 cores)
    python benchmarks/sweep_bench.py --quick    # skip the 10^9 run

Prints a readable report, then, last, one JSON line with configs, wall_s, configs_per_s, peak_rss_mb,
frontier_rows, python_loop_configs_per_s and rss_by_size_mb. Timings on a shared machine are noisy: the
sweep is run 3 times and the median is quoted.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import scalefront
from scalefront.engine.sweep import run_sweep
from scalefront.inputs.scenario import builtin_scenarios, load_scenario

# Spaces of about 10^6 to 10^9 configurations for the memory-flatness runs: the large scenario with fewer or
# more GPU counts (beyond 16,384 GPUs most layouts fail the global-batch divisibility check and are rejected
# before any arithmetic, so the largest space is also the fastest per configuration).
SIZES = {
    "1e6": 'gpus = { start = 512, stop = 512, step = 512 }\ngpu = ["h100-sxm", "h200", "b200"]',
    "1e7": "gpus = { start = 512, stop = 2560, step = 512 }",
    "1e8": "gpus = { start = 512, stop = 16384, step = 512 }",
    "1e9": "gpus = { start = 512, stop = 131072, step = 512 }",
}


def _scenario_text(replacement: str) -> str:
    text = builtin_scenarios()["large"]
    lines = []
    for line in text.splitlines():
        if line.startswith("gpus = "):
            lines.append(replacement)
        elif line.startswith("gpu = ") and "gpu = " in replacement:
            continue
        else:
            lines.append(line)
    return "\n".join(lines) + "\n"


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _child(path: str) -> None:
    """Run one sweep and print its size, time and this process's peak RSS (called in a subprocess)."""
    scenario = load_scenario(path)
    start = time.perf_counter()
    result = run_sweep(scenario)
    result.frontier()
    wall = time.perf_counter() - start
    print(json.dumps({"configs": result.evaluated, "wall_s": wall, "peak_rss_mb": _peak_rss_mb()}))


def _python_loop_rate(samples: int = 2000) -> float:
    """Configurations per second through scalefront.evaluate called one by one from Python."""
    rng = random.Random(0)
    layouts = [(8, 1, 1), (8, 2, 1), (8, 4, 1), (4, 8, 1), (8, 4, 2), (4, 4, 1)]
    fabrics = ["ib-ndr", "roce-400g", "eth-100g-tcp"]
    configs = []
    for _ in range(samples):
        tp, pp, cp = rng.choice(layouts)
        configs.append(
            dict(
                model="llama3-70b",
                gpu="h100-sxm",
                gpus=rng.choice([512, 1024, 2048, 4096]),
                tp=tp,
                pp=pp,
                cp=cp,
                fabric=rng.choice(fabrics),
                global_batch=1024,
                recompute=rng.choice(["none", "selective", "full"]),
                zero=rng.choice([1, 3]),
            )
        )
    start = time.perf_counter()
    for kwargs in configs:
        with contextlib.suppress(scalefront.ScalefrontError):
            scalefront.evaluate(**kwargs)
    return samples / (time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="skip the 10^9-configuration run")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child)
        return 0

    scenario = load_scenario("large")
    print(f"large scenario: {scenario.size():,} configurations, scalefront {scalefront.__version__}")
    walls = []
    result = None
    for _ in range(3):
        start = time.perf_counter()
        result = run_sweep(scenario)
        frontier = result.frontier()
        walls.append(time.perf_counter() - start)
    wall = statistics.median(walls)
    assert result is not None
    rate = result.evaluated / wall
    print(
        f"  end to end (engine + polars frontier): median {wall:.2f} s of {[round(w, 2) for w in walls]}, "
        f"{rate / 1e6:.1f}M configurations/s, {result.feasible:,} feasible, {frontier.height} frontier rows"
    )
    peak = _peak_rss_mb()
    print(f"  peak RSS of this process: {peak:.0f} MB")

    rss_by_size: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, replacement in SIZES.items():
            if args.quick and label == "1e9":
                continue
            path = Path(tmp) / f"space-{label}.toml"
            path.write_text(_scenario_text(replacement))
            out = subprocess.run(
                [sys.executable, __file__, "--child", str(path)], capture_output=True, text=True, check=True
            )
            run = json.loads(out.stdout.strip().splitlines()[-1])
            rss_by_size[str(run["configs"])] = round(run["peak_rss_mb"], 1)
            print(
                f"  {run['configs']:>14,} configurations: {run['wall_s']:6.2f} s, "
                f"{run['configs'] / run['wall_s'] / 1e6:6.1f}M/s, peak RSS {run['peak_rss_mb']:.0f} MB"
            )

    loop_rate = _python_loop_rate()
    print(
        f"  python loop over scalefront.evaluate: {loop_rate:,.0f} configurations/s "
        f"(the sweep is {rate / loop_rate:,.0f}x faster)"
    )
    print(
        json.dumps(
            {
                "configs": result.evaluated,
                "wall_s": round(wall, 3),
                "configs_per_s": round(rate),
                "peak_rss_mb": round(peak, 1),
                "frontier_rows": frontier.height,
                "python_loop_configs_per_s": round(loop_rate),
                "rss_by_size_mb": rss_by_size,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
