"""Prices: a GPU's (rent, server, rack), a fabric's parts (NIC, switch, optics, copper, fibre, support, licences,
power, operations, lead time, incidents), a scale-up domain's switch trays, and the economics of owning a cluster;
each line's quote status (quoted, list or estimate); the groups of prices that move together; and price overrides
by field name.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from scalefront.errors import UsageError
from scalefront.inputs.catalog.entries import (
    DATED_SOURCE,
    AtLeastOne,
    Entry,
    Fraction,
    Modes,
    NonNegative,
    Positive,
    Share,
)
from scalefront.inputs.catalog.modes import check_modes, in_mode
from scalefront.inputs.messages import did_you_mean

__all__ = [
    "QUOTE_STATUSES",
    "Correlation",
    "Economics",
    "FabricPrice",
    "GpuPrice",
    "PriceEntry",
    "ScaleUpPrice",
    "Share",
    "apply_price_overrides",
]

#: A price line's quote status: a vendor's quote for this purchase, a published list or street price, or an
#: estimate (its source starts with `EST`).
QUOTE_STATUSES = ("quoted", "list", "estimate")
Status = Literal["quoted", "list", "estimate"]


class PriceEntry(Entry):
    """A price entry: its figures, their sources, and each line's quote status. A line's status is the
    `[<entry>.status]` table's, else `estimate` when its source starts with `EST` and `list` otherwise."""

    status: dict[str, Status] = Field(default_factory=dict, exclude=True)

    @model_validator(mode="after")
    def _status_names_fields(self) -> PriceEntry:
        for name in self.status:
            if name not in type(self).model_fields or name in ("sources", "status", "ranges"):
                hint = did_you_mean(
                    name, [f for f in type(self).model_fields if f not in ("sources", "status", "ranges")]
                )
                raise ValueError(f"status.{name}: not a price line of this entry{hint}")
        return self

    def status_of(self, name: str) -> str:
        """The quote status of line `name`."""
        if name in self.status:
            return self.status[name]
        return "estimate" if self.sources.get(name, "EST").lstrip().upper().startswith("EST") else "list"


class GpuPrice(PriceEntry):
    """A GPU's prices (`[gpu.<id>]`; every field's meaning: the figure table, rendered in data/README.md)."""

    SECTION = "prices.gpu"
    rent_usd_per_gpu_hour: NonNegative
    server_usd: NonNegative
    gpus_per_rack: Positive


class FabricPrice(PriceEntry):
    """Parts of a fabric (`[fabric.<id>]`): NIC port, switch, optical modules (NIC side, switch side), copper,
    fibre, the yearly support and licences of a quote, the fabric manager's licence, its operations staff, its lead
    time and its fabric-specific incidents."""

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
    fabric_manager_usd_per_endpoint_year: NonNegative
    ops_staff_fte: NonNegative
    ops_staff_fte_per_1000_switches: NonNegative
    ops_wage_premium_fraction: NonNegative
    lead_time_weeks: NonNegative
    incidents_per_year: NonNegative
    incident_stall_s: NonNegative
    rented: bool = Field(default=False, exclude=True)
    modes: Modes | None = Field(default=None, exclude=True)

    @model_validator(mode="after")
    def _modes_resolve(self) -> FabricPrice:
        check_modes(self, needs_summary=False)
        return self

    def in_mode(self, mode: str) -> FabricPrice:
        """The parts as the fabric's operating mode `mode` prices them (itself when the mode changes no price)."""
        return in_mode(self, mode) if self.modes is not None and mode in self.modes.root else self


class ScaleUpPrice(PriceEntry):
    """A scale-up domain's NVLink switch tray (`[scale_up.<id>]`)."""

    SECTION = "prices.scale_up"
    switch_tray_usd: NonNegative
    switch_tray_w: NonNegative


class Economics(PriceEntry):
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
    usd_per_fte_year: NonNegative
    gpu_lead_time_weeks: NonNegative
    optic_replacement_fraction_per_year: Share
    switch_replacement_fraction_per_year: Share
    nic_replacement_fraction_per_year: Share
    replacement_labour_usd: NonNegative


class Correlation(BaseModel):
    """A group of prices that move together (`[correlation.<id>]`): its name, the loading of each of its lines
    (the correlation of the line's normal score with the group's, a stated assumption), the lines as patterns
    `section.entry.field` (`fabric.ib-*.switch_usd`, `economics.usd_per_kwh`), and dated sources."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    SECTION: ClassVar[str] = "prices.correlation"
    name: str
    loading: Annotated[float, Field(gt=0, lt=1, allow_inf_nan=False)]
    lines: list[str] = Field(min_length=1)
    sources: dict[str, str]

    @model_validator(mode="after")
    def _sourced(self) -> Correlation:
        for name in ("loading", "lines"):
            source = self.sources.get(name)
            if source is None or not DATED_SOURCE.search(source):
                raise ValueError(f'{name}: needs a source ending with its date (`{name} = "<source>; YYYY-MM"`)')
        return self


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
