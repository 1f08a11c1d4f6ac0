"""The Charts tab: one chart at a time (time vs cost, scaling efficiency, the step-time breakdown)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, cast

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Static

from scalefront_tui.widgets.chart import Chart
from scalefront_tui.widgets.figures import breakdown, scaling, time_cost
from scalefront_tui.widgets.frame_table import FrameTable

if TYPE_CHECKING:
    from scalefront_tui.app import ScalefrontApp


def _app(widget: Any) -> ScalefrontApp:
    return cast("ScalefrontApp", widget.app)


class ChartsPane(Vertical):
    """One chart at a time: `c` switches, `l` toggles log axes, `[`/`]` the breakdown's GPU count, j/k the
    selected point (the frontier table's cursor)."""

    KINDS: ClassVar[list[tuple[str, str]]] = [
        ("time", "time vs cost"),
        ("scaling", "scaling efficiency"),
        ("breakdown", "step-time breakdown"),
    ]
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "next_chart", "Next chart"),
        Binding("l", "log", "Log axes"),
        Binding("left_square_bracket", "gpus(-1)", "Fewer GPUs"),
        Binding("right_square_bracket", "gpus(1)", "More GPUs"),
        Binding("j,down", "select(1)", "Next point", show=False),
        Binding("k,up", "select(-1)", "Previous point", show=False),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.kind = "time"
        self.log_axes = False
        self.gpus: int | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="chart-title")
        yield Chart(id="chart")

    def redraw(self) -> None:
        app = _app(self)
        names = "  ".join(f"[reverse] {label} [/]" if k == self.kind else label for k, label in self.KINDS)
        extra = "  [dim]c: next  l: log axes" + ("  [ ]: GPUs" if self.kind == "breakdown" else "") + "[/dim]"
        self.query_one("#chart-title", Static).update(names + extra)
        counts = sorted(set(app.best_shown["gpus"].to_list())) if not app.best_shown.is_empty() else []
        if self.gpus not in counts:
            selected = app.selected_record()
            self.gpus = (
                selected["gpus"] if selected and selected["gpus"] in counts else (counts[-1] if counts else None)
            )
        chart = self.query_one("#chart", Chart)
        if self.kind == "time":
            chart.show(time_cost(app.shown, app.group_by, app.selected_record(), self.log_axes, app.row_key))
        elif self.kind == "scaling":
            chart.show(scaling(app.best_shown, self.log_axes))
        else:
            chart.show(breakdown(app.best_shown, self.gpus))

    def action_next_chart(self) -> None:
        kinds = [k for k, _ in self.KINDS]
        self.kind = kinds[(kinds.index(self.kind) + 1) % len(kinds)]
        self.redraw()

    def action_log(self) -> None:
        self.log_axes = not self.log_axes
        self.redraw()

    def action_gpus(self, step: int) -> None:
        app = _app(self)
        counts = sorted(set(app.best_shown["gpus"].to_list())) if not app.best_shown.is_empty() else []
        if counts and self.gpus in counts:
            self.gpus = counts[max(0, min(len(counts) - 1, counts.index(self.gpus) + step))]
        self.redraw()

    def action_select(self, step: int) -> None:
        table = _app(self).query_one("#frontier-table", FrameTable)
        if table.row_count:
            table.move_cursor(row=max(0, min(table.row_count - 1, table.cursor_row + step)), animate=False)
