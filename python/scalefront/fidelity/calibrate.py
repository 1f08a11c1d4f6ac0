"""Calibrating a fabric from a buyer's own nccl-tests measurements (`scalefront calibrate`).

The runs of a proof of concept (read by `scalefront.nccl_log`) are predicted by the Rust core
(`collective_times`, the same collective model `evaluate` and sweeps use) with a base fabric's figures; the
figures the data identify (`FITTED_FIELDS`) are fitted by least squares on log bus bandwidth over the sizes that
carry training traffic (>= 64 KiB); the rest stay the base's. The result is a fabric catalog entry, with a dated
source per fitted figure saying what it was fitted from and how well, that loads with `--catalog`.

No collective math here: the core predicts each run's times; this module only compares them with the measured ones
(measured / predicted time = predicted / measured bus bandwidth at the same size and rank count) and moves the
fabric's figures.
"""

from __future__ import annotations

import math
import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from scalefront._core import collective_times
from scalefront.errors import UsageError
from scalefront.fidelity.nccl_log import Run
from scalefront.inputs.catalog.entries import FabricEntry
from scalefront.inputs.catalog.loader import Catalog

__all__ = [
    "FITTED_FIELDS",
    "MIN_SIZE_BYTES",
    "Calibration",
    "FittedField",
    "calibrate",
    "calibration_date",
    "figure_text",
    "size_text",
    "with_figures",
]


@dataclass(frozen=True)
class FittedField:
    """A fabric figure calibration may fit: its bounds, the load-balancing mechanisms it belongs to, and the data
    that identify it (runs at `node_counts` or more node counts, and a prediction that moves with it)."""

    name: str
    low: float
    high: float
    #: Printed when the data do not identify the field.
    identified_by: str
    #: The fabric's `load_balancing` values it applies to.
    mechanisms: tuple[str, ...]
    #: Distinct node counts among the multi-node runs needed before it is fitted.
    node_counts: int = 1
    #: Decimals kept in the written catalog entry.
    decimals: int = 3


_ALL = ("ecmp", "adaptive", "spraying")
#: What calibration fits, in this order (the one table to change when the fabric's fields change). Bounds: the
#: catalog's own limits where it has them (efficiency and load-balance efficiency are fractions), else wide
#: physical ones (a NIC + host round trip of 0-50 us; 1-64 queue pairs per connection).
FITTED_FIELDS: tuple[FittedField, ...] = (
    FittedField("efficiency", 0.2, 1.0, "bandwidth-bound sizes of runs over two or more nodes", _ALL),
    FittedField(
        "nic_latency_us", 0.0, 50.0, "latency-bound sizes (64 KiB up) of runs over two or more nodes", _ALL, 1, 2
    ),
    FittedField(
        "in_network_reduction_efficiency",
        0.0,
        2.0,
        "all-reduce runs whose time the model sets by in-network reduction (SHARP); 0 = not used",
        _ALL,
    ),
    FittedField(
        "load_balance_efficiency",
        0.2,
        1.0,
        "runs at two or more node counts whose traffic leaves a leaf switch in the model's topology",
        ("adaptive", "spraying"),
        2,
    ),
    FittedField(
        "qps_per_connection",
        1.0,
        64.0,
        "runs at two or more node counts whose traffic leaves a leaf switch in the model's topology",
        ("ecmp",),
        2,
        2,
    ),
)
#: Smallest message fitted: below it NCCL's protocol choice (LL, LL128) and launch overheads dominate, which the
#: model does not itemise (README, Fidelity).
MIN_SIZE_BYTES = 64 * 1024
#: Log residual above which a point counts less than quadratically in the fit (10%: beyond nccl-tests' own
#: run-to-run spread of a few percent).
ROBUST_SCALE = 0.1
#: A field moves no prediction by more than this (log) from one end of its box to the other: not identified.
_MIN_EFFECT = 0.005
#: A field whose effect is this collinear with the fields before it (share of its effect the others explain) is
#: not identified separately.
_MAX_SHARED = 0.9


