"""The comparison's frames from the core's dicts, with no arithmetic beyond labelling and sums: one row per (GPU
count, design B) (the typical values, the Monte Carlo summary and the quote statuses' coverage), the workloads of
the mix, the tornado, the premium's yearly cash flows, the cost breakdown and the samples."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from scalefront.fidelity.validation.fabric_error import CollectiveErrors, speed_difference
from scalefront.inputs.catalog.loader import Catalog
from scalefront.inputs.catalog.prices import QUOTE_STATUSES
from scalefront.inputs.scenario.build import MixPart
from scalefront.roi.result import UncertainInput

__all__ = ["QUOTABLE_FABRIC_LINES", "coverage", "frames"]

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
    "extra_capex_usd",
    "extra_tco_usd",
    "extra_opex_usd_per_year",
    "extra_capacity_usd_per_year",
    "extra_residual_usd",
    "delay_usd",
    "irr",
    "value_usd_per_gpu_hour",
    "speed_value_usd",
    "payback",
    "payback_months",
    "life_months",
    "usd_per_useful_gpu_hour_a",
    "usd_per_useful_gpu_hour_b",
)

#: Monte Carlo summaries with a P10, P50 and P90, as columns `<key>_p10`, ...
_DECILES = (
    "break_even_premium",
    "savings_usd",
    "npv_usd",
    "npv_no_error_usd",
    "extra_capex_usd",
    "extra_tco_usd",
    "extra_tco_share",
    "payback_months",
    "speed_ratio",
    "irr",
)

#: The tornado frame's columns (also when no tornado was computed).
TORNADO_SCHEMA = {
    "gpus": pl.Int64,
    "fabric_b": pl.Utf8,
    "rank": pl.Int64,
    "input": pl.Utf8,
    "label": pl.Utf8,
    "unit": pl.Utf8,
    "section": pl.Utf8,
    "field": pl.Utf8,
    "fabrics": pl.Utf8,
    "integer": pl.Boolean,
    "low": pl.Float64,
    "typical": pl.Float64,
    "high": pl.Float64,
    "npv_low_usd": pl.Float64,
    "npv_high_usd": pl.Float64,
    "break_even_low": pl.Float64,
    "break_even_high": pl.Float64,
    "flip": pl.Float64,
    "flip_direction": pl.Utf8,
    "linear_flip": pl.Float64,
}

#: The quotable lines a quote status covers (the fabric's; the servers are the same for every design).
QUOTABLE_FABRIC_LINES = (
    "nic_usd",
    "switch_usd",
    "nic_optic_usd",
    "switch_optic_usd",
    "dac_usd",
    "fibre_usd",
    "support_fraction_per_year",
    "nos_usd_per_switch_year",
    "fabric_manager_usd_per_endpoint_year",
)


def frames(
    typical: dict[str, Any],
    mc: dict[str, Any],
    inputs: list[UncertainInput],
    mix: list[MixPart],
    a: str,
    bs: Sequence[str],
    catalog: Catalog,
    errors: CollectiveErrors | None = None,
) -> dict[str, pl.DataFrame]:
    """The result's frames (table, workloads, tornado, cash flows, samples, breakdown) from the core's
    typical-value comparison and Monte Carlo dicts; `errors`, the collective model's error per fabric, gives each
    row's speed uncertainty."""
    summaries = {(c["gpus"], c["side_b"]): c["summary"] for c in mc["counts"]}
    counts = typical["counts"]
    b_of = {k + 1: b for k, b in enumerate(bs)}
    samples = [_samples(c, b_of[c["side_b"]], mc["payback_kinds"]) for c in mc["counts"]]
    table = [
        {
            **_table_row(c, summaries[(c["gpus"], c["side_b"])], a, b_of[c["side_b"]], mix, errors),
            **coverage(c, a, b_of[c["side_b"]], catalog),
        }
        for c in counts
    ]
    return {
        "table": pl.DataFrame(table),
        "workloads": pl.DataFrame([row for c in counts for row in _workload_rows(c, mix, b_of[c["side_b"]])]),
        "tornado": pl.DataFrame(
            [row for c in counts for row in _tornado_rows(c, inputs, b_of[c["side_b"]])], schema=TORNADO_SCHEMA
        ),
        "cash_flows": pl.DataFrame(
            [{"gpus": c["gpus"], "fabric_b": b_of[c["side_b"]], **year} for c in counts for year in c["cash_flows"]]
        ),
        "samples": pl.concat(samples) if samples else pl.DataFrame(),
        "breakdown": pl.DataFrame([row for c in counts for row in _breakdown_rows(c, a, b_of[c["side_b"]])]),
    }


