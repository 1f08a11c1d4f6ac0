"""The scale-out network's bill of materials, as a quote lists it: NIC ports, switches per tier, optical modules
(NIC-side and twin-port switch-side, as modules), copper DACs where a host link is short enough, fibres, NVLink
switch trays, then spares, installation, out-of-band management, and support and licences per year, with power.
The counts come from the Rust core (`rust/core/src/network/bom/`), the same numbers the model prices and counts failures
with."""

from __future__ import annotations

from typing import Any

from scalefront._core import network_bom
from scalefront.inputs.catalog.loader import Catalog, builtin_catalog
from scalefront.inputs.catalog.prices import apply_price_overrides
from scalefront.inputs.params import param

__all__ = ["bom"]


def bom(
    gpus: int,
    fabric: str = "ib-ndr",
    topology: str = "fat-tree",
    *,
    oversubscription: float | None = None,
    gpu: str = "h100-sxm",
    scale_up: str | None = None,
    prices: dict[str, float] | None = None,
    catalog: Catalog | None = None,
) -> dict[str, Any]:
    """Parts, capex lines, yearly lines and power of the network for `gpus` GPUs (keys: README, "Network bill of
    materials"). `prices` overrides catalog prices by field name as `evaluate` takes them (nic_usd, switch_usd,
    nic_optic_usd, switch_optic_usd, dac_usd, fibre_usd, support_fraction_per_year, ..., network_spares_fraction)."""
    cat = catalog or builtin_catalog()
    param("gpus").check(gpus)
    gpu_entry = cat.gpu(gpu)
    su_name = scale_up or gpu_entry.default_scale_up
    cat.check_scale_up(gpu, su_name)
    topo = cat.topology(topology)
    fabric_entry = cat.fabric(fabric)  # unknown names get their suggestion before any price lookup
    cat.check_design(fabric, topology)
    over = topo.oversubscription if oversubscription is None else oversubscription
    param("oversubscription").check(over)
    price = cat.prices(gpu, fabric, su_name)
    apply_price_overrides(price, prices or {})
    result = network_bom(
        {
            "gpu": gpu_entry.core_spec(),
            "scale_up": cat.scale_up_domain(su_name).core_spec(),
            "fabric": fabric_entry.core_spec(),
            "topology": topo.core_spec(over),
            "prices": price,
            "gpus": gpus,
        }
    )
    return {
        "gpu": gpu,
        "fabric": cat.fabric_id(fabric),
        "topology": topology,
        "topology_kind": topo.kind,
        "oversubscription": float(over),
        "scale_up": su_name,
        **result,
    }
