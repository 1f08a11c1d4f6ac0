"""The status line: one line under the header that never cuts what matters (issue 21, D13).

The app hands it parts in reading order, each with a rank: rank 0 always shows, and when the line is wider than
the terminal the highest-ranked parts go first (the last of equal rank first), so that at 80 columns the
"esc cancels" of a sweep, the scenario's edits and the count of marks stay and the details go.

Down: `show(*parts)`. It posts nothing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from textual.events import Resize
from textual.widgets import Static

from scalefront.api import Filter, Progress, SweepResult, format_count, format_si

#: A part of the status line: its text (with its own leading space or punctuation) and its rank.
Part = tuple[str, int]


def fit(parts: Sequence[Part], width: int) -> str:
    """The parts that fit in `width` cells: parts of rank 2 and more are dropped, highest first (the last of equal
    rank first); then rank-1 parts are cut short (…) from the end; rank-0 parts always stay, cut only if they
    alone are too wide."""
    kept = list(parts)

    def length() -> int:
        return sum(len(t) for t, _ in kept)

    while length() > width and any(rank > 1 for _, rank in kept):
        worst = max((i for i, (_, rank) in enumerate(kept) if rank > 1), key=lambda i: (kept[i][1], i))
        del kept[worst]
    for i in reversed(range(len(kept))):
        text, rank = kept[i]
        excess = length() - width
        if excess > 0 and rank == 1:
            room = len(text) - excess - 1
            kept[i] = (text[:room] + "…" if room >= 8 else "", rank)
    text = "".join(t for t, _ in kept)
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def progress_parts(p: Progress) -> list[Part]:
    """A running sweep: how far, how fast, how long; "esc cancels" always."""
    share = p.done / p.total if p.total else 1.0
    parts: list[Part] = [(f"sweeping: {share:.0%} of {format_count(p.total)}", 0)]
    if p.eta_s is not None:
        parts.append((f", {p.eta_s:.0f} s left", 1))
    parts += [(f", {format_si(p.rate)}/s", 3), (f"; {format_count(p.feasible)} fit", 2), (" (esc cancels)", 0)]
    return parts


def done_parts(frontier_rows: int, result: SweepResult, edits: str) -> list[Part]:
    """A finished sweep: the frontier's size, then the edits it ran with, then the details."""
    return [
        (f"{format_count(frontier_rows)} on the frontier of {format_count(result.evaluated)} configurations", 0),
        (f" ({format_count(result.feasible)} fit)", 3),
        (f" in {result.wall_s:.2f} s", 4),
        (f"; edited: {edits}" if edits else "", 1),
    ]


def filter_parts(shown: int, rows: int, applied: Filter | None) -> list[Part]:
    """The filter in force: how many rows match it."""
    if applied is None:
        return [(f"{format_count(rows)} frontier rows (no filter)", 0)]
    return [
        (f"{format_count(shown)} of {format_count(rows)} frontier rows match {applied.text!r}", 0),
        (" (/ to change, empty to clear)", 2),
    ]


def marks_parts(marked: Sequence[dict[str, Any]]) -> list[Part]:
    """The marks: how many, the keys that use them, then which rows."""
    if not marked:
        return [("no rows marked (m marks a row)", 0)]
    names = ", ".join(f"{r['fabric']} {format_count(r['gpus'])}" for r in marked[:3])
    return [
        (f"marked {len(marked)}", 0),
        (" (3 compares, u unmarks all)", 1),
        (f": {names}{' ...' if len(marked) > 3 else ''}", 2),
    ]


class StatusLine(Static):
    """One line of parts, fitted to its width whenever the parts or the width change."""

    DEFAULT_CSS = """
    StatusLine {
        height: 1;
        padding: 0 1;
        background: $boost;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.parts: list[Part] = []

    @property
    def full_text(self) -> str:
        """Every part, whether or not it fits."""
        return "".join(t for t, _ in self.parts)

    def show(self, *parts: Part) -> None:
        self.parts = list(parts)
        self._fit()

    def _fit(self) -> None:
        width = self.content_size.width or (self.app.size.width - 2)
        self.update(fit(self.parts, width))

    def on_resize(self, event: Resize) -> None:
        self._fit()
