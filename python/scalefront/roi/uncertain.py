"""The comparison's uncertain inputs: every catalog figure with a `{ low, typical, high }` range (one shared draw
when both fabrics buy the same part at the same range; prices a scenario sets are certain), and the model's error
(its residuals resampled as they are), each with the core's targets and its label in the tornado and the verdict.
"""

from __future__ import annotations

import math
from typing import Any

from scalefront.inputs.catalog.entries import Entry, FabricEntry, Range
from scalefront.inputs.catalog.loader import Catalog
from scalefront.inputs.scenario.build import MixPart
from scalefront.roi.result import UncertainInput

__all__ = ["LABELS", "deciles", "error_inputs", "fabric_inputs", "fixed_prices", "price_inputs"]

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


def fabric_inputs(name: str, side: int, entry: FabricEntry) -> list[UncertainInput]:
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


def price_inputs(
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


def error_inputs(common: list[float], collective: list[float], a: str, b: str) -> list[UncertainInput]:
    out = []
    if common:
        lo, hi = deciles(common)
        target: list[dict[str, Any]] = [{"section": "model_error", "side": None, "field": "common"}]
        out.append(UncertainInput("model error, step time (both fabrics)", "log", lo, 0.0, hi, target, common))
    if collective:
        lo, hi = deciles(collective)
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


def deciles(values: list[float]) -> tuple[float, float]:
    """P10 and P90 (nearest rank) of sorted values: the core's `montecarlo::deciles`, which the bindings do not
    export."""
    n = len(values)
    return values[max(1, math.ceil(0.1 * n)) - 1], values[max(1, math.ceil(0.9 * n)) - 1]
