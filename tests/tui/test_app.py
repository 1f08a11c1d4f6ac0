"""The terminal UI driven headless with Textual's Pilot: sweep, frontier table, detail, compare, ROI, export,
scenario form, filter, sort, help, theme, and responsiveness during a large sweep.

Keys are pressed as a user would. Shortcuts, each noted where it is defined: long text goes into a field as one
bracketed-paste event (`paste_into`); focus leaves a text field by focusing the tab bar (`leave_text_fields`,
a user clicks or presses shift+tab); during a sweep keys are posted without Pilot's idle wait (`send_key`).
Tests whose docstring says "BUG:" fail on purpose: they pin a defect of the app that is not fixed yet.
"""

from __future__ import annotations

import asyncio
import time

import polars as pl
import pytest
from rich.table import Table
from textual import events
from textual.widgets import DataTable, Input, Static, TabbedContent

from scalefront_tui.app import ScalefrontApp
from scalefront_tui.screens import ExportScreen, HelpScreen

pytestmark = pytest.mark.asyncio

SIZE = (120, 40)


def frontier_table(app: ScalefrontApp) -> DataTable:
    return app.query_one("#frontier-table", DataTable)


def active_tab(app: ScalefrontApp) -> str:
    return app.query_one(TabbedContent).active


async def type_into(pilot, selector: str, text: str) -> Input:
    """Focus a text field, empty it, and type `text` key by key."""
    field = pilot.app.screen.query_one(selector, Input)
    field.focus()
    field.value = ""
    await pilot.pause()
    await pilot.press(*text)
    return field


async def paste_into(pilot, selector: str, text: str) -> Input:
    """Focus a text field, empty it, and paste `text` into it (one bracketed-paste event, as a terminal sends
    it; much faster than a key press per character)."""
    field = pilot.app.screen.query_one(selector, Input)
    field.focus()
    field.value = ""
    await pilot.pause()
    pilot.app.post_message(events.Paste(text))
    await pilot.pause()
    assert field.value == text
    return field


async def leave_text_fields(pilot) -> None:
    """Move focus to the tab bar (printable keys typed in a text field go into it, not to the app's bindings;
    a user clicks elsewhere or presses shift+tab)."""
    pilot.app.query_one("ContentTabs").focus()
    await pilot.pause()


# ---------------------------------------------------------------------------------------------- frontier
async def test_sweep_table_detail_and_comparison(ui):
    app = ScalefrontApp()
    async with app.run_test(size=SIZE) as pilot:
        # Launch: the sweep runs and fills the frontier table.
        await ui.wait_for_sweep(pilot)
        table = frontier_table(app)
        assert app.frontier.height > 0
        assert table.row_count == app.frontier.height
        assert "configurations in" in ui.status(app)
        assert app.focused is table
        # The first column is the scenario's group-by axis (fabric); rows follow the frontier frame.
        assert [r[0] for r in ui.table_rows(app)] == app.frontier["fabric"].to_list()
        assert set(app.frontier["fabric"]) == set(app.scenario.fabric_names)

        # Down, Enter: the Detail tab with the row's breakdown.
        await pilot.press("down", "enter")
        assert active_tab(app) == "detail"
        row = app.shown.row(1, named=True)
        text = ui.text_of(app, "#detail-body")
        assert f"{row['fabric']} {row['gpus']:,} x {row['gpu']}" in text
        for label in (
            "step time",
            "compute",
            "pipeline bubble",
            "DP comm",
            "optimizer",
            "memory per GPU",
            "network",
            "time to train",
            "cost to train",
            "capex",
        ):
            assert label in text, label
        assert f"{row['step_time_s']:.3f} s" in text
        assert f"tp {row['tp']} pp {row['pp']}" in text

        # Back to the frontier; mark two rows: the Detail tab compares them side by side.
        await pilot.press("1")
        assert active_tab(app) == "frontier" and app.focused is table
        await pilot.press("m", "down", "m")
        detail = app.query_one("#detail-body", Static).content
        assert isinstance(detail, Table)
        assert len(detail.columns) == 3  # the labels, then one column per marked row
        headers = [str(c.header) for c in detail.columns[1:]]
        first, second = (app.shown.row(i, named=True) for i in (1, 2))
        assert headers == [
            f"{r['fabric']} {r['gpus']:,} x {r['gpu']}, tp {r['tp']} pp {r['pp']} dp {r['dp']}" for r in (first, second)
        ]
        assert f"marked {first['fabric']} {first['gpus']:,} x {first['gpu']} and " in ui.status(app)
        await pilot.press("2")
        assert active_tab(app) == "detail"


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_screen_fits_the_terminal(ui, size):
    """BUG: TabbedContent keeps its default `height: auto` (app.tcss sets none), so header + status +
    tabs + footer are one row taller than the terminal: the Screen gets a scrollbar, and once the frontier
    table takes focus the Screen scrolls by a row and the status line (sweep summary, filter and sort
    messages) is off screen. In a real terminal (and in the snapshots) "... configurations in ...s" is
    never visible."""
    app = ScalefrontApp()
    async with app.run_test(size=size) as pilot:
        await ui.wait_for_sweep(pilot)
        screen = app.screen
        assert screen.virtual_size.height <= screen.size.height, "the screen overflows the terminal"
        assert not screen.show_vertical_scrollbar


