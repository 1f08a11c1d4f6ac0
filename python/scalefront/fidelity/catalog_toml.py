"""Catalog entries as TOML text, for the commands that write an entry for `--catalog` (`calibrate`, `measure`): a
value (ranges as inline tables), and an entry's table with its sources."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from scalefront.inputs.catalog.entries import Entry, Range

__all__ = ["entry_lines", "toml_value"]


def toml_value(value: Any) -> str:
    """A figure, flag, text or list of names as TOML; a `Range` as `{ low = .., typical = .., high = .. }`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Range):
        low, typical, high = (toml_value(v) for v in value)
        return f"{{ low = {low}, typical = {typical}, high = {high} }}"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)


def entry_lines(
    header: str, entry: Entry, overrides: dict[str, Any], sources: dict[str, str], skip: Iterable[str] = ()
) -> list[str]:
    """`[header]` with the entry's fields given in its file (ranges kept) or in `overrides`, then
    `[header.sources]`; fields in `skip` are left out, and so are operating modes (an entry written is one fabric
    run one way)."""
    left_out = {"sources", "ranges", "modes", "default_mode", *skip}
    lines = [f"[{header}]"]
    for name in type(entry).model_fields:
        if name in left_out or (name not in entry.model_fields_set and name not in overrides):
            continue
        value = overrides.get(name, entry.ranges.get(name, getattr(entry, name)))
        if isinstance(value, list) and value and isinstance(value[0], list):  # a table: a row a line
            lines += [f"{name} = [", *(f"    {toml_value(row)}," for row in value), "]"]
            continue
        lines.append(f"{name} = {toml_value(value)}")
    lines += ["", f"[{header}.sources]"]
    lines += [f"{name} = {toml_value(text)}" for name, text in sources.items()]
    return lines
