"""Shared helpers of the terminal UI tests (tests/tui/), as fixtures.

The UI is driven headless with Textual's Pilot (`app.run_test`); async tests carry pytest-asyncio's
`asyncio` marker (set per module with `pytestmark`). Sweeps run in a worker thread, so every wait on the
app is a bounded poll that fails with a message instead of hanging.

Without the UI package (a core-only install) these tests are not collected.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

if importlib.util.find_spec("scalefront_tui") is None:
    collect_ignore_glob = ["test_*.py"]

#: Upper bound of any wait on the app (the default scenario sweeps in well under a second, `large` in ~2-3 s).
TIMEOUT_S = 60.0


async def wait_until(pilot: Any, condition: Callable[[], bool], what: str, timeout: float = TIMEOUT_S) -> None:
    """Let the app run until `condition()` holds; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")
        await pilot.pause(0.02)


async def wait_for_sweep(pilot: Any, count: int = 1) -> None:
    """Wait until the app has finished `count` sweeps (its `sweeps_finished` counter), then let it settle."""
    app = pilot.app
    await wait_until(pilot, lambda: app.sweeps_finished >= count, f"sweep #{count} to finish")
    await pilot.pause()


def text_of(app: Any, selector: str, width: int = 250) -> str:
    """The plain text a Static shows (a rich renderable is rendered at `width` columns)."""
    from rich.console import Console
    from textual.widgets import Static

    content = app.query_one(selector, Static).content
    console = Console(width=width, color_system=None, legacy_windows=False)
    with console.capture() as capture:
        console.print(content)
    return capture.get()


def status(app: Any) -> str:
    return text_of(app, "#status")


def table_rows(app: Any, selector: str = "#frontier-table") -> list[list[str]]:
    """The cells of a DataTable as shown (strings), row by row."""
    from textual.widgets import DataTable

    table = app.query_one(selector, DataTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


@pytest.fixture
def ui() -> SimpleNamespace:
    """The helpers above: ui.wait_until, ui.wait_for_sweep, ui.text_of, ui.status, ui.table_rows."""
    return SimpleNamespace(
        wait_until=wait_until,
        wait_for_sweep=wait_for_sweep,
        text_of=text_of,
        status=status,
        table_rows=table_rows,
        TIMEOUT_S=TIMEOUT_S,
    )
