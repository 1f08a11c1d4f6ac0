"""The fabric comparison (:func:`scalefront.roi.roi`) behind a stable, documented face for interactive use:
what-if inputs (each fabric's network price, the GPU server price, rent, $/kWh, PUE, years, utilisation,
rent or own) applied as the scenario's own price overrides, a table with friendly columns for the chosen cost
mode only, a one-line verdict, and tornado bars when the comparison provides sensitivity data.

This module holds no formula: every figure comes from ``roi`` and the sweep. It stays thin so that a richer
``roi`` (its own verdict, a tornado with flip values) plugs in: a ``verdict`` or ``tornado`` the result carries
is used as given.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Any, Literal

import polars as pl

from scalefront.draft import ScenarioDraft
from scalefront.roi import RoiResult, roi
from scalefront.table import ColumnSpec
from scalefront.units import format_count, format_money, format_si

__all__ = ["NETWORK_PRICE_KEYS", "RoiView", "TornadoBar", "WhatIf", "compare_fabrics", "what_if_defaults"]

#: The fabric prices a network price multiplier scales (the parts; power figures stay).
NETWORK_PRICE_KEYS = ("nic_usd", "switch_usd", "transceiver_usd", "cable_usd")


@dataclass(frozen=True)
class WhatIf:
    """The inputs of a fabric comparison a buyer changes. ``None`` keeps the scenario's (or catalog's) figure."""

    fabric_a: str
    fabric_b: str
    #: own: capex amortised plus energy (break-even and payback apply); rent: GPU-hours at the rent price.
    mode: Literal["own", "rent"] = "own"
    #: Network part prices of each fabric, as a multiple of the catalog's (1.3 = a 30% dearer quote).
    network_price: dict[str, float] = field(default_factory=dict)
    #: Price of one GPU server (8 GPUs for HGX-class servers), USD, for every GPU type of the scenario.
    server_usd: float | None = None
    rent_usd_per_gpu_hour: float | None = None
    usd_per_kwh: float | None = None
    pue: float | None = None
    #: Amortisation period of the cluster, years.
    years: float | None = None
    #: Share of the cluster's life it is busy (1 = always): capex is amortised over utilisation x years, the
    #: convention of `scalefront roi`'s utilisation sensitivity.
    utilisation: float = 1.0


def what_if_defaults(draft: ScenarioDraft, fabric_a: str, fabric_b: str) -> WhatIf:
    """The what-if inputs as the scenario and catalog have them (to show in a form)."""
    econ = draft.scenario.space["economics"]
    gpu = draft.scenario.gpu_names[0]
    prices = draft.price_overrides(gpu, "")
    gpu_price = draft.catalog.gpu_price(gpu)
    return WhatIf(
        fabric_a,
        fabric_b,
        mode="own",
        network_price={fabric_a: 1.0, fabric_b: 1.0},
        server_usd=prices.get("server_usd", gpu_price.server_usd),
        rent_usd_per_gpu_hour=prices.get("rent_usd_per_gpu_hour", gpu_price.rent_usd_per_gpu_hour),
        usd_per_kwh=float(econ["usd_per_kwh"]),
        pue=float(econ["pue"]),
        years=float(econ["amortization_years"]),
        utilisation=1.0,
    )


def _raw_with(draft: ScenarioDraft, w: WhatIf) -> dict[str, Any]:
    """The scenario with the what-ifs written as its own price overrides (so the sweep and roi see them)."""
    raw = copy.deepcopy(draft.raw)
    econ = raw.setdefault("economics", {})
    econ["mode"] = w.mode
    prices = econ.setdefault("prices", {})
    for fabric, factor in w.network_price.items():
        if factor == 1.0:
            continue
        table = prices.setdefault(fabric, {})
        base = draft.catalog.fabric_price(fabric).model_dump()
        for key in NETWORK_PRICE_KEYS:
            table[key] = float(table.get(key, prices.get(key, base[key]))) * factor
    per_gpu = {"server_usd": w.server_usd, "rent_usd_per_gpu_hour": w.rent_usd_per_gpu_hour}
    for gpu in draft.scenario.gpu_names:
        for key, value in per_gpu.items():
            if value is not None:
                prices.setdefault(gpu, {})[key] = float(value)
    years = w.years if w.years is not None else float(draft.scenario.space["economics"]["amortization_years"])
    scalars = {"usd_per_kwh": w.usd_per_kwh, "pue": w.pue, "amortization_years": years * w.utilisation}
    for key, value in scalars.items():
        if value is not None:
            prices[key] = float(value)
    return raw


@dataclass(frozen=True)
class TornadoBar:
    """How the break-even premium at one GPU count moves when one input moves over its range."""

    input: str
    #: The input's change at each end ("-20%", or the range's low and high figures).
    low_label: str
    high_label: str
    #: The break-even premium at each end, and at the inputs as given.
    low: float
    high: float
    base: float
    #: Where the verdict flips, when the comparison knows (text such as "switch price < $18k").
    flips_at: str | None = None


@dataclass(frozen=True)
class RoiView:
    """A fabric comparison ready to show: ``table`` (one row per GPU count) with ``columns`` describing the ones to
    show for the chosen mode, a one-line ``verdict`` and, when available, ``tornado`` bars per GPU count."""

    what_if: WhatIf
    table: pl.DataFrame
    columns: list[ColumnSpec]
    verdict: str
    tornado: dict[int, list[TornadoBar]] | None
    result: RoiResult

    @property
    def fabric_a(self) -> str:
        return self.what_if.fabric_a

    @property
    def fabric_b(self) -> str:
        return self.what_if.fabric_b


def compare_fabrics(draft: ScenarioDraft, what_if: WhatIf, *, sensitivity: bool = False) -> RoiView:
    """Compare two fabrics over the draft's GPU counts with the what-if inputs applied. `sensitivity` also runs
    the comparison's sensitivity study (several more sweeps), which fills :attr:`RoiView.tornado`."""
    raw = _raw_with(draft, what_if)
    result = roi((raw, draft.file), what_if.fabric_a, what_if.fabric_b, catalog=draft.catalog, sensitivity=sensitivity)
    table = _table(result, what_if)
    verdict = getattr(result, "verdict", None)
    return RoiView(
        what_if=what_if,
        table=table,
        columns=_columns(what_if),
        verdict=verdict if isinstance(verdict, str) else _verdict(table, what_if),
        tornado=_tornado(result),
        result=result,
    )


