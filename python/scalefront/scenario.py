"""Scenario files: a space of cluster designs and parallel layouts to sweep (``data/scenarios/*.toml``).

The format, every key, is documented in the README ("Scenario files"). Loading checks it completely and
reports the first problem as one line naming the file, the table and the key (with a suggestion for a
misspelt key), then builds the dict the Rust sweep engine takes (SI units, catalog entries resolved).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, ValidationError, model_validator

from scalefront import _core
from scalefront.catalog import (
    Catalog,
    FabricEntry,
    GpuEntry,
    ModelEntry,
    TopologyEntry,
    _parse_toml,
    _read,
    error_model_spec,
    load_model_file,
)
from scalefront.errors import CatalogError, ConfigurationError, UsageError
from scalefront.messages import describe, did_you_mean, key_text, toml_repr
from scalefront.model import builtin_catalog, parse_overlap

__all__ = [
    "AXES",
    "DEFAULT_SCENARIO",
    "OBJECTIVES",
    "MixPart",
    "Scenario",
    "builtin_scenarios",
    "load_mix",
    "load_scenario",
    "workload_names",
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


@dataclass(frozen=True)
class Scenario:
    """A loaded scenario: its file, its validated content and the names behind every axis index."""

    path: str
    spec: ScenarioFile
    model_name: str
    model: ModelEntry
    seq_len: int
    gpu_names: list[str]
    scale_up_names: list[str]
    gpu_counts: list[int]
    fabric_names: list[str]
    topology_names: list[str]
    oversubscriptions: list[float]
    overlap_names: list[str]
    space: dict[str, Any]

    @property
    def name(self) -> str:
        return self.spec.name

    def size(self) -> int:
        """Configurations in the space, counted exactly without evaluating any."""
        return int(_core.space_size(self.space))


def builtin_scenarios() -> dict[str, str]:
    """Built-in scenario ids and their TOML text."""
    return {
        p.removeprefix("scenarios/").removesuffix(".toml"): text
        for p, text in _core.data_files().items()
        if p.startswith("scenarios/")
    }


def _degree(axis: Any) -> Any:
    if axis == "search":
        return {"search": 2**31}
    if isinstance(axis, Search):
        return {"search": axis.max}
    return list(axis)


def read_scenario(source: str | Path) -> tuple[dict[str, Any], str]:
    """The parsed TOML of a scenario (built-in id or path) and the name to report errors against."""
    text_source = str(source)
    builtin = builtin_scenarios()
    if text_source in builtin and not Path(text_source).exists():
        file, text = f"built-in scenario {text_source}", builtin[text_source]
    else:
        file, text = text_source, _read(Path(text_source))
    return _parse_toml(text, file), file


def load_scenario(source: str | Path, catalog: Catalog | None = None, **overrides: Any) -> Scenario:
    """Load a scenario by built-in id or path; `overrides` as `build_scenario` takes them (a mix needs
    `workload=NAME`)."""
    raw, file = read_scenario(source)
    return build_scenario(raw, file, catalog, **overrides)


@dataclass(frozen=True)
class MixPart:
    """One workload of a scenario's mix, built as its own scenario (the same cluster, layouts and economics)."""

    name: str
    share: float
    scenario: Scenario


def workload_names(raw: dict[str, Any], file: str) -> list[str]:
    """The names of a parsed scenario's workloads (one, or the mix's), checking the file first."""
    return [name for name, _, _ in _validate(raw, file).mix()]


def load_mix(
    source: str | Path | tuple[dict[str, Any], str], catalog: Catalog | None = None, **overrides: Any
) -> list[MixPart]:
    """Every workload of a scenario (one at share 1, or each of its mix), each built as a scenario."""
    raw, file = source if isinstance(source, tuple) else read_scenario(source)
    return [
        MixPart(name, share, build_scenario(raw, file, catalog, workload=name if len(mix) > 1 else None, **overrides))
        for mix in [_validate(raw, file).mix()]
        for name, share, _ in mix
    ]


class _Problem:
    """Makes the one-line error of a scenario file: `<file>: [<table>] <key>: <what is wrong>`."""

    def __init__(self, file: str):
        self.file = file

    def __call__(self, where: str, msg: str) -> CatalogError:
        return CatalogError(f"{self.file}: {where}: {msg}")

    def looked_up(self, where: str, fn: Callable[[str], Any], name: str) -> Any:
        """`fn(name)`, an unknown name reported at `where`."""
        try:
            return fn(name)
        except CatalogError as err:
            raise self(where, str(err)) from None


