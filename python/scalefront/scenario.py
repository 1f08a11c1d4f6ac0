"""Scenario files: a space of cluster designs and parallel layouts to sweep (``data/scenarios/*.toml``).

The format, every key, is documented in the README ("Scenario files"). Loading checks it completely and
reports the first problem as one line naming the file, the table and the key (with a suggestion for a
misspelt key), then builds the dict the Rust sweep engine takes (SI units, catalog entries resolved).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from scalefront import _core
from scalefront.catalog import Catalog, ModelEntry, _first_error, _parse_toml, _read, load_model_file
from scalefront.errors import CatalogError
from scalefront.model import builtin_catalog, parse_overlap

__all__ = ["AXES", "DEFAULT_SCENARIO", "OBJECTIVES", "Scenario", "builtin_scenarios", "load_scenario"]

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
            v = v * self.factor if self.factor else v + self.step
        return out


class Search(_Strict):
    """Every divisor of the GPU count up to `max`."""

    search: Literal[True]
    max: PositiveInt = 2**31


IntAxis = Annotated[list[PositiveInt], Field(min_length=1)] | Range
DegreeAxis = Literal["search"] | Annotated[list[PositiveInt], Field(min_length=1)] | Search


class TopologyChoice(_Strict):
    name: str
    oversubscription: Annotated[float, Field(ge=1, allow_inf_nan=False)] | None = None


class Workload(_Strict):
    model: str
    tokens: Annotated[float, Field(gt=0, allow_inf_nan=False)]
    global_batch: PositiveInt
    seq_len: PositiveInt | None = None
    precision: Annotated[list[Literal["bf16", "fp8"]], Field(min_length=1)] = ["bf16"]
    flash_attention: bool = True


class Cluster(_Strict):
    gpu: Annotated[list[str], Field(min_length=1)]
    gpus: IntAxis
    scale_up: Annotated[list[str], Field(min_length=1)] = ["default"]
    fabric: Annotated[list[str], Field(min_length=1)]
    topology: Annotated[list[str | TopologyChoice], Field(min_length=1)]


class Parallelism(_Strict):
    tp: DegreeAxis = "search"
    pp: DegreeAxis = "search"
    cp: DegreeAxis = [1]
    dp: DegreeAxis = "search"
    ep: DegreeAxis = [1]
    vpp: Annotated[list[PositiveInt], Field(min_length=1)] = [1]
    micro_batch: Annotated[list[PositiveInt], Field(min_length=1)] = [1]
    sequence_parallel: Annotated[list[bool], Field(min_length=1)] = [True]
    recompute: Annotated[list[Literal["none", "selective", "full"]], Field(min_length=1)] = ["selective"]
    zero: Annotated[list[Annotated[int, Field(ge=0, le=3)]], Field(min_length=1)] = [1]
    overlap: Annotated[list[str | Annotated[float, Field(ge=0, le=1)]], Field(min_length=1)] = ["dp"]

    @field_validator("overlap")
    @classmethod
    def _known_overlap(cls, v: list[Any]) -> list[Any]:
        for item in v:
            parse_overlap(item)  # raises UsageError with the accepted forms
        return v


PriceValue = Annotated[float, Field(ge=0, allow_inf_nan=False)]


class EconomicsSection(_Strict):
    mode: Literal["rent", "own"] = "rent"
    #: Failure profile of data/reliability.toml.
    reliability: str = "default"
    #: Overrides: `key = value` for every GPU/fabric, or `[economics.prices.<id>]` tables for one entry (their
    #: values are checked after parsing, to name the entry in the message).
    prices: dict[str, PriceValue | dict[str, Any]] = {}


class Objectives(_Strict):
    minimize: Annotated[list[Literal[OBJECTIVES]], Field(min_length=2, max_length=3)] = [  # type: ignore[valid-type]
        "time_to_train_days",
        "cost_to_train_usd",
    ]
    group_by: Annotated[list[Literal[AXES]], Field(min_length=1)] = ["fabric"]  # type: ignore[valid-type]


class ScenarioFile(_Strict):
    name: str
    description: str = ""
    workload: Workload
    cluster: Cluster
    parallelism: Parallelism = Parallelism()
    economics: EconomicsSection = EconomicsSection()
    objectives: Objectives = Objectives()


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
    """Load a scenario by built-in id or path; `overrides` as `build_scenario` takes them."""
    raw, file = read_scenario(source)
    return build_scenario(raw, file, catalog, **overrides)


def build_scenario(
    raw: dict[str, Any],
    file: str,
    catalog: Catalog | None = None,
    *,
    group_by: list[str] | None = None,
    objectives: list[str] | None = None,
    fabrics: list[str] | None = None,
    overlap_scale: float = 1.0,
) -> Scenario:
    """Check a parsed scenario and build the engine's space. `file` names it in errors (and, when it is a
    path, anchors a relative model file). `group_by`, `objectives` and `fabrics` override the scenario's;
    `overlap_scale` multiplies every overlap fraction (clamped to [0, 1]), for sensitivity studies."""
    cat = catalog or builtin_catalog()
    try:
        spec = ScenarioFile.model_validate(raw)
    except ValidationError as err:
        where, msg = _first_error(err, _model_at(err))
        raise CatalogError(f"{file}: {_where(where)}: {msg}") from None
    except ValueError as err:  # overlap forms, ranges
        raise CatalogError(f"{file}: {err}") from None

    def bad(where: str, msg: str) -> CatalogError:
        return CatalogError(f"{file}: {where}: {msg}")

    wl, cl, par, econ = spec.workload, spec.cluster, spec.parallelism, spec.economics
    scenario_fabrics = list(cl.fabric)
    if fabrics is not None:
        cl = cl.model_copy(update={"fabric": list(fabrics)})
    for table, section in (("cluster", cl), ("parallelism", par), ("workload", wl)):
        for key, value in section:
            if isinstance(value, list):
                labels = [v.model_dump_json() if isinstance(v, BaseModel) else repr(v) for v in value]
                repeated = next((lab for i, lab in enumerate(labels) if lab in labels[:i]), None)
                if repeated is not None:
                    raise bad(
                        f"[{table}] {key}", f"{repeated} is listed twice (every configuration would be swept twice)"
                    )
    for entry_id, table in econ.prices.items():
        if isinstance(table, dict):
            for key, value in table.items():
                if (
                    isinstance(value, bool)
                    or not isinstance(value, (int, float))
                    or not value >= 0
                    or value == float("inf")
                ):
                    raise bad(f"[economics.prices.{entry_id}] {key}", f"expected a finite number >= 0, got {value!r}")
    model_name = wl.model
    if model_name.endswith(".toml"):
        path = Path(model_name)
        if not path.is_absolute() and Path(file).is_file():  # a scenario file: relative to its folder
            path = Path(file).parent / path
        model = load_model_file(path)
    else:
        try:
            model = cat.model(model_name)
        except CatalogError as err:
            raise bad("[workload] model", str(err)) from None
    seq_len = wl.seq_len or model.seq_len
    try:
        gpu_counts = cl.gpus.values() if isinstance(cl.gpus, Range) else list(cl.gpus)
    except ValueError as err:
        raise bad("[cluster] gpus", str(err)) from None

    def lookup(kind: str, fn, name: str):
        try:
            return fn(name)
        except CatalogError as err:
            raise bad(f"[cluster] {kind}", str(err)) from None

    gpus = [lookup("gpu", cat.gpu, g) for g in cl.gpu]
    fabrics = [lookup("fabric", cat.fabric, f) for f in cl.fabric]
    scale_up_names: list[str] = []
    for g in gpus:
        for s in cl.scale_up:
            name = g.default_scale_up if s == "default" else s
            if name not in scale_up_names:
                scale_up_names.append(name)
    scale_ups = [lookup("scale_up", cat.scale_up_domain, s) for s in scale_up_names]
    topo_names, topos, oversubs = [], [], []
    for t in cl.topology:
        choice = TopologyChoice(name=t) if isinstance(t, str) else t
        entry = lookup("topology", cat.topology, choice.name)
        over = entry.oversubscription if choice.oversubscription is None else choice.oversubscription
        topo_names.append(choice.name)
        oversubs.append(float(over))
        topos.append(entry.core_spec(over))

    # Prices: catalog, then scalar overrides for all entries, then per-entry tables.
    scalar = {k: v for k, v in econ.prices.items() if not isinstance(v, dict)}
    per_entry = {k: v for k, v in econ.prices.items() if isinstance(v, dict)}
    known_ids = set(cl.gpu) | set(cl.fabric) | set(scenario_fabrics)
    for key in per_entry:
        if key not in known_ids:
            raise bad("[economics.prices]", f"{key!r} is neither a GPU nor a fabric of this scenario")

    def priced(kind: str, entry_id: str, base: BaseModel) -> dict[str, float]:
        values = base.model_dump()
        for source in (scalar, per_entry.get(entry_id, {})):
            for k, v in source.items():
                if k in values:
                    values[k] = float(v)
        return values

    all_price_keys = set()
    for g in cl.gpu:
        all_price_keys |= set(cat.gpu_price(g).model_dump())
    for f in cl.fabric:
        all_price_keys |= set(cat.fabric_price(f).model_dump())
    economics = {**cat.economics_or_error().model_dump(), "cost_mode": econ.mode}
    all_price_keys |= set(economics) - {"cost_mode"}
    for key in list(scalar) + [k for table in per_entry.values() for k in table]:
        if key not in all_price_keys:
            close = difflib.get_close_matches(key, sorted(all_price_keys), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(sorted(all_price_keys))}"
            raise bad("[economics.prices]", f"unknown price {key!r}{hint}")
    for k, v in scalar.items():
        if k in economics:
            economics[k] = float(v)

    gpu_options = []
    for gid, g in zip(cl.gpu, gpus, strict=True):
        allowed = [scale_up_names.index(g.default_scale_up if s == "default" else s) for s in cl.scale_up]
        gpu_options.append(
            {"spec": g.core_spec(), "prices": priced("gpu", gid, cat.gpu_price(gid)), "scale_ups": sorted(set(allowed))}
        )
    fabric_options = [
        {"spec": f.core_spec(), "prices": priced("fabric", fid, cat.fabric_price(fid))}
        for fid, f in zip(cl.fabric, fabrics, strict=True)
    ]
    overlap_names = [str(o) for o in par.overlap]
    minimize = list(objectives or spec.objectives.minimize)
    groups = list(group_by or spec.objectives.group_by)
    for o in minimize:
        if o not in OBJECTIVES:
            raise CatalogError(f"{file}: objective {o!r} is not one of {', '.join(OBJECTIVES)}")
    if not 2 <= len(minimize) <= 3:
        raise CatalogError(f"{file}: give two or three objectives, got {len(minimize)}")
    for a in groups:
        if a not in AXES:
            raise CatalogError(f"{file}: group-by axis {a!r} is not one of {', '.join(AXES)}")
    space = {
        "model": model.core_spec(),
        "global_batch": wl.global_batch,
        "seq_len": seq_len,
        "tokens": float(wl.tokens),
        "flash_attention": wl.flash_attention,
        "gpus": gpu_options,
        "scale_ups": [
            {"spec": su.core_spec(), "prices": cat.scale_up_price(name).model_dump()}
            for name, su in zip(scale_up_names, scale_ups, strict=True)
        ],
        "gpu_counts": gpu_counts,
        "fabrics": fabric_options,
        "topologies": topos,
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
        "overlap": [
            {k: min(1.0, max(0.0, v * overlap_scale)) for k, v in vars(parse_overlap(o)).items()} for o in par.overlap
        ],
        "economics": economics,
        "reliability": _lookup_reliability(cat, econ.reliability, bad).core_spec(),
        "objectives": minimize,
        "group_by": groups,
    }
    return Scenario(
        path=file,
        spec=spec,
        model_name=model_name,
        model=model,
        seq_len=seq_len,
        gpu_names=list(cl.gpu),
        scale_up_names=scale_up_names,
        gpu_counts=gpu_counts,
        fabric_names=list(cl.fabric),
        topology_names=topo_names,
        oversubscriptions=oversubs,
        overlap_names=overlap_names,
        space=space,
    )


def _lookup_reliability(cat: Catalog, name: str, bad) -> Any:
    try:
        return cat.reliability_profile(name)
    except CatalogError as err:
        raise bad("[economics] reliability", str(err)) from None


def _where(loc: str) -> str:
    """`workload.tokens` -> `[workload] tokens`."""
    parts = loc.split(".")
    if len(parts) >= 2:
        return f"[{parts[0]}] {'.'.join(parts[1:])}"
    return f"[{loc}]" if loc else "top level"


def _model_at(err: ValidationError) -> type[BaseModel]:
    """The pydantic model of the table the first error is in (for 'did you mean' suggestions)."""
    first = next((e for e in err.errors() if e["type"] == "extra_forbidden"), err.errors()[0])
    tables = {
        "workload": Workload,
        "cluster": Cluster,
        "parallelism": Parallelism,
        "economics": EconomicsSection,
        "objectives": Objectives,
    }
    loc = first["loc"]
    return tables.get(str(loc[0]), ScenarioFile) if len(loc) > 1 else ScenarioFile
