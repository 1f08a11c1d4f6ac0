"""The tabs' contents: the frontier (filter and table), the charts, the detail of rows, and the scenario form.
Each pane reads the app's state (the scenario as run, the sweep result, the filter) and draws it; the app
tells them when it changes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, cast

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Label, Static

from scalefront.api import (
    FORM_FIELDS,
    ScalefrontError,
    column_spec,
    format_count,
    format_money,
    format_percent,
    message_of,
    step_components,
)
from scalefront_tui.charts import Chart, breakdown, scaling, time_cost
from scalefront_tui.fields import Field
from scalefront_tui.frame_table import FrameTable

if TYPE_CHECKING:
    from scalefront_tui.app import ScalefrontApp

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


def _app(widget: Any) -> ScalefrontApp:
    return cast("ScalefrontApp", widget.app)


class FrontierPane(Vertical):
    """The filter line, the frontier table and (on tall terminals) the time-vs-cost chart."""

    def compose(self) -> ComposeResult:
        yield Field(placeholder="/ filter: days<10 fabric=ib cost<$2M mfu>40% (enter applies)", id="filter")
        yield FrameTable(FRONTIER_COLUMNS, id="frontier-table")
        yield Chart(id="frontier-chart")


class ChartsPane(Vertical):
    """One chart at a time: `c` switches, `l` toggles log axes, `[`/`]` the breakdown's GPU count, j/k the
    selected point (the frontier table's cursor)."""

    KINDS: ClassVar[list[tuple[str, str]]] = [
        ("time", "time vs cost"),
        ("scaling", "scaling efficiency"),
        ("breakdown", "step-time breakdown"),
    ]
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "next_chart", "Next chart"),
        Binding("l", "log", "Log axes"),
        Binding("left_square_bracket", "gpus(-1)", "Fewer GPUs"),
        Binding("right_square_bracket", "gpus(1)", "More GPUs"),
        Binding("j,down", "select(1)", "Next point", show=False),
        Binding("k,up", "select(-1)", "Previous point", show=False),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.kind = "time"
        self.log_axes = False
        self.gpus: int | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="chart-title")
        yield Chart(id="chart")

    def redraw(self) -> None:
        app = _app(self)
        names = "  ".join(f"[reverse] {label} [/]" if k == self.kind else label for k, label in self.KINDS)
        extra = "  [dim]c: next  l: log axes" + ("  [ ]: GPUs" if self.kind == "breakdown" else "") + "[/dim]"
        self.query_one("#chart-title", Static).update(names + extra)
        counts = sorted(set(app.best_shown["gpus"].to_list())) if not app.best_shown.is_empty() else []
        if self.gpus not in counts:
            selected = app.selected_record()
            self.gpus = (
                selected["gpus"] if selected and selected["gpus"] in counts else (counts[-1] if counts else None)
            )
        chart = self.query_one("#chart", Chart)
        if self.kind == "time":
            chart.show(time_cost(app.shown, app.group_by, app.selected_record(), self.log_axes, app.row_key))
        elif self.kind == "scaling":
            chart.show(scaling(app.best_shown, self.log_axes))
        else:
            chart.show(breakdown(app.best_shown, self.gpus))

    def action_next_chart(self) -> None:
        kinds = [k for k, _ in self.KINDS]
        self.kind = kinds[(kinds.index(self.kind) + 1) % len(kinds)]
        self.redraw()

    def action_log(self) -> None:
        self.log_axes = not self.log_axes
        self.redraw()

    def action_gpus(self, step: int) -> None:
        app = _app(self)
        counts = sorted(set(app.best_shown["gpus"].to_list())) if not app.best_shown.is_empty() else []
        if counts and self.gpus in counts:
            self.gpus = counts[max(0, min(len(counts) - 1, counts.index(self.gpus) + step))]
        self.redraw()

    def action_select(self, step: int) -> None:
        table = _app(self).query_one("#frontier-table", FrameTable)
        if table.row_count:
            table.move_cursor(row=max(0, min(table.row_count - 1, table.cursor_row + step)), animate=False)


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

    def compose(self) -> ComposeResult:
        yield Static("Select a row of the frontier (enter), or mark rows with m to compare them.", id="detail-body")

    def show(self, rows: Sequence[dict[str, Any]]) -> None:
        body = self.query_one("#detail-body", Static)
        if not rows:
            body.update("Select a row of the frontier (enter), or mark rows with m to compare them.")
            return
        app = _app(self)
        table = Table(expand=True, show_lines=False, box=None, pad_edge=False)
        table.add_column("", no_wrap=True)
        for r in rows:
            table.add_column(f"[b]{r['fabric']}[/b] {format_count(r['gpus'])} x {r['gpu']}", overflow="fold")

        def line(label: str, cell: Any) -> None:
            table.add_row(label, *[cell(r) for r in rows])

        line("layout", lambda r: f"{r['layout']}, {r['topology_label']}")
        line(
            "settings",
            lambda r: f"mb {r['micro_batch']}, ZeRO-{r['zero']}, recompute {r['recompute']}, overlap {r['overlap']}",
        )
        line(
            "step time",
            lambda r: (
                f"{_fmt('step_time_s', r['step_time_s'])} ({_band(r, 'step_time_s')})   MFU {format_percent(r['mfu'])}"
            ),
        )
        for spec in step_components():
            line(
                f"  {spec.label}",
                lambda r, name=spec.name: Text(f"{_fmt(name, r[name]):>7} {_bar(r[name] / r['step_time_s'])}"),
            )
        line(
            "memory per GPU",
            lambda r: Text(
                f"{_fmt('memory_per_gpu_bytes', r['memory_per_gpu_bytes'])} of {_fmt('hbm_bytes', r['hbm_bytes'])} "
                f"{_bar(r['memory_per_gpu_bytes'] / r['hbm_bytes'])}"
            ),
        )
        line("network", lambda r: self._network(app, r))
        line(
            "time to train",
            lambda r: (
                f"{_fmt('time_to_train_days', r['time_to_train_days'])} days ({_band(r, 'time_to_train_days')}; "
                f"goodput {format_percent(r['goodput'])})"
            ),
        )
        line(
            "cost to train",
            lambda r: (
                f"{format_money(r['cost_to_train_usd'])} {r['cost_mode']} "
                f"({r['interval']:.0%}: {format_money(r['cost_to_train_usd_lo'])}-"
                f"{format_money(r['cost_to_train_usd_hi'])}); rent {format_money(r['cost_rent_usd'])}, "
                f"own {format_money(r['cost_own_usd'])}"
            ),
        )
        line("capex", lambda r: f"{format_money(r['capex_usd'])} (network {format_money(r['network_capex_usd'])})")
        body.update(table)

    @staticmethod
    def _network(app: ScalefrontApp, r: dict[str, Any]) -> str:
        try:
            b = app.draft.bill_of_materials(r)
        except ScalefrontError as err:
            return message_of(err)
        tiers = " + ".join(format_count(n) for n in b["switches_by_tier"]) or "no"
        return (
            f"{format_count(b['nics'])} NICs, {tiers} switches, {format_count(b['cables'])} cables, "
            f"{format_count(b['transceivers'])} optics; {format_money(b['network_capex_usd'])}, "
            f"{_fmt('it_power_w', b['network_power_w'])}"
        )


