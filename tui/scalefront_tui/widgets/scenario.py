"""The Scenario tab: the scenario's values as a form, every problem listed at the top.

Up: `ScenarioEdited` with the form's texts whenever a field changes. Down: `load(values)` the scenario as run,
`show_check(...)` the app's check of the edits."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Input, Label, Static

from scalefront.api import FORM_FIELDS, ScalefrontError, ScenarioDraft, message_of
from scalefront_tui.files import FileAccess
from scalefront_tui.messages import ScenarioEdited
from scalefront_tui.widgets.fields import Field


class ScenarioPane(VerticalScroll):
    """The scenario's values as a form: every problem listed at the top, ctrl+r runs, ctrl+s saves."""

    DEFAULT_CSS = """
    ScenarioPane {
        padding: 0 1;
    }
    ScenarioPane #form-summary {
        height: auto;
        margin-bottom: 1;
    }
    ScenarioPane .form-row {
        height: 1;
    }
    ScenarioPane .form-label {
        width: 18;
    }
    ScenarioPane .form-row Field {
        width: 1fr;
    }
    ScenarioPane #form-help {
        margin-top: 1;
        height: auto;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "edit", "Edit field"),
        Binding("j,down", "scroll_down", "Down", show=False),
        Binding("k,up", "scroll_up", "Up", show=False),
        Binding("g", "scroll_home", "Top", show=False),
        Binding("G", "scroll_end", "Bottom", show=False),
    ]

    def __init__(self, values: dict[str, str], files: FileAccess, *, id: str | None = None) -> None:
        """`values`: the scenario's texts by field key, as opened; `files`: where the app may read files."""
        super().__init__(id=id)
        self._opened = values
        self.files = files

    def compose(self) -> ComposeResult:
        values = self._opened
        yield Static("", id="form-summary")
        for f in FORM_FIELDS:
            with Horizontal(classes="form-row"):
                yield Label(f.label, classes="form-label")
                yield Field(values[f.key], placeholder=f.help, id=f"f-{f.key}")
        yield Static(
            "[dim]tab/shift+tab move between fields, esc leaves one; ctrl+r runs the edited scenario, "
            "ctrl+s saves it to a TOML file[/dim]",
            id="form-help",
        )

    def action_edit(self) -> None:
        field = self.query_one(f"#f-{FORM_FIELDS[0].key}", Field)
        field.screen.set_focus(field)  # now: the keys typed right after enter land in the field

    def set_value(self, key: str, text: str) -> None:
        """Write `text` into one field (as if typed: the form is checked again)."""
        self.query_one(f"#f-{key}", Field).value = text

    def values(self) -> dict[str, str]:
        """The form's texts by field key."""
        return {f.key: self.query_one(f"#f-{f.key}", Field).value for f in FORM_FIELDS}

    def load(self, values: dict[str, str]) -> None:
        """Show these values (the scenario as run)."""
        for f in FORM_FIELDS:
            self.query_one(f"#f-{f.key}", Field).value = values[f.key]

    def resolved(self, values: dict[str, str], draft: ScenarioDraft) -> tuple[dict[str, str], dict[str, str]]:
        """`values` with a model file typed in the browser resolved inside the export directory, and the problem
        if it is not there (`draft`: the scenario as run)."""
        model = values.get("model", "").strip()
        if not self.files.confined or not model.endswith(".toml") or model == draft.value("model"):
            return values, {}
        try:
            return {**values, "model": str(self.files.resolve(model))}, {}
        except ScalefrontError as err:
            return values, {"model": message_of(err)}

    @on(Input.Changed)
    def _edited(self) -> None:
        self.post_message(ScenarioEdited(self.values()))

    def show_check(self, errors: dict[str, str], changes: str, title: str) -> None:
        """Mark the fields with problems and list every problem at the top; with none, the pending edits
        (`changes`), or else the `title` of the scenario as run."""
        labels = {f.key: f.label for f in FORM_FIELDS}
        for f in FORM_FIELDS:
            self.query_one(f"#f-{f.key}", Field).set_class(f.key in errors, "invalid")
        summary = self.query_one("#form-summary", Static)
        if errors:
            text = Text()
            text.append(f"✗ {len(errors)} problem{'s' if len(errors) > 1 else ''}; fix to run:", style="bold red")
            for key, message in errors.items():
                text.append(f"\n  {labels.get(key, 'scenario')}: ", style="bold")
                text.append(message, style="red")
            summary.update(text)
        elif changes:
            summary.update(Text.assemble(("edited, not run yet: ", "bold yellow"), changes, " (ctrl+r runs it)"))
        else:
            summary.update(Text.assemble(("as run: ", "bold"), title))


def describe_changes(before: dict[str, str], after: dict[str, str]) -> str:
    """What differs between two sets of form values: ``tokens 2T -> 1.5T; rent $/GPU-hour (catalog) -> $1.00``."""
    parts = []
    for f in FORM_FIELDS:
        old, new = before[f.key].strip(), after[f.key].strip()
        if old != new:
            parts.append(f"{f.label} {old or '(catalog)'} → {new or '(catalog)'}")
    return "; ".join(parts)
