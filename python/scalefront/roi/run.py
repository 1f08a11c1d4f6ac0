"""Running the comparison's Monte Carlo: here in a worker thread (GIL released, progress polled, cancelled on
Ctrl-C), or in shards of samples on a Dask cluster (`scalefront.engine.cluster.map_shards`) with the same numbers.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from scalefront._core import RoiHandle, roi_analyse, roi_monte_carlo, roi_summarise
from scalefront.engine import cluster
from scalefront.roi.result import McProgress

__all__ = ["analyse", "monte_carlo", "monte_carlo_on_cluster"]


def _in_a_thread(
    call: Callable[[RoiHandle], Any],
    samples: int,
    on_progress: Callable[[McProgress], None] | None,
    handle: RoiHandle | None,
    poll_s: float = 0.1,
) -> Any:
    """`call(handle)` in a worker thread (the core releases the GIL), its progress polled here; Ctrl-C or an
    exception from `on_progress` cancels it (milliseconds) and is re-raised."""
    handle = handle or RoiHandle()
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["result"] = call(handle)
        except BaseException as err:  # handed to the caller's thread
            box["error"] = err

    start = time.perf_counter()
    thread = threading.Thread(target=work, name="scalefront-roi-mc", daemon=True)
    thread.start()
    try:
        while thread.is_alive():
            thread.join(poll_s)
            if on_progress:
                on_progress(McProgress(handle.done(), samples, time.perf_counter() - start))
    except BaseException:
        handle.cancel()
        thread.join()
        raise
    if "error" in box:
        raise box["error"]
    if on_progress:
        on_progress(McProgress(handle.done(), samples, time.perf_counter() - start))
    return box["result"]


def monte_carlo(
    problem: dict[str, Any],
    uncertainty: dict[str, Any],
    samples: int,
    on_progress: Callable[[McProgress], None] | None,
    handle: RoiHandle | None,
    poll_s: float = 0.1,
    first: int = 0,
) -> dict[str, Any]:
    """Samples `first .. first + samples` of the Monte Carlo in a worker thread (GIL released), progress polled here;
    Ctrl-C or an exception from `on_progress` cancels it (milliseconds) and is re-raised."""
    result: dict[str, Any] = _in_a_thread(
        lambda h: roi_monte_carlo(problem, uncertainty, h, first, samples), samples, on_progress, handle, poll_s
    )
    return result


def analyse(
    problem: dict[str, Any],
    uncertainty: dict[str, Any],
    on_progress: Callable[[McProgress], None] | None,
    handle: RoiHandle | None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The comparison at typical values (with its tornado) and its Monte Carlo from one plan, here: what
    `roi_compare` and `monte_carlo` give, with the designs evaluated at typical values once."""
    typical, mc = _in_a_thread(
        lambda h: roi_analyse(problem, uncertainty, h), int(uncertainty["samples"]), on_progress, handle
    )
    return typical, mc


def _mc_shard(job: tuple[dict[str, Any], dict[str, Any], int, int]) -> dict[str, Any]:
    """Samples `first .. first + count` on a cluster worker (a module-level function, so that it pickles), with its
    progress sent to the caller; the caller's Ctrl-C or limit cancels it."""
    problem, uncertainty, first, count = job

    def watch(p: McProgress) -> None:
        cluster.report(done=p.done)
        cluster.stop_if_cancelled()  # monte_carlo cancels the run and re-raises

    result = monte_carlo(problem, uncertainty, count, watch, None, first=first)
    cluster.report(done=count, final=True)
    return result


def _sample_shards(
    problem: dict[str, Any], uncertainty: dict[str, Any], samples: int, slots: int
) -> list[tuple[dict[str, Any], dict[str, Any], int, int]]:
    """Contiguous ranges of samples, four per task slot of the cluster (so that a slow worker's share is small)."""
    n = max(1, min(samples, 4 * slots))
    edges = [samples * i // n for i in range(n + 1)]
    return [(problem, uncertainty, lo, hi - lo) for lo, hi in itertools.pairwise(edges) if hi > lo]


def monte_carlo_on_cluster(
    problem: dict[str, Any],
    uncertainty: dict[str, Any],
    samples: int,
    where: str,
    workers: int | None,
    on_progress: Callable[[McProgress], None] | None,
) -> dict[str, Any]:
    """The Monte Carlo in shards of samples on a cluster (`scalefront.engine.cluster.map_shards`). Sample i is drawn
    from a counter-based hash of (seed, i, input), whatever shard or thread draws it, so the shards' outcome columns,
    concatenated in shard order, are the one-machine run's, and so are the summaries computed from them."""
    start = time.perf_counter()

    def watch(state: cluster.ShardProgress) -> None:
        if on_progress:
            on_progress(McProgress(int(state.total("done")), samples, time.perf_counter() - start))

    parts: list[dict[str, Any]] = cluster.map_shards(
        _mc_shard,
        lambda slots: _sample_shards(problem, uncertainty, samples, slots),
        cluster=where,
        workers=workers,
        on_progress=watch,
    )
    counts = []
    for c, first in enumerate(parts[0]["counts"]):
        columns = {k: np.concatenate([p["counts"][c]["outcomes"][k] for p in parts]) for k in first["outcomes"]}
        summary = roi_summarise(first["gpus"], first["side_b"], columns)
        counts.append({"gpus": first["gpus"], "side_b": first["side_b"], "outcomes": columns, "summary": summary})
    if on_progress:
        on_progress(McProgress(samples, samples, time.perf_counter() - start))
    return {"counts": counts, "cancelled": False, "payback_kinds": parts[0]["payback_kinds"]}
