"""Render ``data/README.md``'s field tables from the catalog figure table (`scalefront.inputs.catalog.figures`):
one table per catalog section, between ``<!-- figures:begin SECTION -->`` and ``<!-- figures:end SECTION -->``,
and the units table between the ``units`` markers. ``python -m scalefront.dev.schema --write`` rewrites them,
``--check`` fails when they drifted. Defaults come from the entry classes, everything else from the table.
"""

from __future__ import annotations

import math
from typing import Any

from scalefront.inputs.catalog.figures import FIGURES, Figure
from scalefront.inputs.catalog.loader import ENTRY_CLASSES
from scalefront.inputs.messages import toml_repr

__all__ = ["render_section", "render_units", "replace_figure_tables"]

#: Largest count the core holds (the table's upper bound of counts): not worth a reader's attention.
_COUNT_MAX = 2.0**31


def _number(value: float) -> str:
    return f"{value:g}"


def _power_of_ten(value: float) -> str:
    """1e12 -> `10^12`, 1.25e8 -> `1.25 x 10^8`."""
    exponent = math.floor(math.log10(value))
    mantissa = _number(value / 10.0**exponent)
    return f"10^{exponent}" if mantissa == "1" else f"{mantissa} x 10^{exponent}"


def _limits(fig: Figure) -> str:
    """`> 0`, `>= 1`, `integer >= 1`, `(0, 1]`: the values a number may take."""
    low, low_in = (fig.ge, True) if fig.ge is not None else (fig.gt, False)
    high, high_in = (fig.le, True) if fig.le is not None else (fig.lt, False)
    if low is None:
        return "a number" if high is None else f"{'<=' if high_in else '<'} {_number(high)}"
    if high is None or high == _COUNT_MAX:
        text = f"{'>=' if low_in else '>'} {_number(low)}"
        return f"integer {text}" if fig.kind == "count" else text
    brackets = "[" if low_in else "(", "]" if high_in else ")"
    return f"{brackets[0]}{_number(low)}, {_number(high)}{brackets[1]}"


def _values(fig: Figure, default: Any, required: bool) -> str:
    if fig.choices:
        text = ", ".join(f"`{c}`" for c in fig.choices)
    elif fig.kind == "text":
        text = "text, with a dated source" if fig.sourced else "text"
    elif fig.kind == "flag":
        text = "`true` or `false`"
    elif fig.kind == "names":
        text = "a list of names"
    elif fig.kind == "table":
        text = "a table"
    elif fig.kind == "grid":
        text = f"rows of numbers in {_limits(fig)}, with a dated source"
    else:
        text = _limits(fig)
    if not required:
        text += "; optional" if default is None else f"; default {toml_repr(default)}"
    if fig.sampled:
        text += "; `roi` samples its range"
    return text


def render_section(section: str) -> str:
    """The table of one catalog section's fields."""
    fields = ENTRY_CLASSES[section].model_fields
    rows = ["| field | unit | values | meaning |", "|---|---|---|---|"]
    for fig in FIGURES[section].values():
        info = fields[fig.name]
        values = _values(fig, info.get_default(call_default_factory=True), info.is_required())
        rows.append(f"| `{fig.name}` | {fig.unit_text} | {values} | {fig.doc} |")
    return "\n".join(rows)


def render_units() -> str:
    """The table of the units the catalogs write figures in, and what the core takes."""
    rows = ["| suffix | unit | one unit in the core |", "|---|---|---|"]
    seen: set[str] = set()
    for fig in (f for section in FIGURES.values() for f in section.values()):
        if not fig.unit or fig.unit in seen:
            continue
        seen.add(fig.unit)
        core = "the same" if fig.si_scale == 1.0 else f"{_power_of_ten(fig.si_scale)} {fig.si_unit}"
        rows.append(f"| `{fig.unit}` | {fig.unit_text} | {core} |")
    return "\n".join(rows)


def _replace(text: str, name: str, block: str) -> str:
    begin, end = f"<!-- figures:begin {name} -->", f"<!-- figures:end {name} -->"
    head, sep, rest = text.partition(begin)
    _, sep2, tail = rest.partition(end)
    if not sep or not sep2:
        raise SystemExit(f"data/README.md has no {begin} ... {end} block")
    return f"{head}{begin}\n{block}\n{end}{tail}"


def replace_figure_tables(text: str) -> str:
    """``data/README.md`` with its units table and every section's field table regenerated."""
    text = _replace(text, "units", render_units())
    for section in FIGURES:
        text = _replace(text, section, render_section(section))
    return text
