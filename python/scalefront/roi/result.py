"""What a fabric comparison returns (`RoiResult`: numbers and frames, no prose), the options it takes, the
uncertain inputs it samples, its progress, and `roi --json` (`result_dict`)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import polars as pl

from scalefront._enums import DesignRule
from scalefront.engine.progress import Steps
from scalefront.inputs.scenario.build import MixPart

__all__ = [
    "DEFAULT_CANDIDATES",
    "DEFAULT_SAMPLES",
    "McProgress",
    "RoiOptions",
    "RoiResult",
    "UncertainInput",
    "json_ready",
    "result_dict",
]

#: Monte Carlo samples by default.
DEFAULT_SAMPLES = 10_000
#: Layouts kept per (fabric, GPU count, topology) for each sample to re-optimise among.
DEFAULT_CANDIDATES = 6


@dataclass(frozen=True)
class RoiOptions:
    """How to compare. Every field has the command line's default."""

    #: A's fabric cost as a multiple of B's (`--premium 1.3`); None: each fabric at its catalog prices.
    premium: float | None = None
    #: "same": both fabrics on the same topology; "cheapest": each on its cheapest design per delivered work.
    design: DesignRule = "same"
    #: What an extra busy GPU-hour of A is worth (renting out spare capacity, time to market); None: B's
    #: levelised cost of a busy GPU-hour (the cost-avoidance view: NPV = savings per delivered work).
    value_usd_per_gpu_hour: float | None = None
    samples: int = DEFAULT_SAMPLES
    seed: int = 0
    #: Where the model's error comes from: "auto" (the fidelity file data/model_error.toml when the catalog has
    #: one, else the validation residuals), "validation", "none", or a TOML file of log residuals.
    model_error: str = "auto"
    candidates: int = DEFAULT_CANDIDATES
    #: The GPU count the verdict sentence is about (default: the scenario's largest).
    headline_gpus: int | None = None
    #: A vendor quote file (TOML or CSV) whose lines replace the catalog's prices and are marked quoted.
    quote: str | None = None


@dataclass(frozen=True)
class UncertainInput:
    """One input the Monte Carlo samples and the tornado moves."""

    name: str
    #: Unit for display: "usd", "fraction", "ratio", "s", "log" (model error), ...
    unit: str
    low: float
    typical: float
    high: float
    #: The core's targets: [{section, side, field}].
    targets: list[dict[str, Any]]
    #: Values resampled as they are (validation residuals); empty: triangular(low, typical, high).
    empirical: list[float] = field(default_factory=list)
    #: Multiply the core's SI value by this for display (1e6 for a latency in µs).
    display_scale: float = 1.0
    #: A whole number: sampled on integers, and its flip is a whole number.
    integer: bool = False
    #: (group index, loading) on the price book's correlated groups.
    loadings: tuple[tuple[int, float], ...] = ()
    #: What it is, for wording: the core's section (`fabric`, `network`, `gpu`, `economics`, `model_error`), the
    #: catalog field, and the designs' fabric ids it applies to (none: every design).
    section: str = ""
    field: str = ""
    fabrics: tuple[str, ...] = ()
    #: `section.entry.field` keys the correlated groups' line patterns match.
    keys: tuple[str, ...] = ()
    #: The figure's label without a fabric ("switch price", "queue pairs per connection").
    label: str = ""


#: Monte Carlo progress, for a progress line: samples done of the total, elapsed seconds, rate and ETA.
McProgress = Steps


