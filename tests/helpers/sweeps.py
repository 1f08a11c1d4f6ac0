"""A reference sweep in plain Python, independent of the package: every configuration of a scenario dict in the
engine's order, each evaluated with `scalefront.evaluate`; and random small scenario dicts (hypothesis) to compare
the engine with it. Used by test_sweep.py and test_shards.py."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from helpers.toml_text import scenario_text
from scalefront import ConfigurationError, evaluate
from scalefront.engine.sweep import COLUMNS
from scalefront.inputs.scenario import AXES, OBJECTIVES, Scenario, load_scenario
from scalefront.schema import INPUT_COLUMNS


def _divisors(n: int, most: int) -> list[int]:
    return [d for d in range(1, min(n, most) + 1) if n % d == 0]


def _degrees(axis: Any, n: int) -> list[int]:
    """README: a list, "search" (every divisor of n) or { search = true, max = N }."""
    if axis == "search":
        return _divisors(n, n)
    if isinstance(axis, dict):
        return _divisors(n, axis["max"])
    return list(axis)


def layouts(par: dict[str, Any], n: int) -> list[tuple[int, int, int, int, int]]:
    """(tp, pp, dp, cp, ep) of a scenario for n GPUs. dp "search" is n / (tp pp cp); when that is not whole,
    the combination is no configuration of the space, whether tp, pp, cp are searched or listed
    (rust/core/src/sweep/, `factorizations`). A listed dp keeps every combination (mismatches are rejected)."""
    out = []
    for tp, pp, cp in itertools.product(_degrees(par["tp"], n), _degrees(par["pp"], n), _degrees(par["cp"], n)):
        if par["dp"] == "search":
            if n % (tp * pp * cp):
                continue
            dps = [n // (tp * pp * cp)]
        else:
            dps = list(par["dp"])
        for dp in dps:
            eps = _degrees(par["ep"], dp * cp)  # ep: divisors of dp x cp when searched
            out += [(tp, pp, dp, cp, ep) for ep in eps]
    return out


def configurations(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Every configuration of a scenario dict, in the engine's order (its tie-break): cluster axes by list
    position, degrees by value, the other parallel axes by list position."""
    wl, cl, par = doc["workload"], doc["cluster"], doc["parallelism"]
    prices_doc = doc.get("economics", {}).get("prices", {})
    out = []
    for gi, gpu in enumerate(cl["gpu"]):
        for ci, n in enumerate(cl["gpus"]):
            for fi, fabric in enumerate(cl["fabric"]):
                for ti, topo in enumerate(cl["topology"]):
                    for pi, precision in enumerate(wl["precision"]):
                        for li, (tp, pp, dp, cp, ep) in enumerate(layouts(par, n)):
                            for rest in itertools.product(
                                *(
                                    enumerate(par[a])
                                    for a in ("vpp", "micro_batch", "sequence_parallel", "recompute", "zero", "overlap")
                                )
                            ):
                                (vi, vpp), (mi, mb), (si, sp), (ri, rc), (zi, zero), (oi, ov) = rest
                                prices = {k: float(v) for k, v in prices_doc.items() if not isinstance(v, dict)}
                                for entry in (gpu, fabric):
                                    prices.update({k: float(v) for k, v in prices_doc.get(entry, {}).items()})
                                out.append(
                                    dict(
                                        order=(gi, ci, fi, ti, pi, tp, pp, dp, cp, ep, vi, mi, si, ri, zi, oi),
                                        # The order --all streams rows in: cells, then layouts as listed,
                                        # micro-batch, sequence parallelism, then the schedule axes.
                                        enumeration=(gi, ci, fi, ti, pi, li, mi, si, vi, ri, zi, oi),
                                        kw=dict(
                                            model=wl["model"],
                                            gpu=gpu,
                                            gpus=n,
                                            fabric=fabric,
                                            topology=topo if isinstance(topo, str) else topo["name"],
                                            oversubscription=None
                                            if isinstance(topo, str)
                                            else topo["oversubscription"],
                                            precision=precision,
                                            tp=tp,
                                            pp=pp,
                                            dp=dp,
                                            cp=cp,
                                            ep=ep,
                                            vpp=vpp,
                                            micro_batch=mb,
                                            sequence_parallel=sp,
                                            recompute=rc,
                                            zero=zero,
                                            overlap=ov,
                                            global_batch=wl["global_batch"],
                                            tokens=wl["tokens"],
                                            seq_len=wl.get("seq_len"),
                                            cost_mode=doc.get("economics", {}).get("mode", "rent"),
                                            prices=prices or None,
                                        ),
                                    )
                                )
    out.sort(key=lambda c: c["order"])
    return out


# Row columns of an Evaluation: frame column -> value on the Evaluation.
def eval_row(e, kw: dict[str, Any]) -> dict[str, Any]:
    row = {
        "model": e.model,
        "gpu": e.gpu,
        "gpus": e.gpus,
        "scale_up": e.scale_up,
        "fabric": e.fabric,
        "topology": e.topology,
        "oversubscription": e.oversubscription,
        "tp": e.tp,
        "pp": e.pp,
        "dp": e.dp,
        "cp": e.cp,
        "ep": e.ep,
        "vpp": e.vpp,
        "micro_batch": e.micro_batch,
        "global_batch": e.global_batch,
        "seq_len": e.seq_len,
        "recompute": e.recompute,
        "zero": e.zero,
        "sequence_parallel": e.sequence_parallel,
        "overlap": str(kw["overlap"]),
        "precision": e.precision,
        "tokens": e.tokens,
        "cost_mode": e.cost_mode,
        "feasible": e.feasible,
        "memory_margin_gb": e.memory.memory_margin_bytes / 1e9,
        "usd_per_million_tokens": e.cost_to_train_usd / (e.tokens / 1e6),
        **{k: getattr(e.breakdown, k) for k in vars(e.breakdown)},
        **{k.removesuffix("_comm_s") + "_comm_hidden_s": v for k, v in vars(e.hidden).items()},
    }
    for c in COLUMNS:
        if c not in row:
            row[c] = getattr(e, c)
    return row


