"""The buyer's tasks of the UI review (round 3, ../shared/reference/reviews/ui-review-2.md; issue 21) that do not
need the ROI rework, done at 80x24 with the keyboard alone, each counting its keys: the cheapest configuration
under 30 days exported as shown (task 3), two configurations side by side (task 4), help (task 6), cancel and quit
(task 7). The review's counts are the budget: a task may not take more keys than it did then.

Keys are pressed one at a time (Pilot waits for the app between them), except where a test types a burst on
purpose: there every key is posted at once, as a fast typist over SSH or an unbracketed paste delivers them."""

from __future__ import annotations

import polars as pl
import pytest
from textual import events
from textual.widgets import Input

from helpers.tui import active_tab, visible
from scalefront import api
from scalefront_tui.app import ScalefrontApp
from scalefront_tui.screens import HelpScreen, WriteFileScreen
from scalefront_tui.widgets.fields import TextInput

pytestmark = pytest.mark.asyncio

SMALL = (80, 24)
#: Keys as the review counted them (its section 1 table).
REVIEW_KEYS = {"task 3": 30, "task 4": 20, "task 6": 1, "task 7": 3}
#: Characters that Pilot names by their key name.
KEY_NAMES = {
    " ": "space",
    "/": "slash",
    "$": "dollar_sign",
    "<": "less_than_sign",
    ".": "full_stop",
    "=": "equals_sign",
}


class Keys:
    """Presses keys (one at a time, as typed) and counts them."""

    def __init__(self, pilot) -> None:
        self.pilot = pilot
        self.count = 0

    async def press(self, *keys: str) -> None:
        self.count += len(keys)
        await self.pilot.press(*keys)

    async def type(self, text: str) -> None:
        await self.press(*[KEY_NAMES.get(c, c) for c in text])


def burst(app: ScalefrontApp, *keys: str) -> None:
    """Post every key at once (characters as themselves, named keys such as ctrl+u or enter by name)."""
    for key in keys:
        if len(key) == 1:
            app.post_message(events.Key(KEY_NAMES.get(key, key), key))
        else:
            app.post_message(events.Key(key, "\r" if key == "enter" else None))


# ---------------------------------------------------------------------------------------------- task 3
async def test_task3_the_cheapest_under_30_days_exported_as_shown(ui, tmp_path, monkeypatch):
    """Filter days<30, sort by cost, export to a file under ~ (expanded): the CSV holds the rows on screen, in
    their order, with the values the table shows."""
    monkeypatch.setenv("HOME", str(tmp_path))
    app = ScalefrontApp()
    async with app.run_test(size=SMALL) as pilot:
        await ui.wait_for_sweep(pilot)
        keys = Keys(pilot)
        await keys.type("/days<30")
        await keys.press("enter")
        table = app.query_one("#frontier-table")
        while table.current_column != "cost_to_train_usd":
            await keys.press("l")
        await keys.press("s")
        await keys.press("e")
        assert isinstance(app.screen, WriteFileScreen)
        await keys.press("ctrl+u")
        await keys.type("~/under30.csv")
        await keys.press("enter")
        target = tmp_path / "under30.csv"
        await ui.wait_until(pilot, target.exists, "the export under ~")
        assert keys.count <= REVIEW_KEYS["task 3"], keys.count

        shown = app.shown
        assert 0 < shown.height < app.frontier.height and shown["time_to_train_days"].max() < 30
        costs = shown["cost_to_train_usd"].to_list()
        assert costs == sorted(costs), "sorted by cost, cheapest first"
        written = pl.read_csv(target)
        columns = table.shown_columns()
        on_screen = [row[1:] for row in ui.table_rows(app)]  # after the marks column
        assert written.height == len(on_screen) == shown.height
        for row, cells in zip(written.iter_rows(named=True), on_screen, strict=True):
            for name, cell in zip(columns, cells, strict=True):
                if name in written.columns:
                    value = api.column_spec(name).format(row[name])
                    assert cell == value or cell.endswith(f" {value}"), (name, cell, value)  # "● ib-ndr"
        first = written.row(0, named=True)
        assert api.format_money(first["cost_to_train_usd"]) in visible(ui, app), "the answer is on screen"
        # Saving the scenario expands ~ too (D16: "~ does not exist").
        await pilot.press("ctrl+s", "ctrl+u")
        await keys.type("~/mine.toml")
        await pilot.press("enter")
        await ui.wait_until(pilot, (tmp_path / "mine.toml").exists, "the scenario saved under ~")