def _table(result: RoiResult, w: WhatIf) -> pl.DataFrame:
    """roi's table with the mode's cost as `cost_<A>`/`cost_<B>` (own mode: roi's own-cost columns)."""
    a, b = w.fabric_a, w.fabric_b
    source = "cost_own_usd" if w.mode == "own" else "cost_to_train_usd"
    return result.table.with_columns(
        pl.col(f"{source}_{a}").alias(f"cost_{a}"),
        pl.col(f"{source}_{b}").alias(f"cost_{b}"),
        (pl.col(f"{source}_{b}") - pl.col(f"{source}_{a}")).alias("saving_b_minus_a"),
    )


def _columns(w: WhatIf) -> list[ColumnSpec]:
    a, b = w.fabric_a, w.fabric_b
    mode = "own" if w.mode == "own" else "rent"
    cols = [
        ColumnSpec("gpus", "GPUs", "", "count", "GPU count", "input"),
        ColumnSpec(f"time_to_train_days_{a}", f"days {a}", "days", "float", f"time to train on {a}", "run"),
        ColumnSpec(f"time_to_train_days_{b}", f"days {b}", "days", "float", f"time to train on {b}", "run"),
        ColumnSpec(f"cost_{a}", f"{mode} {a}", "USD", "float", f"cost of the run on {a} ({mode})", "run"),
        ColumnSpec(f"cost_{b}", f"{mode} {b}", "USD", "float", f"cost of the run on {b} ({mode})", "run"),
        ColumnSpec("saving_b_minus_a", f"{a} saves", "USD", "float", f"cost on {b} minus cost on {a}", "run"),
    ]
    if w.mode == "own":
        cols += [
            ColumnSpec(
                "break_even_premium",
                "break-even",
                "ratio",
                "float",
                f"the price of {a}'s network, relative to {b}'s, at which both cost the same to own for this run",
                "roi",
            ),
            ColumnSpec(
                "payback_days", "payback", "days", "float", f"days for {a}'s network premium to pay back", "roi"
            ),
        ]
    cols += [
        ColumnSpec(f"network_capex_usd_{a}", f"net {a}", "USD", "float", f"{a}'s network capex", "cluster"),
        ColumnSpec(f"network_capex_usd_{b}", f"net {b}", "USD", "float", f"{b}'s network capex", "cluster"),
    ]
    return cols


def _span(values: list[float], fmt: Any) -> str:
    lo, hi = fmt(min(values)), fmt(max(values))
    return lo if lo == hi else f"{lo}-{hi}"


