"""`compare(scenario, a, b, options=...)`: the whole comparison of fabric A with one or more designs B (fabrics,
or operating modes of one), as numbers. A quote, when given, replaces the prices it covers. Each workload is swept
once at typical values over every fabric (the candidates); the uncertain inputs are gathered with their correlated
groups; the core compares each (GPU count, B) pair at typical values with the tornado of every input and the
premium's cash flows, and the Monte Carlo re-optimises among the candidates for each sample (A's design evaluated
once for every B), here or on a cluster; the frames label what the core returns.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
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
from scalefront.roi.designs import CANDIDATE_GROUPS, designs
from scalefront.roi.frames import frames
from scalefront.roi.lifecycle import Lifecycle, lifecycle_of, serving_error_input, split_frame, with_serving
from scalefront.roi.model_error import collective_error_terms, model_error_residuals
from scalefront.roi.quote import apply_quote, load_quote
from scalefront.roi.result import McProgress, RoiOptions, RoiResult, UncertainInput
from scalefront.roi.run import analyse, monte_carlo_on_cluster
from scalefront.roi.uncertain import (
    error_inputs,
    fabric_inputs,
    fixed_prices,
    framework_inputs,
    grouped,
    placement_inputs,
    price_inputs,
)

__all__ = ["MAX_PREMIUM", "MAX_VALUE_USD_PER_GPU_HOUR", "Prepared", "compare", "finish", "prepare"]

#: The largest premium of A's fabric over B's a comparison takes (EST: quotes differ by 1.1-2x; 100x is a typo).
MAX_PREMIUM = 100.0
#: The most an extra busy GPU-hour may be worth (EST: GPUs rent for $1-10 an hour; $10,000 is a typo).
MAX_VALUE_USD_PER_GPU_HOUR = 10_000.0


def compare(
    scenario: str | tuple[dict[str, Any], str],
    fabric_a: str = "ib-ndr",
    fabric_b: str | Sequence[str] = "roce-400g",
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
    """Compare fabric A with each design B (one fabric id, or several: fabrics or operating modes of one) over a
    scenario's GPU counts and workloads, owning the cluster for its life.

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
    prepared = prepare(scenario, fabric_a, fabric_b, catalog, opts, cluster, workers, max_configs, time_limit_s)
    problem, uncertainty = prepared.problem, prepared.uncertainty
    if prepared.where is not None:
        typical = roi_compare(problem, uncertainty)
        mc = monte_carlo_on_cluster(problem, uncertainty, opts.samples, prepared.where, workers, on_progress)
    else:
        typical, mc = analyse(problem, uncertainty, on_progress, handle)
    return finish(prepared, typical, mc)


@dataclass(frozen=True)
class Prepared:
    """A comparison ready for the core: the catalog (with any quote applied), the workloads and their sweeps, the
    uncertain inputs, and the core's problem and uncertainty dicts."""

    name: str
    fabric_a: str
    bs: list[str]
    catalog: Catalog
    options: RoiOptions
    mix: list[MixPart]
    swept: list[tuple[MixPart, Any]]
    #: The designs with their candidates (`scalefront.roi.designs.designs`), as the core's problem takes them.
    candidates: list[dict[str, Any]]
    counts: list[int]
    inputs: list[UncertainInput]
    groups: list[str]
    error_label: str
    problem: dict[str, Any]
    uncertainty: dict[str, Any]
    digest: str
    where: str | None
    #: The scenario's lifecycle (training, then serving), None without one.
    lifecycle: Lifecycle | None = None


