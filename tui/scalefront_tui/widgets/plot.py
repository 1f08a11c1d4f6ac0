"""Charts drawn with characters, for any terminal size: a scatter/line chart (one series per fabric, points
labelled, overlapping points shown as such, the selected point highlighted, linear or log axes, the legend
on its own line so that it never covers data) and a horizontal stacked bar chart.

The functions here are pure: data and a size in, lines of rich Text out; the widgets in charts.py show them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from rich.text import Text

from scalefront_tui.widgets.markers import SLOTS

#: Series without a marker of their own: a glyph and a colour by position (readable on dark and light themes).
MARKERS = tuple(slot[0] for slot in SLOTS)
COLORS = tuple(slot[2] for slot in SLOTS)
OVERLAP = "⊕"
SELECTED = "◉"
LINE = "·"
#: Fill of the bar chart's components: a glyph each, never repeated (they read without colour too), and a colour.
SHADES = ("█", "▓", "▒", "░", "▚", "▞", "▄", "▀", "▌", "▐", "#", "=")


@dataclass(frozen=True)
class Series:
    """Points of one series (sorted by x when drawn as a line); `tags` label the points (may be empty)."""

    label: str
    xs: Sequence[float]
    ys: Sequence[float]
    tags: Sequence[str] = ()
    line: bool = True
    #: The series' own marker and colour (a fabric's, from markers.py); empty: by its position.
    glyph: str = ""
    colour: str = ""


def _glyph(series: Sequence[Series], i: int) -> str:
    return series[i].glyph or MARKERS[i % len(MARKERS)]


def _colour(series: Sequence[Series], i: int) -> str:
    return series[i].colour or COLORS[i % len(COLORS)]


@dataclass(frozen=True)
class Axis:
    title: str
    fmt: Callable[[float], str]
    log: bool = False
    #: Tick positions to use instead of computed ones (e.g. the GPU counts present).
    ticks: Sequence[float] | None = None


@dataclass
class _Grid:
    width: int
    height: int
    chars: list[list[str]] = field(default_factory=list)
    styles: list[list[str]] = field(default_factory=list)
    #: What occupies a cell: "" empty, "line", "label", "point".
    kind: list[list[str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.chars = [[" "] * self.width for _ in range(self.height)]
        self.styles = [[""] * self.width for _ in range(self.height)]
        self.kind = [[""] * self.width for _ in range(self.height)]

    def put(self, row: int, col: int, char: str, style: str, kind: str) -> None:
        self.chars[row][col] = char
        self.styles[row][col] = style
        self.kind[row][col] = kind

    def line(self, row: int) -> Text:
        text = Text()
        for char, style in zip(self.chars[row], self.styles[row], strict=True):
            text.append(char, style or None)
        return text


def _transform(axis: Axis) -> Callable[[float], float]:
    return (lambda v: math.log10(v) if v > 0 else math.nan) if axis.log else (lambda v: v)


def _nice_ticks(lo: float, hi: float, log: bool, count: int) -> list[float]:
    """Round tick values inside [lo, hi] (in data units), about `count` of them."""
    if log:
        a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
        ticks = [m * 10.0**e for e in range(a, b + 1) for m in (1, 2, 5)]
        inside = [t for t in ticks if lo <= t <= hi]
        if len(inside) > count:
            inside = [t for t in inside if math.log10(t) == round(math.log10(t))] or inside[:: len(inside) // count]
        return inside or [lo, hi]
    span = hi - lo
    raw = span / max(1, count)
    mag = 10.0 ** math.floor(math.log10(raw)) if raw > 0 else 1.0
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step + 1e-9) + 1)]


def _bounds(values: list[float], axis: Axis) -> tuple[float, float]:
    t = _transform(axis)
    finite = [v for v in values if math.isfinite(t(v))]
    if not finite:
        return (1.0, 10.0) if axis.log else (0.0, 1.0)
    lo, hi = min(finite), max(finite)
    if axis.log:
        if lo == hi:
            return lo / 1.5, hi * 1.5
        pad = (math.log10(hi) - math.log10(lo)) * 0.06
        return 10 ** (math.log10(lo) - pad), 10 ** (math.log10(hi) + pad)
    if lo == hi:
        return (lo - 1, hi + 1) if lo == 0 else (lo - abs(lo) * 0.1, hi + abs(hi) * 0.1)
    pad = (hi - lo) * 0.06
    return lo - pad, hi + pad


def legend_lines(entries: Sequence[tuple[str, str, str]], width: int) -> list[Text]:
    """`(marker, style, label)` entries laid out on as few lines of `width` as they need."""
    lines: list[Text] = [Text()]
    for marker, style, label in entries:
        piece = Text()
        piece.append(marker, style)
        piece.append(f" {label}")
        if lines[-1].cell_len and lines[-1].cell_len + 2 + piece.cell_len > width:
            lines.append(Text())
        if lines[-1].cell_len:
            lines[-1].append("  ")
        lines[-1].append_text(piece)
    return lines


@dataclass(frozen=True)
class _Scale:
    """Where data lands: the axes, the data bounds they span and the plot area's size in cells."""

    x: Axis
    y: Axis
    x_lo: float
    x_hi: float
    y_lo: float
    y_hi: float
    width: int
    height: int

    def cell(self, xv: float, yv: float) -> tuple[int, int] | None:
        """The (row, column) of a data point, or None outside the plot (or not drawable: log of <= 0)."""
        tx, ty = _transform(self.x), _transform(self.y)
        fx = (tx(xv) - tx(self.x_lo)) / (tx(self.x_hi) - tx(self.x_lo))
        fy = (ty(yv) - ty(self.y_lo)) / (ty(self.y_hi) - ty(self.y_lo))
        if not (math.isfinite(fx) and math.isfinite(fy)) or not (0 <= fx <= 1 and 0 <= fy <= 1):
            return None
        return self.height - 1 - round(fy * (self.height - 1)), round(fx * (self.width - 1))


