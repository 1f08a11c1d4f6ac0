"""The app's own keys (each pane and dialog binds its own), in the footer's order: at 80 columns every key the
footer shows fits beside the focused pane's keys, `e Export` included (issue 21, D13).

Conventions of well-liked terminal apps (k9s, lazygit, htop, btop): `?` and F1 help, `q` and Ctrl-C quit (in a
browser Ctrl-C is the browser's copy, so there Ctrl-Q quits), `/` filters, Esc goes back and cancels a running
sweep (the footer says so while one runs), digits change tab."""

from __future__ import annotations

from typing import Any

from textual import events
from textual.app import App
from textual.binding import Binding
from textual.widgets import Input

#: Actions that open a text field (a dialog's or the filter line). They are bound with priority, so they act as
#: soon as the app reads their key: the keys typed right after them, even in the same burst (fast typing over
#: SSH, a paste), then reach the field, in order (D14). Outside the main screen and inside a text field they
#: do not act (the key is text there).
TYPE_AHEAD = ("export", "focus_filter", "save_scenario")


async def act_on_arrival(app: App[Any], event: events.Key) -> bool:
    """Run the binding of a key as the app reads it, on the main screen outside text fields; False when the key
    has none there (it then goes the usual way). Textual runs a focused widget's bindings only when the key
    comes back up to the app, so a key bound with priority (`e`) overtook the table keys typed before it in the
    same burst (`l l s e`: the sort landed after the dialog opened, and was lost). Reading every binding on
    arrival keeps a burst in order; text fields keep Textual's way (their printable keys are text)."""
    if not app.screen_stack or app.screen is not app.screen_stack[0] or isinstance(app.focused, Input):
        return False
    active = app.screen.active_bindings.get(event.key)
    if active is None or not active.enabled:
        return False
    return await app.run_action(active.binding.action, active.node)


APP_KEYS = [
    Binding("slash", "focus_filter", "Filter", priority=True),
    Binding("e", "export", "Export", priority=True),
    # While a sweep runs the footer offers `esc Cancel` instead of `r Re-run` (both fit at 80 columns, not
    # together); r re-runs all the same.
    Binding("r", "rerun_when_idle", "Re-run"),
    Binding("r", "rerun", "Re-run", show=False),
    Binding("question_mark", "help", "Help"),
    Binding("f1", "help", "Help", show=False),
    Binding("q", "quit", "Quit"),
    Binding("ctrl+c", "quit_now", "Quit", show=False, priority=True),
    Binding("ctrl+r", "rerun", "Run", show=False, priority=True),
    Binding("ctrl+s", "save_scenario", "Save scenario", show=False, priority=True),
    Binding("o", "switch_cost_mode", "Own/rent", show=False),
    Binding("t", "toggle_theme", "Theme", show=False),
    Binding("escape", "cancel_sweep", "Cancel"),
    Binding("escape", "go_back", "Back", show=False),
]
