"""The Serving tab (key 6): what the scenario's cluster serves. The Pareto frontier of output tokens per second per
GPU against time per output token, per fabric (one marker and colour per fabric, as in every table), for the
scenario's model at the default serving workload (`scalefront.api.serving_sweep` says which), under two SLO
fields (TPOT <= ms, TTFT <= s), with the selected layout's detail below the table. An SLO on TPOT refilters the
frontier as held; one on TTFT sweeps again (fast: one sweep is 168 layouts). Nothing meeting the SLOs shows why.
`c` shows the frontier as a chart instead of the table (TPOT against tokens/s per GPU, a line and marker per
fabric, the cursor row highlighted); `e` (the app's) exports it as shown."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import polars as pl
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Input, Label, Static

from scalefront.api import (
    SERVING_COLUMNS,
    ScalefrontError,
    ScenarioDraft,
    ServingSweep,
    ServingView,
    message_of,
    parse_number,
    serving_columns,
    serving_sweep,
)
from scalefront_tui.widgets.chart import Chart
from scalefront_tui.widgets.fields import Field
from scalefront_tui.widgets.markers import FabricMarkers
from scalefront_tui.widgets.plot import Axis, Series, scatter

#: The SLO fields: id, label, the metric it bounds, the unit typed (its factor to seconds).
SLO_FIELDS = (("slo-tpot", "TPOT <=", "tpot_s", "ms", 1e-3), ("slo-ttft", "TTFT <=", "ttft_s", "s", 1.0))
#: How the table shows a column: the header's unit, the factor from the metric's unit, the format (the text of
#: `scalefront inference --scenario`'s frontier table).
_SHOWN = {
    "ttft_s": ("ms", 1e3, "{:,.1f}"),
    "tpot_s": ("ms", 1e3, "{:,.2f}"),
    "output_tokens_per_s_per_gpu": ("", 1.0, "{:,.0f}"),
    "cost_usd_per_million_tokens": ("", 1.0, "{:,.3f}"),
    "concurrent_sequences": ("", 1.0, "{:,.0f}"),
}


def cell(name: str, value: Any) -> str:
    """A frontier value as the table shows it (seconds in ms, the unit in the header)."""
    if name not in _SHOWN:
        return str(value)
    _, factor, fmt = _SHOWN[name]
    return fmt.format(value * factor)


def headers() -> list[str]:
    """The table's headers, each with its unit (tok/s/GPU and $/Mtok carry theirs)."""
    return [f"{s.label} {_SHOWN.get(s.name, ('',))[0]}".strip() for s in serving_columns()]