def assert_rows_equal(got: dict[str, Any], want: dict[str, Any]) -> None:
    """Equal column by column, floats exactly: the sweep runs the same staged code as evaluate()."""
    assert list(got) == COLUMNS
    for c in COLUMNS:
        g, w = got[c], want[c]
        assert g == w and type(g) is type(w), (c, g, w)


def config_key(row: dict[str, Any]) -> tuple:
    return tuple(row[c] for c in INPUT_COLUMNS)


def brute_sweep(doc: dict[str, Any]) -> tuple[list[dict[str, Any]], Counter]:
    """Feasible rows (in the engine's tie-break order) and rejection counts, from evaluate() on every
    configuration. Each row also carries its `_enumeration` key (see `configurations`)."""
    feasible, rejected = [], Counter()
    for c in configurations(doc):
        try:
            e = evaluate(**c["kw"])
        except ConfigurationError as err:
            rejected[err.args[1]] += 1  # (message, category, field)
            continue
        if e.feasible:
            feasible.append({**eval_row(e, c["kw"]), "_enumeration": c["enumeration"]})
        else:
            rejected["out_of_memory"] += 1
    return feasible, rejected


def load_doc(directory: Path, doc: dict[str, Any], name: str = "s.toml") -> Scenario:
    """The scenario dict `doc`, written to `directory/name` and loaded."""
    path = directory / name
    path.write_text(scenario_text(doc), encoding="utf-8")
    return load_scenario(path)


@st.composite
def scenarios(draw) -> dict[str, Any]:
    def some(options, most=2):
        return draw(st.lists(st.sampled_from(options), min_size=1, max_size=most, unique_by=str))

    model = draw(st.sampled_from(["llama3-8b", "llama3-8b", "llama3-70b", "mixtral-8x7b"]))
    moe = model == "mixtral-8x7b"
    gpus = some(["h100-sxm", "h200", "a100-80gb", "mi300x", "gb200"])
    fabrics = some(["ib-ndr", "roce-400g", "eth-100g-tcp", "efa"])
    doc = {
        "name": "random",
        "workload": {
            "model": model,
            "tokens": 1e10,
            "global_batch": draw(st.sampled_from([16, 32, 64])),
            "precision": some(["bf16", "fp8"]),
        },
        "cluster": {
            "gpu": gpus,
            "gpus": sorted(some([8, 16, 24, 32, 64, 128])),
            "fabric": fabrics,
            "topology": some(
                [
                    "rail-fat-tree",
                    {"name": "fat-tree", "oversubscription": 2.0},
                    "dragonfly",
                    "torus-3d",
                    {"name": "fat-tree", "oversubscription": 1.5},
                ]
            ),
        },
        "parallelism": {
            **draw(
                st.sampled_from(
                    [  # all three searched, or all three listed (see layouts())
                        {"tp": "search", "pp": {"search": True, "max": 4}, "cp": {"search": True, "max": 2}},
                        {"tp": {"search": True, "max": 4}, "pp": {"search": True, "max": 2}, "cp": "search"},
                        {"tp": {"search": True, "max": 8}, "pp": "search", "cp": {"search": True, "max": 1}},
                        {"tp": [1, 2], "pp": [1], "cp": [1]},
                        {"tp": [2, 8], "pp": [1, 2], "cp": [1, 2]},
                        {"tp": [1, 3], "pp": [1, 4], "cp": [1]},
                    ]
                )
            ),
            "dp": draw(st.sampled_from(["search"] * 5 + [[1, 2]])),
            "ep": draw(st.sampled_from([[1], [1, 2], {"search": True, "max": 8}] if moe else [[1]])),
            "vpp": sorted(some([1, 2])),
            "micro_batch": sorted(some([1, 2])),
            "sequence_parallel": some([True, False]),
            "recompute": some(["none", "selective", "full"]),
            "zero": some([0, 1, 2, 3]),
            "overlap": some(["none", "dp", "full", 0.5, "dp=0.5,tp=0.25"]),
        },
        "economics": {"mode": draw(st.sampled_from(["rent", "own"]))},
        "objectives": {
            "minimize": list(draw(st.permutations(list(OBJECTIVES))))[: draw(st.sampled_from([2, 3]))],
            "group_by": some(list(AXES)),
        },
    }
    seq_len = draw(st.sampled_from([None, 2048, 4096]))
    if seq_len:
        doc["workload"]["seq_len"] = seq_len
    prices = draw(
        st.sampled_from(
            [
                {},
                {"rent_usd_per_gpu_hour": 1.5},
                {gpus[0]: {"server_usd": 123456.0}},
                {"usd_per_kwh": 0.2, fabrics[0]: {"switch_usd": 1000.0}},
            ]
        )
    )
    if prices:
        doc["economics"]["prices"] = prices
    # Keep the space small: drop values (from the longest lists) until at most 400 configurations.
    trimmable = (
        [(doc["cluster"], k) for k in ("gpu", "gpus", "fabric", "topology")]
        + [(doc["workload"], "precision")]
        + [(doc["parallelism"], k) for k in ("vpp", "micro_batch", "sequence_parallel", "recompute", "zero", "overlap")]
    )
    while len(configurations(doc)) > 400:
        table, key = max(trimmable, key=lambda tk: len(tk[0][tk[1]]))
        if len(table[key]) == 1:
            break
        table[key] = table[key][:-1]
    return doc
