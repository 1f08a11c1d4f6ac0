"""Journeys a buyer takes at 80x24, one test per defect that trying the UI over tmux found (issue 13: "broken"
and "confusing"), each pressing keys as a user would and checking what the screen shows."""

from __future__ import annotations

import polars as pl
import pytest
from textual.widgets import Input

from helpers.tui import active_tab, visible
from scalefront import api
from scalefront_tui.app import ScalefrontApp
from scalefront_tui.screens import HelpScreen, WriteFileScreen
from scalefront_tui.widgets.frame_table import MARK

pytestmark = pytest.mark.asyncio

SMALL = (80, 24)


async def type_text(pilot, text: str) -> None:
    await pilot.press(*[{" ": "space", "/": "slash", "$": "dollar_sign"}.get(c, c) for c in text])


async def set_field(pilot, selector: str, text: str) -> Input:
    """Focus a text field, select its text and type over it, as a user does."""
    field = pilot.app.screen.query_one(selector, Input)
    field.focus()
    await pilot.pause()
    field.value = ""
    await type_text(pilot, text)
    await pilot.pause()
    return field


# ---------------------------------------------------------------------------------------------- broken
async def test_escape_leaves_a_text_field_and_digits_then_change_tab(ui):
    """Broken: text fields swallowed every shortcut and Esc did not leave them (pressing 1 to change tab typed
    "1" into the field)."""
    app = ScalefrontApp()
    async with app.run_test(size=SMALL) as pilot:
        await ui.wait_for_sweep(pilot)
        await pilot.press("5")
        assert active_tab(app) == "scenario"
        assert not isinstance(app.focused, Input), "a tab opens on its content, not inside a text field"
        await pilot.press("tab")
        field = app.focused
        assert isinstance(field, Input)
        before = field.value
        await pilot.press("escape")
        assert not isinstance(app.focused, Input), "Esc leaves the text field"
        await pilot.press("1")
        assert active_tab(app) == "frontier"
        assert field.value == before, "the digit went to the app, not into the field"


async def test_a_value_typed_by_mistake_is_shown_before_and_when_it_is_run(ui):
    """Broken: "1" typed into the rent field and `r` re-ran the sweep at $1/GPU-hour with nothing on screen
    saying the scenario changed. Now the Scenario tab marks pending edits, and a re-run says what it changed
    and titles the scenario as edited."""
    app = ScalefrontApp()
    async with app.run_test(size=SMALL) as pilot:
        await ui.wait_for_sweep(pilot)
        await pilot.press("5", "tab")
        await set_field(pilot, "#f-rent", "1")
        await pilot.press("escape")
        assert "edited" in ui.text_of(app, "#form-summary")
        await pilot.press("1", "r")
        await ui.wait_for_sweep(pilot, 2)
        assert "rent $/GPU-hour" in app.last_changes and "$1.00" in app.last_changes
        assert "(edited)" in app.sub_title
        assert "(edited)" in visible(ui, app)


async def test_the_filter_survives_a_rerun(ui):
    """Broken: a re-run dropped the filter while its box still showed it."""
    app = ScalefrontApp()
    async with app.run_test(size=SMALL) as pilot:
        await ui.wait_for_sweep(pilot)
        await pilot.press("slash")
        await type_text(pilot, "fabric=ib")
        await pilot.press("enter")
        expected = app.frontier.filter(pl.col("fabric").str.contains("ib")).height
        assert 0 < expected < app.frontier.height
        await pilot.press("r")
        await ui.wait_for_sweep(pilot, 2)
        assert app.query_one("#filter", Input).value == "fabric=ib"
        assert app.shown.height == expected
        assert set(app.shown["fabric"]) == {"ib-ndr@default"}
        column = 1 + app.query_one("#frontier-table").shown_columns().index("fabric")  # after the marks column
        assert {r[column] for r in ui.table_rows(app)} == {f"{app.markers.glyph('ib-ndr@default')} ib-ndr@default"}


async def test_export_writes_the_rows_the_filter_shows(ui, tmp_path):
    """Broken: export wrote unfiltered rows (after a re-run dropped the filter)."""
    app = ScalefrontApp()
    target = tmp_path / "shown.csv"
    async with app.run_test(size=SMALL) as pilot:
        await ui.wait_for_sweep(pilot)
        await pilot.press("slash")
        await type_text(pilot, "days<10")
        await pilot.press("enter", "r")
        await ui.wait_for_sweep(pilot, 2)
        await pilot.press("e")
        assert isinstance(app.screen, WriteFileScreen)
        await set_field(pilot, "#write-path", str(target))
        await pilot.press("enter")
        await ui.wait_until(pilot, target.exists, "the export")
        written = api.__name__ and pl.read_csv(target)
        assert written.height == app.shown.height < app.frontier.height
        assert written["time_to_train_days"].max() < 10
        assert "layout" not in written.columns  # the export schema, not the display's derived columns


