"""The fabric comparison (:func:`scalefront.roi.compare.compare`) behind a stable, documented face for interactive use:
what-if inputs (A's network quote over B's, the GPU server price, rent, $/kWh, PUE, years, utilisation, rent or
own), a table with friendly columns for the chosen cost mode, the comparison's own verdict sentence (at any of its
GPU counts), and the tornado bars with flip values.

A what-if keeps the figure's uncertainty: a quote sets A's fabric cost to a multiple of B's in every Monte Carlo
sample (the CLI's ``--premium``), and a changed price moves the catalog's whole ``{ low, typical, high }`` range with
it (scaled, within the figure's bounds), so the comparison is continuous and monotone in every what-if and equals
a fresh comparison with those figures in the catalog (review D2). A what-if of price (the quote, server price,
rent, $/kWh, PUE, years, utilisation, rent or own) re-prices the comparison kept from the last run of the same
scenario and fabrics (`scalefront.roi.repricing`: no new sweep or Monte Carlo of step times, the same numbers);
a change of fabric, scenario or sample count compares afresh.

This module holds no formula: every figure comes from ``compare`` (the Rust core) and the sweep.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
from dataclasses import dataclass
from typing import Any

import polars as pl

from scalefront._enums import CostMode
from scalefront.inputs.catalog.entries import Entry, Range
from scalefront.inputs.catalog.figures import figure
from scalefront.inputs.catalog.loader import Catalog
from scalefront.inputs.scenario.draft import ScenarioDraft
from scalefront.roi.compare import cat_digest
from scalefront.roi.repricing import compare_kept
from scalefront.roi.result import RoiOptions, RoiResult
from scalefront.roi.text import value_text, verdict
from scalefront.roi.words import past
from scalefront.table import ColumnSpec

__all__ = [
    "INTERACTIVE_SAMPLES",
    "RoiView",
    "TornadoBar",
    "WhatIf",
    "compare_fabrics",
    "fabric_choices",
    "verdict_at",
    "what_if_defaults",
]

#: Monte Carlo samples of an interactive comparison (the verdict's probabilities).
INTERACTIVE_SAMPLES = 2000


@dataclass(frozen=True)
class WhatIf:
    """The inputs of a fabric comparison a buyer changes. ``None`` keeps the scenario's (or catalog's) figure."""

    fabric_a: str
    fabric_b: str
    #: own: total cost of ownership (break-even, NPV and payback apply); rent: GPU-hours at the rent price.
    mode: CostMode = "own"
    #: A's fabric cost as a multiple of B's, the CLI's ``roi --premium`` (1.3: A is quoted 30% over B), applied to
    #: every Monte Carlo sample of B's cost; None: each fabric at its catalog prices.
    premium: float | None = None
    #: Price of one GPU server (8 GPUs for HGX-class servers), USD, for every GPU type of the scenario. Each figure
    #: below moves its catalog range with it (None: the scenario's or catalog's figure).
    server_usd: float | None = None
    rent_usd_per_gpu_hour: float | None = None
    usd_per_kwh: float | None = None
    pue: float | None = None
    #: The cluster's life, years.
    years: float | None = None
    #: Share of the hours the cluster has work (a faster fabric turns only these into more work); None: the
    #: catalog's.
    utilisation: float | None = None


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
        server_usd=prices.get("server_usd", gpu_price.server_usd),
        rent_usd_per_gpu_hour=prices.get("rent_usd_per_gpu_hour", gpu_price.rent_usd_per_gpu_hour),
        usd_per_kwh=float(econ["usd_per_kwh"]),
        pue=float(econ["pue"]),
        years=float(econ["amortization_years"]),
        utilisation=float(econ["utilisation"]),
    )


def fabric_choices(draft: ScenarioDraft) -> list[str]:
    """The fabrics a comparison can own: every catalog fabric id with a price of its own, sorted; fabrics sold only
    inside instance rent cannot be owned. Operating modes (`FABRIC@MODE`, issue 19) belong here as the catalog
    lists them, its ids in every mode, and so do its price variants in every mode (`roce-400g@tuned@branded`),
    after their fabric's own modes: sorted by price entry, then id."""
    cat = draft.catalog
    ids = cat.fabric_ids() + cat.price_variant_ids()
    owned = [f for f in ids if f.partition("@")[0] in cat.fabric_prices and not cat.fabric_price(f).rented]
    return sorted(owned, key=lambda f: (cat.fabric_price_key(f), f))


#: The what-ifs that move a catalog price: (WhatIf field, catalog section, entry field).
_PRICE_WHAT_IFS = (
    ("server_usd", "gpu", "server_usd"),
    ("rent_usd_per_gpu_hour", "gpu", "rent_usd_per_gpu_hour"),
    ("usd_per_kwh", "economics", "usd_per_kwh"),
    ("pue", "economics", "pue"),
    ("years", "economics", "amortization_years"),
    ("utilisation", "economics", "utilisation"),
)


