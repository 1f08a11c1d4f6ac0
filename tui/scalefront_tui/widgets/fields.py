"""Text fields that behave as in well-liked terminal apps: printable keys are text, Esc leaves the field (back
to the tab's main widget) so that single-key shortcuts work again, and the footer says so."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Input


class Field(Input):
    """A one-line text field (compact: no border) that Esc leaves."""

    DEFAULT_CSS = """
    Field.invalid {
        background: $error 30%;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "leave", "Back")]

    class Left(Message):
        """The user left the field with Esc."""

        def __init__(self, field: Field) -> None:
            super().__init__()
            self.field = field

        @property
        def control(self) -> Field:
            return self.field

    def __init__(self, value: str = "", *, placeholder: str = "", id: str | None = None) -> None:
        super().__init__(value, placeholder=placeholder, id=id, compact=True, select_on_focus=False)

    def action_leave(self) -> None:
        self.post_message(self.Left(self))
