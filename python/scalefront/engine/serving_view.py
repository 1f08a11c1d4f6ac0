"""A serving frontier for a front end: the serving sweep a training scenario implies
(:mod:`scalefront.inputs.scenario.serving_default`), run once, then held so that a front end's SLO fields refilter
it without a re-run where that gives the same frontier (an SLO on one of the frontier's objectives), and re-run it
otherwise (an SLO on another metric can admit layouts the unconstrained frontier dropped)."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from scalefront._core import serve_axes
from scalefront.engine.serving import ServingFrontier, run_serving_sweep
from scalefront.inputs.catalog.loader import Catalog
from scalefront.inputs.scenario.build import Scenario
from scalefront.inputs.scenario.serving import ServingScenario
from scalefront.inputs.scenario.serving_default import default_serving_scenario, serving_toml
from scalefront.inputs.serving import serving_inputs
from scalefront.schema import SERVING_METRICS
from scalefront.table import ColumnSpec, column_spec

__all__ = ["SERVING_COLUMNS", "SERVING_DETAIL", "SERVING_SLOS", "ServingSweep", "ServingView", "serving_columns"]

#: The SLOs a front end offers as fields: an upper bound on each.
SERVING_SLOS = ("tpot_s", "ttft_s")
Slo = tuple[str, str, float]


@dataclass(frozen=True)
class ServingView:
    """The frontier points of every fabric under `slos` (one row each: ``fabric``, the swept values, ``layout``,
    every serving metric), fabrics in the scenario's order, the most tokens/s per GPU first within each, as
    ``scalefront inference --scenario`` prints them; `message` says why it is empty."""

    frame: pl.DataFrame
    slos: tuple[Slo, ...]
    evaluated: int
    over_slo: int
    rejected: int
    #: Whether these SLOs needed a new sweep (False: the held frontier was refiltered).
    rerun: bool

    @property
    def message(self) -> str:
        if not self.frame.is_empty():
            return ""
        bounds = ", ".join(f"{column_spec(n).label} {op} {column_spec(n).format(v)}" for n, op, v in self.slos)
        return (
            f"No serving layout meets {bounds}: {self.evaluated:,} possible layouts evaluated, {self.over_slo:,} "
            f"over the SLOs, {self.rejected:,} impossible. Loosen an SLO (empty field: no bound)."
        )


def _frame(frontiers: list[ServingFrontier], slos: list[Slo]) -> pl.DataFrame:
    names = ["fabric", *serve_axes(), "layout", *(m.name for m in SERVING_METRICS)]
    rows = []
    for f in frontiers:
        kept = [p for p in f.points if all(p[n] <= v if op == "<=" else p[n] >= v for n, op, v in slos)]
        for p in sorted(kept, key=lambda p: -p["output_tokens_per_s_per_gpu"]):
            rows.append({**p, "fabric": f.cluster["fabric"], "layout": _layout(p)})
    return pl.DataFrame([{n: r[n] for n in names} for r in rows]) if rows else pl.DataFrame()


def _layout(p: dict[str, object]) -> str:
    text = f"tp{p['tp']} pp{p['pp']}" + (f" ep{p['ep']}" if p["ep"] != 1 else "")
    return text + (" disagg" if p["mode"] == "disaggregated" else "")


#: What a serving frontier table shows, in order (the rest is the selected layout's detail).
SERVING_COLUMNS = (
    "fabric",
    "layout",
    "concurrent_sequences",
    "ttft_s",
    "tpot_s",
    "output_tokens_per_s_per_gpu",
    "cost_usd_per_million_tokens",
)
#: The selected layout's detail, in order.
SERVING_DETAIL = (
    "ttft_s",
    "ttft_p99_s",
    "tpot_s",
    "output_tokens_per_s_per_gpu",
    "cost_usd_per_million_tokens",
    "concurrent_sequences",
    "max_batch",
    "kv_cache_bytes",
    "weights_bytes",
    "instances",
    "instance_gpus",
    "requests_per_s",
)


def serving_columns(names: tuple[str, ...] = SERVING_COLUMNS) -> list[ColumnSpec]:
    """How to show serving columns (label, unit, format, meaning), from the schema's serving metrics."""
    layout = ColumnSpec("layout", "layout", "", "text", "serving layout: tp, pp, ep; disaggregated or not", "derived")
    return [layout if n == "layout" else column_spec(n) for n in names]


class ServingSweep:
    """The serving sweep of a training scenario's model (the default workload, see ``serving_default``)."""

    def __init__(self, scenario: Scenario, cost_mode: str = "rent", catalog: Catalog | None = None) -> None:
        self.scenario: ServingScenario = default_serving_scenario(scenario, cost_mode)
        self._catalog = catalog
        self._free: list[ServingFrontier] | None = None

    def describe(self) -> str:
        """The model, cluster and workload served, in a line."""
        i = serving_inputs(self.scenario.fixed)
        return (
            f"{i['model']} on {i['gpus']} x {i['gpu']}, {i['input_tokens']:,.0f} tokens in, "
            f"{i['output_tokens']:,.0f} out, {i['quantization']}"
        )

    def toml(self, slos: list[Slo] | None = None) -> str:
        """The sweep as a serving scenario file, with `slos` in its ``[slo]`` table."""
        s = self.scenario
        return serving_toml(ServingScenario(s.fixed, s.clusters, s.axes, s.objectives, list(slos or [])))

    def view(self, slos: list[Slo] | None = None) -> ServingView:
        """The frontiers under `slos` (bounds on serving metrics): the held unconstrained frontier refiltered when
        every bound is on an objective, else a new sweep with them."""
        slos = list(slos or [])
        if self._free is None:
            self._free = run_serving_sweep(self.scenario, self._catalog)
        if all(n in self.scenario.objectives for n, _, _ in slos):
            frontiers, kept, rerun = self._free, slos, False
        else:
            frontiers, kept, rerun = run_serving_sweep(self.scenario, self._catalog, slos), [], True
        frame = _frame(frontiers, kept)
        if kept and frame.is_empty():  # the counts of an empty frontier come from a sweep with the SLOs
            frontiers, rerun = run_serving_sweep(self.scenario, self._catalog, slos), True
        evaluated, over = sum(f.evaluated for f in frontiers), sum(f.over_slo for f in frontiers)
        return ServingView(frame, tuple(slos), evaluated, over, sum(f.rejected for f in frontiers), rerun)
