"""Operating modes: a fabric run one way or another (`roce-400g@tuned`, `ib-ndr@sharp`), as catalog entries.

A fabric entry may name `default_mode` and hold `[<id>.modes.<mode>]` tables: each a one-line `summary` and the
figures the mode sets (queue pairs, load balancing and its efficiency, tails, uplink speed, dual-ToR, in-network
reduction, ...), each with its source under `[<id>.modes.<mode>.sources]`. A price entry may hold
`[fabric.<id>.modes.<mode>]` tables of the price lines the mode changes. `FABRIC@MODE` names the fabric in that
mode wherever a fabric id goes; the catalog resolves it to a derived entry of the same class (`in_mode`), so the core
sees figures only. A bare id with modes means its default mode, and every output names the mode: `canonical` gives
`roce-400g@untuned` for `roce-400g`.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from scalefront.errors import CatalogError
from scalefront.inputs.catalog.figures import FIGURES
from scalefront.inputs.messages import did_you_mean, problem

__all__ = ["MODE_NAME", "check_modes", "in_mode", "unknown_mode"]

#: A mode's name: lower-case letters, digits and dashes.
MODE_NAME = re.compile(r"[a-z0-9][a-z0-9-]*")
#: Entry fields a mode cannot set: what the fabric is, not how it is run.
FIXED = frozenset({"name", "kind", "nic", "default_mode", "modes", "rented", "sources", "ranges"})

#: A catalog entry with `sources` and `ranges` (`scalefront.inputs.catalog.entries.Entry`, which imports this).
_E = TypeVar("_E", bound=BaseModel)


def unknown_mode(base: str, mode: str, modes: list[str]) -> CatalogError:
    """The error for a mode the fabric does not have (or a mode of a fabric that has none)."""
    if not modes:
        return CatalogError(f"fabric {base} has no operating modes: write {base}, not {base}@{mode}")
    return CatalogError(
        f"unknown mode {mode!r} for fabric {base}{did_you_mean(mode, modes)}; its modes: {', '.join(modes)}"
    )


def _raw(entry: Any) -> dict[str, Any]:
    """The entry as a file would write it: the fields it was given (ranges as ranges), without its modes."""
    raw: dict[str, Any] = {}
    for name in sorted(entry.model_fields_set - {"default_mode", "modes", "sources", "ranges"}):
        raw[name] = entry.ranges[name]._asdict() if name in entry.ranges else getattr(entry, name)
    return raw


def in_mode(entry: _E, mode: str) -> _E:
    """The entry run in `mode` (one of its modes): its figures with the mode's over them, the mode's sources over
    its own, and its name with the mode's summary. Raises ValueError naming `modes.<mode>.<field>`."""
    modes = getattr(entry, "modes", None)
    table = dict(modes.root[mode]) if modes is not None else {}
    summary = table.pop("summary", None)
    sources = table.pop("sources", {})
    where = f"modes.{mode}"
    if not isinstance(sources, dict) or not all(isinstance(v, str) for v in sources.values()):
        raise ValueError(f"{where}.sources: expected a table of text sources")
    fields = type(entry).model_fields
    for key in table:
        if key in FIXED or key not in fields:
            hint = did_you_mean(key, [f for f in fields if f not in FIXED])
            raise ValueError(f"{where}.{key}: not a figure a mode can set{hint}")
    raw = _raw(entry) | table | {"sources": {**getattr(entry, "sources", {}), **sources}}
    if summary is not None:
        if not isinstance(summary, str) or not summary.strip():
            raise ValueError(f"{where}.summary: expected one line of text")
        raw["name"] = f"{getattr(entry, 'name', '')}, {mode}: {summary}"
    section = getattr(type(entry), "SECTION", "")
    for key in table:
        if key in sources or not FIGURES[section][key].sourced:
            continue
        raise ValueError(f'{where}.{key}: no source (add `{key} = "<source>; YYYY-MM"` under [...{where}.sources])')
    try:
        return type(entry).model_validate(raw)
    except ValidationError as err:
        first = err.errors()[0]
        field = ".".join(str(p) for p in first["loc"] if p != "sources") or "?"
        detail = problem(first) if first["type"] != "value_error" else first["msg"]
        raise ValueError(f"{where}.{field}: {detail}") from None


def check_modes(entry: Any, needs_summary: bool) -> None:
    """Every mode of `entry` resolves to a valid entry; `default_mode` names one of them (fabrics); ValueError."""
    modes = getattr(entry, "modes", None)
    default = getattr(entry, "default_mode", None)
    tables: dict[str, dict[str, Any]] = modes.root if modes is not None else {}
    names = sorted(tables)
    if default is not None and default not in names:
        listed = ", ".join(names) if names else "none: add [<id>.modes.<mode>] tables"
        raise ValueError(f"default_mode: {default!r} is not one of its modes ({listed})")
    if needs_summary and names and default is None:
        raise ValueError(f"default_mode: missing (the mode a bare id means, one of {', '.join(names)})")
    for name in names:
        if not MODE_NAME.fullmatch(name):
            raise ValueError(f"modes.{name}: not a mode name (lower-case letters, digits and '-')")
        if needs_summary and "summary" not in tables[name]:
            raise ValueError(f'modes.{name}.summary: missing (one line: what the mode is, `summary = "..."`)')
        in_mode(entry, name)
