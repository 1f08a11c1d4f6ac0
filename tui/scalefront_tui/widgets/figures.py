"""The figures a buyer reads, from result frames to drawings: time against cost per fabric (points labelled with
their GPU count, the selected row highlighted, linear or log axes), scaling efficiency against GPU count per
fabric, the step-time breakdown of each fabric at one GPU count, and the ROI tornado. A drawing is drawn by
plot.py at the size the `Chart` widget (chart.py) gives it, so it fits any terminal. No widgets here."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl
from rich.text import Text

from scalefront.api import (
    TornadoBar,
    format_count,
    format_days,
    format_money,
    format_percent,
    format_si,
    step_components,
)
from scalefront_tui.widgets.markers import FabricMarkers
from scalefront_tui.widgets.plot import COLORS, Axis, Series, scatter, stacked_bars

Drawing = Callable[[int, int], list[Text]]


@dataclass(frozen=True, eq=False)
class FrontierView:
    """The frontier as the charts draw it (the app hands it down): the rows shown (filtered, in the table's
    order), the fastest configuration per fabric and GPU count (filtered alike), the columns that group rows into
    series, the columns that identify a configuration, the selected one (the table's cursor row), the session's
    markers (one per fabric, the same in every chart) and the basis of the cost (rent or own)."""

    rows: pl.DataFrame = field(default_factory=pl.DataFrame)
    best: pl.DataFrame = field(default_factory=pl.DataFrame)
    group_by: Sequence[str] = ()
    key: Sequence[str] = ()
    selected: dict[str, Any] | None = None
    markers: FabricMarkers = field(default_factory=FabricMarkers)
    cost_mode: str = ""


def _group_label(key: tuple[Any, ...]) -> str:
    return "/".join(str(k) for k in key)


def _groups(frame: pl.DataFrame, by: Sequence[str]) -> list[tuple[str, pl.DataFrame]]:
    if frame.is_empty():
        return []
    return [(_group_label(key), part) for key, part in frame.group_by(list(by), maintain_order=True)]


def _tick_days(v: float) -> str:
    return format_si(v) if v >= 1 else format_days(v)


def time_cost(view: FrontierView, log: bool) -> Drawing:
    """Cost to train against days to train, one series per group, points labelled with their GPU count; the
    selected row (matched on the key columns) is highlighted."""
    series: list[Series] = []
    picked: tuple[int, int] | None = None
    selected, key = view.selected, view.key
    for i, (label, part) in enumerate(_groups(view.rows, view.group_by)):
        part = part.sort("time_to_train_days")
        mark = view.markers.of(label)
        series.append(
            Series(
                label,
                part["time_to_train_days"].to_list(),
                part["cost_to_train_usd"].to_list(),
                [format_count(g) for g in part["gpus"].to_list()],
                glyph=mark.glyph,
                colour=mark.colour,
            )
        )
        if selected is not None:
            rows = part.select(key).rows()
            want = tuple(selected[k] for k in key)
            if want in rows:
                picked = (i, rows.index(want))
    x = Axis("days to train", _tick_days, log)
    y = Axis(f"cost to train ({view.cost_mode})" if view.cost_mode else "cost to train", format_money, log)
    return lambda w, h: scatter(series, x, y, w, h, selected=picked) if series else _empty(w)


def scaling(view: FrontierView, log: bool) -> Drawing:
    """Scaling efficiency (compute / step time) of the fastest configuration per fabric and GPU count."""
    series = []
    best = view.best
    for label, part in _groups(best, ["fabric"]):
        part = part.sort("gpus")
        mark = view.markers.of(label)
        series.append(
            Series(
                label,
                part["gpus"].to_list(),
                part["scaling_efficiency"].to_list(),
                [],
                glyph=mark.glyph,
                colour=mark.colour,
            )
        )
    counts = sorted(set(best["gpus"].to_list())) if not best.is_empty() else []
    x = Axis("GPUs", format_count, log=True, ticks=counts)
    y = Axis("scaling efficiency (share of a step spent computing)", format_percent, log)
    return lambda w, h: scatter(series, x, y, w, h) if series else _empty(w)


def breakdown(view: FrontierView, gpus: int | None) -> Drawing:
    """Where one step's time goes, per fabric (with its marker), at `gpus` GPUs (the fastest configuration of
    each)."""
    components = step_components()
    best = view.best
    if best.is_empty() or gpus is None:
        return lambda w, h: _empty(w)
    at = best.filter(pl.col("gpus") == gpus)
    rows = [(label, [float(part[c.name][0]) for c in components]) for label, part in _groups(at, ["fabric"])]
    marks = [(view.markers.glyph(label), view.markers.colour(label)) for label, _ in rows]

    def draw(w: int, h: int) -> list[Text]:
        title = Text(f"step time at {format_count(gpus)} GPUs, fastest layout per fabric", style="bold")
        labels = [c.label for c in components]
        return [title, *stacked_bars(rows, labels, w, h - 1, lambda v: format_si(v, "s"), marks)]

    return draw


def _empty(width: int) -> list[Text]:
    return [Text("no rows match the filter", style="dim")]


def tornado_lines(bars: Sequence[TornadoBar], gpus: int, width: int) -> list[Text]:
    """The tornado at one GPU count: per input, a bar from the break-even at its low end to its high end,
    around the break-even as given (│), widest first."""
    if not bars:
        return [Text(f"no sensitivity data at {format_count(gpus)} GPUs", style="dim")]
    base = bars[0].base
    lo = min(min(b.low, b.high) for b in bars if math.isfinite(b.low) and math.isfinite(b.high))
    hi = max(max(b.low, b.high) for b in bars if math.isfinite(b.low) and math.isfinite(b.high))
    name_w = max(len(b.input) for b in bars) + 1
    value_w = 16
    bar_w = max(10, width - name_w - 2 * value_w - 2)
    span = max(hi - lo, 1e-12)

    def col(v: float) -> int:
        return round((min(max(v, lo), hi) - lo) / span * (bar_w - 1))

    out = [Text(f"tornado at {format_count(gpus)} GPUs: break-even {base:.2f}x as each input moves", style="bold")]
    for i, b in enumerate(bars):
        cells = [" "] * bar_w
        a, z = sorted((col(b.low), col(b.high)))
        for k in range(a, z + 1):
            cells[k] = "█"
        cells[col(base)] = "│"
        line = Text(b.input.ljust(name_w))
        line.append(f"{b.low_label} {b.low:.2f}x".rjust(value_w - 1) + " ")
        line.append("".join(cells), COLORS[i % len(COLORS)])
        line.append(f" {b.high_label} {b.high:.2f}x")
        if b.flips_at:
            line.append(f"  flips at {b.flips_at}", "bold")
        out.append(line)
    return out
