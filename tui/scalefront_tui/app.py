"""The scalefront terminal UI: run a scenario's sweep in a worker, browse its frontier (filter, sort, mark,
copy), read it in charts, look inside configurations, compare two fabrics with what-if inputs, see what the
cluster serves under SLOs, edit and save the scenario, export what is shown. Every number comes from scalefront's
public API (`scalefront.api`); this package holds no model math.

The app holds the state (the scenario as run, the sweep, its frontier, the filter) and wires the tabs' panes
(widgets/) and dialogs (screens/): panes post messages up (messages.py), the app decides and hands each pane
what it shows. No pane imports this module. Layout is designed at 80x24 first; keys follow well-liked terminal
apps (see the help screen, `?`)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar

import polars as pl
from textual import events, on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Footer, Header, Input, TabbedContent, TabPane

from scalefront.api import (
    DEFAULT_SCENARIO,
    Filter,
    FormErrors,
    Progress,
    ScalefrontError,
    ScenarioDraft,
    SweepJob,
    SweepResult,
    best_per_fabric_and_size,
    column_spec,
    format_count,
    frontier,
    message_of,
    parse_filter,
)
from scalefront_tui.commands import palette
from scalefront_tui.files import FileAccess
from scalefront_tui.keys import APP_KEYS, TYPE_AHEAD
from scalefront_tui.messages import FilterApplied, PointSelected, RoiUpdated, ScenarioEdited, WhatIfChanged
from scalefront_tui.screens import (
    HelpScreen,
    WriteFileScreen,
    export_rows_dialog,
    save_scenario_dialog,
    tab_export_dialog,
)
from scalefront_tui.sequencer import KeySequencer
from scalefront_tui.widgets.charts import ChartsPane
from scalefront_tui.widgets.detail import DetailPane
from scalefront_tui.widgets.fields import Field
from scalefront_tui.widgets.figures import FrontierView
from scalefront_tui.widgets.frame_table import FrameTable
from scalefront_tui.widgets.frontier import FRONTIER_COLUMNS, FrontierPane
from scalefront_tui.widgets.markers import FabricMarkers
from scalefront_tui.widgets.roi import RoiPane
from scalefront_tui.widgets.scenario import ScenarioPane, describe_changes
from scalefront_tui.widgets.serving import ServingPane
from scalefront_tui.widgets.status import StatusLine, done_parts, filter_parts, marks_parts, progress_parts
from scalefront_tui.widgets.too_small import MIN_HEIGHT, MIN_WIDTH, TooSmall

#: Tabs: id, title (with its key), and the widget that takes the focus when the tab opens (never a text field).
TABS = [
    ("frontier", "1 Frontier", "#frontier-table"),
    ("charts", "2 Charts", "#chart"),
    ("detail", "3 Detail", "#detail-pane"),
    ("roi", "4 ROI", "#roi-table"),
    ("scenario", "5 Scenario", "#scenario-pane"),
    ("serving", "6 Serving", "#serving-table"),
]
_HOME = {tab: home for tab, _, home in TABS}


class ScalefrontApp(App[None]):
    """Browse a scenario's trade-offs."""

    CSS_PATH = "app.tcss"
    TITLE = "scalefront"
    #: Below MIN_WIDTH x MIN_HEIGHT the app shows a "terminal too small" notice instead of its tabs (D20).
    HORIZONTAL_BREAKPOINTS = [(0, "-too-narrow"), (MIN_WIDTH, "-wide-enough")]
    VERTICAL_BREAKPOINTS = [(0, "-too-short"), (MIN_HEIGHT, "-short"), (40, "-tall")]
    BINDINGS: ClassVar[list[BindingType]] = [
        *APP_KEYS,
        *[Binding(str(i + 1), f"tab('{tab}')", title, show=False) for i, (tab, title, _) in enumerate(TABS)],
    ]

    def __init__(
        self, scenario: str = DEFAULT_SCENARIO, *, autostart: bool = True, files: FileAccess | None = None
    ) -> None:
        super().__init__()
        #: Where the app may read and write files (confined to the export directory when served).
        self.files = files or FileAccess()
        self.key_sequencer = KeySequencer(self)
        #: The scenario as last run (or as opened).
        self.draft = ScenarioDraft.open(scenario)
        self.autostart = autostart
        self.job: SweepJob | None = None
        self.sweep_running = False
        self.result: SweepResult | None = None
        self.frontier = pl.DataFrame()
        self.best = pl.DataFrame()
        #: The fastest configuration per (fabric, GPU count), filtered as the frontier is.
        self.best_shown = pl.DataFrame()
        self.filter: Filter | None = None
        #: What the last re-run changed in the scenario ("" when nothing).
        self.last_changes = ""
        #: Sweeps finished and comparisons shown (`RoiUpdated` messages): tests wait on these counters.
        self.sweeps_finished = self.roi_updates = 0
        #: One marker, colour and name per fabric for the whole session, in every chart and table (D9).
        self.markers = FabricMarkers(self.draft.scenario.fabric_names)
        #: The marks as last reported in the status line.
        self._marks_said: list[tuple[Any, ...]] = []

    # ------------------------------------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield Header()
        yield StatusLine(id="status")
        yield TooSmall(id="too-small")
        with TabbedContent(initial="frontier"):
            with TabPane(TABS[0][1], id="frontier"):
                yield FrontierPane(id="frontier-pane")
            with TabPane(TABS[1][1], id="charts"):
                yield ChartsPane(id="charts-pane")
            with TabPane(TABS[2][1], id="detail"):
                yield DetailPane(id="detail-pane")
            with TabPane(TABS[3][1], id="roi"):
                yield RoiPane(self.draft, id="roi-pane")
            with TabPane(TABS[4][1], id="scenario"):
                yield ScenarioPane(self.draft.values(), self.files, id="scenario-pane")
            with TabPane(TABS[5][1], id="serving"):
                yield ServingPane(self.draft, self.markers, id="serving-pane")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sub_title = self.draft.title
        self.main.query_one(RoiPane).reset_inputs()
        self.main.query_one(ScenarioPane).show_check({}, "", self.draft.title)
        self._table.markers = self.markers
        self.main.query_one("#frontier-table").focus()
        if self.autostart:
            self.start_sweep()

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and not event.is_forwarded:
            return await self.key_sequencer.arrive(event)  # keys act in the order typed (sequencer.py)
        await super().on_event(event)

    def on_unmount(self) -> None:
        if self.job is not None:
            self.job.cancel()

    @property
    def main(self) -> Screen[Any]:
        """The screen the tabs are on, under any dialog: the app's own widgets are looked up there (a sweep may
        finish, a row may move, while a dialog is open)."""
        return self.screen_stack[0]

    @property
    def _table(self) -> FrameTable:
        return self.main.query_one(FrontierPane).table

    @property
    def shown(self) -> pl.DataFrame:
        """The frontier rows on screen: filtered, in the table's order."""
        return self._table.frame

    @property
    def active_tab(self) -> str:
        return self.main.query_one(TabbedContent).active

    def _set_status(self, text: str, *more: tuple[str, int]) -> None:
        """The status line: `text` always shown, then `more` parts (text, rank) as room allows."""
        self.main.query_one(StatusLine).show((text, 0), *more)

    @property
    def cost_mode(self) -> str:
        """The basis of the frontier's cost: rent or own (the sweep's, else the scenario's)."""
        if "cost_mode" in self.frontier.columns and not self.frontier.is_empty():
            return str(self.frontier["cost_mode"][0])
        return self.draft.value("mode")

    def _run_as(self, draft: ScenarioDraft) -> None:
        """Make `draft` the scenario as run: the title says so and the ROI tab compares in it."""
        self.draft = draft
        self.sub_title = draft.title
        self.main.query_one(RoiPane).load_scenario(draft)
        self.main.query_one(ServingPane).load_scenario(draft)

    # ------------------------------------------------------------------------------------------------ sweep
    def start_sweep(self, *, paused: bool = False) -> SweepJob:
        """Sweep the scenario as run in a worker thread (a running sweep is cancelled first). With `paused`, the
        engine holds its workers until `job.resume()`."""
        if self.job is not None:
            self.job.cancel()
        job = SweepJob(self.draft, paused=paused)
        self.job = job
        self.sweep_running = True
        what = f"sweeping {self.draft.name}: {format_count(job.total)} configurations"
        self._set_status(what, (" (esc cancels)", 0))
        self.refresh_bindings()
        self._sweep(job)
        return job

    @work(thread=True, group="sweep")
    def _sweep(self, job: SweepJob) -> None:
        def progress(p: Progress) -> None:
            self.call_from_thread(self._show_progress, job, p)

        try:
            result: SweepResult | str = job.run(on_progress=progress)
        except ScalefrontError as err:
            result = message_of(err)
        except RuntimeError:  # the app closed while the sweep ran
            job.cancel()
            return
        try:
            self.call_from_thread(self._sweep_done, job, result)
        except RuntimeError:
            return

    def _show_progress(self, job: SweepJob, p: Progress) -> None:
        if job is not self.job or p.done >= p.total:
            return
        self.main.query_one(StatusLine).show(*progress_parts(p))

    def _sweep_done(self, job: SweepJob, result: SweepResult | str) -> None:
        if job is not self.job:
            return  # a newer sweep replaced this one
        self.sweep_running = False
        self.refresh_bindings()
        if isinstance(result, str):
            self._set_status(f"error: {result}")
            return
        if result.cancelled:
            self._set_status("sweep cancelled; r runs it again")
            return
        self.result = result
        self.frontier = frontier(result)
        self.best = best_per_fabric_and_size(result)
        self._show_frontier()
        self.main.query_one(StatusLine).show(*done_parts(self.frontier.height, result, self.last_changes))
        roi = self.main.query_one(RoiPane)
        roi.stale = True
        if self.active_tab == "roi":
            roi.update()
        self.sweeps_finished += 1

    # ------------------------------------------------------------------------------------------------ frontier
    def _specs(self) -> list[Any]:
        names = [*FRONTIER_COLUMNS, *[c for c in self.frontier.columns if c not in FRONTIER_COLUMNS]]
        return [column_spec(c) for c in names if c in self.frontier.columns]

    def _show_frontier(self) -> None:
        """Show the frontier through the filter in the table, the charts and the detail."""
        rows = self.filter.apply(self.frontier) if self.filter else self.frontier
        self.best_shown = self.filter.apply(self.best) if self.filter else self.best
        mixed = not self.frontier.is_empty() and self.frontier["gpu"].n_unique() > 1
        self.main.query_one(FrontierPane).load(rows, self._specs(), self.cost_mode, mixed_gpus=mixed)
        self._redraw_charts()

    def _redraw_charts(self) -> None:
        """Hand the charts the frontier as shown (rows, filter, selected point: the table's cursor row; marks and
        the selected point follow the table's key columns across sorts, filters and re-runs)."""
        table = self._table
        group_by = list(self.draft.scenario.space["group_by"])
        mode = self.cost_mode if not self.frontier.is_empty() else ""
        view = FrontierView(
            self.shown, self.best_shown, group_by, table.key_columns, table.record(), self.markers, mode
        )
        self.main.query_one(ChartsPane).show(view)
        self.main.query_one(FrontierPane).show(view)

    def apply_filter(self, text: str) -> bool:
        """Filter the frontier (empty text: no filter); False, with the reason in the status line, if it does
        not parse."""
        pane = self.main.query_one(FrontierPane)
        try:
            parsed = parse_filter(text, self._specs() or [column_spec(c) for c in FRONTIER_COLUMNS])
        except ValueError as err:
            pane.reject_filter()
            self._set_status(f"filter: {err}")
            return False
        self.filter = parsed if parsed.terms else None
        pane.accept_filter(self.filter.text if self.filter else "")
        self._show_frontier()
        self.main.query_one(StatusLine).show(*filter_parts(self.shown.height, self.frontier.height, self.filter))
        return True

    @on(FilterApplied)
    def _filter_applied(self, event: FilterApplied) -> None:
        if self.apply_filter(event.text):
            self._table.focus()

    @on(Field.Left)
    def _field_left(self) -> None:
        """Esc in a field: back to its tab's main widget."""
        self.main.query_one(_HOME[self.active_tab]).focus()

    @on(PointSelected)
    def _point_selected(self, event: PointSelected) -> None:
        self.main.query_one(FrontierPane).step_cursor(event.step)

    @on(DataTable.RowHighlighted, "#frontier-table")
    def _row_moved(self) -> None:
        if self.screen_stack:  # else the app is closing
            self._redraw_charts()

    @on(DataTable.RowSelected, "#frontier-table")
    def _row_selected(self) -> None:
        table = self._table
        record = table.record()
        rows = [record] if record else []
        marked = table.marked_records()
        rows += [r for r in marked if r != record]
        self.main.query_one(DetailPane).show(rows, self.draft, self.markers, marked=len(marked))
        self.action_tab("detail")

    @on(FrameTable.Changed, "#frontier-table")
    def _table_changed(self, event: FrameTable.Changed) -> None:
        table = event.table
        if not self.screen_stack:  # the app is closing
            return
        marked = table.marked_records()
        if marked:
            self.main.query_one(DetailPane).show(marked, self.draft, self.markers, marked=len(marked))
        if table.marks != self._marks_said and self.sweeps_finished:
            self._marks_said = list(table.marks)
            self.main.query_one(StatusLine).show(*marks_parts(marked))
        self._redraw_charts()

    # ------------------------------------------------------------------------------------------------ scenario
    @on(ScenarioEdited)
    def _scenario_edited(self, event: ScenarioEdited) -> None:
        values, problems = self.main.query_one(ScenarioPane).resolved(event.values, self.draft)
        problems = problems or self.draft.check(values)
        self.main.query_one(ScenarioPane).show_check(
            problems, describe_changes(self.draft.values(), values), self.draft.title
        )

    def _edited_draft(self) -> ScenarioDraft | None:
        """The scenario with the form's edits, or None (the problems shown on the Scenario tab)."""
        pane = self.main.query_one(ScenarioPane)
        values, problems = pane.resolved(pane.values(), self.draft)
        try:
            if problems:
                raise FormErrors(problems)
            return self.draft.edit(values)
        except FormErrors as err:
            pane.show_check(err.errors, "", self.draft.title)
            self.action_tab("scenario")
            n = len(err.errors)
            self._set_status(f"not run: {n} problem{'s' if n > 1 else ''} on the Scenario tab")
            return None

    # ------------------------------------------------------------------------------------------------ actions
    def action_rerun(self) -> None:
        """Re-run the sweep, with the Scenario tab's edits if there are any (and say what they change)."""
        pane = self.main.query_one(ScenarioPane)
        draft = self._edited_draft()
        if draft is None:
            return
        changes = describe_changes(self.draft.values(), draft.values())
        if changes:
            self.last_changes = changes
        self._run_as(draft)
        pane.load(draft.values())
        pane.show_check({}, "", draft.title)
        if self.active_tab == "scenario":
            self.action_tab("frontier")
        self.start_sweep()
        if changes:
            self.notify(f"re-running with your edits: {changes}", timeout=6)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Esc cancels while a sweep runs (and the footer says so, in the place of r), else goes back. The keys
        that open a text field act only on the main screen and outside text fields (there they are text). Ctrl-C
        quits in a terminal, as in k9s and lazygit; in a browser it is the browser's copy, and ctrl+q quits."""
        if action in ("cancel_sweep", "rerun_when_idle"):
            return self.sweep_running == (action == "cancel_sweep")
        if action in TYPE_AHEAD:
            return not isinstance(self.screen, ModalScreen) and not isinstance(self.focused, Input)
        if action == "quit_now":
            return not self.files.confined
        return True

    def action_rerun_when_idle(self) -> None:
        self.action_rerun()

    def action_cancel_sweep(self) -> None:
        if self.job is not None:
            self.job.cancel()
            self._set_status("cancelling the sweep...")

    def action_go_back(self) -> None:
        """Esc: back to the Frontier tab."""
        self.action_tab("frontier")

    async def action_quit_now(self) -> None:
        await self.action_quit()

    def action_focus_filter(self) -> None:
        self.action_tab("frontier")
        self.main.query_one(FrontierPane).focus_filter()

    def action_switch_cost_mode(self) -> None:
        """Re-run the scenario with the other cost basis: rent (GPU-hours; network prices do not enter it) or own
        (capex, network included, and energy)."""
        other = "own" if self.cost_mode == "rent" else "rent"
        self.main.query_one(ScenarioPane).set_value("mode", other)
        self.action_rerun()

    def action_tab(self, tab: str) -> None:
        self.main.query_one(TabbedContent).active = tab
        home = self.main.query_one(_HOME[tab])
        home.screen.set_focus(home)  # now, not after the keys already read (as focus() would)

    @on(WhatIfChanged)
    def _what_if_changed(self) -> None:
        """Follow every what-if live while the ROI tab is open (else compare when it opens)."""
        if self.result is not None and self.active_tab == "roi":
            self.main.query_one(RoiPane).update()

    @on(RoiUpdated)
    def _roi_updated(self) -> None:
        self.roi_updates += 1

    @on(TabbedContent.TabActivated)
    def _tab_opened(self, event: TabbedContent.TabActivated) -> None:
        tab = event.pane.id or "frontier"
        if tab == "roi" and self.main.query_one(RoiPane).stale and self.result is not None:
            self.main.query_one(RoiPane).update()
        focused = self.focused
        pane = event.pane
        if focused is None or not (focused is pane or pane in focused.ancestors):
            self.main.query_one(_HOME[tab]).focus()

    async def _open_dialog(self, dialog: WriteFileScreen) -> None:
        """Open a dialog with its file name focused before the next key is read: keys typed ahead land there (D14)."""
        await self.push_screen(dialog)
        dialog.focus_name()

    async def action_export(self) -> None:
        """Write what the tab shows: the ROI table, the serving frontier, else the frontier rows shown."""
        views = self.main.query_one(RoiPane).view, self.main.query_one(ServingPane).view
        if (dialog := tab_export_dialog(self.active_tab, *views, self.files)) is not None:
            await self._open_dialog(dialog)
        elif self.active_tab == "serving" or self.shown.is_empty():
            self.notify("nothing to export yet", severity="warning")
        else:
            await self._open_dialog(export_rows_dialog(self.shown, self.filter.text if self.filter else "", self.files))

    async def action_save_scenario(self) -> None:
        """Save the scenario with the form's edits to a TOML file."""
        draft = self._edited_draft()
        if draft is None:
            return
        running = self.draft

        def saved(file: ScenarioDraft) -> None:
            if file.raw == running.raw:
                self._run_as(file)  # the scenario as run now stands for the file

        await self._open_dialog(save_scenario_dialog(draft, saved, self.files))

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_toggle_theme(self) -> None:
        self.theme = "textual-light" if self.theme == "textual-dark" else "textual-dark"

    def action_sort(self, column: str, descending: bool) -> None:
        self.action_tab("frontier")
        self._table.sort_rows(column, descending)

    def action_choose_columns(self) -> None:
        self.action_tab("frontier")
        self._table.action_choose_columns()

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        fabrics = sorted(set(self.frontier["fabric"].to_list())) if not self.frontier.is_empty() else []
        yield from palette(self, [(tab, title) for tab, title, _ in TABS], fabrics, self._specs()[:12])

    def unmark_all(self) -> None:
        self._table.action_unmark_all()

    def set_filter(self, text: str) -> None:
        """Write `text` in the filter line and apply it (empty: every row), on the Frontier tab."""
        self.main.query_one(FrontierPane).set_filter(text)
        self.apply_filter(text)
        self.action_tab("frontier")


def run(scenario: str = DEFAULT_SCENARIO, *, export_dir: Path | None = None) -> None:
    """Open the app on a scenario (built-in id or file) until the user quits. With `export_dir` (a served
    session), files are read and written only inside it."""
    ScalefrontApp(scenario, files=FileAccess(export_dir)).run()
