"""The decision memo a committee reads, as blocks (headings, paragraphs, lists, tables, figures) that
`scalefront.roi.report` writes as HTML and Markdown: the recommendation with its condition; the premium in dollars
and as a share of the total cost of ownership; NPV P10/P50/P90 and the probabilities with and without the model's
error; the matrix of designs and GPU counts; what would change the decision; the premium's cash flows with NPV,
payback and IRR; an assumptions table with provenance, confidence and quote status; the correlated price groups;
the risks not priced; a glossary. Formatting only."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from scalefront.roi.charts import CHARTS
from scalefront.roi.frames import QUOTABLE_FABRIC_LINES
from scalefront.roi.lifecycle_text import SPLIT_HEAD, split_sentence, split_table
from scalefront.roi.result import RoiResult
from scalefront.roi.text import Call, call_of, call_text, changes, population, typical_agrees, what_changes
from scalefront.roi.words import chance, family, median_payback_text, money, share_text

__all__ = ["Block", "memo"]

#: Confidence of a figure, by its quote status.
_CONFIDENCE = {"quoted": "high", "list": "medium", "estimate": "low"}
#: The fabric price lines the assumptions table lists, in order (power and counts follow in the price book).
_PRICE_LINES = (
    *QUOTABLE_FABRIC_LINES,
    "ops_staff_fte",
    "ops_staff_fte_per_1000_switches",
    "ops_wage_premium_fraction",
    "lead_time_weeks",
    "incidents_per_year",
    "incident_stall_s",
)
_ECONOMICS = (
    "amortization_years",
    "discount_rate",
    "residual_fraction",
    "utilisation",
    "usd_per_kwh",
    "pue",
    "colocation_usd_per_kw_month",
    "usd_per_fte_year",
    "gpu_lead_time_weeks",
    "optic_replacement_fraction_per_year",
    "switch_replacement_fraction_per_year",
    "nic_replacement_fraction_per_year",
    "replacement_labour_usd",
)
#: Risks the model does not price, each with what a buyer would do about it.
RISKS = (
    (
        "Supply and allocation",
        "Only the lead time beyond the GPUs' is priced (as lost capacity). Allocation tied to buying NVIDIA "
        "networking ('many believe Nvidia gives preferred allocations to those buying their networking solutions', "
        "SemiAnalysis 2024-10-03) is not: ask both vendors for committed delivery dates in the quote.",
    ),
    (
        "Lock-in",
        "InfiniBand and Spectrum-X tie the fabric, its optics ('basically a must' to buy from NVIDIA for "
        "InfiniBand) and its management software to one vendor; merchant Ethernet spreads them over several. The "
        "price of switching later is not in the NPV.",
    ),
    (
        "Skills",
        "Staff are priced as full-time equivalents per fabric (the price book's ops_staff lines), not the risk of "
        "not finding them: RoCE at scale needs NCCL, PFC/ECN and hashing expertise; InfiniBand needs UFM and "
        "subnet-manager expertise.",
    ),
    (
        "Multi-tenancy and placement",
        "The speeds assume jobs placed as the layouts say. Fragmented placement across leaves cost Meta over 30% "
        "on ECMP RoCE (engineering.fb.com, 2024-08-05); a shared cluster should be run with the placement input "
        "the fabric-modes work adds.",
    ),
    (
        "Model validity at scale",
        "The collective model is validated on nccl-tests curves of at most 64 (InfiniBand) and 128 (RoCE) GPUs; "
        "the model error at 16,000 GPUs is extrapolated from those residuals.",
    ),
)
GLOSSARY = (
    (
        "NPV",
        "net present value of choosing A over B: every extra cost and benefit over the life, discounted to "
        "today at the discount rate; above 0, A pays.",
    ),
    (
        "P10 / P50 / P90",
        "the values 10%, 50% and 90% of the scenarios fall below; P50 (the median) is the central estimate.",
    ),
    (
        "Premium",
        "what A's fabric (hardware, spares, installation, support, licences, operations, less resale) costs "
        "over B's, present value over the life.",
    ),
    ("Payback", "the month A's extra upfront cost is recovered by its discounted monthly benefits (and its resale)."),
    (
        "IRR",
        "the yearly rate at which the premium's cash flows have zero NPV, its P50 over the scenarios (as the NPV and "
        "the payback); 'none' when the P50 scenario has no premium or never recovers it.",
    ),
    (
        "Quote status",
        "quoted: a vendor's quote for this purchase; list: a published list or street price; "
        "estimate: the price book's own estimate (its source says EST and why).",
    ),
)


@dataclass(frozen=True)
class Block:
    """One block of the memo: `kind` is h1, h2, p, ul, table, figure or callout."""

    kind: str
    text: str = ""
    items: list[str] = field(default_factory=list)
    head: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)


def _recommendation(r: RoiResult, calls: list[Call]) -> str:
    first = calls[0]
    label = r.labels.get(first.fabric_b, first.fabric_b)
    who = {"A": r.labels.get(r.fabric_a, r.fabric_a), "B": label}
    flips = changes(r, first.gpus, first.fabric_b) if typical_agrees(first) else []
    unless = f", unless {_join(flips)}" if flips else ""
    if not typical_agrees(first):
        unless = f"; {what_changes(r, first)}"
    if first.kind in who:
        text = f"Buy {who[first.kind]} at {first.gpus:,} GPUs{unless}."
    elif first.kind.startswith("leans"):
        lean = who["A" if first.kind.endswith("A") else "B"]
        fam = family(r.fabric_a, r.families)
        text = (
            f"Leans {lean} at {first.gpus:,} GPUs ({chance(first.p)} of the scenarios favour {fam}); decide on the "
            f"quotes{unless}."
        )
    else:
        text = (
            f"No clear winner at {first.gpus:,} GPUs against {label}: a coin flip ({chance(first.p)}); decide on "
            "the quotes and the risks below."
        )
    others = [c for c in calls[1:] if c.kind != first.kind]
    for c in others:
        differs = call_text(r, c, full=False).split(": ", 1)[1]
        text += f" Against {r.labels.get(c.fabric_b, c.fabric_b)} the answer differs: {differs}."
    return text


def _changes_line(r: RoiResult, c: Call) -> str:
    return f"Against {r.labels.get(c.fabric_b, c.fabric_b)}: {what_changes(r, c)}."


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def _headline_table(r: RoiResult, calls: list[Call]) -> Block:
    head = [
        "against",
        "verdict",
        f"{family(r.fabric_a, r.families)} costs more upfront (P50)",
        "more over the life (share of TCO)",
        "NPV P10 / P50 / P90",
        "P(A pays)",
        "P without model error",
        "payback (P50)",
        "IRR",
    ]
    rows = []
    for c in calls:
        x = c.row
        rows.append(
            [
                r.labels.get(c.fabric_b, c.fabric_b),
                call_text(r, c, full=False).split(": ", 1)[1].split(" (")[0],
                money(x["extra_capex_usd_p50"], True),
                f"{money(x['extra_tco_usd_p50'], True)} ({share_text(x['extra_tco_share_p50'])})",
                f"{money(x['npv_usd_p10'], True)} / {money(x['npv_usd_p50'], True)} / {money(x['npv_usd_p90'], True)}",
                chance(c.p),
                chance(c.p_no_error),
                median_payback_text(x["payback_months_p50"], x["life_months"]),
                "none" if x["irr_p50"] is None or not math.isfinite(x["irr_p50"]) else f"{x['irr_p50']:+.0%}",
            ]
        )
    return Block("table", head=head, rows=rows)


def _matrix(r: RoiResult) -> Block:
    counts = sorted(set(r.table["gpus"].to_list()))
    rows = []
    for n in counts:
        row = [f"{n:,}"]
        for b in r.designs_b:
            if r.table.filter((pl.col("gpus") == n) & (pl.col("fabric_b") == b)).height == 0:
                row.append("-")
                continue
            c = call_of(r, n, b)
            verdict = call_text(r, c, full=False).split(": ", 1)[1].split(" (")[0]
            row.append(f"{verdict}: P {chance(c.p)}, NPV {money(c.row['npv_usd_p50'], True)}")
        rows.append(row)
    return Block("table", head=["GPUs", *(r.labels.get(b, b) for b in r.designs_b)], rows=rows)


def _lifecycle(r: RoiResult) -> list[Block]:
    """With a lifecycle: its phases and the NPV's split between training and serving, per design and GPU count."""
    if r.lifecycle is None or r.lifecycle_split.is_empty():
        return []
    b = r.designs_b[0]
    return [
        Block("h2", "The cluster's life: training, then serving (typical values)"),
        Block(
            "p",
            split_sentence(r, r.headline_gpus, b).strip() + f" (At {r.headline_gpus:,} GPUs, against "
            f"{r.labels.get(b, b)}; serving on each fabric at its best layout within the SLO.)",
        ),
        Block("table", head=SPLIT_HEAD, rows=split_table(r)),
    ]


