"""The Charts tab: one chart at a time (time vs cost, scaling efficiency, the step-time breakdown), drawn from the
frontier as the app shows it.

Up: `PointSelected` when the user moves the selected point (j/k). Down: `show(view)` the frontier shown."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Static

from scalefront_tui.messages import PointSelected
from scalefront_tui.widgets.chart import Chart
from scalefront_tui.widgets.figures import FrontierView, breakdown, scaling, time_cost


class ChartsPane(Vertical):
    """One chart at a time: `c` switches, `l` toggles log axes, `[`/`]` the breakdown's GPU count, j/k the
    selected point (the frontier table's cursor)."""

    DEFAULT_CSS = """
    ChartsPane {
        height: 1fr;
    }
    ChartsPane #chart-title {
        height: 1;
        padding: 0 1;
    }
    ChartsPane #chart {
        height: 1fr;
        padding: 0 1;
    }
    """

    KINDS: ClassVar[list[tuple[str, str]]] = [
        ("time", "time vs cost"),
        ("scaling", "scaling efficiency"),
        ("breakdown", "step-time breakdown"),
    ]
    #: The footer's keys fit beside the app's at 80 columns: log axes only where there are axes, the GPU count
    #: only on the breakdown.
    GPUS = Binding.Group("GPUs", compact=True)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "next_chart", "Next chart"),
        Binding("l", "log", "Log axes"),
        Binding("left_square_bracket", "gpus(-1)", "Fewer GPUs", group=GPUS),
        Binding("right_square_bracket", "gpus(1)", "More GPUs", group=GPUS),
        Binding("j,down", "select(1)", "Next point", show=False),
        Binding("k,up", "select(-1)", "Previous point", show=False),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.kind = "time"
        self.log_axes = False
        self.gpus: int | None = None
        #: What the charts draw (none until the app shows a frontier).
        self.view = FrontierView()

    def compose(self) -> ComposeResult:
        yield Static("", id="chart-title")
        yield Chart(id="chart")

    def show(self, view: FrontierView) -> None:
        """Draw the frontier as shown: its rows, filter or selected point changed."""
        self.view = view
        self.redraw()

    def redraw(self) -> None:
        names = "  ".join(f"[reverse] {label} [/]" if k == self.kind else label for k, label in self.KINDS)
        extra = "  [dim]c: next  l: log axes" + ("  [ ]: GPUs" if self.kind == "breakdown" else "") + "[/dim]"
        self.query_one("#chart-title", Static).update(names + extra)
        counts = self._gpu_counts()
        if self.gpus not in counts:
            selected = self.view.selected
            self.gpus = (
                selected["gpus"] if selected and selected["gpus"] in counts else (counts[-1] if counts else None)
            )
        chart = self.query_one("#chart", Chart)
        if self.kind == "time":
            chart.show(time_cost(self.view, self.log_axes))
        elif self.kind == "scaling":
            chart.show(scaling(self.view, self.log_axes))
        else:
            chart.show(breakdown(self.view, self.gpus))

    def _gpu_counts(self) -> list[int]:
        best = self.view.best
        return sorted(set(best["gpus"].to_list())) if not best.is_empty() else []

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "log":
            return self.kind != "breakdown"
        if action == "gpus":
            return self.kind == "breakdown"
        return True

    def action_next_chart(self) -> None:
        kinds = [k for k, _ in self.KINDS]
        self.kind = kinds[(kinds.index(self.kind) + 1) % len(kinds)]
        self.refresh_bindings()
        self.redraw()

    def action_log(self) -> None:
        self.log_axes = not self.log_axes
        self.redraw()

    def action_gpus(self, step: int) -> None:
        counts = self._gpu_counts()
        if counts and self.gpus in counts:
            self.gpus = counts[max(0, min(len(counts) - 1, counts.index(self.gpus) + step))]
        self.redraw()

    def action_select(self, step: int) -> None:
        self.post_message(PointSelected(step))