def _table_row(
    c: dict[str, Any], s: dict[str, Any], a: str, b: str, mix: list[MixPart], errors: CollectiveErrors | None
) -> dict[str, Any]:
    """One (GPU count, B): the typical-value comparison, the Monte Carlo summary `s` (P10/P50/P90 as columns), and
    the speed difference's uncertainty from the collective model's error (each side's exposed communication share,
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
        "p_npv_positive": s["p_npv_positive"],
        "p_npv_positive_no_error": s["p_npv_positive_no_error"],
        "p_payback_within_life": s["p_payback_within_life"],
        "speed_log_sd": 0.0,
        "indistinguishable": False,
    }
    if errors is not None:
        share_a, share_b = (sum(p.share * x for p, x in zip(mix, c[k]["comm_share"], strict=True)) for k in "ab")
        d = speed_difference(c["speed_ratio"], share_a, share_b, a, b, errors)
        row["speed_log_sd"], row["indistinguishable"] = d.log_sd, d.indistinguishable
    for key in _DECILES:
        for q, v in zip(("p10", "p50", "p90"), s[key], strict=True):
            row[f"{key}_{q}"] = v
    return row


def coverage(c: dict[str, Any], a: str, b: str, catalog: Catalog) -> dict[str, float]:
    """The share of both fabrics' quotable lines (hardware, support, licences: `lines_usd`) whose price is
    quoted, a list price, or an estimate, weighted by the dollars each line amounts to."""
    totals = dict.fromkeys(QUOTE_STATUSES, 0.0)
    for side, fabric in (("a", a), ("b", b)):
        price = catalog.fabric_price(fabric)
        for line, usd in c[side]["lines_usd"].items():
            if line in QUOTABLE_FABRIC_LINES and usd > 0:
                totals[price.status_of(line)] += usd
    whole = sum(totals.values()) or 1.0
    return {f"{status}_share": totals[status] / whole for status in QUOTE_STATUSES}


def _workload_rows(c: dict[str, Any], mix: list[MixPart], b: str) -> list[dict[str, Any]]:
    """One (GPU count, B), each workload of the mix: share, days, tokens/s, cost per Mtoken, and renting instead."""
    return [
        {
            "gpus": c["gpus"],
            "fabric_b": b,
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


def _tornado_rows(c: dict[str, Any], inputs: list[UncertainInput], b: str) -> list[dict[str, Any]]:
    """One (GPU count, B)'s tornado on the NPV, widest first: each input at its ends (in display units), its
    flip value, and what it is (for wording)."""
    rows = []
    for rank, bar in enumerate(c["tornado"]):
        i = inputs[bar["input"]]
        flip, linear = bar["flip"], bar["linear_flip"]
        direction = "" if math.isnan(flip) else ("below" if flip < bar["typical"] else "above")
        rows.append(
            {
                "gpus": c["gpus"],
                "fabric_b": b,
                "rank": rank + 1,
                "input": i.name,
                "label": i.label or i.name,
                "unit": i.unit,
                "section": i.section,
                "field": i.field,
                "fabrics": ",".join(i.fabrics),
                "integer": i.integer,
                "low": bar["low"] * i.display_scale,
                "typical": bar["typical"] * i.display_scale,
                "high": bar["high"] * i.display_scale,
                "npv_low_usd": bar["npv_low_usd"],
                "npv_high_usd": bar["npv_high_usd"],
                "break_even_low": bar["break_even_low"],
                "break_even_high": bar["break_even_high"],
                "flip": None if math.isnan(flip) else flip * i.display_scale,
                "flip_direction": direction,
                "linear_flip": None if not math.isfinite(linear) else linear * i.display_scale,
            }
        )
    return rows


def _breakdown_rows(c: dict[str, Any], a: str, b: str) -> list[dict[str, Any]]:
    """One (GPU count, B), each fabric: the present value of every cost component."""
    return [
        {"gpus": c["gpus"], "fabric_b": b, "fabric": fabric, "component": component, "usd": usd}
        for side, fabric in (("a", a), ("b", b))
        for component, usd in c[side]["breakdown_usd"].items()
    ]


def _samples(c: dict[str, Any], b: str, kinds: list[str]) -> pl.DataFrame:
    """One (GPU count, B)'s Monte Carlo outcomes, one row per sample."""
    o = c["outcomes"]
    n = len(o["premium"])
    keys = ("premium", "break_even_premium", "savings_usd", "npv_usd", "npv_no_error_usd", "extra_capex_usd")
    return pl.DataFrame(
        {
            "gpus": pl.Series([c["gpus"]], dtype=pl.Int64).new_from_index(0, n),
            "fabric_b": pl.Series([b], dtype=pl.Utf8).new_from_index(0, n),
            "sample": pl.Series(np.arange(n, dtype=np.int64)),
            **{k: o[k] for k in keys},
            "speed_ratio": o["speed_ratio"],
            "payback": pl.Series(kinds, dtype=pl.Utf8).gather(o["payback"]),
            "payback_months": o["payback_months"],
            "irr": o["irr"],
        }
    )