def _moved(entry: Entry, section: str, key: str, value: float) -> Entry:
    """`entry` with figure `key` at `value` and its range scaled with it (value / typical), each end kept within
    the figure's bounds: the figure stays as uncertain as the catalog has it."""
    old = float(getattr(entry, key))
    ranges = dict(entry.ranges)
    if key in ranges and old > 0:
        fig = figure(f"prices.{section}", key)
        lo, hi = (fig.ge if fig.ge is not None else -math.inf), (fig.le if fig.le is not None else math.inf)
        r, scale = ranges[key], value / old
        ranges[key] = Range(min(max(r.low * scale, lo), value), value, max(min(r.high * scale, hi), value))
    return entry.model_copy(update={key: value, "ranges": ranges})


def _with_what_ifs(draft: ScenarioDraft, w: WhatIf) -> tuple[dict[str, Any], Catalog]:
    """The scenario and catalog with the what-ifs applied: each changed price moved in the catalog with its range,
    and written over the scenario's own override where it sets one (a scenario's figure is certain)."""
    raw = copy.deepcopy(draft.raw)
    prices = raw.get("economics", {}).get("prices", {})
    gpu_prices, econ = dict(draft.catalog.gpu_prices), draft.catalog.economics_or_error()
    for attr, section, key in _PRICE_WHAT_IFS:
        if getattr(w, attr) is None:
            continue
        value = float(getattr(w, attr))
        if key in prices and not isinstance(prices[key], dict):
            prices[key] = value  # the scenario's own figure, for every entry
        if section == "economics":
            econ = _moved(econ, section, key, value)  # type: ignore[assignment]
            continue
        for gpu in draft.scenario.gpu_names:
            gpu_prices[gpu] = _moved(gpu_prices[gpu], section, key, value)  # type: ignore[assignment]
            if key in (prices.get(gpu) or {}):
                prices[gpu][key] = value
    return raw, dataclasses.replace(draft.catalog, gpu_prices=gpu_prices, economics=econ)


@dataclass(frozen=True)
class TornadoBar:
    """How the break-even premium at one GPU count moves when one input moves over its range."""

    input: str
    #: The input's value at each end of its range.
    low_label: str
    high_label: str
    #: The break-even premium at each end, and at the inputs as given.
    low: float
    high: float
    base: float
    #: Where the verdict (A cheaper per delivered token, or not) flips, when it does in the range
    #: (text such as "< $17K").
    flips_at: str | None = None


@dataclass(frozen=True)
class RoiView:
    """A fabric comparison ready to show: ``table`` (one row per GPU count) with ``columns`` describing the ones to
    show for the chosen mode, the ``verdict`` sentence and, when asked, ``tornado`` bars per GPU count."""

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


def compare_fabrics(
    draft: ScenarioDraft, what_if: WhatIf, *, sensitivity: bool = False, samples: int = INTERACTIVE_SAMPLES
) -> RoiView:
    """Compare two fabrics over the draft's GPU counts with the what-if inputs applied (`samples` Monte Carlo
    samples for the verdict's probabilities). `sensitivity` also fills :attr:`RoiView.tornado`."""
    raw, catalog = _with_what_ifs(draft, what_if)
    options = RoiOptions(samples=samples, premium=what_if.premium)
    physics = (_raw_key(draft.raw), draft.file, id(draft.catalog), cat_digest(draft.catalog), what_if.fabric_a)
    key = (*physics, what_if.fabric_b, samples)
    result = compare_kept(key, (raw, draft.file), what_if.fabric_a, what_if.fabric_b, catalog, options)
    table = _table(result, what_if)
    sentence = _rent_verdict(table, what_if) if what_if.mode == "rent" else verdict(result)
    return RoiView(
        what_if=what_if,
        table=table,
        columns=_columns(what_if),
        verdict=sentence,
        tornado=_tornado(result) if sensitivity else None,
        result=result,
    )


def _raw_key(raw: dict[str, Any]) -> str:
    """A scenario's content as a key (its tables and values, in order)."""
    return json.dumps(raw, sort_keys=True, default=str)


def verdict_at(view: RoiView, gpus: int) -> str:
    """The comparison's verdict about one of its GPU counts (the CLI's ``roi --gpus``), without comparing again."""
    if view.what_if.mode == "rent" or gpus == view.result.headline_gpus:
        return view.verdict
    if gpus not in view.result.table["gpus"].to_list():
        raise ValueError(f"{gpus:,} GPUs is not a GPU count of the comparison")
    return verdict(dataclasses.replace(view.result, headline_gpus=gpus))


