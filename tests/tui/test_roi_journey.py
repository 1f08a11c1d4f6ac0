"""The buyer's ROI tasks of the review (ui-review-2, tasks 1, 2 and 5) driven at 80x24 with the keyboard alone,
each answer checked against a fresh comparison of the same scenario through the public API (and the CLI), with
the keys counted against the review's (issue 21, quality bar).

- Task 1: IB vs RoCE for 15T tokens at 4,096 GPUs: the verdict follows `[` to 4,096 (D4).
- Task 2: GB200 at 8,192 re-run after a what-if: the what-ifs reset with a notice, and the verdict EQUALS a fresh
  run of the same scenario (D1).
- Task 5: "IB quoted 30% over Ethernet" typed as 30: the same numbers as `scalefront roi --premium 1.3` (D3);
  a dearer quote never makes IB likelier to win; a new fabric B resets the quote with a notice (D11).
- The answer pinned with `p` sits beside the next one."""

from __future__ import annotations

import itertools
import json
import re

import pytest
from textual.widgets import Select

from scalefront import api
from scalefront.cli import main
from scalefront_tui.app import ScalefrontApp

pytestmark = pytest.mark.asyncio

SMALL = (80, 24)
#: Keys the review counted for the tasks (its section 1 table: useful + wasted, without the mouse wheel).
REVIEW_KEYS = {"task 1": 40, "task 2": 21, "task 5": 35}


class Keys:
    """Presses keys one at a time, as typed, and counts them."""

    def __init__(self, pilot) -> None:
        self.pilot = pilot
        self.count = 0

    async def press(self, *keys: str) -> None:
        self.count += len(keys)
        await self.pilot.press(*keys)


def fresh_view(app: ScalefrontApp, tmp_path, premium: float | None = None) -> api.RoiView:
    """A fresh comparison of the scenario as the app ran it: saved to a file, opened anew, compared at the
    catalog's figures (no what-if but `premium`)."""
    draft = api.ScenarioDraft.open(app.draft.save(tmp_path / "fresh.toml", force=True).file)
    roi = app.query_one("#roi-pane")
    return api.compare_fabrics(draft, api.WhatIf(*roi._fabrics(), premium=premium))


def as_shown(view: api.RoiView, gpus: int) -> str:
    """The API's verdict at `gpus` as the tab shows it: without the sentence naming the modes (the fabric choices
    show them), in one line."""
    return " ".join(api.verdict_at(view, gpus).removeprefix(api.modes_text(view.result) + " ").split())


def verdict(ui, app: ScalefrontApp) -> str:
    """The verdict as shown, in one line (its "would flip if" line joined back, without the samples line)."""
    text = ui.text_of(app, "#roi-verdict", width=1000)
    text = re.sub(r"\(chances from [\d,]+ Monte Carlo samples\)", "", text)
    return " ".join(text.split()).replace(". Would flip if ", ". The answer flips if ")


def on_screen(ui, app: ScalefrontApp) -> str:
    return " ".join(" ".join(ui.screen_lines(app)).split())


async def test_task1_the_question_at_4096_gpus(ui, tmp_path):
    app = ScalefrontApp()
    async with app.run_test(size=SMALL) as pilot:
        await ui.wait_for_sweep(pilot)
        keys = Keys(pilot)
        await keys.press("5", "enter", "tab", "ctrl+u", "1", "5", "T", "ctrl+r")
        await ui.wait_for_sweep(pilot, 2)
        await keys.press("4")
        await ui.wait_for_roi(pilot)
        await keys.press("left_square_bracket", "left_square_bracket")
        assert keys.count <= REVIEW_KEYS["task 1"], keys.count
        fresh = fresh_view(app, tmp_path)
        assert "15T tokens" in fresh.verdict
        assert verdict(ui, app) == as_shown(fresh, 4096)
        assert "At 4,096 GPUs" in on_screen(ui, app) and app.query_one("#roi-pane").scroll_y == 0
        # The table's cursor is on the verdict's row, and moving it moves the verdict.
        table = app.query_one("#roi-table")
        assert table.record()["gpus"] == 4096
        await pilot.press("k")
        await pilot.pause()
        assert "At 2,048 GPUs" in verdict(ui, app)


