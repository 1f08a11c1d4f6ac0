"""Dialogs of the scalefront UI: help (scrollable at any size), writing a file (export, save) and choosing the
frontier table's columns."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, SelectionList, Static
from textual.widgets.selection_list import Selection

from scalefront.api import ColumnSpec, ScalefrontError, message_of
from scalefront_tui.files import FileAccess

HELP = """\
[b]scalefront[/b]: which cluster trains your model fastest and cheapest,
and is a fabric worth its price?

[b]Tabs[/b]  1 Frontier  2 Charts  3 Detail  4 ROI  5 Scenario
      ctrl+p finds every command by name.

[b]Everywhere[/b]
  1-5       change tab (in a text field: esc first)
  esc       leave a text field; cancel a running sweep; back
  r         re-run the sweep (with the Scenario tab's edits)
  ctrl+r    the same, also from inside a text field
  /         filter the frontier
  e         export what the tab shows (.csv or .parquet)
  ctrl+s    save the scenario with its edits (.toml)
  t         light / dark theme      ?  this help      q  quit

[b]Tables[/b]
  j/k up/down    move            g/G     first/last row
  h/l left/right move between columns (the underlined one)
  s              sort by it; again: reverse (▲ ▼ in the header)
  m              mark / unmark a row (●); the Detail tab
                 compares the marked rows
  enter          the row's detail: step time, memory, network
  y              copy the row (CSV) to the clipboard
  c              choose the columns (80 columns show fabric,
                 GPUs, days, cost, MFU and the layout)

[b]Filter[/b]  terms separated by spaces; all must hold; names as
  the headers say them:
  days<10   cost<$2M   gpus>=4k   mfu>40%   layout=pp4
  fabric=ib (contains)   fabric==ib-ndr (equals)
  fabric=ib,roce (either)   fabric!=tcp (not)   ib (any text)

[b]Charts[/b]
  c         next chart: time vs cost, scaling efficiency,
            step-time breakdown per fabric
  l         log axes          [ ]   GPU count of the breakdown
  j/k       move the selected point (◉)
  Points are labelled with their GPU count; ⊕ marks points of
  several fabrics on the same spot. Charts follow the filter.

[b]ROI[/b]  fabric A against B per GPU count, for the scenario as
  run. break-even: A's network price, as a multiple of B's, at
  which both cost the same to own for the run; payback: days for
  A's extra network cost to pay back. Change any what-if and the
  table follows; T computes the tornado (12 more sweeps).

[b]Scenario[/b]  numbers as you write them: 2T, 1,024, 1k, $2.50;
  lists with commas: 512, 1k, 4,096; topologies: fat-tree 2:1.
  Every problem shows at once at the top. ctrl+r runs the edits
  (the title then says "edited"); ctrl+s saves them.

[b]Browser[/b]  scalefront serve [SCENARIO] serves this app at
  http://127.0.0.1:8000 (this machine only; see --help).

Every number comes from the scalefront model; its formulas and
sources are in the README.
"""


class HelpScreen(ModalScreen[None]):
    """Every key, in a box that scrolls (up/down, j/k, page up/down, home/end)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "close", "Close"),
        Binding("j", "scroll('down')", "Down", show=False),
        Binding("k", "scroll('up')", "Up", show=False),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-scroll"):
            yield Static(HELP, id="help-text")

    def on_mount(self) -> None:
        scroll = self.query_one("#help-scroll")
        scroll.border_title = "keys"
        scroll.border_subtitle = "j/k, pgup/pgdn scroll · esc closes"
        scroll.focus()

    def action_scroll(self, direction: str) -> None:
        scroll = self.query_one("#help-scroll", VerticalScroll)
        scroll.scroll_relative(y=1 if direction == "down" else -1, animate=False)

    def action_close(self) -> None:
        self.dismiss(None)


class WriteFileScreen(ModalScreen[Path | None]):
    """Ask for a file name and write it with `write(path, force)`; an existing file is replaced only when the
    box is ticked. The name goes through `files` first (served to a browser: only inside the export directory).
    Dismissed with the path written, or None."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(
        self, title: str, default: str, write: Callable[[str, bool], Path], files: FileAccess | None = None
    ) -> None:
        super().__init__()
        self.title_text = title
        self.default = default
        self.write = write
        self.files = files or FileAccess()

    def compose(self) -> ComposeResult:
        with Vertical(id="write-box"):
            yield Label(self.title_text + (f" (in {self.files.where()})" if self.files.confined else ""))
            yield Input(self.default, id="write-path")
            yield Checkbox("replace the file if it exists", id="write-force")
            yield Static("", id="write-error")
            with Horizontal(id="write-buttons"):
                yield Button("Write", id="write-ok", variant="primary")
                yield Button("Cancel", id="write-cancel")

    @on(Button.Pressed, "#write-ok")
    @on(Input.Submitted, "#write-path")
    def _write(self) -> None:
        text = self.query_one("#write-path", Input).value
        force = self.query_one("#write-force", Checkbox).value
        try:
            written = self.write(str(self.files.resolve(text)), force)
        except ScalefrontError as err:
            text = message_of(err).replace("pass --force to replace it", "tick the box to replace it")
            self.query_one("#write-error", Static).update(text)
            return
        self.app.notify(f"wrote {written.resolve()}")
        self.dismiss(written)

    @on(Button.Pressed, "#write-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


class ColumnsScreen(ModalScreen[list[str] | None | bool]):
    """Tick the columns to show (space toggles; enter keeps the choice; a: as many as fit; esc: no change).
    Dismissed with the chosen names, None for "as many as fit", or False for no change."""

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
