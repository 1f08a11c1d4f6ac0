"""A chart widget: it draws whatever drawing it is shown (figures.py makes them) at its own size."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from scalefront_tui.widgets.figures import Drawing


class Chart(Widget, can_focus=True):
    """A chart that redraws itself at its size from a drawing function (width, height) -> lines."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._draw: Drawing = lambda w, h: [Text("no data yet", style="dim")]

    def show(self, draw: Drawing) -> None:
        self._draw = draw
        self.refresh()

    def lines(self) -> list[Text]:
        """The chart's lines at its current size (at least 20 x 8)."""
        return self._draw(max(20, self.size.width), max(8, self.size.height))

    def render(self) -> Text:
        return Text("\n").join(self.lines())
