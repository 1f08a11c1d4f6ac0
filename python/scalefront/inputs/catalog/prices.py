"""Prices: a GPU's (rent, server, rack), a fabric's parts (NIC, switch, optics, copper, fibre, support, licences,
power), a scale-up domain's switch trays, and the economics of owning a cluster; and price overrides by field name.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from scalefront.errors import UsageError
from scalefront.inputs.catalog.entries import AtLeastOne, Entry, Fraction, Modes, NonNegative, Positive, Share
from scalefront.inputs.catalog.modes import check_modes, in_mode
from scalefront.inputs.messages import did_you_mean

__all__ = ["Economics", "FabricPrice", "GpuPrice", "ScaleUpPrice", "Share", "apply_price_overrides"]


class GpuPrice(Entry):
    """A GPU's prices (`[gpu.<id>]`; every field's meaning: the figure table, rendered in data/README.md)."""

    SECTION = "prices.gpu"
    rent_usd_per_gpu_hour: NonNegative
    server_usd: NonNegative
    gpus_per_rack: Positive


class FabricPrice(Entry):
    """Parts of a fabric (`[fabric.<id>]`): NIC port, switch, optical modules (NIC side, switch side), copper,
    fibre, and the yearly support and licences of a quote."""

    SECTION = "prices.fabric"
    nic_usd: NonNegative
    switch_usd: NonNegative
    nic_optic_usd: NonNegative
    switch_optic_usd: NonNegative
    switch_ports_per_optic: AtLeastOne
    dac_usd: NonNegative
    dac_reach_m: NonNegative
    acc_usd: NonNegative = 0.0
    acc_reach_m: NonNegative = 0.0
    fibre_usd: NonNegative
    support_fraction_per_year: Share
    nos_usd_per_switch_year: NonNegative
    spine_switch_premium_usd: NonNegative = 0.0
    fabric_manager_usd: NonNegative = 0.0
    nic_w: NonNegative
    switch_w: NonNegative
    nic_optic_w: NonNegative
    switch_optic_w: NonNegative
    rented: bool = Field(default=False, exclude=True)
    modes: Modes | None = Field(default=None, exclude=True)

    @model_validator(mode="after")
    def _modes_resolve(self) -> FabricPrice:
        check_modes(self, needs_summary=False)
        return self

    def in_mode(self, mode: str) -> FabricPrice:
        """The parts as the fabric's operating mode `mode` prices them (itself when the mode changes no price)."""
        return in_mode(self, mode) if self.modes is not None and mode in self.modes.root else self


class ScaleUpPrice(Entry):
    """A scale-up domain's NVLink switch tray (`[scale_up.<id>]`)."""

    SECTION = "prices.scale_up"
    switch_tray_usd: NonNegative
    switch_tray_w: NonNegative


class Economics(Entry):
    """What owning a cluster costs beyond its parts: life, money, utilisation, power, facility, quote lines
    (`[economics]`)."""

    SECTION = "prices.economics"
    amortization_years: Positive
    pue: AtLeastOne
    usd_per_kwh: NonNegative
    gpu_power_fraction: Fraction
    discount_rate: Annotated[float, Field(gt=-1, le=1, allow_inf_nan=False)]
    residual_fraction: Share
    utilisation: Fraction
    idle_power_fraction: Share
    facility: Literal["colocation", "build"] = "colocation"
    colocation_usd_per_kw_month: NonNegative
    facility_build_usd_per_kw: NonNegative
    facility_life_years: Positive
    server_spares_fraction: NonNegative
    network_spares_fraction: NonNegative
    installation_fraction: NonNegative
    oob_usd_per_rack: NonNegative


def apply_price_overrides(prices: dict[str, dict[str, Any]], overrides: dict[str, Any]) -> None:
    """Set prices by field name (``switch_usd``, ``usd_per_kwh``, ...) in a nested price dict, wherever the field
    is. Raises UsageError for an unknown name (with a suggestion) or a value that is not a finite number >= 0."""
    where = {
        key: section
        for section, table in prices.items()
        for key, value in table.items()
        if isinstance(value, int | float) and not isinstance(value, bool)
    }
    for key, value in overrides.items():
        if key not in where:
            hint = did_you_mean(key, list(where)) or f"; known: {', '.join(sorted(where))}"
            raise UsageError(f"unknown price {key!r}{hint}")
        if isinstance(value, bool) or not isinstance(value, int | float) or not (0 <= value < float("inf")):
            raise UsageError(f"price {key}={value!r}: expected a finite number >= 0")
        prices[where[key]][key] = float(value)
