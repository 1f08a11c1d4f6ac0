"""What a fabric comparison returns (`RoiResult`: numbers and frames, no prose), the options it takes, the
uncertain inputs it samples, its progress, and `roi --json` (`result_dict`)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import polars as pl

from scalefront._enums import DesignRule
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


@dataclass(frozen=True)
class McProgress:
    """Monte Carlo progress, for a progress line."""

    done: int
    total: int
    elapsed_s: float

    @property
    def rate(self) -> float:
        return self.done / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def eta_s(self) -> float | None:
        return (self.total - self.done) / self.rate if self.rate > 0 else None


@dataclass(frozen=True)
class RoiResult:
    """A fabric comparison: the frames behind what a buyer reads (the verdict sentence is
    `scalefront.roi.text.verdict(result)`)."""

    scenario: str
    fabric_a: str
    fabric_b: str
    options: RoiOptions
    #: The GPU count the verdict is about.
    headline_gpus: int
    #: One row per GPU count: typical-value comparison and the Monte Carlo summary (the `--out` file).
    table: pl.DataFrame
    #: Per GPU count and workload of the mix: share, days to train, delivered tokens/s, cost per Mtoken, and what
    #: training its tokens would cost renting the GPUs instead (for comparison).
    workloads: pl.DataFrame
    #: Per GPU count, one row per uncertain input, largest swing first: savings at low/high, flip value.
    tornado: pl.DataFrame
    #: Per GPU count and sample: premium, break-even premium, savings, NPV, payback.
    samples: pl.DataFrame
    #: Per GPU count and fabric: the present value of each cost component (USD; residual negative).
    breakdown: pl.DataFrame
    #: Own-mode time-vs-cost Pareto frontier per (fabric, topology), first workload.
    frontier: pl.DataFrame
    inputs: list[UncertainInput]
    #: Where the model error came from.
    model_error: str
    #: The workloads compared (one at share 1, or the scenario's mix).
    mix: list[MixPart] = field(default_factory=list)
    #: How prose names A and B: the catalog's fabric family with the id (`Catalog.fabric_label`).
    fabric_labels: tuple[str, str] = ("", "")
    #: What each side's operating mode is, one line each ("" for a fabric without modes: `Catalog.fabric_mode_summary`).
    fabric_modes: tuple[str, str] = ("", "")
    #: True when the Monte Carlo was stopped early (its summary covers the samples done).
    mc_cancelled: bool = False


def result_dict(result: RoiResult, verdict: str) -> dict[str, Any]:
    """The `roi --json` object, JSON-ready (infinities and NaN as null): the verdict, the options, and every frame
    but the samples as lists of rows."""
    inputs = [
        {
            "name": i.name,
            "unit": i.unit,
            "low": i.low * i.display_scale,
            "typical": i.typical * i.display_scale,
            "high": i.high * i.display_scale,
            "empirical": bool(i.empirical),
        }
        for i in result.inputs
    ]
    doc = {
        "scenario": result.scenario,
        "fabric_a": result.fabric_a,
        "fabric_b": result.fabric_b,
        "headline_gpus": result.headline_gpus,
        "verdict": verdict,
        "options": asdict(result.options),
        "model_error": result.model_error,
        "mc_cancelled": result.mc_cancelled,
        "rows": result.table.to_dicts(),
        "workloads": result.workloads.to_dicts(),
        "tornado": result.tornado.to_dicts(),
        "breakdown": result.breakdown.to_dicts(),
        "inputs": inputs,
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
