"""A scenario loaded: the file read (a built-in id or a path), checked, its names resolved in the catalog, and
the dict the Rust sweep engine takes built (SI units, catalog entries and prices resolved, the core's own checks
of the space named by file and key). A scenario with a workload mix is built once per workload (`load_mix`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from scalefront._core import data_files, space_size
from scalefront.errors import CatalogError, ConfigurationError, ScalefrontError, UsageError, message_of
from scalefront.inputs.catalog.entries import FabricEntry, GpuEntry, ModelEntry, TopologyEntry
from scalefront.inputs.catalog.loader import Catalog, builtin_catalog, error_model_spec, load_model_file
from scalefront.inputs.files import parse_toml, read_text
from scalefront.inputs.messages import did_you_mean
from scalefront.inputs.overlap import parse_overlap
from scalefront.inputs.params import PARAMS, core_sections, taking
from scalefront.inputs.scenario.file import ScenarioFile, group_by_problem, objectives_problem, validate_file
from scalefront.inputs.scenario.forms import Range, Search, TopologyChoice
from scalefront.inputs.scenario.prices import ScenarioPrices, scenario_prices
from scalefront.inputs.scenario.sections import Cluster, Parallelism, Workload

__all__ = [
    "MixPart",
    "Scenario",
    "build_scenario",
    "builtin_scenarios",
    "load_mix",
    "load_scenario",
    "read_scenario",
    "workload_names",
]

_T = TypeVar("_T")


#: Where a sweep row's input column comes from: an axis's index (the axis, and the label of each index; None when
#: the engine gives the value itself, as it does for the parallel degrees).
Labels = dict[str, tuple[str, list[Any] | None]]


@dataclass(frozen=True)
class Scenario:
    """A loaded scenario: its file, its validated content, the names behind every axis index, and where each
    input column of a sweep row comes from (`labels`, else the value every row shares, `constants`)."""

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
    labels: Labels
    constants: dict[str, Any]
    #: Configurations in the space, counted exactly (combinatorially, in milliseconds) when it was built.
    configurations: int

    @property
    def name(self) -> str:
        return self.spec.name

    def size(self) -> int:
        """Configurations in the space, counted exactly without evaluating any."""
        return self.configurations


def builtin_scenarios() -> dict[str, str]:
    """Built-in scenario ids and their TOML text."""
    return {
        p.removeprefix("scenarios/").removesuffix(".toml"): text
        for p, text in data_files().items()
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
    if not text_source.strip():
        raise CatalogError(
            f"the scenario's name is empty; give a built-in scenario ({', '.join(sorted(builtin))}) or a TOML file"
        )
    path = Path(text_source)
    if text_source in builtin and not path.exists():
        file, text = f"built-in scenario {text_source}", builtin[text_source]
    elif not path.exists() and not path.suffix and len(path.parts) == 1:
        hint = did_you_mean(text_source, sorted(builtin))
        raise CatalogError(
            f"{text_source}: cannot read: no such file, nor a built-in scenario ({', '.join(sorted(builtin))}){hint}"
        )
    else:
        file, text = text_source, read_text(path)
    return parse_toml(text, file), file


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
    return [name for name, _, _ in validate_file(raw, file).mix()]


def load_mix(
    source: str | Path | tuple[dict[str, Any], str], catalog: Catalog | None = None, **overrides: Any
) -> list[MixPart]:
    """Every workload of a scenario (one at share 1, or each of its mix), each built as a scenario."""
    raw, file = source if isinstance(source, tuple) else read_scenario(source)
    return [
        MixPart(name, share, build_scenario(raw, file, catalog, workload=name if len(mix) > 1 else None, **overrides))
        for mix in [validate_file(raw, file).mix()]
        for name, share, _ in mix
    ]


class _Problem:
    """Makes the one-line error of a scenario file: `<file>: [<table>] <key>: <what is wrong>`."""

    def __init__(self, file: str):
        self.file = file

    def __call__(self, where: str, msg: str) -> CatalogError:
        return CatalogError(f"{self.file}: {where}: {msg}")

    def looked_up(self, where: str, fn: Callable[[str], _T], name: str) -> _T:
        """`fn(name)`, an unknown name (or a model file that cannot be read) reported at `where`."""
        try:
            return fn(name)
        except ScalefrontError as err:
            raise self(where, message_of(err)) from None


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
    if not wl.model.endswith(".toml"):
        return bad.looked_up("[workload] model", cat.model, wl.model)
    path = Path(wl.model)
    if not path.is_absolute() and Path(file).is_file():  # a scenario file: relative to its folder
        path = Path(file).parent / path
    return bad.looked_up("[workload] model", load_model_file, str(path))  # its own line, behind this entry


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
    frameworks: list[dict[str, Any]]  # the training frameworks' core specs, in the workload's order


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


def _check_designs(cl: Cluster, names: list[str], oversubs: list[float], cat: Catalog, bad: _Problem) -> None:
    """Each fabric fits one of the topologies at least (the other pairs are rejected configurations of the sweep)."""
    pairs = list(zip(names, oversubs, strict=True))
    for fid in cl.fabric:
        problems = [cat.design_problem(fid, name, over) for name, over in pairs]
        if all(problems):
            raise bad("[cluster] fabric", str(problems[0]))


def _cluster_axes(cl: Cluster, wl: Workload, cat: Catalog, bad: _Problem) -> _ClusterAxes:
    gpus = [bad.looked_up("[cluster] gpu", cat.gpu, g) for g in cl.gpu]
    fabrics = [bad.looked_up("[cluster] fabric", cat.fabric, f) for f in cl.fabric]
    scale_up_names, scale_ups_of_gpu = _scale_ups(cl, gpus, cat, bad)
    topology_names, oversubscriptions, topologies = _topologies(cl, cat, bad)
    _check_designs(cl, topology_names, oversubscriptions, cat, bad)
    return _ClusterAxes(
        gpu_counts=_gpu_counts(cl, bad),
        gpus=gpus,
        scale_up_names=scale_up_names,
        scale_ups_of_gpu=scale_ups_of_gpu,
        fabrics=fabrics,
        topology_names=topology_names,
        oversubscriptions=oversubscriptions,
        topologies=topologies,
        frameworks=[bad.looked_up("[workload] framework", cat.framework, f).core_spec() for f in wl.framework],
    )


def _overlaps(par: Parallelism, scale: float) -> list[dict[str, float]]:
    """Each overlap choice as fractions, multiplied by `scale` and clamped to [0, 1]."""
    return [{k: min(1.0, max(0.0, v * scale)) for k, v in parse_overlap(o).core_spec().items()} for o in par.overlap]


#: Where a core figure sits in a scenario file, for its error message.
_FIELD_WHERE = {p.core.partition(".")[2]: p.scenario.where for p in PARAMS if p.core and p.scenario}


def _check_space(space: dict[str, Any], bad: _Problem) -> int:
    """The engine's own checks of the space (a whole number of tokens, ...), named by file and key; its size, which
    must not be zero (a space of no configuration is a mistake: degrees that fit none of its GPU counts)."""
    try:
        size = int(space_size(space))
    except ConfigurationError as err:
        raise bad(_FIELD_WHERE.get(err.field or "", "[workload]"), err.message) from None
    if size == 0:
        raise bad(
            "[parallelism]",
            "the space has no configuration: no combination of the listed degrees fits any of its GPU counts "
            "([cluster] gpus)",
        )
    return size


def _shared(tables: dict[str, Any], seq_len: int) -> dict[str, dict[str, Any]]:
    """The core's parallelism and training every configuration of the space starts from: each value the space
    does not sweep, as the scenario gives it (else `evaluate`'s default)."""
    values: dict[str, Any] = {}
    for p in PARAMS:
        if p.core and not p.takes("axis"):
            s = p.scenario
            values[p.name] = getattr(tables[s.table], s.key) if s else p.default
    values.update(seq_len=seq_len, etp=values["etp"] or 0)
    return core_sections(values)


def _labels(tables: dict[str, Any], axes: _ClusterAxes) -> Labels:
    """Where each input column of a sweep row comes from, when an axis gives it (see `Labels`)."""
    out: Labels = {}
    for p in taking("axis"):
        s = p.scenario
        assert s is not None, "every axis is a scenario key"
        values = None if s.form == "degrees" else getattr(tables[s.table], s.key)
        out[p.name] = (p.name, None if values is None else [str(v) if p.kind == "overlap" else v for v in values])
    out.update(
        gpus=("gpus", axes.gpu_counts),
        scale_up=("scale_up", axes.scale_up_names),
        topology=("topology", axes.topology_names),
        oversubscription=("topology", axes.oversubscriptions),
    )
    if not tables["parallelism"].etp:  # the expert TP is the attention's
        out["etp"] = ("tp", None)
    return out


def _constants(tables: dict[str, Any], seq_len: int, level: float) -> dict[str, Any]:
    """The input columns every row of the space shares, by name: a scenario key's value, or the default of a column
    no scenario sets (`recompute_modules`: a sweep reruns by the framework's own rule)."""
    out = {
        p.name: p.normalised(getattr(tables[p.scenario.table], p.scenario.key) if p.scenario else p.default)
        for p in taking("column")
        if not p.takes("axis")
    }
    return {**out, "seq_len": seq_len, "interval": level}


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
    spec = validate_file(raw, file)
    wl = _chosen_workload(spec, workload, bad)
    econ = spec.economics if cost_mode is None else spec.economics.model_copy(update={"mode": cost_mode})
    named = _named_fabrics(spec, cat, bad)
    cl = spec.cluster if fabrics is None else spec.cluster.model_copy(update={"fabric": list(fabrics)})
    cl = cl.model_copy(update={"fabric": [bad.looked_up("[cluster] fabric", cat.fabric_id, f) for f in cl.fabric]})
    tables = {"workload": wl, "cluster": cl, "parallelism": spec.parallelism, "economics": econ}
    _check_no_repeats({t: tables[t] for t in ("cluster", "parallelism", "workload")}, bad)
    model = _scenario_model(wl, file, cat, bad)
    axes = _cluster_axes(cl, wl, cat, bad)
    prices = scenario_prices(econ, list(cl.gpu), list(cl.fabric), named, cat, bad)
    minimize, groups = _objectives(spec, objectives, group_by, bad)
    seq_len = wl.seq_len or model.seq_len
    space = {
        "model": model.core_spec(),
        **_shared(tables, seq_len),
        "errors": error_model_spec(cat, wl.interval),
        **_axes_space(tables, axes, prices, cat, overlap_scale),
        "reliability": bad.looked_up("[economics] reliability", cat.reliability_profile, econ.reliability).core_spec(),
        "objectives": minimize,
        "group_by": groups,
    }
    configurations = _check_space(space, bad)
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
        overlap_names=[str(o) for o in spec.parallelism.overlap],
        space=space,
        labels=_labels(tables, axes),
        constants=_constants(tables, seq_len, float(space["errors"]["level"])),
        configurations=configurations,
    )


