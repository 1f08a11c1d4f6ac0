"""The comparison's uncertain inputs: every catalog figure with a `{ low, typical, high }` range (one shared draw
where several designs buy the same part at the same range, or where two designs are one fabric's modes; prices a
scenario or a quote sets are certain), and the model's error (its residuals resampled as they are), each with the
core's targets, its label and unit from the catalog's figure table (`scalefront.inputs.catalog.figures`), whether
it is a whole number, and its loadings on the price book's correlated groups (`[correlation.<id>]`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from fnmatch import fnmatchcase
from typing import Any

from scalefront.inputs.catalog.entries import Entry, FabricEntry, Range
from scalefront.inputs.catalog.figures import Figure, figure
from scalefront.inputs.catalog.loader import Catalog
from scalefront.inputs.scenario.build import MixPart
from scalefront.roi.model_error import CollectiveError
from scalefront.roi.result import UncertainInput

__all__ = [
    "PLACEMENT_RANGE",
    "base_fabric",
    "deciles",
    "error_input",
    "error_inputs",
    "fabric_inputs",
    "fixed_prices",
    "framework_inputs",
    "grouped",
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


#: The largest root sum of squares of one line's loadings: its own draw keeps at least sqrt(1 - 0.81) of it.
MAX_LOADING = 0.9
#: Lines that price or power a part: two fabrics buying the same part at the same range pay one market price
#: (one draw). Other lines (staff, lead time, incidents, licences) are a fabric's own: shared only between the
#: modes of one fabric.
PART_LINES = frozenset(
    {
        "nic_usd",
        "switch_usd",
        "nic_optic_usd",
        "switch_optic_usd",
        "dac_usd",
        "fibre_usd",
        "support_fraction_per_year",
        "nos_usd_per_switch_year",
        "nic_w",
        "switch_w",
        "nic_optic_w",
        "switch_optic_w",
    }
)


def base_fabric(fabric: str) -> str:
    """A design's fabric without its mode or variant (`roce-400g@tuned` -> `roce-400g`)."""
    return fabric.split("@", 1)[0]


def _ranged(entry: Entry, fixed: set[str]) -> list[tuple[str, Range]]:
    """(field, range) of every ranged figure of `entry`, except those a scenario override or a quote fixed."""
    return [(f, r) for f, r in entry.ranges.items() if f not in fixed and r.high > r.low]


def framework_inputs(catalog: Catalog, mix: Sequence[MixPart]) -> list[UncertainInput]:
    """The training framework's ranged terms (its overlap interference: the calibration rows leave a range, data/
    frameworks.toml), both sides, where every part of the comparison runs one framework (a comparison over several
    would need a draw per framework, and the core sets one)."""
    names = {f for part in mix for _, _, workload in part.scenario.spec.mix() for f in workload.framework}
    if len(names) != 1:
        return []
    name = names.pop()
    entry = catalog.framework(name)
    out = []
    for f, r in _ranged(entry, set()):
        fig = figure("frameworks", f)
        if not fig.sampled:
            continue  # a range on a term the core does not sample (a user catalog's layer overhead) stays typical
        low, typical, high = (float(fig.to_si(v)) for v in r)
        target: list[dict[str, Any]] = [{"section": "framework", "side": None, "field": fig.core}]
        out.append(UncertainInput(f"{name} {fig.label}", fig.unit, low, typical, high, target))
    return out


def placement_inputs(part: MixPart) -> list[UncertainInput]:
    """The job's placement as an uncertain input (`PLACEMENT_RANGE`), unless the scenario fixes it."""
    if "placement" in part.scenario.spec.cluster.model_fields_set:
        return []
    low, typical, high = PLACEMENT_RANGE
    target: list[dict[str, Any]] = [{"section": "placement", "side": None, "field": "placement"}]
    return [UncertainInput("job placement (fragmented share)", "fraction", low, typical, high, target)]


def _whole(fig: Figure, r: Range) -> bool:
    """A count whose range is whole numbers (queue pairs, staff) is sampled and moved as whole numbers."""
    return fig.unit == "count" and all(float(v).is_integer() for v in r)


def _shared_groups(
    sides: Sequence[tuple[str, int]], ranges: dict[str, dict[str, Range]], f: str, across: bool = True
) -> list[list[str]]:
    """The designs with field `f` ranged, grouped so that designs with the same range draw once (only the modes of
    one fabric unless `across`)."""
    groups: list[list[str]] = []
    for name, _ in sides:
        r = ranges[name].get(f)
        if r is None:
            continue
        for g in groups:
            if ranges[g[0]][f] == r and (across or base_fabric(g[0]) == base_fabric(name)):
                g.append(name)
                break
        else:
            groups.append([name])
    return groups


