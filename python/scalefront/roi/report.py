"""`scalefront roi --report DIR`: a self-contained HTML report (charts inlined as SVG, no scripts, no network) and
the same report in Markdown with the charts as SVG files beside it. Charts: break-even premium (P10-P50-P90) and
P(A cheaper per delivered token) against the GPU count, the tornado of the headline count with its flip values,
the cost breakdown of both fabrics, and the own-mode frontiers per fabric and topology.

matplotlib draws the charts (the `report` extra, in the README's main install line): the de facto plotting
library, well kept, and its SVG output embeds in one HTML file. The files are written to temporaries and placed
together at the end (none on a failure); an existing report is replaced only when asked."""

from __future__ import annotations

import html
import io
import math
from pathlib import Path
from typing import Any

import polars as pl

from scalefront.engine.export import Outputs, check_writable_dir
from scalefront.errors import UsageError
from scalefront.fidelity.validation.fabric_error import INDISTINGUISHABLE_Z
from scalefront.roi.result import RoiResult
from scalefront.roi.text import money, months_text, value_text, verdict

__all__ = ["CHARTS", "REPORT_FILES", "check_report_dir", "report_files", "stage_report", "write_report"]

CHARTS = ("break_even.svg", "p_a_cheaper.svg", "tornado.svg", "breakdown.svg", "frontier.svg")
REPORT_FILES = ("report.html", "report.md", *CHARTS)


def _check_dir(directory: Path, force: bool) -> None:
    """The report folder: an existing writable folder without a report (unless `force`), or one that can be
    created (its nearest existing parent is a writable folder)."""
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"--report: {directory} exists and is not a directory")
    taken = [name for name in REPORT_FILES if (directory / name).exists()]
    if taken and not force:
        raise UsageError(f"--report: {directory} already holds {', '.join(taken)}; pass --force to replace them")
    existing = next(d for d in (directory, *directory.parents) if d.exists())
    try:
        check_writable_dir(existing)
    except UsageError as err:
        raise UsageError(f"--report: {err}") from None


def check_report_dir(directory: str | Path, force: bool) -> Path:
    """Fail before any work when the report cannot be written."""
    if not str(directory).strip():
        raise UsageError("--report: the folder name is empty")
    d = Path(directory)
    _check_dir(d, force)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UsageError("--report needs matplotlib: pip install 'scalefront[report]'") from None
    return d


# ---------------------------------------------------------------------------------------------- charts


def _svg(fig: Any) -> str:
    """A figure as SVG text without the XML prologue, reproducible (no date, fixed ids)."""
    import matplotlib.pyplot as plt

    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg") :]


def _figure() -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "scalefront"
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(7.5, 4.2), dpi=100)


def _gpu_axis(ax: Any, counts: list[int]) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(counts)
    ax.set_xticklabels([f"{c:,}" for c in counts])
    ax.set_xlabel("GPUs")
    ax.grid(True, alpha=0.3)


def _break_even_chart(r: RoiResult) -> str:
    t = r.table.sort("gpus")
    counts = t["gpus"].to_list()
    fig, ax = _figure()

    def pct(ratio: float) -> float:
        return (ratio - 1.0) * 100.0

    ax.fill_between(
        counts,
        [pct(v) for v in t["break_even_premium_p10"]],
        [pct(v) for v in t["break_even_premium_p90"]],
        alpha=0.25,
        label="break-even, P10-P90",
    )
    ax.plot(counts, [pct(v) for v in t["break_even_premium_p50"]], marker="o", label="break-even, P50")
    ax.plot(counts, [pct(v) for v in t["break_even_premium"]], marker=".", linestyle=":", label="break-even, typical")
    ax.plot(counts, [pct(v) for v in t["premium"]], color="black", linestyle="--", label=f"{r.fabric_a}'s premium")
    _gpu_axis(ax, counts)
    ax.set_ylabel(f"{r.fabric_a} fabric cost over {r.fabric_b} (%)")
    ax.set_title(f"{r.fabric_a} is worth it where its premium (dashed) is below the break-even")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return _svg(fig)


