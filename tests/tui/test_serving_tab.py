"""The Serving tab (issue 23 item 5), driven by keys at 80x24: it opens with 6, `s` edits the SLOs, the table is
`scalefront inference --scenario`'s frontier for the same serving scenario and SLOs (the file the API writes for
the tab's sweep), j moves the detail, and an SLO nothing meets shows why instead of an empty table."""

from __future__ import annotations

import contextlib
import io

import polars as pl
import pytest
from textual.widgets import DataTable, Input

from scalefront.cli import main
from scalefront_tui.app import ScalefrontApp
from scalefront_tui.screens import WriteFileScreen
from scalefront_tui.widgets.serving import ServingPane

pytestmark = pytest.mark.asyncio
SIZE = (80, 24)


def cli_frontier(tmp_path, pane: ServingPane, slos: list[str]) -> list[tuple[str, ...]]:
    """`scalefront inference --scenario` on the tab's serving scenario: (fabric, tp, pp, TTFT ms, TPOT ms,
    tok/s/GPU, $/Mtok) per frontier point, as its text table prints them."""
    path = tmp_path / "serving.toml"
    path.write_text(pane.sweep.toml())
    out_io, err_io = io.StringIO(), io.StringIO()  # the app running holds sys.stdout: capture the command's own
    with contextlib.redirect_stdout(out_io), contextlib.redirect_stderr(err_io):
        code = main(["inference", "--scenario", str(path), *[f"--slo={s}" for s in slos]])
    out = out_io.getvalue()
    assert code == 0, err_io.getvalue()
    rows = []
    for block in out.strip().split("\n\n"):
        head, *table = block.splitlines()
        points = table[1:]  # after the header line; a design with no point has none
        fabric = head.split(" over ")[1].split(",")[0]
        for line in points:
            tp, pp, *_, ttft, tpot, per_gpu, cost = line.split()
            rows.append((fabric, tp, pp, ttft, tpot, per_gpu, cost))
    return rows


def tab_frontier(ui, app) -> list[tuple[str, ...]]:
    out = []
    for fabric, layout, _batch, ttft, tpot, per_gpu, cost in ui.table_rows(app, "#serving-table"):
        tp, pp = (part[2:] for part in layout.split()[:2])
        out.append((fabric.split()[1], tp, pp, ttft, tpot, per_gpu, cost))
    return out


async def open_serving_tab(ui, app, pilot) -> ServingPane:
    """Key 6 opens the Serving tab; its pane, once its first frontier is shown."""
    await pilot.press("6")
    pane = app.query_one(ServingPane)
    await ui.wait_until(pilot, lambda: pane.updates >= 1, "the serving frontier")
    return pane


async def test_the_serving_tab_is_inferences_frontier_under_the_slos_typed(ui, tmp_path):
    app = ScalefrontApp(autostart=False)
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_serving_tab(ui, app, pilot)
        assert app.focused is app.query_one("#serving-table")
        headers = ui.table_headers(app, "#serving-table")
        assert headers == ["fabric", "layout", "batch", "TTFT ms", "TPOT ms", "tok/s/GPU", "$/Mtok"]
        assert tab_frontier(ui, app) == cli_frontier(tmp_path, pane, [])
        # The scenario's three fabrics, each with its marker, in the scenario's order.
        fabrics = [r[0] for r in ui.table_rows(app, "#serving-table")]
        assert list(dict.fromkeys(fabrics)) == ["● ib-ndr@default", "■ roce-400g@untuned", "▲ eth-100g-tcp"]

        # TPOT <= 20 ms: an objective of the frontier, so the frontier as held is refiltered.
        await pilot.press("s", *"20", "enter")
        await ui.wait_until(pilot, lambda: pane.updates >= 2, "the SLO applied")
        assert pane.view is not None and not pane.view.rerun
        assert app.focused is app.query_one("#serving-table")
        shown = tab_frontier(ui, app)
        assert shown == cli_frontier(tmp_path, pane, ["tpot_s<=0.02"])
        assert shown and all(float(tpot) <= 20 for *_, tpot, _, _ in shown)

        # j moves the cursor, and the detail follows it.
        await pilot.press("j")
        await pilot.pause()
        assert f"TPOT {shown[1][4]} ms" in ui.text_of(app, "#serving-detail")
        table = app.query_one("#serving-table", DataTable)
        await pilot.press("G")
        assert table.cursor_row == len(shown) - 1
        await pilot.press("g", "pagedown")
        assert table.cursor_row > 1
        await pilot.press("k", "g")
        assert table.cursor_row == 0

        # TTFT <= 0.045 s too (not an objective: swept again with both bounds).
        await pilot.press("s", "tab", *"0.045", "enter")
        await ui.wait_until(pilot, lambda: pane.updates >= 3, "the second SLO applied")
        assert pane.view is not None and pane.view.rerun
        assert tab_frontier(ui, app) == cli_frontier(tmp_path, pane, ["tpot_s<=0.02", "ttft_s<=0.045"])

        # TPOT <= 0.1 ms: no GPU decodes Llama 3 70B that fast, so the frontier is empty and says why.
        await pilot.press("s", "ctrl+u", *"0.1", "tab", "ctrl+u", "enter")
        await ui.wait_until(pilot, lambda: pane.updates >= 4, "the impossible SLO applied")
        assert ui.table_rows(app, "#serving-table") == []
        said = ui.text_of(app, "#serving-detail")
        assert said.startswith("No serving layout meets TPOT <=") and "Loosen an SLO" in said
        assert "No serving layout meets" in "\n".join(ui.screen_lines(app))


