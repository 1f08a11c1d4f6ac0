"""Is fabric A (say InfiniBand) worth its premium over fabric B (say RoCE) for a scenario, and at what price
does the answer flip?

For every GPU count of the scenario, the fastest configuration on each fabric (from one sweep over both), then
in the own-the-cluster mode (capex amortised over its life, plus energy):

- run cost on fabric X: C_X = (S + N_X) T_X / L + E_X, with S the server capex, N_X the network capex, T_X the
  time to train, L the amortisation period, E_X the energy cost;
- **break-even premium**: the price of A's network, relative to B's, at which both cost the same to train the
  scenario's tokens: p* N_A / N_B with p* solving C_A(p* N_A) = C_B, i.e.
  p* = ((C_B - E_A) L / T_A - S) / N_A;
- **over the cluster's life**: the same ratio when the cluster trains for its whole life at each fabric's rate
  (cost per token equal): p_life = ((r_A / r_B)(S + N_B + P_B) - S - P_A) / N_A, P_X the life's energy cost;
- **payback period** of A's actual premium N_A - N_B: the days of the cluster's daily cost (amortisation and
  energy, on B) that A's extra throughput is worth, (N_A - N_B) / (daily cost x (r_A / r_B - 1)); infinite when A
  is not faster, zero when it is not dearer.

A sensitivity table moves each assumption by -20% and +20% (A's network prices, each fabric's efficiency,
network latency, the overlap fractions, the cluster's utilisation over its life) and reports how the
break-even premium moves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import polars as pl

from scalefront.catalog import Catalog
from scalefront.errors import UsageError
from scalefront.model import builtin_catalog
from scalefront.scenario import build_scenario, load_scenario
from scalefront.sweep import SweepResult, run_sweep

__all__ = ["ASSUMPTIONS", "SENSITIVITY_STEP", "RoiResult", "roi"]

SENSITIVITY_STEP = 0.2
#: The assumptions the sensitivity table moves.
ASSUMPTIONS = (
    "network price (A)",
    "fabric efficiency (A)",
    "fabric efficiency (B)",
    "network latency",
    "overlap",
    "utilisation",
)
SECONDS_PER_YEAR = 365.25 * 86400.0
SECONDS_PER_DAY = 86400.0


@dataclass(frozen=True)
class RoiResult:
    fabric_a: str
    fabric_b: str
    #: One row per GPU count (the roi.csv schema).
    table: pl.DataFrame
    #: One row per (assumption, change), the break-even premium per GPU count in columns `gpus_<n>`.
    sensitivity: pl.DataFrame
    #: The sweep rows the table was built from: the fastest configuration per (fabric, GPU count).
    best: pl.DataFrame
    #: The time-vs-cost Pareto frontier of each fabric over all GPU counts.
    frontier: pl.DataFrame


def _break_even(best: pl.DataFrame, a: str, b: str, economics: dict[str, float]) -> pl.DataFrame:
    life_s = economics["amortization_years"] * SECONDS_PER_YEAR
    usd_per_kwh = economics["usd_per_kwh"]
    rows = []
    for gpus in sorted(set(best["gpus"].to_list())):
        pick = {f: best.filter((pl.col("fabric") == f) & (pl.col("gpus") == gpus)) for f in (a, b)}
        if any(p.height == 0 for p in pick.values()):
            continue
        ra, rb = pick[a].row(0, named=True), pick[b].row(0, named=True)
        t_a, t_b = ra["time_to_train_s"], rb["time_to_train_s"]
        n_a, n_b = ra["network_capex_usd"], rb["network_capex_usd"]
        servers = ra["capex_usd"] - n_a
        e_a, e_b = ra["energy_mwh"] * 1000.0 * usd_per_kwh, rb["energy_mwh"] * 1000.0 * usd_per_kwh
        c_a = (servers + n_a) * t_a / life_s + e_a
        c_b = (servers + n_b) * t_b / life_s + e_b
        p_star = ((c_b - e_a) * life_s / t_a - servers) / n_a if n_a > 0 else math.inf
        # Over the life: rates r = tokens / time; energy over the life scales with it: P = E / T x L.
        rate_ratio = t_b / t_a
        p_life_a, p_life_b = e_a / t_a * life_s, e_b / t_b * life_s
        p_life = (rate_ratio * (servers + n_b + p_life_b) - servers - p_life_a) / n_a if n_a > 0 else math.inf
        daily_b = ((servers + n_b) / life_s + e_b / t_b) * SECONDS_PER_DAY
        premium_usd = n_a - n_b
        if premium_usd <= 0:
            payback = 0.0
        elif rate_ratio <= 1.0:
            payback = math.inf
        else:
            payback = premium_usd / (daily_b * (rate_ratio - 1.0))
        rows.append(
            {
                "gpus": gpus,
                "fabric_a": a,
                "fabric_b": b,
                f"time_to_train_days_{a}": ra["time_to_train_days"],
                f"time_to_train_days_{b}": rb["time_to_train_days"],
                f"cost_to_train_usd_{a}": ra["cost_to_train_usd"],
                f"cost_to_train_usd_{b}": rb["cost_to_train_usd"],
                f"cost_own_usd_{a}": c_a,
                f"cost_own_usd_{b}": c_b,
                f"network_capex_usd_{a}": n_a,
                f"network_capex_usd_{b}": n_b,
                "time_saved_days": rb["time_to_train_days"] - ra["time_to_train_days"],
                "cost_difference_usd": ra["cost_to_train_usd"] - rb["cost_to_train_usd"],
                "network_premium_usd": premium_usd,
                "break_even_premium": p_star * n_a / n_b if n_b > 0 else math.inf,
                "break_even_premium_life": p_life * n_a / n_b if n_b > 0 else math.inf,
                "payback_days": payback,
            }
        )
    return pl.DataFrame(rows)


def _scaled(catalog: Catalog, a: str, b: str, assumption: str, factor: float) -> Catalog:
    """A copy of the catalog with one assumption scaled by `factor`."""

    def fabric(name: str, **scale: str) -> dict[str, Any]:
        entry = catalog.fabrics[name]
        return {
            name: entry.model_copy(
                update={
                    k: min(1.0, getattr(entry, k) * factor) if v == "fraction" else getattr(entry, k) * factor
                    for k, v in scale.items()
                }
            )
        }

    if assumption == "network price (A)":
        price = catalog.fabric_prices[a]
        keys = ("nic_usd", "switch_usd", "transceiver_usd", "cable_usd")
        new = price.model_copy(update={k: getattr(price, k) * factor for k in keys})
        return replace(catalog, fabric_prices={**catalog.fabric_prices, a: new})
    if assumption == "fabric efficiency (A)":
        return replace(catalog, fabrics={**catalog.fabrics, **fabric(a, efficiency="fraction")})
    if assumption == "fabric efficiency (B)":
        return replace(catalog, fabrics={**catalog.fabrics, **fabric(b, efficiency="fraction")})
    if assumption == "network latency":
        fabrics = dict(catalog.fabrics)
        for name in (a, b):
            fabrics.update(fabric(name, nic_latency_us="plain", switch_hop_latency_us="plain"))
        return replace(catalog, fabrics=fabrics)
    if assumption == "utilisation":
        # A cluster busy a fraction u of its life amortises its capex over u x the period.
        econ = catalog.economics_or_error()
        return replace(
            catalog, economics=econ.model_copy(update={"amortization_years": econ.amortization_years * factor})
        )
    return catalog


def _sweep(
    scenario_source: str | tuple[dict[str, Any], str], catalog: Catalog, a: str, b: str, overlap_factor: float = 1.0
) -> tuple[SweepResult, dict[str, Any]]:
    overrides: dict[str, Any] = dict(
        fabrics=[a, b],
        overlap_scale=overlap_factor,
        group_by=["fabric"],
        objectives=["time_to_train_days", "cost_to_train_usd"],
    )
    if isinstance(scenario_source, tuple):  # an already parsed (and perhaps edited) scenario
        raw, file = scenario_source
        scenario = build_scenario(raw, file, catalog, **overrides)
    else:
        scenario = load_scenario(scenario_source, catalog, **overrides)
    return run_sweep(scenario), scenario.space["economics"]


def _best(
    scenario_source: str | tuple[dict[str, Any], str], catalog: Catalog, a: str, b: str, overlap_factor: float = 1.0
) -> tuple[pl.DataFrame, dict[str, Any]]:
    result, economics = _sweep(scenario_source, catalog, a, b, overlap_factor)
    return result.best_per_fabric_and_size(), economics


def roi(
    scenario: str | tuple[dict[str, Any], str],
    fabric_a: str = "ib-ndr",
    fabric_b: str = "roce-400g",
    *,
    catalog: Catalog | None = None,
    sensitivity: bool = True,
) -> RoiResult:
    """Compare two fabrics over a scenario's GPU counts (see the module doc for every formula)."""
    if fabric_a == fabric_b:
        raise UsageError(f"--a and --b are the same fabric ({fabric_a}); compare two different fabrics")
    cat = catalog or builtin_catalog()
    for name in (fabric_a, fabric_b):
        cat.fabric(name)  # unknown names get their suggestion first
    for name in (fabric_a, fabric_b):
        cat.fabric_price(name)
    swept, economics = _sweep(scenario, cat, fabric_a, fabric_b)
    best = swept.best_per_fabric_and_size()
    table = _break_even(best, fabric_a, fabric_b, economics)
    if table.is_empty():
        raise UsageError(f"{scenario}: no GPU count has a feasible configuration on both {fabric_a} and {fabric_b}")
    rows = []
    if sensitivity:
        for assumption in ASSUMPTIONS:
            for change in (-SENSITIVITY_STEP, SENSITIVITY_STEP):
                factor = 1.0 + change
                if assumption == "overlap":
                    moved, econ = _best(scenario, cat, fabric_a, fabric_b, overlap_factor=factor)
                else:
                    moved, econ = _best(
                        scenario, _scaled(cat, fabric_a, fabric_b, assumption, factor), fabric_a, fabric_b
                    )
                t = _break_even(moved, fabric_a, fabric_b, econ)
                row: dict[str, Any] = {"assumption": assumption, "change": change}
                for gpus, value in zip(t["gpus"].to_list(), t["break_even_premium"].to_list(), strict=True):
                    row[f"gpus_{gpus}"] = value
                rows.append(row)
    return RoiResult(fabric_a, fabric_b, table, pl.DataFrame(rows), best, swept.frontier())
