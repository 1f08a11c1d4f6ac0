"""One what-if update of the ROI tab (issue 21's quality bar: under 100 ms on 2 cores): the recomputation the tab
runs when the buyer changes a what-if, i.e. `scalefront.api.compare_fabrics` on the default scenario (ib-ndr vs
roce-400g, 6 GPU counts) at the tab's 2,000 Monte Carlo samples, with the what-if alternating between two values
so that no run repeats the one before it. A what-if of price re-prices the comparison kept from the first run
(`scalefront.roi.repricing`); `--fresh` times a fresh comparison per update instead (what the tab ran before).
Build the extension in release mode first, then:

    RAYON_NUM_THREADS=2 python benchmarks/roi_whatif_bench.py [--repeat 9] [--what quote|server|life] [--fresh]

Prints each update's time and the median (the figure to quote), the first comparison's time, then one JSON line.
The machine may be shared: quote the median, with the load average printed beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from dataclasses import replace

from scalefront import api
from scalefront.roi import repricing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--what", choices=["quote", "server", "life"], default="quote", help="the what-if that changes")
    parser.add_argument("--fresh", action="store_true", help="compare afresh at every update (no kept comparison)")
    args = parser.parse_args()

    draft = api.ScenarioDraft.open("ib-vs-roce")
    base = api.what_if_defaults(draft, "ib-ndr", "roce-400g")
    server = base.server_usd or 0.0
    values = {
        "quote": [replace(base, premium=1.3), replace(base, premium=1.31)],
        "server": [replace(base, server_usd=server * 1.1), replace(base, server_usd=server * 1.11)],
        "life": [replace(base, years=4.0), replace(base, years=6.0)],
    }[args.what]

    start = time.perf_counter()
    api.compare_fabrics(draft, base)  # the first comparison: catalogs parsed, sweeps, the kept session
    first_s = time.perf_counter() - start
    update_s = []
    for i in range(args.repeat):
        if args.fresh:
            repricing._kept = None
        start = time.perf_counter()
        api.compare_fabrics(draft, values[i % 2])
        update_s.append(time.perf_counter() - start)

    median = statistics.median(update_s)
    load = os.getloadavg()[0]
    threads = os.environ.get("RAYON_NUM_THREADS", "all")
    how = "fresh comparison" if args.fresh else "re-priced"
    print(
        f"ROI what-if update ({args.what}, {how}), {api.INTERACTIVE_SAMPLES:,} samples, threads {threads}, "
        f"load {load:.1f}"
    )
    print(f"  first comparison {first_s * 1000:.0f} ms")
    print(f"  each (ms): {', '.join(f'{t * 1000:.0f}' for t in update_s)}")
    print(f"  median {median * 1000:.0f} ms (target < 100 ms)")
    print(
        json.dumps(
            {
                "what": args.what,
                "fresh": args.fresh,
                "samples": api.INTERACTIVE_SAMPLES,
                "threads": threads,
                "load_average": round(load, 2),
                "first_ms": round(first_s * 1000, 1),
                "update_ms_median": round(median * 1000, 1),
                "runs": args.repeat,
            }
        )
    )


if __name__ == "__main__":
    main()
