"""The ROI tab driven headless with Textual's Pilot: a what-if quote moves the numbers and the verdict (a bad value
names its field and changes nothing), the comparison follows an edited scenario, the tornado and the export, the
fabric choice."""

from __future__ import annotations

import math
import re

import polars as pl
import pytest
from textual.widgets import Select

from helpers.tui import paste_into
from scalefront import api
from scalefront_tui.app import ScalefrontApp
from scalefront_tui.screens import WriteFileScreen

pytestmark = pytest.mark.asyncio

SIZE = (100, 30)


async def test_roi_what_if_changes_the_numbers(ui):
    """A quote of +100% (A's network at twice B's, above every catalog premium of the scenario) makes A dearer to
    own: its total cost of ownership rises at every GPU count, and the verdict follows."""
    app = ScalefrontApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await ui.open_roi(pilot)
        before = app.query_one("#roi-pane").view
        a = before.fabric_a
        shown = app.roi_updates
        await paste_into(pilot, "#wi-premium", "+100%")
        await ui.wait_for_roi(pilot, shown + 1)
        after = app.query_one("#roi-pane").view
        assert after.what_if.premium == 2.0 and (before.table["premium"] < 2.0).all()
        old, new = before.table[f"cost_{a}"].to_list(), after.table[f"cost_{a}"].to_list()
        assert all(n > o for n, o in zip(new, old, strict=True))
        assert after.verdict != before.verdict
        assert api.format_money(new[0]) in "\n".join(" ".join(r) for r in ui.table_rows(app, "#roi-table"))
        # A bad value names its field and changes nothing.
        shown = app.roi_updates
        await paste_into(pilot, "#wi-pue", "0.5")
        assert "PUE is 1 or more" in ui.text_of(app, "#roi-error")
        assert app.roi_updates == shown and app.query_one("#roi-pane").view is after


async def test_roi_compares_the_edited_scenario(ui):
    app = ScalefrontApp()
    async with app.run_test(size=SIZE) as pilot:
        await ui.wait_for_sweep(pilot)
        await pilot.press("5")
        await paste_into(pilot, "#f-gpus", "1,024, 2,048")
        await pilot.press("escape", "r")
        await ui.wait_for_sweep(pilot, 2)
        await pilot.press("4")
        await ui.wait_for_roi(pilot)
        assert [r[0] for r in ui.table_rows(app, "#roi-table")] == ["1,024", "2,048"]


async def test_roi_tornado_and_export(ui, tmp_path):
    app = ScalefrontApp()
    async with app.run_test(size=(120, 45)) as pilot:
        await ui.open_roi(pilot)
        shown = app.roi_updates
        await pilot.press("T")
        await ui.wait_for_roi(pilot, shown + 1)
        tornado = ui.text_of(app, "#roi-tornado")
        gpus = app.query_one("#roi-table").record()["gpus"]
        assert f"tornado at {gpus:,} GPUs" in tornado and "lead time" in tornado
        await pilot.press("e")
        assert isinstance(app.screen, WriteFileScreen)
        target = tmp_path / "roi.csv"
        await paste_into(pilot, "#write-path", str(target))
        await pilot.press("enter")
        await ui.wait_until(pilot, target.exists, "the ROI export")
        written = pl.read_csv(target)
        assert written["gpus"].to_list() == app.query_one("#roi-pane").view.table["gpus"].to_list()
        assert "break_even_premium" in written.columns


async def test_roi_fabric_choice_recomputes(ui):
    app = ScalefrontApp()
    async with app.run_test(size=SIZE) as pilot:
        await ui.open_roi(pilot)
        shown = app.roi_updates
        app.query_one("#wi-b", Select).value = "eth-100g-tcp"
        await ui.wait_for_roi(pilot, shown + 1)
        assert "eth-100g-tcp" in ui.text_of(app, "#roi-verdict")


async def test_roi_table_shows_the_payback_in_months_at_80_columns(ui):
    """At 80x24 the months column gets no room beside the payback's kind, so the payback cell itself says how many
    months ("13 months"), as the pinned comparison and `scalefront roi` do; the export keeps the API's columns."""
    app = ScalefrontApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await ui.open_roi(pilot)
        view = app.query_one("#roi-pane").view
        rows = ui.table_rows(app, "#roi-table")
        shown = [" ".join(r) for r in rows]
        months = [m for k, m in zip(view.table["payback"], view.table["payback_months"], strict=True) if k == "months"]
        assert months, "the scenario pays back in months somewhere"
        for m in months:
            assert any(f"{math.ceil(m)} months" in line for line in shown), (m, shown)
        assert not any(re.search(r"(^|\s)months(\s|$)", line) and not re.search(r"\d months", line) for line in shown)
        assert set(view.table["payback"].unique()) <= {"months", "beyond life", "dominant", "trade-off", "never"}
        # Sorting by the payback orders by its months, not by the text ("102 months" after "18 months").
        table = app.query_one("#roi-table")
        specs = [c for c in view.columns if c.name in ("gpus", "payback", "payback_months")]
        counts = view.table["gpus"].to_list()[:3]
        texts = {"gpus": counts, "payback": ["102 months", "18 months", "9 months"]}
        table.load(pl.DataFrame({**texts, "payback_months": [101.5, 17.2, 8.9]}), specs, key=["gpus"])
        table.sort_rows("payback", False)
        await pilot.pause()
        assert table.frame["gpus"].to_list() == counts[::-1]