def _chosen_workload(spec: ScenarioFile, name: str | None, bad: _Problem) -> Workload:
    mix = spec.mix()
    names = [n for n, _, _ in mix]
    if name is None:
        if spec.workloads is not None:
            raise UsageError(
                f"{bad.file}: the scenario is a mix of workloads ({', '.join(names)}); choose one with --workload "
                "NAME to sweep it, or weigh the mix with scalefront roi"
            )
        return mix[0][2]
    for n, _, w in mix:
        if n == name:
            return w
    raise UsageError(f"{bad.file}: no workload {name!r}{did_you_mean(name, names)}; workloads: {', '.join(names)}")


def _validate(raw: dict[str, Any], file: str) -> ScenarioFile:
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


def _check_no_repeats(sections: dict[str, BaseModel], bad: _Problem) -> None:
    """A value listed twice in an axis would sweep every configuration twice."""
    for table, section in sections.items():
        for key, value in section:
            if not isinstance(value, list):
                continue
            labels = [v.model_dump_json() if isinstance(v, BaseModel) else repr(v) for v in value]
            repeated = next((lab for i, lab in enumerate(labels) if lab in labels[:i]), None)
            if repeated is not None:
                raise bad(f"[{table}] {key}", f"{repeated} is listed twice (every configuration would be swept twice)")


def _scenario_model(wl: Workload, file: str, cat: Catalog, bad: _Problem) -> ModelEntry:
    if wl.model.endswith(".toml"):
        path = Path(wl.model)
        if not path.is_absolute() and Path(file).is_file():  # a scenario file: relative to its folder
            path = Path(file).parent / path
        return load_model_file(path)
    return bad.looked_up("[workload] model", cat.model, wl.model)  # type: ignore[no-any-return]


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


def _objectives(
    spec: ScenarioFile, objectives: list[str] | None, group_by: list[str] | None, bad: _Problem
) -> tuple[list[str], list[str]]:
    """The objectives and group-by axes: the caller's (reported as arguments) or the file's (as its keys)."""
    chosen = []
    for given, in_file, where, option, problem_of in (
        (objectives, spec.objectives.minimize, "[objectives] minimize", "objectives", objectives_problem),
        (group_by, spec.objectives.group_by, "[objectives] group_by", "group_by", group_by_problem),
    ):
        names = list(in_file if given is None else given)
        problem = problem_of(names)
        if problem and given is not None:
            raise UsageError(f"{option}: {problem}")
        if problem:
            raise bad(where, problem)
        chosen.append(names)
    return chosen[0], chosen[1]


@dataclass(frozen=True)
class _ClusterAxes:
    """The cluster axes resolved in the catalog: entries and names in axis order."""

    gpu_counts: list[int]
    gpus: list[GpuEntry]
    scale_up_names: list[str]
    #: For each GPU, the indices (into scale_up_names) of the domains it is swept with.
    scale_ups_of_gpu: list[list[int]]
    fabrics: list[FabricEntry]
    topology_names: list[str]
    oversubscriptions: list[float]
    topologies: list[dict[str, Any]]


def _gpu_counts(cl: Cluster, bad: _Problem) -> list[int]:
    try:
        return cl.gpus.values() if isinstance(cl.gpus, Range) else list(cl.gpus)
    except ValueError as err:
        raise bad("[cluster] gpus", str(err)) from None


def _scale_ups(cl: Cluster, gpus: list[GpuEntry], cat: Catalog, bad: _Problem) -> tuple[list[str], list[list[int]]]:
    """Every domain swept, and per GPU the ones it can join (`default`: its own). A GPU is swept only with
    domains it can join; a listed domain that no GPU can join, or a GPU left with none, is an error."""
    for s in cl.scale_up:
        if s != "default":
            bad.looked_up("[cluster] scale_up", cat.scale_up_domain, s)
    names: list[str] = []
    per_gpu: list[list[str]] = []
    for gid, g in zip(cl.gpu, gpus, strict=True):
        mine = [g.default_scale_up if s == "default" else s for s in cl.scale_up]
        joinable = [s for s in dict.fromkeys(mine) if cat.scale_up[s].accepts(g)]
        if not joinable:
            first = next(s for s in mine if s not in joinable)
            raise bad("[cluster] scale_up", cat.mismatch(gid, first) + " (add 'default' to sweep its own)")
        per_gpu.append(joinable)
        names += [s for s in joinable if s not in names]
    for s in cl.scale_up:
        if s != "default" and s not in names:
            raise bad("[cluster] scale_up", cat.mismatch(cl.gpu[0], s))
    return names, [sorted(names.index(s) for s in joinable) for joinable in per_gpu]


