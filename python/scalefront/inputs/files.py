"""Reading the TOML files a user gives (catalogs, scenarios, model files): a file that cannot be read, is not
TOML, or holds a bad entry is one line naming the file, the entry and the field (`scalefront.inputs.messages`)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from scalefront.errors import CatalogError
from scalefront.inputs.messages import describe, key_text, toml_repr

__all__ = ["parse_toml", "read_text", "validated"]

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


def parse_toml(text: str, file: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise CatalogError(f"{file}: not valid TOML: {err}") from None


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as err:
        raise CatalogError(f"{path}: cannot read: {err.strerror or err}") from None
    except UnicodeDecodeError as err:
        byte = err.object[err.start]
        raise CatalogError(f"{path}: not a UTF-8 text file (byte {err.start} is 0x{byte:02x})") from None
