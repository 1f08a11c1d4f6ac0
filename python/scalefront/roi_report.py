"""`scalefront roi --report DIR`: a Markdown report with two PNG charts (each fabric's cost-vs-time frontier,
and the break-even premium against the GPU count). Needs matplotlib (`pip install 'scalefront[report]'`).
Every file is written atomically; an existing report is replaced only when asked."""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from scalefront.errors import UsageError
from scalefront.export import check_writable_dir
from scalefront.roi import RoiResult

__all__ = ["REPORT_FILES", "write_report"]

REPORT_FILES = ("report.md", "frontier.png", "break_even.png")


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


def _atomic(directory: Path, name: str, write: Callable[[str], object]) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=directory)
    os.close(fd)
    try:
        write(tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, directory / name)
    finally:
        Path(tmp).unlink(missing_ok=True)


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


def write_report(result: RoiResult, scenario: str, directory: str | Path, force: bool = False) -> Path:
    d = check_report_dir(directory, force)
    d.mkdir(parents=True, exist_ok=True)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    a, b = result.fabric_a, result.fabric_b

    def frontier_png(path: str) -> None:
        fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
        for fabric in (a, b):
            f = result.frontier.filter(result.frontier["fabric"] == fabric).sort("time_to_train_days")
            ax.plot(f["time_to_train_days"], f["cost_to_train_usd"] / 1e6, marker="o", label=fabric)
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel("time to train (days)")
        mode = result.frontier["cost_mode"][0] if result.frontier.height else "rent"
        ax.set_ylabel(f"cost to train, {mode} (M$)")
        ax.set_title(f"Pareto frontier per fabric: {scenario}")
        ax.grid(True, alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(path, format="png")
        plt.close(fig)

    def break_even_png(path: str) -> None:
        fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
        t = result.table
        ax.plot(t["gpus"], t["break_even_premium"], marker="o", label="per training run")
        ax.plot(t["gpus"], t["break_even_premium_life"], marker="s", label="over the cluster's life")
        actual = t[f"network_capex_usd_{a}"] / t[f"network_capex_usd_{b}"]
        ax.plot(t["gpus"], actual, linestyle="--", color="grey", label=f"catalog price of {a} / {b}")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("GPUs")
        ax.set_ylabel(f"{a} network price / {b} network price")
        ax.set_title(f"Break-even: {a} is worth its price where the dashed line is below")
        ax.grid(True, alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(path, format="png")
        plt.close(fig)

    def fmt(x: float) -> str:
        return "never" if isinstance(x, float) and math.isinf(x) else f"{x:,.2f}"

    lines = [
        f"# {a} vs {b}: scenario {scenario}",
        "",
        f"The fastest configuration on each fabric per GPU count (scalefront roi). Break-even premium: the price "
        f"of {a}'s network relative to {b}'s at which both cost the same to train the scenario's tokens when the "
        f"cluster is owned; life: the same over the cluster's life; payback: days of the cluster's cost that "
        f"{a}'s actual premium takes to pay back.",
        "",
        "| GPUs | days "
        + a
        + " | days "
        + b
        + " | cost "
        + a
        + " (USD) | cost "
        + b
        + " (USD) | network "
        + a
        + " (USD) | network "
        + b
        + " (USD) | break-even | life | payback days |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in result.table.iter_rows(named=True):
        lines.append(
            f"| {row['gpus']:,} | {row[f'time_to_train_days_{a}']:.2f} | {row[f'time_to_train_days_{b}']:.2f} | "
            f"{row[f'cost_to_train_usd_{a}']:,.0f} | {row[f'cost_to_train_usd_{b}']:,.0f} | "
            f"{row[f'network_capex_usd_{a}']:,.0f} | {row[f'network_capex_usd_{b}']:,.0f} | "
            f"{fmt(row['break_even_premium'])} | {fmt(row['break_even_premium_life'])} | {fmt(row['payback_days'])} |"
        )
    lines += ["", "![Pareto frontier per fabric](frontier.png)", "", "![Break-even premium](break_even.png)", ""]
    if not result.sensitivity.is_empty():
        cols = [c for c in result.sensitivity.columns if c.startswith("gpus_")]
        lines += [
            "## Sensitivity of the break-even premium",
            "",
            "| assumption | change | " + " | ".join(c.removeprefix("gpus_") + " GPUs" for c in cols) + " |",
            "|---|---|" + "---|" * len(cols),
        ]
        for row in result.sensitivity.iter_rows(named=True):
            values = " | ".join(fmt(row[c]) if row[c] is not None else "-" for c in cols)
            lines.append(f"| {row['assumption']} | {row['change']:+.0%} | {values} |")
        lines.append("")
    _atomic(d, "frontier.png", frontier_png)
    _atomic(d, "break_even.png", break_even_png)
    _atomic(d, "report.md", lambda p: Path(p).write_text("\n".join(lines), encoding="utf-8"))
    return d / "report.md"