async def test_task3_typed_as_one_burst(ui, tmp_path, monkeypatch):
    """D14: keys that arrive together (fast typing over SSH, an unbracketed paste) act in the order typed: the
    filter gets `days<30` (d, a, y and s are table keys too), l l l s move and sort the table after the filter
    is applied, and the export dialog opened by e gets its name, the review's `xyz` then ctrl+u and the name
    (which left the field empty) included."""
    monkeypatch.setenv("HOME", str(tmp_path))
    app = ScalefrontApp()
    async with app.run_test(size=SMALL) as pilot:
        await ui.wait_for_sweep(pilot)
        burst(app, *"/days<30", "enter", "l", "l", "l", "s", "e", *"xyz", "ctrl+u", *"~/typed.csv", "enter")
        target = tmp_path / "typed.csv"
        await ui.wait_until(pilot, target.exists, "the export typed ahead")
        assert app.query_one("#filter", Input).value == "days<30" and app.filter is not None
        written = pl.read_csv(target)
        assert written["time_to_train_days"].max() < 30 and 0 < written.height < app.frontier.height
        assert written["cost_to_train_usd"].to_list() == sorted(written["cost_to_train_usd"].to_list())


async def test_task3_in_two_writes_the_second_while_the_filter_line_reads_its_enter(ui, tmp_path, monkeypatch):
    """The same keys in two writes, the second (`e`, the name) arriving just as the filter line reads its Enter
    and hands the focus to the table: `e` acts after l l l s, so the export holds the sorted rows. (Textual had
    routed l l l s into the line's queue before it read the Enter, and `e` overtook them as the line handed them
    back: the name came out `~/typed.csvllls`; a CI run once saw it. sequencer.py keeps the order.)"""
    monkeypatch.setenv("HOME", str(tmp_path))
    app = ScalefrontApp()
    async with app.run_test(size=SMALL) as pilot:
        await ui.wait_for_sweep(pilot)
        line = app.query_one("#filter", TextInput)
        submit = line.action_submit

        async def submit_as_the_second_write_arrives() -> None:
            await submit()
            burst(app, "e", *"xyz", "ctrl+u", *"~/typed.csv", "enter")

        monkeypatch.setattr(line, "action_submit", submit_as_the_second_write_arrives)
        burst(app, *"/days<30", "enter", "l", "l", "l", "s")
        target = tmp_path / "typed.csv"
        await ui.wait_until(pilot, target.exists, "the export typed ahead")
        written = pl.read_csv(target)
        assert written["time_to_train_days"].max() < 30 and 0 < written.height < app.frontier.height
        assert written["cost_to_train_usd"].to_list() == sorted(written["cost_to_train_usd"].to_list())
        assert line.keys_unread == 0