def _cash_flows(r: RoiResult) -> Block:
    b = r.designs_b[0]
    c = r.cash_flows.filter((pl.col("gpus") == r.headline_gpus) & (pl.col("fabric_b") == b)).sort("year")
    rows = [
        [
            str(x["year"]),
            money(x["upfront_usd"], True),
            money(x["benefit_usd"], True),
            money(x["residual_usd"], True),
            money(x["net_usd"], True),
            money(x["discounted_usd"], True),
            money(x["cumulative_discounted_usd"], True),
        ]
        for x in c.iter_rows(named=True)
    ]
    head = [
        "year",
        "upfront (capex, delay)",
        "benefit (capacity - running cost)",
        "resale",
        "net",
        "discounted",
        "cumulative (NPV)",
    ]
    return Block("table", head=head, rows=rows)


def _range(entry: Any, name: str) -> str:
    r = entry.ranges.get(name)
    return "" if r is None else f"{r.low:g} - {r.high:g}"


def _assumptions(r: RoiResult) -> Block:
    cat = r.catalog
    rows = []
    for fabric in (r.fabric_a, *r.designs_b):
        price = cat.fabric_price(fabric)
        for name in _PRICE_LINES:
            status = price.status_of(name)
            rows.append(
                [
                    fabric,
                    name,
                    f"{getattr(price, name):g}",
                    _range(price, name),
                    status,
                    _CONFIDENCE[status],
                    price.sources.get(name, ""),
                ]
            )
    econ = cat.economics_or_error()
    for name in _ECONOMICS:
        status = econ.status_of(name)
        rows.append(
            [
                "economics",
                name,
                f"{getattr(econ, name):g}",
                _range(econ, name),
                status,
                _CONFIDENCE[status],
                econ.sources.get(name, ""),
            ]
        )
    return Block(
        "table", head=["entry", "line", "typical", "range", "status", "confidence", "source (date)"], rows=rows
    )


