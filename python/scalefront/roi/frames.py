"""The comparison's frames from the core's dicts, with no arithmetic beyond labelling: one row per GPU count (the
typical values and the Monte Carlo summary), the workloads of the mix, the tornado, the cost breakdown and the
samples."""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from scalefront.fidelity.validation.fabric_error import CollectiveErrors, speed_difference
from scalefront.inputs.scenario.build import MixPart
from scalefront.roi.result import UncertainInput

__all__ = ["frames"]

_TABLE_KEYS = (
    "speed_ratio",
    "capex_a_usd",
    "capex_b_usd",
    "opex_a_usd_per_year",
    "opex_b_usd_per_year",
    "tco_a_usd",
    "tco_b_usd",
    "fabric_a_usd",
    "fabric_b_usd",
    "premium",
    "break_even_premium",
    "savings_usd",
    "npv_usd",
    "value_usd_per_gpu_hour",
    "speed_value_usd",
    "payback",
    "payback_months",
    "life_months",
    "usd_per_useful_gpu_hour_a",
    "usd_per_useful_gpu_hour_b",
)


def frames(
    typical: dict[str, Any],
    mc: dict[str, Any],
    inputs: list[UncertainInput],
    mix: list[MixPart],
    a: str,
    b: str,
    errors: CollectiveErrors | None = None,
) -> dict[str, pl.DataFrame]:
    """The result's frames (table, workloads, tornado, samples, breakdown) from the core's typical-value comparison
    and Monte Carlo dicts; `errors`, the collective model's error per fabric, gives each row's speed uncertainty."""
    summaries = {c["gpus"]: c["summary"] for c in mc["counts"]}
    counts = typical["counts"]
    samples = [_samples(c, mc["payback_kinds"]) for c in mc["counts"]]
    return {
        "table": pl.DataFrame([_table_row(c, summaries[c["gpus"]], a, b, mix, errors) for c in counts]),
        "workloads": pl.DataFrame([row for c in counts for row in _workload_rows(c, mix)]),
        "tornado": pl.DataFrame(
            [row for c in counts for row in _tornado_rows(c, inputs)], schema_overrides={"flip": pl.Float64}
        ),
        "samples": pl.concat(samples) if samples else pl.DataFrame(),
        "breakdown": pl.DataFrame([row for c in counts for row in _breakdown_rows(c, a, b)]),
    }


def _table_row(
    c: dict[str, Any], s: dict[str, Any], a: str, b: str, mix: list[MixPart], errors: CollectiveErrors | None
) -> dict[str, Any]:
    """One GPU count: the typical-value comparison, the Monte Carlo summary `s` (P10/P50/P90 as columns), and the
    speed difference's uncertainty from the collective model's error (each side's exposed communication share,
    weighted by the mix)."""
    row: dict[str, Any] = {
        "gpus": c["gpus"],
        "fabric_a": a,
        "fabric_b": b,
        "topology_a": c["topology_a"],
        "topology_b": c["topology_b"],
        "days_a": c["a"]["days"][0],
        "days_b": c["b"]["days"][0],
        "network_capex_a_usd": c["a"]["network_capex_usd"],
        "network_capex_b_usd": c["b"]["network_capex_usd"],
        **{k: c[k] for k in _TABLE_KEYS},
        "usd_per_mtoken_a": c["usd_per_mtoken_a"][0],
        "usd_per_mtoken_b": c["usd_per_mtoken_b"][0],
        "samples": s["samples"],
        "p_a_cheaper": s["p_a_cheaper"],
        "p_payback_within_life": s["p_payback_within_life"],
        "speed_log_sd": 0.0,
        "indistinguishable": False,
    }
    if errors is not None:
        share_a, share_b = (sum(p.share * x for p, x in zip(mix, c[k]["comm_share"], strict=True)) for k in "ab")
        d = speed_difference(c["speed_ratio"], share_a, share_b, a, b, errors)
        row["speed_log_sd"], row["indistinguishable"] = d.log_sd, d.indistinguishable
    for key in ("break_even_premium", "savings_usd", "npv_usd", "payback_months", "speed_ratio"):
        for q, v in zip(("p10", "p50", "p90"), s[key], strict=True):
            row[f"{key}_{q}"] = v
    return row


def _workload_rows(c: dict[str, Any], mix: list[MixPart]) -> list[dict[str, Any]]:
    """One GPU count, each workload of the mix: share, days, tokens/s, cost per Mtoken, and renting instead."""
    return [
        {
            "gpus": c["gpus"],
            "workload": part.name,
            "share": part.share,
            "days_a": c["a"]["days"][w],
            "days_b": c["b"]["days"][w],
            "tokens_per_s_a": c["a"]["tokens_per_s"][w],
            "tokens_per_s_b": c["b"]["tokens_per_s"][w],
            "usd_per_mtoken_a": c["usd_per_mtoken_a"][w],
            "usd_per_mtoken_b": c["usd_per_mtoken_b"][w],
            # Renting the same GPUs instead, for comparison only (the verdict is in own mode).
            "rent_a_usd": c["a"]["rent_usd"][w],
            "rent_b_usd": c["b"]["rent_usd"][w],
        }
        for w, part in enumerate(mix)
    ]


def _tornado_rows(c: dict[str, Any], inputs: list[UncertainInput]) -> list[dict[str, Any]]:
    """One GPU count's tornado, widest first: each input at its ends (in display units) and its flip value."""
    rows = []
    for rank, bar in enumerate(c["tornado"]):
        i = inputs[bar["input"]]
        flip = bar["flip"]
        direction = "" if math.isnan(flip) else ("below" if flip < bar["typical"] else "above")
        rows.append(
            {
                "gpus": c["gpus"],
                "rank": rank + 1,
                "input": i.name,
                "unit": i.unit,
                "low": bar["low"] * i.display_scale,
                "typical": bar["typical"] * i.display_scale,
                "high": bar["high"] * i.display_scale,
                "savings_low_usd": bar["savings_low_usd"],
                "savings_high_usd": bar["savings_high_usd"],
                "break_even_low": bar["break_even_low"],
                "break_even_high": bar["break_even_high"],
                "flip": None if math.isnan(flip) else flip * i.display_scale,
                "flip_direction": direction,
            }
        )
    return rows


def _breakdown_rows(c: dict[str, Any], a: str, b: str) -> list[dict[str, Any]]:
    """One GPU count, each fabric: the present value of every cost component."""
    return [
        {"gpus": c["gpus"], "fabric": fabric, "component": component, "usd": usd}
        for side, fabric in (("a", a), ("b", b))
        for component, usd in c[side]["breakdown_usd"].items()
    ]


def _samples(c: dict[str, Any], kinds: list[str]) -> pl.DataFrame:
    """One GPU count's Monte Carlo outcomes, one row per sample."""
    o = c["outcomes"]
    n = len(o["premium"])
    return pl.DataFrame(
        {
            "gpus": pl.Series([c["gpus"]] * n, dtype=pl.Int64),
            "sample": pl.Series(range(n), dtype=pl.Int64),
            **{k: o[k] for k in ("premium", "break_even_premium", "savings_usd", "npv_usd", "speed_ratio")},
            "payback": pl.Series([kinds[i] for i in o["payback"]], dtype=pl.Utf8),
            "payback_months": o["payback_months"],
        }
    )