# ---------------------------------------------------------------------------------------------- task 4
async def test_task4_two_configurations_side_by_side(ui):
    """The 4,096-GPU configurations of two fabrics: their difference, bars on one scale with each part's
    share, the GPU's scale-up domain and precision, and the communication hidden behind compute (D12)."""
    app = ScalefrontApp()
    async with app.run_test(size=SMALL) as pilot:
        await ui.wait_for_sweep(pilot)
        keys = Keys(pilot)
        await keys.type("/gpus=4096")
        await keys.press("enter", "m", "j", "m", "enter")
        assert keys.count <= REVIEW_KEYS["task 4"], keys.count
        assert active_tab(app) == "detail"
        # Detail compares the cursor's row first, then the other marked row.
        first, second = app.shown.row(1, named=True), app.shown.row(0, named=True)
        assert first["gpus"] == second["gpus"] == 4096 and first["fabric"] != second["fabric"]
        text = ui.text_of(app, "#detail-body")
        assert "2nd - 1st" in text and "comparing 2" in text
        step = api.column_spec("step_time_s")
        delta = second["step_time_s"] - first["step_time_s"]
        sign = "+" if delta > 0 else ""
        assert f"{sign}{step.format(delta)} ({sign}{delta / first['step_time_s']:.0%})" in text
        for r in (first, second):
            assert f"{r['gpu']}, {r['scale_up']} domain, {r['precision']}" in text
            assert f"{r['compute_s'] / r['step_time_s']:.0%}" in text, "each part's share of its own step"
        assert "hidden comm" in text
        hidden = [c for c in app.shown.columns if c.endswith("_hidden_s") and first[c] > 0]
        for c in hidden:
            assert api.column_spec(c).format(first[c]) in text, c

        # One scale: the longer step's compute bar is the longer one, in proportion.
        lines = [line for line in text.splitlines() if line.strip().startswith("compute")]
        bars = [cell.count("█") for cell in lines[0].split("%")[1:3]]
        longest = max(first["step_time_s"], second["step_time_s"])
        widths = [bars[0] / (first["compute_s"] / longest), bars[1] / (second["compute_s"] / longest)]
        assert abs(widths[0] - widths[1]) <= 2, (bars, widths)


async def test_detail_says_how_many_marks_it_shows_and_u_clears_them(ui):
    """D15: four marks and Enter: Detail shows three of four and says so; the status follows; u unmarks all."""
    app = ScalefrontApp()
    async with app.run_test(size=SMALL) as pilot:
        await ui.wait_for_sweep(pilot)
        await pilot.press("m", "j", "m", "j", "m", "j", "m")
        assert "marked 4" in ui.status(app)
        await pilot.press("enter")
        assert "showing 3 of 4" in ui.text_of(app, "#detail-body")
        await pilot.press("escape", "u")
        assert app.query_one("#frontier-table").marks == []
        assert "no rows marked" in ui.status(app)


async def test_a_frontier_that_mixes_gpus_shows_the_gpu_at_80_columns(ui, tmp_path):
    """Review, task 7: `large` hid the GPU column at 80 columns, so rows of two GPU types looked alike."""
    path = tmp_path / "two-gpus.toml"
    path.write_text(
        'name = "two-gpus"\n[workload]\nmodel = "llama3-70b"\ntokens = 2e12\nglobal_batch = 1024\n'
        '[cluster]\ngpu = ["h100-sxm", "a100-80gb"]\ngpus = [1024, 2048]\nfabric = ["ib-ndr"]\n'
        'topology = ["rail-fat-tree"]\n[parallelism]\ntp = { search = true, max = 8 }\n'
        'pp = { search = true, max = 8 }\n[objectives]\ngroup_by = ["gpu"]\n',
        encoding="utf-8",
    )
    app = ScalefrontApp(str(path))
    async with app.run_test(size=SMALL) as pilot:
        await ui.wait_for_sweep(pilot)
        columns = app.query_one("#frontier-table").shown_columns()
        assert columns[:2] == ["fabric", "gpu"]
        assert {"time_to_train_days", "cost_to_train_usd"} <= set(columns)
        assert "a100-80gb" in visible(ui, app) and "h100-sxm" in visible(ui, app)


# ---------------------------------------------------------------------------------------------- task 6
async def test_task6_f1_opens_the_help_which_says_how_to_quit(ui):
    app = ScalefrontApp()
    async with app.run_test(size=SMALL) as pilot:
        await ui.wait_for_sweep(pilot)
        keys = Keys(pilot)
        await keys.press("f1")
        assert isinstance(app.screen, HelpScreen)
        assert keys.count <= REVIEW_KEYS["task 6"]
        text = ui.text_of(app.screen, "#help-text")
        assert "ctrl+c" in text and "ctrl+q" in text and "F1" in text
        scroll = app.screen.query_one("#help-scroll")
        await pilot.press("G")
        assert scroll.scroll_y == scroll.max_scroll_y > 0
        await pilot.press("g")
        assert scroll.scroll_y == 0
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


