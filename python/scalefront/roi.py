"""Is fabric A (say InfiniBand) worth its premium over fabric B (say RoCE) for a scenario, how sure is that, and
what would change the answer?

`compare(scenario, a, b, options=...)` returns a :class:`RoiResult`: the verdict sentence, one row per GPU count
(owning the cluster for its life: total cost of ownership, cost per delivered token, break-even premium, NPV,
payback), the Monte Carlo summary (P(A cheaper per delivered token), P10/P50/P90), the tornado of every uncertain
input with the value at which the verdict flips, and the samples.

This module only gathers inputs and formats: the Rust core (`rust/core/src/roi.rs`, `montecarlo.rs`,
`economics.rs`) owns every formula; docs/roi.md works each through by hand. What happens here:
1. each workload of the scenario is swept once at typical values, over both fabrics; per (fabric, GPU count,
   topology), the fastest few distinct layouts are kept as candidates;
2. every figure with a `{ low, typical, high }` range in the catalogs becomes an uncertain input (one shared draw
   when both fabrics buy the same part at the same range), plus the model's error (training-run residuals, common
   to both fabrics; nccl-tests residuals, one draw per fabric on its exposed communication);
3. the core chooses each count's designs (same topology for both, or each on its cheapest), compares, runs the
   tornado (flip values by bisection) and the Monte Carlo (each sample re-optimises among the candidates).
"""

from __future__ import annotations

import itertools
import math
import threading
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import polars as pl

from scalefront import _core
from scalefront.engine.sweep import SweepResult, pareto, run_sweep
from scalefront.errors import CatalogError, UsageError
from scalefront.inputs.catalog.entries import Entry, FabricEntry, Range
from scalefront.inputs.catalog.loader import Catalog, builtin_catalog
from scalefront.inputs.scenario.build import MixPart, Scenario, load_mix

__all__ = [
    "DEFAULT_SAMPLES",
    "McProgress",
    "RoiOptions",
    "RoiResult",
    "UncertainInput",
    "compare",
    "model_error_residuals",
]

#: Monte Carlo samples by default.
DEFAULT_SAMPLES = 10_000
#: Layouts kept per (fabric, GPU count, topology) for each sample to re-optimise among.
DEFAULT_CANDIDATES = 6
#: Sweep grouping that keeps the best schedule of every parallel-degree combination (the candidates).
_CANDIDATE_GROUPS = ["fabric", "tp", "pp", "cp", "ep"]


@dataclass(frozen=True)
class RoiOptions:
    """How to compare. Every field has the command line's default."""

    #: A's fabric cost as a multiple of B's (`--premium 1.3`); None: each fabric at its catalog prices.
    premium: float | None = None
    #: "same": both fabrics on the same topology; "cheapest": each on its cheapest design per delivered work.
    design: Literal["same", "cheapest"] = "same"
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
    """A fabric comparison: what a buyer reads (`verdict`), and the frames behind it."""

    scenario: str
    fabric_a: str
    fabric_b: str
    options: RoiOptions
    #: The one-paragraph answer for `headline_gpus`.
    verdict: str
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
    #: True when the Monte Carlo was stopped early (its summary covers the samples done).
    mc_cancelled: bool = False


# ---------------------------------------------------------------------------------------------- model error


def _log_ratio(a: float, b: float) -> float:
    return math.log(a / b)


def _validation_residuals(catalog: Catalog) -> tuple[list[float], list[float]]:
    """ln(measured / predicted step time) of the held-out training rows; ln(measured / predicted time) of the
    judged nccl-tests points over a network (not NVLink-only curves) in the regime of training's gradient and
    parameter traffic: messages of 64 MiB and more (Megatron's buckets hold >= 40M parameters)."""
    from scalefront import validation

    training = validation.judged_training(validation.training_checks(catalog))
    common = sorted(_log_ratio(c.measured_step_time_s, c.predicted_step_time_s) for c in training)
    networked = {c["id"] for c in validation.load_table("collectives")["curve"] if c.get("fabric", "none") != "none"}
    points = validation.judged_collectives(validation.collective_checks(catalog), validation.MEDIUM_COLLECTIVE_BYTES)
    # Time is inversely proportional to bus bandwidth: ln(t_meas / t_pred) = ln(bw_pred / bw_meas).
    collective = sorted(
        _log_ratio(p.predicted_busbw_gbytes_per_s, p.measured_busbw_gbytes_per_s) for p in points if p.id in networked
    )
    return common, collective