@dataclass(frozen=True)
class Setup:
    """The cluster the runs were measured on, as the model sees it."""

    fabric_id: str
    fabric: FabricEntry
    scale_up_id: str
    scale_up: dict[str, Any]
    topology_id: str
    topology: dict[str, Any]
    #: The runs enabled in-network reduction (NCCL_COLLNET_ENABLE=1); NCCL's default is off.
    collnet: bool = False


@dataclass(frozen=True)
class PointFit:
    run: Run
    size_bytes: int
    line: int
    measured_busbw: float
    fitted_busbw: float

    @property
    def residual(self) -> float:
        """Fitted / measured bus bandwidth - 1 (positive: the calibrated model is too fast)."""
        return self.fitted_busbw / self.measured_busbw - 1.0


@dataclass(frozen=True)
class Calibration:
    """The result: fitted figures, what was not fitted and why, and every point's residual."""

    setup: Setup
    runs: tuple[Run, ...]
    #: Runs not used, with why.
    skipped: tuple[tuple[Run, str], ...]
    fitted: dict[str, float]
    #: Fields not fitted, with why.
    not_fitted: dict[str, str]
    points: tuple[PointFit, ...]
    date: str
    #: Fitted fields the data bound only loosely, with why.
    notes: tuple[str, ...] = ()

    @property
    def files(self) -> list[str]:
        return sorted({Path(r.file).name for r in self.runs})

    @property
    def median_abs_residual(self) -> float:
        return statistics.median(abs(p.residual) for p in self.points)

    @property
    def worst(self) -> PointFit:
        return max(self.points, key=lambda p: abs(p.residual))


def calibrate(
    runs: Sequence[Run],
    catalog: Catalog,
    fabric: str,
    *,
    gpu: str | None = None,
    scale_up: str | None = None,
    topology: str = "rail-fat-tree",
    oversubscription: float | None = None,
    collnet: bool = False,
    date: str | None = None,
) -> Calibration:
    """Fit `fabric`'s identified figures to `runs` (`collnet`: the runs enabled in-network reduction); `fabric` may
    name an operating mode (`roce-400g@tuned`), and the calibration names it canonically."""
    base, fabric = catalog.fabric(fabric), catalog.fabric_id(fabric)
    used, skipped = _usable(runs)
    setup = _setup(catalog, fabric, base, used, gpu, scale_up, topology, oversubscription, collnet)
    data = [(run, [p for p in run.points if p.size_bytes >= MIN_SIZE_BYTES]) for run in used]
    shapes = _shapes(data)
    measured = np.array([p.time_us * 1e-6 for _, pts in data for p in pts])

    def log_residuals(values: dict[str, float]) -> np.ndarray:
        logs: np.ndarray = np.log(measured / _predict(setup, shapes, values))
        return logs

    fields, not_fitted = _identified(setup, used, log_residuals)
    fitted = _fit(setup.fabric, fields, log_residuals)
    notes = _loose(fields, fitted, log_residuals)
    times = _predict(setup, shapes, fitted)
    points = []
    i = 0
    for run, pts in data:
        for p in pts:
            # Same size and ranks: busbw scales as 1 / time (nccl-tests doc/PERFORMANCE.md).
            fitted_busbw = p.busbw_gbytes_per_s * (p.time_us * 1e-6) / times[i]
            points.append(PointFit(run, p.size_bytes, p.line, p.busbw_gbytes_per_s, float(fitted_busbw)))
            i += 1
    return Calibration(
        setup, tuple(used), tuple(skipped), fitted, not_fitted, tuple(points), date or calibration_date(), notes
    )


