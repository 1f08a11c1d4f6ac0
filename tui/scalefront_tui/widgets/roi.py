"""The ROI tab: is fabric A worth it over fabric B for the scenario as run? The verdict on top (payback, break-even
premium with its P10-P90 band, what flips the answer), the what-if inputs a buyer changes (each fabric's network
price, the server price, rent, $/kWh, PUE, years, utilisation, own or rent), a table per GPU count that follows
every change, and the tornado with flip values on request.

Comparisons run in a worker thread; while one runs, later changes are collected and the newest is run next
(never a pile of runs).

Up: `WhatIfChanged` when the user changes a what-if (the app decides whether to compare now), `RoiUpdated` when
a comparison (or the reason it failed) is on screen. Down: `load_scenario(draft)` the scenario as run, `update()`
compare now."""

from __future__ import annotations

import threading
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, VerticalScroll
from textual.geometry import Region
from textual.widgets import DataTable, Input, Label, Select, Static

from scalefront.api import (
    RoiView,
    ScalefrontError,
    ScenarioDraft,
    WhatIf,
    compare_fabrics,
    format_money,
    message_of,
    parse_number,
    what_if_defaults,
)
from scalefront_tui.messages import RoiUpdated, WhatIfChanged
from scalefront_tui.widgets.fields import Field
from scalefront_tui.widgets.figures import tornado_lines
from scalefront_tui.widgets.frame_table import FrameTable

TORNADO_HINT = (
    "[dim]T: tornado (how the break-even moves as each input spans its range, and where the verdict flips)[/dim]"
)

#: The what-if number fields (id, label), in the order they are laid out (two per row, after the fabrics).
NUMBER_FIELDS = [
    ("wi-net-a", "A network ×"),
    ("wi-net-b", "B network ×"),
    ("wi-util", "utilisation"),
    ("wi-server", "server $"),
    ("wi-rent", "rent $/GPU-h"),
    ("wi-kwh", "$/kWh"),
    ("wi-pue", "PUE"),
    ("wi-years", "years"),
]


