"""The dialog that chooses a table's columns (any column of the schema, or as many as fit)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, SelectionList
from textual.widgets.selection_list import Selection

from scalefront.api import ColumnSpec


class ColumnsScreen(ModalScreen[list[str] | None | bool]):
    """Tick the columns to show (space toggles; enter keeps the choice; a: as many as fit; esc: no change).
    Dismissed with the chosen names, None for "as many as fit", or False for no change."""

    DEFAULT_CSS = """
    ColumnsScreen {
        align: center middle;
    }
    ColumnsScreen #columns-box {
        width: 76;
        max-width: 100%;
        height: auto;
        max-height: 100%;
        padding: 0 1;
        border: round $primary;
        background: $surface;
    }
    ColumnsScreen #columns-list {
        height: auto;
        max-height: 18;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "No change"),
        Binding("enter", "keep", "Show these", priority=True),
        Binding("a", "auto", "As many as fit"),
    ]

    def __init__(self, columns: Sequence[ColumnSpec], shown: Sequence[str], auto: bool) -> None:
        super().__init__()
        self.columns = list(columns)
        self.shown = list(shown)
        self.auto = auto

    def compose(self) -> ComposeResult:
        with Vertical(id="columns-box"):
            yield Label("Columns (space: show/hide, enter: keep, a: as many as fit, esc: no change)")
            yield SelectionList[str](
                *[Selection(f"{c.label}  [dim]{c.doc}[/dim]", c.name, c.name in self.shown) for c in self.columns],
                id="columns-list",
            )

    def action_keep(self) -> None:
        chosen = self.query_one("#columns-list", SelectionList).selected
        order = [c.name for c in self.columns]
        self.dismiss(sorted(chosen, key=order.index))

    def action_auto(self) -> None:
        self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(False)
