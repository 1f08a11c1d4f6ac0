"""The Frontier tab: the filter line, the frontier table and (on tall terminals) the time-vs-cost chart."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical

from scalefront_tui.widgets.chart import Chart
from scalefront_tui.widgets.fields import Field
from scalefront_tui.widgets.frame_table import FrameTable

#: The frontier table's columns, in the order they get room: at 80 columns fabric, GPUs, days, cost, MFU and
#: the layout; wider terminals add the rest in turn (`c` chooses any column of the schema).
FRONTIER_COLUMNS = [
    "fabric",
    "gpus",
    "time_to_train_days",
    "cost_to_train_usd",
    "mfu",
    "layout",
    "topology_label",
    "gpu",
    "step_time_s",
    "usd_per_million_tokens",
    "recompute",
    "zero",
    "micro_batch",
    "overlap",
    "network_capex_usd",
    "energy_mwh",
    "goodput",
    "memory_per_gpu_gb",
]


class FrontierPane(Vertical):
    """The filter line, the frontier table and (on tall terminals) the time-vs-cost chart."""

    def compose(self) -> ComposeResult:
        yield Field(placeholder="/ filter: days<10 fabric=ib cost<$2M mfu>40% (enter applies)", id="filter")
        yield FrameTable(FRONTIER_COLUMNS, id="frontier-table")
        yield Chart(id="frontier-chart")