class RoiPane(VerticalScroll):
    """Verdict, what-ifs, the table per GPU count, the tornado."""

    DEFAULT_CSS = """
    RoiPane {
        padding: 0 1;
    }
    RoiPane #roi-verdict {
        height: auto;
        margin-bottom: 1;
    }
    RoiPane #roi-controls {
        grid-size: 4;
        grid-columns: 13 1fr 13 1fr;
        grid-gutter: 0 1;
        height: auto;
    }
    RoiPane #roi-controls Label {
        height: 1;
    }
    RoiPane #roi-controls Select, RoiPane #roi-controls Field {
        height: 1;
    }
    RoiPane #roi-error {
        height: auto;
        display: none;
    }
    RoiPane #roi-table {
        height: auto;
        max-height: 20;
        margin-top: 1;
    }
    RoiPane #roi-tornado {
        height: auto;
        margin-top: 1;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("T", "tornado", "Tornado"),
        Binding("enter", "edit", "Edit what-ifs", show=False),
    ]

    def __init__(self, draft: ScenarioDraft, *, id: str | None = None) -> None:
        """`draft`: the scenario whose fabrics are compared (its catalog's fabrics are the choices)."""
        super().__init__(id=id)
        self.draft = draft
        self.view: RoiView | None = None
        self.what_if: WhatIf | None = None
        self.stale = True
        self._request_lock = threading.Lock()
        self._next_request: tuple[WhatIf, bool] | None = None
        self._comparing = False

    def compose(self) -> ComposeResult:
        draft = self.draft
        fabrics = sorted(draft.catalog.fabrics)
        names = draft.scenario.fabric_names
        a = names[0]
        b = names[1] if len(names) > 1 else next(f for f in fabrics if f != a)
        yield Static("", id="roi-verdict")
        with Grid(id="roi-controls"):
            yield Label("fabric A")
            yield Select([(f, f) for f in fabrics], value=a, id="wi-a", allow_blank=False, compact=True)
            yield Label("fabric B")
            yield Select([(f, f) for f in fabrics], value=b, id="wi-b", allow_blank=False, compact=True)
            for field_id, label in NUMBER_FIELDS[:2]:
                yield Label(label)
                yield Field(id=field_id)
            yield Label("cost")
            yield Select(
                [("own: total cost of ownership", "own"), ("rent: GPU-hours", "rent")],
                value="own",
                id="wi-mode",
                allow_blank=False,
                compact=True,
            )
            for field_id, label in NUMBER_FIELDS[2:]:
                yield Label(label)
                yield Field(id=field_id)
        yield Static("", id="roi-error")
        yield FrameTable([], id="roi-table", markable=False, header_lines=2)
        yield Static(TORNADO_HINT, id="roi-tornado")

    def load_scenario(self, draft: ScenarioDraft) -> None:
        """Compare the fabrics in `draft` (the scenario as run) from the next comparison on."""
        self.draft = draft

    # ------------------------------------------------------------------------------------------------ inputs
    def reset_inputs(self) -> None:
        """Show the scenario's and catalog's figures for the chosen fabrics (after a re-run or a fabric change)."""
        a, b = str(self.query_one("#wi-a", Select).value), str(self.query_one("#wi-b", Select).value)
        w = what_if_defaults(self.draft, a, b)
        texts = {
            "wi-net-a": "1.00",
            "wi-net-b": "1.00",
            "wi-server": format_money(w.server_usd or 0.0),
            "wi-rent": format_money(w.rent_usd_per_gpu_hour or 0.0),
            "wi-kwh": f"{w.usd_per_kwh:g}",
            "wi-pue": f"{w.pue:g}",
            "wi-years": f"{w.years:g}",
            "wi-util": f"{(w.utilisation or 1.0) * 100:g}%",
        }
        with self.prevent(Input.Changed, Select.Changed):
            for field_id, text in texts.items():
                self.query_one(f"#{field_id}", Field).value = text

    def read_inputs(self) -> WhatIf:
        """The what-ifs as typed; ValueError (naming the field) for a value that is not a sensible number."""
        a, b = str(self.query_one("#wi-a", Select).value), str(self.query_one("#wi-b", Select).value)
        if a == b:
            raise ValueError("choose two different fabrics")
        values: dict[str, float] = {}
        for field_id, label in NUMBER_FIELDS:
            field = self.query_one(f"#{field_id}", Field)
            try:
                value = parse_number(field.value, what=label)
                if field_id == "wi-util" and value > 1:
                    value /= 100.0  # "80" means 80%
                _check(field_id, label, value)
            except ValueError:
                field.add_class("invalid")
                raise
            field.remove_class("invalid")
            values[field_id] = value
        return WhatIf(
            a,
            b,
            mode="rent" if self.query_one("#wi-mode", Select).value == "rent" else "own",
            network_price={a: values["wi-net-a"], b: values["wi-net-b"]},
            server_usd=values["wi-server"],
            rent_usd_per_gpu_hour=values["wi-rent"],
            usd_per_kwh=values["wi-kwh"],
            pue=values["wi-pue"],
            years=values["wi-years"],
            utilisation=values["wi-util"],
        )

    @on(Select.Changed, "#wi-a, #wi-b")
    def _fabrics_changed(self) -> None:
        self.reset_inputs()
        self._changed()

    @on(Select.Changed, "#wi-mode")
    @on(Input.Changed, "#roi-controls Field")
    def _changed(self) -> None:
        """Follow every change: stale until compared (the app compares now while the tab is open and a sweep has
        finished, else when the tab opens)."""
        self.stale = True
        self.post_message(WhatIfChanged())

    @on(Field.Left)
    def _left(self, event: Field.Left) -> None:
        event.stop()
        self.query_one("#roi-table").focus()

    def action_edit(self) -> None:
        self.query_one("#wi-net-a").focus()

    # ------------------------------------------------------------------------------------------------ runs
    def update(self, *, tornado: bool = False) -> None:
        """Compare the fabrics with the inputs as typed (a bad input is named, and nothing runs)."""
        error = self.query_one("#roi-error", Static)
        try:
            what_if = self.read_inputs()
        except ValueError as err:
            error.update(Text(str(err), style="bold red"))
            error.display = True
            return
        error.display = False
        self.what_if = what_if
        self.stale = False
        self.query_one("#roi-verdict", Static).update(Text("comparing...", style="dim"))
        with self._request_lock:
            self._next_request = (what_if, tornado)
            if self._comparing:
                return
            self._comparing = True
        self._compare()

    @work(thread=True, group="roi")
    def _compare(self) -> None:
        while True:
            with self._request_lock:
                wanted = self._next_request
                self._next_request = None
                if wanted is None:
                    self._comparing = False
                    return
            what_if, tornado = wanted
            draft = self.draft
            try:
                view: RoiView | str = compare_fabrics(draft, what_if, sensitivity=tornado)
            except ScalefrontError as err:
                view = message_of(err)
            try:
                self.app.call_from_thread(self._show, view)
            except RuntimeError:  # the app is closing
                return

    def _show(self, view: RoiView | str) -> None:
        if isinstance(view, str):
            self.query_one("#roi-verdict", Static).update(Text(view, style="bold red"))
            self.post_message(RoiUpdated(view))
            return
        self.view = view
        self.query_one("#roi-verdict", Static).update(Text(view.verdict, style="bold"))
        table = self.query_one("#roi-table", FrameTable)
        table.priority = _roi_priority([c.name for c in view.columns], view)
        table.load(view.table, view.columns, key=["gpus"])
        self._draw_tornado()
        self.scroll_home(animate=False)  # a new answer shows from its verdict
        self.post_message(RoiUpdated(view))

    def _draw_tornado(self) -> None:
        view = self.view
        target = self.query_one("#roi-tornado", Static)
        if view is None or view.tornado is None:
            target.update(TORNADO_HINT)
            return
        record = self.query_one("#roi-table", FrameTable).record()
        gpus = int(record["gpus"]) if record else max(view.tornado)
        width = max(40, self.size.width - 2)
        target.update(Text("\n").join(tornado_lines(view.tornado.get(gpus, []), gpus, width)))

    @on(DataTable.RowHighlighted, "#roi-table")
    def _row_moved(self) -> None:
        self._draw_tornado()
        self._follow_cursor()

    def _follow_cursor(self) -> None:
        """Scroll the pane with the table's cursor (j/k, page up/down, g/G work without a mouse, D5): the first
        row shows the verdict above it, the last the tornado below it, any other row comes into view."""
        table = self.query_one("#roi-table", FrameTable)
        if table.cursor_row <= 0:
            self.scroll_home(animate=False)
        elif table.cursor_row >= table.row_count - 1:
            self.scroll_end(animate=False)
        else:
            y = table.virtual_region.y + table.header_height + table.cursor_row
            self.scroll_to_region(Region(0, y, 1, 1), animate=False, immediate=True)

    def action_tornado(self) -> None:
        self.query_one("#roi-tornado", Static).update(Text("computing the tornado...", style="dim"))
        self.update(tornado=True)


def _roi_priority(names: list[str], view: RoiView) -> list[str]:
    """The ROI columns in the order they get room: GPUs, then the answer (break-even, payback, the mode's cost on
    each fabric), then days and the rest."""
    a, b = view.fabric_a, view.fabric_b
    first = ["gpus", "break_even_premium", "p_a_cheaper", "payback", f"cost_{a}", f"cost_{b}", "saving_b_minus_a"]
    first += [f"time_to_train_days_{a}", f"time_to_train_days_{b}"]
    return [n for n in first if n in names] + [n for n in names if n not in first]


def _check(field_id: str, label: str, value: float) -> None:
    if field_id in ("wi-net-a", "wi-net-b", "wi-years") and not value > 0:
        raise ValueError(f"{label} must be more than 0")
    if field_id == "wi-pue" and value < 1:
        raise ValueError("PUE is 1 or more (facility power / IT power)")
    if field_id == "wi-util" and not 0 < value <= 1:
        raise ValueError("utilisation is the share of hours with work: more than 0%, at most 100%")
    if value < 0:
        raise ValueError(f"{label} cannot be negative")