def _file_residuals(path: str) -> tuple[list[float], list[float]]:
    try:
        doc = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise UsageError(f"--model-error {path}: cannot read it as TOML ({err})") from None
    if "regime" in doc:  # the fidelity file's format: residuals by regime; all regimes pooled
        common = sorted(r for regime in doc["regime"] for r in regime.get("log_residuals", []))
        collective = list(doc.get("collective_log_residuals", []))
    else:
        common = list(doc.get("common_log_residuals", []))
        collective = list(doc.get("collective_log_residuals", []))
    values = common + collective
    if not values or any(isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) for v in values):
        raise UsageError(
            f"--model-error {path}: expected common_log_residuals = [...] and collective_log_residuals = [...] "
            "(finite numbers, ln(measured / predicted)), or the [[regime]] tables of data/model_error.toml"
        )
    return sorted(float(v) for v in common), sorted(float(v) for v in collective)


def _regime_residuals(errors: Any, regimes: Sequence[tuple[str | None, bool]]) -> tuple[list[float], list[str]]:
    """The training residuals of the regimes the comparison's workloads fall in: for each (GPU generation, MoE)
    the first regime of data/model_error.toml that matches and holds `min_rows` residuals (the file lists the most
    specific first, as the prediction intervals pick them)."""
    chosen: dict[str, list[float]] = {}
    for generation, moe in regimes:
        for r in errors.regime:
            matches = (r.generation is None or r.generation == generation) and (r.moe is None or r.moe == moe)
            if matches and len(r.log_residuals) >= errors.min_rows:
                chosen.setdefault(r.name, list(r.log_residuals))
                break
    return sorted(v for values in chosen.values() for v in values), list(chosen)


def model_error_residuals(
    source: str, catalog: Catalog, regimes: Sequence[tuple[str | None, bool]] = ()
) -> tuple[list[float], list[float], str]:
    """(common step-time log residuals, collective log residuals, a label of the source). `regimes`: the
    (GPU generation, MoE) of each workload, to pick data/model_error.toml's regimes (all pooled when empty)."""
    if source == "none":
        return [], [], "none"
    errors = getattr(catalog, "errors", None)  # data/model_error.toml (the fidelity work's conformal residuals)
    if source == "auto" and errors is not None:
        common, names = _regime_residuals(errors, regimes)
        if not common:
            common, names = sorted(v for r in errors.regime for v in r.log_residuals), ["all regimes"]
        _, collective = _validation_residuals(catalog)
        label = f"data/model_error.toml ({', '.join(names)}) and nccl-tests validation residuals (collectives)"
        return common, collective, label
    if source in ("auto", "validation"):
        common, collective = _validation_residuals(catalog)
        return common, collective, "validation residuals (scalefront validate)"
    common, collective = _file_residuals(source)
    return common, collective, source


def _deciles(values: list[float]) -> tuple[float, float]:
    """P10 and P90 (nearest rank) of sorted values."""
    n = len(values)
    return values[max(1, math.ceil(0.1 * n)) - 1], values[max(1, math.ceil(0.9 * n)) - 1]


# ---------------------------------------------------------------------------------------------- uncertain inputs

#: What each catalog field is called in the tornado and the verdict.
LABELS = {
    "nic_usd": "NIC price",
    "switch_usd": "switch price",
    "nic_optic_usd": "NIC optics price",
    "switch_optic_usd": "switch optics price",
    "dac_usd": "copper cable price",
    "fibre_usd": "fibre price",
    "support_fraction_per_year": "support per year",
    "nos_usd_per_switch_year": "NOS licence per switch-year",
    "nic_w": "NIC power",
    "switch_w": "switch power",
    "nic_optic_w": "NIC optics power",
    "switch_optic_w": "switch optics power",
    "efficiency": "bus-bandwidth efficiency",
    "load_balance_efficiency": "load-balance efficiency",
    "qps_per_connection": "queue pairs per connection",
    "tail_latency_factor": "tail latency factor",
    "in_network_reduction_efficiency": "in-network reduction gain",
    "nic_latency_us": "NIC latency",
    "switch_hop_latency_us": "switch hop latency",
    "link_gbps": "line rate",
    "rent_usd_per_gpu_hour": "GPU rent",
    "server_usd": "GPU server price",
    "switch_tray_usd": "NVLink switch tray price",
    "pue": "PUE",
    "usd_per_kwh": "power price",
    "gpu_power_fraction": "GPU power while training",
    "discount_rate": "discount rate",
    "residual_fraction": "residual value",
    "utilisation": "utilisation",
    "idle_power_fraction": "idle power",
    "colocation_usd_per_kw_month": "colocation price",
    "facility_build_usd_per_kw": "facility build cost",
    "server_spares_fraction": "server spares",
    "network_spares_fraction": "network spares",
    "installation_fraction": "installation",
    "oob_usd_per_rack": "management network per rack",
}


