"""The catalog figures, defined once in the Rust core (``scalefront_core::figures``, exported as
``_core.catalog_figures()``): every field of every catalog entry, by section (``gpus``, ``fabrics``,
``prices.fabric``, ...), with its unit and scale to SI, its limits, the core spec's field it fills, whether it may be a
range and needs a dated source, its label in the ROI, whether the ROI's Monte Carlo samples it, and its meaning.

The entries' conversions to the core's specs (`core_spec`), which of their figures may be ranges and need sources, and
the ROI's labels and units come from here; ``data/README.md``'s field tables are generated from it
(``python -m scalefront.dev.schema --write``), and a test holds the entry classes' fields and limits to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from scalefront._core import catalog_figures

__all__ = ["FIGURES", "Figure", "core_spec", "figure"]


@dataclass(frozen=True)
class Figure:
    """One field of a catalog entry (see ``_core._FigureDoc`` for each attribute)."""

    section: str
    name: str
    kind: str
    unit: str
    unit_text: str
    si_scale: float
    si_unit: str
    core: str
    ge: float | None
    gt: float | None
    le: float | None
    lt: float | None
    ranged: bool
    sourced: bool
    label: str
    sampled: bool
    choices: list[str]
    doc: str

    def to_si(self, value: Any) -> Any:
        """`value`, in the catalog's unit, as the core takes it: a real figure times its unit's SI scale (a float);
        counts, names and flags as they are."""
        if self.kind != "float":
            return value
        return float(value) if self.si_scale == 1.0 else value * self.si_scale


def _load() -> dict[str, dict[str, Figure]]:
    out: dict[str, dict[str, Figure]] = {}
    for row in catalog_figures():
        fig = Figure(**row)
        out.setdefault(fig.section, {})[fig.name] = fig
    return out


#: Every catalog's fields by section, then by name, in the entries' field order.
FIGURES: dict[str, dict[str, Figure]] = _load()


def figure(section: str, name: str) -> Figure:
    """The field `name` of catalog section `section`."""
    return FIGURES[section][name]


def core_spec(section: str, entry: BaseModel) -> dict[str, Any]:
    """The entry as the core's spec takes it: each field that fills a core field, converted to SI. A field of a
    nested spec (``moe.experts``) goes into its group, and a group with an absent field is absent (None): a model's
    MoE and MLA fields go together."""
    out: dict[str, Any] = {}
    for fig in FIGURES[section].values():
        if not fig.core:
            continue
        group, _, key = fig.core.rpartition(".")
        (out.setdefault(group, {}) if group else out)[key] = fig.to_si(getattr(entry, fig.name))
    return {k: None if isinstance(v, dict) and None in v.values() else v for k, v in out.items()}
