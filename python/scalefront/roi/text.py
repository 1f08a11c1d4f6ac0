"""The ROI comparison in words and in a terminal table (at most 100 columns): the verdict per design B at the
headline GPU count ("At 16,384 GPUs, against Ethernet (roce-400g): Ethernet; InfiniBand costs $55.0M more over the
5-year life (5.5% of the total cost of ownership), runs at the same speed within the model's error, and pays back
in under 1% of the scenarios"), what would change it, what the probability describes, the matrix of designs and GPU
counts, and the tornado of the headline pair. Formatting only: every number comes from `scalefront.roi.compare`;
the central figures are the Monte Carlo's medians (P50)."""

from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass
from typing import Any

import polars as pl

from scalefront.fidelity.validation.fabric_error import INDISTINGUISHABLE_Z
from scalefront.inputs.scenario.build import MixPart
from scalefront.roi.lifecycle_text import split_lines, split_sentence
from scalefront.roi.result import RoiResult
from scalefront.roi.words import (
    chance,
    condition,
    family,
    median_payback_text,
    money,
    months_text,
    past,
    share_text,
    tokens_text,
    value_text,
)

__all__ = [
    "WIDTH",
    "Call",
    "call_of",
    "changes",
    "modes_text",
    "money",
    "months_text",
    "population",
    "render",
    "tokens_text",
    "typical_agrees",
    "value_text",
    "verdict",
    "what_changes",
]

#: The terminal output fits this many columns.
WIDTH = 100
#: A probability at or beyond these calls the verdict for A (or, at 1 - it, for B); between the inner pair it is a
#: coin flip; else it leans.
DECIDED, COIN_FLIP = 0.75, 0.60


@dataclass(frozen=True)
class Call:
    """The verdict on A against one design B at one GPU count, from the comparison's row (P50s as the central
    estimate)."""

    gpus: int
    fabric_b: str
    #: "A", "B", "coin flip", "leans A" or "leans B".
    kind: str
    p: float
    p_no_error: float
    row: dict[str, Any]


def call_of(result: RoiResult, gpus: int, b: str) -> Call:
    row = result.table.filter((pl.col("gpus") == gpus) & (pl.col("fabric_b") == b)).row(0, named=True)
    p = float(row["p_npv_positive"])
    if p >= DECIDED:
        kind = "A"
    elif p <= 1 - DECIDED:
        kind = "B"
    elif 1 - COIN_FLIP <= p <= COIN_FLIP:
        kind = "coin flip"
    else:
        kind = "leans A" if p > 0.5 else "leans B"
    return Call(gpus, b, kind, p, float(row["p_npv_positive_no_error"]), row)


def _winner(result: RoiResult, call: Call) -> str:
    a, b = family(result.fabric_a, result.families), family(call.fabric_b, result.families)
    if b == a:
        a, b = result.fabric_a, call.fabric_b
    return {"A": a, "B": b, "coin flip": "a coin flip", "leans A": f"leans {a}", "leans B": f"leans {b}"}[call.kind]


def _speed(row: dict[str, Any]) -> str:
    """A's speed against B's (P50): the same within the model's error when the difference lies inside the
    collective model's 90% band (issue 19's per-fabric error, `speed_log_sd`) or the Monte Carlo's P10-P90 is
    within half a percent of 1; else faster or slower, with the P10-P90 when it straddles 1."""
    lo, mid, hi = row["speed_ratio_p10"], row["speed_ratio_p50"], row["speed_ratio_p90"]
    sd = row.get("speed_log_sd") or 0.0
    if (sd and abs(math.log(mid)) <= INDISTINGUISHABLE_Z * sd) or (lo >= 0.995 and hi <= 1.005):
        return "runs at the same speed within the model's error"
    how = f"runs {abs(mid - 1):.1%} {'faster' if mid > 1 else 'slower'}"
    return f"{how} (P10-P90: {lo - 1:+.1%} to {hi - 1:+.1%})" if lo <= 1.0 <= hi else how


def _cost(result: RoiResult, row: dict[str, Any]) -> str:
    """A's extra TCO (P50) in dollars and as a share of B's, and the fabric premium a quote set (`--premium`)."""
    extra, share = row["extra_tco_usd_p50"], row["extra_tco_share_p50"]
    years = row["life_months"] / 12
    more = "more" if extra >= 0 else "less"
    premium = result.options.premium
    quoted = f" at an actual premium of {premium - 1:+.0%} on its fabric" if premium is not None else ""
    return (
        f"costs {money(abs(extra))} {more} over the {years:g}-year life ({share_text(abs(share))} of the total cost "
        f"of ownership){quoted}"
    )