@pytest.mark.parametrize("size", [(80, 24), (100, 30)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_the_columns_that_answer_the_question_are_on_screen(ui, size):
    """Broken: days, cost and MFU were off-screen at 80 and 100 columns."""
    app = ScalefrontApp()
    async with app.run_test(size=size) as pilot:
        await ui.wait_for_sweep(pilot)
        text = visible(ui, app)
        header = next(line for line in ui.screen_lines(app) if "GPUs" in line and "MFU" in line)
        for label in ("fabric", "GPUs", "days", "cost", "MFU", "layout"):
            assert label in header, (label, header)
        first = app.shown.row(0, named=True)
        for name in ("time_to_train_days", "cost_to_train_usd", "mfu", "gpus"):
            assert api.column_spec(name).format(first[name]) in text, name


async def test_every_form_error_is_visible_at_80x24(ui):
    """Broken: scenario-form errors rendered below the fold. Confusing: raw Python messages ("invalid literal
    for int()")."""
    app = ScalefrontApp()
    async with app.run_test(size=SMALL) as pilot:
        await ui.wait_for_sweep(pilot)
        await pilot.press("5")
        await set_field(pilot, "#f-global_batch", "lots")
        await set_field(pilot, "#f-topology", "fat-tree 0.5:1")
        await set_field(pilot, "#f-mode", "buy")
        await pilot.press("escape")
        text = visible(ui, app)
        assert "global batch" in text and "'lots' is not a number" in text
        assert "oversubscription must be 1 or more" in text
        assert "choose rent or own" in text
        assert "invalid literal" not in text and "could not convert" not in text


# ---------------------------------------------------------------------------------------------- confusing
async def test_the_chart_has_a_legend_at_80x24_and_labels_points_with_gpu_counts(ui):
    """Confusing: no legend at 80x24, points without GPU counts."""
    app = ScalefrontApp()
    async with app.run_test(size=SMALL) as pilot:
        await ui.wait_for_sweep(pilot)
        await pilot.press("2")
        assert active_tab(app) == "charts"
        text = visible(ui, app)
        for fabric in set(app.frontier["fabric"]):
            assert fabric in text, fabric
        labelled = [api.format_count(g) for g in set(app.frontier["gpus"]) if api.format_count(g) in text]
        assert len(labelled) >= 3, labelled


async def test_each_fabric_is_drawn_distinctly_and_never_hidden_under_another(ui):
    """Confusing: IB's line was hidden under RoCE's. Each fabric has its own marker; where two fabrics' points
    fall on the same cell, the chart draws the overlap glyph (explained in the legend) instead of letting one
    cover the other."""
    from scalefront_tui.widgets.plot import OVERLAP

    app = ScalefrontApp()
    async with app.run_test(size=SMALL) as pilot:
        await ui.wait_for_sweep(pilot)
        await pilot.press("2")
        chart = app.query_one("#chart")
        lines = chart.lines()
        legend, plot = lines[0].plain, "\n".join(line.plain for line in lines[2:])
        fabrics = list(dict.fromkeys(app.shown["fabric"]))
        glyphs = [app.markers.glyph(f) for f in fabrics]
        assert len(set(glyphs)) == len(fabrics)
        for glyph, fabric in zip(glyphs, fabrics, strict=True):
            assert f"{glyph} {fabric}" in legend
            assert glyph in plot or OVERLAP in plot, fabric
        assert f"{OVERLAP} several" in legend


async def test_the_chart_follows_the_filter_and_highlights_the_selected_row(ui):
    """Confusing: the chart ignored the filter."""
    from scalefront_tui.widgets.plot import SELECTED

    app = ScalefrontApp()
    async with app.run_test(size=SMALL) as pilot:
        await ui.wait_for_sweep(pilot)
        await pilot.press("slash")
        await type_text(pilot, "fabric=roce")
        await pilot.press("enter", "down", "2")
        legend = app.query_one("#chart").lines()[0].plain
        assert "roce-400g" in legend and "ib-ndr" not in legend and "eth-100g-tcp" not in legend
        assert SELECTED in "\n".join(line.plain for line in app.query_one("#chart").lines())


async def test_the_roi_tab_has_a_verdict_and_one_cost_mode(ui):
    """Confusing: no verdict; rent and own costs mixed in one table."""
    app = ScalefrontApp()
    async with app.run_test(size=SMALL) as pilot:
        await ui.open_roi(pilot)
        verdict = " ".join(ui.text_of(app, "#roi-verdict").split())
        # The verdict names B and A's family, what A costs over B and how often it pays back.
        assert "roce-400g" in verdict and "InfiniBand costs $" in verdict and "of the scenarios" in verdict
        headers = ui.table_headers(app, "#roi-table")
        assert any(h.startswith("own ") for h in headers) and not any(h.startswith("rent ") for h in headers)
        assert "break-even" in " ".join(headers) and "payback" in " ".join(headers)
        text = visible(ui, app)
        assert "break-even" in text and "payback" in text, "break-even and payback are on screen at 80 columns"
        shown = app.roi_updates
        app.query_one("#wi-mode").value = "rent"
        await ui.wait_for_roi(pilot, shown + 1)
        headers = ui.table_headers(app, "#roi-table")
        assert any(h.startswith("rent ") for h in headers) and not any(h.startswith("own ") for h in headers)
        assert "break-even" not in " ".join(headers)
        assert "renting" in ui.text_of(app, "#roi-verdict")


async def test_the_filter_takes_friendly_names_and_substrings(ui):
    """Confusing: the filter needed internal column names (`days<10` was rejected)."""
    app = ScalefrontApp()
    async with app.run_test(size=SMALL) as pilot:
        await ui.wait_for_sweep(pilot)
        await pilot.press("slash")
        await type_text(pilot, "days<10 fabric=ib")
        await pilot.press("enter")
        assert not app.query_one("#filter", Input).has_class("invalid")
        assert app.shown.height > 0
        assert app.shown["time_to_train_days"].max() < 10
        assert set(app.shown["fabric"]) == {"ib-ndr@default"}
        assert app.focused is app.query_one("#frontier-table"), "Enter applies the filter and returns to the table"


async def test_s_sorts_by_the_cursors_column_and_again_reverses(ui):
    """Confusing: `s` cycled a fixed list instead of sorting by the cursor's column."""
    app = ScalefrontApp()
    async with app.run_test(size=SMALL) as pilot:
        await ui.wait_for_sweep(pilot)
        table = app.query_one("#frontier-table")
        while table.current_column != "cost_to_train_usd":
            await pilot.press("right")
        await pilot.press("s")
        costs = app.shown["cost_to_train_usd"].to_list()
        assert costs == sorted(costs)
        assert "cost (rent) ▲" in ui.table_headers(app)
        await pilot.press("s")
        assert app.shown["cost_to_train_usd"].to_list() == sorted(costs, reverse=True)
        assert "cost (rent) ▼" in ui.table_headers(app)
        await pilot.press("left")
        assert table.current_column != "cost_to_train_usd"


async def test_marks_are_visible_and_toggle(ui):
    """Confusing: marks were invisible."""
    app = ScalefrontApp()
    async with app.run_test(size=SMALL) as pilot:
        await ui.wait_for_sweep(pilot)
        await pilot.press("m")
        assert ui.table_rows(app)[0][0] == MARK
        assert "marked 1" in ui.status(app)
        await pilot.press("m")
        assert ui.table_rows(app)[0][0] == ""
        assert "no rows marked" in ui.status(app), "the status follows an unmark (D15)"
        await pilot.press("m", "down", "m")
        assert [r[0] for r in ui.table_rows(app)[:2]] == [MARK, MARK]


async def test_help_scrolls_at_80x24(ui):
    """Confusing: help could not scroll at 80x24."""
    app = ScalefrontApp()
    async with app.run_test(size=SMALL) as pilot:
        await ui.wait_for_sweep(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        scroll = app.screen.query_one("#help-scroll")
        assert scroll.max_scroll_y > 0, "the help is taller than 80x24 allows, so it must scroll"
        last = "Every number comes from the scalefront model"
        assert last not in visible(ui, app)
        await pilot.press("end")
        await pilot.pause()
        assert last in visible(ui, app)
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_numbers_read_the_same_everywhere(ui):
    """Numbers: GPU counts with separators, MFU as % everywhere, money as $1.23M / $412k, tokens as 2T."""
    app = ScalefrontApp()
    async with app.run_test(size=(140, 45)) as pilot:
        await ui.wait_for_sweep(pilot)
        row = app.shown.row(0, named=True)
        columns = ["mark", *app.query_one("#frontier-table").shown_columns()]
        cells = dict(zip(columns, ui.table_rows(app)[0], strict=True))
        assert cells["gpus"] == f"{row['gpus']:,}"
        assert cells["mfu"] == f"{row['mfu'] * 100:.1f}%"
        assert cells["cost_to_train_usd"].startswith("$") and cells["cost_to_train_usd"][-1] in "kMB"
        await pilot.press("enter")
        detail = ui.text_of(app, "#detail-body")
        assert f"MFU {row['mfu'] * 100:.1f}%" in detail
        assert "0.1" not in detail.split("MFU")[1][:8]
        await pilot.press("5")
        assert app.query_one("#f-tokens", Input).value == "2T"
        assert app.query_one("#f-gpus", Input).value.startswith("512, 1,024")