# ---------------------------------------------------------------------------------------------- task 7
async def test_task7_esc_cancels_and_ctrl_c_quits(ui):
    """While a sweep runs (held at the engine's pause gate), the status line says "esc cancels" at 80 columns and
    the footer offers it; Esc cancels; Ctrl-C quits at once, as in k9s and lazygit (a sweep running or not)."""
    app = ScalefrontApp(autostart=False)
    async with app.run_test(size=SMALL) as pilot:
        keys = Keys(pilot)
        job = app.start_sweep(paused=True)
        await ui.wait_until(pilot, lambda: job.held() > 0, "the sweep's workers to reach the pause gate")
        await pilot.pause()
        lines = ui.screen_lines(app)
        assert "(esc cancels)" in lines[1] and "esc Cancel" in lines[-1], lines
        assert lines[-1].rstrip().endswith("^p palette") and "e Export" in lines[-1], lines[-1]
        await keys.press("escape")
        await ui.wait_until(pilot, lambda: "cancelled" in ui.status(app), "the sweep to stop")
        assert "esc Cancel" not in ui.screen_lines(app)[-1] and "r Re-run" in ui.screen_lines(app)[-1]
        app.start_sweep(paused=True)
        await keys.press("ctrl+c")
        await ui.wait_until(pilot, lambda: not app.is_running, "the app to quit")
        assert keys.count <= REVIEW_KEYS["task 7"] - 1, "one key fewer: Ctrl-C no longer asks for Ctrl-Q"
    assert app.return_code == 0


async def test_progress_keeps_esc_cancels_at_80_columns(ui):
    """The progress line of a long sweep is wider than 80 columns: its details give way, "esc cancels" stays."""
    from scalefront_tui.widgets.status import fit, progress_parts

    p = api.Progress(47_876_472, 118_222_848, 2_950_414, 1.2, {}, 40, 100)
    line = fit(progress_parts(p), 78)
    assert line.endswith("(esc cancels)") and line.startswith("sweeping: 40% of 118,222,848") and len(line) <= 78
    assert "fit" in fit(progress_parts(p), 200)


# ---------------------------------------------------------------------------------------------- every pane
async def test_every_pane_scrolls_from_the_keyboard(ui):
    """j/k, page up/down and g/G at 80x24: the Detail pane, and the ROI pane, which follows its table's cursor
    (D5: only the mouse wheel scrolled it), showing its verdict at the top and its tornado at the bottom."""
    app = ScalefrontApp()
    async with app.run_test(size=SMALL) as pilot:
        await ui.wait_for_sweep(pilot)
        await pilot.press("m", "j", "m", "enter")
        detail = app.query_one("#detail-pane")
        assert detail.max_scroll_y > 0
        for key, at in (("j", 1), ("G", detail.max_scroll_y), ("g", 0), ("pagedown", None)):
            await pilot.press(key)
            assert detail.scroll_y == at if at is not None else detail.scroll_y > 0, key
        await pilot.press("4")
        await ui.wait_for_roi(pilot)
        roi = app.query_one("#roi-pane")
        table = app.query_one("#roi-table")
        # The cursor starts on the row the verdict speaks of (the largest count), with the verdict in view.
        assert roi.max_scroll_y > 0 and roi.scroll_y == 0 and table.cursor_row == table.row_count - 1
        await pilot.press("g", "G")
        await pilot.pause()
        assert table.cursor_row == table.row_count - 1 and roi.scroll_y == roi.max_scroll_y
        assert "T: tornado" in visible(ui, app)
        await pilot.press("g")
        await pilot.pause()
        assert roi.scroll_y == 0 and "At 512 GPUs" in visible(ui, app)  # the verdict follows the cursor (issue 21)
        for _ in range(table.row_count - 2):
            await pilot.press("j")
            await pilot.pause()
            gpus = api.format_count(table.record()["gpus"])
            assert any(line.lstrip().startswith(gpus) for line in ui.screen_lines(app)), gpus
        await pilot.press("pageup")
        await pilot.pause()
        assert table.cursor_row == 0 and roi.scroll_y == 0


