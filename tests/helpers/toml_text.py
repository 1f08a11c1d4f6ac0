"""TOML writers for tests: values, catalog entries, scenarios (the standard library reads TOML but does not
write it, and tests need the text itself, e.g. to break it)."""

from __future__ import annotations

from typing import Any


def toml_value(v: Any) -> str:
    """A Python value as a TOML value (inline tables and arrays included)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"cannot write {v!r} as TOML here")


def toml_table(header: str, entry: dict[str, Any]) -> str:
    """One catalog entry as TOML text: scalars under [header], its sources under [header.sources]."""
    lines = [f"[{header}]"]
    lines += [f"{k} = {toml_value(v)}" for k, v in entry.items() if k != "sources"]
    if "sources" in entry:
        lines.append(f"[{header}.sources]")
        lines += [f"{k} = {toml_value(v)}" for k, v in entry["sources"].items()]
    return "\n".join(lines) + "\n"


def scenario_text(doc: dict[str, Any]) -> str:
    """A scenario dict (top-level scalars, then tables; [economics.prices.<id>] sub-tables) as TOML."""
    lines = [f"{k} = {toml_value(v)}" for k, v in doc.items() if not isinstance(v, dict)]
    for table, body in doc.items():
        if not isinstance(body, dict):
            continue
        lines.append(f"[{table}]")
        subs = {}
        for k, v in body.items():
            if k == "prices" and isinstance(v, dict):
                subs = v
            else:
                lines.append(f"{k} = {toml_value(v)}")
        scalars = {k: v for k, v in subs.items() if not isinstance(v, dict)}
        if scalars:
            lines.append(f"[{table}.prices]")
            lines += [f"{k} = {toml_value(v)}" for k, v in scalars.items()]
        for entry, prices in subs.items():
            if isinstance(prices, dict):
                lines.append(f"[{table}.prices.{entry}]")
                lines += [f"{k} = {toml_value(v)}" for k, v in prices.items()]
    return "\n".join(lines) + "\n"
