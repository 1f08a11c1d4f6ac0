"""The Detail tab: one to three configurations side by side (issue 21, D12).

Each configuration is headed by its fabric's marker (the same as in the charts and the table). The lines: the
layout and topology, the GPU with its scale-up (NVLink) domain and precision, the settings, the step time and
where it goes (every bar on one scale, the longest step filling the width, with each part's share of its own
step), the communication hidden behind compute, memory, the network's bill of materials, time and cost. With
exactly two configurations a third column gives the difference (second minus first, and in %).

Down: `show(rows, draft, markers, marked=n)` the configurations to compare (the first three), in the scenario
they come from (for their network's bill of materials). It posts nothing."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
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
from scalefront_tui.widgets.markers import FabricMarkers

EMPTY = "Select a row of the frontier (enter), or mark rows with m to compare them."
#: Configurations side by side at most.
SHOWN = 3
#: The width of the labels' column ("memory per GPU" and the gaps).
LABEL_WIDTH = 18

#: A line of the comparison: its label, the cell of each configuration, and the difference of two (or None).
Cell = Callable[[dict[str, Any]], Any]
Line = tuple[str, Cell, Callable[[dict[str, Any], dict[str, Any]], str] | None]


def _bar(share: float, width: int) -> str:
    cells = max(0.0, min(1.0, share)) * width
    return "█" * int(cells) + ("▌" if cells - int(cells) >= 0.5 else "")


def _fmt(name: str, value: Any) -> str:
    return column_spec(name).format(value)


def _band(r: dict[str, Any], name: str) -> str:
    """The model's prediction interval of a metric, e.g. "90%: 3.6-4.4" (from its _lo/_hi columns)."""
    return f"{r['interval']:.0%}: {_fmt(name, r[name + '_lo'])}-{_fmt(name, r[name + '_hi'])}"


def _difference(name: str) -> Callable[[dict[str, Any], dict[str, Any]], str]:
    """Second minus first of a metric, signed, and as a share of the first: ``+350ms (+19%)``."""

    def diff(a: dict[str, Any], b: dict[str, Any]) -> str:
        delta = float(b[name]) - float(a[name])
        if delta == 0:
            return "same"
        sign = "+" if delta > 0 else ""
        share = f" ({sign}{delta / float(a[name]):.0%})" if float(a[name]) else ""
        return f"{sign}{_fmt(name, delta)}{share}"

    return diff