def scatter(
    series: Sequence[Series],
    x: Axis,
    y: Axis,
    width: int,
    height: int,
    *,
    selected: tuple[int, int] | None = None,
) -> list[Text]:
    """A chart of `series` in `width` x `height` cells: legend line(s), y title, the plot with its y ticks, the
    x axis with ticks and title. `selected` is (series index, point index) to highlight."""
    entries = [(_glyph(series, i), _colour(series, i), s.label) for i, s in enumerate(series)]
    legend = legend_lines([*entries, (OVERLAP, "bold", "several"), (SELECTED, "reverse", "selected")], width)
    plot_h = max(3, height - len(legend) - 4)  # the y title above, the axis, tick labels and x title below
    x_lo, x_hi = _bounds([v for s in series for v in s.xs], x)
    y_lo, y_hi = _bounds([v for s in series for v in s.ys], y)
    y_ticks = list(y.ticks) if y.ticks is not None else _nice_ticks(y_lo, y_hi, y.log, max(3, plot_h * 2 // 5))
    y_labels = [y.fmt(v) for v in y_ticks]
    margin = max([len(s) for s in y_labels] + [1]) + 1
    scale = _Scale(x, y, x_lo, x_hi, y_lo, y_hi, max(4, width - margin), plot_h)
    grid = _marks(series, scale, selected)
    lines = [*legend, Text(y.title, style="bold"), *_plot_rows(grid, scale, y_ticks, y_labels, margin)]
    lines += _x_axis(x, x_lo, x_hi, scale.cell, margin, scale.width, y_lo)
    return [line[:width] if line.cell_len > width else line for line in lines[:height]]


def _marks(series: Sequence[Series], scale: _Scale, selected: tuple[int, int] | None) -> _Grid:
    """The plot area: each series' line, then its points (⊕ where two series share a cell), their tags, and the
    selected point over everything."""
    grid = _Grid(scale.width, scale.height)
    placed = [[scale.cell(a, b) for a, b in zip(s.xs, s.ys, strict=True)] for s in series]
    for i, (s, cells) in enumerate(zip(series, placed, strict=True)):
        if s.line:
            _line(grid, cells, _colour(series, i))
    _points(grid, series, placed)
    for i, (s, cells) in enumerate(zip(series, placed, strict=True)):
        for tag, c in zip(s.tags, cells, strict=False):
            if c is not None and tag:
                _label(grid, c, tag, _colour(series, i))
    if selected is not None and selected[0] < len(placed) and selected[1] < len(placed[selected[0]]):
        c = placed[selected[0]][selected[1]]
        if c is not None:
            grid.put(c[0], c[1], SELECTED, f"reverse bold {_colour(series, selected[0])}", "point")
    return grid


def _line(grid: _Grid, cells: Sequence[tuple[int, int] | None], style: str) -> None:
    """Dots between a series' points, left to right, over empty cells only."""
    order = sorted((c for c in cells if c is not None), key=lambda c: c[1])
    for (r0, c0), (r1, c1) in itertools.pairwise(order):
        steps = max(abs(r1 - r0), abs(c1 - c0))
        for k in range(1, steps):
            row, col = round(r0 + (r1 - r0) * k / steps), round(c0 + (c1 - c0) * k / steps)
            if grid.kind[row][col] == "":
                grid.put(row, col, LINE, style, "line")


def _points(grid: _Grid, series: Sequence[Series], placed: Sequence[Sequence[tuple[int, int] | None]]) -> None:
    """Each series' marker at its points; a cell that two series share gets the overlap glyph."""
    owner: dict[tuple[int, int], int] = {}
    for i, cells in enumerate(placed):
        for c in cells:
            if c is None:
                continue
            if c in owner and owner[c] != i:
                grid.put(c[0], c[1], OVERLAP, "bold", "point")
                owner[c] = -1
            elif c not in owner:
                grid.put(c[0], c[1], _glyph(series, i), _colour(series, i), "point")
                owner[c] = i


def _plot_rows(grid: _Grid, scale: _Scale, ticks: Sequence[float], labels: Sequence[str], margin: int) -> list[Text]:
    """The plot area's rows behind the y axis, a tick label where a tick falls."""
    tick_rows = {}
    for v, label in zip(ticks, labels, strict=True):
        c = scale.cell(scale.x_lo, v)
        if c is not None:
            tick_rows[c[0]] = label
    rows = []
    for r in range(scale.height):
        row = Text(tick_rows.get(r, "").rjust(margin - 1) + ("┤" if r in tick_rows else "│"), style="dim")
        row.append_text(grid.line(r))
        rows.append(row)
    return rows


def _label(grid: _Grid, at: tuple[int, int], tag: str, style: str) -> None:
    """Write `tag` right of the point, else left of it, over empty cells or line dots only; else nothing."""
    r, c = at
    for start in (c + 1, c - len(tag)):
        span = range(start, start + len(tag))
        if start >= 0 and span.stop <= grid.width and all(grid.kind[r][k] in ("", "line") for k in span):
            for k, ch in zip(span, tag, strict=True):
                grid.put(r, k, ch, f"{style} dim", "label")
            return


def _x_axis(
    x: Axis,
    lo: float,
    hi: float,
    cell: Callable[[float, float], tuple[int, int] | None],
    margin: int,
    plot_w: int,
    y_any: float,
) -> list[Text]:
    ticks = list(x.ticks) if x.ticks is not None else _nice_ticks(lo, hi, x.log, max(2, plot_w // 12))
    axis = ["─"] * plot_w
    labels = [" "] * (plot_w + margin)
    last_end = -1
    for v in ticks:
        c = cell(v, y_any) if lo <= v <= hi else None
        if c is None:
            continue
        col = c[1]
        axis[col] = "┬"
        text = x.fmt(v)
        start = min(max(0, margin + col - len(text) // 2), plot_w + margin - len(text))
        if start > last_end:
            labels[start : start + len(text)] = list(text)
            last_end = start + len(text)
    title = Text(x.title, style="bold")
    return [
        Text(" " * (margin - 1) + "└" + "".join(axis), style="dim"),
        Text("".join(labels), style="dim"),
        Text(" " * max(0, margin + plot_w - len(x.title))) + title,
    ]


def stacked_bars(
    rows: Sequence[tuple[str, Sequence[float]]],
    components: Sequence[str],
    width: int,
    height: int,
    fmt: Callable[[float], str],
    marks: Sequence[tuple[str, str]] = (),
) -> list[Text]:
    """One horizontal bar per row, split into `components` (same order as each row's values), scaled to the
    largest total, the total printed after the bar; a legend of the components that are not zero everywhere.
    `marks` are the rows' (glyph, colour), drawn before their labels."""
    used = [i for i in range(len(components)) if any(r[1][i] > 0 for r in rows)]
    styles = {i: (SHADES[k % len(SHADES)], COLORS[k % len(COLORS)]) for k, i in enumerate(used)}
    legend = legend_lines([(styles[i][0], styles[i][1], components[i]) for i in used], width)
    labels = [Text.assemble((m[0], m[1]), f" {r[0]}") for r, m in zip(rows, marks, strict=True)] if marks else []
    labels = labels or [Text(r[0]) for r in rows]
    label_w = max([t.cell_len for t in labels] + [1]) + 1
    totals = [sum(r[1]) for r in rows]
    total_w = max([len(fmt(t)) for t in totals] + [1]) + 1
    bar_w = max(4, width - label_w - total_w)
    top = max([*totals, 0.0])
    lines = list(legend)
    gap = max(0, (height - len(legend) - len(rows)) // max(1, len(rows)))
    for (_, values), label, total in zip(rows, labels, totals, strict=True):
        line = label.copy()
        line.append(" " * (label_w - label.cell_len))
        filled = 0.0
        drawn = 0
        for i in used:
            filled += values[i] / top * bar_w if top > 0 else 0.0
            cells = round(filled) - drawn
            if cells > 0:
                line.append(styles[i][0] * cells, styles[i][1])
                drawn += cells
        line.append(" " + fmt(total))
        lines.append(line)
        lines += [Text("")] * min(gap, 1)
    return lines[:height]
