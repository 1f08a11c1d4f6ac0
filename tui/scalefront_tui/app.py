"""The scalefront terminal UI: run a scenario's sweep in a worker, browse its frontiers, look inside one
configuration, compare fabrics, edit the scenario and export what you found. All numbers come from the
scalefront core's Python API; this package holds no model math."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

import polars as pl
from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input, Label, Select, Static, TabbedContent, TabPane
from textual.worker import get_current_worker
from textual_plotext import PlotextPlot

from scalefront import CatalogError, ScalefrontError
from scalefront.errors import message_of
from scalefront.model import builtin_catalog
from scalefront.network import bom
from scalefront.scenario import DEFAULT_SCENARIO, Scenario, build_scenario, read_scenario
from scalefront.sweep import Progress, SweepResult, run_sweep
from scalefront_tui.screens import ExportScreen, HelpScreen, apply_filter

#: Columns of the frontier table (after the group-by columns).
TABLE_COLUMNS = [
    ("gpus", "GPUs"),
    ("gpu", "GPU"),
    ("topology", "topology"),
    ("tp", "tp"),
    ("pp", "pp"),
    ("dp", "dp"),
    ("cp", "cp"),
    ("vpp", "vpp"),
    ("micro_batch", "mb"),
    ("recompute", "recompute"),
    ("zero", "ZeRO"),
    ("overlap", "overlap"),
    ("time_to_train_days", "days"),
    ("cost_to_train_usd", "cost $"),
    ("mfu", "MFU"),
]
BREAKDOWN = [
    ("compute_s", "compute"),
    ("recompute_s", "recompute"),
    ("bubble_s", "pipeline bubble"),
    ("tp_comm_s", "TP comm"),
    ("pp_comm_s", "PP comm"),
    ("dp_comm_s", "DP comm"),
    ("cp_comm_s", "CP comm"),
    ("ep_comm_s", "EP comm"),
    ("optimizer_s", "optimizer"),
    ("overhead_s", "step overhead"),
]
#: Scenario form fields: (id, label, path in the scenario TOML, kind).
FORM = [
    ("f-model", "model", ("workload", "model"), "str"),
    ("f-tokens", "tokens", ("workload", "tokens"), "float"),
    ("f-batch", "global batch (seqs)", ("workload", "global_batch"), "int"),
    ("f-gpu", "GPU types", ("cluster", "gpu"), "list"),
    ("f-gpus", "GPU counts", ("cluster", "gpus"), "ints"),
    ("f-fabric", "fabrics", ("cluster", "fabric"), "list"),
    ("f-topology", "topologies", ("cluster", "topology"), "topologies"),
    ("f-rent", "rent $/GPU-hour", ("economics", "prices", "rent_usd_per_gpu_hour"), "optional-price"),
]


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        if abs(value) >= 1e5:
            return f"{value:,.0f}"
        return f"{value:.3g}" if abs(value) < 10 else f"{value:,.1f}"
    return str(value)


def _bar(share: float, width: int = 28) -> str:
    cells = max(0.0, min(1.0, share)) * width
    return "█" * int(cells) + ("▌" if cells - int(cells) >= 0.5 else "")


def _parse_field(kind: str, text: str) -> Any:
    """A form value as the scenario file takes it; raises ValueError with the reason."""
    text = text.strip()
    if kind == "optional-price" and not text:
        return None  # keep the catalog's prices
    if not text:
        raise ValueError("required")
    if kind == "optional-price":
        kind = "price"
    if kind == "topologies":
        out: list[Any] = []
        for item in (t.strip() for t in text.split(",") if t.strip()):
            name, _, ratio = item.partition(":")
            if ratio:
                r = float(ratio)
                if r < 1:
                    raise ValueError(f"{item}: oversubscription must be >= 1")
                out.append({"name": name.strip(), "oversubscription": r})
            else:
                out.append(name.strip())
        if not out:
            raise ValueError("give at least one topology")
        return out
    if kind == "str":
        return text
    if kind == "int":
        v = int(text)
        if v < 1:
            raise ValueError("must be a positive integer")
        return v
    if kind in ("float", "price"):
        v = float(text.replace("_", ""))
        if (not v > 0 and kind == "float") or v < 0:
            raise ValueError("must be a positive number" if kind == "float" else "must be >= 0")
        return v
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise ValueError("give at least one value, comma-separated")
    if kind == "ints":
        values = [int(t) for t in items]
        if any(v < 1 for v in values):
            raise ValueError("GPU counts must be positive integers")
        return values
    return items


class ScalefrontApp(App[None]):
    """Browse a scenario's trade-offs."""

    CSS_PATH = "app.tcss"
    TITLE = "scalefront"
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("r", "rerun", "Re-run"),
        Binding("ctrl+r", "rerun", "Re-run", show=False, priority=True),
        Binding("slash", "focus_filter", "Filter", show=False),
        Binding("escape", "cancel_sweep", "Cancel", show=False),
        Binding("e", "export", "Export"),
        Binding("m", "mark", "Compare"),
        Binding("s", "sort", "Sort"),
        Binding("t", "toggle_theme", "Theme"),
        Binding("question_mark", "help", "Help"),
        Binding("1", "tab('frontier')", "Frontier", show=False),
        Binding("2", "tab('detail')", "Detail", show=False),
        Binding("3", "tab('roi')", "ROI", show=False),
        Binding("4", "tab('scenario')", "Scenario", show=False),
    ]

    def __init__(self, scenario: str = DEFAULT_SCENARIO, *, autostart: bool = True):
        super().__init__()
        self.scenario_source = scenario
        self.catalog = builtin_catalog()
        self.raw, self.file = read_scenario(scenario)
        #: The scenario as last run (the form's values once re-run): ROI compares fabrics on it.
        self.current_raw: dict[str, Any] = copy.deepcopy(self.raw)
        self.scenario: Scenario = build_scenario(self.raw, self.file, self.catalog)
        self.result: SweepResult | None = None
        self.frontier: pl.DataFrame = pl.DataFrame()
        self.shown: pl.DataFrame = pl.DataFrame()
        #: Marked configurations (rows of the frontier), compared side by side in the Detail tab.
        self.marked: list[dict[str, Any]] = []
        self.sort_desc = False
        self.autostart = autostart
        self.sweeps_finished = 0

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="status")
        with TabbedContent(initial="frontier"):
            with TabPane("Frontier", id="frontier"), Vertical(id="frontier-pane"):
                yield PlotextPlot(id="chart")
                yield Input(placeholder="filter, e.g. fabric=ib-ndr gpus>=4096 (Enter)", id="filter")
                yield DataTable(id="frontier-table", cursor_type="row", zebra_stripes=True)
            with TabPane("Detail", id="detail"), VerticalScroll(id="detail-scroll"):
                yield Static("Select a row of the frontier (Enter), or mark two with m to compare.", id="detail-body")
            with TabPane("ROI", id="roi"), VerticalScroll():
                fabrics = sorted(self.catalog.fabrics)
                first = self.scenario.fabric_names
                with Horizontal(classes="form-row"):
                    yield Label("fabric A / B")
                    yield Select([(f, f) for f in fabrics], value=first[0], id="roi-a", allow_blank=False)
                    yield Select(
                        [(f, f) for f in fabrics],
                        value=first[1] if len(first) > 1 else fabrics[0],
                        id="roi-b",
                        allow_blank=False,
                    )
                with Horizontal(classes="form-row"):
                    yield Label("A network price x")
                    yield Input("1.0", id="roi-price")
                yield Static("Press Enter in the price field to compare.", id="roi-body")
                yield DataTable(id="roi-table", zebra_stripes=True)
            with TabPane("Scenario", id="scenario"), VerticalScroll(id="scenario-form"):
                for field_id, label, path, kind in FORM:
                    with Horizontal(classes="form-row"):
                        yield Label(label)
                        yield Input(self._form_value(path, kind), id=field_id)
                yield Static("", id="form-error")
                yield Static(
                    "Edit, then press ctrl+r to re-run the sweep with these values. Topologies take "
                    "name:oversubscription (fat-tree:2); an empty rent keeps the catalog's prices."
                )
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = self.scenario.name
        table = self.query_one("#frontier-table", DataTable)
        table.add_columns(*[label for _, label in self._columns()])
        self._draw_chart()
        if self.autostart:
            self.start_sweep()

    def _form_value(self, path: tuple[str, ...], kind: str) -> str:
        node: Any = self.raw
        for key in path:
            node = node.get(key, {}) if isinstance(node, dict) else {}
        if node == {}:
            return ""  # e.g. no rent override: the catalog's price per GPU type applies
        if isinstance(node, dict) and {"start", "stop"} <= set(node):  # a range: show its values
            return ", ".join(str(v) for v in self.scenario.gpu_counts)
        if isinstance(node, list):

            def item(v: Any) -> str:
                if isinstance(v, dict):
                    over = v.get("oversubscription")
                    return f"{v.get('name')}:{over:g}" if over is not None else str(v.get("name"))
                return str(v)

            return ", ".join(item(v) for v in node)
        return str(node)

    def _columns(self) -> list[tuple[str, str]]:
        groups = [g for g in self.scenario.space["group_by"] if g not in dict(TABLE_COLUMNS)]
        return [(g, g) for g in groups] + TABLE_COLUMNS

    # ------------------------------------------------------------------ sweep
    def start_sweep(self) -> None:
        self.query_one("#status", Static).update(
            f"sweeping {self.scenario.name}: {self.scenario.size():,} configurations"
        )
        self.sweep_worker(self.scenario)

    @work(thread=True, exclusive=True, group="sweep")
    def sweep_worker(self, scenario: Scenario) -> None:
        worker = get_current_worker()

        def progress(p: Progress) -> None:
            if worker.is_cancelled:
                raise KeyboardInterrupt  # run_sweep cancels the engine and re-raises
            self.call_from_thread(self._show_progress, p)

        try:
            result = run_sweep(scenario, on_progress=progress, poll_s=0.05)
        except KeyboardInterrupt:
            self.call_from_thread(self._set_status, "sweep cancelled; press r to run it again")
            return
        except ScalefrontError as err:
            self.call_from_thread(self._set_status, f"error: {message_of(err)}")
            return
        self.call_from_thread(self._show_result, result)

    def _set_status(self, text: str) -> None:
        self.query_one("#status", Static).update(text)

    def _show_progress(self, p: Progress) -> None:
        share = p.done / p.total if p.total else 1.0
        eta = f"ETA {p.eta_s:.0f}s" if p.eta_s is not None and p.done < p.total else ""
        top = sorted(p.rejected.items(), key=lambda kv: -kv[1])[:2]
        rejected = ", ".join(f"{k} {v:,}" for k, v in top)
        self._set_status(
            f"sweeping: {p.done:,}/{p.total:,} ({share:.0%}) {p.rate / 1e6:.1f}M/s {eta}  "
            f"feasible {p.feasible:,}" + (f"; infeasible: {rejected}" if rejected else "") + "  (Esc cancels)"
        )

    def _show_result(self, result: SweepResult) -> None:
        self.result = result
        self.frontier = result.frontier()
        rejected = ", ".join(f"{k} {v:,}" for k, v in sorted(result.rejected.items(), key=lambda kv: -kv[1])[:3])
        self._set_status(
            f"{result.evaluated:,} configurations in {result.wall_s:.2f}s, {result.feasible:,} feasible; "
            f"rejected: {rejected or 'none'}"
        )
        self.marked = []
        self._fill_table(self.frontier)
        self._draw_chart()
        if self.query_one(TabbedContent).active == "frontier":  # never pull the user away from another tab
            self.query_one("#frontier-table", DataTable).focus()
        self.sweeps_finished += 1

    # ------------------------------------------------------------------ frontier
    def _fill_table(self, frame: pl.DataFrame) -> None:
        self.shown = frame
        table = self.query_one("#frontier-table", DataTable)
        table.clear()
        cols = [c for c, _ in self._columns()]
        for i, row in enumerate(frame.select(cols).iter_rows()):
            table.add_row(*[_fmt(v) for v in row], key=str(i))

    def _draw_chart(self, selected: int | None = None) -> None:
        charts = self.query("#chart").results(PlotextPlot)
        chart = next(charts, None)
        if chart is None:  # the app is closing
            return
        plt = chart.plt
        plt.clear_data()
        plt.clear_figure()
        plt.title("cost vs time to train, per " + ", ".join(self.scenario.space["group_by"]))
        plt.xlabel("days")
        plt.ylabel("M$")
        if not self.frontier.is_empty():
            groups = self.scenario.space["group_by"]
            for key, part in self.frontier.group_by(groups, maintain_order=True):
                part = part.sort("time_to_train_days")
                label = "/".join(str(k) for k in (key if isinstance(key, tuple) else (key,)))
                plt.plot(
                    part["time_to_train_days"].to_list(),
                    (part["cost_to_train_usd"] / 1e6).to_list(),
                    label=label,
                    marker="braille",
                )
            if selected is not None and 0 <= selected < self.shown.height:
                row = self.shown.row(selected, named=True)
                plt.scatter(
                    [row["time_to_train_days"]],
                    [row["cost_to_train_usd"] / 1e6],
                    marker="●",
                    color="red",
                    label="selected",
                )
        chart.refresh()

    @on(DataTable.RowHighlighted, "#frontier-table")
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is not None and event.row_key.value is not None:
            self._draw_chart(int(event.row_key.value))

    @on(DataTable.RowSelected, "#frontier-table")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self._show_detail([int(event.row_key.value)])
            self.action_tab("detail")

    @on(Input.Submitted, "#filter")
    def _filter(self, event: Input.Submitted) -> None:
        try:
            frame = apply_filter(self.frontier, event.value)
        except ValueError as err:
            event.input.add_class("invalid")
            self._set_status(f"filter: {err}")
            return
        event.input.remove_class("invalid")
        self._fill_table(frame)
        self._set_status(f"{frame.height} of {self.frontier.height} frontier rows")

    #: What `s` sorts by, in turn (MFU best first).
    SORT_KEYS = [("time_to_train_days", False), ("cost_to_train_usd", False), ("mfu", True), ("gpus", False)]

    def action_sort(self) -> None:
        if self.shown.is_empty():
            return
        self.sort_index = (getattr(self, "sort_index", -1) + 1) % len(self.SORT_KEYS)
        column, descending = self.SORT_KEYS[self.sort_index]
        self._fill_table(self.shown.sort(column, descending=descending))
        self._set_status(f"sorted by {column} ({'descending' if descending else 'ascending'}); s: next key")

    def action_focus_filter(self) -> None:
        self.action_tab("frontier")
        self.query_one("#filter", Input).focus()

    def action_mark(self) -> None:
        table = self.query_one("#frontier-table", DataTable)
        if self.shown.is_empty():
            return
        row = self.shown.row(table.cursor_row, named=True)
        self.marked = ([*self.marked, row])[-2:]
        names = " and ".join(f"{r['fabric']} {r['gpus']:,} x {r['gpu']}" for r in self.marked)
        self._set_status(f"marked {names}; the Detail tab compares them")
        self._show_rows(self.marked)

    # ------------------------------------------------------------------ detail
    def _show_detail(self, rows: Iterable[int]) -> None:
        self._show_rows([self.shown.row(r, named=True) for r in rows if 0 <= r < self.shown.height])

    def _show_rows(self, picks: list[dict[str, Any]]) -> None:
        if not picks:
            return
        table = Table(expand=True, show_lines=False)
        table.add_column("")
        for p in picks:
            table.add_column(f"{p['fabric']} {p['gpus']:,} x {p['gpu']}, tp {p['tp']} pp {p['pp']} dp {p['dp']}")

        def line(label: str, fn) -> None:
            table.add_row(label, *[fn(p) for p in picks])

        line("layout", lambda p: f"tp {p['tp']} pp {p['pp']} (vpp {p['vpp']}) dp {p['dp']} cp {p['cp']} ep {p['ep']}")
        line("settings", lambda p: f"mb {p['micro_batch']}, ZeRO-{p['zero']}, {p['recompute']}, overlap {p['overlap']}")
        line(
            "step time",
            lambda p: (
                f"{p['step_time_s']:.3f} s ({p['interval']:.0%}: {p['step_time_s_lo']:.2f}-"
                f"{p['step_time_s_hi']:.2f})   MFU {p['mfu']:.1%}"
            ),
        )
        for key, label in BREAKDOWN:
            line(f"  {label}", lambda p, key=key: Text(f"{p[key]:8.3f} s {_bar(p[key] / p['step_time_s'])}"))

        def memory(p) -> Text:
            hbm = self.catalog.gpu(p["gpu"]).hbm_gb
            return Text(f"{p['memory_per_gpu_gb']:.1f} of {hbm:.0f} GB {_bar(p['memory_per_gpu_gb'] / hbm)}")

        line("memory per GPU", memory)

        def network(p) -> str:
            b = bom(
                p["gpus"],
                p["fabric"],
                p["topology"],
                oversubscription=p["oversubscription"],
                gpu=p["gpu"],
                catalog=self.catalog,
            )
            tiers = "+".join(f"{n:,.0f}" for n in b["switches_by_tier"])
            return (
                f"{b['nics']:,.0f} NICs, {tiers} switches, {b['cables']:,.0f} cables, "
                f"${b['network_capex_usd'] / 1e6:,.1f}M, {b['network_power_w'] / 1e3:,.0f} kW"
            )

        line("network", network)
        line(
            "time to train",
            lambda p: (
                f"{p['time_to_train_days']:.2f} days ({p['time_to_train_days_lo']:.1f}-"
                f"{p['time_to_train_days_hi']:.1f}; goodput {p['goodput']:.1%})"
            ),
        )
        line(
            "cost to train",
            lambda p: (
                f"${p['cost_to_train_usd']:,.0f} (${p['cost_to_train_usd_lo'] / 1e6:,.1f}M-"
                f"${p['cost_to_train_usd_hi'] / 1e6:,.1f}M, {p['cost_mode']}); own ${p['cost_own_usd']:,.0f}"
            ),
        )
        line("capex", lambda p: f"${p['capex_usd'] / 1e6:,.1f}M (network ${p['network_capex_usd'] / 1e6:,.1f}M)")
        self.query_one("#detail-body", Static).update(table)

    # ------------------------------------------------------------------ ROI
    @on(Input.Submitted, "#roi-price")
    def _roi_submitted(self, event: Input.Submitted) -> None:
        try:
            factor = float(event.value)
            if not factor > 0:
                raise ValueError
        except ValueError:
            event.input.add_class("invalid")
            self.query_one("#roi-body", Static).update("the price multiplier must be a positive number")
            return
        event.input.remove_class("invalid")
        a = self.query_one("#roi-a", Select).value
        b = self.query_one("#roi-b", Select).value
        if a == b:
            self.query_one("#roi-body", Static).update("choose two different fabrics")
            return
        self.query_one("#roi-body", Static).update(f"comparing {a} and {b}...")
        self.roi_worker(str(a), str(b), factor)

    @work(thread=True, exclusive=True, group="roi")
    def roi_worker(self, a: str, b: str, factor: float) -> None:
        from scalefront.roi import _scaled, roi

        catalog = _scaled(self.catalog, a, b, "network price (A)", factor) if factor != 1.0 else self.catalog
        try:
            result = roi((self.current_raw, self.file), a, b, catalog=catalog, sensitivity=False)
        except ScalefrontError as err:
            self.call_from_thread(self.query_one("#roi-body", Static).update, f"error: {message_of(err)}")
            return
        self.call_from_thread(self._show_roi, result)

    def _show_roi(self, result) -> None:
        a, b = result.fabric_a, result.fabric_b
        table = self.query_one("#roi-table", DataTable)
        table.clear(columns=True)
        table.add_columns(
            "GPUs",
            f"days {a}",
            f"days {b}",
            f"cost {a}",
            f"cost {b}",
            f"network {a}",
            f"network {b}",
            "break-even",
            "payback d",
        )
        for row in result.table.iter_rows(named=True):
            payback = row["payback_days"]
            table.add_row(
                f"{row['gpus']:,}",
                f"{row[f'time_to_train_days_{a}']:.2f}",
                f"{row[f'time_to_train_days_{b}']:.2f}",
                f"{row[f'cost_to_train_usd_{a}']:,.0f}",
                f"{row[f'cost_to_train_usd_{b}']:,.0f}",
                f"{row[f'network_capex_usd_{a}']:,.0f}",
                f"{row[f'network_capex_usd_{b}']:,.0f}",
                f"{row['break_even_premium']:.2f}x",
                "never" if payback == float("inf") else f"{payback:,.0f}",
            )
        self.query_one("#roi-body", Static).update(
            f"break-even: the price of {a}'s network relative to {b}'s at which both cost the same to train"
        )

    # ------------------------------------------------------------------ scenario form
    @on(Input.Changed, "#scenario-form Input")
    def _validate_field(self, event: Input.Changed) -> None:
        kind = next(k for fid, _, _, k in FORM if fid == event.input.id)
        error = self.query_one("#form-error", Static)
        try:
            value = _parse_field(kind, event.value)
            if event.input.id == "f-model" and not str(value).endswith(".toml"):
                self.catalog.model(value)
            for item in value if isinstance(value, list) and kind in ("list", "topologies") else []:
                lookup = {
                    "f-gpu": self.catalog.gpu,
                    "f-fabric": self.catalog.fabric,
                    "f-topology": self.catalog.topology,
                }[event.input.id]
                lookup(item["name"] if isinstance(item, dict) else item)
        except (ValueError, CatalogError) as err:
            event.input.add_class("invalid")
            error.update(f"{event.input.id.removeprefix('f-')}: {message_of(err) or 'invalid'}")
            return
        event.input.remove_class("invalid")
        error.update("")

    def _scenario_from_form(self) -> Scenario:
        raw = copy.deepcopy(self.raw)
        for field_id, _, path, kind in FORM:
            widget = self.query_one(f"#{field_id}", Input)
            if widget.has_class("invalid"):
                raise ValueError(f"{field_id.removeprefix('f-')} is invalid")
            value = _parse_field(kind, widget.value)
            node = raw
            for key in path[:-1]:
                node = node.setdefault(key, {})
            if value is None:
                node.pop(path[-1], None)
            else:
                node[path[-1]] = value
        scenario = build_scenario(raw, f"{self.file} (edited)", self.catalog)
        self.current_raw = raw
        return scenario

    # ------------------------------------------------------------------ actions
    def action_rerun(self) -> None:
        try:
            self.scenario = self._scenario_from_form()
        except (ValueError, ScalefrontError) as err:
            self.query_one("#form-error", Static).update(f"not re-run: {message_of(err)}")
            self.action_tab("scenario")
            return
        self.action_tab("frontier")
        self.start_sweep()

    def action_cancel_sweep(self) -> None:
        self.workers.cancel_group(self, "sweep")

    def action_export(self) -> None:
        if self.shown.is_empty():
            self.notify("nothing to export yet", severity="warning")
            return
        self.push_screen(ExportScreen(self.shown))

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_toggle_theme(self) -> None:
        self.theme = "textual-light" if self.theme == "textual-dark" else "textual-dark"

    #: Where focus goes on each tab (TabbedContent follows focus, so it must move into the new pane).
    TAB_FOCUS = {"frontier": "#frontier-table", "detail": "#detail-scroll", "roi": "#roi-price", "scenario": "#f-model"}

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab
        self.query_one(self.TAB_FOCUS[tab]).focus()

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Re-run sweep", "Sweep the scenario again with the form's values", self.action_rerun)
        yield SystemCommand("Export frontier", "Write the shown frontier to CSV or Parquet", self.action_export)
        yield SystemCommand("Compare fabrics (ROI)", "Open the ROI tab", lambda: self.action_tab("roi"))
        yield SystemCommand("Toggle light/dark", "Switch the theme", self.action_toggle_theme)


def run(scenario: str = DEFAULT_SCENARIO) -> None:
    """Open the app on a scenario (built-in id or file)."""
    ScalefrontApp(scenario).run()
