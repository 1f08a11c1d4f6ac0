"""Snapshot tests (pytest-textual-snapshot) of the main screens: the frontier after the sweep, and the detail
of a row, at 80x24 and 120x40. The SVGs live in __snapshots__/test_snapshots/; after an intended change of
the UI, regenerate them with `python -m pytest tests/tui/test_snapshots.py --snapshot-update` and review the
report/diff before committing them.
"""

from __future__ import annotations

import re

import pytest
from textual.widgets import Static

from scalefront_tui.app import ScalefrontApp

SIZES = [(80, 24), (120, 40)]


def settled(ui):
    """`run_before` for snap_compare: wait (bounded) for the sweep, then make the status line deterministic.

    The status line shows the sweep's wall time ("138,240 configurations in 0.25s, ..."), which varies from run
    to run, and snap_compare compares the whole screen; so after the sweep completes its wall time is
    replaced with a fixed "0.00s" via `app.query_one('#status').update(...)` (the rest of the line, all model
    output, is kept)."""

    async def run_before(pilot) -> None:
        app = pilot.app
        await ui.wait_for_sweep(pilot)
        text = ui.status(app).strip()
        fixed, n = re.subn(r" in \d+(\.\d+)?s,", " in 0.00s,", text)
        assert n == 1, text
        app.query_one("#status", Static).update(fixed)
        await pilot.pause()

    return run_before


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_frontier_screen(snap_compare, ui, size):
    assert snap_compare(ScalefrontApp(), terminal_size=size, run_before=settled(ui))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_detail_screen(snap_compare, ui, size):
    assert snap_compare(ScalefrontApp(), press=["down", "enter"], terminal_size=size, run_before=settled(ui))
