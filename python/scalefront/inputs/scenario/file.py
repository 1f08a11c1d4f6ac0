"""The scenario file's format (``data/scenarios/*.toml``; every key is documented in the README, "Scenario files"):
its tables and keys as pydantic models, the axes that take several forms (lists, ranges, searches) checked by hand
so that a bad value is answered with the forms it may take, and the one line that names the file, the table and
the key of the first problem (`validate_file`).
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, ValidationError, model_validator

from scalefront.errors import CatalogError, UsageError
from scalefront.inputs.messages import describe, did_you_mean, key_text, toml_repr
from scalefront.inputs.model import parse_overlap

__all__ = [
    "AXES",
    "DEFAULT_SCENARIO",
    "OBJECTIVES",
    "Cluster",
    "EconomicsSection",
    "MixWorkload",
    "Parallelism",
    "Range",
    "ScenarioFile",
    "Search",
    "TopologyChoice",
    "Workload",
    "group_by_problem",
    "objectives_problem",
    "validate_file",
]

DEFAULT_SCENARIO = "ib-vs-roce"

#: Objectives a sweep can minimise (MFU is maximised), by their column names.
OBJECTIVES = (
    "time_to_train_days",
    "cost_to_train_usd",
    "mfu",
    "usd_per_million_tokens",
    "energy_mwh",
    "network_capex_usd",
)
#: Axes of a sweep, by their column names.
AXES = (
    "gpu",
    "scale_up",
    "gpus",
    "fabric",
    "topology",
    "precision",
    "tp",
    "pp",
    "dp",
    "cp",
    "ep",
    "vpp",
    "micro_batch",
    "sequence_parallel",
    "recompute",
    "zero",
    "overlap",
)

PositiveInt = Annotated[int, Field(ge=1, le=2**31)]
_M = TypeVar("_M", bound=BaseModel)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class Range(_Strict):
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
        out, v = [], self.start
        while v <= self.stop:
            out.append(v)
            v = v * self.factor if self.factor else v + (self.step or 1)
        return out


class Search(_Strict):
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


CountAxis = Annotated[list[int] | Range, PlainValidator(_count_axis)]
DegreeAxis = Annotated[Literal["search"] | list[int] | Search, PlainValidator(_degree_axis)]
NonEmpty = Field(min_length=1)


class TopologyChoice(_Strict):
    name: str
    oversubscription: Annotated[float, Field(ge=1, allow_inf_nan=False)] | None = None


class Workload(_Strict):
    model: str
    tokens: Annotated[float, Field(gt=0, allow_inf_nan=False)]
    global_batch: PositiveInt
    seq_len: PositiveInt | None = None
    precision: Annotated[list[Literal["bf16", "fp8"]], NonEmpty] = ["bf16"]
    flash_attention: bool = True
    grad_reduce_dtype: Literal["fp32", "bf16"] = "fp32"
    moe_imbalance: Annotated[float, Field(ge=1, allow_inf_nan=False)] = 1.0
    moe_dispatcher: Literal["alltoall", "flex", "allgather"] = "alltoall"
    mtp_layers: Annotated[int, Field(ge=0)] = 0
    #: Coverage of the _lo/_hi prediction intervals (default: data/model_error.toml's level).
    interval: Annotated[float, Field(gt=0, lt=1)] | None = None


class MixWorkload(Workload):
    """One workload of a mix: a share of the cluster's busy hours."""

    #: A label (default: the model id); names must differ within a mix.
    name: str | None = None
    share: Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)]

    @property
    def label(self) -> str:
        return self.name or self.model


class Cluster(_Strict):
    gpu: Annotated[list[str], NonEmpty]
    gpus: CountAxis
    scale_up: Annotated[list[str], NonEmpty] = ["default"]
    fabric: Annotated[list[str], NonEmpty]
    topology: Annotated[list[str | TopologyChoice], PlainValidator(_topology_list)]


class Parallelism(_Strict):
    tp: DegreeAxis = "search"
    pp: DegreeAxis = "search"
    cp: DegreeAxis = [1]
    dp: DegreeAxis = "search"
    ep: DegreeAxis = [1]
    vpp: Annotated[list[PositiveInt], NonEmpty] = [1]
    micro_batch: Annotated[list[PositiveInt], NonEmpty] = [1]
    sequence_parallel: Annotated[list[bool], NonEmpty] = [True]
    recompute: Annotated[list[Literal["none", "selective", "full"]], NonEmpty] = ["selective"]
    zero: Annotated[list[Annotated[int, Field(ge=0, le=3)]], NonEmpty] = [1]
    overlap: Annotated[list[str | float], PlainValidator(_overlap_list)] = ["dp"]
    #: Shared by every configuration: expert TP (0 = tp), uneven pipeline stages, FSDP resharding.
    etp: Annotated[int, Field(ge=0)] = 0
    first_stage_layers: Annotated[int, Field(ge=0)] | None = None
    last_stage_layers: Annotated[int, Field(ge=0)] | None = None
    embedding_in_split: bool = False
    loss_in_split: bool = False
    reshard_after_forward: bool = True


