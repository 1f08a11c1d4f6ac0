"""The notice shown over the app when the terminal is smaller than the app is laid out for (D20; btop does the
same): what the size is, what it needs, and that q still quits. The app's breakpoints (`-too-narrow`,
`-too-short` on the screen) show it, on a layer above the tabs, which stay as they were (focus included) for
when the terminal grows again."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

#: The smallest terminal the tabs are laid out for (the frontier's answer columns need 60; the tabs 20 rows).
MIN_WIDTH, MIN_HEIGHT = 60, 20


class TooSmall(Widget):
    """'terminal too small: 40x12; scalefront needs at least 60x20'."""

    DEFAULT_CSS = """
    TooSmall {
        display: none;
        layer: notice;
        dock: top;
        width: 100%;
        height: 100%;
        background: $background;
        content-align: center middle;
        text-align: center;
    }
    .-too-narrow TooSmall, .-too-short TooSmall {
        display: block;
    }
    """
    SCOPED_CSS = False

    def render(self) -> Text:
        width, height = self.app.size
        return Text.assemble(
            ("terminal too small", "bold"),
            f": {width}x{height}\nscalefront needs at least {MIN_WIDTH}x{MIN_HEIGHT}\n",
            ("make the window larger (q quits)", "dim"),
        )