async def test_a_click_on_a_header_sorts_by_its_column(ui):
    """D15: a click on the `days` header sorts by days, a second click reverses."""
    app = ScalefrontApp()
    async with app.run_test(size=SMALL) as pilot:
        await ui.wait_for_sweep(pilot)
        y, line = next((i, line) for i, line in enumerate(ui.screen_lines(app)) if " days " in line)
        await pilot.click(offset=(line.index(" days ") + 2, y))
        days = app.shown["time_to_train_days"].to_list()
        assert days == sorted(days)
        await pilot.click(offset=(line.index(" days ") + 2, y))
        assert app.shown["time_to_train_days"].to_list() == sorted(days, reverse=True)


async def test_a_terminal_too_small_says_so_and_the_app_comes_back(ui):
    """D20: below 60x20 a notice replaces the tabs (with the size and what is needed); q still quits; back at
    80x24 the frontier is there and keys work."""
    app = ScalefrontApp()
    async with app.run_test(size=SMALL) as pilot:
        await ui.wait_for_sweep(pilot)
        await pilot.resize_terminal(40, 12)
        await pilot.pause()
        text = visible(ui, app)
        assert "terminal too small: 40x12" in text and "60x20" in text
        assert "fabric" not in text
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert "terminal too small" not in visible(ui, app) and "fabric" in visible(ui, app)
        await pilot.press("j")
        assert app.query_one("#frontier-table").cursor_row == 1


# ---------------------------------------------------------------------------------------------- 80 columns
async def test_the_footer_keeps_export_and_ends_cleanly_on_every_tab(ui):
    """D13: at 80 columns the footer lost `e Export` and showed a stray cell after `^p palette`."""
    app = ScalefrontApp()
    async with app.run_test(size=SMALL) as pilot:
        await ui.wait_for_sweep(pilot)
        for key in ("1", "2", "c", "c", "3", "4", "5"):
            await pilot.press(key)
            await pilot.pause()
            footer = ui.screen_lines(app)[-1].rstrip()
            assert "e Export" in footer and footer.endswith("^p palette"), (key, footer)


async def test_the_status_line_keeps_the_edits_and_the_marks_at_80_columns(ui):
    """D13: "…; edited:" and "marked 2: …; 3:" were cut at 80 columns."""
    app = ScalefrontApp()
    async with app.run_test(size=SMALL) as pilot:
        await ui.wait_for_sweep(pilot)
        await pilot.press("5")
        field = app.query_one("#f-tokens", Input)
        field.value = "15T"
        await pilot.press("ctrl+r")
        await ui.wait_for_sweep(pilot, 2)
        status = ui.screen_lines(app)[1]
        assert "on the frontier of" in status and "edited: tokens 2T → 15T" in status, status
        await pilot.press("m", "j", "m")
        status = ui.screen_lines(app)[1]
        assert "marked 2 (3 compares, u unmarks all)" in status, status


# ---------------------------------------------------------------------------------------------- cost basis
async def test_the_cost_says_rent_or_own_and_o_switches(ui):
    """D10: the frontier's cost was rent-mode, where network prices do not count, unlabelled. The header says
    the mode, the note beside the filter says what it leaves out, and `o` re-runs in own mode."""
    app = ScalefrontApp()
    async with app.run_test(size=SMALL) as pilot:
        await ui.wait_for_sweep(pilot)
        assert "cost (rent)" in ui.table_headers(app)
        assert "network prices not in it" in visible(ui, app)
        assert set(app.frontier["cost_mode"]) == {"rent"}
        await pilot.press("o")
        await ui.wait_for_sweep(pilot, 2)
        assert "cost (own)" in ui.table_headers(app)
        assert set(app.frontier["cost_mode"]) == {"own"} and app.draft.value("mode") == "own"
        assert app.frontier["cost_to_train_usd"].to_list() == app.frontier["cost_own_usd"].to_list()
        assert "cost: own" in visible(ui, app) and "cost mode rent → own" in ui.status(app)
        await pilot.press("2")
        assert "cost to train (own)" in "\n".join(line.plain for line in app.query_one("#chart").lines())
