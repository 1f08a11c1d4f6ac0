"""The dialog that writes a file (an export, the scenario): a file name (served to a browser: only inside the
export directory), a box to tick to replace an existing file, and the reason when the write fails."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Static

from scalefront.api import ScalefrontError, message_of
from scalefront_tui.files import FileAccess


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