def _p_chart(r: RoiResult) -> str:
    t = r.table.sort("gpus")
    counts = t["gpus"].to_list()
    fig, ax = _figure()
    ax.plot(counts, t["p_a_cheaper"] * 100, marker="o", label=f"P({r.fabric_a} cheaper per delivered token)")
    ax.plot(counts, t["p_payback_within_life"] * 100, marker="s", label="P(premium paid back within the life)")
    ax.axhline(50, color="grey", linewidth=0.8)
    _gpu_axis(ax, counts)
    ax.set_ylim(0, 100)
    ax.set_ylabel("probability (%)")
    ax.set_title(f"How sure: {t['samples'][0]:,} Monte Carlo samples per GPU count")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return _svg(fig)


def _tornado_chart(r: RoiResult, rows: int = 12) -> str:
    bars = r.tornado.filter(pl.col("gpus") == r.headline_gpus).sort("rank").head(rows).reverse()
    base = r.table.filter(pl.col("gpus") == r.headline_gpus)["savings_usd"][0]
    fig, ax = _figure()
    fig.set_size_inches(7.5, 0.35 * max(4, bars.height) + 1.2)
    for i, b in enumerate(bars.iter_rows(named=True)):
        lo, hi = b["savings_low_usd"] / 1e6, b["savings_high_usd"] / 1e6
        ax.barh(i, lo - base / 1e6, left=base / 1e6, color="#4c72b0", height=0.6)
        ax.barh(i, hi - base / 1e6, left=base / 1e6, color="#dd8452", height=0.6)
        if b["flip"] is not None:
            side = "<" if b["flip_direction"] == "below" else ">"
            label = f"  flips {side} {value_text(b['flip'], b['unit'])}"
            ax.text(max(lo, hi, base / 1e6), i, label, va="center", fontsize=7)
    ax.set_yticks(range(bars.height))
    ax.set_yticklabels(bars["input"].to_list(), fontsize=7)
    ax.axvline(0, color="black", linewidth=0.8)
    ax.axvline(base / 1e6, color="grey", linestyle=":", linewidth=0.8)
    ax.set_xlabel(f"NPV of choosing {r.fabric_a} (M$); blue: input at its low end, orange: high end")
    ax.set_title(f"Tornado at {r.headline_gpus:,} GPUs: each input alone over its range")
    fig.tight_layout()
    return _svg(fig)


def _breakdown_chart(r: RoiResult) -> str:
    b = r.breakdown.filter(pl.col("gpus") == r.headline_gpus)
    components = list(dict.fromkeys(b["component"].to_list()))
    fabrics = [r.fabric_a, r.fabric_b]
    fig, ax = _figure()
    positive = [0.0, 0.0]
    for comp in components:
        values = [b.filter((pl.col("fabric") == f) & (pl.col("component") == comp))["usd"][0] / 1e6 for f in fabrics]
        bottoms = [positive[i] if v >= 0 else 0.0 for i, v in enumerate(values)]
        ax.bar(fabrics, values, bottom=bottoms, label=comp)
        positive = [p + max(v, 0.0) for p, v in zip(positive, values, strict=True)]
    ax.set_ylabel("present value over the life (M$)")
    ax.set_title(f"Total cost of ownership at {r.headline_gpus:,} GPUs, by component")
    ax.legend(fontsize=7, ncol=2)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    return _svg(fig)


