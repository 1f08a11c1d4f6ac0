"""What the panes tell the app. Messages go up: a pane posts what the user did, and the app (app.py) decides what
follows. Data goes down: the app hands each pane what it shows through the pane's methods (`show`, `load`,
`use`, ...); no pane reads the app's state. As posting's `messages.py` and harlequin's `components/messages.py`.

Each message bubbles from the pane that posts it to the app, which handles it in `on_<message name>`."""

from __future__ import annotations

from textual.message import Message

from scalefront.api import RoiView


class FilterApplied(Message):
    """The user applied a filter to the frontier (enter in the filter line); empty text: no filter."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class PointSelected(Message):
    """The user selected the chart point `step` rows away from the selected one (j/k on a chart): the selected
    point is the frontier table's cursor row."""

    def __init__(self, step: int) -> None:
        super().__init__()
        self.step = step


class ScenarioEdited(Message):
    """A field of the scenario form changed; `values` are the form's texts by field key."""

    def __init__(self, values: dict[str, str]) -> None:
        super().__init__()
        self.values = values


class WhatIfChanged(Message):
    """A what-if of the ROI tab changed (a fabric, the cost mode or a number); the inputs are marked stale."""


class RoiUpdated(Message):
    """The ROI tab shows a new comparison (`view`), or the reason it failed (text)."""

    def __init__(self, view: RoiView | str) -> None:
        super().__init__()
        self.view = view
