"""The forms a scenario file's values take beyond one plain value: lists or ranges of counts, degrees to search,
topologies with their oversubscription, overlap lists and price overrides, each checked by hand so that a bad value
is answered with the forms it may take rather than with one complaint per form. The tables built from them are
generated (`scalefront.inputs.scenario.sections`).
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, ValidationError

from scalefront.errors import UsageError
from scalefront.inputs.messages import describe, key_text, toml_repr
from scalefront.inputs.overlap import parse_overlap
from scalefront.inputs.params import param

__all__ = [
    "CountAxis",
    "DegreeAxis",
    "OverlapList",
    "PositiveInt",
    "Prices",
    "Range",
    "Search",
    "Strict",
    "TopologyChoice",
    "TopologyList",
    "names_of",
]

PositiveInt = Annotated[int, Field(ge=1, le=2**31)]
_M = TypeVar("_M", bound=BaseModel)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


#: The most GPU counts a range may hold: 100,000 (a space of that many counts already has billions of
#: configurations; more would be minutes and gigabytes of listing before any limit could act).
MAX_GPU_COUNTS = 100_000


class Range(Strict):
    """Integers from start to stop (inclusive), multiplying by `factor` or adding `step`."""

    start: PositiveInt
    stop: PositiveInt
    factor: Annotated[int, Field(ge=2)] | None = None
    step: PositiveInt | None = None

    def values(self) -> list[int]:
        if (self.factor is None) == (self.step is None):
            raise ValueError("give exactly one of factor or step")
        if self.stop < self.start:
            raise ValueError(f"stop ({self.stop}) is below start ({self.start})")
        if self.step is not None and (self.stop - self.start) // self.step >= MAX_GPU_COUNTS:
            # Counted before listing: a range of 2^31 counts would take minutes and gigabytes to list.
            count = (self.stop - self.start) // self.step + 1
            raise ValueError(f"{count:,} GPU counts; a range may hold at most {MAX_GPU_COUNTS:,} (raise step)")
        out, v = [], self.start
        while v <= self.stop:
            out.append(v)
            v = v * self.factor if self.factor else v + (self.step or 1)
        return out


class Search(Strict):
    """Every divisor of the GPU count up to `max`."""

    search: Literal[True]
    max: PositiveInt = 2**31


# Axes that take one of several forms are checked by hand (below), so that a bad value is answered with the
# forms it may take rather than with one complaint per form.


def _sub_table(model_cls: type[_M], value: dict[str, Any]) -> _M:
    """`value` as `model_cls`, or ValueError naming the key inside the inline table."""
    try:
        return model_cls.model_validate(value)
    except ValidationError as err:
        parts, msg = describe(err, model_cls, value)
        raise ValueError(f"{key_text(parts)}: {msg}" if parts else msg) from None


def _positive_ints(value: list[Any]) -> list[int]:
    for i, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 2**31:
            raise ValueError(f"item {i + 1}: expected a whole number from 1 to 2^31, got {toml_repr(v)}")
    if not value:
        raise ValueError("expected at least one value, got []")
    return list(value)


def _list_or_table(value: Any, table: type[_M], forms: str) -> list[int] | _M:
    """An axis given as a list of positive integers or as an inline table of `table`'s keys."""
    if isinstance(value, list):
        return _positive_ints(value)
    if isinstance(value, dict):
        return _sub_table(table, value)
    raise ValueError(f"expected {forms}, got {toml_repr(value)}")


def _count_axis(value: Any) -> list[int] | Range:
    return _list_or_table(
        value, Range, "a list such as [512, 1024] or a range such as { start = 512, stop = 4096, factor = 2 }"
    )


def _degree_axis(value: Any) -> Literal["search"] | list[int] | Search:
    if value == "search":
        return "search"
    return _list_or_table(value, Search, "'search', a list such as [1, 2, 4, 8] or { search = true, max = 8 }")


def _topology_list(value: Any) -> list[str | TopologyChoice]:
    if not isinstance(value, list) or not value:
        raise ValueError(f"expected a non-empty list of topology ids or tables, got {toml_repr(value)}")
    for i, item in enumerate(value):
        if isinstance(item, dict):
            try:
                _sub_table(TopologyChoice, item)
            except ValueError as err:
                raise ValueError(f"item {i + 1}: {err}") from None
        elif not isinstance(item, str):
            raise ValueError(
                f"item {i + 1}: expected a topology id such as 'fat-tree' or "
                f"{{ name = 'fat-tree', oversubscription = 2.0 }}, got {toml_repr(item)}"
            )
    return [item if isinstance(item, str) else TopologyChoice.model_validate(item) for item in value]


def _overlap_list(value: Any) -> list[str | float]:
    if not isinstance(value, list) or not value:
        raise ValueError(f"expected a non-empty list such as ['dp', 'full'], got {toml_repr(value)}")
    for i, item in enumerate(value):
        if isinstance(item, bool) or not isinstance(item, str | int | float):
            raise ValueError(f"item {i + 1}: expected a mode name or a fraction, got {toml_repr(item)}")
        try:
            parse_overlap(item)
        except UsageError as err:
            raise ValueError(f"item {i + 1}: {err}") from None
    return list(value)


def _price(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not (math.isfinite(value) and value >= 0):
        raise ValueError(f"expected a finite number >= 0, got {toml_repr(value)}")
    return float(value)


def _price_overrides(value: Any) -> dict[str, float | dict[str, float]]:
    """`key = value` for every entry, or `[economics.prices.<id>]` tables of them for one entry."""
    if not isinstance(value, dict):
        raise ValueError(f"expected a table of prices, got {toml_repr(value)}")
    out: dict[str, float | dict[str, float]] = {}
    for key, v in value.items():
        try:
            if isinstance(v, dict):
                table: dict[str, float] = {}
                for k, price in v.items():
                    try:
                        table[k] = _price(price)
                    except ValueError as err:
                        raise ValueError(f"{k}: {err}") from None
                out[key] = table
            else:
                out[key] = _price(v)
        except ValueError as err:
            raise ValueError(f"{key}.{err}" if isinstance(v, dict) else f"{key}: {err}") from None
    return out


def names_of(name: str) -> PlainValidator:
    """A set of the names the input parameter `name` takes (its kind `names`): a list of them or one string of them,
    each at most once; read into their one spelling (`Param.normalised`)."""
    p = param(name)

    def check(value: Any) -> str:
        try:
            p.check(value)
        except UsageError:
            raise ValueError(f"expected {p.expected}, got {toml_repr(value)}") from None
        return str(p.normalised(value))

    return PlainValidator(check)


#: A list of counts, or a range.
CountAxis = Annotated[list[int] | Range, PlainValidator(_count_axis)]
#: A list of degrees, "search" or { search = true, max = N }.
DegreeAxis = Annotated[Literal["search"] | list[int] | Search, PlainValidator(_degree_axis)]


class TopologyChoice(Strict):
    name: str
    oversubscription: Annotated[float, Field(ge=1, allow_inf_nan=False)] | None = None


#: A list of topology ids or { name, oversubscription } tables.
TopologyList = Annotated[list[str | TopologyChoice], PlainValidator(_topology_list)]
#: A list of overlap modes or fractions.
OverlapList = Annotated[list[str | float], PlainValidator(_overlap_list)]
#: `key = value` for every entry, or tables of them for one entry.
Prices = Annotated[dict[str, float | dict[str, float]], PlainValidator(_price_overrides)]