async def test_task2_a_gpu_change_resets_the_what_ifs_and_equals_a_fresh_run(ui, tmp_path):
    """D1: the H100 server price typed as a what-if, then GB200 at 8,192 re-run: the server price goes back to
    GB200's catalog figure with a notice, and the verdict and table equal a fresh run of the same scenario."""
    app = ScalefrontApp()
    async with app.run_test(size=SMALL) as pilot:
        await ui.open_roi(pilot)
        shown = app.roi_updates
        app.query_one("#wi-server").value = "$400k"
        await ui.wait_for_roi(pilot, shown + 1)
        assert app.query_one("#roi-pane").view.what_if.server_usd == 400_000
        keys = Keys(pilot)
        await keys.press("5", "enter", "tab", "tab", "tab", "ctrl+u", *"gb200")
        await keys.press("tab", "tab", "ctrl+u", *"8192", "ctrl+r")
        await ui.wait_for_sweep(pilot, 2)
        shown = app.roi_updates
        await keys.press("4")
        await ui.wait_for_roi(pilot, shown + 1)
        assert keys.count <= REVIEW_KEYS["task 2"], keys.count
        assert app.draft.scenario.gpu_names == ["gb200"]
        notice = ui.text_of(app, "#roi-notice")
        assert "reset" in notice and "GPU" in notice and "server $" in notice
        assert "reset" in on_screen(ui, app)
        gb200 = api.what_if_defaults(app.draft, "ib-ndr", "roce-400g").server_usd
        assert app.query_one("#wi-server").value == api.format_money(gb200)
        view = app.query_one("#roi-pane").view
        assert view.what_if.server_usd is None
        fresh = fresh_view(app, tmp_path)
        assert view.verdict == fresh.verdict and "At 8,192 GPUs" in view.verdict
        assert view.table.equals(fresh.table)
        assert verdict(ui, app) == as_shown(fresh, fresh.result.headline_gpus)


async def test_task5_a_quote_of_30_percent_is_roi_premium_1_3(ui, tmp_path, capsys):
    assert (
        main(["roi", "--b", "roce-400g", "--premium", "1.3", "--samples", str(api.INTERACTIVE_SAMPLES), "--json"]) == 0
    )
    cli = json.loads(capsys.readouterr().out)
    app = ScalefrontApp()
    async with app.run_test(size=SMALL) as pilot:
        await ui.open_roi(pilot)
        catalog = app.query_one("#roi-pane").view
        await pilot.press("p")  # pin the catalog answer
        shown = app.roi_updates
        keys = Keys(pilot)
        await keys.press("enter", "3", "0", "escape")
        await ui.wait_for_roi(pilot, shown + 2)  # after "3", then "30"
        await ui.wait_until(pilot, lambda: app.query_one("#roi-pane").view.what_if.premium == 1.3, "the +30% quote")
        assert keys.count + 1 <= REVIEW_KEYS["task 5"], keys.count  # + the `4` that opened the tab
        view = app.query_one("#roi-pane").view
        assert cli["verdict"] == view.verdict and "actual premium of +30%" in view.verdict
        for key in ("premium", "break_even_premium", "p_a_cheaper", "p_payback_within_life", "npv_usd", "savings_usd"):
            assert view.table[key].to_list() == pytest.approx([r[key] for r in cli["rows"]], rel=1e-12), key
        # The catalog premium stays beside the quote, and the pinned catalog answer beside this one.
        premium = catalog.table.filter(catalog.table["gpus"] == 16384)["premium"][0]
        assert f"{premium - 1:+.0%} at 16,384 GPUs" in ui.text_of(app, "#wi-premium-note")
        pinned = ui.text_of(app, "#roi-pinned")
        assert "pinned" in pinned and "now" in pinned and "+30% (quote)" in pinned
        assert re.search(rf"A premium\s+{re.escape(f'{premium - 1:+.0%}')}\s+\+30% \(quote\)", pinned), pinned
        # A dearer quote never makes IB likelier to win (each count).
        chances = [view.table["p_a_cheaper"].to_list()]
        for quote in ("60", "100"):
            shown = app.roi_updates
            app.query_one("#wi-premium").value = quote
            await ui.wait_for_roi(pilot, shown + 1)
            chances.append(app.query_one("#roi-pane").view.table["p_a_cheaper"].to_list())
        for lower, higher in itertools.pairwise(chances):
            assert all(h <= lo for lo, h in zip(lower, higher, strict=True)), chances
        # A new fabric B resets the quote (it was over the old B), and says so (D11).
        # By keys: to the quote, back to fabric B, open it, one up (roce-400g@untuned -> roce-400g@tuned: the
        # choices list every operating mode, sorted), choose: tuned RoCE is the review's task 5 (D7).
        shown = app.roi_updates
        keys = Keys(pilot)
        await keys.press("enter", "shift+tab", "enter", "up", "enter")
        await ui.wait_for_roi(pilot, shown + 1)
        assert app.query_one("#wi-b", Select).value == "roce-400g@tuned" and keys.count == 5
        assert app.query_one("#wi-premium").value == ""
        notice = ui.text_of(app, "#roi-notice")
        assert "A quote" in notice and "roce-400g@tuned" in notice
        assert app.query_one("#roi-pane").view.what_if.premium is None