def _frontier_chart(r: RoiResult) -> str:
    import matplotlib.ticker

    fig, ax = _figure()
    f = r.frontier
    for (fabric, topo, over), group in f.group_by(["fabric", "topology", "oversubscription"], maintain_order=True):
        g = group.sort("time_to_train_days")
        ax.plot(g["time_to_train_days"], g["cost_to_train_usd"] / 1e6, marker="o", label=f"{fabric}, {topo} {over:g}:1")
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlabel("time to train (days)")
    ax.set_ylabel("cost to train, own mode: levelised TCO (M$)")
    ax.set_title("Pareto frontier per fabric and topology (first workload)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return _svg(fig)


# ---------------------------------------------------------------------------------------------- text


def _speed_cell(x: dict[str, Any]) -> str:
    """Speed A/B with the collective model's 90% band, flagged when the band holds no difference."""
    if not x.get("speed_log_sd"):
        return f"{x['speed_ratio']:.3f}"
    band = math.exp(INDISTINGUISHABLE_Z * x["speed_log_sd"]) - 1
    flag = " (indistinguishable within the model's error)" if x["indistinguishable"] else ""
    return f"{x['speed_ratio']:.3f} +/- {band:.1%}{flag}"


def _table_rows(r: RoiResult) -> tuple[list[str], list[list[str]]]:
    head = [
        "GPUs",
        "topology A / B",
        f"days {r.fabric_a}",
        f"days {r.fabric_b}",
        "speed A/B (90% model error)",
        "capex A",
        "capex B",
        "TCO A",
        "TCO B",
        "premium",
        "break-even (P10-P50-P90)",
        "P(A cheaper)",
        "NPV (P10-P90)",
        "payback",
        "$/Mtoken A",
        "$/Mtoken B",
    ]
    rows = []
    for x in r.table.iter_rows(named=True):
        topo = x["topology_a"] if x["topology_a"] == x["topology_b"] else f"{x['topology_a']} / {x['topology_b']}"
        rows.append(
            [
                f"{x['gpus']:,}",
                topo,
                f"{x['days_a']:.2f}",
                f"{x['days_b']:.2f}",
                _speed_cell(x),
                money(x["capex_a_usd"]),
                money(x["capex_b_usd"]),
                money(x["tco_a_usd"]),
                money(x["tco_b_usd"]),
                f"{x['premium'] - 1:+.0%}",
                f"{x['break_even_premium'] - 1:+.0%} ({x['break_even_premium_p10'] - 1:+.0%}, "
                f"{x['break_even_premium_p50'] - 1:+.0%}, {x['break_even_premium_p90'] - 1:+.0%})",
                f"{x['p_a_cheaper']:.0%}",
                f"{money(x['npv_usd'], True)} ({money(x['npv_usd_p10'], True)}..{money(x['npv_usd_p90'], True)})",
                months_text(x["payback_months"], x["payback"]),
                f"{x['usd_per_mtoken_a']:.4f}",
                f"{x['usd_per_mtoken_b']:.4f}",
            ]
        )
    return head, rows


def _tornado_rows(r: RoiResult) -> tuple[list[str], list[list[str]]]:
    head = ["input", "low", "typical", "high", "NPV at low", "NPV at high", "flips at"]
    rows = []
    for b in r.tornado.filter(pl.col("gpus") == r.headline_gpus).sort("rank").iter_rows(named=True):
        flip = "-" if b["flip"] is None else f"{b['flip_direction']} {value_text(b['flip'], b['unit'])}"
        rows.append(
            [
                b["input"],
                value_text(b["low"], b["unit"]),
                value_text(b["typical"], b["unit"]),
                value_text(b["high"], b["unit"]),
                money(b["savings_low_usd"], True),
                money(b["savings_high_usd"], True),
                flip,
            ]
        )
    return head, rows


def _md_table(head: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head), *("| " + " | ".join(r) + " |" for r in rows)]