def calibration_date() -> str:
    """YYYY-MM of the sources: SOURCE_DATE_EPOCH when set (reproducible output), else today (UTC)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    seconds = float(epoch) if epoch and epoch.strip().isdigit() else time.time()
    return time.strftime("%Y-%m", time.gmtime(seconds))


def _usable(runs: Sequence[Run]) -> tuple[list[Run], list[tuple[Run, str]]]:
    used, skipped = [], []
    for run in runs:
        if run.nodes < 2:
            skipped.append((run, "one node: its traffic never reaches the fabric"))
        elif not any(p.size_bytes >= MIN_SIZE_BYTES for p in run.points):
            skipped.append((run, f"no size of {size_text(MIN_SIZE_BYTES)} or more"))
        else:
            used.append(run)
    if not used:
        why = "; ".join(f"{r.where}: {reason}" for r, reason in skipped)
        raise UsageError(f"no run measures the fabric ({why}); calibrate needs runs over two or more nodes")
    return used, skipped


def _setup(
    catalog: Catalog,
    fabric_id: str,
    base: FabricEntry,
    runs: list[Run],
    gpu: str | None,
    scale_up: str | None,
    topology: str,
    oversubscription: float | None,
    collnet: bool,
) -> Setup:
    if scale_up is None:
        gpu = gpu or _gpu_of(catalog, runs)
        scale_up = catalog.gpu(gpu).default_scale_up
    elif gpu is not None:
        catalog.check_scale_up(gpu, scale_up)
    domain = catalog.scale_up_domain(scale_up).core_spec()
    topo = catalog.topology(topology).core_spec(oversubscription)
    return Setup(fabric_id, base, scale_up, domain, topology, topo, collnet)


def _gpu_of(catalog: Catalog, runs: list[Run]) -> str:
    """The catalog GPU the Rank lines' device names are, when --gpu is not given (only the default scale-up domain
    depends on it): the GPU with the longest of its `device_names` that every device name contains."""
    devices = sorted({r.device for r in runs})
    found = {
        (len(name), gid)
        for gid, entry in catalog.gpus.items()
        for name in entry.device_names
        if all(name.upper() in d.upper() for d in devices)
    }
    longest = max((n for n, _ in found), default=0)
    gpus = sorted(gid for n, gid in found if n == longest)
    if len(gpus) == 1:
        return gpus[0]
    if gpus:
        raise UsageError(
            f"the Rank lines' device ({', '.join(repr(d) for d in devices)}) fits GPUs {', '.join(gpus)} alike; "
            "pass --gpu or --scale-up"
        )
    raise UsageError(
        f"cannot tell the GPU from the Rank lines ({', '.join(repr(d) for d in devices)}); "
        f"pass --gpu (one of {', '.join(sorted(catalog.gpus))}) or --scale-up"
    )


def with_figures(base: FabricEntry, values: dict[str, float]) -> FabricEntry:
    """`base` with the figures in `values` replaced (its ranges and sources kept)."""
    return base.model_copy(update=values)


@dataclass(frozen=True)
class _Shapes:
    """The distinct measurements of the runs (ranks, GPUs per node, collective, sizes), each predicted once per
    evaluation however often the logs repeat it, and where each point's time is among their predictions."""

    shapes: list[tuple[int, int, str, tuple[float, ...]]]
    take: np.ndarray


def _shapes(data: list[tuple[Run, list[Any]]]) -> _Shapes:
    first: dict[tuple[int, int, str, tuple[float, ...]], int] = {}  # a shape's first point among the predictions
    predicted = 0
    take: list[int] = []
    for run, pts in data:
        key = (run.ranks, run.gpus_per_node, run.collective, tuple(float(p.size_bytes) for p in pts))
        if key not in first:
            first[key] = predicted
            predicted += len(pts)
        take += range(first[key], first[key] + len(pts))
    return _Shapes(list(first), np.array(take, dtype=np.int64))


def _predict(setup: Setup, shapes: _Shapes, values: dict[str, float]) -> np.ndarray:
    """The core's time (s) of every point, the fabric's figures replaced by `values`."""
    fabric = with_figures(setup.fabric, values).core_spec()
    if not setup.collnet:
        # NCCL reduces in the network only when asked (NCCL_COLLNET_ENABLE defaults to 0, docs/userguide env.rst
        # @5067397c), as the validation table's curves are judged.
        fabric["in_network_reduction_efficiency"] = 0.0
    out: list[float] = []
    for ranks, gpus_per_node, collective, sizes in shapes.shapes:
        # The runs' nodes hold gpus_per_node GPUs each: a scale-up domain no larger than that.
        domain = {**setup.scale_up, "domain_gpus": min(int(setup.scale_up["domain_gpus"]), gpus_per_node)}
        out += collective_times(
            {
                "scale_up": domain,
                "fabric": fabric,
                "topology": setup.topology,
                "gpus": ranks,
                "server_gpus": gpus_per_node,
                "op": collective,
                "sizes_bytes": list(sizes),
            }
        )
    predicted: np.ndarray = np.array(out)[shapes.take]
    return predicted


