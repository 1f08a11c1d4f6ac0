"""The comparison's uncertain inputs: every catalog figure with a `{ low, typical, high }` range (one shared draw
when both fabrics buy the same part at the same range; prices a scenario sets are certain), and the model's error
(its residuals resampled as they are), each with the core's targets, and its label and unit in the tornado and the
verdict from the catalog's figure table (`scalefront.inputs.catalog.figures`).
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any

from scalefront.inputs.catalog.entries import Entry, FabricEntry, Range
from scalefront.inputs.catalog.figures import Figure, figure
from scalefront.inputs.catalog.loader import Catalog
from scalefront.inputs.scenario.build import MixPart
from scalefront.roi.result import UncertainInput

__all__ = [
    "PLACEMENT_RANGE",
    "deciles",
    "error_inputs",
    "fabric_inputs",
    "fabric_pair_inputs",
    "fixed_prices",
    "placement_inputs",
    "price_inputs",
]

#: How fragmented a job's placement is (`placement`: the share of each collective's leaf-local traffic pushed across
#: leaves), for a comparison whose scenario does not fix it: triangular, mode 0 (one job placed contiguously by a
#: topology-aware scheduler, as MegaScale and Slurm's tree topology plugin place them), up to 1 (no neighbour left on
#: its leaf: Meta's fragmented case, "The rack can be partially allocated to a job, with only one of the two hosts in
#: the rack using the uplink bandwidth", engineering.fb.com 2024-08-05 via sysdesign-wiki.pages.dev, on two-host
#: racks). Its mean, 1/3, is about how common contention is in a production multi-tenant cluster: "36.3% of jobs
#: (occupying 51% GPUs) suffer from communication contention" (Alibaba Crux, SIGCOMM 2024).
PLACEMENT_RANGE = (0.0, 0.0, 1.0)

#: Fabric figures of the NIC and its NCCL transport: two fabrics on the same NIC draw them once.
NIC_FIGURES = ("efficiency", "nic_latency_us")


def _ranged(entry: Entry, fixed: set[str]) -> list[tuple[str, Any]]:
    """(field, range) of every ranged figure of `entry`, except those a scenario override fixed."""
    return [(f, r) for f, r in entry.ranges.items() if f not in fixed and r.high > r.low]


def fabric_pair_inputs(a: str, ea: FabricEntry, b: str, eb: FabricEntry) -> list[UncertainInput]:
    """Both fabrics' ranged figures: a figure of the NIC (`NIC_FIGURES`) that both share with the same range is one
    draw for both (the same ConnectX-7 on InfiniBand and RoCE), every other figure one draw per fabric."""
    same_nic = bool(ea.nic) and ea.nic == eb.nic
    shared = {f for f in NIC_FIGURES if same_nic and f in ea.ranges and ea.ranges.get(f) == eb.ranges.get(f)}
    out = []
    for f in sorted(shared, key=NIC_FIGURES.index):
        one = fabric_inputs(f"{ea.nic} (both fabrics)", 0, ea, only={f})[0]
        one.targets.append({"section": "fabric", "side": 1, "field": figure("fabrics", f).core})
        out.append(one)
    return out + fabric_inputs(a, 0, ea, skip=shared) + fabric_inputs(b, 1, eb, skip=shared)


def placement_inputs(part: MixPart) -> list[UncertainInput]:
    """The job's placement as an uncertain input (`PLACEMENT_RANGE`), unless the scenario fixes it."""
    if "placement" in part.scenario.spec.cluster.model_fields_set:
        return []
    low, typical, high = PLACEMENT_RANGE
    target: list[dict[str, Any]] = [{"section": "placement", "side": None, "field": "placement"}]
    return [UncertainInput("job placement (fragmented share)", "fraction", low, typical, high, target)]


def fabric_inputs(
    name: str, side: int, entry: FabricEntry, only: Collection[str] | None = None, skip: Collection[str] = ()
) -> list[UncertainInput]:
    """The fabric's ranged figures (`only` these, none of `skip`), in the core's SI units (each end converted by
    the figure's unit)."""
    out = []
    for f, r in _ranged(entry, set()):
        if f in skip or (only is not None and f not in only):
            continue
        fig = figure("fabrics", f)
        low, typical, high = (fig.to_si(v) for v in r)
        scale = typical / r.typical if r.typical else 1.0
        target: list[dict[str, Any]] = [{"section": "fabric", "side": side, "field": fig.core}]
        display_scale = 1.0 / scale if scale else 1.0
        out.append(
            UncertainInput(
                f"{name} {fig.label}",
                fig.unit,
                float(low),
                float(typical),
                float(high),
                target,
                display_scale=display_scale,
            )
        )
    return out