def _unit(field_name: str) -> str:
    if field_name.endswith("_usd") or "usd_per" in field_name:
        return "usd"
    if field_name.endswith("_w"):
        return "w"
    if field_name.endswith("_us"):
        return "us"
    if field_name in ("pue", "in_network_reduction_efficiency", "tail_latency_factor"):
        return "ratio"
    if field_name == "qps_per_connection":
        return "count"
    return "fraction"


def _ranged(entry: Entry, fixed: set[str]) -> list[tuple[str, Any]]:
    """(field, range) of every ranged figure of `entry`, except those a scenario override fixed."""
    return [(f, r) for f, r in entry.ranges.items() if f not in fixed and r.high > r.low]


def _fabric_inputs(name: str, side: int, entry: FabricEntry) -> list[UncertainInput]:
    """The fabric's ranged figures, in the core's SI units (found by converting each end)."""
    out = []
    base = entry.core_spec()
    for f, r in _ranged(entry, set()):
        low, high = entry.model_copy(update={f: r.low}).core_spec(), entry.model_copy(update={f: r.high}).core_spec()
        for key in base:
            if low[key] == base[key] == high[key]:
                continue
            scale = base[key] / r.typical if r.typical else 1.0
            out.append(
                UncertainInput(
                    f"{name} {LABELS.get(f, f)}",
                    _unit(f),
                    float(low[key]),
                    float(base[key]),
                    float(high[key]),
                    [{"section": "fabric", "side": side, "field": key}],
                    display_scale=1.0 / scale if scale else 1.0,
                )
            )
    return out


def _price_inputs(
    catalog: Catalog, a: str, b: str, gpu: str, scale_up: str, fixed: dict[str, set[str]]
) -> list[UncertainInput]:
    """Every ranged price: A's and B's network prices (one shared input where both ranges are the same part
    price), the GPU's prices, the NVLink trays' and the economics'."""
    out: list[UncertainInput] = []

    def fixed_for(entry: str) -> set[str]:
        return fixed.get(entry, set()) | fixed.get("*", set())

    pa, pb = catalog.fabric_price(a), catalog.fabric_price(b)
    ra, rb = dict(_ranged(pa, fixed_for(a))), dict(_ranged(pb, fixed_for(b)))
    for f in sorted(set(ra) | set(rb), key=list(type(pa).model_fields).index):
        if f in ra and f in rb and ra[f] == rb[f]:  # the same part at the same range: one market price
            r = ra[f]
            targets: list[dict[str, Any]] = [{"section": "network", "side": s, "field": f} for s in (0, 1)]
            out.append(_input(f"{LABELS.get(f, f)} (both fabrics)", f, r, targets))
            continue
        for name, side, ranges in ((a, 0, ra), (b, 1, rb)):
            if f in ranges:
                target: list[dict[str, Any]] = [{"section": "network", "side": side, "field": f}]
                out.append(_input(f"{name} {LABELS.get(f, f)}", f, ranges[f], target))
    for section, entry, fixed_keys in (
        ("gpu", catalog.gpu_price(gpu), fixed_for(gpu)),
        ("scale_up", catalog.scale_up_price(scale_up), set()),
        ("economics", catalog.economics_or_error(), fixed_for("*")),
    ):
        for f, r in _ranged(entry, fixed_keys):
            if section == "gpu" and f == "rent_usd_per_gpu_hour":
                continue  # rent does not enter an owned cluster's cost
            out.append(_input(LABELS.get(f, f), f, r, [{"section": section, "side": None, "field": f}]))
    return out


