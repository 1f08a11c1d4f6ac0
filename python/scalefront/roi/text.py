"""The ROI comparison in words and in a terminal table (at most 100 columns): the verdict sentence, the per-GPU-count
table and the tornado of the headline GPU count. Formatting only; the numbers come from `scalefront.roi.compare`."""

from __future__ import annotations

import math
import textwrap

import polars as pl

from scalefront.fidelity.validation.fabric_error import INDISTINGUISHABLE_Z
from scalefront.inputs.scenario.build import MixPart
from scalefront.roi.result import RoiResult
from scalefront.units import SI_SCALES, scale_of

__all__ = ["WIDTH", "money", "months_text", "render", "speed_text", "tokens_text", "value_text", "verdict"]

#: The terminal output fits this many columns.
WIDTH = 100
#: Money in prose and tables: $1.23B, $1.2M, $350K (thousands only from $10K), with these decimals per scale.
_MONEY_SCALES = ((1e9, "B"), (1e6, "M"), (1e3, "K"))
_MONEY_DIGITS = {"B": 2, "M": 1, "K": 0}


def money(usd: float, signed: bool = False) -> str:
    """$1.2M, $350K, $4,200 (with a sign when `signed`)."""
    if usd is None or not math.isfinite(usd):
        return "n/a"
    sign = ("+" if usd >= 0 else "-") if signed else ("-" if usd < 0 else "")
    a = abs(usd)
    if a < 1e4:
        return f"{sign}${a:,.0f}"
    scaled, suffix = scale_of(a, _MONEY_SCALES)
    return f"{sign}${scaled:.{_MONEY_DIGITS[suffix]}f}{suffix}"


def months_text(months: float, kind: str) -> str:
    """A payback in the table: `14 mo`, `beyond life`, `dominant`, `trade-off`, `never`."""
    if kind == "months":
        return f"{math.ceil(months):,} mo"
    return kind


def value_text(value: float, unit: str) -> str:
    """An input's value as a buyer reads it."""
    if value is None or not math.isfinite(value):
        return "n/a"
    if unit == "usd":
        return money(value) if abs(value) >= 100 else f"${value:,.4g}"
    if unit == "log":
        return f"{math.exp(value) - 1:+.1%}"
    if unit == "us":
        return f"{value:.3g} us"
    if unit == "w":
        return f"{value:,.0f} W"
    return f"{value:.3g}"


def _premium(ratio: float) -> str:
    """A cost ratio as a premium: 1.12 -> +12%."""
    return "n/a" if not math.isfinite(ratio) else f"{ratio - 1:+.0%}"


def tokens_text(tokens: float) -> str:
    """2e12 -> 2T, 1.5e11 -> 150B."""
    scaled, suffix = scale_of(tokens, SI_SCALES[:3])
    return f"{scaled:.3g}{suffix}" if suffix else f"{tokens:,.0f}"


def _workload_text(mix: list[MixPart]) -> str:
    if len(mix) == 1:
        s = mix[0].scenario
        return f"this workload ({s.model_name}, {tokens_text(s.constants['tokens'])} tokens)"
    return "this mix (" + ", ".join(f"{p.name} {p.share:.0%}" for p in mix) + ")"


def _flips(tornado: pl.DataFrame, gpus: int, n: int = 2) -> list[str]:
    bars = tornado.filter((pl.col("gpus") == gpus) & pl.col("flip").is_not_null()).sort("rank").head(n)
    return [
        f"{r['input']} {'falls below' if r['flip_direction'] == 'below' else 'rises above'} "
        f"{value_text(r['flip'], r['unit'])}"
        for r in bars.iter_rows(named=True)
    ]


def modes_text(result: RoiResult) -> str:
    """The sentence that says what was compared: each side's fabric in its operating mode."""
    sides = []
    for label, summary in zip(result.fabric_labels, result.fabric_modes, strict=True):
        sides.append(f"{label}, {summary}" if summary else f"{label}, which has one operating mode")
    return f"Compared: {sides[0]}; against {sides[1]}."


def verdict(result: RoiResult) -> str:
    """The buyer's sentences for the headline GPU count: the modes compared first."""
    gpus, a = result.headline_gpus, result.fabric_a
    row = result.table.filter(pl.col("gpus") == gpus).row(0, named=True)
    name_a, name_b = result.fabric_labels
    workload = _workload_text(result.mix)
    extra = row["capex_a_usd"] - row["capex_b_usd"]
    kind, months = row["payback"], row["payback_months"]
    life = row["life_months"]
    if kind == "months":
        clause = f"pays back its {money(extra)} premium in {math.ceil(months)} months"
    elif kind == "beyond life":
        after = f"{math.ceil(months)} months" if math.isfinite(months) else "never at this speed"
        clause = f"does not pay back its {money(extra)} premium within the {life:.0f}-month life ({after})"
    elif kind == "never":
        clause = (
            f"costs {money(extra)} more upfront and its extra speed does not cover its extra running cost: it never "
            "pays back"
        )
    elif kind == "dominant":
        clause = f"costs {money(-extra)} less upfront and is no slower: it dominates"
    else:
        clause = f"costs {money(-extra)} less upfront but delivers less: a trade-off"
    p = row["p_payback_within_life"] if kind in ("months", "beyond life", "never") else row["p_a_cheaper"]
    chance = "probability" if kind in ("months", "beyond life", "never") else "P(cheaper per delivered token)"
    flips = _flips(result.tornado, gpus)
    flip_text = " or ".join(flips) if flips else "no single input flips it within its range"
    return (
        f"{modes_text(result)} For {workload} at {gpus:,} GPUs, {name_a} {clause} ({chance} {p:.0%}); it stays "
        f"worth it up to a premium of {_premium(row['break_even_premium'])} over {name_b} (P10-P90: "
        f"{_premium(row['break_even_premium_p10'])} to {_premium(row['break_even_premium_p90'])}), against an "
        f"actual premium of {_premium(row['premium'])}; P({a} cheaper per delivered token) = "
        f"{row['p_a_cheaper']:.0%}. The answer flips if {flip_text}.{speed_text(row, a, result.fabric_b)}"
    )


