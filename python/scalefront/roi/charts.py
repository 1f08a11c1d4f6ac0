"""The decision memo's charts, as SVG text (matplotlib, reproducible: no date, fixed ids). Each chart shows a
difference where the difference is the point (roi-review-2 and the UI review: stacked cost-of-ownership bars of
$1,000M each hid a 3% difference):
- where A's extra cost comes from: A minus B by cost component, at the headline GPU count, against the total;
- the NPV's distribution per design B, with its P10, P50 and P90 marked;
- the NPV's P10-P50-P90 against the GPU count, per design B;
- the tornado of the headline pair, in NPV;
- the premium's yearly cash flows, discounted and cumulative.
"""

from __future__ import annotations

import io
from typing import Any

import polars as pl

from scalefront.roi.result import RoiResult
from scalefront.roi.words import family, money, past, value_text

__all__ = ["CHARTS", "charts"]

#: The chart files, in the memo's order, with their captions.
CHARTS = {
    "premium.svg": "Where the premium comes from: A minus B by component",
    "npv.svg": "How sure: the NPV of choosing A across the scenarios",
    "npv_by_gpus.svg": "The NPV against the GPU count",
    "tornado.svg": "What moves the NPV",
    "cash_flow.svg": "The premium as an investment: yearly cash flows",
}
_COLOURS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860")


def _svg(fig: Any) -> str:
    import matplotlib.pyplot as plt

    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg") :]


def _figure(height: float = 4.2) -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "scalefront"
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(7.5, height), dpi=100)