def _topologies(cl: Cluster, cat: Catalog, bad: _Problem) -> tuple[list[str], list[float], list[dict[str, Any]]]:
    names, oversubs, specs = [], [], []
    for t in cl.topology:
        choice = TopologyChoice(name=t) if isinstance(t, str) else t
        entry: TopologyEntry = bad.looked_up("[cluster] topology", cat.topology, choice.name)
        over = entry.oversubscription if choice.oversubscription is None else choice.oversubscription
        names.append(choice.name)
        oversubs.append(float(over))
        specs.append(entry.core_spec(over))
    return names, oversubs, specs


def _cluster_axes(cl: Cluster, cat: Catalog, bad: _Problem) -> _ClusterAxes:
    gpus = [bad.looked_up("[cluster] gpu", cat.gpu, g) for g in cl.gpu]
    fabrics = [bad.looked_up("[cluster] fabric", cat.fabric, f) for f in cl.fabric]
    scale_up_names, scale_ups_of_gpu = _scale_ups(cl, gpus, cat, bad)
    topology_names, oversubscriptions, topologies = _topologies(cl, cat, bad)
    return _ClusterAxes(
        _gpu_counts(cl, bad), gpus, scale_up_names, scale_ups_of_gpu, fabrics, topology_names, oversubscriptions,
        topologies,
    )  # fmt: skip


@dataclass(frozen=True)
class _Prices:
    """The scenario's prices: the catalog's, then `[economics.prices]` for all entries, then per-entry tables."""

    scalar: dict[str, float]
    per_entry: dict[str, dict[str, float]]
    economics: dict[str, Any]

    def of(self, entry_id: str, base: BaseModel) -> dict[str, float]:
        values = base.model_dump()
        for source in (self.scalar, self.per_entry.get(entry_id, {})):
            for k, v in source.items():
                if k in values:
                    values[k] = float(v)
        return values


def _prices(econ: EconomicsSection, cl: Cluster, scenario_fabrics: list[str], cat: Catalog, bad: _Problem) -> _Prices:
    scalar = {k: v for k, v in econ.prices.items() if not isinstance(v, dict)}
    per_entry = {k: v for k, v in econ.prices.items() if isinstance(v, dict)}
    known_ids = set(cl.gpu) | set(cl.fabric) | set(scenario_fabrics)
    for key in per_entry:
        if key not in known_ids:
            raise bad("[economics.prices]", f"{key!r} is neither a GPU nor a fabric of this scenario")
    economics = {**cat.economics_or_error().model_dump(), "cost_mode": econ.mode}
    keys = set(economics) - {"cost_mode"}
    for g in cl.gpu:
        keys |= set(cat.gpu_price(g).model_dump())
    for f in cl.fabric:
        keys |= set(cat.fabric_price(f).model_dump())
    for key in list(scalar) + [k for table in per_entry.values() for k in table]:
        if key not in keys:
            hint = did_you_mean(key, sorted(keys)) or f"; known: {', '.join(sorted(keys))}"
            raise bad("[economics.prices]", f"unknown price {key!r}{hint}")
    economics.update({k: float(v) for k, v in scalar.items() if k in economics})
    return _Prices(scalar, per_entry, economics)


def _overlaps(par: Parallelism, scale: float) -> list[dict[str, float]]:
    """Each overlap choice as fractions, multiplied by `scale` and clamped to [0, 1]."""
    return [{k: min(1.0, max(0.0, v * scale)) for k, v in parse_overlap(o).core_spec().items()} for o in par.overlap]


#: Where a core figure sits in a scenario file, for its error message.
_FIELD_WHERE = {key: f"[workload] {key}" for key in ("tokens", "global_batch", "seq_len")}


def _check_space(space: dict[str, Any], bad: _Problem) -> None:
    """The engine's own checks of the space (a whole number of tokens, ...), named by file and key."""
    try:
        _core.space_size(space)
    except ConfigurationError as err:
        raise bad(_FIELD_WHERE.get(err.field or "", "[workload]"), err.message) from None


