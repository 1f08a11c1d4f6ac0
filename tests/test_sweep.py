"""Sweeps (scalefront.engine.sweep): frontiers against brute force, every row against evaluate(), counts, progress.

Brute force here is plain Python written from the documented semantics: a configuration is dominated when
another of its group is no worse on every objective and better on one (MFU maximised), and of configurations
equal on every objective only the first (in enumeration order) stays.
"""

from __future__ import annotations

import io
import math
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers.sweeps import (
    assert_rows_equal,
    brute_sweep,
    config_key,
    configurations,
    eval_row,
    load_doc,
    scenarios,
)
from scalefront import evaluate, schema
from scalefront.engine.progress import ProgressLine
from scalefront.engine.sweep import COLUMNS, Progress, best_per, label_rows, pareto, run_sweep
from scalefront.inputs.scenario import AXES, load_scenario
from scalefront.schema import INPUT_COLUMNS

# ---------------------------------------------------------------- brute force, independent of the package


def _maximised(objective: str) -> bool:
    return objective == "mfu"


def _keys(row: dict[str, Any], objectives: list[str]) -> tuple[float, ...]:
    """Objective values as quantities to minimise."""
    return tuple(-row[o] if _maximised(o) else row[o] for o in objectives)


def brute_pareto(rows: list[dict[str, Any]], group_by: list[str], objectives: list[str]) -> list[int]:
    """Indices of the non-dominated rows (O(n^2) per group), ordered by group, then objectives, then row."""
    keys = [_keys(r, objectives) for r in rows]
    groups: dict[tuple, list[int]] = {}
    for i, r in enumerate(rows):
        groups.setdefault(tuple(r[g] for g in group_by), []).append(i)
    keep = []
    for members in groups.values():
        for i in members:
            ka = keys[i]
            beaten = False
            for j in members:
                kb = keys[j]
                if j == i:
                    continue
                no_worse = all(x <= y for x, y in zip(kb, ka, strict=True))
                better = any(x < y for x, y in zip(kb, ka, strict=True))
                if (no_worse and better) or (kb == ka and j < i):
                    beaten = True
                    break
            if not beaten:
                keep.append(i)
    return sorted(keep, key=lambda i: (tuple(rows[i][g] for g in group_by), keys[i], i))


def brute_best(rows: list[dict[str, Any]], by: list[str], objective: str) -> list[int]:
    """Index of the best row per group (first on ties), groups in sorted order."""
    best: dict[tuple, int] = {}
    for i, r in enumerate(rows):
        g = tuple(r[c] for c in by)
        if g not in best or _keys(r, [objective]) < _keys(rows[best[g]], [objective]):
            best[g] = i
    return [best[g] for g in sorted(best)]


def assert_frontier_is_brute_force(scenario, result, feasible: list[dict[str, Any]]) -> None:
    """The sweep's frontier is brute force's over its feasible rows: the same configurations, in the same order,
    with the same values."""
    group_by, objectives = scenario.space["group_by"], scenario.space["objectives"]
    frontier = list(result.frontier().iter_rows(named=True))
    want = [feasible[i] for i in brute_pareto(feasible, group_by, objectives)]
    assert [config_key(r) for r in frontier] == [config_key(r) for r in want]
    for got, w in zip(frontier, want, strict=True):
        assert_rows_equal(got, w)


# ---------------------------------------------------------------- pareto() and best_per() on random frames

OBJ_POOL = ["time_to_train_days", "cost_to_train_usd", "mfu", "energy_mwh"]
# Few distinct values so that ties on one or every objective are common.
VALUES = st.sampled_from([0.25, 0.5, 1.0, 1.5, 2.0, 3.0])


@st.composite
def frames(draw) -> tuple[pl.DataFrame, list[dict[str, Any]]]:
    n = draw(st.integers(1, 30))
    rows = [
        {
            "id": i,
            "fabric": draw(st.sampled_from(["ib-ndr", "roce-400g", "eth-100g-tcp"])),
            "gpus": draw(st.sampled_from([512, 1024])),
            **{o: draw(VALUES) for o in OBJ_POOL},
        }
        for i in range(n)
    ]
    return pl.DataFrame(rows), rows