def prepare(
    scenario: str | tuple[dict[str, Any], str],
    fabric_a: str,
    fabric_b: str | Sequence[str],
    catalog: Catalog | None,
    opts: RoiOptions,
    cluster: str | None = None,
    workers: int | None = None,
    max_configs: int = DEFAULT_MAX_CONFIGS,
    time_limit_s: float = DEFAULT_TIME_LIMIT_S,
    swept_as: Prepared | None = None,
) -> Prepared:
    """Everything before the core's comparison: the quote applied, the checks, the sweeps and the candidates, the
    inputs, the problem. `swept_as`: a comparison of the same scenario, fabrics and physics at other prices whose
    sweeps and candidates serve this one (`_candidates`)."""
    bs = [fabric_b] if isinstance(fabric_b, str) else list(dict.fromkeys(fabric_b))
    cat = catalog or builtin_catalog()
    digest = hashlib.sha256(cat_digest(cat).encode())
    if opts.quote is not None:
        quote = load_quote(opts.quote, cat)
        cat = apply_quote(cat, quote)
        digest.update(quote.digest.encode())
    # Every design by its canonical id (`roce-400g` is `roce-400g@untuned`): every frame names the modes.
    fabric_a, bs = cat.fabric_id(fabric_a), list(dict.fromkeys(cat.fabric_id(b) for b in bs))
    where = _check(cat, fabric_a, bs, opts, cluster, workers)
    mix = _mix(scenario, cat, fabric_a, bs)
    name = scenario if isinstance(scenario, str) else mix[0].scenario.name
    life = lifecycle_of(mix[0].scenario, cat)
    inputs, groups, error_label = _inputs(cat, mix, fabric_a, bs, opts.model_error, life)  # a bad file first
    swept, candidates = _candidates(mix, fabric_a, bs, opts, (max_configs, time_limit_s), swept_as)
    if life is not None:
        candidates = with_serving(life, candidates, [fabric_a, *bs], mix[0], cat)
    counts = sorted(
        {d["gpus"] for d in candidates if d["side"] == 0} & {d["gpus"] for d in candidates if d["side"] > 0}
    )
    if not counts:
        raise UsageError(f"{name}: no GPU count has a feasible configuration on {fabric_a} and {', '.join(bs)}")
    headline = opts.headline_gpus or counts[-1]
    if headline not in counts:
        raise UsageError(f"--gpus {headline}: not a GPU count of the comparison ({', '.join(map(str, counts))})")
    problem, uncertainty = _problem(mix, candidates, opts, life), _uncertainty(inputs, groups, opts)
    return Prepared(
        name,
        fabric_a,
        bs,
        cat,
        opts,
        mix,
        swept,
        candidates,
        counts,
        inputs,
        groups,
        error_label,
        problem,
        uncertainty,
        digest.hexdigest()[:16],
        where,
        life,
    )


def finish(p: Prepared, typical: dict[str, Any], mc: dict[str, Any], tornado: bool = True) -> RoiResult:
    """The result of a prepared comparison from the core's typical-value report and Monte Carlo (`tornado`: it
    carries the tornado)."""
    cat, a, bs = p.catalog, p.fabric_a, p.bs
    return RoiResult(
        scenario=p.name,
        fabric_a=a,
        fabric_b=bs[0],
        fabrics_b=tuple(bs),
        options=p.options,
        headline_gpus=p.options.headline_gpus or p.counts[-1],
        inputs=p.inputs,
        model_error=p.error_label,
        mix=p.mix,
        fabric_labels=(cat.fabric_label(a), cat.fabric_label(bs[0])),
        labels={f: cat.fabric_label(f) for f in (a, *bs)},
        families=_families(cat, a, bs),
        fabric_modes={f: cat.fabric_mode_summary(f) for f in (a, *bs)},
        groups=p.groups,
        mc_cancelled=bool(mc["cancelled"]),
        catalog=cat,
        fingerprint=p.digest,
        tornado_computed=tornado,
        lifecycle=p.lifecycle,
        lifecycle_split=split_frame(p.lifecycle, typical, p.problem["designs"], bs),
        **frames(typical, mc, p.inputs, p.mix, a, bs, cat, collective_errors(cat.errors)),
    )


def _families(cat: Catalog, a: str, bs: Sequence[str]) -> dict[str, str]:
    """Each design's family for prose ("InfiniBand", "Ethernet"), or its id where A and a design it is compared
    with are of one family (branded against white-box RoCE): "Ethernet costs more" would not say which."""
    words = {f: cat.fabric_label(f).split(" (", 1)[0] for f in (a, *bs)}
    shared = {words[a]} & {words[b] for b in bs}
    return {f: f if w in shared else w for f, w in words.items()}


def cat_digest(catalog: Catalog) -> str:
    """What the catalog's figures were read from: its files' digest (`Catalog.digest`), or its entries when it
    was built in memory."""
    return getattr(catalog, "digest", "") or repr(sorted(catalog.fabric_prices))


