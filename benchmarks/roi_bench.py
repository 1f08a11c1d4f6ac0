"""ROI Monte Carlo benchmark (issue 12's figure): 10,000 samples over the default scenario (both fabrics, 6 GPU
counts) on 2 cores, each sample re-evaluating and re-optimising the candidate layouts of both fabrics at every
GPU count. Target: under 10 s. Build the extension in release mode first (`pip install .`, or
`bash /work/notes/rebuild.sh` for the fast release build), then:

    RAYON_NUM_THREADS=2 python benchmarks/roi_bench.py [--samples 10000] [--repeat 3]

Prints the Monte Carlo time alone (the core's `roi_monte_carlo`), the whole `scalefront.roi.compare` (sweep,
tornado, Monte Carlo, frames) and the evaluations per second, then one JSON line. Timings on a shared machine are
noisy: the median of `--repeat` runs is quoted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

from scalefront._core import RoiHandle, roi_monte_carlo
from scalefront.roi import RoiOptions, compare
from scalefront.roi import run as roi_run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    captured: dict[str, object] = {}
    original = roi_monte_carlo

    def timed(problem, uncertainty, handle, first, samples):  # type: ignore[no-untyped-def]
        captured["problem"], captured["uncertainty"] = problem, uncertainty
        return original(problem, uncertainty, handle, first, samples)

    roi_run.roi_monte_carlo = timed  # type: ignore[assignment]
    whole = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        result = compare("ib-vs-roce", options=RoiOptions(samples=args.samples))
        whole.append(time.perf_counter() - start)
    roi_run.roi_monte_carlo = original  # type: ignore[assignment]
    mc = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        out = roi_monte_carlo(captured["problem"], captured["uncertainty"], RoiHandle(), 0, args.samples)
        mc.append(time.perf_counter() - start)
    problem = captured["problem"]
    assert isinstance(problem, dict)
    chosen = result.table.select("gpus", "topology_a", "topology_b").rows()
    candidates = sum(
        len(c)
        for d in problem["designs"]
        for c in d["candidates"]
        if (d["gpus"], d["topology"], d["topology"]) in chosen
    )
    evaluations = args.samples * candidates
    threads = os.environ.get("RAYON_NUM_THREADS", "all")
    median_mc, median_whole = statistics.median(mc), statistics.median(whole)
    print(f"Monte Carlo: {args.samples:,} samples x {len(out['counts'])} GPU counts x 2 fabrics, threads {threads}")
    print(f"  Monte Carlo alone  {median_mc:6.2f} s (median of {args.repeat}: {', '.join(f'{t:.2f}' for t in mc)})")
    print(f"  compare() overall  {median_whole:6.2f} s (sweep, tornado with flip values, Monte Carlo, frames)")
    print(f"  {candidates} candidate layouts per sample: {evaluations / median_mc:,.0f} evaluations/s")
    print(
        json.dumps(
            {
                "samples": args.samples,
                "gpu_counts": len(out["counts"]),
                "threads": threads,
                "mc_s": round(median_mc, 3),
                "compare_s": round(median_whole, 3),
                "evaluations_per_s": round(evaluations / median_mc),
            }
        )
    )


if __name__ == "__main__":
    main()