def _input(name: str, field_name: str, r: Range, targets: list[dict[str, Any]]) -> UncertainInput:
    return UncertainInput(name, _unit(field_name), low=r.low, typical=r.typical, high=r.high, targets=targets)


def _error_inputs(common: list[float], collective: list[float], a: str, b: str) -> list[UncertainInput]:
    out = []
    if common:
        lo, hi = _deciles(common)
        target: list[dict[str, Any]] = [{"section": "model_error", "side": None, "field": "common"}]
        out.append(UncertainInput("model error, step time (both fabrics)", "log", lo, 0.0, hi, target, common))
    if collective:
        lo, hi = _deciles(collective)
        for name, side in ((a, 0), (b, 1)):
            target = [{"section": "model_error", "side": side, "field": "collective"}]
            out.append(UncertainInput(f"{name} collective model error", "log", lo, 0.0, hi, target, collective))
    return out


# ---------------------------------------------------------------------------------------------- candidates


def _choice(scenario: Scenario, row: dict[str, Any]) -> dict[str, int]:
    """A labelled sweep row as the engine's choice: each axis's index into the scenario's space (the degrees tp,
    pp, dp, cp and ep as values); the bindings turn it into the core's configuration (`SweepSpace::config`)."""
    space = scenario.space
    topology = next(
        i
        for i, (n, o) in enumerate(zip(scenario.topology_names, scenario.oversubscriptions, strict=True))
        if n == row["topology"] and o == row["oversubscription"]
    )
    return {
        "gpu": scenario.gpu_names.index(row["gpu"]),
        "scale_up": scenario.scale_up_names.index(row["scale_up"]),
        "gpus": scenario.gpu_counts.index(row["gpus"]),
        "fabric": scenario.fabric_names.index(row["fabric"]),
        "topology": topology,
        "precision": list(space["precisions"]).index(row["precision"]),
        "tp": row["tp"],
        "pp": row["pp"],
        "dp": row["dp"],
        "cp": row["cp"],
        "ep": row["ep"],
        "vpp": list(space["vpp"]).index(row["vpp"]),
        "micro_batch": list(space["micro_batch"]).index(row["micro_batch"]),
        "sequence_parallel": list(space["sequence_parallel"]).index(row["sequence_parallel"]),
        "recompute": list(space["recompute"]).index(row["recompute"]),
        "zero": list(space["zero"]).index(row["zero"]),
        "overlap": scenario.overlap_names.index(row["overlap"]),
    }


def _design_label(row: dict[str, Any], scale_ups: int) -> str:
    label = f"{row['topology']} {row['oversubscription']:g}:1"
    return f"{label} {row['scale_up']}" if scale_ups > 1 else label


_DESIGN_KEYS = ["fabric", "gpus", "topology", "oversubscription", "scale_up", "precision"]


def _candidates(result: SweepResult, k: int) -> dict[tuple[str, int, str], list[dict[str, Any]]]:
    """The fastest `k` feasible rows (one per parallel-degree combination) per design."""
    scenario = result.scenario
    assert scenario is not None, "candidates come from a sweep run here"
    kept = result.kept.filter(pl.col("feasible")).sort([*_DESIGN_KEYS, "time_to_train_s"])
    best = kept.group_by([*_DESIGN_KEYS, "tp", "pp", "cp", "ep", "dp"], maintain_order=True).first()
    out: dict[tuple[str, int, str], list[dict[str, Any]]] = {}
    for row in best.sort([*_DESIGN_KEYS, "time_to_train_s"]).iter_rows(named=True):
        key = (row["fabric"], row["gpus"], _design_label(row, len(scenario.scale_up_names)))
        rows = out.setdefault(key, [])
        if len(rows) < k:
            rows.append(_choice(scenario, row))
    return out