async def test_a_bad_slo_is_named_and_changes_nothing(ui):
    app = ScalefrontApp(autostart=False)
    async with app.run_test(size=SIZE) as pilot:
        await open_serving_tab(ui, app, pilot)
        rows = ui.table_rows(app, "#serving-table")
        await pilot.press("s", *"fast", "enter")
        await pilot.pause()
        assert "TPOT <= 'fast' ms: not a number" in ui.text_of(app, "#serving-detail")
        assert ui.table_rows(app, "#serving-table") == rows


async def test_f1_on_the_serving_tab_lists_its_keys(ui):
    app = ScalefrontApp(autostart=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("6", "f1")
        await pilot.pause()
        shown = ui.text_of(app.screen, "#help-text")
        assert "6 Serving" in shown and "1-6       change tab" in shown
        assert "s         edit the SLOs: TPOT <= ms, tab, TTFT <= s" in shown
        assert "j/k, page up/down, g/G   move through the frontier" in shown


async def test_a_rerun_serves_the_scenario_as_run(ui, tmp_path):
    """`o` re-runs the scenario owned instead of rented: the Serving tab then prices its tokens at the owned
    cluster's cost, and is still `scalefront inference`'s frontier for the file it writes."""
    app = ScalefrontApp(autostart=False)
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_serving_tab(ui, app, pilot)
        rented = tab_frontier(ui, app)
        await pilot.press("o")
        await ui.wait_for_sweep(pilot)
        await pilot.press("6")
        await ui.wait_until(pilot, lambda: pane.updates >= 2, "the owned cluster's serving frontier")
        assert pane.sweep.scenario.fixed["cost_mode"] == "own"
        owned = tab_frontier(ui, app)
        assert owned == cli_frontier(tmp_path, pane, [])
        assert [r[:6] for r in owned] == [r[:6] for r in rented]  # the same layouts, as fast
        assert [r[6] for r in owned] != [r[6] for r in rented]  # at another cost per million tokens


async def test_e_exports_the_serving_frontier_as_shown(ui, tmp_path):
    """`e` on the Serving tab writes the serving frontier (not the training one), as shown under the SLO fields; an
    existing file is replaced only when the box is ticked."""
    app = ScalefrontApp(autostart=False)
    target = tmp_path / "serving.csv"
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_serving_tab(ui, app, pilot)
        await pilot.press("s", *"20", "enter")
        await ui.wait_until(pilot, lambda: pane.updates >= 2, "the SLO applied")
        await pilot.press("e")
        assert isinstance(app.screen, WriteFileScreen)
        field = app.screen.query_one("#write-path", Input)
        field.value = str(target)
        await pilot.press("enter")
        await ui.wait_until(pilot, target.exists, "the serving export")
        written = pl.read_csv(target)
        assert pane.view is not None
        assert written.height == pane.view.frame.height == len(ui.table_rows(app, "#serving-table")) > 0
        assert written["tpot_s"].max() <= 0.02 and "output_tokens_per_s_per_gpu" in written.columns
        assert written["fabric"].to_list() == pane.view.frame["fabric"].to_list()
        # Again over it: refused until the box is ticked.
        await pilot.press("e")
        app.screen.query_one("#write-path", Input).value = str(target)
        await pilot.press("enter")
        await pilot.pause()
        assert "tick the box to replace it" in ui.text_of(app.screen, "#write-error")


async def test_c_draws_the_frontier_as_a_chart_that_follows_the_cursor(ui):
    app = ScalefrontApp(autostart=False)
    async with app.run_test(size=SIZE) as pilot:
        pane = await open_serving_tab(ui, app, pilot)
        await pilot.press("c")
        await pilot.pause()
        chart, table = app.query_one("#serving-chart"), app.query_one("#serving-table", DataTable)
        assert chart.display and not table.display and app.focused is chart
        drawn = "\n".join(line.plain for line in chart.lines())
        assert "TPOT ms" in drawn and "output tokens/s per GPU" in drawn and "◉" in drawn
        assert "● ib-ndr@default" in drawn.splitlines()[0]
        # The highlighted point is the cursor row's: j moves both, and the detail names the same row.
        await pilot.press("j")
        await pilot.pause()
        assert table.cursor_row == 1
        assert "\n".join(line.plain for line in chart.lines()) != drawn
        row = pane.view.frame.row(1, named=True) if pane.view is not None else {}
        assert f"TPOT {row['tpot_s'] * 1e3:,.2f} ms" in ui.text_of(app, "#serving-detail")
        await pilot.press("c")
        await pilot.pause()
        assert table.display and not chart.display and app.focused is table
