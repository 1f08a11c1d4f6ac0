"""Dialogs of the scalefront UI (help, export) and the frontier filter."""

from __future__ import annotations

import re

import polars as pl
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Static

from scalefront import ScalefrontError
from scalefront.errors import message_of
from scalefront.export import write_frame

HELP = """\
[b]scalefront[/b]: the Pareto frontiers of a scenario's cluster designs and parallel layouts.

[b]Keys[/b] (the mouse works too, but is never needed)
  1 2 3 4     Frontier, Detail, ROI, Scenario tabs       ctrl+p   command palette
  up / down   move in the frontier; the chart marks the row
  enter       details of the row (step time, memory, network, cost)
  m           mark a row; two marked rows are compared side by side
  s           sort the table: days, then cost, MFU, GPUs (press again for the next)
  /           move to the filter: fabric=ib-ndr gpus>=4096 recompute!=full
  r, ctrl+r   re-run the sweep with the Scenario tab's values (ctrl+r also inside a text field)
  esc         cancel a running sweep
  e           export the shown rows to .csv or .parquet
  t           light / dark theme
  q           quit

[b]ROI[/b]: choose fabrics A and B, set A's network price multiplier, press enter: per GPU count the
fastest configuration on each, and the price of A's network (relative to B's) at which both cost the same.

Every number comes from the scalefront model; its formulas and sources are in the README.
"""

_TERM = re.compile(r"^\s*([a-z_]+)\s*(>=|<=|!=|=|>|<)\s*(.+?)\s*$")


def apply_filter(frame: pl.DataFrame, text: str) -> pl.DataFrame:
    """Rows matching every space-separated `column OP value` term (OP one of = != > >= < <=)."""
    out = frame
    for term in text.split():
        m = _TERM.match(term)
        if not m:
            raise ValueError(f"{term!r}: expected column=value, column>=number, ...")
        column, op, raw = m.groups()
        if column not in frame.columns:
            raise ValueError(f"{column!r} is not a column (try gpus, fabric, topology, tp, recompute, mfu, ...)")
        dtype = frame.schema[column]
        if dtype.is_numeric():
            try:
                value: object = float(raw)
            except ValueError:
                raise ValueError(f"{column} is numeric; {raw!r} is not a number") from None
        elif dtype == pl.Boolean:
            value = raw.lower() in ("true", "1", "yes")
        else:
            value = raw
        col = pl.col(column)
        expr = {
            "=": col == value,
            "!=": col != value,
            ">": col > value,
            ">=": col >= value,
            "<": col < value,
            "<=": col <= value,
        }[op]
        out = out.filter(expr)
    return out


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box"):
            yield Static(HELP)

    def action_dismiss(self, result: None = None) -> None:  # type: ignore[override]
        self.dismiss(None)


class ExportScreen(ModalScreen[str | None]):
    """Ask where to write the shown rows; refuse to overwrite unless the box is ticked."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, frame: pl.DataFrame):
        super().__init__()
        self.frame = frame

    def compose(self) -> ComposeResult:
        with Vertical(id="export-box"):
            yield Label(f"Export {self.frame.height} rows (.csv or .parquet, by the name's suffix)")
            yield Input("frontier.csv", id="export-path")
            yield Checkbox("replace the file if it exists", id="export-force")
            yield Static("", id="export-error")
            with Horizontal():
                yield Button("Write", id="export-write", variant="primary")
                yield Button("Cancel", id="export-cancel")

    @on(Button.Pressed, "#export-write")
    @on(Input.Submitted, "#export-path")
    def _write(self) -> None:
        path = self.query_one("#export-path", Input).value.strip()
        force = self.query_one("#export-force", Checkbox).value
        try:
            written = write_frame(self.frame, path, force=force)
        except ScalefrontError as err:
            text = message_of(err).replace("pass --force to replace it", "tick the box to replace it")
            self.query_one("#export-error", Static).update(text)
            return
        self.app.notify(f"wrote {written.resolve()}")
        self.dismiss(str(written))

    @on(Button.Pressed, "#export-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
