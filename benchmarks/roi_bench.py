"""ROI benchmark (issue 20's figures): `scalefront roi --seed 0` on the default scenario as a user runs it, from
process start to exit (Python's start, the imports, the catalogs, the sweep of both fabrics at 6 GPU counts, the
10,000-sample Monte Carlo with and without the model's error, the tornado with its flips, the frames, the text),
with a target under 1 s on 2 cores; the same comparison in this process (no start-up or imports); and the UI's
what-if update (a re-priced comparison, `scalefront.api.compare_fabrics` after its first call) with a target under
100 ms. Build the extension in release mode first (`pip install .`), then:

    RAYON_NUM_THREADS=2 python benchmarks/roi_bench.py [--samples 10000] [--repeat 5]

Timings on a shared machine are noisy: the median of `--repeat` runs is quoted with the load average (the first
what-if, which runs the comparison, is timed apart); the CPU seconds (every thread, the children's for the
process runs) bound what a run takes alone on one core. Python writes no bytecode when PYTHONDONTWRITEBYTECODE is
set: each run then compiles every module again, as no installed copy does; this benchmark unsets it for its runs
(after one warm-up run). Prints one line per figure, then one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import replace

from scalefront import api
from scalefront.roi import RoiOptions, compare

#: What `scalefront roi` compares InfiniBand with by default (the scenario's `[cluster] compare_with`).
DEFAULT_B = ["roce-400g@untuned", "roce-400g@tuned"]
#: The issue's targets, seconds.
END_TO_END_TARGET_S, WHAT_IF_TARGET_S = 1.0, 0.1


def _process(samples: int, repeat: int) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU seconds (user + system, every thread) of `scalefront roi --seed 0` as a new process,
    start to exit, after one warm-up run (bytecode written, files cached)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    command = [sys.executable, "-m", "scalefront", "roi", "--seed", "0", "--samples", str(samples)]
    times, cpu = [], []
    for i in range(repeat + 1):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if i > 0:
            times.append(wall)
            cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return times, cpu


def _end_to_end(samples: int, repeat: int) -> tuple[list[float], list[float]]:
    """Wall-clock and CPU seconds (every thread of this process) of each run: on a machine other jobs share, the
    wall time counts their turns too; the CPU seconds bound what the run takes alone (no I/O waits here)."""
    times, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = compare("ib-vs-roce", "ib-ndr", DEFAULT_B, options=RoiOptions(samples=samples))
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        assert result.tornado_computed and result.table.height > 0
    return times, cpu


def _what_ifs(repeat: int) -> tuple[float, list[float]]:
    """The first comparison, then `repeat` what-ifs (A's quoted premium 1.0x..1.4x: issue 21's what-ifs compare
    afresh with the figure moved in the catalog)."""
    draft = api.ScenarioDraft.open("ib-vs-roce")
    base = api.what_if_defaults(draft, "ib-ndr", "roce-400g")
    start = time.perf_counter()
    api.compare_fabrics(draft, base)
    first = time.perf_counter() - start
    times = []
    for i in range(repeat):
        w = replace(base, premium=1.0 + 0.1 * (i % 5))
        start = time.perf_counter()
        view = api.compare_fabrics(draft, w)
        times.append(time.perf_counter() - start)
        assert view.verdict
    return first, times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    threads = os.environ.get("RAYON_NUM_THREADS", "all")
    proc, proc_cpu = _process(args.samples, args.repeat)
    whole, cpu = _end_to_end(args.samples, args.repeat)
    first, what_if = _what_ifs(args.repeat)
    m_whole, m_cpu, m_what_if = statistics.median(whole), statistics.median(cpu), statistics.median(what_if)
    m_proc, m_proc_cpu = statistics.median(proc), statistics.median(proc_cpu)
    load = os.getloadavg()[0]
    print(f"roi default, {args.samples:,} samples, threads {threads}, load average {load:.1f}")
    print(
        f"  process        {m_proc:6.3f} s median of {args.repeat} ({', '.join(f'{t:.3f}' for t in proc)}); "
        f"target {END_TO_END_TARGET_S:g} s"
    )
    print(f"  its CPU time   {m_proc_cpu:6.3f} s median (user + system, every thread)")
    print(f"  in-process     {m_whole:6.3f} s median of {args.repeat} ({', '.join(f'{t:.3f}' for t in whole)})")
    print(f"  its CPU time   {m_cpu:6.3f} s median (all threads: alone, the run takes no longer than this)")
    print(f"  first what-if  {first:6.3f} s (runs the comparison)")
    print(
        f"  what-if update {m_what_if * 1e3:6.1f} ms median of {args.repeat} "
        f"({', '.join(f'{t * 1e3:.1f}' for t in what_if)}); target {WHAT_IF_TARGET_S * 1e3:g} ms"
    )
    print(
        json.dumps(
            {
                "samples": args.samples,
                "threads": threads,
                "load_average": round(load, 1),
                "process_s": round(m_proc, 3),
                "process_cpu_s": round(m_proc_cpu, 3),
                "end_to_end_s": round(m_whole, 3),
                "end_to_end_cpu_s": round(m_cpu, 3),
                "first_what_if_s": round(first, 3),
                "what_if_ms": round(m_what_if * 1e3, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
