"""The input parameters, as the Rust core defines them once (`scalefront_core::inputs`, read from
``_core.parameters()`` and ``_core.enums()``): each parameter's kind, unit, default, bounds or choices, meaning,
where it lands in the core's configuration and which surfaces take it.

What needs static text is generated from it by ``python -m scalefront.dev.schema --write`` (the ``Inputs`` record
and the enum ``Literal`` types of ``scalefront._inputs``, the scenario file's tables, the docs' option tables);
what runs is derived here at import: a value's check (`Param.check`), its conversion (`Param.normalised`), and the
core's ``parallelism`` and ``training`` sections of a set of values (`core_sections`). The command line's flags
(`scalefront.cli.parser.add_input_options`), the scenario's labels and the sweep's rows read the same table.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from scalefront._core import enums as core_enums
from scalefront._core import parameters as core_parameters
from scalefront.errors import UsageError

__all__ = [
    "ENUMS",
    "PARAMS",
    "Param",
    "ScenarioKey",
    "core_sections",
    "enum_names",
    "param",
    "serving_section",
    "taking",
]


def _toml(text: str) -> Any:
    """A value as TOML writes it (``8``, ``"dp"``, ``["bf16"]``); None for ""."""
    return tomllib.loads(f"v = {text}")["v"] if text else None


@dataclass(frozen=True)
class ScenarioKey:
    """Where a parameter sits in a scenario file, how it is written there and what a missing key means."""

    table: str
    key: str
    #: one, list, counts, degrees, topologies or prices.
    form: str
    #: A list's length (list form; max_items 0: no limit).
    min_items: int
    max_items: int
    #: The default (None: see `means`, or `required`), and as TOML writes it.
    default: Any
    default_toml: str
    means: str
    required: bool

    @property
    def where(self) -> str:
        """How an error names the key: ``[parallelism] tp``."""
        return f"[{self.table}] {self.key}"


@dataclass(frozen=True)
class Param:
    """One input parameter (see the module doc and the core's `inputs::Param`)."""

    name: str
    #: count, tokens, float, ratio, level, enum, names, flag, id, model, overlap or prices.
    kind: str
    #: workload, cluster, parallelism, software, cost or sweep.
    group: str
    doc: str
    unit: str
    #: The default; None when a missing value means `means` (derived, or "not set"); and as TOML writes it.
    default: Any
    default_toml: str
    means: str
    ge: float | None
    gt: float | None
    le: float | None
    lt: float | None
    #: The accepted names and the type they form (`Recompute`, `Objective`, `Axis`); "" and () for none.
    choice_type: str
    choices: tuple[str, ...]
    choice_docs: tuple[str, ...]
    #: For an id: the catalog section its names come from.
    catalog: str
    #: api, flag, bom, column, axis, roi.
    surfaces: frozenset[str]
    #: The field it sets in the core's configuration (``parallelism.zero_stage``); "" when resolved here.
    core: str
    #: The field it sets in the core's serving spec (``scalefront_core::serve::Serving``); "" for none.
    serving: str
    scenario: ScenarioKey | None

    def takes(self, surface: str) -> bool:
        return surface in self.surfaces

    @property
    def optional(self) -> bool:
        """Whether None is a value: a missing value means something (`means`) rather than a default."""
        return bool(self.means)

    @property
    def expected(self) -> str:
        """What a value must be, as an error message says it."""
        if self.kind == "enum":
            return f"one of {', '.join(self.choices)}"
        if self.kind == "names":
            return f"names among {', '.join(self.choices)}, each at most once, comma-separated (or none)"
        if self.kind == "flag":
            return "true or false"
        if self.kind == "count":
            if self.ge == 1 and self.le is not None:
                return f"a positive integer up to {int(self.le):,}"
            if self.ge == 0 and self.le is not None and self.le > 2**16:
                return "a whole number >= 0"
            return f"a whole number from {self.ge:g} to {self.le:g}"
        if self.kind == "tokens":
            return "a positive number"
        if self.gt is not None and self.lt is not None:
            return f"a number strictly between {self.gt:g} and {self.lt:g}"
        bounds = [(">=", self.ge), (">", self.gt), ("<=", self.le), ("<", self.lt)]
        parts = [f"{op} {v:g}" for op, v in bounds if v is not None]
        return f"a number {' and '.join(parts)}" if parts else "a number"

    def _within(self, v: float) -> bool:
        return (
            (self.ge is None or v >= self.ge)
            and (self.gt is None or v > self.gt)
            and (self.le is None or v <= self.le)
            and (self.lt is None or v < self.lt)
        )

    def check(self, value: Any) -> None:
        """UsageError naming the parameter when `value` is not one it takes. Names (ids, models) are looked up in
        the catalog, overlaps and prices read, by the layer that resolves them."""
        if value is None and self.optional:
            return
        if self.kind == "enum":
            ok = value in self.choices
        elif self.kind == "names":
            names = self._names(value)
            ok = names is not None and all(n in self.choices for n in names) and len(set(names)) == len(names)
        elif self.kind == "flag":
            ok = isinstance(value, bool)
        elif self.kind == "count":
            ok = not isinstance(value, bool) and isinstance(value, int) and self._within(value)
        elif self.kind in ("tokens", "float", "ratio", "level"):
            number = not isinstance(value, bool) and isinstance(value, int | float)
            ok = number and math.isfinite(value) and self._within(value)
        else:
            return
        if not ok:
            raise UsageError(f"{self.name}={value!r}: expected {self.expected}")

    def normalised(self, value: Any) -> Any:
        """The value as the core and the result's columns take it: a whole count, a real number, a bool."""
        if value is None:
            return None
        if self.kind == "count":
            return int(value)
        if self.kind in ("tokens", "float", "ratio", "level"):
            return float(value)
        if self.kind == "flag":
            return bool(value)
        if self.kind == "names":
            given = set(self._names(value) or ())
            return ",".join(n for n in self.choices if n in given)
        return value

    @staticmethod
    def _names(value: Any) -> list[str] | None:
        """The names a names-kind value gives (a comma- or space-separated string, or a list of strings); None when
        it is neither."""
        if isinstance(value, str):
            return [n for n in value.replace(",", " ").split() if n]
        if isinstance(value, list | tuple) and all(isinstance(n, str) for n in value):
            return list(value)
        return None


def _scenario_key(raw: Mapping[str, Any] | None) -> ScenarioKey | None:
    if raw is None:
        return None
    return ScenarioKey(
        raw["table"],
        raw["key"],
        raw["form"],
        raw["min_items"],
        raw["max_items"],
        _toml(raw["default"]),
        raw["default"],
        raw["means"],
        raw["required"],
    )


def _load() -> tuple[Param, ...]:
    out = []
    for raw in core_parameters():
        out.append(
            Param(
                name=raw["name"],
                kind=raw["kind"],
                group=raw["group"],
                doc=raw["doc"],
                unit=raw["unit"],
                default=_toml(raw["default"]),
                default_toml=raw["default"],
                means=raw["means"],
                ge=raw["ge"],
                gt=raw["gt"],
                le=raw["le"],
                lt=raw["lt"],
                choice_type=raw["choice_type"],
                choices=tuple(c["name"] for c in raw["choices"]),
                choice_docs=tuple(c["doc"] for c in raw["choices"]),
                catalog=raw["catalog"],
                surfaces=frozenset(raw["surfaces"]),
                core=raw["core"],
                serving=raw["serving"],
                scenario=_scenario_key(raw["scenario"]),
            )
        )
    return tuple(out)


#: Every input parameter, in the order of the result's input columns (the others beside their kin).
PARAMS: tuple[Param, ...] = _load()
_BY_NAME = {p.name: p for p in PARAMS}
#: Every named enum of the core: its names, in declaration order.
ENUMS: dict[str, tuple[str, ...]] = {e["name"]: tuple(v["name"] for v in e["variants"]) for e in core_enums()}


def param(name: str) -> Param:
    """The parameter of this name (KeyError if none)."""
    return _BY_NAME[name]


def taking(surface: str) -> Iterator[Param]:
    """The parameters a surface takes (api, flag, bom, column, axis, roi, serve), in table order."""
    return (p for p in PARAMS if p.takes(surface))


def enum_names(name: str) -> tuple[str, ...]:
    """The names of the core's named enum `name` (`DesignRule`, `Generation`, ...), in declaration order."""
    return ENUMS[name]


def core_sections(values: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The core's ``parallelism`` and ``training`` dicts of these values (by parameter name; those without a core
    field are left out), each value normalised."""
    out: dict[str, dict[str, Any]] = {"parallelism": {}, "training": {}}
    for p in PARAMS:
        if p.core and p.name in values:
            section, field = p.core.split(".")
            out[section][field] = p.normalised(values[p.name])
    return out


def serving_section(values: Mapping[str, Any]) -> dict[str, Any]:
    """The core's serving spec of these values (by parameter name; every field the table maps), normalised."""
    return {p.serving: p.normalised(values[p.name]) for p in PARAMS if p.serving}