async def test_filter_shows_matching_rows_and_rejects_a_bad_filter(ui):
    app = ScalefrontApp()
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_for_sweep(pilot)
        await pilot.press("shift+tab")  # from the table up to the filter field
        assert app.focused is app.query_one("#filter")
        await pilot.press(*"fabric=ib-ndr", "enter")
        field = app.query_one("#filter", Input)
        expected = app.frontier.filter(pl.col("fabric") == "ib-ndr").height
        assert 0 < expected < app.frontier.height
        assert frontier_table(app).row_count == expected
        assert {r[0] for r in ui.table_rows(app)} == {"ib-ndr"}
        assert not field.has_class("invalid")
        assert f"{expected} of {app.frontier.height} frontier rows" in ui.status(app)

        for bad in ("nosuch=1", "gpus>=many", "fabric"):
            await paste_into(pilot, "#filter", bad)
            await pilot.press("enter")
            assert field.has_class("invalid"), bad
            assert ui.status(app).startswith("filter:"), bad
            assert frontier_table(app).row_count == expected  # the last good filter's rows stay

        await paste_into(pilot, "#filter", "gpus>=4096")
        await pilot.press("enter")
        assert not field.has_class("invalid")
        assert frontier_table(app).row_count == app.frontier.filter(pl.col("gpus") >= 4096).height


async def test_sort_key_cycles_through_days_cost_mfu_gpus(ui):
    # `s` sorts the frontier by time to train, then (pressed again) by cost, by MFU (best first), by GPUs.
    app = ScalefrontApp()
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_for_sweep(pilot)
        before = app.shown
        for column, descending in (
            ("time_to_train_days", False),
            ("cost_to_train_usd", False),
            ("mfu", True),
            ("gpus", False),
        ):
            await pilot.press("s")
            values = app.shown[column].to_list()
            assert values == sorted(values, reverse=descending), column
            assert f"sorted by {column}" in ui.status(app)
            assert sorted(app.shown.rows()) == sorted(before.rows())  # the same rows, reordered


async def test_edited_form_reruns_the_sweep(ui):
    app = ScalefrontApp()
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_for_sweep(pilot)
        await pilot.press("4")
        await paste_into(pilot, "#f-gpus", "1024, 2048")
        await paste_into(pilot, "#f-fabric", "ib-ndr, roce-400g")
        await leave_text_fields(pilot)
        await pilot.press("r")
        await ui.wait_for_sweep(pilot, 2)
        assert active_tab(app) == "frontier"
        assert app.scenario.gpu_counts == [1024, 2048]
        assert set(app.frontier["gpus"]) <= {1024, 2048}
        assert set(app.frontier["fabric"]) == {"ib-ndr", "roce-400g"}
        assert frontier_table(app).row_count == app.frontier.height > 0