class ServingPane(Vertical):
    """SLO fields, the serving frontier per fabric, the selected layout's detail (or why the frontier is empty)."""

    DEFAULT_CSS = """
    ServingPane #serving-slos { height: 1; }
    ServingPane #serving-slos Label { width: auto; padding: 0 1 0 0; }
    ServingPane #serving-slos Field { width: 9; margin: 0 1 0 0; }
    ServingPane #serving-table { height: 1fr; min-height: 4; }
    ServingPane #serving-chart { height: 1fr; min-height: 8; display: none; }
    ServingPane #serving-detail { height: auto; }
    ServingPane #serving-note { height: auto; color: $text-muted; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "edit_slo", "SLO"),
        Binding("c", "toggle_chart", "Chart"),
        Binding("j", "cursor('down')", "Down", show=False),
        Binding("k", "cursor('up')", "Up", show=False),
        Binding("g", "cursor('top')", "Top", show=False),
        Binding("G", "cursor('bottom')", "Bottom", show=False),
    ]

    def __init__(self, draft: ScenarioDraft, markers: FabricMarkers, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.markers = markers
        self.sweep: ServingSweep = serving_sweep(draft)
        self.view: ServingView | None = None
        #: Sweeps and refilters shown (tests wait on it).
        self.updates = 0
        #: The frontier shown as a chart instead of the table.
        self.charted = False

    def compose(self) -> ComposeResult:
        with Horizontal(id="serving-slos"):
            for field_id, label, _, unit, _ in SLO_FIELDS:
                yield Label(label)
                yield Field(placeholder="any", id=field_id)
                yield Label(unit)
        yield Static("", id="serving-note")
        table: DataTable[Any] = DataTable(id="serving-table", cursor_type="row", zebra_stripes=True)
        yield table
        yield Chart(id="serving-chart")
        yield Static("", id="serving-detail")

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns(*headers())

    def on_show(self) -> None:
        if self.view is None:
            self.refresh_view()

    def load_scenario(self, draft: ScenarioDraft) -> None:
        """Serve `draft`'s model from now on (the scenario as run); swept again when the tab shows."""
        self.sweep = serving_sweep(draft)
        self.view = None
        if self.is_on_screen:
            self.refresh_view()

    def slos(self) -> list[tuple[str, str, float]] | str:
        """The SLO fields as bounds, or the problem with one (text)."""
        out = []
        for field_id, label, metric, unit, factor in SLO_FIELDS:
            text = self.query_one(f"#{field_id}", Field).value.strip()
            if not text:
                continue
            try:
                value = parse_number(text)
            except ValueError:
                return f"{label} {text!r} {unit}: not a number"
            if value <= 0:
                return f"{label} {text} {unit}: give a positive number (empty: no bound)"
            out.append((metric, "<=", value * factor))
        return out

    def refresh_view(self) -> None:
        """Show the frontier under the SLO fields' bounds."""
        slos = self.slos()
        if isinstance(slos, str):
            self.query_one("#serving-detail", Static).update(Text(slos, style="bold red"))
            return
        try:
            self.view = self.sweep.view(slos)
        except ScalefrontError as err:
            self.view = None
            self.query_one("#serving-detail", Static).update(Text(message_of(err), style="bold red"))
            return
        self._fill(self.view)
        self.updates += 1

    def _fill(self, view: ServingView) -> None:
        table = self.query_one(DataTable)
        table.clear()
        for row in view.frame.iter_rows(named=True):
            cells: list[Any] = [cell(n, row[n]) for n in SERVING_COLUMNS]
            cells[0] = self.markers.of(row["fabric"]).label()
            table.add_row(*cells)
        how = "refiltered" if view.slos and not view.rerun else "swept"
        self.query_one("#serving-note", Static).update(f"{self.sweep.describe()}: {how}")
        self._show_detail()

    def _show_detail(self) -> None:
        detail = self.query_one("#serving-detail", Static)
        view = self.view
        if view is None:
            return
        cursor = max(self.query_one(DataTable).cursor_row, 0)
        self.query_one("#serving-chart", Chart).show(serving_chart(view.frame, self.markers, cursor))
        if view.frame.is_empty():
            detail.update(Text(view.message, style="bold"))
            return
        row = view.frame.row(max(self.query_one(DataTable).cursor_row, 0), named=True)
        detail.update(detail_text(row, self.markers))

    @on(DataTable.RowHighlighted, "#serving-table")
    def _row_moved(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self._show_detail()

    @on(Input.Submitted)
    def _slo_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.refresh_view()
        self.query_one(DataTable).focus()

    def action_edit_slo(self) -> None:
        self.query_one("#slo-tpot", Field).focus()

    def action_toggle_chart(self) -> None:
        """The frontier as a chart, or back to the table (the cursor, the detail and `e` are the same)."""
        self.charted = not self.charted
        table, chart = self.query_one(DataTable), self.query_one("#serving-chart", Chart)
        table.display, chart.display = not self.charted, self.charted
        (chart if self.charted else table).focus()

    def action_cursor(self, where: str) -> None:
        table = self.query_one(DataTable)
        {"down": table.action_cursor_down, "up": table.action_cursor_up}.get(where, lambda: None)()
        if where in ("top", "bottom"):
            table.move_cursor(row=0 if where == "top" else table.row_count - 1)


def detail_text(row: dict[str, Any], markers: FabricMarkers) -> Text:
    """The selected layout: fabric and layout, latency, throughput and cost, batch and memory per GPU."""
    marker = markers.of(row["fabric"])
    mode = "disaggregated" if row["mode"] == "disaggregated" else "co-located"
    return Text.assemble(
        (marker.glyph, marker.colour),
        f" {row['fabric']}  {row['layout']} {mode}: {row['instances']} x {row['instance_gpus']} GPUs\n",
        f"TTFT {cell('ttft_s', row['ttft_s'])} ms (p99 {cell('ttft_s', row['ttft_p99_s'])} ms)  "
        f"TPOT {cell('tpot_s', row['tpot_s'])} ms  {row['output_tokens_per_s_per_gpu']:,.0f} tok/s/GPU  "
        f"${row['cost_usd_per_million_tokens']:,.3f}/Mtok\n",
        f"batch {row['concurrent_sequences']:,.0f} (max {row['max_batch']:,.0f})  "
        f"KV cache {row['kv_cache_bytes'] / 1e9:,.1f} GB/GPU  weights {row['weights_bytes'] / 1e9:,.1f} GB/GPU",
    )


def serving_chart(frame: pl.DataFrame, markers: FabricMarkers, cursor: int) -> Callable[[int, int], list[Text]]:
    """The frontier drawn: TPOT (ms) against output tokens/s per GPU, one line per fabric with its marker and
    colour, the frontier row at `cursor` highlighted (a drawing function of the width and height)."""
    series: list[Series] = []
    selected: tuple[int, int] | None = None
    if frame.is_empty():
        return lambda w, h: [Text("no serving layout to draw", style="dim")]
    for i, (key, part) in enumerate(frame.with_row_index("row").group_by("fabric", maintain_order=True)):
        part = part.sort("output_tokens_per_s_per_gpu")
        mark = markers.of(str(key[0]))
        xs, ys = part["output_tokens_per_s_per_gpu"].to_list(), [t * 1e3 for t in part["tpot_s"].to_list()]
        series.append(Series(str(key[0]), xs, ys, glyph=mark.glyph, colour=mark.colour))
        rows = part["row"].to_list()
        if cursor in rows:
            selected = (i, rows.index(cursor))
    x = Axis("output tokens/s per GPU", lambda v: f"{v:,.0f}")
    y = Axis("TPOT ms", lambda v: f"{v:,.1f}")
    return lambda w, h: scatter(series, x, y, w, h, selected=selected)