def _html_table(head: list[str], rows: list[list[str]]) -> str:
    th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def _assumptions(r: RoiResult) -> list[str]:
    o = r.options
    valued = (
        "B's levelised own cost of a busy GPU-hour (cost avoidance: NPV equals the savings per delivered token)"
        if o.value_usd_per_gpu_hour is None
        else f"${o.value_usd_per_gpu_hour:g} per GPU-hour (--value-per-gpu-hour)"
    )
    life = r.table["life_months"][0] / 12
    return [
        f"Both fabrics own the same GPUs for {life:g} years; every figure is a present value at the catalog's "
        "discount rate (total cost of ownership: servers, network, spares, installation, management network, "
        "energy x PUE, facility, support and licences, less the residual value).",
        "Design: "
        + ("the same topology for both fabrics" if o.design == "same" else "each fabric on its cheapest design")
        + "; layouts re-optimised per sample among the candidates the typical-value sweep kept.",
        "Premium: A's fabric cost (hardware, its spares and installation, support, licences, less residual) over "
        "B's; " + ("catalog prices." if o.premium is None else f"set to {o.premium:g}x by --premium."),
        f"NPV and payback value A's extra capacity at {valued}.",
        f"Monte Carlo: {r.table['samples'][0]:,} samples, seed {o.seed}; price and figure ranges triangular "
        f"(low, typical, high); model error from {r.model_error} (training residuals common to both fabrics, "
        "collective residuals per fabric on its exposed communication).",
        "Formulas and sources: docs/roi.md.",
    ]


def report_files(result: RoiResult) -> dict[str, str]:
    """The report's files by name: the charts (SVG), report.md and report.html (self-contained)."""
    sentence = verdict(result)
    charts = {
        "break_even.svg": ("Break-even premium against the GPU count", _break_even_chart(result)),
        "p_a_cheaper.svg": ("How sure: P(A cheaper) against the GPU count", _p_chart(result)),
        "tornado.svg": ("What moves the verdict", _tornado_chart(result)),
        "breakdown.svg": ("Where the money goes", _breakdown_chart(result)),
        "frontier.svg": ("Time against cost, owning the cluster", _frontier_chart(result)),
    }
    title = f"{result.fabric_a} vs {result.fabric_b}: is the premium worth it? (scenario {result.scenario})"
    table, tornado = _table_rows(result), _tornado_rows(result)
    md = [f"# {title}", "", f"**{sentence}**", "", *(f"- {a}" for a in _assumptions(result)), ""]
    md += ["## Per GPU count", "", *_md_table(*table), ""]
    md += [f"## Tornado at {result.headline_gpus:,} GPUs", "", *_md_table(*tornado), ""]
    for name, (caption, _) in charts.items():
        md += [f"### {caption}", "", f"![{caption}]({name})", ""]
    css = (
        "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
        "table{border-collapse:collapse;font-size:12px;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 6px;"
        "text-align:right}td:first-child,th:first-child{text-align:left}.verdict{font-size:16px;background:#f4f6fa;"
        "padding:1em;border-left:4px solid #4c72b0}figure{margin:1.5em 0}"
    )
    body = [
        f"<h1>{html.escape(title)}</h1>",
        f"<p class='verdict'>{html.escape(sentence)}</p>",
        "<ul>" + "".join(f"<li>{html.escape(a)}</li>" for a in _assumptions(result)) + "</ul>",
        "<h2>Per GPU count</h2>",
        _html_table(*table),
        f"<h2>Tornado at {result.headline_gpus:,} GPUs</h2>",
        _html_table(*tornado),
        *(f"<figure><figcaption>{html.escape(c)}</figcaption>{svg}</figure>" for c, svg in charts.values()),
    ]
    page = (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{css}</style></head><body>" + "\n".join(body) + "</body></html>\n"
    )
    return {**{name: svg for name, (_, svg) in charts.items()}, "report.md": "\n".join(md), "report.html": page}


def stage_report(result: RoiResult, directory: str | Path, outputs: Outputs) -> Path:
    """The report's files into `outputs` (placed together with the others at its commit); the HTML file's path."""
    d = check_report_dir(directory, outputs.force)
    for name, text in report_files(result).items():
        outputs.text(text, d / name)
    return d / "report.html"


def write_report(result: RoiResult, directory: str | Path, force: bool = False) -> Path:
    """Write report.html, report.md and the charts into `directory`, all or none; returns the HTML file."""
    with Outputs(force) as outputs:
        path = stage_report(result, directory, outputs)
        outputs.commit()
    return path