async def test_ctrl_r_reruns_from_a_text_field_where_r_is_text(ui):
    # On the Scenario tab every widget is a text field, so `r` is text there (topology names contain it);
    # ctrl+r re-runs from anywhere, as the tab says.
    app = ScalefrontApp()
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_for_sweep(pilot)
        await pilot.press("4")
        await paste_into(pilot, "#f-gpus", "1024")
        await pilot.press("ctrl+r")
        await pilot.pause(0.2)
        assert app.query_one("#f-gpus", Input).value == "1024"
        await ui.wait_for_sweep(pilot, 2)
        assert app.scenario.gpu_counts == [1024]


async def test_rerun_with_the_untouched_form_reproduces_the_sweep(ui):
    """BUG: the form flattens the topology list to names, so re-running drops fat-tree's 2:1
    oversubscription (the frontier changes though nothing was edited)."""
    app = ScalefrontApp()
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_for_sweep(pilot)
        first, oversubscriptions = app.frontier, app.scenario.oversubscriptions
        await pilot.press("r")  # the frontier table has focus
        await ui.wait_for_sweep(pilot, 2)
        assert app.scenario.oversubscriptions == oversubscriptions
        key = ["fabric", "gpus", "topology", "oversubscription", "cost_to_train_usd"]
        assert app.frontier.select(key).rows() == first.select(key).rows()


async def test_rerun_keeps_each_gpus_own_rent(ui, tmp_path):
    """BUG: the form shows the first GPU's rent and re-running writes it as the scenario-wide
    rent_usd_per_gpu_hour, so every other GPU type gets that price."""
    text = """name = "two-gpus"
[workload]
model = "llama3-70b"
tokens = 2e12
global_batch = 1024
precision = ["bf16"]
[cluster]
gpu = ["h100-sxm", "a100-80gb"]
gpus = [1024, 2048]
scale_up = ["default"]
fabric = ["ib-ndr"]
topology = ["rail-fat-tree"]
[parallelism]
tp = { search = true, max = 8 }
pp = { search = true, max = 8 }
cp = [1]
dp = "search"
ep = [1]
vpp = [1]
micro_batch = [1]
sequence_parallel = [true]
recompute = ["selective"]
zero = [1]
overlap = ["dp"]
[economics]
mode = "rent"
[objectives]
minimize = ["time_to_train_days", "cost_to_train_usd"]
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


async def test_roi_compares_the_edited_scenario(ui):
    """BUG: the ROI worker runs `roi(self.scenario_source, ...)`, the scenario as loaded, so after editing the
    GPU counts and re-running, the ROI table still has the original scenario's GPU counts."""
    app = ScalefrontApp()
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_for_sweep(pilot)
        await pilot.press("4")
        await paste_into(pilot, "#f-gpus", "1024, 2048")
        await leave_text_fields(pilot)
        await pilot.press("r")
        await ui.wait_for_sweep(pilot, 2)
        await pilot.press("3", "enter")
        table = app.query_one("#roi-table", DataTable)
        await ui.wait_until(pilot, lambda: table.row_count > 0, "the ROI table")
        assert [r[0] for r in ui.table_rows(app, "#roi-table")] == ["1,024", "2,048"]


async def test_marks_survive_a_sort(ui):
    """Marks are configurations, not table positions: after a sort the comparison still shows the one marked."""
    app = ScalefrontApp()
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_for_sweep(pilot)
        row = app.shown.row(0, named=True)
        marked = f"{row['fabric']} {row['gpus']:,} x {row['gpu']}"
        await pilot.press("m", "s", "s")  # by days, then by cost
        assert app.shown.row(0, named=True) != row  # the sort moved the marked row
        await pilot.press("down", "m")
        detail = app.query_one("#detail-body", Static).content
        assert isinstance(detail, Table) and len(detail.columns) == 3
        headers = [str(c.header) for c in detail.columns[1:]]
        assert any(h.startswith(marked) for h in headers), f"{marked} was marked; compared: {headers}"


