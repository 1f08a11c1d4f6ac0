"""Pydantic's validation errors as one plain line: where (the table or entry and the key, as the TOML file spells
them) and what was expected, with the value that was found. No pydantic vocabulary (``list[constrained-int]``,
``Input should be ...``) reaches the user.

`describe` picks the most telling error of a ``ValidationError`` and returns its location and message; the
callers (catalog and scenario loaders) put the file name in front.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import Any, get_args

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

__all__ = ["describe", "did_you_mean", "key_text", "located", "problem", "toml_repr", "unknown_key"]


def toml_repr(value: Any, limit: int = 60) -> str:
    """A value as it is written in TOML (strings quoted, true/false, [lists], {tables}), shortened."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, str):
        # A literal string ('...') when it can be one: the quotes every other message uses.
        text = f"'{value}'" if "'" not in value and "\n" not in value else '"' + value.replace('"', '\\"') + '"'
    elif isinstance(value, float) and value != value:
        text = "nan"
    elif isinstance(value, dict):
        text = "{" + ", ".join(f"{k} = {toml_repr(v, limit)}" for k, v in value.items()) + "}"
    elif isinstance(value, list | tuple):
        text = "[" + ", ".join(toml_repr(v, limit) for v in value) + "]"
    else:
        text = str(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _one_of(expected: str) -> str:
    """pydantic's "'a', 'b' or 'c'" as "a, b or c", Python's True and False as TOML writes them."""
    words = re.sub(r"\bTrue\b", "true", re.sub(r"\bFalse\b", "false", expected))
    return words.replace("'", "")


def _number(bound: Any) -> str:
    return f"{bound:g}" if isinstance(bound, float) else str(bound)


_EXPECTED = {
    "string_type": "expected text in double quotes",
    "string_too_short": "expected a non-empty text",
    "int_type": "expected a whole number",
    "int_parsing": "expected a whole number",
    "int_from_float": "expected a whole number",
    "float_type": "expected a number",
    "float_parsing": "expected a number",
    "bool_type": "expected true or false",
    "bool_parsing": "expected true or false",
    "dict_type": "expected a table",
    "model_type": "expected a table",
    "model_attributes_type": "expected a table",
    "finite_number": "expected a finite number",
}


def problem(e: ErrorDetails) -> str:
    """What was expected, in plain words (without the value found)."""
    kind, ctx = e["type"], e.get("ctx") or {}
    if kind in _EXPECTED:
        return _EXPECTED[kind]
    if kind == "missing":
        return "missing"
    if kind == "list_type":
        found = e.get("input")
        example = toml_repr([found]) if isinstance(found, str | int | float) else "[...]"
        return f"expected a list such as {example}"
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        sign = {"greater_than_equal": ">=", "greater_than": ">", "less_than_equal": "<=", "less_than": "<"}[kind]
        bound = next(iter(ctx.values()), "?")
        return f"expected a number {sign} {_number(bound)}"
    if kind == "literal_error":
        return f"expected one of {_one_of(str(ctx.get('expected', '')))}"
    if kind == "too_short":
        n = ctx.get("min_length", 1)
        return f"expected at least {n} item{'s' if n != 1 else ''}"
    if kind == "too_long":
        n = ctx.get("max_length", 1)
        return f"expected at most {n} item{'s' if n != 1 else ''}"
    if kind == "value_error":
        return str(e["msg"]).removeprefix("Value error, ")
    return str(e["msg"]).replace("Input should be", "expected")


def located(raw: Any, loc: Sequence[str | int], keep_last: bool = False) -> list[str | int]:
    """The parts of a pydantic location that index into the raw document (dropping union member tags such as
    ``list[constrained-int]``); `keep_last` keeps a final key that is not there (a missing field)."""
    parts: list[str | int] = []
    node = raw
    for i, part in enumerate(loc):
        in_table = isinstance(node, dict) and part in node
        in_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if in_table or in_list:
            node = node[part]
        elif keep_last and i == len(loc) - 1 and isinstance(part, str):
            pass
        else:
            continue
        parts.append(part)
    return parts


def key_text(parts: Sequence[str | int]) -> str:
    """Location parts as a reader finds them in the file: `topology, item 1, oversubscription`."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f", item {part + 1}"
        else:
            out += (", " if out.endswith(tuple("0123456789")) else "." if out else "") + part
    return out


def _model_at(model_cls: type[BaseModel], parts: Sequence[str | int]) -> type[BaseModel]:
    """The pydantic model of the table at `parts` (for suggesting a known key)."""
    cls = model_cls
    for part in parts:
        field = cls.model_fields.get(part) if isinstance(part, str) else None
        annotation = field.annotation if field is not None else None
        # An optional table (`Lifecycle | None`) is its model.
        models = [a for a in (annotation, *get_args(annotation)) if isinstance(a, type) and issubclass(a, BaseModel)]
        if not models:
            break
        cls = models[0]
    return cls


def did_you_mean(name: str, known: Sequence[str], cutoff: float = 0.6) -> str:
    """`; did you mean 'x'?` for the known name closest to `name`, or nothing. A name that is the start of known
    ones up to a separator (``h100`` of ``h100-sxm``) suggests the closest of those first: people type the family
    and leave off the variant."""
    families = [k for k in known if k.startswith(name) and k[len(name) : len(name) + 1] in ("-", "_")] if name else []
    close = difflib.get_close_matches(name, families, n=1, cutoff=0.0) or difflib.get_close_matches(
        name, list(known), n=1, cutoff=cutoff
    )
    return f"; did you mean {close[0]!r}?" if close else ""


#: Fields earlier versions read, and what replaced them.
RETIRED_FIELDS = {
    "congestion_efficiency": "replaced by load_balancing, load_balance_efficiency and qps_per_connection "
    "(see docs/fabrics.md)",
}


def unknown_key(key: str, known: Sequence[str], missing: Sequence[str] = ()) -> str:
    """'unknown field; did you mean ...?' with the closest missing key first, else the closest known one."""
    if key in RETIRED_FIELDS:
        return f"no longer read: {RETIRED_FIELDS[key]}"
    hint = did_you_mean(key, list(missing) or list(known), cutoff=0.5 if missing else 0.6)
    return f"unknown field{hint}" if hint else f"unknown field; known fields: {', '.join(known)}"


def describe(err: ValidationError, model_cls: type[BaseModel], raw: Any) -> tuple[list[str | int], str]:
    """(location parts, message) of the most telling error. An unknown key comes first: a misspelt key also shows
    up as the real one missing. Then a value the file gives that is wrong, before a field it leaves out (a user
    catalog's partial copy of a built-in entry with a bad figure hears of the figure first). The message ends with
    the value found, when there is one."""
    errors = err.errors()
    e = next(
        (x for x in errors if x["type"] == "extra_forbidden"),
        next((x for x in errors if x["type"] != "missing"), errors[0]),
    )
    parts = located(raw, e["loc"], keep_last=e["type"] == "missing")
    if e["type"] == "extra_forbidden":
        table = _model_at(model_cls, parts[:-1])
        known = [f for f in table.model_fields if f != "sources"]
        here = e["loc"][:-1]
        missing = [str(x["loc"][-1]) for x in errors if x["type"] == "missing" and x["loc"][:-1] == here]
        return parts, unknown_key(str(e["loc"][-1]), known, missing)
    text = problem(e)
    if e["type"] in ("missing", "value_error") or "input" not in e:
        return parts, text
    return parts, f"{text}, got {toml_repr(e['input'])}"
