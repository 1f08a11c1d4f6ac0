"""The command palette's entries (ctrl+p) beyond Textual's own: each tab, the filter, sorting, the columns and
the app's actions, found by name. The app hands in what it shows (its tabs, the fabrics on the frontier, the
columns to sort by) and itself as `Actions`, a protocol: this module never imports the app."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

from textual.app import SystemCommand

from scalefront.api import ColumnSpec


class Actions(Protocol):
    """What the palette's entries run."""

    def action_tab(self, tab: str) -> None: ...
    def action_focus_filter(self) -> None: ...
    def set_filter(self, text: str) -> None: ...
    def action_sort(self, column: str, descending: bool) -> None: ...
    def action_choose_columns(self) -> None: ...
    def action_rerun(self) -> None: ...
    async def action_export(self) -> None: ...
    async def action_save_scenario(self) -> None: ...
    def action_toggle_theme(self) -> None: ...
    def action_switch_cost_mode(self) -> None: ...
    def unmark_all(self) -> None: ...


def palette(
    app: Actions, tabs: Sequence[tuple[str, str]], fabrics: Sequence[str], columns: Sequence[ColumnSpec]
) -> Iterator[SystemCommand]:
    """The entries: `tabs` are (id, title with its key, e.g. "4 ROI"), `fabrics` those on the frontier,
    `columns` those to sort by."""
    for i, (tab, title) in enumerate(tabs):
        name = title.split(" ", 1)[1]
        yield SystemCommand(f"Go to {name}", f"Open the {name} tab (key {i + 1})", lambda t=tab: app.action_tab(t))
    yield SystemCommand("Filter the frontier", "Type a filter: days<10 fabric=ib cost<$2M", app.action_focus_filter)
    yield SystemCommand("Clear the filter", "Show every frontier row", lambda: app.set_filter(""))
    for fabric in fabrics:
        text = f"fabric=={fabric}"
        yield SystemCommand(f"Filter: only {fabric}", text, lambda t=text: app.set_filter(t))
    for spec in columns:
        for descending in (False, True):
            order = "descending" if descending else "ascending"
            yield SystemCommand(
                f"Sort by {spec.label} ({order})",
                spec.doc,
                lambda n=spec.name, d=descending: app.action_sort(n, d),
            )
    yield SystemCommand("Choose columns", "Pick the frontier table's columns", app.action_choose_columns)
    yield SystemCommand("Unmark all rows", "Clear every mark of the frontier (key u)", app.unmark_all)
    yield SystemCommand(
        "Switch the cost mode (own/rent)",
        "Re-run in the other mode: rent leaves network prices out, own counts them (key o)",
        app.action_switch_cost_mode,
    )
    yield SystemCommand("Re-run the sweep", "With the Scenario tab's edits, if any", app.action_rerun)
    yield SystemCommand("Export", "Write what the tab shows to .csv or .parquet", app.action_export)
    yield SystemCommand("Save the scenario", "Write the scenario (with edits) to a TOML file", app.action_save_scenario)
    yield SystemCommand("Toggle light/dark", "Switch the theme", app.action_toggle_theme)