def _candidates(
    mix: list[MixPart],
    fabric_a: str,
    bs: list[str],
    opts: RoiOptions,
    limits: tuple[int, float],
    swept_as: Prepared | None,
) -> tuple[list[tuple[MixPart, SweepResult]], list[dict[str, Any]]]:
    """Each workload's sweep and the designs' candidates: `swept_as`'s when given (a price moves no step time, and
    each design's candidates are its fastest layouts, so the same at any prices; the core checks the physics when
    it re-prices, `RoiSession.reprice_as`), else swept here."""
    if swept_as is not None:
        return swept_as.swept, swept_as.candidates
    swept = _swept(mix, *limits)
    return swept, designs(swept, fabric_a, bs, max(1, opts.candidates))


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


def _check(
    catalog: Catalog, a: str, bs: Sequence[str], opts: RoiOptions, cluster: str | None, workers: int | None
) -> str | None:
    """The fabrics, where the Monte Carlo runs (None: here) and the options, checked before any work."""
    if not bs:
        raise UsageError("--b: name at least one fabric to compare with")
    if a in bs:
        raise UsageError(f"--a and --b name the same fabric ({a}); compare two different fabrics")
    for name in (a, *bs):
        catalog.fabric(name)  # unknown names get their suggestion first
    for name in (a, *bs):
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


def _mix(scenario: str | tuple[dict[str, Any], str], catalog: Catalog, a: str, bs: Sequence[str]) -> list[MixPart]:
    """Every workload of the scenario, built over every fabric in own mode, grouped to keep the candidates."""
    mix = load_mix(
        scenario,
        catalog,
        fabrics=[a, *bs],
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


def _inputs(
    catalog: Catalog, mix: list[MixPart], a: str, bs: Sequence[str], model_error: str, life: Lifecycle | None = None
) -> tuple[list[UncertainInput], list[str], str]:
    """Every uncertain input (the designs' figures, the prices, the model's error, and with a lifecycle the
    serving model's) with its correlated groups' loadings, the groups, and where the error came from."""
    first = mix[0].scenario
    generation = getattr(catalog.gpu(first.gpu_names[0]), "generation", None)
    regimes = [(generation, part.scenario.model.is_moe) for part in mix]
    sides = [(a, 0), *((b, k + 1) for k, b in enumerate(bs))]
    common, common_label = model_error_residuals(model_error, catalog, regimes)
    collective = collective_error_terms(catalog, [a, *bs], model_error)
    inputs = (
        fabric_inputs(catalog, sides)
        + placement_inputs(mix[0])
        + framework_inputs(catalog, mix)
        + price_inputs(catalog, sides, first.gpu_names[0], first.scale_up_names[0], fixed_prices(mix[0]))
        + error_inputs(common, collective, sides)
        + (serving_error_input(catalog, model_error) if life is not None else [])
    )
    inputs, groups = grouped(inputs, catalog)
    label = "none" if model_error == "none" else f"step time: {common_label}; communication: {collective.label}"
    if life is not None and model_error != "none":
        label += "; serving: serving validation residuals (scalefront validate)"
    return inputs, groups, label


def _problem(
    mix: list[MixPart], candidates: list[dict[str, Any]], opts: RoiOptions, life: Lifecycle | None = None
) -> dict[str, Any]:
    """The core's `RoiProblem`: each workload's space and share, the designs and the comparison's options (with a
    lifecycle, its months of training)."""
    return {
        "spaces": [part.scenario.space for part in mix],
        "shares": [part.share for part in mix],
        "designs": candidates,
        "options": {
            "design": opts.design,
            "premium": opts.premium,
            "value_usd_per_gpu_hour": opts.value_usd_per_gpu_hour,
            "training_months": None if life is None else float(life.training_months),
        },
    }


def _uncertainty(inputs: list[UncertainInput], groups: list[str], opts: RoiOptions) -> dict[str, Any]:
    """The core's `Uncertainty`: every input's distribution, targets and loadings, the groups, samples and seed."""
    return {
        "inputs": [
            {
                "name": i.name,
                "targets": i.targets,
                "low": i.low,
                "typical": i.typical,
                "high": i.high,
                "empirical": i.empirical,
                "weights": [],
                "integer": i.integer,
                "loadings": [{"group": g, "loading": v} for g, v in i.loadings],
            }
            for i in inputs
        ],
        "groups": groups,
        "samples": opts.samples,
        "seed": opts.seed,
    }
