"""One what-if update of the ROI tab (issue 21's quality bar: under 100 ms on 2 cores): the recomputation the tab
runs when the buyer changes a what-if, i.e. `scalefront.api.compare_fabrics` on the default scenario (ib-ndr vs
roce-400g, 6 GPU counts) at the tab's 2,000 Monte Carlo samples, with the what-if alternating between two values
so that no run repeats the one before it. Build the extension in release mode first, then:

    RAYON_NUM_THREADS=2 python benchmarks/roi_whatif_bench.py [--repeat 9] [--what quote|server]

Prints each update's time, the median (the figure to quote) and, for the median run's share, the Monte Carlo
alone (the core's `roi_monte_carlo`), then one JSON line. The machine may be shared: quote the median, with the
load average printed beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from dataclasses import replace

from scalefront import api
from scalefront._core import roi_monte_carlo
from scalefront.roi import run as roi_run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--what", choices=["quote", "server"], default="quote", help="the what-if that changes")
    args = parser.parse_args()

    draft = api.ScenarioDraft.open("ib-vs-roce")
    base = api.WhatIf("ib-ndr", "roce-400g")
    server = api.what_if_defaults(draft, "ib-ndr", "roce-400g").server_usd or 0.0
    values = [replace(base, premium=1.3), replace(base, premium=1.31)]
    if args.what == "server":
        values = [replace(base, server_usd=server * 1.1), replace(base, server_usd=server * 1.11)]

    mc_s: list[float] = []
    original = roi_monte_carlo

    def timed(*a):  # type: ignore[no-untyped-def]
        start = time.perf_counter()
        out = original(*a)
        mc_s.append(time.perf_counter() - start)
        return out

    roi_run.roi_monte_carlo = timed  # type: ignore[assignment]
    api.compare_fabrics(draft, values[1])  # warm: catalogs parsed, extension loaded
    mc_s.clear()
    update_s = []
    for i in range(args.repeat):
        start = time.perf_counter()
        api.compare_fabrics(draft, values[i % 2])
        update_s.append(time.perf_counter() - start)
    roi_run.roi_monte_carlo = original  # type: ignore[assignment]

    median, median_mc = statistics.median(update_s), statistics.median(mc_s)
    load = os.getloadavg()[0]
    threads = os.environ.get("RAYON_NUM_THREADS", "all")
    print(f"ROI what-if update ({args.what}), {api.INTERACTIVE_SAMPLES:,} samples, threads {threads}, load {load:.1f}")
    print(f"  each (ms): {', '.join(f'{t * 1000:.0f}' for t in update_s)}")
    print(f"  median {median * 1000:.0f} ms (target < 100 ms); Monte Carlo alone median {median_mc * 1000:.0f} ms")
    print(
        json.dumps(
            {
                "what": args.what,
                "samples": api.INTERACTIVE_SAMPLES,
                "threads": threads,
                "load_average": round(load, 2),
                "update_ms_median": round(median * 1000, 1),
                "monte_carlo_ms_median": round(median_mc * 1000, 1),
                "runs": args.repeat,
            }
        )
    )


if __name__ == "__main__":
    main()