def _runs(rows: list[dict[str, Any]], keep: list[bool]) -> str:
    """GPU counts of the kept rows, consecutive rows (in table order) joined: ``512, 2,048-16,384``."""
    parts: list[str] = []
    i = 0
    while i < len(rows):
        if not keep[i]:
            i += 1
            continue
        j = i
        while j + 1 < len(rows) and keep[j + 1]:
            j += 1
        first, last = format_count(rows[i]["gpus"]), format_count(rows[j]["gpus"])
        parts.append(first if i == j else f"{first}-{last}")
        i = j + 1
    return ", ".join(parts)


def _duration(days: float) -> str:
    """A time difference in the unit that reads best: ``1.2 days``, ``5.4 h``, ``12 min``."""
    if days >= 1:
        return f"{format_si(days)} days"
    if days * 24 >= 1:
        return f"{days * 24:.1f} h"
    return f"{days * 24 * 60:.0f} min"


def _verdict(table: pl.DataFrame, w: WhatIf) -> str:
    """One line: at which GPU counts A pays off (the run costs less in the chosen mode), by how much, and the
    speed difference."""
    a, b = w.fabric_a, w.fabric_b
    rows = list(table.iter_rows(named=True))
    if not rows:
        return f"no GPU count has a feasible configuration on both {a} and {b}"
    wins = [r["saving_b_minus_a"] > 0 for r in rows]
    saved = [r["time_saved_days"] for r in rows]
    if max(saved) > 0:
        speed = f"{a} finishes up to {_duration(max(saved))} sooner"
    else:
        speed = f"{b} finishes up to {_duration(-min(saved))} sooner"
    mode = "to own" if w.mode == "own" else "renting"
    if all(wins):
        saves = _span([r["saving_b_minus_a"] for r in rows], format_money)
        return f"{a} pays off over {b} {mode} at every GPU count, saving {saves} a run; {speed}"
    if not any(wins):
        extra = _span([-r["saving_b_minus_a"] for r in rows], format_money)
        tail = ""
        if w.mode == "own":
            finite = [r["break_even_premium"] for r in rows if math.isfinite(r["break_even_premium"])]
            if finite:
                tail = f" (it would at {_span(finite, lambda x: f'{x:.2f}x')} {b}'s network price)"
        return f"{b} is cheaper than {a} {mode} at every GPU count: {a} costs {extra} more a run{tail}; {speed}"
    won, lost = _runs(rows, wins), _runs(rows, [not x for x in wins])
    if won.count(",") + lost.count(",") > 3:  # many alternations: counts read better than lists
        n = sum(wins)
        return f"{a} pays off {mode} at {n} of {len(rows)} GPU counts, {b} at the other {len(rows) - n}; {speed}"
    return f"{a} pays off {mode} at {won} GPUs, {b} at {lost}; {speed}"


def _tornado(result: RoiResult) -> dict[int, list[TornadoBar]] | None:
    """Tornado bars per GPU count: the comparison's own `tornado` when it has one (a frame with gpus, input,
    low, high, base and optionally low_label, high_label, flips_at), else its +/- sensitivity table."""
    own = getattr(result, "tornado", None)
    if isinstance(own, pl.DataFrame) and not own.is_empty():
        out: dict[int, list[TornadoBar]] = {}
        for r in own.iter_rows(named=True):
            out.setdefault(int(r["gpus"]), []).append(
                TornadoBar(
                    str(r["input"]),
                    str(r.get("low_label") or "low"),
                    str(r.get("high_label") or "high"),
                    float(r["low"]),
                    float(r["high"]),
                    float(r["base"]),
                    r.get("flips_at"),
                )
            )
        return out
    sens = result.sensitivity
    if sens.is_empty():
        return None
    base = dict(zip(result.table["gpus"].to_list(), result.table["break_even_premium"].to_list(), strict=True))
    bars: dict[int, list[TornadoBar]] = {}
    for gpus, value in base.items():
        col = f"gpus_{gpus}"
        if col not in sens.columns:
            continue
        for assumption in dict.fromkeys(sens["assumption"].to_list()):
            part = sens.filter(pl.col("assumption") == assumption).sort("change")
            changes, values = part["change"].to_list(), part[col].to_list()
            if len(values) != 2 or None in values:
                continue
            bars.setdefault(gpus, []).append(
                TornadoBar(assumption, f"{changes[0]:+.0%}", f"{changes[1]:+.0%}", values[0], values[1], value)
            )
    for gpus in bars:
        bars[gpus].sort(key=lambda t: -abs(t.high - t.low) if math.isfinite(t.high - t.low) else 0.0)
    return bars or None
