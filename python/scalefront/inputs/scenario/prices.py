"""A scenario's prices (`[economics.prices]`): the catalog's, then the file's numbers for every entry, then its
tables for one entry (`[economics.prices.<id>]`). A fabric's table applies by its price entry (`roce-400g`: every
mode of it; `roce-400g@branded`: the branded boxes in every mode) and then by the design itself
(`roce-400g@tuned@branded`), the more specific last (Catalog.fabric_price_tables)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from scalefront.errors import CatalogError
from scalefront.inputs.catalog.loader import Catalog
from scalefront.inputs.messages import did_you_mean
from scalefront.inputs.scenario.sections import Economics

__all__ = ["ScenarioPrices", "scenario_prices"]

#: Makes a scenario's one-line error from where (`[economics.prices]`) and what is wrong.
Problem = Callable[[str, str], CatalogError]


@dataclass(frozen=True)
class ScenarioPrices:
    """The scenario's prices (module doc); `per_entry` is keyed by Catalog.price_table_id."""

    scalar: dict[str, float]
    per_entry: dict[str, dict[str, float]]
    economics: dict[str, Any]

    def of(self, tables: tuple[str, ...], base: BaseModel) -> dict[str, float]:
        """The prices of the entry whose scenario tables are `tables` (most general first), from `base`."""
        values = base.model_dump()
        own: dict[str, float] = {}
        for table in tables:
            own.update(self.per_entry.get(table, {}))
        for source in (self.scalar, own):
            for k, v in source.items():
                if k in values:
                    values[k] = float(v)
        return values


def _known_keys(gpus: list[str], fabrics: list[str], cat: Catalog, economics: dict[str, Any]) -> set[str]:
    """Every price key a scenario of these entries may set."""
    keys = set(economics) - {"cost_mode"}
    for g in gpus:
        keys |= set(cat.gpu_price(g).model_dump())
    for f in fabrics:
        keys |= set(cat.fabric_price(f).model_dump())
    return keys


def _table_ids(gpus: list[str], fabrics: list[str], cat: Catalog) -> dict[str, str]:
    """{table id: what it prices}, for every table a scenario of these entries may hold (an unpriced fabric's only
    its own: the sweep that reads it says what is missing)."""
    ids = {g: f"GPU {g}" for g in gpus}
    for f in fabrics:
        try:
            tables = cat.fabric_price_tables(f)
        except CatalogError:
            tables = (f,)
        ids.update({t: f"fabric {t}" for t in tables})
    return ids


def scenario_prices(
    econ: Economics, gpus: list[str], fabrics: list[str], file_fabrics: list[str], cat: Catalog, bad: Problem
) -> ScenarioPrices:
    """The prices of a scenario of `gpus` and `fabrics` (canonical ids), its tables checked: each must name an
    entry of this scenario, or one the file names (`file_fabrics`: its own fabrics, which a comparison may replace,
    and the designs `roi` compares them with), and hold only price keys."""
    scalar = {k: v for k, v in econ.prices.items() if not isinstance(v, dict)}
    per_entry: dict[str, dict[str, float]] = {}
    economics = {**cat.economics_or_error().model_dump(), "cost_mode": econ.mode}
    keys = _known_keys(gpus, fabrics, cat, economics)
    ids = _table_ids(gpus, sorted({*fabrics, *file_fabrics}), cat)
    for key, table in ((k, v) for k, v in econ.prices.items() if isinstance(v, dict)):
        if key in keys:
            raise bad(
                f"[economics.prices] {key}",
                "a scenario's price is one number, taken as certain; a range (low, typical, high) belongs in a "
                "catalog file (--catalog)",
            )
        table_id = cat.price_table_id(key)
        if table_id not in ids:
            raise bad(
                "[economics.prices]",
                f"{key!r} is neither a GPU nor a fabric of this scenario; its price tables: {', '.join(sorted(ids))}",
            )
        if table_id in per_entry:
            raise bad("[economics.prices]", f"{key!r} is the table of {ids[table_id]}, which is priced twice")
        per_entry[table_id] = table
    for key in list(scalar) + [k for table in per_entry.values() for k in table]:
        if key not in keys:
            hint = did_you_mean(key, sorted(keys)) or f"; known: {', '.join(sorted(keys))}"
            raise bad("[economics.prices]", f"unknown price {key!r}{hint}")
    economics.update({k: float(v) for k, v in scalar.items() if k in economics})
    return ScenarioPrices(scalar, per_entry, economics)
