"""`compare(scenario, a, b, options=...)`: the whole comparison, as numbers. Each workload is swept once at
typical values over both fabrics (the candidates); the uncertain inputs are gathered; the core compares the
designs at typical values with the tornado of every input, and the Monte Carlo re-optimises among the candidates
for each sample, here or on a cluster; the frames label what the core returns.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from scalefront._core import RoiHandle, roi_compare
from scalefront.engine.cluster import resolve
from scalefront.engine.limits import (
    DEFAULT_MAX_CONFIGS,
    DEFAULT_TIME_LIMIT_S,
    SweepLimits,
    check_size,
    engine_threads,
)
from scalefront.engine.sweep import SweepResult, run_sweep
from scalefront.errors import UsageError
from scalefront.fidelity.validation.fabric_error import collective_errors
from scalefront.inputs.catalog.loader import Catalog, builtin_catalog
from scalefront.inputs.scenario.build import MixPart, load_mix
from scalefront.roi.designs import CANDIDATE_GROUPS, designs, own_frontier
from scalefront.roi.frames import frames
from scalefront.roi.model_error import model_error_residuals
from scalefront.roi.result import McProgress, RoiOptions, RoiResult, UncertainInput
from scalefront.roi.run import monte_carlo, monte_carlo_on_cluster
from scalefront.roi.uncertain import error_inputs, fabric_pair_inputs, fixed_prices, placement_inputs, price_inputs

__all__ = ["MAX_PREMIUM", "MAX_VALUE_USD_PER_GPU_HOUR", "compare"]

#: The largest premium of A's fabric over B's a comparison takes (EST: quotes differ by 1.1-2x; 100x is a typo).
MAX_PREMIUM = 100.0
#: The most an extra busy GPU-hour may be worth (EST: GPUs rent for $1-10 an hour; $10,000 is a typo).
MAX_VALUE_USD_PER_GPU_HOUR = 10_000.0


def compare(
    scenario: str | tuple[dict[str, Any], str],
    fabric_a: str = "ib-ndr",
    fabric_b: str = "roce-400g",
    *,
    catalog: Catalog | None = None,
    options: RoiOptions | None = None,
    on_progress: Callable[[McProgress], None] | None = None,
    handle: RoiHandle | None = None,
    cluster: str | None = None,
    workers: int | None = None,
    max_configs: int = DEFAULT_MAX_CONFIGS,
    time_limit_s: float = DEFAULT_TIME_LIMIT_S,
) -> RoiResult:
    """Compare fabric A with fabric B over a scenario's GPU counts and workloads, owning the cluster for its life.

    `scenario` is a built-in id, a file, or an already parsed scenario `(raw, name)`. `on_progress` is called about
    every 0.1 s during the Monte Carlo; `handle` (a `scalefront._core.RoiHandle`) lets a caller cancel it from
    another thread (in this process); `cluster` (auto, local or a Dask scheduler address; `workers` for a local
    one, see `scalefront.engine.cluster`) runs the Monte Carlo in shards of samples on a cluster, with the same
    numbers as here (Ctrl-C or an exception from `on_progress` cancels every shard). Each workload's sweep holds
    the sweep command's limits, `max_configs` and `time_limit_s`. Raises `UsageError`, `CatalogError` or
    `ConfigurationError` for bad input, one line each. The result holds numbers and frames; `scalefront.roi.text`
    words them.
    """
    opts = options or RoiOptions()
    cat = catalog or builtin_catalog()
    # Both fabrics by their canonical ids (`roce-400g` is `roce-400g@untuned`): every frame names the modes.
    fabric_a, fabric_b = cat.fabric_id(fabric_a), cat.fabric_id(fabric_b)
    where = _check(cat, fabric_a, fabric_b, opts, cluster, workers)
    mix = _mix(scenario, cat, fabric_a, fabric_b)
    name = scenario if isinstance(scenario, str) else mix[0].scenario.name
    inputs, error_label = _inputs(cat, mix, fabric_a, fabric_b, opts.model_error)  # a bad file before any work
    swept = _swept(mix, max_configs, time_limit_s)
    candidates = designs(swept, fabric_a, fabric_b, max(1, opts.candidates))
    counts = _common_counts(candidates, name, fabric_a, fabric_b)
    problem, uncertainty = _problem(mix, candidates, opts), _uncertainty(inputs, opts)
    typical = roi_compare(problem, uncertainty)
    if where is not None:
        mc = monte_carlo_on_cluster(problem, uncertainty, opts.samples, where, workers, on_progress)
    else:
        mc = monte_carlo(problem, uncertainty, opts.samples, on_progress, handle)
    headline = opts.headline_gpus or counts[-1]
    if headline not in counts:
        raise UsageError(f"--gpus {headline}: not a GPU count of the comparison ({', '.join(map(str, counts))})")
    return RoiResult(
        scenario=name,
        fabric_a=fabric_a,
        fabric_b=fabric_b,
        options=opts,
        headline_gpus=headline,
        frontier=own_frontier(swept[0][1]),
        inputs=inputs,
        model_error=error_label,
        mix=mix,
        fabric_labels=(cat.fabric_label(fabric_a), cat.fabric_label(fabric_b)),
        fabric_modes=(cat.fabric_mode_summary(fabric_a), cat.fabric_mode_summary(fabric_b)),
        mc_cancelled=bool(mc["cancelled"]),
        **frames(typical, mc, inputs, mix, fabric_a, fabric_b, collective_errors(cat.errors)),
    )


def _common_counts(candidates: list[dict[str, Any]], name: str, a: str, b: str) -> list[int]:
    """The GPU counts with a feasible design on both fabrics, ascending (none: a one-line UsageError)."""
    counts = sorted(
        {d["gpus"] for d in candidates if d["side"] == 0} & {d["gpus"] for d in candidates if d["side"] == 1}
    )
    if not counts:
        raise UsageError(f"{name}: no GPU count has a feasible configuration on both {a} and {b}")
    return counts


def _swept(mix: list[MixPart], max_configs: int, time_limit_s: float) -> list[tuple[MixPart, SweepResult]]:
    """Each workload's sweep at typical values within the limits: every space counted first (one over
    `max_configs` is refused before any work), each sweep stopped when projected past `time_limit_s`."""
    for part in mix:
        check_size(part.scenario.path, part.scenario.size(), max_configs)
    out = []
    for part in mix:
        limits = SweepLimits(part.scenario.path, part.scenario.size(), time_limit_s, threads=engine_threads())
        out.append((part, run_sweep(part.scenario, on_progress=limits)))
    return out


def _check(catalog: Catalog, a: str, b: str, opts: RoiOptions, cluster: str | None, workers: int | None) -> str | None:
    """The fabrics, where the Monte Carlo runs (None: here) and the options, checked before any work."""
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
    where = resolve(cluster, workers)  # a bad value or a missing extra is refused before any work
    if opts.samples < 1:
        raise UsageError(f"samples={opts.samples}: expected at least 1")
    if opts.premium is not None and not (math.isfinite(opts.premium) and 0 < opts.premium <= MAX_PREMIUM):
        raise UsageError(
            f"premium={opts.premium:g}: expected a multiple above 0 and at most {MAX_PREMIUM:g}, such as 1.3"
        )
    value = opts.value_usd_per_gpu_hour
    if value is not None and not (math.isfinite(value) and 0 <= value <= MAX_VALUE_USD_PER_GPU_HOUR):
        raise UsageError(
            f"value_usd_per_gpu_hour={value:g}: expected a number of dollars from 0 to "
            f"{MAX_VALUE_USD_PER_GPU_HOUR:,.0f}"
        )
    return where


def _mix(scenario: str | tuple[dict[str, Any], str], catalog: Catalog, a: str, b: str) -> list[MixPart]:
    """Every workload of the scenario, built over the two fabrics in own mode, grouped to keep the candidates."""
    mix = load_mix(
        scenario,
        catalog,
        fabrics=[a, b],
        group_by=CANDIDATE_GROUPS,
        objectives=["time_to_train_days", "cost_to_train_usd"],
        cost_mode="own",
    )
    first = mix[0].scenario
    if len(first.gpu_names) != 1:
        raise UsageError(
            f"{first.path}: roi compares fabrics on one GPU type; the scenario lists {', '.join(first.gpu_names)}"
        )
    return mix


def _inputs(catalog: Catalog, mix: list[MixPart], a: str, b: str, model_error: str) -> tuple[list[UncertainInput], str]:
    """Every uncertain input (both fabrics' figures, the prices, the model's error) and where the error came from."""
    first = mix[0].scenario
    generation = getattr(catalog.gpu(first.gpu_names[0]), "generation", None)
    regimes = [(generation, part.scenario.model.is_moe) for part in mix]
    common, collective, error_label = model_error_residuals(model_error, catalog, regimes)
    inputs = (
        fabric_pair_inputs(a, catalog.fabric(a), b, catalog.fabric(b))
        + placement_inputs(mix[0])
        + price_inputs(catalog, a, b, first.gpu_names[0], first.scale_up_names[0], fixed_prices(mix[0]))
        + error_inputs(common, collective, a, b)
    )
    return inputs, error_label


def _problem(mix: list[MixPart], candidates: list[dict[str, Any]], opts: RoiOptions) -> dict[str, Any]:
    """The core's `RoiProblem`: each workload's space and share, the designs and the comparison's options."""
    return {
        "spaces": [part.scenario.space for part in mix],
        "shares": [part.share for part in mix],
        "designs": candidates,
        "options": {
            "design": opts.design,
            "premium": opts.premium,
            "value_usd_per_gpu_hour": opts.value_usd_per_gpu_hour,
        },
    }


def _uncertainty(inputs: list[UncertainInput], opts: RoiOptions) -> dict[str, Any]:
    """The core's `Uncertainty`: every input's range and targets, the samples and the seed."""
    return {
        "inputs": [
            {
                "name": i.name,
                "targets": i.targets,
                "low": i.low,
                "typical": i.typical,
                "high": i.high,
                "empirical": i.empirical,
            }
            for i in inputs
        ],
        "samples": opts.samples,
        "seed": opts.seed,
    }