def build_scenario(
    raw: dict[str, Any],
    file: str,
    catalog: Catalog | None = None,
    *,
    group_by: list[str] | None = None,
    objectives: list[str] | None = None,
    fabrics: list[str] | None = None,
    overlap_scale: float = 1.0,
    workload: str | None = None,
    cost_mode: str | None = None,
) -> Scenario:
    """Check a parsed scenario and build the engine's space. `file` names it in errors (and, when it is a
    path, anchors a relative model file). `group_by`, `objectives`, `fabrics` and `cost_mode` override the
    scenario's; `overlap_scale` multiplies every overlap fraction (clamped to [0, 1]), for sensitivity studies.
    A scenario with a workload mix is built for one of its workloads, `workload` (by name)."""
    cat = catalog or builtin_catalog()
    bad = _Problem(file)
    spec = _validate(raw, file)
    wl = _chosen_workload(spec, workload, bad)
    par, econ = spec.parallelism, spec.economics
    if cost_mode is not None:
        econ = econ.model_copy(update={"mode": cost_mode})
    cl = spec.cluster if fabrics is None else spec.cluster.model_copy(update={"fabric": list(fabrics)})
    _check_no_repeats({"cluster": cl, "parallelism": par, "workload": wl}, bad)
    model = _scenario_model(wl, file, cat, bad)
    axes = _cluster_axes(cl, cat, bad)
    prices = _prices(econ, cl, list(spec.cluster.fabric), cat, bad)
    minimize, groups = _objectives(spec, objectives, group_by, bad)
    seq_len = wl.seq_len or model.seq_len
    space = {
        "model": model.core_spec(),
        "global_batch": wl.global_batch,
        "seq_len": seq_len,
        "tokens": float(wl.tokens),
        "flash_attention": wl.flash_attention,
        "gpus": [
            {"spec": g.core_spec(), "prices": prices.of(gid, cat.gpu_price(gid)), "scale_ups": allowed}
            for gid, g, allowed in zip(cl.gpu, axes.gpus, axes.scale_ups_of_gpu, strict=True)
        ],
        "scale_ups": [
            {"spec": cat.scale_up[name].core_spec(), "prices": cat.scale_up_price(name).model_dump()}
            for name in axes.scale_up_names
        ],
        "gpu_counts": axes.gpu_counts,
        "fabrics": [
            {"spec": f.core_spec(), "prices": prices.of(fid, cat.fabric_price(fid))}
            for fid, f in zip(cl.fabric, axes.fabrics, strict=True)
        ],
        "topologies": axes.topologies,
        "precisions": list(wl.precision),
        "tp": _degree(par.tp),
        "pp": _degree(par.pp),
        "cp": _degree(par.cp),
        "dp": _degree(par.dp),
        "ep": _degree(par.ep),
        "vpp": list(par.vpp),
        "micro_batch": list(par.micro_batch),
        "sequence_parallel": list(par.sequence_parallel),
        "recompute": list(par.recompute),
        "zero": list(par.zero),
        "overlap": _overlaps(par, overlap_scale),
        "economics": prices.economics,
        "reliability": bad.looked_up("[economics] reliability", cat.reliability_profile, econ.reliability).core_spec(),
        "settings": {
            "etp": par.etp,
            "first_stage_layers": par.first_stage_layers,
            "last_stage_layers": par.last_stage_layers,
            "embedding_in_split": par.embedding_in_split,
            "loss_in_split": par.loss_in_split,
            "reshard_after_forward": par.reshard_after_forward,
            "grad_reduce_dtype": wl.grad_reduce_dtype,
            "moe_imbalance": float(wl.moe_imbalance),
            "moe_dispatcher": wl.moe_dispatcher,
            "mtp_layers": wl.mtp_layers,
            "errors": error_model_spec(cat, wl.interval),
        },
        "objectives": minimize,
        "group_by": groups,
    }
    _check_space(space, bad)
    return Scenario(
        path=file,
        spec=spec,
        model_name=wl.model,
        model=model,
        seq_len=seq_len,
        gpu_names=list(cl.gpu),
        scale_up_names=axes.scale_up_names,
        gpu_counts=axes.gpu_counts,
        fabric_names=list(cl.fabric),
        topology_names=axes.topology_names,
        oversubscriptions=axes.oversubscriptions,
        overlap_names=[str(o) for o in par.overlap],
        space=space,
    )
