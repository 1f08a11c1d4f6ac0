"""The output schema, as the Rust core defines it (`scalefront_core::metrics`): every input column and every
metric, with its kind, unit, group and meaning. `scalefront.Evaluation`, sweep columns, CSV/Parquet exports,
``--json`` and the README's field table are laid out by it.

The typed :class:`~scalefront.Evaluation` dataclass (``_evaluation.py``) and the README table are generated from
it by ``python -m scalefront.dev.schema --write``; ``--check`` fails when either has drifted (the test suite runs
the check).
"""

from __future__ import annotations

from dataclasses import dataclass

from scalefront._core import schema as core_schema

__all__ = [
    "COLUMNS",
    "INPUTS",
    "INPUT_COLUMNS",
    "METRICS",
    "METRIC_COLUMNS",
    "SERVING_METRICS",
    "UNIT_SUFFIXES",
    "Column",
    "column",
]


@dataclass(frozen=True)
class Column:
    """One column of the schema."""

    name: str
    #: float, count, flag or text.
    kind: str
    doc: str
    unit: str = ""
    #: For metrics: result, step, hidden, memory, run, cluster or model; "input" for inputs.
    group: str = "input"
    #: For a metric a sweep can optimise: "min" or "max" (the objectives); None for the others.
    direction: str | None = None

    @property
    def python_type(self) -> str:
        return {"float": "float", "count": "int", "flag": "bool", "text": "str"}[self.kind]


_RAW = core_schema()
INPUTS = tuple(Column(i["name"], i["kind"], i["doc"]) for i in _RAW["inputs"])
METRICS = tuple(Column(m["name"], m["kind"], m["doc"], m["unit"], m["group"], m["direction"]) for m in _RAW["metrics"])
#: The metrics of a serving evaluation (`scalefront inference`), in export order.
SERVING_METRICS = tuple(
    Column(m["name"], m["kind"], m["doc"], m["unit"], m["group"], m["direction"]) for m in _RAW["serving_metrics"]
)
#: The suffix a column's name carries for its unit, by unit (``"days": "_days"``); other units ask for none.
UNIT_SUFFIXES: dict[str, str] = dict(_RAW["unit_suffixes"])
#: Input and metric column names, in order.
INPUT_COLUMNS: list[str] = [c.name for c in INPUTS]
METRIC_COLUMNS: list[str] = [c.name for c in METRICS]
#: Every column of an export, in order: inputs, then metrics.
COLUMNS: list[str] = INPUT_COLUMNS + METRIC_COLUMNS
_BY_NAME = {c.name: c for c in INPUTS + METRICS}


def column(name: str) -> Column:
    """The column with this name (KeyError if none)."""
    return _BY_NAME[name]