def speed_text(row: dict[str, float], name_a: str, name_b: str) -> str:
    """A row's speed difference with its 90% band from the collective model's error ("" when the comparison has
    no per-fabric error), and "indistinguishable within the model's error" when the band holds zero."""
    sd = row.get("speed_log_sd", 0.0)
    if not sd:
        return ""
    band = math.exp(INDISTINGUISHABLE_Z * sd) - 1
    diff = f"{name_a} runs {row['speed_ratio'] - 1:+.1%} vs {name_b} (+/- {band:.1%} model error)"
    if row["indistinguishable"]:
        return f" {diff}: indistinguishable within the model's error."
    return f" {diff}."


def _table(result: RoiResult) -> list[str]:
    t = result.table
    header = (
        f"{'GPUs':>7} {'topology A / B':<19} {'days A':>7} {'speed':>6} {'premium':>8} {'break-even (P10-P90)':>21} "
        f"{'P(A)':>5} {'NPV':>8} {'payback':>11}"
    )
    lines = [header, "-" * len(header)]
    for r in t.iter_rows(named=True):
        topo = r["topology_a"] if r["topology_a"] == r["topology_b"] else f"{r['topology_a']} / {r['topology_b']}"
        p10, p90 = _premium(r["break_even_premium_p10"]), _premium(r["break_even_premium_p90"])
        band = f"{_premium(r['break_even_premium'])} ({p10}..{p90})"
        lines.append(
            f"{r['gpus']:>7,} {topo[:19]:<19} {r['days_a']:>7.1f} {r['speed_ratio']:>6.3f} {_premium(r['premium']):>8} "
            f"{band:>21} {r['p_a_cheaper']:>5.0%} {money(r['npv_usd'], signed=True):>8} "
            f"{months_text(r['payback_months'], r['payback']):>11}"
        )
    return lines


def _tornado(result: RoiResult, rows: int = 10) -> list[str]:
    bars = result.tornado.filter(pl.col("gpus") == result.headline_gpus).sort("rank").head(rows)
    header = f"{'input':<40} {'low':>9} {'high':>9} {'NPV at low':>11} {'NPV at high':>11} {'flips at':>14}"
    lines = [header, "-" * len(header)]
    for r in bars.iter_rows(named=True):
        flip = (
            "-"
            if r["flip"] is None
            else f"{'<' if r['flip_direction'] == 'below' else '>'} {value_text(r['flip'], r['unit'])}"
        )
        lines.append(
            f"{r['input'][:40]:<40} {value_text(r['low'], r['unit']):>9} {value_text(r['high'], r['unit']):>9} "
            f"{money(r['savings_low_usd'], signed=True):>11} {money(r['savings_high_usd'], signed=True):>11} "
            f"{flip:>14}"
        )
    return lines


def render(result: RoiResult) -> str:
    """The terminal report: the verdict on top, the per-GPU-count table, the headline count's tornado."""
    a, b = result.fabric_a, result.fabric_b
    o = result.options
    valued = (
        "B's own cost per busy GPU-hour" if o.value_usd_per_gpu_hour is None else f"${o.value_usd_per_gpu_hour:g}/GPU-h"
    )
    lines = textwrap.wrap(verdict(result), WIDTH)
    lines += [
        "",
        *textwrap.wrap(
            f"{a} (A) vs {b} (B), scenario {result.scenario}; owned for {result.table['life_months'][0] / 12:g} "
            f"years (total cost of ownership); {result.table['samples'][0]:,} Monte Carlo samples"
            + (" (stopped early)" if result.mc_cancelled else ""),
            WIDTH,
        ),
        *textwrap.wrap(
            f"design: {'same topology for both' if o.design == 'same' else 'each fabric on its cheapest design'}; "
            f"premium: A's fabric cost over B's (network hardware, spares, installation, support, licences; "
            + ("catalog prices" if o.premium is None else f"set to {o.premium:g}x by --premium")
            + f"); NPV and payback value A's extra capacity at {valued}; model error: {result.model_error}.",
            WIDTH,
        ),
        "",
        *_table(result),
        "",
        *textwrap.wrap(
            f"What moves the verdict at {result.headline_gpus:,} GPUs (NPV of choosing {a}; each input alone over "
            "its range, the others typical):",
            WIDTH,
        ),
        *_tornado(result),
    ]
    return "\n".join(lines)
