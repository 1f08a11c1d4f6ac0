"""The keys the app reads act in the order they were typed, across widgets (D14).

Textual routes a key to the widget focused when the app reads it, into that widget's own queue. A text field
that hands the focus on when Enter submits it (the filter line to the table) may then hold keys typed after the
Enter: it hands them back to the app, and until it has, a key read later must not overtake them (`/days<30`,
Enter, `lls` in one write and `e` in the next: `e` opened the export before the sort, which was then typed into
the dialog; CI saw it once in eight runs). So while any text field has keys it has not read, the keys the app
reads wait here, behind the ones the fields hand back, and act one at a time as the fields catch up. What a field
posts on submit (the filter's `FilterApplied`) takes its place in the same line."""

from __future__ import annotations

from collections import deque
from typing import Any

from textual import events
from textual.app import App
from textual.message import Message

from scalefront_tui.keys import act_on_arrival
from scalefront_tui.widgets.fields import TextInput


class KeySequencer:
    """Keys (and submit messages) in the order typed: `arrive` for the keys the app reads, `hand_on` for what a
    text field hands back, `wake` when a field has read its keys."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app
        #: What text fields handed back, in their order: typed before any key in `waiting`.
        self.handed: deque[events.Key | Message] = deque()
        #: Keys the app read while a field still held earlier ones.
        self.waiting: deque[events.Key] = deque()
        #: A handed-on message is posted and not yet handled: nothing acts until it is.
        self.blocked = False

    async def act(self, key: events.Key) -> None:
        """Act on one key: its binding on arrival (keys.py), else Textual's way (priority bindings, then the
        focused widget)."""
        if not await act_on_arrival(self.app, key):
            await App.on_event(self.app, key)

    def _fields_busy(self) -> bool:
        return any(f.keys_unread > 0 for screen in self.app.screen_stack for f in screen.query(TextInput))

    async def arrive(self, key: events.Key) -> None:
        """A key the app has read: act on it now, or after what is still ahead of it."""
        if self.handed or self.waiting or self.blocked or self._fields_busy():
            self.waiting.append(key)
            self.wake()
        else:
            await self.act(key)

    def hand_on(self, item: events.Key | Message) -> None:
        """A key (a fresh copy) or a submit message a field hands back, in the field's order."""
        self.handed.append(item)
        self.wake()

    def wake(self) -> None:
        """Go on at the end of the app's queue (after the messages already posted)."""
        if self.handed or self.waiting:
            self.app.call_later(self._resume)

    async def _resume(self) -> None:
        while (self.handed or self.waiting) and not self.blocked and not self._fields_busy():
            item = (self.handed or self.waiting).popleft()
            if isinstance(item, events.Key):
                await self.act(item)
            else:
                self.blocked = True
                self.app.post_message(item)
                self.app.call_later(self._unblock)
                return

    async def _unblock(self) -> None:
        self.blocked = False
        await self._resume()