group_bys = st.sampled_from([["fabric"], ["gpus"], ["fabric", "gpus"], ["gpus", "fabric"]])


@given(frames(), group_bys, st.permutations(OBJ_POOL), st.sampled_from([2, 3]))
def test_pareto_equals_brute_force(data, group_by, objs, k):
    frame, rows = data
    objectives = list(objs[:k])
    got = pareto(frame, group_by, objectives)
    assert got.columns == frame.columns  # no helper column leaks, order kept
    assert got.schema == frame.schema
    assert got["id"].to_list() == brute_pareto(rows, group_by, objectives)


@given(frames(), group_bys, st.sampled_from(OBJ_POOL))
def test_best_per_equals_brute_force(data, by, objective):
    frame, rows = data
    got = best_per(frame, by, objective)
    assert got.columns == frame.columns
    assert got["id"].to_list() == brute_best(rows, by, objective)


def test_pareto_by_hand():
    # Group a: rows 0 (1 day, $3), 1 (2 days, $1), 2 (2 days, $2: beaten by 1), 3 (1 day, $3: a tie with 0,
    # which comes first). Group b: row 4 alone. MFU maximised: in group a on (days, mfu) row 1 (0.5) and row 0
    # (0.4) are both kept, row 3 ties with row 0.
    frame = pl.DataFrame(
        {
            "id": [0, 1, 2, 3, 4],
            "fabric": ["a", "a", "a", "a", "b"],
            "time_to_train_days": [1.0, 2.0, 2.0, 1.0, 9.0],
            "cost_to_train_usd": [3.0, 1.0, 2.0, 3.0, 9.0],
            "mfu": [0.4, 0.5, 0.3, 0.4, 0.1],
        }
    )
    assert pareto(frame, ["fabric"], ["time_to_train_days", "cost_to_train_usd"])["id"].to_list() == [0, 1, 4]
    assert pareto(frame, ["fabric"], ["time_to_train_days", "mfu"])["id"].to_list() == [0, 1, 4]
    assert pareto(frame, ["fabric"], ["time_to_train_days", "cost_to_train_usd", "mfu"])["id"].to_list() == [0, 1, 4]
    assert best_per(frame, ["fabric"], "mfu")["id"].to_list() == [1, 4]
    empty = frame.clear()
    assert pareto(empty, ["fabric"], ["time_to_train_days", "cost_to_train_usd"]).columns == frame.columns


@pytest.mark.parametrize("k", [2, 3])
def test_pareto_without_groups_is_one_global_frontier(k):
    # pareto() is public; group_by=[] should mean one frontier over the whole frame (rows 0 and 1 here).
    frame = pl.DataFrame(
        {
            "id": [0, 1, 2],
            "time_to_train_days": [1.0, 2.0, 3.0],
            "cost_to_train_usd": [2.0, 1.0, 3.0],
            "mfu": [0.5, 0.5, 0.1],
        }
    )
    objectives = ["time_to_train_days", "cost_to_train_usd", "mfu"][:k]
    assert pareto(frame, [], objectives)["id"].to_list() == [0, 1]


# ---------------------------------------------------------------- a small scenario against brute force

# A small space by hand: 2 GPU types x 2 GPU counts x 2 fabrics x 2 topologies x 2 precisions = 32 clusters;
# tp 1..8 x pp 1,2 (dp searched: 8 layouts per count, all dividing 64 and 128) x 2 micro-batches x 2 vpp
# x 2 recompute x 2 ZeRO x 2 overlap = 256 configurations per cluster: 8,192 in all. The A100 has no FP8 (a
# quarter of the space rejected as fp8_unsupported); vpp 2 without pp is rejected; 70B overflows 80 GB often.
SMALL = {
    "name": "small",
    "workload": {"model": "llama3-70b", "tokens": 1e11, "global_batch": 64, "precision": ["bf16", "fp8"]},
    "cluster": {
        "gpu": ["h100-sxm", "a100-80gb"],
        "gpus": [64, 128],
        "fabric": ["ib-ndr", "roce-400g"],
        "topology": ["rail-fat-tree", {"name": "fat-tree", "oversubscription": 2.0}],
    },
    "parallelism": {
        "tp": [1, 2, 4, 8],
        "pp": [1, 2],
        "cp": [1],
        "dp": "search",
        "ep": [1],
        "vpp": [1, 2],
        "micro_batch": [1, 2],
        "sequence_parallel": [True],
        "recompute": ["selective", "full"],
        "zero": [1, 3],
        "overlap": ["dp", "full"],
    },
    "economics": {"mode": "rent"},
    "objectives": {"minimize": ["time_to_train_days", "cost_to_train_usd"], "group_by": ["fabric"]},
}


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """(scenario, sweep result, brute-force feasible rows, brute-force rejections) of SMALL."""
    scenario = load_doc(tmp_path_factory.mktemp("small"), SMALL)
    streamed: list[pl.DataFrame] = []
    result = run_sweep(scenario, on_rows=streamed.append)
    feasible, rejected = brute_sweep(SMALL)
    return scenario, result, pl.concat(streamed) if streamed else None, feasible, rejected


