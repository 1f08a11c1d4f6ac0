"""The ROI tab: is fabric A worth it over fabric B for the scenario as run? The verdict on top, at the GPU count the
buyer picks (the table's cursor row; `[` and `]` step it with the verdict in view), the what-if inputs a buyer
changes (A's quote as +% over B, the CLI's `--premium`, with the catalog's premium beside it; the server price,
rent, $/kWh, PUE, years, utilisation, own or rent), a table per GPU count that follows every change, the answer
pinned with `p` beside the answer now, and the tornado with flip values on request.

A what-if left as shown is not applied (the comparison uses the scenario's and catalog's figures, with their
uncertainty); a changed one moves its figure's whole range (scalefront.api.WhatIf). When the scenario as run
changes its GPU, GPU counts or fabrics, or fabric A or B changes, the what-ifs go back to the new figures and a
notice says which were reset: a re-run never keeps the previous scenario's prices (review D1, D11).

Comparisons run in a worker thread; while one runs, later changes are collected and the newest is run next
(never a pile of runs).

Up: `WhatIfChanged` when the user changes a what-if (the app decides whether to compare now), `RoiUpdated` when
a comparison (or the reason it failed) is on screen. Down: `load_scenario(draft)` the scenario as run, `update()`
compare now."""

from __future__ import annotations

import threading
from typing import Any, ClassVar

import polars as pl
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, VerticalScroll
from textual.geometry import Region
from textual.widgets import DataTable, Input, Label, Select, Static

from scalefront.api import (
    INTERACTIVE_SAMPLES,
    RoiView,
    ScalefrontError,
    ScenarioDraft,
    WhatIf,
    compare_fabrics,
    fabric_choices,
    format_money,
    message_of,
    modes_text,
    verdict_at,
    what_if_defaults,
)
from scalefront_tui.messages import RoiUpdated, WhatIfChanged
from scalefront_tui.widgets.fields import Field
from scalefront_tui.widgets.figures import tornado_lines
from scalefront_tui.widgets.frame_table import FrameTable
from scalefront_tui.widgets.roi_compare import RoiAnswer, payback_text, pinned_table
from scalefront_tui.widgets.roi_inputs import NUMBER_FIELDS, WHAT_IF_ATTRS, read_number, scenario_change

TORNADO_HINT = (
    "[dim]T: tornado (how the break-even moves as each input spans its range, and where the verdict flips)[/dim]"
)


