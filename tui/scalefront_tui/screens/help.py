"""The help dialog: every key, in a box that scrolls at any size."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

HELP = """\
[b]scalefront[/b]: which cluster trains your model fastest and cheapest,
and is a fabric worth its price?

[b]Tabs[/b]  1 Frontier  2 Charts  3 Detail  4 ROI  5 Scenario
      6 Serving
      ctrl+p finds every command by name.

[b]Everywhere[/b]
  1-6       change tab (in a text field: esc first)
  esc       leave a text field; cancel a running sweep; back
  r         re-run the sweep (with the Scenario tab's edits)
  ctrl+r    the same, also from inside a text field
  /         filter the frontier
  e         export what the tab shows (.csv or .parquet)
  ctrl+s    save the scenario with its edits (.toml)
  o         cost mode: re-run in own (network priced) or rent
  t         light / dark theme      ? or F1   this help
  q         quit; ctrl+c and ctrl+q quit too (in a browser,
            ctrl+c copies: use ctrl+q)

[b]Every pane[/b]  j/k up/down, page up/down, g/G first/last
  (the ROI pane follows its table's cursor: g shows the
  verdict, G the tornado)

[b]Tables[/b]
  h/l left/right move between columns (the underlined one)
  s              sort by it; again: reverse (▲ ▼ in the header);
                 a click on a header does the same
  m              mark / unmark a row (✓); the Detail tab
                 compares the first three marked rows
  u              unmark every row
  enter          the row's detail: step time, memory, network
  y              copy the row (CSV) to the clipboard
  c              choose the columns (80 columns show fabric,
                 GPUs, days, cost, MFU and the layout; the GPU
                 too when the frontier mixes GPU types)
  cost (rent)    rent mode: GPU-hours, network prices do not
                 enter it; own: capex with the network, energy

[b]Filter[/b]  terms separated by spaces; all must hold; names as
  the headers say them:
  days<10   cost<$2M   gpus>=4k   mfu>40%   layout=pp4
  fabric=ib (contains)   fabric==ib-ndr (equals)
  fabric=ib,roce (either)   fabric!=tcp (not)   ib (any text)

[b]Charts[/b]
  c         next chart: time vs cost, scaling efficiency,
            step-time breakdown per fabric
  l         log axes          [ ]   GPU count of the breakdown
  j/k       move the selected point (◉)
  Each fabric has one marker and colour in every chart and
  table (● ■ ▲ ...; a fabric's operating mode, ib-ndr@tuned,
  the hollow one: ○). Points are labelled with their GPU
  count; ⊕ marks points of several fabrics on the same spot.
  Charts follow the filter.

[b]Detail[/b]  up to three configurations; with two, their
  difference. Step-time bars share one scale (the longest step
  fills the width); % is each part's share of its own step.

[b]ROI[/b]  fabric A against B per GPU count, for the scenario as
  run. The verdict speaks of the table's cursor row:
  [ ]       fewer / more GPUs (the verdict stays in view)
  enter     to the quote: A's network cost as +% over B's, as
            scalefront roi --premium (30 = --premium 1.3);
            empty: catalog prices (the catalog's % beside it)
  p         pin this answer; the next ones show beside it
  T         the tornado at the verdict's GPU count
  break-even: A's network cost, as a multiple of B's, at which
  both cost the same per delivered token; payback: months, or
  beyond life, never (A's extra speed does not cover its extra
  running cost), dominant (A cheaper and no slower), trade-off
  (A cheaper but slower). A what-if left as shown is not
  applied; a changed one moves its figure's range with it. A
  new GPU, GPU counts or fabrics resets them (a notice says so).

[b]Serving[/b]  what the cluster serves: the scenario's own serving
  table, else its model on 16 of its GPUs over each fabric, 1,000
  tokens in and out, FP8 (as scalefront inference); the frontier
  of tokens/s per GPU against TPOT, the most per GPU first; the
  cursor row's detail below (TTFT, TPOT, tok/s/GPU, $ per million
  tokens, batch and the most the KV cache holds, KV cache and
  weights per GPU).
  s         edit the SLOs: TPOT <= ms, tab, TTFT <= s; enter
            applies (empty: no bound), esc back to the table
  j/k, page up/down, g/G   move through the frontier
  c         the frontier as a chart (TPOT against tok/s/GPU)
  e         export the serving frontier as shown

[b]Scenario[/b]  numbers as you write them: 2T, 1,024, 1k, $2.50;
  lists with commas: 512, 1k, 4,096; ranges: 512-4096 (powers
  of two); topologies: fat-tree 2:1; scale-up: nvlink5-72 or
  default (each GPU's own). Every problem shows at once at the
  top. ctrl+r runs the edits (the title then says "edited");
  ctrl+s saves them.

[b]Browser[/b]  scalefront serve [SCENARIO] serves this app at
  http://127.0.0.1:8000 (this machine only; see --help).

Every number comes from the scalefront model; its formulas and
sources are in the README.
"""


class HelpScreen(ModalScreen[None]):
    """Every key, in a box that scrolls (up/down, j/k, page up/down, home/end)."""

    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
    }
    HelpScreen #help-scroll {
        width: 72;
        max-width: 100%;
        height: auto;
        max-height: 100%;
        padding: 0 1;
        border: round $primary;
        background: $surface;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "close", "Close"),
        Binding("j", "scroll('down')", "Down", show=False),
        Binding("k", "scroll('up')", "Up", show=False),
        Binding("g", "scroll('home')", "Top", show=False),
        Binding("G", "scroll('end')", "Bottom", show=False),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-scroll"):
            yield Static(HELP, id="help-text")

    def on_mount(self) -> None:
        scroll = self.query_one("#help-scroll")
        scroll.border_title = "keys"
        scroll.border_subtitle = "j/k, pgup/pgdn, g/G scroll · esc closes"
        scroll.focus()

    def action_scroll(self, direction: str) -> None:
        scroll = self.query_one("#help-scroll", VerticalScroll)
        if direction == "home":
            scroll.scroll_home(animate=False)
        elif direction == "end":
            scroll.scroll_end(animate=False)
        else:
            scroll.scroll_relative(y=1 if direction == "down" else -1, animate=False)

    def action_close(self) -> None:
        self.dismiss(None)