class EconomicsSection(_Strict):
    mode: Literal["rent", "own"] = "rent"
    #: Failure profile of data/reliability.toml.
    reliability: str = "default"
    #: Overrides: `key = value` for every GPU/fabric, or `[economics.prices.<id>]` tables for one entry.
    prices: Annotated[dict[str, float | dict[str, float]], PlainValidator(_price_overrides)] = {}


class Objectives(_Strict):
    minimize: Annotated[list[Literal[OBJECTIVES]], Field(min_length=2, max_length=3)] = [  # type: ignore[valid-type]
        "time_to_train_days",
        "cost_to_train_usd",
    ]
    group_by: Annotated[list[Literal[AXES]], NonEmpty] = ["fabric"]  # type: ignore[valid-type]


#: Shares of a mix must add up to 1 within this.
SHARE_TOLERANCE = 1e-6


class ScenarioFile(_Strict):
    name: str
    description: str = ""
    #: One workload ...
    workload: Workload | None = None
    #: ... or a mix: several workloads, each with its share of the cluster's busy hours (shares sum to 1).
    workloads: Annotated[list[MixWorkload], Field(min_length=1)] | None = None
    cluster: Cluster
    parallelism: Parallelism = Parallelism()
    economics: EconomicsSection = EconomicsSection()
    objectives: Objectives = Objectives()

    @model_validator(mode="after")
    def _one_workload_or_a_mix(self) -> ScenarioFile:
        if (self.workload is None) == (self.workloads is None):
            raise ValueError(
                "[workload]: give one [workload] table or a mix of [[workloads]] tables (each with a share), not "
                + ("both" if self.workload is not None else "neither")
            )
        if self.workloads is not None:
            labels = [w.label for w in self.workloads]
            repeated = next((n for i, n in enumerate(labels) if n in labels[:i]), None)
            if repeated is not None:
                raise ValueError(
                    f"[[workloads]] name: {repeated!r} is listed twice; give each workload a different name"
                )
            total = sum(w.share for w in self.workloads)
            if abs(total - 1.0) > SHARE_TOLERANCE:
                shares = " + ".join(f"{w.share:g}" for w in self.workloads)
                raise ValueError(
                    f"[[workloads]] share: the shares add up to {shares} = {total:g}; they must add up to 1"
                )
        return self

    def mix(self) -> list[tuple[str, float, Workload]]:
        """(name, share, workload) of every workload: one at share 1, or the mix."""
        if self.workloads is None:
            assert self.workload is not None
            return [(self.workload.model, 1.0, self.workload)]
        return [(w.label, w.share, w) for w in self.workloads]


def objectives_problem(names: list[str]) -> str | None:
    """What is wrong with a list of objectives (two or three distinct names of OBJECTIVES), if anything."""
    for o in names:
        if o not in OBJECTIVES:
            return f"objective {o!r} is not one of {', '.join(OBJECTIVES)}{did_you_mean(o, OBJECTIVES)}"
    repeated = next((o for i, o in enumerate(names) if o in names[:i]), None)
    if repeated is not None:
        return f"objective {repeated!r} is listed twice; give two or three different objectives"
    if not 2 <= len(names) <= 3:
        return f"give two or three objectives, got {len(names)}"
    return None


def group_by_problem(axes: list[str]) -> str | None:
    """What is wrong with a list of group-by axes (distinct names of AXES), if anything."""
    for a in axes:
        if a not in AXES:
            return f"group-by axis {a!r} is not one of {', '.join(AXES)}{did_you_mean(a, AXES)}"
    repeated = next((a for i, a in enumerate(axes) if a in axes[:i]), None)
    return f"group-by axis {repeated!r} is listed twice" if repeated is not None else None


def validate_file(raw: dict[str, Any], file: str) -> ScenarioFile:
    """A parsed scenario checked against the format, or CatalogError naming the file, table and key."""
    try:
        return ScenarioFile.model_validate(raw)
    except ValidationError as err:
        parts, msg = describe(err, ScenarioFile, raw)
        if not parts and msg.startswith("["):  # a whole-file rule that names its own table and key
            raise CatalogError(f"{file}: {msg}") from None
        raise CatalogError(f"{file}: {_where(parts, raw)}: {msg}") from None


def _where(parts: list[str | int], raw: dict[str, Any]) -> str:
    """`['cluster', 'gpus', 0]` -> `[cluster] gpus, item 1`; a top-level table -> `[table]`; else the key."""
    if not parts:
        return "top level"
    head = str(parts[0])
    if len(parts) == 1:
        return f"[{head}]" if isinstance(raw.get(head), dict) or head in _TABLES else head
    return f"[{head}] {key_text(parts[1:])}"


_TABLES = ("workload", "workloads", "cluster", "parallelism", "economics", "objectives")