def price_inputs(
    catalog: Catalog, a: str, b: str, gpu: str, scale_up: str, fixed: dict[str, set[str]]
) -> list[UncertainInput]:
    """Every ranged price: A's and B's network prices (one shared input where both ranges are the same part
    price), the GPU's prices, the NVLink trays' and the economics'."""
    out: list[UncertainInput] = []

    def fixed_for(entry: str) -> set[str]:
        # A fabric's prices set for its id in any mode (`roce-400g`) or for its mode (`roce-400g@tuned`).
        return fixed.get(entry, set()) | fixed.get(entry.partition("@")[0], set()) | fixed.get("*", set())

    pa, pb = catalog.fabric_price(a), catalog.fabric_price(b)
    ra, rb = dict(_ranged(pa, fixed_for(a))), dict(_ranged(pb, fixed_for(b)))
    for f in sorted(set(ra) | set(rb), key=list(type(pa).model_fields).index):
        fig = figure("prices.fabric", f)
        if f in ra and f in rb and ra[f] == rb[f]:  # the same part at the same range: one market price
            targets: list[dict[str, Any]] = [{"section": "network", "side": s, "field": fig.core} for s in (0, 1)]
            out.append(_input(f"{fig.label} (both fabrics)", fig, ra[f], targets))
            continue
        for name, side, ranges in ((a, 0, ra), (b, 1, rb)):
            if f in ranges:
                target: list[dict[str, Any]] = [{"section": "network", "side": side, "field": fig.core}]
                out.append(_input(f"{name} {fig.label}", fig, ranges[f], target))
    for section, entry, fixed_keys in (
        ("gpu", catalog.gpu_price(gpu), fixed_for(gpu)),
        ("scale_up", catalog.scale_up_price(scale_up), set()),
        ("economics", catalog.economics_or_error(), fixed_for("*")),
    ):
        for f, r in _ranged(entry, fixed_keys):
            if section == "gpu" and f == "rent_usd_per_gpu_hour":
                continue  # rent does not enter an owned cluster's cost
            fig = figure(f"prices.{section}", f)
            out.append(_input(fig.label, fig, r, [{"section": section, "side": None, "field": fig.core}]))
    return out


def _input(name: str, fig: Figure, r: Range, targets: list[dict[str, Any]]) -> UncertainInput:
    """A price's input: its unit is its figure's (`usd`, `w`, `fraction`, ...)."""
    return UncertainInput(name, fig.unit, low=r.low, typical=r.typical, high=r.high, targets=targets)


def error_inputs(common: list[float], collective: list[float], a: str, b: str) -> list[UncertainInput]:
    """The model's error as uncertain inputs: the residuals sampled as they are, the tornado from their P10 to P90,
    which always bracket 0 (the model right), the typical value, even when every residual has one sign."""
    out = []
    if common:
        lo, hi = _around_zero(deciles(common))
        target: list[dict[str, Any]] = [{"section": "model_error", "side": None, "field": "common"}]
        out.append(UncertainInput("model error, step time (both fabrics)", "log", lo, 0.0, hi, target, common))
    if collective:
        lo, hi = _around_zero(deciles(collective))
        for name, side in ((a, 0), (b, 1)):
            target = [{"section": "model_error", "side": side, "field": "collective"}]
            out.append(UncertainInput(f"{name} collective model error", "log", lo, 0.0, hi, target, collective))
    return out


def fixed_prices(part: MixPart) -> dict[str, set[str]]:
    """Prices the scenario sets (`[economics.prices]`): {entry id or "*": keys}, taken as certain."""
    raw = part.scenario.spec.economics.prices
    fixed: dict[str, set[str]] = {"*": {k for k, v in raw.items() if not isinstance(v, dict)}}
    fixed.update({k: set(v) for k, v in raw.items() if isinstance(v, dict)})
    return fixed


def _around_zero(bounds: tuple[float, float]) -> tuple[float, float]:
    return min(bounds[0], 0.0), max(bounds[1], 0.0)


def deciles(values: list[float]) -> tuple[float, float]:
    """P10 and P90 (nearest rank) of sorted values: the core's `montecarlo::deciles`, which the bindings do not
    export."""
    n = len(values)
    return values[max(1, math.ceil(0.1 * n)) - 1], values[max(1, math.ceil(0.9 * n)) - 1]