def call_text(result: RoiResult, call: Call, full: bool = True) -> str:
    """One design's verdict: the winner, then (in full) A's extra cost, its speed and how often it pays back."""
    label = result.labels.get(call.fabric_b, call.fabric_b)
    if not full:
        fam = family(result.fabric_a, result.families)
        return f"against {label}: {_winner(result, call)} ({fam} pays back in {chance(call.p)} of the scenarios)"
    row = call.row
    pays = "pays back" if row["extra_capex_usd_p50"] > 0 else "comes out ahead"
    return (
        f"against {label}: {_winner(result, call)}; {family(result.fabric_a, result.families)} {_cost(result, row)}, "
        f"{_speed(row)}, "
        f"and {pays} in {chance(call.p)} of the scenarios ({chance(call.p_no_error)} without the model's own error)"
    )


#: Price lines a buyer quotes first: the decisive switch lines, then the rest by swing.
_FIRST = ("switch_usd",)


def changes(result: RoiResult, gpus: int, b: str, most: int = 3) -> list[str]:
    """What would change the verdict on `b` at `gpus`, in operational terms: the quotes at which it flips (exact:
    the NPV is linear in a price; the switch lines first, within a tenth to ten times their typical price: a quote
    beyond that is no quote a buyer will see), then the other inputs that flip it within their range, widest swing
    first."""
    bars = result.tornado.filter((pl.col("gpus") == gpus) & (pl.col("fabric_b") == b)).sort("rank")
    rows = list(bars.iter_rows(named=True))
    priced = [
        x
        for x in rows
        if x["unit"] == "usd" and x["section"] in ("network", "gpu") and x["linear_flip"] is not None
        if x["typical"] / 10 <= x["linear_flip"] <= 10 * x["typical"]
    ]
    priced.sort(key=lambda x: (x["field"] not in _FIRST, x["rank"]))
    out = [condition(x, result.families, x["linear_flip"]) for x in priced[:2]]
    for x in rows:
        if len(out) >= most:
            break
        if x["flip"] is not None and not (x["unit"] == "usd" and x["section"] in ("network", "gpu")):
            out.append(condition(x, result.families))
    return out


def population(result: RoiResult) -> str:
    """The one sentence saying what the probabilities describe."""
    n = int(result.table["samples"][0])
    return (
        f"Each probability is the share of {n:,} scenarios, each drawing every price (correlated groups as stated), "
        "every fabric figure, the job's placement, the framework's overlap interference and the model's own error "
        "from its range: it says how sure the answer is given what is "
        "uncertain in the inputs and the model, not how often a buyer would see either outcome."
    )


def _workload_text(mix: list[MixPart]) -> str:
    if len(mix) == 1:
        s = mix[0].scenario
        return f"{s.model_name}, {tokens_text(s.constants['tokens'])} tokens"
    return "the mix " + ", ".join(f"{p.name} {p.share:.0%}" for p in mix)


def modes_text(result: RoiResult) -> str:
    """The sentence that says what was compared: each design's fabric in its operating mode (a fabric without
    modes: its label alone)."""
    sides = []
    for f in (result.fabric_a, *result.designs_b):
        summary = result.fabric_modes.get(f, "")
        label = result.labels.get(f, f)
        sides.append(f"{label}, {summary}" if summary else f"{label}, which has one operating mode")
    return f"Compared: {sides[0]}; against {'; '.join(sides[1:])}."


def verdict(result: RoiResult) -> str:
    """The buyer's paragraph for the headline GPU count: the first design in full, the others in one clause each,
    and what would change the first."""
    gpus = result.headline_gpus
    calls = [call_of(result, gpus, b) for b in result.designs_b if _has(result, gpus, b)]
    first, rest = calls[0], calls[1:]
    text = f"At {gpus:,} GPUs ({_workload_text(result.mix)}), {call_text(result, first)}."
    for c in rest:
        clause = call_text(result, c, full=False)
        text += f" {clause[0].upper()}{clause[1:]}."
    text += split_sentence(result, first.gpus, first.fabric_b)
    if not result.tornado_computed:
        return text
    return text + _what_changes(result, first)


def typical_agrees(call: Call) -> bool:
    """Whether the typical-value case (every input at its most likely value) falls on the side the call does: the
    flips are crossings of the typical case's NPV, so they change the call only then."""
    return bool(call.row["npv_usd"] > 0) == (call.p > 0.5)


def what_changes(result: RoiResult, call: Call) -> str:
    """What would change the call on one design, as a clause: the flips when the call and the typical-value case
    agree; else that the answer rests on how the inputs spread (its widest input named)."""
    if not typical_agrees(call):
        bars = result.tornado.filter((pl.col("gpus") == call.gpus) & (pl.col("fabric_b") == call.fabric_b))
        top = bars.sort("rank")["input"].head(1).to_list()
        chiefly = f", chiefly {top[0]}" if top else ""
        return (
            "with every input at its most likely value the answer goes the other way (NPV "
            f"{money(call.row['npv_usd'], True)}): it rests on how the uncertain inputs spread{chiefly}"
        )
    flips = changes(result, call.gpus, call.fabric_b)
    return f"it would change if {_or(flips)}" if flips else "no single input, moved alone over its range, changes it"