def test_small_scenario_counts(small):
    scenario, result, _, feasible, rejected = small
    assert scenario.size() == 8192 == len(configurations(SMALL))
    assert result.evaluated == 8192 and not result.cancelled
    assert result.feasible == len(feasible) > 0
    assert result.feasible + sum(result.rejected.values()) == result.evaluated
    # fp8 on the A100: 2 counts x 2 fabrics x 2 topologies x 256 = 2,048 configurations.
    assert rejected["fp8_unsupported"] == 2048
    assert result.rejected == dict(rejected)


@pytest.mark.parametrize(
    "group_by, objectives",
    [
        (None, None),
        (["gpus"], ["mfu", "cost_to_train_usd"]),
        (["fabric", "gpu"], ["time_to_train_days", "cost_to_train_usd", "energy_mwh"]),
        (["topology", "precision"], ["usd_per_million_tokens", "network_capex_usd"]),
    ],
)
def test_small_scenario_frontier_equals_brute_force(small, tmp_path, group_by, objectives):
    scenario, result, _, feasible, _ = small
    if group_by or objectives:  # the engine keeps per-cell frontiers for these objectives: sweep again
        scenario = load_scenario(scenario.path, group_by=group_by, objectives=objectives)
        result = run_sweep(scenario)
    assert_frontier_is_brute_force(scenario, result, feasible)


def test_small_scenario_streamed_rows_are_every_feasible_configuration(small):
    _, result, streamed, feasible, _ = small
    assert streamed is not None and streamed.columns == COLUMNS
    assert streamed.height == result.feasible == len(feasible)
    assert not streamed.select(INPUT_COLUMNS).is_duplicated().any()
    by_key = {config_key(r): r for r in feasible}
    for row in streamed.iter_rows(named=True):
        assert_rows_equal(row, by_key[config_key(row)])


def test_small_scenario_best_per_fabric_and_size(small):
    _, result, _, feasible, _ = small
    got = result.best_per_fabric_and_size()
    want = [feasible[i] for i in brute_best(feasible, ["fabric", "gpus"], "time_to_train_days")]
    assert [config_key(r) for r in got.iter_rows(named=True)] == [config_key(r) for r in want]


def test_best_per_fabric_and_size_is_the_fastest_whatever_the_objective_order(small):
    # The docstring (and the report's heading) say "the fastest configuration": with network capex as the
    # first objective it must still be the fastest, not the one with the cheapest network.
    scenario, _, _, feasible, _ = small
    result = run_sweep(load_scenario(scenario.path, objectives=["network_capex_usd", "time_to_train_days"]))
    got = result.best_per_fabric_and_size()
    want = [feasible[i] for i in brute_best(feasible, ["fabric", "gpus"], "time_to_train_days")]
    assert got["time_to_train_days"].to_list() == [w["time_to_train_days"] for w in want]


