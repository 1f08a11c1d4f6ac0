"""The scalefront terminal UI: run a scenario's sweep in a worker, browse its frontier (filter, sort, mark,
copy), read it in charts, look inside configurations, compare two fabrics with what-if inputs, edit and save
the scenario, export what is shown. Every number comes from scalefront's public API (`scalefront.api`); this
package holds no model math.

The app holds the state (the scenario as run, the sweep, its frontier, the filter) and wires the tabs' panes
(widgets/) and dialogs (screens/): panes post messages up (messages.py), the app decides and hands each pane
what it shows. No pane imports this module.

Layout is designed at 80x24 first; keys follow well-liked terminal apps (see the help screen, `?`)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, ClassVar

import polars as pl
from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static, TabbedContent, TabPane

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
    export_roi,
    export_rows,
    format_count,
    format_si,
    frontier,
    message_of,
    parse_filter,
)
from scalefront_tui.commands import palette
from scalefront_tui.files import FileAccess
from scalefront_tui.messages import FilterApplied, PointSelected, RoiUpdated, ScenarioEdited, WhatIfChanged
from scalefront_tui.screens import HelpScreen, WriteFileScreen
from scalefront_tui.widgets.charts import ChartsPane
from scalefront_tui.widgets.detail import DetailPane
from scalefront_tui.widgets.fields import Field
from scalefront_tui.widgets.figures import FrontierView
from scalefront_tui.widgets.frame_table import FrameTable
from scalefront_tui.widgets.frontier import FRONTIER_COLUMNS, FrontierPane
from scalefront_tui.widgets.roi import RoiPane
from scalefront_tui.widgets.scenario import ScenarioPane, describe_changes

#: Tabs: id, title (with its key), and the widget that takes the focus when the tab opens (never a text field).
TABS = [
    ("frontier", "1 Frontier", "#frontier-table"),
    ("charts", "2 Charts", "#chart"),
    ("detail", "3 Detail", "#detail-pane"),
    ("roi", "4 ROI", "#roi-table"),
    ("scenario", "5 Scenario", "#scenario-pane"),
]
_HOME = {tab: home for tab, _, home in TABS}


class ScalefrontApp(App[None]):
    """Browse a scenario's trade-offs."""

    CSS_PATH = "app.tcss"
    TITLE = "scalefront"
    VERTICAL_BREAKPOINTS = [(0, "-short"), (40, "-tall")]
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        Binding("question_mark", "help", "Help"),
        Binding("r", "rerun", "Re-run"),
        Binding("ctrl+r", "rerun", "Run", show=False, priority=True),
        Binding("ctrl+s", "save_scenario", "Save scenario", show=False, priority=True),
        Binding("slash", "focus_filter", "Filter"),
        Binding("e", "export", "Export"),
        Binding("t", "toggle_theme", "Theme", show=False),
        Binding("escape", "go_back", "Back", show=False),
        *[Binding(str(i + 1), f"tab('{tab}')", title, show=False) for i, (tab, title, _) in enumerate(TABS)],
    ]

    def __init__(
        self, scenario: str = DEFAULT_SCENARIO, *, autostart: bool = True, files: FileAccess | None = None
    ) -> None:
        super().__init__()
        #: Where the app may read and write files (confined to the export directory when served).
        self.files = files or FileAccess()
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
        self.sweeps_finished = 0
        self.roi_updates = 0

    # ------------------------------------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="status")
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
                yield ScenarioPane(self.draft.values(), id="scenario-pane")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sub_title = self.draft.title
        self.query_one(RoiPane).reset_inputs()
        self.query_one(ScenarioPane).show_check({}, "", self.draft.title)
        self.query_one("#frontier-table").focus()
        if self.autostart:
            self.start_sweep()

    def on_unmount(self) -> None:
        if self.job is not None:
            self.job.cancel()

    @property
    def _table(self) -> FrameTable:
        return self.query_one(FrontierPane).table

    @property
    def shown(self) -> pl.DataFrame:
        """The frontier rows on screen: filtered, in the table's order."""
        return self._table.frame

    @property
    def active_tab(self) -> str:
        return self.query_one(TabbedContent).active

    @property
    def group_by(self) -> list[str]:
        return list(self.draft.scenario.space["group_by"])

    @property
    def row_key(self) -> list[str]:
        """The columns that identify a configuration (the schema's inputs): marks and the selected point follow
        them across sorts, filters and re-runs."""
        return self._table.key_columns

    def selected_record(self) -> dict[str, Any] | None:
        """The frontier table's cursor row."""
        return self._table.record()

    def _set_status(self, text: str) -> None:
        self.query_one("#status", Static).update(text)

    def _run_as(self, draft: ScenarioDraft) -> None:
        """Make `draft` the scenario as run: the title says so and the ROI tab compares in it."""
        self.draft = draft
        self.sub_title = draft.title
        self.query_one(RoiPane).load_scenario(draft)

    # ------------------------------------------------------------------------------------------------ sweep
    def start_sweep(self, *, paused: bool = False) -> SweepJob:
        """Sweep the scenario as run in a worker thread (a running sweep is cancelled first). With `paused`, the
        engine holds its workers until `job.resume()`."""
        if self.job is not None:
            self.job.cancel()
        job = SweepJob(self.draft, paused=paused)
        self.job = job
        self.sweep_running = True
        self._set_status(f"sweeping {self.draft.name}: {format_count(job.total)} configurations (esc cancels)")
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
        share = p.done / p.total if p.total else 1.0
        eta = f", {p.eta_s:.0f} s left" if p.eta_s is not None else ""
        self._set_status(
            f"sweeping: {format_count(p.done)} of {format_count(p.total)} ({share:.0%}), {format_si(p.rate)}/s{eta}; "
            f"{format_count(p.feasible)} fit (esc cancels)"
        )

    def _sweep_done(self, job: SweepJob, result: SweepResult | str) -> None:
        if job is not self.job:
            return  # a newer sweep replaced this one
        self.sweep_running = False
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
        summary = (
            f"{format_count(self.frontier.height)} on the frontier of {format_count(result.evaluated)} "
            f"configurations ({format_count(result.feasible)} fit) in {result.wall_s:.2f} s"
        )
        self._set_status(summary + (f"; edited: {self.last_changes}" if self.last_changes else ""))
        roi = self.query_one(RoiPane)
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
        self._table.load(rows, self._specs())
        self._redraw_charts()

    def _redraw_charts(self) -> None:
        """Hand the charts the frontier as shown (rows, filter, selected point)."""
        view = FrontierView(self.shown, self.best_shown, self.group_by, self.row_key, self.selected_record())
        self.query_one(ChartsPane).show(view)
        self.query_one(FrontierPane).show(view)

    def apply_filter(self, text: str) -> bool:
        """Filter the frontier (empty text: no filter); False, with the reason in the status line, if it does
        not parse."""
        pane = self.query_one(FrontierPane)
        try:
            parsed = parse_filter(text, self._specs() or [column_spec(c) for c in FRONTIER_COLUMNS])
        except ValueError as err:
            pane.reject_filter()
            self._set_status(f"filter: {err}")
            return False
        self.filter = parsed if parsed.terms else None
        pane.accept_filter(self.filter.text if self.filter else "")
        self._show_frontier()
        if self.filter:
            self._set_status(
                f"{format_count(self.shown.height)} of {format_count(self.frontier.height)} frontier rows match "
                f"{text.strip()!r} (/ to change, empty to clear)"
            )
        else:
            self._set_status(f"{format_count(self.frontier.height)} frontier rows (no filter)")
        return True

    @on(FilterApplied)
    def _filter_applied(self, event: FilterApplied) -> None:
        if self.apply_filter(event.text):
            self._table.focus()

    @on(Field.Left)
    def _field_left(self) -> None:
        """Esc in a field: back to its tab's main widget."""
        self.query_one(_HOME[self.active_tab]).focus()

    @on(PointSelected)
    def _point_selected(self, event: PointSelected) -> None:
        self.query_one(FrontierPane).step_cursor(event.step)

    @on(DataTable.RowHighlighted, "#frontier-table")
    def _row_moved(self) -> None:
        self._redraw_charts()

    @on(DataTable.RowSelected, "#frontier-table")
    def _row_selected(self) -> None:
        table = self._table
        record = table.record()
        rows = [record] if record else []
        rows += [r for r in table.marked_records() if r != record]
        self.query_one(DetailPane).show(rows[:3], self.draft)
        self.action_tab("detail")

    @on(FrameTable.Changed, "#frontier-table")
    def _table_changed(self, event: FrameTable.Changed) -> None:
        table = event.table
        marked = table.marked_records()
        if marked:
            self.query_one(DetailPane).show(marked[:3], self.draft)
        names = ", ".join(f"{r['fabric']} {format_count(r['gpus'])} x {r['gpu']}" for r in marked[:3])
        if marked and self.sweeps_finished:
            self._set_status(f"marked {len(marked)}: {names}{' ...' if len(marked) > 3 else ''}; 3: compare them")
        self._redraw_charts()

    # ------------------------------------------------------------------------------------------------ scenario
    def _form_values(self, values: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
        """The form's values, with a model file typed in the browser resolved inside the export directory, and
        the problem if it is not there."""
        model = values.get("model", "").strip()
        if not self.files.confined or not model.endswith(".toml") or model == self.draft.value("model"):
            return values, {}
        try:
            return {**values, "model": str(self.files.resolve(model))}, {}
        except ScalefrontError as err:
            return values, {"model": message_of(err)}

    @on(ScenarioEdited)
    def _scenario_edited(self, event: ScenarioEdited) -> None:
        values, problems = self._form_values(event.values)
        problems = problems or self.draft.check(values)
        self.query_one(ScenarioPane).show_check(
            problems, describe_changes(self.draft.values(), values), self.draft.title
        )

    def _edited_draft(self) -> ScenarioDraft | None:
        """The scenario with the form's edits, or None (the problems shown on the Scenario tab)."""
        pane = self.query_one(ScenarioPane)
        values, problems = self._form_values(pane.values())
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
        pane = self.query_one(ScenarioPane)
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

    def action_go_back(self) -> None:
        """Esc: cancel a running sweep; else back to the Frontier tab."""
        if self.sweep_running and self.job is not None:
            self.job.cancel()
            self._set_status("cancelling the sweep...")
            return
        self.action_tab("frontier")

    def action_focus_filter(self) -> None:
        self.action_tab("frontier")
        self.query_one(FrontierPane).focus_filter()

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab
        self.query_one(_HOME[tab]).focus()

    @on(WhatIfChanged)
    def _what_if_changed(self) -> None:
        """Follow every what-if live while the ROI tab is open (else compare when it opens)."""
        if self.result is not None and self.active_tab == "roi":
            self.query_one(RoiPane).update()

    @on(RoiUpdated)
    def _roi_updated(self) -> None:
        self.roi_updates += 1

    @on(TabbedContent.TabActivated)
    def _tab_opened(self, event: TabbedContent.TabActivated) -> None:
        tab = event.pane.id or "frontier"
        if tab == "roi" and self.query_one(RoiPane).stale and self.result is not None:
            self.query_one(RoiPane).update()
        focused = self.focused
        pane = event.pane
        if focused is None or not (focused is pane or pane in focused.ancestors):
            self.query_one(_HOME[tab]).focus()

    def action_export(self) -> None:
        """Write what the tab shows: the ROI table on the ROI tab, else the frontier rows shown."""
        roi = self.query_one(RoiPane)
        if self.active_tab == "roi" and roi.view is not None:
            view = roi.view

            def write_roi(path: str, force: bool) -> Path:
                return export_roi(view, path, force=force)

            self.push_screen(
                WriteFileScreen(f"Export the ROI table ({view.table.height} rows)", "roi.csv", write_roi, self.files)
            )
            return
        shown = self.shown
        if shown.is_empty():
            self.notify("nothing to export yet", severity="warning")
            return

        def write_rows(path: str, force: bool) -> Path:
            return export_rows(shown, path, force=force)

        what = f"the {shown.height} rows shown" + (f" (filter {self.filter.text})" if self.filter else "")
        self.push_screen(WriteFileScreen(f"Export {what} to .csv or .parquet", "frontier.csv", write_rows, self.files))

    def action_save_scenario(self) -> None:
        """Save the scenario with the form's edits to a TOML file."""
        draft = self._edited_draft()
        if draft is None:
            return
        running = self.draft

        def write(path: str, force: bool) -> Path:
            saved = draft.save(path, force=force)
            if saved.raw == running.raw:
                self._run_as(saved)
            return Path(saved.file)

        self.push_screen(WriteFileScreen("Save the scenario as TOML", f"{draft.name}-edited.toml", write, self.files))

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

    def clear_filter(self) -> None:
        """Show every frontier row."""
        self.query_one(FrontierPane).set_filter("")
        self.apply_filter("")

    def filter_fabric(self, fabric: str) -> None:
        """Show only one fabric's frontier rows, on the Frontier tab."""
        text = f"fabric=={fabric}"
        self.query_one(FrontierPane).set_filter(text)
        self.apply_filter(text)
        self.action_tab("frontier")


def run(scenario: str = DEFAULT_SCENARIO, *, export_dir: Path | None = None) -> None:
    """Open the app on a scenario (built-in id or file) until the user quits. With `export_dir` (a served
    session), files are read and written only inside it."""
    ScalefrontApp(scenario, files=FileAccess(export_dir)).run()