def _table(result: RoiResult, w: WhatIf) -> pl.DataFrame:
    """roi's table with friendly names: days and the mode's cost per fabric (own: the PV of the total cost of
    ownership over the life; rent: the rent of the first workload's run), what A saves, the network hardware of
    each."""
    a, b = w.fabric_a, w.fabric_b
    first = result.workloads.group_by("gpus", maintain_order=True).first().select("gpus", "rent_a_usd", "rent_b_usd")
    t = result.table.join(first, on="gpus", how="left")
    if w.mode == "own":
        cost_a, cost_b, saving = pl.col("tco_a_usd"), pl.col("tco_b_usd"), pl.col("savings_usd")
    else:
        cost_a, cost_b = pl.col("rent_a_usd"), pl.col("rent_b_usd")
        saving = cost_b - cost_a
    return t.with_columns(
        pl.col("days_a").alias(f"time_to_train_days_{a}"),
        pl.col("days_b").alias(f"time_to_train_days_{b}"),
        pl.col("network_capex_a_usd").alias(f"network_capex_usd_{a}"),
        pl.col("network_capex_b_usd").alias(f"network_capex_usd_{b}"),
        cost_a.alias(f"cost_{a}"),
        cost_b.alias(f"cost_{b}"),
        saving.alias("saving_b_minus_a"),
    )


def _columns(w: WhatIf) -> list[ColumnSpec]:
    a, b = w.fabric_a, w.fabric_b
    own = w.mode == "own"
    what = "total cost of ownership over the life (PV)" if own else "rent of the run"
    cols = [
        ColumnSpec("gpus", "GPUs", "", "count", "GPU count", "input"),
        ColumnSpec(f"time_to_train_days_{a}", f"days {a}", "days", "float", f"time to train on {a}", "run"),
        ColumnSpec(f"time_to_train_days_{b}", f"days {b}", "days", "float", f"time to train on {b}", "run"),
        ColumnSpec(f"cost_{a}", f"{w.mode} {a}", "USD", "float", f"{a}: {what}", "run"),
        ColumnSpec(f"cost_{b}", f"{w.mode} {b}", "USD", "float", f"{b}: {what}", "run"),
        ColumnSpec(
            "saving_b_minus_a",
            f"{a} saves",
            "USD",
            "float",
            f"rho x TCO of {b} - TCO of {a}: what {a} saves per delivered work" if own else f"rent on {b} - on {a}",
            "run",
        ),
    ]
    if own:
        cols += [
            ColumnSpec("premium", "premium", "premium", "float", f"{a}'s fabric cost over {b}'s", "roi"),
            ColumnSpec(
                "break_even_premium",
                "break-even",
                "premium",
                "float",
                f"{a}'s fabric cost over {b}'s at which both cost the same per delivered token",
                "roi",
            ),
            ColumnSpec("p_a_cheaper", f"P({a})", "fraction", "float", f"P({a} cheaper per delivered token)", "roi"),
            ColumnSpec(
                "payback",
                "payback",
                "",
                "text",
                "months, beyond life, dominant, trade-off or never, at the typical figures",
                "roi",
            ),
            ColumnSpec(
                "payback_months",
                "months",
                "",
                "float",
                f"months for {a}'s extra capex to pay back at the typical figures (`roi` prints the samples' P50)",
                "roi",
            ),
        ]
    cols += [
        ColumnSpec(f"network_capex_usd_{a}", f"net {a}", "USD", "float", f"{a}'s network hardware", "cluster"),
        ColumnSpec(f"network_capex_usd_{b}", f"net {b}", "USD", "float", f"{b}'s network hardware", "cluster"),
    ]
    return cols


def _rent_verdict(table: pl.DataFrame, w: WhatIf) -> str:
    """Renting: where renting on A costs less than on B (the network's price does not enter a rent)."""
    a, b = w.fabric_a, w.fabric_b
    wins = [r["gpus"] for r in table.iter_rows(named=True) if r["saving_b_minus_a"] > 0]
    if len(wins) == table.height:
        return f"renting, {a} costs less than {b} at every GPU count (it finishes sooner at the same $/GPU-h)"
    if not wins:
        return f"renting, {b} costs no more than {a} at any GPU count"
    return f"renting, {a} costs less than {b} at {', '.join(f'{g:,}' for g in wins)} GPUs"


def _tornado(result: RoiResult) -> dict[int, list[TornadoBar]]:
    """Bars per GPU count from the comparison's tornado: the break-even premium at each end of every input's
    range, widest first, and the value at which the verdict flips."""
    base = dict(zip(result.table["gpus"].to_list(), result.table["break_even_premium"].to_list(), strict=True))
    out: dict[int, list[TornadoBar]] = {}
    for r in result.tornado.iter_rows(named=True):
        flip = r["flip"]
        flips_at = None
        if flip is not None and math.isfinite(flip):
            # Shown rounded past the flip (whole numbers at whole numbers), as the terminal's tornado shows it.
            above = r["flip_direction"] == "above"
            shown = past(flip, above, r["unit"], bool(r["integer"]))
            sign = (">=" if above else "<=") if r["integer"] else (">" if above else "<")
            flips_at = f"{sign} {value_text(shown, r['unit'])}"
        out.setdefault(int(r["gpus"]), []).append(
            TornadoBar(
                str(r["input"]),
                value_text(r["low"], r["unit"]),
                value_text(r["high"], r["unit"]),
                float(r["break_even_low"]),
                float(r["break_even_high"]),
                float(base[r["gpus"]]),
                flips_at,
            )
        )
    for bars in out.values():
        bars.sort(key=lambda t: -abs(t.high - t.low) if math.isfinite(t.high - t.low) else 0.0)
    return out
