"""The dialog that writes a file (an export, the scenario): a file name (``~`` expanded in a terminal; served to a
browser: only inside the export directory), where a bare name goes, a box to tick to replace an existing file,
and the reason when the write fails. `export_rows_dialog`, `export_roi_dialog`, `export_serving_dialog` and
`save_scenario_dialog` make the app's four."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

import polars as pl
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Static

from scalefront.api import (
    RoiView,
    ScalefrontError,
    ScenarioDraft,
    ServingView,
    export_roi,
    export_rows,
    export_serving,
    message_of,
)
from scalefront_tui.files import FileAccess
from scalefront_tui.widgets.fields import TextInput


class WriteFileScreen(ModalScreen[Path | None]):
    """Ask for a file name and write it with `write(path, force)`; an existing file is replaced only when the
    box is ticked. The name goes through `files` first (served to a browser: only inside the export directory).
    Dismissed with the path written, or None."""

    DEFAULT_CSS = """
    WriteFileScreen {
        align: center middle;
    }
    WriteFileScreen #write-box {
        width: 76;
        max-width: 100%;
        height: auto;
        max-height: 100%;
        padding: 0 1;
        border: round $primary;
        background: $surface;
    }
    WriteFileScreen #write-path {
        margin: 1 0 0 0;
    }
    WriteFileScreen #write-buttons {
        height: auto;
    }
    WriteFileScreen #write-error {
        color: $error;
        height: auto;
    }
    """

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
            yield Label(self.title_text)
            yield Label(f"[dim]a name alone goes in {self.files.where()}[/dim]", id="write-where")
            yield TextInput(self.default, id="write-path")
            yield Checkbox("replace the file if it exists", id="write-force")
            yield Static("", id="write-error")
            with Horizontal(id="write-buttons"):
                yield Button("Write", id="write-ok", variant="primary")
                yield Button("Cancel", id="write-cancel")

    def focus_name(self) -> None:
        """Give the file name the focus now (the app calls it as soon as the dialog is mounted, before it reads
        the next key: keys typed ahead land in the field)."""
        self.set_focus(self.query_one("#write-path", Input))

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


def export_rows_dialog(rows: pl.DataFrame, filter_text: str, files: FileAccess) -> WriteFileScreen:
    """Export the frontier rows shown (`rows`: filtered, in the table's order) to .csv or .parquet."""

    def write(path: str, force: bool) -> Path:
        return export_rows(rows, path, force=force)

    what = f"the {rows.height} rows shown" + (f" (filter {filter_text})" if filter_text else "")
    return WriteFileScreen(f"Export {what} to .csv or .parquet", "frontier.csv", write, files)


def export_roi_dialog(view: RoiView, files: FileAccess) -> WriteFileScreen:
    """Export the ROI tab's table."""

    def write(path: str, force: bool) -> Path:
        return export_roi(view, path, force=force)

    return WriteFileScreen(f"Export the ROI table ({view.table.height} rows)", "roi.csv", write, files)


def export_serving_dialog(view: ServingView, files: FileAccess) -> WriteFileScreen:
    """Export the Serving tab's frontier as shown (every fabric, under its SLO fields)."""

    def write(path: str, force: bool) -> Path:
        return export_serving(view, path, force=force)

    what = f"the serving frontier ({view.frame.height} layouts" + (", SLOs as set)" if view.slos else ")")
    return WriteFileScreen(f"Export {what} to .csv or .parquet", "serving.csv", write, files)


def tab_export_dialog(
    tab: str, roi: RoiView | None, serving: ServingView | None, files: FileAccess
) -> WriteFileScreen | None:
    """The export of what the ROI tab or the Serving tab shows; None on another tab or when it shows nothing."""
    if tab == "roi" and roi is not None:
        return export_roi_dialog(roi, files)
    if tab == "serving" and serving is not None and not serving.frame.is_empty():
        return export_serving_dialog(serving, files)
    return None


def save_scenario_dialog(
    draft: ScenarioDraft, saved: Callable[[ScenarioDraft], None], files: FileAccess
) -> WriteFileScreen:
    """Save `draft` (the scenario with the form's edits) as TOML; `saved` gets the draft that stands for the
    file written."""

    def write(path: str, force: bool) -> Path:
        written = draft.save(path, force=force)
        saved(written)
        return Path(written.file)

    return WriteFileScreen("Save the scenario as TOML", f"{draft.name}-edited.toml", write, files)