def _designs(parts: list[tuple[MixPart, SweepResult]], a: str, b: str, k: int) -> list[dict[str, Any]]:
    """Every (fabric, GPU count, topology) with candidates for every workload of the mix."""
    per_workload = [_candidates(result, k) for _, result in parts]
    keys = set(per_workload[0]).intersection(*per_workload[1:])
    designs = []
    for fabric, gpus, label in sorted(keys, key=lambda x: (x[1], x[0] != a, x[2])):
        designs.append(
            {
                "side": 0 if fabric == a else 1,
                "gpus": gpus,
                "topology": label,
                "candidates": [cands[(fabric, gpus, label)] for cands in per_workload],
            }
        )
    return designs


# ---------------------------------------------------------------------------------------------- running


def _check_fabrics(catalog: Catalog, a: str, b: str) -> None:
    if a == b:
        raise UsageError(f"--a and --b are the same fabric ({a}); compare two different fabrics")
    for name in (a, b):
        catalog.fabric(name)  # unknown names get their suggestion first
    for name in (a, b):
        if catalog.fabric_price(name).rented:
            raise UsageError(
                f"{name} is sold only inside instance rent, so an owned cluster cannot be priced with it; compare "
                "rented costs with scalefront sweep (cost mode rent)"
            )


def _fixed_prices(part: MixPart) -> dict[str, set[str]]:
    """Prices the scenario sets (`[economics.prices]`): {entry id or "*": keys}, taken as certain."""
    raw = part.scenario.spec.economics.prices
    fixed: dict[str, set[str]] = {"*": {k for k, v in raw.items() if not isinstance(v, dict)}}
    fixed.update({k: set(v) for k, v in raw.items() if isinstance(v, dict)})
    return fixed


def _monte_carlo(
    problem: dict[str, Any],
    uncertainty: dict[str, Any],
    samples: int,
    on_progress: Callable[[McProgress], None] | None,
    handle: _core.RoiHandle | None,
    poll_s: float = 0.1,
    first: int = 0,
) -> dict[str, Any]:
    """Samples `first .. first + samples` of the Monte Carlo in a worker thread (GIL released), progress polled here;
    Ctrl-C or an exception from `on_progress` cancels it (milliseconds) and is re-raised."""
    handle = handle or _core.RoiHandle()
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["result"] = _core.roi_monte_carlo(problem, uncertainty, handle, first, samples)
        except BaseException as err:  # handed to the caller's thread
            box["error"] = err

    start = time.perf_counter()
    thread = threading.Thread(target=work, name="scalefront-roi-mc", daemon=True)
    thread.start()
    try:
        while thread.is_alive():
            thread.join(poll_s)
            if on_progress:
                on_progress(McProgress(handle.done(), samples, time.perf_counter() - start))
    except BaseException:
        handle.cancel()
        thread.join()
        raise
    if "error" in box:
        raise box["error"]
    if on_progress:
        on_progress(McProgress(handle.done(), samples, time.perf_counter() - start))
    result: dict[str, Any] = box["result"]
    return result


def _mc_shard(job: tuple[dict[str, Any], dict[str, Any], int, int]) -> dict[str, Any]:
    """Samples `first .. first + count` on a cluster worker (a module-level function, so that it pickles), with its
    progress sent to the caller; the caller's Ctrl-C or limit cancels it."""
    from scalefront.engine import cluster

    problem, uncertainty, first, count = job

    def watch(p: McProgress) -> None:
        cluster.report(done=p.done)
        cluster.stop_if_cancelled()  # _monte_carlo cancels the run and re-raises

    result = _monte_carlo(problem, uncertainty, count, watch, None, first=first)
    cluster.report(done=count, final=True)
    return result