class RoiPane(VerticalScroll):
    """Verdict, what-ifs, the table per GPU count, the pinned comparison, the tornado."""

    DEFAULT_CSS = """
    RoiPane {
        padding: 0 1;
    }
    RoiPane #roi-verdict {
        height: auto;
    }
    RoiPane #roi-notice {
        height: auto;
        display: none;
        color: $warning;
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
    RoiPane #roi-controls #wi-premium-note {
        height: 1;
        color: $text-muted;
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
    RoiPane #roi-pinned {
        height: auto;
        display: none;
        margin-top: 1;
    }
    RoiPane #roi-tornado {
        height: auto;
        margin-top: 1;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left_square_bracket", "gpus(-1)", "Fewer GPUs"),
        Binding("right_square_bracket", "gpus(1)", "More GPUs"),
        Binding("p", "pin", "Pin"),
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
        #: The GPU count the verdict speaks of (None: the comparison's largest, as the CLI).
        self.gpus: int | None = None
        #: The answer pinned with `p`, shown beside the answer now.
        self.pinned: RoiAnswer | None = None
        #: Each what-if field's text as last reset (a field still showing it is not applied).
        self.defaults: dict[str, str] = {}
        #: Catalog premium (A's fabric cost over B's) per GPU count, from the last comparison without a quote.
        self.catalog_premium: dict[int, float] = {}
        self._request_lock = threading.Lock()
        self._next_request: tuple[WhatIf, bool] | None = None
        self._comparing = False

    def compose(self) -> ComposeResult:
        draft = self.draft
        fabrics = fabric_choices(draft)
        names = [
            draft.catalog.fabric_id(f)
            for f in draft.scenario.fabric_names
            if f.partition("@")[0] in draft.catalog.fabrics
        ]
        names = [f for f in names if f in fabrics] or fabrics
        a = names[0]
        b = names[1] if len(names) > 1 else next(f for f in fabrics if f != a)
        yield Static("", id="roi-notice")
        yield Static("", id="roi-verdict")
        with Grid(id="roi-controls"):
            yield Label("fabric A")
            yield Select([(f, f) for f in fabrics], value=a, id="wi-a", allow_blank=False, compact=True)
            yield Label("fabric B")
            yield Select([(f, f) for f in fabrics], value=b, id="wi-b", allow_blank=False, compact=True)
            yield Label("A quote +%", id="wi-premium-label")
            yield Field(id="wi-premium")
            yield Label("catalog")
            yield Static("", id="wi-premium-note")
            yield Label("cost")
            yield Select(
                [("own: total cost", "own"), ("rent: GPU-hours", "rent")],
                value="own",
                id="wi-mode",
                allow_blank=False,
                compact=True,
            )
            for field_id, label in NUMBER_FIELDS:
                yield Label(label)
                yield Field(id=field_id)
        yield Static("", id="roi-error")
        yield FrameTable([], id="roi-table", markable=False, header_lines=2, sort_keys={"payback": "payback_months"})
        yield Static("", id="roi-pinned")
        yield Static(TORNADO_HINT, id="roi-tornado")

    def load_scenario(self, draft: ScenarioDraft) -> None:
        """Compare the fabrics in `draft` (the scenario as run) from the next comparison on. A new GPU, GPU counts
        or fabric list resets the what-ifs (with a notice naming those that were changed); otherwise a changed
        what-if stays and the others show the new scenario's figures."""
        old, self.draft = self.draft, draft
        what = scenario_change(old, draft)
        if what:
            self.catalog_premium = {}
            self.reset_inputs(why=what)
        else:
            self.reset_inputs(keep_changed=True)

    # ------------------------------------------------------------------------------------------------ inputs
    def _default_texts(self) -> dict[str, str]:
        a, b = self._fabrics()
        w = what_if_defaults(self.draft, a, b)
        return {
            "wi-premium": "",
            "wi-server": format_money(w.server_usd or 0.0),
            "wi-rent": format_money(w.rent_usd_per_gpu_hour or 0.0),
            "wi-kwh": f"{w.usd_per_kwh:g}",
            "wi-pue": f"{w.pue:g}",
            "wi-years": f"{w.years:g}",
            "wi-util": f"{(w.utilisation or 1.0) * 100:g}%",
        }

    def changed_fields(self) -> list[str]:
        """The labels of the what-ifs whose text differs from the figure shown at the last reset."""
        labels = {"wi-premium": "A quote", **dict(NUMBER_FIELDS)}
        return [labels[f] for f, text in self.defaults.items() if self.query_one(f"#{f}", Field).value.strip() != text]

    def reset_inputs(self, *, why: str = "", keep_changed: bool = False) -> None:
        """Show the scenario's and catalog's figures for the chosen fabrics (after a re-run or a fabric change).
        `why` (what changed) shows a notice naming the what-ifs that were reset; `keep_changed` keeps them."""
        changed = self.changed_fields() if self.defaults else []
        kept = {f for f, text in self.defaults.items() if self.query_one(f"#{f}", Field).value.strip() != text}
        texts = self._default_texts()
        with self.prevent(Input.Changed, Select.Changed):
            for field_id, text in texts.items():
                if not (keep_changed and field_id in kept):
                    self.query_one(f"#{field_id}", Field).value = text
        self.defaults = texts
        a, b = self._fabrics()
        self.query_one("#wi-premium-label", Label).update(f"{a[:8]} +%")
        self.query_one("#wi-premium", Field).placeholder = f"% over {b}, or empty"
        self._show_premium_note()
        notice = self.query_one("#roi-notice", Static)
        if why and changed and not keep_changed:
            notice.update(f"{why}: what-ifs reset to its figures ({', '.join(changed)})")
            notice.display = True
            self.notify(f"ROI what-ifs reset ({why})", severity="warning")
        elif not keep_changed:
            notice.display = False

    def _fabrics(self) -> tuple[str, str]:
        return str(self.query_one("#wi-a", Select).value), str(self.query_one("#wi-b", Select).value)

    def _show_premium_note(self) -> None:
        """Beside the quote: the catalog's premium (A over B) at the verdict's GPU count."""
        gpus = self._verdict_gpus()
        catalog = self.catalog_premium.get(gpus) if gpus is not None else None
        self.query_one("#wi-premium-note", Static).update(
            f"{catalog - 1:+.0%} at {gpus:,} GPUs" if catalog is not None and gpus is not None else ""
        )

    def read_inputs(self) -> WhatIf:
        """The what-ifs as typed (those still showing the scenario's figure are not applied); ValueError (naming
        the field) for a value that is not a sensible number."""
        a, b = self._fabrics()
        if a == b:
            raise ValueError("choose two different fabrics")
        values: dict[str, Any] = {}
        for field_id, label in [("wi-premium", "A quote +%"), *NUMBER_FIELDS]:
            field = self.query_one(f"#{field_id}", Field)
            text = field.value.strip()
            if text == self.defaults.get(field_id):
                field.remove_class("invalid")
                continue
            try:
                values[field_id] = read_number(field_id, label, text)
            except ValueError:
                field.add_class("invalid")
                raise
            field.remove_class("invalid")
        return WhatIf(
            a,
            b,
            mode="rent" if self.query_one("#wi-mode", Select).value == "rent" else "own",
            premium=values.get("wi-premium"),
            **{WHAT_IF_ATTRS[k]: v for k, v in values.items() if k in WHAT_IF_ATTRS},
        )

    @on(Select.Changed, "#wi-a, #wi-b")
    def _fabrics_changed(self) -> None:
        self.catalog_premium = {}
        a, b = self._fabrics()
        self.reset_inputs(why=f"fabrics now {a} vs {b}")
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
        """Enter: to the quote, the first what-if, now (not after the keys already read, as focus() would: keys
        typed right after Enter, in the same burst, are the quote's)."""
        self.screen.set_focus(self.query_one("#wi-premium", Field))

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
        counts = [int(g) for g in view.table["gpus"].to_list()]
        if view.what_if.premium is None and "premium" in view.table.columns:
            self.catalog_premium = dict(zip(counts, view.table["premium"].to_list(), strict=True))
        if self.gpus not in counts:
            self.gpus = None
        table = self.query_one("#roi-table", FrameTable)
        table.priority = _roi_priority([c.name for c in view.columns], view)
        table.load(_shown_table(view.table), view.columns, key=["gpus"])
        self._place_cursor(counts.index(self._verdict_gpus() or counts[-1]))
        self._show_answer()
        self.scroll_home(animate=False)  # a new answer shows from its verdict
        self.post_message(RoiUpdated(view))

    def _verdict_gpus(self) -> int | None:
        """The GPU count the verdict speaks of: the one picked, else the comparison's headline (its largest)."""
        if self.gpus is not None:
            return self.gpus
        return self.view.result.headline_gpus if self.view is not None else None

    def _show_answer(self) -> None:
        """The verdict at the picked GPU count, the quote's note, the pinned comparison and the tornado."""
        view, gpus = self.view, self._verdict_gpus()
        if view is None or gpus is None:
            return
        self.query_one("#roi-verdict", Static).update(_verdict_text(verdict_at(view, gpus), view))
        self._show_premium_note()
        pinned = self.query_one("#roi-pinned", Static)
        if self.pinned is not None:
            pinned.update(pinned_table(self.pinned, RoiAnswer(view, gpus)))
        pinned.display = self.pinned is not None
        self._draw_tornado()

    def _place_cursor(self, row: int) -> None:
        """Move the table's cursor to `row`, the verdict's (its highlight changes nothing, so the pane stays)."""
        self.query_one("#roi-table", FrameTable).move_cursor(row=row, animate=False)

    def action_gpus(self, step: int) -> None:
        """`[` `]`: the verdict about the next smaller or larger GPU count (the table's cursor follows)."""
        if self.view is None:
            return
        counts = [int(g) for g in self.view.table["gpus"].to_list()]
        now = self._verdict_gpus()
        i = min(max((counts.index(now) if now in counts else len(counts) - 1) + step, 0), len(counts) - 1)
        self.gpus = counts[i]
        self._place_cursor(i)
        self._show_answer()
        self.scroll_home(animate=False)

    def action_pin(self) -> None:
        """Pin the answer now (at the verdict's GPU count) to compare later results with it."""
        gpus = self._verdict_gpus()
        if self.view is None or gpus is None:
            return
        self.pinned = RoiAnswer(self.view, gpus)
        self._show_answer()
        self.notify(f"pinned: {self.view.fabric_a} vs {self.view.fabric_b} at {gpus:,} GPUs")

    def _draw_tornado(self) -> None:
        view = self.view
        target = self.query_one("#roi-tornado", Static)
        if view is None or view.tornado is None:
            target.update(TORNADO_HINT)
            return
        gpus = self._verdict_gpus() or max(view.tornado)
        width = max(40, self.size.width - 2)
        target.update(Text("\n").join(tornado_lines(view.tornado.get(gpus, []), gpus, width)))

    @on(DataTable.RowHighlighted, "#roi-table")
    def _row_moved(self, event: DataTable.RowHighlighted) -> None:
        """The verdict follows the cursor's row, and the pane follows the cursor. A highlight that changes nothing
        (the cursor put back on the verdict's row by a reload, a resize or `_place_cursor`) leaves the pane where
        it is, as does one the cursor has since left."""
        table = self.query_one("#roi-table", FrameTable)
        record = table.record()
        if event.cursor_row != table.cursor_row or record is None or self.view is None:
            return
        if int(record["gpus"]) == self._verdict_gpus():
            return
        self.gpus = int(record["gpus"])
        self._show_answer()
        # Follow once the new verdict is laid out: its text is measured on the refresh after the update and the
        # table moves (a longer verdict pushes it down) on the one after; the row's place is read then.
        self.call_after_refresh(self.call_after_refresh, self._follow_cursor)

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