# ---------------------------------------------------------------- random small scenarios


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(doc=scenarios())
def test_random_scenarios_equal_brute_force(tmp_path, doc):
    scenario = load_doc(tmp_path, doc)
    configs = configurations(doc)
    streamed: list[pl.DataFrame] = []
    result = run_sweep(scenario, on_rows=streamed.append)
    feasible, rejected = brute_sweep(doc)

    assert scenario.size() == result.evaluated == len(configs)
    assert result.feasible == len(feasible)
    assert result.feasible + sum(result.rejected.values()) == result.evaluated
    assert result.rejected == dict(rejected)

    rows = pl.concat(streamed) if streamed else pl.DataFrame()
    assert rows.height == len(feasible)
    # Every feasible configuration once, in enumeration order (whatever the threads did).
    in_order = sorted(feasible, key=lambda r: r["_enumeration"])
    assert [config_key(r) for r in rows.iter_rows(named=True)] == [config_key(r) for r in in_order]

    assert_frontier_is_brute_force(scenario, result, feasible)


# ---------------------------------------------------------------- the default scenario


@pytest.fixture(scope="module")
def default():
    scenario = load_scenario("ib-vs-roce")
    return scenario, run_sweep(scenario)


def test_default_scenario_counts(default):
    scenario, result = default
    # 6 GPU counts (512..16,384, powers of two) x (tp 1,2,4,8 x pp 1..16 x cp 1,2 = 40 layouts, every product
    # divides) x 3 fabrics x 2 topologies x vpp 4 x micro-batch 2 x recompute 3 x ZeRO 2 x overlap 2 = 138,240.
    assert scenario.size() == 6 * 40 * 3 * 2 * 4 * 2 * 3 * 2 * 2 == 138_240
    assert result.evaluated == 138_240 and not result.cancelled
    assert result.feasible + sum(result.rejected.values()) == result.evaluated
    assert 0 < result.feasible < result.evaluated
    assert all(v > 0 for v in result.rejected.values())  # zero counts are left out


def test_default_frontier_rows_equal_evaluate(default):
    _scenario, result = default
    frontier = result.frontier()
    assert frontier.height > 0 and frontier.columns == COLUMNS
    for row in frontier.iter_rows(named=True):
        # Every input column, as the row labels it, is an input of `evaluate`.
        kw = {name: row[name] for name in INPUT_COLUMNS}
        e = evaluate(**kw)
        assert e.feasible and row["feasible"]
        assert_rows_equal(row, eval_row(e, kw))


def test_default_frontier_is_non_dominated_per_fabric(default):
    _, result = default
    frontier = result.frontier()
    assert sorted(set(frontier["fabric"])) == ["eth-100g-tcp", "ib-ndr@default", "roce-400g@untuned"]
    rows = list(frontier.iter_rows(named=True))
    assert brute_pareto(rows, ["fabric"], result.objectives) == list(range(len(rows)))


def test_progress_reports_reach_the_total(default):
    scenario, _ = default
    seen: list[Progress] = []
    result = run_sweep(scenario, on_progress=seen.append, poll_s=0.01)
    assert seen and seen[-1].done == seen[-1].total == scenario.size() == result.evaluated
    assert seen[-1].feasible == result.feasible
    assert [p.done for p in seen] == sorted(p.done for p in seen)
    assert all(p.total == scenario.size() for p in seen)


def test_progress_keeps_coming_while_rows_stream(default):
    # run_sweep: "on_progress is called from this thread every poll_s" -- also while --all rows are being
    # written (the CLI's --time-limit and disk-space checks run in on_progress). Here each chunk takes the writer
    # a second of the injected clock, longer than a poll: while the engine still runs, a progress call must come
    # before the next chunk. On 2 threads the default scenario streams its 47,424 rows in windows of 341 tasks
    # (8,192 rows per thread / 48 schedule choices), a chunk per window with rows: more chunks than the
    # stream's buffer of 4, so the engine is still running (blocked) when the first ones are written.
    scenario, _ = default
    now = [0.0]
    events: list[str] = []

    def rows(frame: pl.DataFrame) -> None:
        events.append("rows")
        now[0] += 1.0

    run_sweep(scenario, on_rows=rows, on_progress=lambda p: events.append("progress"), threads=2, clock=lambda: now[0])
    assert events.count("rows") >= 6
    # The first two chunks are each followed by a progress call (the engine cannot have finished before the
    # sixth chunk was taken); polls in which no chunk came add progress calls, merged here.
    after = events[events.index("rows") :]
    merged = [e for i, e in enumerate(after) if i == 0 or not (e == "progress" == after[i - 1])]
    assert merged[:4] == ["rows", "progress", "rows", "progress"], events


