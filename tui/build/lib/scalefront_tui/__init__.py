"""scalefront-tui: the terminal UI of scalefront (`scalefront` with no arguments, `scalefront tui SCENARIO`)."""

from scalefront_tui.app import ScalefrontApp, run

__all__ = ["ScalefrontApp", "run"]