class DetailPane(VerticalScroll):
    """One to three configurations side by side: layout, GPU and domain, where the step time goes, hidden
    communication, memory, the network's bill of materials, time and cost; j/k, page up/down and g/G scroll."""

    DEFAULT_CSS = """
    DetailPane {
        padding: 0 1;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "scroll_down", "Down", show=False),
        Binding("k", "scroll_up", "Up", show=False),
        Binding("g", "scroll_home", "Top", show=False),
        Binding("G", "scroll_end", "Bottom", show=False),
    ]

    def compose(self) -> ComposeResult:
        yield Static(EMPTY, id="detail-body")

    def show(
        self, rows: Sequence[dict[str, Any]], draft: ScenarioDraft, markers: FabricMarkers, *, marked: int = 0
    ) -> None:
        """Compare the first three of `rows` (configurations of `draft`, the scenario as run); `marked` rows are
        marked on the frontier. None: say how to choose some."""
        body = self.query_one("#detail-body", Static)
        if not rows:
            body.update(EMPTY)
            return
        shown = list(rows[:SHOWN])
        table = Table(expand=True, show_lines=False, box=None, pad_edge=False)
        table.add_column("", no_wrap=True)
        for r in shown:
            mark = markers.of(str(r["fabric"]))
            head = Text.assemble((mark.glyph, mark.colour), " ", (str(r["fabric"]), "bold"))
            table.add_column(head + f" {format_count(r['gpus'])} x {r['gpu']}", overflow="fold")
        two = len(shown) == 2
        if two:
            table.add_column(Text("2nd - 1st", style="bold"), overflow="fold")
        columns = len(shown) + (1 if two else 0)
        bar_w = max(4, ((self.size.width or 78) - LABEL_WIDTH) // columns - 14)  # 14: "  1.02s  44% "
        for label, cell, diff in _lines(draft, shown, bar_w):
            extra = [diff(shown[0], shown[1]) if diff else ""] if two else []
            table.add_row(label, *[cell(r) for r in shown], *extra)
        body.update(Group(_heading(len(rows), marked), table))


def _heading(count: int, marked: int) -> Text:
    """What is compared: "showing 3 of 5 (the cursor row and the first marked; u unmarks all)"."""
    if count > SHOWN:
        return Text(f"showing {SHOWN} of {count}: the first {SHOWN} (m on a row unmarks it, u unmarks all)", "yellow")
    if marked:
        return Text(f"comparing {count} ({marked} marked; m on a row unmarks it, u unmarks all)", "dim")
    return Text("one configuration (m marks rows on the frontier to compare them)", "dim")


def _step_lines(rows: Sequence[dict[str, Any]], bar_w: int) -> list[Line]:
    """The step time's parts: each on one scale (the longest step of the rows fills `bar_w`), with its share of
    its own step."""
    longest = max(float(r["step_time_s"]) for r in rows) or 1.0

    def part(name: str) -> Cell:
        def cell(r: dict[str, Any]) -> Text:
            value = float(r[name])
            share = value / float(r["step_time_s"]) if r["step_time_s"] else 0.0
            return Text(f"{_fmt(name, value):>7} {share:>4.0%} {_bar(value / longest, bar_w)}")

        return cell

    return [
        (f"  {spec.label}", part(spec.name), _difference(spec.name))
        for spec in step_components()
        if any(float(r[spec.name]) for r in rows)
    ]


def _hidden(r: dict[str, Any]) -> str:
    """Communication hidden behind compute (not in the step time): "DP comm 800ms, TP comm 120ms", or none."""
    names = [c for c in r if c.endswith("_hidden_s") and column_spec(c).group == "hidden"]
    parts = [f"{column_spec(c.replace('_hidden_s', '_s')).label} {_fmt(c, r[c])}" for c in names if r[c]]
    return ", ".join(parts) if parts else "none"


def _gpu_line(r: dict[str, Any]) -> str:
    """GPU, NVLink domain (and the scheduler's segment of servers in it, where one is set), precision."""
    segment = r.get("nvlink_segment_nodes") or 0
    domain = f"{r['scale_up']} domain" + (f" in {segment}-server segments" if segment else "")
    return f"{r['gpu']}, {domain}, {r['precision']}"


def _settings_line(r: dict[str, Any]) -> str:
    """Micro-batch, ZeRO stage, recomputation (with the modules a selective one reruns, where the space names them),
    overlap."""
    modules = r.get("recompute_modules") or ""
    recompute = (
        f"{r['recompute']} ({modules.replace(',', ', ')})"
        if modules and r["recompute"] == "selective"
        else r["recompute"]
    )
    return f"mb {r['micro_batch']}, ZeRO-{r['zero']}, recompute {recompute}, overlap {r['overlap']}"


def _lines(draft: ScenarioDraft, rows: Sequence[dict[str, Any]], bar_w: int) -> list[Line]:
    """The comparison's lines, top to bottom."""
    return [
        ("layout", lambda r: f"{r['layout']}, {r['topology_label']}", None),
        ("GPU", _gpu_line, None),
        ("settings", _settings_line, None),
        (
            "step time",
            lambda r: (
                f"{_fmt('step_time_s', r['step_time_s'])} ({_band(r, 'step_time_s')})   MFU {format_percent(r['mfu'])}"
            ),
            _difference("step_time_s"),
        ),
        *_step_lines(rows, bar_w),
        ("hidden comm", _hidden, None),
        (
            "memory per GPU",
            lambda r: (
                f"{_fmt('memory_per_gpu_bytes', r['memory_per_gpu_bytes'])} of {_fmt('hbm_bytes', r['hbm_bytes'])} "
                f"({r['memory_per_gpu_bytes'] / r['hbm_bytes']:.0%})"
            ),
            _difference("memory_per_gpu_bytes"),
        ),
        ("network", lambda r: _network(draft, r), _difference("network_capex_usd")),
        (
            "time to train",
            lambda r: (
                f"{_fmt('time_to_train_days', r['time_to_train_days'])} days ({_band(r, 'time_to_train_days')}; "
                f"goodput {format_percent(r['goodput'])})"
            ),
            _difference("time_to_train_days"),
        ),
        ("cost to train", _cost, _difference("cost_to_train_usd")),
        (
            "capex",
            lambda r: f"{format_money(r['capex_usd'])} (network {format_money(r['network_capex_usd'])})",
            _difference("capex_usd"),
        ),
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