@dataclass(frozen=True)
class RoiResult:
    """A fabric comparison of A with one or more designs B: the frames behind what a buyer reads (the verdict is
    `scalefront.roi.text.verdict(result)`). Every frame has one row per (GPU count, design B) or more."""

    scenario: str
    fabric_a: str
    #: The first design B (the one a one-B comparison names).
    fabric_b: str
    options: RoiOptions
    #: The GPU count the verdict is about.
    headline_gpus: int
    #: One row per (GPU count, design B): the typical-value comparison, the Monte Carlo summary and the quote
    #: statuses' coverage (the `--out` file).
    table: pl.DataFrame
    #: Per GPU count, design B and workload of the mix: share, days to train, delivered tokens/s, cost per Mtoken,
    #: and what training its tokens would cost renting the GPUs instead (for comparison).
    workloads: pl.DataFrame
    #: Per GPU count and design B, one row per uncertain input that moves the NPV, largest swing first: NPV at
    #: low/high, flip value.
    tornado: pl.DataFrame
    #: Per GPU count, design B and sample: premium, break-even premium, savings, NPV (with and without model
    #: error), payback.
    samples: pl.DataFrame
    #: Per GPU count, design B and fabric: the present value of each cost component (USD; residual negative).
    breakdown: pl.DataFrame
    inputs: list[UncertainInput]
    #: Where the model error came from.
    model_error: str
    #: Every design B, in the order of the comparison (`--b`).
    fabrics_b: tuple[str, ...] = ()
    #: Per GPU count, design B and year: the premium's cash flows (year 0: the upfront outlay).
    cash_flows: pl.DataFrame = field(default_factory=pl.DataFrame)
    #: The workloads compared (one at share 1, or the scenario's mix).
    mix: list[MixPart] = field(default_factory=list)
    #: How prose names A and the first B: the catalog's fabric family with the id (`Catalog.fabric_label`).
    fabric_labels: tuple[str, str] = ("", "")
    #: What each design's operating mode is, by id, one line each ("" for a fabric without modes:
    #: `Catalog.fabric_mode_summary`).
    fabric_modes: dict[str, str] = field(default_factory=dict)
    #: How prose names every design, by id ("Ethernet (roce-400g)"), and its family alone ("Ethernet").
    labels: dict[str, str] = field(default_factory=dict)
    families: dict[str, str] = field(default_factory=dict)
    #: The price book's correlated groups (ids), as the inputs' loadings index them.
    groups: list[str] = field(default_factory=list)
    #: True when the Monte Carlo was stopped early (its summary covers the samples done).
    mc_cancelled: bool = False
    #: The catalog the comparison priced (sources and quote statuses of every line), with any quote applied.
    catalog: Any = None
    #: A digest of every catalog file and quote read, so that a report names the exact figures it used.
    fingerprint: str = ""
    #: False when the tornado was left out (an interactive what-if): no flip is then known.
    tornado_computed: bool = True
    #: The scenario's lifecycle (`scalefront.roi.lifecycle.Lifecycle`: training, then serving), None without one.
    lifecycle: Any = None
    #: With a lifecycle, per GPU count and design B: the NPV at typical values split into the value of speed while
    #: training, while serving, and the rest (costs, delay, resale); each phase's months and speed ratio.
    lifecycle_split: pl.DataFrame = field(default_factory=pl.DataFrame)

    @property
    def designs_b(self) -> tuple[str, ...]:
        return self.fabrics_b or (self.fabric_b,)


def result_dict(result: RoiResult, verdict: str) -> dict[str, Any]:
    """The `roi --json` object, JSON-ready (infinities and NaN as null): the verdict, the options, and every frame
    but the samples as lists of rows (one per GPU count and design B: P with and without model error, NPV
    P10/P50/P90, IRR, payback, quote-status coverage)."""
    inputs = [
        {
            "name": i.name,
            "unit": i.unit,
            "low": i.low * i.display_scale,
            "typical": i.typical * i.display_scale,
            "high": i.high * i.display_scale,
            "empirical": bool(i.empirical),
            "integer": i.integer,
            "groups": {result.groups[g]: round(v, 6) for g, v in i.loadings},
        }
        for i in result.inputs
    ]
    doc = {
        "scenario": result.scenario,
        "fabric_a": result.fabric_a,
        "fabrics_b": list(result.designs_b),
        "headline_gpus": result.headline_gpus,
        "verdict": verdict,
        "options": asdict(result.options),
        "model_error": result.model_error,
        "catalog_fingerprint": result.fingerprint,
        "mc_cancelled": result.mc_cancelled,
        "rows": result.table.to_dicts(),
        "workloads": result.workloads.to_dicts(),
        "tornado": result.tornado.to_dicts(),
        "cash_flows": result.cash_flows.to_dicts(),
        "breakdown": result.breakdown.to_dicts(),
        "inputs": inputs,
    }
    if result.lifecycle is not None:
        life = result.lifecycle
        doc["lifecycle"] = {
            "training_months": life.training_months,
            "serving_months": life.life_months - life.training_months,
            "serving": life.fixed,
            "slo": [f"{m}{op}{v:g}" for m, op, v in life.slos],
            "split": result.lifecycle_split.to_dicts(),
        }
    ready: dict[str, Any] = json_ready(doc)
    return ready


def json_ready(value: Any) -> Any:
    """Infinities and NaN as null, for JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(v) for v in value]
    return value
