"""Snapshot tests (pytest-textual-snapshot) of every screen at 80x24, 100x30 and 140x45: the frontier, the
charts, the detail of a row, the ROI tab, the scenario form with every problem shown, the Serving tab, and the
help. The SVGs live in __snapshots__/test_snapshots/; after an intended change of the UI, regenerate them with
`python -m pytest tests/tui/test_snapshots.py --snapshot-update` and look at them before committing.
"""

from __future__ import annotations

import re

import pytest
from textual.widgets import Input

from scalefront_tui.app import ScalefrontApp
from scalefront_tui.widgets.status import StatusLine

SIZES = [(80, 24), (100, 30), (140, 45)]
size_ids = pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")


def settled(ui, *keys: str, roi: bool = False, fields: dict[str, str] | None = None):
    """`run_before` for snap_compare: wait (bounded) for the sweep, make the status line deterministic (its wall
    time varies from run to run), press `keys`, type `fields`, and wait for the fabric comparison if asked."""

    async def run_before(pilot) -> None:
        app = pilot.app
        await ui.wait_for_sweep(pilot)
        status = app.query_one("#status", StatusLine)
        parts = [(re.sub(r" in \d+(\.\d+)? s", " in 0.10 s", text), rank) for text, rank in status.parts]
        assert "in 0.10 s" in "".join(text for text, _ in parts), status.parts
        status.show(*parts)
        for key in keys:
            await pilot.press(key)
        for selector, value in (fields or {}).items():
            app.query_one(selector, Input).value = value
        if roi:
            await ui.wait_for_roi(pilot)
        await pilot.pause()

    return run_before


@size_ids
def test_frontier(snap_compare, ui, size):
    assert snap_compare(ScalefrontApp(), terminal_size=size, run_before=settled(ui, "down", "m"))


@size_ids
def test_charts(snap_compare, ui, size):
    assert snap_compare(ScalefrontApp(), terminal_size=size, run_before=settled(ui, "down", "down", "2"))


@size_ids
def test_detail(snap_compare, ui, size):
    assert snap_compare(ScalefrontApp(), terminal_size=size, run_before=settled(ui, "down", "enter"))


@size_ids
def test_roi(snap_compare, ui, size):
    assert snap_compare(ScalefrontApp(), terminal_size=size, run_before=settled(ui, "4", roi=True))


@size_ids
def test_scenario_form_with_problems(snap_compare, ui, size):
    bad = {"#f-tokens": "2 trillion", "#f-gpus": "512, lots", "#f-fabric": "ib-ndr, infiniband"}
    assert snap_compare(ScalefrontApp(), terminal_size=size, run_before=settled(ui, "5", fields=bad))


@size_ids
def test_serving(snap_compare, ui, size):
    """The Serving tab with TPOT <= 20 ms applied, the cursor on the second row."""
    keys = ("6", "s", "2", "0", "enter", "j")
    assert snap_compare(ScalefrontApp(), terminal_size=size, run_before=settled(ui, *keys))


@size_ids
def test_help(snap_compare, ui, size):
    assert snap_compare(ScalefrontApp(), terminal_size=size, run_before=settled(ui, "question_mark"))
