"""The Detail tab: one to three configurations side by side.

Down: `show(rows, draft)` the configurations to compare, in the scenario they come from (for their network's
bill of materials). It posts nothing."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from scalefront.api import (
    ScalefrontError,
    ScenarioDraft,
    column_spec,
    format_count,
    format_money,
    format_percent,
    message_of,
    step_components,
)

EMPTY = "Select a row of the frontier (enter), or mark rows with m to compare them."

#: A line of the comparison: its label and the cell of each configuration.
Line = tuple[str, Callable[[dict[str, Any]], Any]]


def _bar(share: float, width: int = 24) -> str:
    cells = max(0.0, min(1.0, share)) * width
    return "█" * int(cells) + ("▌" if cells - int(cells) >= 0.5 else "")


def _fmt(name: str, value: Any) -> str:
    return column_spec(name).format(value)


def _band(r: dict[str, Any], name: str) -> str:
    """The model's prediction interval of a metric, e.g. "90%: 3.6-4.4" (from its _lo/_hi columns)."""
    return f"{r['interval']:.0%}: {_fmt(name, r[name + '_lo'])}-{_fmt(name, r[name + '_hi'])}"


class DetailPane(VerticalScroll):
    """One to three configurations side by side: layout, where the step time goes, memory, the network's bill of
    materials, time and cost."""

    DEFAULT_CSS = """
    DetailPane {
        padding: 0 1;
    }
    """

    def compose(self) -> ComposeResult:
        yield Static(EMPTY, id="detail-body")

    def show(self, rows: Sequence[dict[str, Any]], draft: ScenarioDraft) -> None:
        """Compare `rows` (configurations of `draft`, the scenario as run); none: say how to choose some."""
        body = self.query_one("#detail-body", Static)
        if not rows:
            body.update(EMPTY)
            return
        table = Table(expand=True, show_lines=False, box=None, pad_edge=False)
        table.add_column("", no_wrap=True)
        for r in rows:
            table.add_column(f"[b]{r['fabric']}[/b] {format_count(r['gpus'])} x {r['gpu']}", overflow="fold")
        for label, cell in _lines(draft):
            table.add_row(label, *[cell(r) for r in rows])
        body.update(table)


def _lines(draft: ScenarioDraft) -> list[Line]:
    """The comparison's lines, top to bottom."""
    step = [
        (
            f"  {spec.label}",
            lambda r, name=spec.name: Text(f"{_fmt(name, r[name]):>7} {_bar(r[name] / r['step_time_s'])}"),
        )
        for spec in step_components()
    ]
    return [
        ("layout", lambda r: f"{r['layout']}, {r['topology_label']}"),
        (
            "settings",
            lambda r: f"mb {r['micro_batch']}, ZeRO-{r['zero']}, recompute {r['recompute']}, overlap {r['overlap']}",
        ),
        (
            "step time",
            lambda r: (
                f"{_fmt('step_time_s', r['step_time_s'])} ({_band(r, 'step_time_s')})   MFU {format_percent(r['mfu'])}"
            ),
        ),
        *step,
        (
            "memory per GPU",
            lambda r: Text(
                f"{_fmt('memory_per_gpu_bytes', r['memory_per_gpu_bytes'])} of {_fmt('hbm_bytes', r['hbm_bytes'])} "
                f"{_bar(r['memory_per_gpu_bytes'] / r['hbm_bytes'])}"
            ),
        ),
        ("network", lambda r: _network(draft, r)),
        (
            "time to train",
            lambda r: (
                f"{_fmt('time_to_train_days', r['time_to_train_days'])} days ({_band(r, 'time_to_train_days')}; "
                f"goodput {format_percent(r['goodput'])})"
            ),
        ),
        ("cost to train", _cost),
        ("capex", lambda r: f"{format_money(r['capex_usd'])} (network {format_money(r['network_capex_usd'])})"),
    ]


def _cost(r: dict[str, Any]) -> str:
    return (
        f"{format_money(r['cost_to_train_usd'])} {r['cost_mode']} "
        f"({r['interval']:.0%}: {format_money(r['cost_to_train_usd_lo'])}-"
        f"{format_money(r['cost_to_train_usd_hi'])}); rent {format_money(r['cost_rent_usd'])}, "
        f"own {format_money(r['cost_own_usd'])}"
    )


def _network(draft: ScenarioDraft, r: dict[str, Any]) -> str:
    try:
        b = draft.bill_of_materials(r)
    except ScalefrontError as err:
        return message_of(err)
    tiers = " + ".join(format_count(n) for n in b["switches_by_tier"]) or "no"
    return (
        f"{format_count(b['nics'])} NICs, {tiers} switches, {format_count(b['cables'])} cables, "
        f"{format_count(b['transceivers'])} optics; {format_money(b['network_capex_usd'])}, "
        f"{_fmt('it_power_w', b['network_power_w'])}"
    )