class ScenarioPane(VerticalScroll):
    """The scenario's values as a form: every problem listed at the top, ctrl+r runs, ctrl+s saves."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "edit", "Edit field"),
        Binding("j,down", "scroll_down", "Down", show=False),
        Binding("k,up", "scroll_up", "Up", show=False),
    ]

    def compose(self) -> ComposeResult:
        values = _app(self).draft.values()
        yield Static("", id="form-summary")
        for f in FORM_FIELDS:
            with Horizontal(classes="form-row"):
                yield Label(f.label, classes="form-label")
                yield Field(values[f.key], placeholder=f.help, id=f"f-{f.key}")
        yield Static(
            "[dim]tab/shift+tab move between fields, esc leaves one; ctrl+r runs the edited scenario, "
            "ctrl+s saves it to a TOML file[/dim]",
            id="form-help",
        )

    def action_edit(self) -> None:
        self.query_one(f"#f-{FORM_FIELDS[0].key}", Field).focus()

    def values(self) -> dict[str, str]:
        """The form's texts by field key."""
        return {f.key: self.query_one(f"#f-{f.key}", Field).value for f in FORM_FIELDS}

    def load(self, values: dict[str, str]) -> None:
        """Show these values (the scenario as run)."""
        for f in FORM_FIELDS:
            self.query_one(f"#f-{f.key}", Field).value = values[f.key]

    def show_check(self, errors: dict[str, str], changes: str) -> None:
        """Mark the fields with problems and list every problem (or the pending edits) at the top."""
        labels = {f.key: f.label for f in FORM_FIELDS}
        for f in FORM_FIELDS:
            self.query_one(f"#f-{f.key}", Field).set_class(f.key in errors, "invalid")
        summary = self.query_one("#form-summary", Static)
        if errors:
            text = Text()
            text.append(f"✗ {len(errors)} problem{'s' if len(errors) > 1 else ''}; fix to run:", style="bold red")
            for key, message in errors.items():
                text.append(f"\n  {labels.get(key, 'scenario')}: ", style="bold")
                text.append(message, style="red")
            summary.update(text)
        elif changes:
            summary.update(Text.assemble(("edited, not run yet: ", "bold yellow"), changes, " (ctrl+r runs it)"))
        else:
            summary.update(Text.assemble(("as run: ", "bold"), _app(self).draft.title))


def describe_changes(before: dict[str, str], after: dict[str, str]) -> str:
    """What differs between two sets of form values: ``tokens 2T -> 1.5T; rent $/GPU-hour (catalog) -> $1.00``."""
    parts = []
    for f in FORM_FIELDS:
        old, new = before[f.key].strip(), after[f.key].strip()
        if old != new:
            parts.append(f"{f.label} {old or '(catalog)'} → {new or '(catalog)'}")
    return "; ".join(parts)