def _sample_shards(
    problem: dict[str, Any], uncertainty: dict[str, Any], samples: int, slots: int
) -> list[tuple[dict[str, Any], dict[str, Any], int, int]]:
    """Contiguous ranges of samples, four per task slot of the cluster (so that a slow worker's share is small)."""
    n = max(1, min(samples, 4 * slots))
    edges = [samples * i // n for i in range(n + 1)]
    return [(problem, uncertainty, lo, hi - lo) for lo, hi in itertools.pairwise(edges) if hi > lo]


def _monte_carlo_on_cluster(
    problem: dict[str, Any],
    uncertainty: dict[str, Any],
    samples: int,
    where: str,
    workers: int | None,
    on_progress: Callable[[McProgress], None] | None,
) -> dict[str, Any]:
    """The Monte Carlo in shards of samples on a cluster (`scalefront.engine.cluster.map_shards`). Sample i is drawn
    from a counter-based hash of (seed, i, input), whatever shard or thread draws it, so the shards' outcome columns,
    concatenated in shard order, are the one-machine run's, and so are the summaries computed from them."""
    import numpy as np

    from scalefront.engine import cluster

    start = time.perf_counter()

    def watch(state: cluster.ShardProgress) -> None:
        if on_progress:
            on_progress(McProgress(int(state.total("done")), samples, time.perf_counter() - start))

    parts: list[dict[str, Any]] = cluster.map_shards(
        _mc_shard,
        lambda slots: _sample_shards(problem, uncertainty, samples, slots),
        cluster=where,
        workers=workers,
        on_progress=watch,
    )
    counts = []
    for c, first in enumerate(parts[0]["counts"]):
        columns = {k: np.concatenate([p["counts"][c]["outcomes"][k] for p in parts]) for k in first["outcomes"]}
        summary = _core.roi_summarise(first["gpus"], columns)
        counts.append({"gpus": first["gpus"], "outcomes": columns, "summary": summary})
    if on_progress:
        on_progress(McProgress(samples, samples, time.perf_counter() - start))
    return {"counts": counts, "cancelled": False, "payback_kinds": parts[0]["payback_kinds"]}


def compare(
    scenario: str | tuple[dict[str, Any], str],
    fabric_a: str = "ib-ndr",
    fabric_b: str = "roce-400g",
    *,
    catalog: Catalog | None = None,
    options: RoiOptions | None = None,
    on_progress: Callable[[McProgress], None] | None = None,
    handle: _core.RoiHandle | None = None,
    cluster: str | None = None,
    workers: int | None = None,
) -> RoiResult:
    """Compare fabric A with fabric B over a scenario's GPU counts and workloads, owning the cluster for its life.

    `scenario` is a built-in id, a file, or an already parsed scenario `(raw, name)`. `on_progress` is called about
    every 0.1 s during the Monte Carlo; `handle` (a `scalefront._core.RoiHandle`) lets a caller cancel it from
    another thread (in this process); `cluster` (auto, local or a Dask scheduler address; `workers` for a local
    one, see `scalefront.engine.cluster`) runs the Monte Carlo in shards of samples on a cluster, with the same
    numbers as here (Ctrl-C or an exception from `on_progress` cancels every shard). Raises `UsageError`, `CatalogError`
    or `ConfigurationError` for bad input, one line each.
    """
    opts = options or RoiOptions()
    cat = catalog or builtin_catalog()
    _check_fabrics(cat, fabric_a, fabric_b)
    from scalefront.engine.cluster import resolve

    where = resolve(cluster, workers)  # a bad value or a missing extra is refused before any work
    if opts.samples < 1:
        raise UsageError(f"samples={opts.samples}: expected at least 1")
    if opts.premium is not None and not (math.isfinite(opts.premium) and opts.premium > 0):
        raise UsageError(f"premium={opts.premium}: expected a positive number such as 1.3")
    if opts.value_usd_per_gpu_hour is not None and not (
        math.isfinite(opts.value_usd_per_gpu_hour) and opts.value_usd_per_gpu_hour >= 0
    ):
        raise UsageError(f"value_usd_per_gpu_hour={opts.value_usd_per_gpu_hour}: expected a number >= 0")
    mix = load_mix(
        scenario,
        cat,
        fabrics=[fabric_a, fabric_b],
        group_by=_CANDIDATE_GROUPS,
        objectives=["time_to_train_days", "cost_to_train_usd"],
        cost_mode="own",
    )
    first = mix[0].scenario
    name = scenario if isinstance(scenario, str) else first.name
    if len(first.gpu_names) != 1:
        raise UsageError(
            f"{first.path}: roi compares fabrics on one GPU type; the scenario lists {', '.join(first.gpu_names)}"
        )
    swept = [(part, run_sweep(part.scenario)) for part in mix]
    designs = _designs(swept, fabric_a, fabric_b, max(1, opts.candidates))
    counts = sorted({d["gpus"] for d in designs if d["side"] == 0} & {d["gpus"] for d in designs if d["side"] == 1})
    if not counts:
        raise UsageError(f"{name}: no GPU count has a feasible configuration on both {fabric_a} and {fabric_b}")
    generation = getattr(cat.gpu(first.gpu_names[0]), "generation", None)
    regimes = [(generation, part.scenario.model.is_moe) for part in mix]
    common, collective, error_label = model_error_residuals(opts.model_error, cat, regimes)
    inputs = (
        _fabric_inputs(fabric_a, 0, cat.fabric(fabric_a))
        + _fabric_inputs(fabric_b, 1, cat.fabric(fabric_b))
        + _price_inputs(cat, fabric_a, fabric_b, first.gpu_names[0], first.scale_up_names[0], _fixed_prices(mix[0]))
        + _error_inputs(common, collective, fabric_a, fabric_b)
    )
    problem = {
        "spaces": [part.scenario.space for part in mix],
        "shares": [part.share for part in mix],
        "designs": designs,
        "options": {
            "design": opts.design,
            "premium": opts.premium,
            "value_usd_per_gpu_hour": opts.value_usd_per_gpu_hour,
        },
    }
    uncertainty = {
        "inputs": [
            {"name": i.name, "targets": i.targets, "low": i.low, "typical": i.typical, "high": i.high,
             "empirical": i.empirical}
            for i in inputs
        ],
        "samples": opts.samples,
        "seed": opts.seed,
    }  # fmt: skip
    typical = _core.roi_compare(problem, uncertainty)
    if where is not None:
        mc = _monte_carlo_on_cluster(problem, uncertainty, opts.samples, where, workers, on_progress)
    else:
        mc = _monte_carlo(problem, uncertainty, opts.samples, on_progress, handle)
    from scalefront.roi_text import verdict_text

    frames = _frames(typical, mc, inputs, mix, fabric_a, fabric_b, cat)
    headline = opts.headline_gpus or counts[-1]
    if headline not in counts:
        raise UsageError(f"--gpus {headline}: not a GPU count of the comparison ({', '.join(map(str, counts))})")
    frontier = _frontier(swept[0][1])
    return RoiResult(
        scenario=name,
        fabric_a=fabric_a,
        fabric_b=fabric_b,
        options=opts,
        verdict=verdict_text(frames, inputs, headline, fabric_a, fabric_b, cat, mix),
        headline_gpus=headline,
        frontier=frontier,
        inputs=inputs,
        model_error=error_label,
        mc_cancelled=bool(mc["cancelled"]),
        **frames,
    )


def _frontier(result: SweepResult) -> pl.DataFrame:
    """Own-mode (total cost of ownership) time-vs-cost frontier per (fabric, topology)."""
    kept = result.kept.filter(pl.col("feasible")).with_columns(pl.col("cost_own_usd").alias("cost_to_train_usd"))
    return pareto(kept, ["fabric", "topology", "oversubscription"], ["time_to_train_days", "cost_to_train_usd"])


_TABLE_KEYS = (
    "speed_ratio",
    "capex_a_usd",
    "capex_b_usd",
    "opex_a_usd_per_year",
    "opex_b_usd_per_year",
    "tco_a_usd",
    "tco_b_usd",
    "fabric_a_usd",
    "fabric_b_usd",
    "premium",
    "break_even_premium",
    "savings_usd",
    "npv_usd",
    "value_usd_per_gpu_hour",
    "speed_value_usd",
    "payback",
    "payback_months",
    "life_months",
    "usd_per_useful_gpu_hour_a",
    "usd_per_useful_gpu_hour_b",
)


def _frames(
    typical: dict[str, Any],
    mc: dict[str, Any],
    inputs: list[UncertainInput],
    mix: list[MixPart],
    a: str,
    b: str,
    catalog: Catalog,
) -> dict[str, pl.DataFrame]:
    """The result's frames from the core's dicts (no arithmetic beyond labelling)."""
    summaries = {c["gpus"]: c["summary"] for c in mc["counts"]}
    kinds = mc["payback_kinds"]
    rows, work, bars, breakdown, samples = [], [], [], [], []
    for c in typical["counts"]:
        g = c["gpus"]
        s = summaries[g]
        row: dict[str, Any] = {
            "gpus": g,
            "fabric_a": a,
            "fabric_b": b,
            "topology_a": c["topology_a"],
            "topology_b": c["topology_b"],
            "days_a": c["a"]["days"][0],
            "days_b": c["b"]["days"][0],
            "network_capex_a_usd": c["a"]["network_capex_usd"],
            "network_capex_b_usd": c["b"]["network_capex_usd"],
            **{k: c[k] for k in _TABLE_KEYS},
            "usd_per_mtoken_a": c["usd_per_mtoken_a"][0],
            "usd_per_mtoken_b": c["usd_per_mtoken_b"][0],
            "samples": s["samples"],
            "p_a_cheaper": s["p_a_cheaper"],
            "p_payback_within_life": s["p_payback_within_life"],
        }
        for key in ("break_even_premium", "savings_usd", "npv_usd", "payback_months", "speed_ratio"):
            for q, v in zip(("p10", "p50", "p90"), s[key], strict=True):
                row[f"{key}_{q}"] = v
        rows.append(row)
        for w, part in enumerate(mix):
            work.append(
                {
                    "gpus": g,
                    "workload": part.name,
                    "share": part.share,
                    "days_a": c["a"]["days"][w],
                    "days_b": c["b"]["days"][w],
                    "tokens_per_s_a": c["a"]["tokens_per_s"][w],
                    "tokens_per_s_b": c["b"]["tokens_per_s"][w],
                    "usd_per_mtoken_a": c["usd_per_mtoken_a"][w],
                    "usd_per_mtoken_b": c["usd_per_mtoken_b"][w],
                    # Renting the same GPUs instead, for comparison only (the verdict is in own mode).
                    "rent_a_usd": c["a"]["rent_usd"][w],
                    "rent_b_usd": c["b"]["rent_usd"][w],
                }
            )
        for rank, bar in enumerate(c["tornado"]):
            i = inputs[bar["input"]]
            flip = bar["flip"]
            direction = "" if math.isnan(flip) else ("below" if flip < bar["typical"] else "above")
            bars.append(
                {
                    "gpus": g,
                    "rank": rank + 1,
                    "input": i.name,
                    "unit": i.unit,
                    "low": bar["low"] * i.display_scale,
                    "typical": bar["typical"] * i.display_scale,
                    "high": bar["high"] * i.display_scale,
                    "savings_low_usd": bar["savings_low_usd"],
                    "savings_high_usd": bar["savings_high_usd"],
                    "break_even_low": bar["break_even_low"],
                    "break_even_high": bar["break_even_high"],
                    "flip": None if math.isnan(flip) else flip * i.display_scale,
                    "flip_direction": direction,
                }
            )
        for side, fabric in (("a", a), ("b", b)):
            for component, usd in c[side]["breakdown_usd"].items():
                breakdown.append({"gpus": g, "fabric": fabric, "component": component, "usd": usd})
    for c in mc["counts"]:
        o = c["outcomes"]
        n = len(o["premium"])
        samples.append(
            pl.DataFrame(
                {
                    "gpus": pl.Series([c["gpus"]] * n, dtype=pl.Int64),
                    "sample": pl.Series(range(n), dtype=pl.Int64),
                    **{k: o[k] for k in ("premium", "break_even_premium", "savings_usd", "npv_usd", "speed_ratio")},
                    "payback": pl.Series([kinds[i] for i in o["payback"]], dtype=pl.Utf8),
                    "payback_months": o["payback_months"],
                }
            )
        )
    return {
        "table": pl.DataFrame(rows),
        "workloads": pl.DataFrame(work),
        "tornado": pl.DataFrame(bars, schema_overrides={"flip": pl.Float64}),
        "samples": pl.concat(samples) if samples else pl.DataFrame(),
        "breakdown": pl.DataFrame(breakdown),
    }


def fabric_label(catalog: Catalog, name: str) -> str:
    """A fabric's family for prose: InfiniBand, Ethernet, EFA, TCP (with its id)."""
    try:
        kind = catalog.fabric(name).kind
    except CatalogError:
        return name
    family = {
        "infiniband": "InfiniBand",
        "roce": "Ethernet",
        "uec": "Ultra Ethernet",
        "efa": "EFA",
        "tcp": "TCP Ethernet",
    }.get(kind, kind)
    return f"{family} ({name})"


def input_names(inputs: Sequence[UncertainInput]) -> list[str]:
    return [i.name for i in inputs]