# ---------------------------------------------------------------------------------------------- keys
async def test_help_opens_and_closes(ui):
    app = ScalefrontApp()
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_for_sweep(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        assert "Keys" in ui.text_of(app.screen, "Static")
        await pilot.press("question_mark")
        assert not isinstance(app.screen, HelpScreen)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_slash_moves_to_the_filter(ui):
    """Help: "/  or tab   move to the filter". BUG: there is no binding for / (and tab from the table goes
    to the tab bar, not the filter)."""
    app = ScalefrontApp()
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_for_sweep(pilot)
        await pilot.press("slash")
        assert app.focused is app.query_one("#filter")


async def test_t_toggles_the_theme(ui):
    app = ScalefrontApp()
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_for_sweep(pilot)
        assert app.theme == "textual-dark"
        await pilot.press("t")
        assert app.theme == "textual-light"
        await pilot.press("t")
        assert app.theme == "textual-dark"


# ---------------------------------------------------------------------------------------------- large sweeps
def send_key(app: ScalefrontApp, key: str) -> None:
    """Deliver a key press as the terminal driver does, without Pilot.press's wait for the process to go idle
    (`textual._wait.wait_for_idle` waits up to 1 s twice per key while the sweep threads keep the CPU busy,
    which would outlast the sweep)."""
    app.post_message(events.Key(key, key if len(key) == 1 else None))


async def key_takes_effect(pilot, key: str, effect, what: str) -> float:
    """Send `key`, wait (bounded) for `effect()`, and return the latency in seconds."""
    start = time.monotonic()
    send_key(pilot.app, key)
    await wait_brief(pilot, effect, what)
    return time.monotonic() - start


async def wait_brief(pilot, condition, what: str, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what}: no effect within {timeout} s"
        await asyncio.sleep(0.01)


async def test_ui_stays_responsive_during_a_large_sweep(ui):
    """Keys take effect while the `large` sweep (118M configurations, ~1-2 s on 2 cores) runs in its worker
    thread: each key's effect is observed while `sweeps_finished` is still 0."""
    app = ScalefrontApp("large")
    assert app.scenario.size() > 100_000_000
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_until(pilot, lambda: ui.status(app).startswith("sweeping:"), "the sweep's first progress")
        assert app.sweeps_finished == 0
        latency = await key_takes_effect(pilot, "2", lambda: active_tab(app) == "detail", "2 (Detail tab)")
        assert app.sweeps_finished == 0, f"the sweep finished before 2 took effect ({latency:.2f} s)"
        latency = await key_takes_effect(pilot, "t", lambda: app.theme == "textual-light", "t (theme)")
        assert app.sweeps_finished == 0, f"the sweep finished before t took effect ({latency:.2f} s)"
        assert latency < 2.0
        # Progress keeps arriving while the keys are handled.
        progress = ui.status(app)
        await ui.wait_until(pilot, lambda: ui.status(app) != progress, "the next progress line", timeout=10)
        await ui.wait_for_sweep(pilot)
        assert frontier_table(app).row_count == app.frontier.height > 0


async def test_a_finished_sweep_does_not_move_the_user_away(ui):
    """BUG: `_show_result` focuses the frontier table, and TabbedContent follows focus, so a sweep that
    finishes while the user is on another tab (say, typing in the Scenario form) switches to the Frontier
    tab and moves the keyboard focus: the next keys typed go to the table's bindings (q quits)."""
    app = ScalefrontApp("large")
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_until(pilot, lambda: ui.status(app).startswith("sweeping:"), "the sweep's first progress")
        await key_takes_effect(pilot, "4", lambda: active_tab(app) == "scenario", "4 (Scenario tab)")
        assert app.sweeps_finished == 0
        field = app.query_one("#f-model", Input)
        assert app.focused is field
        await ui.wait_for_sweep(pilot)
        assert active_tab(app) == "scenario"
        assert app.focused is field


async def test_escape_cancels_a_running_sweep(ui):
    app = ScalefrontApp("large")
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_until(pilot, lambda: ui.status(app).startswith("sweeping:"), "the sweep's first progress")
        await pilot.press("escape")
        await ui.wait_until(pilot, lambda: "cancelled" in ui.status(app), "the sweep to be cancelled", timeout=15)
        await pilot.pause(0.3)
        assert app.sweeps_finished == 0
        assert app.result is None and frontier_table(app).row_count == 0
        assert not [w for w in app.workers if w.group == "sweep" and w.is_running]
        await pilot.press("e")  # nothing to export: a warning, no dialog
        assert not isinstance(app.screen, ExportScreen)
