"""Shared helpers of the terminal UI tests (tests/tui/), as fixtures.

The UI is driven headless with Textual's Pilot (`app.run_test`); async tests carry pytest-asyncio's
`asyncio` marker (set per module with `pytestmark`). Sweeps and fabric comparisons run in worker threads and
bump counters when they finish (`app.sweeps_finished`; `app.roi_updates`, which counts the ROI pane's
`RoiUpdated` messages); every wait on them is a bounded poll that fails with a message instead of hanging.
What the screen shows is read through Textual's public API only (`export_screenshot`, `query_one`).
Nothing waits on time: a sweep that must still be running is held at the engine's pause gate
(`app.start_sweep(paused=True)`).

Without the UI package (a core-only install) these tests are not collected.
"""

from __future__ import annotations

import importlib.util
import re
import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any
from xml.etree import ElementTree

import pytest

if importlib.util.find_spec("scalefront_tui") is None:
    collect_ignore_glob = ["test_*.py"]

#: Upper bound of any wait on the app (the default scenario sweeps in well under a second).
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


async def wait_for_roi(pilot: Any, count: int = 1) -> None:
    """Wait until the app has shown `count` fabric comparisons (its `roi_updates` counter)."""
    app = pilot.app
    await wait_until(pilot, lambda: app.roi_updates >= count, f"fabric comparison #{count}")
    await pilot.pause()


async def open_roi(pilot: Any) -> None:
    """After the first sweep, key 4 opens the ROI tab: wait until it shows its first fabric comparison."""
    await wait_for_sweep(pilot)
    await pilot.press("4")
    await wait_for_roi(pilot)


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


def _children(pid: int) -> list[int]:
    """The processes whose parent is `pid`, from /proc (Linux)."""
    from pathlib import Path

    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


@pytest.fixture
def child_processes() -> Callable[[int], list[int]]:
    """`child_processes(pid)`: the live children of a process (a server's session apps)."""
    return _children


SVG_TEXT = "{http://www.w3.org/2000/svg}text"


def screen_lines(app: Any) -> list[str]:
    """What the terminal shows right now, line by line: the text of the app's screenshot (`export_screenshot`,
    an SVG from Textual's public API, as the snapshot tests take). Its text elements name their line
    (`clip-path="url(#...-line-N)"`) and start at `x` = column x cell width; blank runs have no element, and
    a line ends with a newline element."""
    rows: dict[int, list[tuple[float, str]]] = {}
    cell_w = 0.0
    for node in ElementTree.fromstring(app.export_screenshot()).iter(SVG_TEXT):
        line = re.search(r"-line-(\d+)\)", node.get("clip-path", ""))
        text = (node.text or "").replace("\N{NO-BREAK SPACE}", " ").replace("\n", "")
        if line is None or not text:
            continue
        cell_w = cell_w or float(node.get("textLength", "0")) / len(text)
        rows.setdefault(int(line.group(1)), []).append((float(node.get("x", "0")), text))
    lines = []
    for y in range(app.size.height):
        line = ""
        for x, text in sorted(rows.get(y, [])):
            line = line.ljust(round(x / cell_w)) + text
        lines.append(line)
    return lines


def table_rows(app: Any, selector: str = "#frontier-table") -> list[list[str]]:
    """The cells of a DataTable as shown (strings), row by row."""
    from textual.widgets import DataTable

    table = app.query_one(selector, DataTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


def table_headers(app: Any, selector: str = "#frontier-table") -> list[str]:
    """The column labels of a DataTable as shown (a label on two lines is joined by a space)."""
    from textual.widgets import DataTable

    table = app.query_one(selector, DataTable)
    return [str(c.label).replace("\n", " ") for c in table.columns.values()]


@pytest.fixture(autouse=True)
def _steady_cursor(monkeypatch: pytest.MonkeyPatch) -> None:
    """Text fields do not blink (a blinking cursor would make screenshots differ from run to run): every field
    the app creates starts with Input's `cursor_blink` off."""
    from textual.widgets import Input

    init = Input.__init__

    def steady(self: Input, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self.cursor_blink = False

    monkeypatch.setattr(Input, "__init__", steady)


@pytest.fixture
def ui() -> SimpleNamespace:
    """The helpers above: ui.wait_until, ui.wait_for_sweep, ui.wait_for_roi, ui.open_roi, ui.text_of, ui.status,
    ui.screen_lines, ui.table_rows, ui.table_headers."""
    return SimpleNamespace(
        wait_until=wait_until,
        wait_for_sweep=wait_for_sweep,
        wait_for_roi=wait_for_roi,
        open_roi=open_roi,
        text_of=text_of,
        status=status,
        screen_lines=screen_lines,
        table_rows=table_rows,
        table_headers=table_headers,
        TIMEOUT_S=TIMEOUT_S,
    )