def _verdict_text(sentence: str, view: RoiView) -> Text:
    """The API's verdict, its "flips if" clause on a line of its own, and the samples behind its chances (D18).
    The sentence naming the modes compared is left out: the fabric A and B choices below show them
    (`roce-400g@untuned`), and at 80x24 it would push the table off screen."""
    sentence = sentence.removeprefix(modes_text(view.result) + " ")
    head, sep, flips = sentence.partition(" The answer flips if ")
    text = Text(head, style="bold")
    if sep:
        text.append("\nWould flip if " + flips, style="")
    if view.what_if.mode == "own":
        text.append(f"\n(chances from {INTERACTIVE_SAMPLES:,} Monte Carlo samples)", style="dim")
    return text


def _roi_priority(names: list[str], view: RoiView) -> list[str]:
    """The ROI columns in the order they get room: GPUs, then the answer (break-even, payback, the mode's cost on
    each fabric), then days and the rest."""
    a, b = view.fabric_a, view.fabric_b
    first = ["gpus", "break_even_premium", "p_a_cheaper", "payback", f"cost_{a}", f"cost_{b}", "saving_b_minus_a"]
    first += [f"time_to_train_days_{a}", f"time_to_train_days_{b}"]
    return [n for n in first if n in names] + [n for n in names if n not in first]


def _shown_table(frame: pl.DataFrame) -> pl.DataFrame:
    """The ROI table as the pane shows it: the payback with its months ("13 months", not the kind "months" alone,
    whose figure is a column that seldom gets room at 80 columns). Exports write the API's table."""
    if "payback" not in frame.columns:
        return frame
    texts = [payback_text(row) for row in frame.iter_rows(named=True)]
    return frame.with_columns(pl.Series("payback", texts, dtype=pl.Utf8))
