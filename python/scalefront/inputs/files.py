"""Reading the TOML files a user gives (catalogs, scenarios, model files): a file that cannot be read, is not
TOML, or holds a bad entry is one line naming the file, the entry and the field (`scalefront.inputs.messages`)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from scalefront._core import parse_builtin_toml as _core_parse
from scalefront.errors import CatalogError
from scalefront.inputs.messages import describe, key_text, toml_repr

__all__ = ["parse_builtin_toml", "parse_toml", "read_text", "validated"]

_M = TypeVar("_M", bound=BaseModel)


def validated(model_cls: type[_M], raw: Any, file: str, entry: str) -> _M:
    """`raw` (the table `[entry]` of `file`) as `model_cls`, or CatalogError naming the file, entry and field."""
    if not isinstance(raw, dict):
        raise CatalogError(f"{file}: [{entry}] must be a table, got {toml_repr(raw)}")
    try:
        return model_cls.model_validate(raw)
    except ValidationError as err:
        parts, msg = describe(err, model_cls, raw)
        where = key_text(parts)
        raise CatalogError(f"{file}: [{entry}] {where}: {msg}" if where else f"{file}: [{entry}] {msg}") from None


#: How deep tables and arrays may nest in any file scalefront reads (its own nest three levels at most). Deeper
#: input is refused with one line, before Python's recursion limit could turn it into a traceback anywhere.
MAX_DEPTH = 32


def parse_toml(text: str, file: str) -> dict[str, Any]:
    """The one reader of every TOML file (scenario, model, catalog, model error): CatalogError, one line naming
    the file, for a byte-order mark, invalid TOML, or nesting deeper than MAX_DEPTH."""
    if text.startswith("\ufeff"):
        raise CatalogError(f"{file}: starts with a byte-order mark (BOM); save it as UTF-8 without one")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise CatalogError(f"{file}: not valid TOML: {err}") from None
    except RecursionError:
        raise CatalogError(f"{file}: tables or arrays nested deeper than {MAX_DEPTH} levels") from None
    where = _too_deep(doc)
    if where is not None:
        raise CatalogError(f"{file}: {where}: tables or arrays nested deeper than {MAX_DEPTH} levels")
    return doc


def parse_builtin_toml(text: str, file: str) -> dict[str, Any]:
    """A file embedded in scalefront (data/ at build time) as `parse_toml` reads it, parsed by the core (several
    times faster than tomllib, the same dict: a test holds every embedded file to tomllib's); `parse_toml` where the
    core declines (a date or time, or text it cannot read), for the same result or error."""
    try:
        return _core_parse(text)
    except ValueError:
        return parse_toml(text, file)


def _too_deep(doc: dict[str, Any]) -> str | None:
    """The key (dotted) under which `doc` nests deeper than MAX_DEPTH, walked without recursion; None if nowhere."""
    stack: list[tuple[Any, str, int]] = [(doc, "", 0)]
    while stack:
        value, key, depth = stack.pop()
        if depth > MAX_DEPTH:
            parts = key.split(".")
            return ".".join(parts) if len(parts) <= 4 else f"{'.'.join(parts[:2])}...{parts[-1]}"
        if isinstance(value, dict):
            stack += [(v, f"{key}.{k}" if key else str(k), depth + 1) for k, v in value.items()]
        elif isinstance(value, list):
            stack += [(v, key, depth + 1) for v in value]
    return None


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as err:
        raise CatalogError(f"{path}: cannot read: {err.strerror or err}") from None
    except UnicodeDecodeError as err:
        byte = err.object[err.start]
        raise CatalogError(f"{path}: not a UTF-8 text file (byte {err.start} is 0x{byte:02x})") from None