def test_label_rows_of_nothing_has_the_schema(default):
    scenario, _ = default
    dtypes = {"float": np.float64, "count": np.int64, "flag": np.bool_}
    cols = {k: np.array([], dtype=np.uint32) for k in AXES}
    cols.update({m.name: np.array([], dtype=dtypes[m.kind]) for m in schema.METRICS})
    frame = label_rows(cols, scenario)
    assert frame.columns == COLUMNS and frame.height == 0
    assert frame.schema == default[1].kept.schema  # the same types as a sweep's non-empty result


# ---------------------------------------------------------------- progress display


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_line_on_a_terminal():
    stream = _Tty()
    # An injected clock: the updates come at 10.0, 10.5 and 10.6 s, so the second is within the 1 s interval.
    line = ProgressLine("sweep", stream=stream, interval_s=1.0, clock=iter([10.0, 10.5, 10.6]).__next__)
    # 500,000 of 2,000,000 in 2 s: 250,000/s, 1,500,000 left -> ETA 6 s; 25%.
    line(Progress(done=500_000, total=2_000_000, feasible=1234, elapsed_s=2.0))
    first = stream.getvalue()
    assert first.startswith("\r") and "\n" not in first
    assert "500,000 / 2,000,000 configurations (25%)" in first
    assert "250.0k/s" in first and "ETA 6s" in first and "feasible 1,234" in first
    # Within the interval nothing is redrawn ...
    line(Progress(done=600_000, total=2_000_000, feasible=1300, elapsed_s=2.1))
    assert stream.getvalue() == first
    # ... except the last update: 2,000,000 in 1 s = 2.0M/s, done; padded to cover the longer previous line.
    line(Progress(done=2_000_000, total=2_000_000, feasible=5, elapsed_s=1.0))
    last = stream.getvalue()[len(first) :]
    assert last.startswith("\r")
    assert "2,000,000 / 2,000,000 configurations (100%)" in last and "2.0M/s" in last and "done" in last
    assert "ETA" not in last
    assert len(last) >= len(first)
    line.close()
    assert stream.getvalue().endswith("\n") and stream.getvalue().count("\n") == 1


def test_progress_line_is_silent_when_not_a_terminal():
    stream = io.StringIO()
    line = ProgressLine("sweep", stream=stream)
    line(Progress(done=1, total=2, feasible=1, elapsed_s=1.0))
    line(Progress(done=2, total=2, feasible=1, elapsed_s=2.0))
    line.close()
    assert stream.getvalue() == ""


def test_progress_rate_and_eta():
    p = Progress(done=300, total=1200, feasible=10, elapsed_s=1.5)  # 200/s, 900 left: 4.5 s
    assert p.rate == 200.0 and p.eta_s == 4.5
    assert Progress(done=0, total=10, feasible=0, elapsed_s=0.0).eta_s is None
    assert math.isclose(Progress(done=10, total=10, feasible=0, elapsed_s=2.0).eta_s, 0.0)


def test_live_rejection_counts_end_equal_to_the_result(default):
    # The handle's per-reason counters (shown live by the UI) add up to the sweep's final counts.
    scenario, _ = default
    seen: list[Progress] = []
    result = run_sweep(scenario, on_progress=seen.append)
    assert seen and seen[-1].rejected == result.rejected
    assert sum(seen[-1].rejected.values()) + result.feasible == result.evaluated


def test_a_paused_sweep_waits_for_resume(default):
    # Gated on events: the sweep is paused before it starts; once a worker is held nothing has been evaluated;
    # after resume it completes with the same result as an unpaused run.
    import threading

    from scalefront import _core

    scenario, expected = default
    handle = _core.SweepHandle()
    handle.pause()
    box = {}
    worker = threading.Thread(target=lambda: box.setdefault("r", run_sweep(scenario, handle=handle)))
    worker.start()
    while handle.held() == 0:
        worker.join(0.01)
    assert handle.done() == 0 and handle.paused()
    handle.resume()
    worker.join()
    assert box["r"].kept.equals(expected.kept)
