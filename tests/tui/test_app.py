"""The terminal UI driven headless with Textual's Pilot, as a user would: sweep, frontier table, detail and
comparison, keys of well-liked terminal apps (j/k/g/G, columns, copy, palette, footer), charts, the scenario form
(numbers as people write them, save to TOML), and a sweep that keeps running while the UI answers keys (held at the
engine's pause gate, not assumed to be slow). The ROI tab's what-ifs, tornado and export: test_app_roi.py."""

from __future__ import annotations

import polars as pl
import pytest
from rich.table import Table
from textual.widgets import DataTable, Footer, Input, Static

from helpers.tui import active_tab, frontier_table, paste_into
from scalefront import api
from scalefront_tui.app import ScalefrontApp
from scalefront_tui.screens import ColumnsScreen, HelpScreen, WriteFileScreen
from scalefront_tui.widgets.frame_table import MARK

pytestmark = pytest.mark.asyncio

SIZE = (100, 30)


# ---------------------------------------------------------------------------------------------- frontier
async def test_sweep_table_detail_and_comparison(ui):
    app = ScalefrontApp()
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_for_sweep(pilot)
        table = frontier_table(app)
        assert app.frontier.height > 0
        assert table.row_count == app.frontier.height
        assert "on the frontier of 138,240 configurations" in ui.status(app)
        assert app.focused is table
        assert app.shown["fabric"].to_list() == app.frontier["fabric"].to_list()

        await pilot.press("down", "enter")
        assert active_tab(app) == "detail"
        row = app.shown.row(1, named=True)
        text = ui.text_of(app, "#detail-body")
        assert f"{row['fabric']} {row['gpus']:,} x {row['gpu']}" in text
        for label in ("step time", "compute", "bubble", "DP comm", "optimizer", "memory per GPU", "network", "capex"):
            assert label in text, label
        assert api.column_spec("step_time_s").format(row["step_time_s"]) in text
        assert row["layout"] in text
        bom = app.draft.bill_of_materials(row)
        assert f"{bom['nics']:,.0f} NICs" in text

        # Back (esc), mark two rows: the Detail tab compares them side by side.
        await pilot.press("escape")
        assert active_tab(app) == "frontier" and app.focused is table
        await pilot.press("m", "down", "m")
        detail = app.query_one("#detail-body", Static).content.renderables[-1]
        assert isinstance(detail, Table)
        assert len(detail.columns) == 4, "the two marked rows and their difference"
        marked = [app.shown.row(i, named=True) for i in (1, 2)]
        glyphs = [app.markers.glyph(r["fabric"]) for r in marked]
        headers = [c.header.plain for c in detail.columns[1:]]
        assert headers == [
            *[f"{g} {r['fabric']} {r['gpus']:,} x {r['gpu']}" for g, r in zip(glyphs, marked, strict=True)],
            "2nd - 1st",
        ]
        assert "marked 2" in ui.status(app)


