"""What the UI tests ask of a running app: the active tab, the frontier table, the screen as text, and a field
filled as a paste."""

from __future__ import annotations

from typing import Any

from textual.widgets import Input, TabbedContent


def active_tab(app: Any) -> str:
    return app.query_one(TabbedContent).active


def frontier_table(app: Any) -> Any:
    return app.query_one("#frontier-table")


def visible(ui: Any, app: Any) -> str:
    return "\n".join(ui.screen_lines(app))


async def paste_into(pilot: Any, selector: str, text: str) -> Input:
    """Focus a text field and replace its text (as a paste: one event, faster than a key per character)."""
    field = pilot.app.screen.query_one(selector, Input)
    field.focus()
    await pilot.pause()
    field.value = text
    await pilot.pause()
    return field