def _named_fabrics(spec: ScenarioFile, cat: Catalog, bad: _Problem) -> list[str]:
    """The canonical ids of the fabrics the file names, whose price tables it may hold: its own, checked even when
    a comparison replaces them, and `[cluster] compare_with`'s designs (a bad name there is `roi`'s to report,
    where it reads the list)."""
    ids = [bad.looked_up("[cluster] fabric", cat.fabric_id, name) for name in spec.cluster.fabric]
    for name in spec.cluster.compare_with:
        try:
            ids.append(cat.fabric_id(name))
        except ScalefrontError:
            continue
    return ids


def _axes_space(
    tables: dict[str, Any], axes: _ClusterAxes, prices: ScenarioPrices, cat: Catalog, overlap_scale: float
) -> dict[str, Any]:
    """The space's axes (each option with its prices) and economics."""
    cl, wl, par = tables["cluster"], tables["workload"], tables["parallelism"]
    return {
        "gpus": [
            {"spec": g.core_spec(), "prices": prices.of((gid,), cat.gpu_price(gid)), "scale_ups": allowed}
            for gid, g, allowed in zip(cl.gpu, axes.gpus, axes.scale_ups_of_gpu, strict=True)
        ],
        "scale_ups": [
            {"spec": cat.scale_up[name].core_spec(), "prices": cat.scale_up_price(name).model_dump()}
            for name in axes.scale_up_names
        ],
        "gpu_counts": axes.gpu_counts,
        "fabrics": [
            {"spec": f.core_spec(), "prices": prices.of(cat.fabric_price_tables(fid), cat.fabric_price(fid))}
            for fid, f in zip(cl.fabric, axes.fabrics, strict=True)
        ],
        "topologies": axes.topologies,
        "frameworks": axes.frameworks,
        "precisions": list(wl.precision),
        **{d: _degree(getattr(par, d)) for d in ("tp", "pp", "cp", "dp", "ep")},
        **{a: list(getattr(par, a)) for a in ("vpp", "micro_batch", "sequence_parallel", "recompute", "zero")},
        "overlap": _overlaps(par, overlap_scale),
        "economics": prices.economics,
    }