def _shown(names: list[str], sides: Sequence[tuple[str, int]]) -> list[str]:
    """How an input names the designs it applies to: a fabric's base id when it applies to every design of that
    fabric (`roce-400g`, not `roce-400g@untuned`), else each design's id."""
    bases = {base_fabric(n) for n in names}
    every = all(n in names for n, _ in sides if base_fabric(n) in bases)
    return sorted(bases) if every else names


def _label(names: list[str], label: str) -> str:
    return f"{names[0]} {label}" if len(names) == 1 else f"{label} ({', '.join(names)})"


def _owner(entry: FabricEntry, name: str, f: str) -> str:
    """Who a figure belongs to: the NIC for a figure of the NIC and its transport (`NIC_FIGURES`; the same
    ConnectX-7 on InfiniBand and RoCE draws once), else the fabric (every mode of it)."""
    return f"nic:{entry.nic}" if f in NIC_FIGURES and entry.nic else base_fabric(name)


def fabric_inputs(catalog: Catalog, sides: Sequence[tuple[str, int]]) -> list[UncertainInput]:
    """The fabrics' ranged figures, in the core's SI units; designs that share the figure's owner (`_owner`: one
    fabric's modes, or one NIC) and its range draw once, the others each their own."""
    entries = {name: catalog.fabric(name) for name, _ in sides}
    ranges = {name: dict(_ranged(entries[name], set())) for name, _ in sides}
    side_of = dict(sides)
    fields = list(dict.fromkeys(f for name, _ in sides for f in ranges[name]))
    out = []
    for f in fields:
        fig = figure("fabrics", f)
        by_owner: dict[str, list[tuple[str, int]]] = {}
        for name, side in sides:
            by_owner.setdefault(_owner(entries[name], name, f), []).append((name, side))
        for base, members in by_owner.items():
            for names in _shared_groups(members, ranges, f):
                r = ranges[names[0]][f]
                low, typical, high = (fig.to_si(v) for v in r)
                scale = typical / r.typical if r.typical else 1.0
                targets = [{"section": "fabric", "side": side_of[n], "field": fig.core} for n in names]
                # A figure every member shares is its owner's: named by the fabric's base id (or the NIC).
                shown = [base.removeprefix("nic:")] if len(names) == len(members) else names
                out.append(
                    UncertainInput(
                        _label(shown, fig.label),
                        fig.unit,
                        float(low),
                        float(typical),
                        float(high),
                        targets,
                        display_scale=1.0 / scale if scale else 1.0,
                        integer=_whole(fig, r),
                        section="fabric",
                        field=f,
                        fabrics=tuple(names),
                        keys=tuple(f"fabrics.{n}.{f}" for n in names),
                        label=fig.label,
                    )
                )
    return out


def price_inputs(
    catalog: Catalog, sides: Sequence[tuple[str, int]], gpu: str, scale_up: str, fixed: dict[str, set[str]]
) -> list[UncertainInput]:
    """Every ranged price: the designs' network prices (one shared input where several buy the same part at the
    same range), the GPU's prices, the NVLink trays' and the economics'."""
    out: list[UncertainInput] = []

    tables = {catalog.price_table_id(k): v for k, v in fixed.items()}

    def fixed_for(*ids: str) -> set[str]:
        # Prices the scenario sets for every entry ("*") or in a table that applies to this one.
        return set().union(tables.get("*", set()), *(tables.get(i, set()) for i in ids))

    ranges = {
        name: dict(_ranged(catalog.fabric_price(name), fixed_for(*catalog.fabric_price_tables(name))))
        for name, _ in sides
    }
    order = list(type(catalog.fabric_price(sides[0][0])).model_fields)
    side_of = dict(sides)
    for f in sorted({f for r in ranges.values() for f in r}, key=order.index):
        fig = figure("prices.fabric", f)
        for names in _shared_groups(sides, ranges, f, across=f in PART_LINES):
            targets = [{"section": "network", "side": side_of[n], "field": fig.core} for n in names]
            keys = tuple(f"fabric.{n}.{f}" for n in names)
            out.append(_input(_label(_shown(names, sides), fig.label), fig, ranges[names[0]][f], targets, names, keys))
    for section, entry_id, entry, fixed_keys in (
        ("gpu", gpu, catalog.gpu_price(gpu), fixed_for(gpu)),
        ("scale_up", scale_up, catalog.scale_up_price(scale_up), set()),
        ("economics", "", catalog.economics_or_error(), fixed_for("*")),
    ):
        for f, r in _ranged(entry, fixed_keys):
            if section == "gpu" and f == "rent_usd_per_gpu_hour":
                continue  # rent does not enter an owned cluster's cost
            fig = figure(f"prices.{section}", f)
            key = f"economics.{f}" if section == "economics" else f"{section}.{entry_id}.{f}"
            target = [{"section": section, "side": None, "field": fig.core}]
            out.append(_input(fig.label, fig, r, target, [], (key,)))
    return out