def _what_changes(result: RoiResult, call: Call) -> str:
    label = result.labels.get(call.fabric_b, call.fabric_b)
    clause = what_changes(result, call)
    if clause.startswith("no single input"):
        return " No single input, moved alone over its range, changes it."
    return f" Against {label}, {clause}."


def _has(result: RoiResult, gpus: int, b: str) -> bool:
    return result.table.filter((pl.col("gpus") == gpus) & (pl.col("fabric_b") == b)).height > 0


def _or(items: list[str]) -> str:
    """`a`, `a or b`, `a, b or c`."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def _irr(x: float | None) -> str:
    return "none" if x is None or not math.isfinite(x) else f"{x:+.0%}"


def _table(result: RoiResult) -> list[str]:
    header = (
        f"{'GPUs':>7} {'design B':<17} {'speed':>6} {'A costs':>8} {'NPV P50':>8} {'NPV P10..P90':>18} "
        f"{'P':>5} {'P*':>5} {'payback':>11} {'IRR':>6}"
    )
    lines = [header, "-" * len(header)]
    for r in result.table.sort("gpus", maintain_order=True).iter_rows(named=True):
        band = f"{money(r['npv_usd_p10'], True)}..{money(r['npv_usd_p90'], True)}"
        lines.append(
            f"{r['gpus']:>7,} {r['fabric_b'][:17]:<17} {r['speed_ratio_p50']:>6.3f} "
            f"{money(r['extra_tco_usd_p50'], True):>8} {money(r['npv_usd_p50'], True):>8} {band:>18} "
            f"{chance(r['p_npv_positive'], True):>5} {chance(r['p_npv_positive_no_error'], True):>5} "
            f"{median_payback_text(r['payback_months_p50'], r['life_months']):>11} {_irr(r['irr_p50']):>6}"
        )
    return lines


def _tornado(result: RoiResult, rows: int = 10) -> list[str]:
    b = result.designs_b[0]
    bars = result.tornado.filter((pl.col("gpus") == result.headline_gpus) & (pl.col("fabric_b") == b))
    header = f"{'input':<44} {'low':>8} {'high':>8} {'NPV at low':>11} {'NPV at high':>11} {'flips at':>12}"
    lines = [header, "-" * len(header)]
    for r in bars.sort("rank").head(rows).iter_rows(named=True):
        flip = "-"
        if r["flip"] is not None:
            above = r["flip_direction"] == "above"
            shown = past(r["flip"], above, r["unit"], r["integer"])
            sign = (">=" if above else "<=") if r["integer"] else (">" if above else "<")
            flip = f"{sign} {value_text(shown, r['unit'])}"
        lines.append(
            f"{r['input'][:44]:<44} {value_text(r['low'], r['unit']):>8} {value_text(r['high'], r['unit']):>8} "
            f"{money(r['npv_low_usd'], signed=True):>11} {money(r['npv_high_usd'], signed=True):>11} {flip:>12}"
        )
    return lines


def render(result: RoiResult) -> str:
    """The terminal report: the verdict, what P describes, the assumptions in brief, the matrix of designs and GPU
    counts, the headline pair's tornado."""
    a, o = result.fabric_a, result.options
    valued = (
        "B's own cost of a busy GPU-hour"
        if o.value_usd_per_gpu_hour is None
        else f"${o.value_usd_per_gpu_hour:g}/GPU-h"
    )
    life = result.table["life_months"][0] / 12
    lines = [*textwrap.wrap(verdict(result), WIDTH), "", *textwrap.wrap(population(result), WIDTH), ""]
    lines += [*textwrap.wrap(modes_text(result), WIDTH), ""]
    lines += textwrap.wrap(
        f"{a} (A) against {', '.join(result.designs_b)} (B), scenario {result.scenario}; owned for {life:g} years; "
        f"{int(result.table['samples'][0]):,} Monte Carlo samples"
        + (" (stopped early)" if result.mc_cancelled else "")
        + f"; design: {'same topology for both' if o.design == 'same' else 'each fabric on its cheapest design'}; "
        f"NPV values A's extra capacity at {valued}; model error: {result.model_error}"
        + (f"; quote: {o.quote}" if o.quote else "")
        + ".",
        WIDTH,
    )
    lines += [
        "",
        "A costs: PV of A's total cost of ownership over B's (P50). P: share of scenarios where choosing A",
        "pays (NPV > 0); P*: the same without the model's own error. Speed: A's delivered work over B's, P50.",
        "Payback: P50 of the discounted payback. IRR: P50 of the premium's cash flows' IRR over the same",
        "scenarios (none when the P50 scenario has no premium to recover or never recovers it).",
        "",
        *_table(result),
        "",
        *([*split_lines(result), ""] if result.lifecycle is not None else []),
        *textwrap.wrap(
            f"What moves the NPV of choosing {a} over {result.designs_b[0]} at {result.headline_gpus:,} GPUs (each "
            "input alone over its range, the others typical; inputs that move nothing are left out):",
            WIDTH,
        ),
        *_tornado(result),
    ]
    return "\n".join(lines)
