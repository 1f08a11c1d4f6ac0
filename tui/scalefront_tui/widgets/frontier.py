"""The Frontier tab: the filter line with the cost's basis beside it, the frontier table and (on tall terminals)
the time-vs-cost chart.

Up: `FilterApplied` when the user applies a filter (the filter line posts it to the app); the table's own
messages (`FrameTable.Changed`, the row cursor's `DataTable` events). Down: `load(...)` the rows, `show(view)`
the chart, `accept_filter` / `reject_filter` the app's verdict on a filter."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import polars as pl
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Input, Static

from scalefront.api import ColumnSpec
from scalefront_tui.messages import FilterApplied
from scalefront_tui.widgets.chart import Chart
from scalefront_tui.widgets.fields import Field
from scalefront_tui.widgets.figures import FrontierView, time_cost
from scalefront_tui.widgets.frame_table import FrameTable

#: The frontier table's columns, in the order they get room: at 80 columns fabric, GPUs, days, cost, MFU and
#: the layout; wider terminals add the rest in turn (`c` chooses any column of the schema).
FRONTIER_COLUMNS = [
    "fabric",
    "gpus",
    "time_to_train_days",
    "cost_to_train_usd",
    "mfu",
    "layout",
    "topology_label",
    "gpu",
    "step_time_s",
    "usd_per_million_tokens",
    "recompute",
    "zero",
    "micro_batch",
    "overlap",
    "network_capex_usd",
    "energy_mwh",
    "goodput",
    "memory_per_gpu_gb",
]
#: The columns whose money depends on the scenario's cost mode: their headers say which, "cost (rent)" (D10).
COST_COLUMNS = ("cost_to_train_usd", "cost_to_train_usd_lo", "cost_to_train_usd_hi", "usd_per_million_tokens")
#: What each cost mode counts, beside the filter (rent mode leaves the network's price out).
BASIS = {
    "rent": "[b]cost: rent[/b] (network prices not in it)  [dim]o: own[/dim]",
    "own": "[b]cost: own[/b] (capex with network, energy)  [dim]o: rent[/dim]",
}


class FrontierPane(Vertical):
    """The filter line, the frontier table and (on tall terminals) the time-vs-cost chart."""

    DEFAULT_CSS = """
    FrontierPane {
        height: 1fr;
    }
    FrontierPane #filter-row {
        height: 1;
        margin: 0 1;
    }
    FrontierPane #filter {
        width: 1fr;
    }
    FrontierPane #basis {
        width: auto;
        margin-left: 1;
    }
    FrontierPane #frontier-table {
        height: 1fr;
    }
    FrontierPane #frontier-chart {
        display: none;
    }
    /* Tall terminals (the app's -tall breakpoint): the chart below the table. */
    .-tall FrontierPane #frontier-table {
        height: 1fr;
        max-height: 50%;
    }
    .-tall FrontierPane #frontier-chart {
        display: block;
        height: 1fr;
        padding: 0 1;
    }
    """
    #: Not scoped to the pane: the tall-terminal rules start at the screen, which carries the breakpoint class.
    SCOPED_CSS = False

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        #: The filter in force, as the app last accepted it: esc in the filter line shows it again.
        self._in_force = ""

    def compose(self) -> ComposeResult:
        with Horizontal(id="filter-row"):
            yield Field(placeholder="/ filter: days<10 fabric=ib cost<$2M", id="filter")
            yield Static("", id="basis")
        yield FrameTable(FRONTIER_COLUMNS, id="frontier-table", header_lines=2)
        yield Chart(id="frontier-chart")

    def load(self, rows: pl.DataFrame, specs: Sequence[ColumnSpec], cost_mode: str, *, mixed_gpus: bool) -> None:
        """Show `rows` (described by `specs`): the cost headers and the note beside the filter say the cost mode;
        when the frontier mixes GPU types, the GPU column gets room right after the fabric (at 80 columns too)."""
        shown = [
            dataclasses.replace(s, label=f"{s.label} ({cost_mode})") if s.name in COST_COLUMNS and cost_mode else s
            for s in specs
        ]
        table = self.table
        first = ["fabric", "gpu"] if mixed_gpus else ["fabric"]
        table.priority = [*first, *[c for c in FRONTIER_COLUMNS if c not in first]]
        self.query_one("#basis", Static).update(BASIS.get(cost_mode, ""))
        table.load(rows, shown)

    def on_mount(self) -> None:
        """Enter in the filter line: the app applies the filter (`FilterApplied`) and the table takes the focus,
        before any key typed after the Enter."""
        field = self.query_one("#filter", Field)
        field.focus_on_submit = self.table
        field.message_on_submit = FilterApplied

    @property
    def table(self) -> FrameTable:
        """The frontier table: its `frame` is the rows shown, in their order."""
        return self.query_one("#frontier-table", FrameTable)

    def show(self, view: FrontierView) -> None:
        """Draw the time-vs-cost chart below the table (shown on tall terminals)."""
        self.query_one("#frontier-chart", Chart).show(time_cost(view, False))

    def step_cursor(self, step: int) -> None:
        """Move the table's cursor `step` rows (kept inside the table)."""
        table = self.table
        if table.row_count:
            table.move_cursor(row=max(0, min(table.row_count - 1, table.cursor_row + step)), animate=False)

    def accept_filter(self, in_force: str) -> None:
        """The app applied the filter line's text; `in_force` is the filter as it reads it ("" for none)."""
        self._in_force = in_force
        self.query_one("#filter", Field).remove_class("invalid")

    def reject_filter(self) -> None:
        """The app could not parse the filter line (it says why in the status line); the old filter stays, and the
        line keeps the focus to be corrected."""
        field = self.query_one("#filter", Field)
        field.add_class("invalid")
        field.screen.set_focus(field)

    def set_filter(self, text: str) -> None:
        """Write `text` into the filter line (to apply it, the app calls `accept_filter`)."""
        self.query_one("#filter", Field).value = text

    def focus_filter(self) -> None:
        """Give the filter line the focus now, so that the keys typed right after `/` land in it (D14)."""
        field = self.query_one("#filter", Field)
        field.screen.set_focus(field)

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        event.stop()  # the field told the app already (`message_on_submit`)

    @on(Field.Left, "#filter")
    def _filter_left(self, event: Field.Left) -> None:
        """Esc in the filter line: it shows the filter in force again (the app then focuses the table)."""
        event.field.value = self._in_force
        event.field.remove_class("invalid")