def _input(
    name: str, fig: Figure, r: Range, targets: list[dict[str, Any]], fabrics: Sequence[str], keys: tuple[str, ...]
) -> UncertainInput:
    """A price's input: its unit is its figure's (`usd`, `w`, `fraction`, ...)."""
    section = fig.section.removeprefix("prices.")
    return UncertainInput(
        name,
        fig.unit,
        low=r.low,
        typical=r.typical,
        high=r.high,
        targets=targets,
        integer=_whole(fig, r),
        section=section if section != "fabric" else "network",
        field=fig.name,
        fabrics=tuple(fabrics),
        keys=keys,
        label=fig.label,
    )


def error_input(
    label: str, field: str, values: list[float], targets: list[dict[str, Any]], fabrics: tuple[str, ...] = ()
) -> UncertainInput:
    """One term of the model's error: its residuals resampled as they are, its tornado range their P10-P90 (widened
    to hold 0, the model as it is)."""
    lo, hi = deciles(values)
    return UncertainInput(
        label,
        "log",
        min(lo, 0.0),
        0.0,
        max(hi, 0.0),
        targets,
        values,
        section="model_error",
        field=field,
        fabrics=fabrics,
    )


def error_inputs(
    common: list[float], collective: CollectiveError, sides: Sequence[tuple[str, int]]
) -> list[UncertainInput]:
    """The model's error: the step-time residuals common to every design; the collective model's common term (one
    draw for every fabric) and each fabric's specific term (one draw per base fabric, for every mode of it)."""
    out = []
    if common:
        target: list[dict[str, Any]] = [{"section": "model_error", "side": None, "field": "common"}]
        out.append(error_input("model error, step time (all designs)", "common", common, target))
    by_base: dict[str, list[int]] = {}
    for name, side in sides:
        by_base.setdefault(base_fabric(name), []).append(side)
    if collective.common:
        target = [{"section": "model_error", "side": None, "field": "collective"}]
        out.append(error_input("model error, communication (all fabrics)", "collective", collective.common, target))
    for family, values in sorted(collective.common_by_family.items()):
        mine = [s for b, ss in by_base.items() if collective.family_of.get(b) == family for s in ss]
        targets = [{"section": "model_error", "side": s, "field": "collective"} for s in mine]
        if targets:
            out.append(error_input(f"model error, communication ({family} fabrics)", "collective", values, targets))
    for base, own in sorted(collective.specific.items()):
        if base in by_base and own:
            targets = [{"section": "model_error", "side": s, "field": "collective"} for s in by_base[base]]
            out.append(error_input(f"model error, {base} communication only", "collective", own, targets, (base,)))
    return out


def grouped(inputs: list[UncertainInput], catalog: Catalog) -> tuple[list[UncertainInput], list[str]]:
    """Each input with its loadings on the price book's correlated groups (every group one of whose line patterns
    matches one of the input's keys; loadings scaled down so that their root sum of squares is at most
    `MAX_LOADING`), and the groups' ids in the order the loadings index them."""
    groups = list(catalog.correlations)
    out = []
    for i in inputs:
        loads = [
            (g, c.loading)
            for g, c in enumerate(catalog.correlations.values())
            if any(fnmatchcase(key, pattern) for key in i.keys for pattern in c.lines)
        ]
        norm = math.sqrt(sum(v * v for _, v in loads))
        scale = min(1.0, MAX_LOADING / norm) if norm > 0 else 1.0
        loadings = tuple((g, v * scale) for g, v in loads)
        out.append(i if not loadings else replace(i, loadings=loadings))
    return out, groups


def fixed_prices(part: MixPart) -> dict[str, set[str]]:
    """Prices the scenario sets (`[economics.prices]`): {entry id or "*": keys}, taken as certain."""
    raw = part.scenario.spec.economics.prices
    fixed: dict[str, set[str]] = {"*": {k for k, v in raw.items() if not isinstance(v, dict)}}
    fixed.update({k: set(v) for k, v in raw.items() if isinstance(v, dict)})
    return fixed


def deciles(values: list[float]) -> tuple[float, float]:
    """P10 and P90 (nearest rank) of sorted values: the core's `montecarlo::deciles`, which the bindings do not
    export."""
    n = len(values)
    return values[max(1, math.ceil(0.1 * n)) - 1], values[max(1, math.ceil(0.9 * n)) - 1]
