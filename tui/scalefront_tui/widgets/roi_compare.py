"""The ROI tab's "compare with previous result": the answer pinned with `p` beside the answer now, one line per
figure a buyer weighs (GPU, count, fabrics, quote, break-even, chance, payback, costs), so that H100 at 4,096 and
GB200 at 8,192, or RoCE and a dearer IB quote, sit side by side instead of in the buyer's memory.

Formatting only: every figure is a column of the comparison's table (`scalefront.api.RoiView`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from rich.table import Table
from rich.text import Text

from scalefront.api import RoiView, format_money


@dataclass(frozen=True)
class RoiAnswer:
    """One comparison's answer at one GPU count, as the pin shows it."""

    view: RoiView
    gpus: int

    @property
    def row(self) -> dict[str, Any]:
        rows = self.view.table.filter(self.view.table["gpus"] == self.gpus)
        return rows.row(0, named=True) if rows.height else {}


def _pct(ratio: Any) -> str:
    return f"{ratio - 1:+.0%}" if isinstance(ratio, float) and math.isfinite(ratio) else "n/a"


def payback_text(row: dict[str, Any]) -> str:
    """A row's payback as a buyer reads it: "13 months" where it pays back in months (the API's `payback` kind
    and `payback_months` together), else the kind ("beyond life", "never", ...)."""
    kind, months = row.get("payback"), row.get("payback_months")
    if kind == "months" and isinstance(months, float) and math.isfinite(months):
        return f"{math.ceil(months)} months"
    return str(kind) if kind else "n/a"


def _lines(answer: RoiAnswer) -> list[tuple[str, str]]:
    """(label, value) pairs of one answer, in the pin's order."""
    view, row = answer.view, answer.row
    result = view.result
    scenario = result.mix[0].scenario if result.mix else None
    a, b = view.fabric_a, view.fabric_b
    band = f"{_pct(row.get('break_even_premium_p10'))}..{_pct(row.get('break_even_premium_p90'))}"
    p = row.get("p_a_cheaper")
    return [
        ("GPU", ", ".join(scenario.gpu_names) if scenario else "n/a"),
        ("GPUs", f"{answer.gpus:,}"),
        ("A vs B", f"{a} vs {b}"),
        ("cost basis", view.what_if.mode),
        ("A premium", _pct(row.get("premium")) + (" (quote)" if view.what_if.premium is not None else "")),
        ("break-even", f"{_pct(row.get('break_even_premium'))} ({band})" if "break_even_premium" in row else "n/a"),
        ("P(A cheaper)", f"{p:.0%}" if isinstance(p, float) else "n/a"),
        ("payback", payback_text(row)),
        ("cost A", format_money(row.get(f"cost_{a}", math.nan))),
        ("cost B", format_money(row.get(f"cost_{b}", math.nan))),
    ]


def pinned_table(pinned: RoiAnswer, now: RoiAnswer | None) -> Table:
    """The pinned answer beside the answer now (labels from the pinned one; a value that differs is bold)."""
    table = Table(box=None, padding=(0, 1), show_edge=False, title="compare with the pinned result (p pins anew)")
    table.add_column("", style="dim", no_wrap=True)
    table.add_column("pinned", overflow="fold")
    table.add_column("now", overflow="fold")
    left = _lines(pinned)
    right = _lines(now) if now is not None else [(label, "") for label, _ in left]
    for (label, old), (_, new) in zip(left, right, strict=True):
        table.add_row(label, old, Text(new, style="bold" if new != old else ""))
    return table