Residuals = Callable[[dict[str, float]], np.ndarray]


def _identified(setup: Setup, runs: list[Run], residuals: Residuals) -> tuple[list[FittedField], dict[str, str]]:
    """The fields the runs identify (in table order) and, for the others that apply, why not."""
    base = setup.fabric
    node_counts = len({r.nodes for r in runs})
    fields: list[FittedField] = []
    effects: list[np.ndarray] = []
    not_fitted: dict[str, str] = {}
    for f in FITTED_FIELDS:
        if base.load_balancing not in f.mechanisms:
            continue
        kept = f"kept {setup.fabric_id}'s {figure_text(getattr(base, f.name))}"
        if f.name == "in_network_reduction_efficiency" and not setup.collnet:
            not_fitted[f.name] = f"{kept}: the runs did not enable it (NCCL's default; pass --collnet if they did)"
            continue
        if node_counts < f.node_counts:
            counts = f"{node_counts} node count" + ("s" if node_counts != 1 else "")
            not_fitted[f.name] = f"{kept}: runs at {counts} only (needs {f.identified_by})"
            continue
        # Over the whole box, not locally: the model takes the fastest of several algorithms, so a figure may
        # matter only far from the base's value (in-network reduction capped by NVLink until it falls below
        # the ring).
        effect = residuals({f.name: f.high}) - residuals({f.name: f.low})
        if float(np.max(np.abs(effect))) < _MIN_EFFECT:
            not_fitted[f.name] = f"{kept}: no measured point depends on it (needs {f.identified_by})"
            continue
        if effects and _shared(effect, effects) > _MAX_SHARED:
            not_fitted[f.name] = f"{kept}: its effect cannot be told from {', '.join(g.name for g in fields)}'s"
            continue
        fields.append(f)
        effects.append(effect)
    return fields, not_fitted


def _loose(fields: list[FittedField], fitted: dict[str, float], residuals: Residuals) -> tuple[str, ...]:
    """Fitted fields on which no point depends near the fitted value (+-5% of the box): the data bound them
    only on one side (another part of the model, NVLink or a faster algorithm, sets those points)."""
    notes = []
    for f in fields:
        step = 0.05 * (f.high - f.low)
        lo, hi = max(f.low, fitted[f.name] - step), min(f.high, fitted[f.name] + step)
        effect = residuals({**fitted, f.name: hi}) - residuals({**fitted, f.name: lo})
        if float(np.max(np.abs(effect))) < _MIN_EFFECT:
            notes.append(
                f"{f.name} {figure_text(fitted[f.name])} is bounded, not measured: near it no point depends on it "
                "(another part of the model sets those points)"
            )
    return tuple(notes)


def _shared(effect: np.ndarray, others: list[np.ndarray]) -> float:
    """Share of `effect` (its norm) the other fields' effects explain by least squares."""
    basis = np.column_stack(others)
    coef, *_ = np.linalg.lstsq(basis, effect, rcond=None)
    rest = effect - basis @ coef
    return 1.0 - float(np.linalg.norm(rest) / np.linalg.norm(effect))


