"""Text fields that behave as in well-liked terminal apps: printable keys are text, Esc leaves the field (back
to the tab's main widget) so that single-key shortcuts work again, and the footer says so.

Every field applies its keys in the order they were typed (D14). Textual runs a focused widget's key bindings
(ctrl+u, ctrl+a, ctrl+k, backspace, enter, ...) only when the key has come back up to the app, by which time
the field has already inserted the printable keys that followed it in the same burst: `xyz`, then ctrl+u and
`abc.csv` in one write (fast typing over SSH, an unbracketed paste) left the field empty. A `TextInput` runs its
own bindings as it reads each key instead. And a field that hands the focus on when Enter submits it (the filter
line to the table) does so at once, tells the app first, and hands the app the keys of the same burst that
reached it after the Enter, in order (`/days<30`, Enter, `lls` typed fast: the filter applies, then `lls` move
and sort the table; they are not typed into the filter), through the app's `sequencer.KeySequencer`, which holds
the keys read later until the field has handed these on."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input


def _sequencer(field: Widget) -> Any:
    """The app's `sequencer.KeySequencer` (`key_sequencer`), None in an app without one."""
    return getattr(field.app, "key_sequencer", None)


class TextInput(Input):
    """A text field whose own keys (editing, enter, esc) apply in the order they were typed."""

    #: The widget that takes the focus when Enter submits the field (None: the focus stays).
    focus_on_submit: Widget | None = None
    #: The message the app gets when Enter submits the field, made from its text: posted to the app itself, so
    #: that it comes before the keys the field hands on after it (None: only Input's `Submitted`).
    message_on_submit: Callable[[str], Message] | None = None

    #: Keys the app has routed to this field that it has not read yet (sequencer.py waits for them).
    keys_unread: int = 0

    def post_message(self, message: Message) -> bool:
        # Count the keys the app routes here once they are queued (a closing field queues nothing).
        posted = super().post_message(message)
        if posted and isinstance(message, events.Key) and message.is_forwarded:
            self.keys_unread += 1
        return posted

    async def on_key(self, event: events.Key) -> None:
        # Runs before Input's own handler (the subclass comes first in the dispatch), and in the field's queue
        # order: a binding of the field acts here, before the keys typed after it are inserted.
        if event.is_forwarded:
            self.keys_unread = max(0, self.keys_unread - 1)
        try:
            await self._read(event)
        finally:
            if self.keys_unread == 0 and (sequencer := _sequencer(self)) is not None:
                sequencer.wake()

    async def _read(self, event: events.Key) -> None:
        if self.focus_on_submit is not None and self.screen.focused is self.focus_on_submit:
            # An Enter earlier in the same burst handed the focus on: this key was meant for the widget there.
            event.prevent_default()
            event.stop()
            self._hand_on(events.Key(event.key, event.character))
            return
        for binding in self._bindings.key_to_bindings.get(event.key, ()):
            if await self.app.run_action(binding.action, self):
                event.prevent_default()
                event.stop()
                return

    def _hand_on(self, item: events.Key | Message) -> None:
        """Give the app a key or message in this field's order: through its key sequencer, else its queue."""
        if (sequencer := _sequencer(self)) is not None:
            sequencer.hand_on(item)
        else:
            self.app.post_message(item)

    async def action_submit(self) -> None:
        if self.message_on_submit is not None:
            self._hand_on(self.message_on_submit(self.value))
        if self.focus_on_submit is not None:
            self.screen.set_focus(self.focus_on_submit)
        await super().action_submit()


class Field(TextInput):
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