@pytest.mark.parametrize("size", [(80, 24), (100, 30), (140, 45)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_every_tab_fits_the_terminal(ui, size):
    """No tab makes the screen scroll: header, status, tabs and footer stay visible at every size."""
    app = ScalefrontApp()
    async with app.run_test(size=size) as pilot:
        await ui.wait_for_sweep(pilot)
        for key in "12345":
            await pilot.press(key)
            await pilot.pause()
            screen = app.screen
            assert screen.virtual_size.height <= screen.size.height, key
            lines = ui.screen_lines(app)
            assert "scalefront" in lines[0] and "Frontier" in lines[2], key
            assert "Quit" in lines[-1] or "palette" in lines[-1], key


async def test_j_k_g_and_shift_g_move_in_tables(ui):
    app = ScalefrontApp()
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_for_sweep(pilot)
        table = frontier_table(app)
        await pilot.press("j", "j")
        assert table.cursor_row == 2
        await pilot.press("k")
        assert table.cursor_row == 1
        await pilot.press("G")
        assert table.cursor_row == table.row_count - 1
        await pilot.press("g")
        assert table.cursor_row == 0


async def test_filter_rejects_a_bad_term_with_its_reason_and_keeps_the_rows(ui):
    app = ScalefrontApp()
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_for_sweep(pilot)
        await pilot.press("slash")
        assert app.focused is app.query_one("#filter")
        await paste_into(pilot, "#filter", "fabric=roce")
        await pilot.press("enter")
        expected = app.frontier.filter(pl.col("fabric") == "roce-400g@untuned").height  # rows name the mode
        assert frontier_table(app).row_count == expected
        assert f"{expected} of {app.frontier.height} frontier rows match" in ui.status(app)
        field = app.query_one("#filter", Input)
        for bad, reason in (("dayz<10", "did you mean 'days'"), ("gpus>=many", "not a number"), ("fabric>3", "text")):
            await pilot.press("slash")
            await paste_into(pilot, "#filter", bad)
            await pilot.press("enter")
            assert field.has_class("invalid"), bad
            assert reason in ui.status(app), (bad, ui.status(app))
            assert frontier_table(app).row_count == expected  # the filter in force stays
        await pilot.press("escape")  # leaves the field, which shows the filter in force again
        assert field.value == "fabric=roce" and not field.has_class("invalid")
        assert app.focused is frontier_table(app)


async def test_columns_follow_the_width_and_the_chooser(ui):
    """At 80 columns the answer's columns; wider terminals show more; `c` chooses any column of the schema."""
    app = ScalefrontApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await ui.wait_for_sweep(pilot)
        table = frontier_table(app)
        narrow = table.shown_columns()
        assert narrow[:6] == ["fabric", "gpus", "time_to_train_days", "cost_to_train_usd", "mfu", "layout"]
        await pilot.resize_terminal(140, 45)
        await pilot.pause()
        wide = table.shown_columns()
        assert wide[:7] == [*narrow[:6], "topology_label"] and len(wide) > len(narrow)
        await pilot.press("c")
        assert isinstance(app.screen, ColumnsScreen)
        chooser = app.screen.query_one("#columns-list")
        chooser.deselect_all()
        chooser.select("fabric")
        chooser.select("energy_mwh")
        await pilot.press("enter")
        assert table.shown_columns() == ["fabric", "energy_mwh"]
        assert "energy" in ui.table_headers(app)
        await pilot.press("c", "a")
        assert table.shown_columns() == wide


async def test_y_copies_the_row_and_says_so(ui, monkeypatch):
    app = ScalefrontApp()
    said: list[str] = []
    notify = app.notify
    monkeypatch.setattr(app, "notify", lambda message, **kw: said.append(message) or notify(message, **kw))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await ui.wait_for_sweep(pilot)
        await pilot.press("down", "y")
        row = app.shown.row(1, named=True)
        header, values = app.clipboard.strip().split("\n")
        assert header.split(",")[:3] == ["model", "gpu", "gpus"]
        assert f",{row['gpus']}," in values and row["fabric"] in values
        assert any("copied the row" in message for message in said)


async def test_marks_survive_a_sort(ui):
    """Marks are configurations, not table positions."""
    app = ScalefrontApp()
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_for_sweep(pilot)
        row = app.shown.row(0, named=True)
        await pilot.press("m")
        table = frontier_table(app)
        table.sort_rows("cost_to_train_usd", False)
        await pilot.pause()
        assert app.shown.row(0, named=True) != row
        assert table.marked_records() == [row]
        index = app.shown["gpus"].to_list().index(row["gpus"])
        marked_rows = [i for i, r in enumerate(ui.table_rows(app)) if r[0] == MARK]
        assert len(marked_rows) == 1 and app.shown.row(marked_rows[0], named=True) == row
        assert index >= 0


async def test_palette_has_commands_for_tabs_sort_and_filter(ui):
    app = ScalefrontApp()
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_for_sweep(pilot)
        commands = {c.title: c for c in app.get_system_commands(app.screen)}
        for title in ("Go to Frontier", "Go to ROI", "Sort by days (ascending)", "Sort by cost (descending)"):
            assert title in commands, title
        assert "Filter the frontier" in commands and "Clear the filter" in commands
        commands["Filter: only ib-ndr@default"].callback()  # rows name the mode
        await pilot.pause()
        assert set(app.shown["fabric"]) == {"ib-ndr@default"}
        commands["Sort by cost (descending)"].callback()
        await pilot.pause()
        costs = app.shown["cost_to_train_usd"].to_list()
        assert costs == sorted(costs, reverse=True)
        commands["Go to ROI"].callback()
        await pilot.pause()
        assert active_tab(app) == "roi"


async def test_the_footer_shows_what_works_in_the_focused_widget(ui):
    app = ScalefrontApp()
    async with app.run_test(size=(140, 45)) as pilot:
        await ui.wait_for_sweep(pilot)

        def footer() -> str:
            return ui.screen_lines(app)[-1]

        assert "Sort" in footer() and "Mark" in footer()
        await pilot.press("slash")
        await pilot.pause()
        assert "Back" in footer() and "Sort" not in footer()
        await pilot.press("escape", "2")
        await pilot.pause()
        assert "Next chart" in footer() and "Log axes" in footer()
        assert app.query_one(Footer) is not None


async def test_help_opens_and_closes(ui):
    app = ScalefrontApp()
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_for_sweep(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        assert "Filter" in ui.text_of(app.screen, "#help-text")
        await pilot.press("question_mark")
        assert not isinstance(app.screen, HelpScreen)


async def test_t_toggles_the_theme(ui):
    app = ScalefrontApp()
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_for_sweep(pilot)
        assert app.theme == "textual-dark"
        await pilot.press("t")
        assert app.theme == "textual-light"


# ---------------------------------------------------------------------------------------------- charts
async def test_charts_switch_between_cost_scaling_and_breakdown(ui):
    app = ScalefrontApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await ui.wait_for_sweep(pilot)
        await pilot.press("2")
        chart = app.query_one("#chart")
        assert "cost to train" in "\n".join(line.plain for line in chart.lines())
        await pilot.press("l")
        log_lines = "\n".join(line.plain for line in chart.lines())
        assert "days to train" in log_lines
        await pilot.press("c")
        text = "\n".join(line.plain for line in chart.lines())
        assert "scaling efficiency" in text and "16,384" in text and "%" in text
        await pilot.press("c")
        text = "\n".join(line.plain for line in chart.lines())
        assert "step time at 16,384 GPUs" in text
        for component in ("compute", "optimizer"):
            assert component in text
        for fabric in app.draft.scenario.fabric_names:
            assert fabric in text
        await pilot.press("left_square_bracket")
        assert "step time at 8,192 GPUs" in "\n".join(line.plain for line in chart.lines())


async def test_the_frontier_shows_the_chart_beside_the_table_on_tall_terminals(ui):
    app = ScalefrontApp()
    async with app.run_test(size=(140, 45)) as pilot:
        await ui.wait_for_sweep(pilot)
        assert app.query_one("#frontier-chart").display
        assert "days to train" in "\n".join(ui.screen_lines(app))
    app = ScalefrontApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await ui.wait_for_sweep(pilot)
        assert "days to train" not in "\n".join(ui.screen_lines(app))


# ---------------------------------------------------------------------------------------------- scenario
async def test_the_form_takes_numbers_as_people_write_them(ui):
    app = ScalefrontApp()
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_for_sweep(pilot)
        await pilot.press("5")
        await paste_into(pilot, "#f-tokens", "1.5T")
        await paste_into(pilot, "#f-global_batch", "1,024")
        await paste_into(pilot, "#f-gpus", "1k, 2,048")
        await paste_into(pilot, "#f-rent", "$2.50")
        await pilot.press("escape")
        assert "problem" not in ui.text_of(app, "#form-summary")
        await pilot.press("ctrl+r")
        await ui.wait_for_sweep(pilot, 2)
        space = app.draft.scenario.space
        assert space["training"]["tokens"] == 1.5e12 and space["training"]["global_batch"] == 1024
        assert app.draft.scenario.gpu_counts == [1000, 2048]
        assert app.draft.raw["economics"]["prices"]["rent_usd_per_gpu_hour"] == 2.5
        assert app.sub_title == "ib-vs-roce (edited)"
        assert "tokens 2T → 1.5T" in ui.status(app)


async def test_ctrl_r_runs_from_inside_a_field(ui):
    app = ScalefrontApp()
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_for_sweep(pilot)
        await pilot.press("5")
        await paste_into(pilot, "#f-gpus", "1024")
        await pilot.press("ctrl+r")
        await ui.wait_for_sweep(pilot, 2)
        assert app.draft.scenario.gpu_counts == [1024]
        assert active_tab(app) == "frontier"


async def test_a_bad_form_value_stops_the_run_and_says_why(ui):
    app = ScalefrontApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await ui.wait_for_sweep(pilot)
        await pilot.press("5")
        await paste_into(pilot, "#f-fabric", "ib-ndr, infiniband")
        await pilot.press("escape", "1", "r")
        assert active_tab(app) == "scenario"
        assert "not run: 1 problem on the Scenario tab" in ui.status(app)
        assert "unknown fabric 'infiniband'" in "\n".join(ui.screen_lines(app))
        assert app.sweeps_finished == 1


async def test_save_the_edited_scenario_to_toml(ui, tmp_path):
    app = ScalefrontApp()
    target = tmp_path / "mine.toml"
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_for_sweep(pilot)
        await pilot.press("5")
        await paste_into(pilot, "#f-tokens", "1T")
        await pilot.press("ctrl+r")
        await ui.wait_for_sweep(pilot, 2)
        await pilot.press("ctrl+s")
        assert isinstance(app.screen, WriteFileScreen)
        await paste_into(pilot, "#write-path", str(target))
        await pilot.press("enter")
        await ui.wait_until(pilot, target.exists, "the saved scenario")
        assert app.sub_title == f"ib-vs-roce (saved to {target})"
        saved = api.ScenarioDraft.open(str(target))
        assert saved.scenario.space == app.draft.scenario.space
        # Saving again over it needs the box ticked.
        await pilot.press("ctrl+s")
        await paste_into(pilot, "#write-path", str(target))
        await pilot.press("enter")
        assert "tick the box to replace it" in ui.text_of(app.screen, "#write-error")


async def test_rerun_with_the_untouched_form_reproduces_the_sweep(ui):
    app = ScalefrontApp()
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_for_sweep(pilot)
        first = app.frontier
        await pilot.press("r")
        await ui.wait_for_sweep(pilot, 2)
        assert app.frontier.equals(first)
        assert app.sub_title == "ib-vs-roce"


async def test_rerun_keeps_each_gpus_own_rent(ui, tmp_path):
    text = """name = "two-gpus"
[workload]
model = "llama3-70b"
tokens = 2e12
global_batch = 1024
[cluster]
gpu = ["h100-sxm", "a100-80gb"]
gpus = [1024, 2048]
fabric = ["ib-ndr"]
topology = ["rail-fat-tree"]
[parallelism]
tp = { search = true, max = 8 }
pp = { search = true, max = 8 }
[objectives]
group_by = ["gpu"]
"""
    path = tmp_path / "two-gpus.toml"
    path.write_text(text, encoding="utf-8")
    app = ScalefrontApp(str(path))
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_for_sweep(pilot)
        first = app.frontier
        assert set(first["gpu"]) == {"h100-sxm", "a100-80gb"}
        await pilot.press("r")
        await ui.wait_for_sweep(pilot, 2)
        cost = ["gpu", "gpus", "cost_to_train_usd"]
        assert app.frontier.select(cost).rows() == first.select(cost).rows()


# ---------------------------------------------------------------------------------------------- sweeps
async def test_the_ui_answers_keys_while_a_sweep_runs(ui):
    """The sweep is held at the engine's pause gate (provably running, provably not finished) while keys change
    tab and theme; released, it finishes and fills the table."""
    app = ScalefrontApp(autostart=False)
    async with app.run_test(size=SIZE) as pilot:
        job = app.start_sweep(paused=True)
        await ui.wait_until(pilot, lambda: job.held() > 0, "the sweep's workers to reach the pause gate")
        await pilot.press("2")
        assert active_tab(app) == "charts"
        await pilot.press("t")
        assert app.theme == "textual-light"
        await pilot.press("question_mark", "escape", "5")
        assert active_tab(app) == "scenario"
        assert app.sweeps_finished == 0 and job.held() > 0 and app.sweep_running
        job.resume()
        await ui.wait_for_sweep(pilot)
        assert frontier_table(app).row_count == app.frontier.height > 0


async def test_a_finished_sweep_does_not_move_the_user_away(ui):
    app = ScalefrontApp(autostart=False)
    async with app.run_test(size=SIZE) as pilot:
        job = app.start_sweep(paused=True)
        await ui.wait_until(pilot, lambda: job.held() > 0, "the pause gate")
        await pilot.press("5", "tab")
        field = app.focused
        assert isinstance(field, Input)
        job.resume()
        await ui.wait_for_sweep(pilot)
        assert active_tab(app) == "scenario" and app.focused is field


async def test_escape_cancels_a_sweep_before_it_plans(ui):
    # Esc at any moment, planning included (review 2, T9: the UI froze on a huge space while it counted and planned):
    # the job is held before the engine plans, Esc cancels it there, and the engine never plans it.
    app = ScalefrontApp(autostart=False)
    async with app.run_test(size=SIZE) as pilot:
        job = app.start_sweep(paused=True)
        await ui.wait_until(pilot, lambda: job.held() > 0, "the pause gate")
        assert not job.planned
        await pilot.press("escape")
        await ui.wait_until(pilot, lambda: "cancelled" in ui.status(app), "the sweep to stop")
        assert job.cancelled and not job.planned and job.done() == 0


async def test_escape_cancels_a_running_sweep(ui):
    app = ScalefrontApp(autostart=False)
    async with app.run_test(size=SIZE) as pilot:
        job = app.start_sweep(paused=True)
        await ui.wait_until(pilot, lambda: job.held() > 0, "the pause gate")
        await pilot.press("escape")
        await ui.wait_until(pilot, lambda: "cancelled" in ui.status(app), "the sweep to stop")
        assert job.cancelled and app.sweeps_finished == 0 and not app.sweep_running
        assert app.result is None and frontier_table(app).row_count == 0
        await pilot.press("e")  # nothing to export: a warning, no dialog
        assert not isinstance(app.screen, WriteFileScreen)
        await pilot.press("r")
        await ui.wait_for_sweep(pilot)
        assert frontier_table(app).row_count > 0
        assert isinstance(frontier_table(app), DataTable)