def _fit(base: FabricEntry, fields: list[FittedField], residuals: Residuals) -> dict[str, float]:
    """Least squares on log bus bandwidth over the fields' boxes (Nelder-Mead on the fields scaled to [0, 1],
    restarted from its own best point until it stops improving), then rounded to each field's decimals."""
    if not fields:
        return {}
    lows = np.array([f.low for f in fields])
    spans = np.array([f.high - f.low for f in fields])

    def values(u: np.ndarray) -> dict[str, float]:
        x = lows + spans * np.clip(u, 0.0, 1.0)
        return {f.name: float(v) for f, v in zip(fields, x, strict=True)}

    def cost(u: np.ndarray) -> float:
        outside = float(np.sum((u - np.clip(u, 0.0, 1.0)) ** 2))
        return _robust_loss(residuals(values(u))) + 1e3 * outside

    u0 = np.array([(float(getattr(base, f.name)) - f.low) / (f.high - f.low) for f in fields]).clip(0.0, 1.0)
    # The model takes the fastest of several algorithms, so the cost has kinks: start from the base's figures and
    # from each figure at either end of its box, and keep the best.
    starts = [u0] + [np.where(np.arange(len(fields)) == i, end, u0) for i in range(len(fields)) for end in (0.0, 1.0)]
    u, best = u0, math.inf
    for start in starts:
        found_u, found = _minimise(cost, start)
        if found < best - 1e-12:
            u, best = found_u, found
    return {f.name: round(v, f.decimals) for f, v in zip(fields, values(u).values(), strict=True)}


def _minimise(cost: Callable[[np.ndarray], float], start: np.ndarray) -> tuple[np.ndarray, float]:
    """Nelder-Mead from `start`, restarted from its own best point until a restart stops improving."""
    u, best = _nelder_mead(cost, start, 0.1)
    for _ in range(3):
        again, found = _nelder_mead(cost, u, 0.05)
        if found > best - 1e-12:
            break
        u, best = again, found
    return u, best


def _robust_loss(r: np.ndarray) -> float:
    """Soft-L1 loss of log residuals, 2 d^2 (sqrt(1 + (r/d)^2) - 1): squares below d = ROBUST_SCALE, absolute
    values above, so one disturbed point (a hiccup in the run) cannot drag the fit (Triggs et al. 2000, sec. 3.3;
    scipy's least_squares loss='soft_l1')."""
    d = ROBUST_SCALE
    return float(np.sum(2.0 * d * d * (np.sqrt(1.0 + (r / d) ** 2) - 1.0)))


def _nelder_mead(f: Callable[[np.ndarray], float], x0: np.ndarray, step: float) -> tuple[np.ndarray, float]:
    """Minimise f from x0 (Nelder & Mead 1965, standard coefficients 1, 2, 1/2, 1/2)."""
    n = len(x0)
    simplex = [x0] + [x0 + step * np.eye(n)[i] for i in range(n)]
    scores = [f(x) for x in simplex]
    for _ in range(200 * n):
        order = np.argsort(scores)
        simplex = [simplex[i] for i in order]
        scores = [scores[i] for i in order]
        if scores[-1] - scores[0] < 1e-10 and np.max(np.abs(simplex[-1] - simplex[0])) < 1e-5:
            break
        centre = np.mean(simplex[:-1], axis=0)
        reflected = centre + (centre - simplex[-1])
        r = f(reflected)
        if r < scores[0]:
            expanded = centre + 2.0 * (centre - simplex[-1])
            e = f(expanded)
            simplex[-1], scores[-1] = (expanded, e) if e < r else (reflected, r)
        elif r < scores[-2]:
            simplex[-1], scores[-1] = reflected, r
        else:
            contracted = centre + 0.5 * (simplex[-1] - centre)
            c = f(contracted)
            if c < scores[-1]:
                simplex[-1], scores[-1] = contracted, c
            else:
                simplex = [simplex[0]] + [simplex[0] + 0.5 * (x - simplex[0]) for x in simplex[1:]]
                scores = [scores[0]] + [f(x) for x in simplex[1:]]
    i = int(np.argmin(scores))
    return simplex[i], scores[i]


def figure_text(value: float) -> str:
    """A fitted figure as messages and the report print it (4 significant figures)."""
    return f"{value:.4g}"


def size_text(n: int) -> str:
    """A message size as nccl-tests users read it: 64 KiB, 1 GiB."""
    for unit, factor in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= factor:
            return f"{n / factor:g} {unit}"
    return f"{n} B"