def _premium(r: RoiResult) -> str:
    """A minus B by component (PV over the life, $M), per design B, at the headline count, with the net and the
    total cost of ownership it is a share of."""
    b_all = r.breakdown.filter(pl.col("gpus") == r.headline_gpus)
    components = list(dict.fromkeys(b_all["component"].to_list()))
    fig, ax = _figure(4.6)
    width = 0.8 / max(1, len(r.designs_b))
    for k, b in enumerate(r.designs_b):
        rows = b_all.filter(pl.col("fabric_b") == b)
        if rows.height == 0:
            continue

        def usd(fabric: str, comp: str, rows: pl.DataFrame = rows) -> float:
            return float(rows.filter((pl.col("fabric") == fabric) & (pl.col("component") == comp))["usd"].sum())

        diffs = [(usd(r.fabric_a, c) - usd(b, c)) / 1e6 for c in components]
        total = sum(diffs)
        tco_b = sum(usd(b, c) for c in components)
        xs = [i + (k - (len(r.designs_b) - 1) / 2) * width for i in range(len(components) + 1)]
        ax.bar(
            xs,
            [*diffs, total],
            width=width,
            color=_COLOURS[k % len(_COLOURS)],
            label=f"A - {b} (net {money(total * 1e6, True)}, {total * 1e6 / tco_b:+.1%} of B's TCO)",
        )
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(components) + 1))
    ax.set_xticklabels([*components, "net"], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(f"{r.fabric_a} minus B, present value (M$)")
    ax.set_title(
        f"At {r.headline_gpus:,} GPUs: what {family(r.fabric_a, r.families)} costs more (+) or less (-), by component"
    )
    ax.legend(fontsize=7)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    return _svg(fig)


def _npv(r: RoiResult) -> str:
    """The NPV's histogram per design B at the headline count, P10/P50/P90 marked."""
    s = r.samples.filter(pl.col("gpus") == r.headline_gpus)
    fig, ax = _figure()
    for k, b in enumerate(r.designs_b):
        values = (s.filter(pl.col("fabric_b") == b)["npv_usd"] / 1e6).to_list()
        if not values:
            continue
        colour = _COLOURS[k % len(_COLOURS)]
        row = r.table.filter((pl.col("gpus") == r.headline_gpus) & (pl.col("fabric_b") == b)).row(0, named=True)
        marks = ", ".join(f"{q.upper()} {money(row[f'npv_usd_{q}'], True)}" for q in ("p10", "p50", "p90"))
        ax.hist(values, bins=60, alpha=0.45, color=colour, label=f"against {b}: {marks}")
        for q, style in (("p10", ":"), ("p50", "-"), ("p90", ":")):
            ax.axvline(row[f"npv_usd_{q}"] / 1e6, color=colour, linestyle=style, linewidth=1.2)
    ax.axvline(0, color="black", linewidth=1.0)
    ax.set_xlabel(f"NPV of choosing {r.fabric_a} (M$); right of 0: {family(r.fabric_a, r.families)} pays")
    ax.set_ylabel("scenarios")
    ax.set_title(f"At {r.headline_gpus:,} GPUs: {int(r.table['samples'][0]):,} scenarios per design")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return _svg(fig)


def _npv_by_gpus(r: RoiResult) -> str:
    fig, ax = _figure()
    for k, b in enumerate(r.designs_b):
        t = r.table.filter(pl.col("fabric_b") == b).sort("gpus")
        counts = t["gpus"].to_list()
        colour = _COLOURS[k % len(_COLOURS)]
        ax.fill_between(
            counts, (t["npv_usd_p10"] / 1e6).to_list(), (t["npv_usd_p90"] / 1e6).to_list(), alpha=0.2, color=colour
        )
        ax.plot(
            counts,
            (t["npv_usd_p50"] / 1e6).to_list(),
            marker="o",
            color=colour,
            label=f"against {b}: P50, band P10-P90",
        )
    ax.axhline(0, color="black", linewidth=0.8)
    counts = sorted(set(r.table["gpus"].to_list()))
    ax.set_xscale("log", base=2)
    ax.set_xticks(counts)
    ax.set_xticklabels([f"{c:,}" for c in counts])
    ax.set_xlabel("GPUs")
    ax.set_ylabel(f"NPV of choosing {r.fabric_a} (M$)")
    ax.set_title(f"Above 0, {family(r.fabric_a, r.families)} pays; the band is where 80% of the scenarios fall")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return _svg(fig)


def _tornado(r: RoiResult, rows: int = 12) -> str:
    b = r.designs_b[0]
    bars = (
        r.tornado.filter((pl.col("gpus") == r.headline_gpus) & (pl.col("fabric_b") == b))
        .sort("rank")
        .head(rows)
        .reverse()
    )
    base = r.table.filter((pl.col("gpus") == r.headline_gpus) & (pl.col("fabric_b") == b))["npv_usd"][0] / 1e6
    fig, ax = _figure()
    fig.set_size_inches(7.5, 0.35 * max(4, bars.height) + 1.4)
    for i, x in enumerate(bars.iter_rows(named=True)):
        lo, hi = x["npv_low_usd"] / 1e6, x["npv_high_usd"] / 1e6
        ax.barh(i, lo - base, left=base, color="#4c72b0", height=0.6, label="input at its low end" if i == 0 else None)
        ax.barh(i, hi - base, left=base, color="#dd8452", height=0.6, label="input at its high end" if i == 0 else None)
        if x["flip"] is not None:
            above = x["flip_direction"] == "above"
            shown = past(x["flip"], above, x["unit"], x["integer"])
            ax.text(
                max(lo, hi, base),
                i,
                f"  flips {'>' if above else '<'} {value_text(shown, x['unit'])}",
                va="center",
                fontsize=7,
            )
    ax.set_yticks(range(bars.height))
    ax.set_yticklabels(bars["input"].to_list(), fontsize=7)
    ax.axvline(0, color="black", linewidth=0.8)
    ax.axvline(base, color="grey", linestyle=":", linewidth=0.8)
    ax.set_xlabel(f"NPV of choosing {r.fabric_a} over {b} (M$); dotted: at typical values")
    ax.set_title(f"At {r.headline_gpus:,} GPUs: each input alone over its range")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return _svg(fig)


def _cash_flow(r: RoiResult) -> str:
    b = r.designs_b[0]
    c = r.cash_flows.filter((pl.col("gpus") == r.headline_gpus) & (pl.col("fabric_b") == b)).sort("year")
    fig, ax = _figure()
    years = c["year"].to_list()
    ax.bar(years, (c["net_usd"] / 1e6).to_list(), color="#4c72b0", alpha=0.7, label="net cash flow of the year")
    ax.plot(
        years,
        (c["cumulative_discounted_usd"] / 1e6).to_list(),
        marker="o",
        color="#c44e52",
        label="cumulative, discounted (ends at the NPV)",
    )
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(years)
    ax.set_xlabel("year (0: the upfront premium)")
    ax.set_ylabel("M$")
    ax.set_title(f"Choosing {r.fabric_a} over {b} at {r.headline_gpus:,} GPUs, typical values")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return _svg(fig)


def charts(r: RoiResult) -> dict[str, str]:
    """Every chart's SVG text, by file name, in `CHARTS` order."""
    draw = {
        "premium.svg": _premium,
        "npv.svg": _npv,
        "npv_by_gpus.svg": _npv_by_gpus,
        "tornado.svg": _tornado,
        "cash_flow.svg": _cash_flow,
    }
    return {name: draw[name](r) for name in CHARTS}