def _groups(r: RoiResult) -> Block:
    cat = r.catalog
    rows = [
        [c.name, f"{c.loading:g}", ", ".join(c.lines), c.sources.get("loading", "")]
        for g, c in cat.correlations.items()
        if g in r.groups
    ]
    return Block("table", head=["group", "loading", "lines", "why (EST)"], rows=rows)


def _header(r: RoiResult, date: str, version: str) -> str:
    o = r.options
    return (
        f"Date {date}; scalefront {version}; catalog fingerprint {r.fingerprint}; scenario {r.scenario}; "
        f"{int(r.table['samples'][0]):,} scenarios, seed {o.seed}" + (f"; quote {o.quote}" if o.quote else "") + "."
    )


def memo(r: RoiResult, date: str, version: str) -> list[Block]:
    """The memo's blocks, top to bottom."""
    calls = [
        call_of(r, r.headline_gpus, b)
        for b in r.designs_b
        if not r.table.filter((pl.col("gpus") == r.headline_gpus) & (pl.col("fabric_b") == b)).is_empty()
    ]
    labels = ", ".join(r.labels.get(b, b) for b in r.designs_b)
    blocks = [
        Block("h1", f"{r.labels.get(r.fabric_a, r.fabric_a)} against {labels}: decision memo"),
        Block("p", _header(r, date, version)),
        Block("callout", f"Recommendation. {_recommendation(r, calls)}"),
        Block("p", " ".join(f"{call_text(r, c)[0].upper()}{call_text(r, c)[1:]}." for c in calls)),
        Block("p", population(r)),
        Block("h2", f"The numbers at {r.headline_gpus:,} GPUs"),
        _headline_table(r, calls),
        Block("h2", "Every design at every GPU count"),
        Block(
            "p",
            f"Each cell: the verdict, the share of scenarios in which choosing {family(r.fabric_a, r.families)} "
            "pays, and the NPV's median.",
        ),
        _matrix(r),
        *_lifecycle(r),
        Block("h2", "What would change the decision"),
        Block(
            "ul",
            items=[f"Against {r.labels.get(c.fabric_b, c.fabric_b)}: {what_changes(r, c)}." for c in calls],
        ),
        Block("h2", "Charts"),
        *(Block("figure", text=name, items=[caption]) for name, caption in CHARTS.items()),
        Block(
            "h2",
            f"The premium as an investment (against {r.labels.get(r.designs_b[0], r.designs_b[0])}, typical values)",
        ),
        _cash_flows(r),
        Block("h2", "Assumptions: every price line, its provenance, confidence and quote status"),
        Block(
            "p",
            "Quote status of the quotable lines (both fabrics' hardware, support and licences, by dollars): "
            f"{_coverage(r)}.",
        ),
        _assumptions(r),
        Block("h2", "Prices that move together (stated assumptions)"),
        _groups(r),
        Block("p", f"The model's own error: {r.model_error}."),
        Block("h2", "Risks the model does not price"),
        Block("ul", items=[f"{k}: {v}" for k, v in RISKS]),
        Block("h2", "Glossary"),
        Block("ul", items=[f"{k}: {v}" for k, v in GLOSSARY]),
    ]
    return blocks


def _coverage(r: RoiResult) -> str:
    row = r.table.filter((pl.col("gpus") == r.headline_gpus) & (pl.col("fabric_b") == r.designs_b[0])).row(
        0, named=True
    )
    return ", ".join(f"{row[f'{s}_share']:.0%} {s}" for s in ("quoted", "list", "estimate"))
