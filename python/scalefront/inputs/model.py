"""``scalefront.evaluate``: one training configuration in, a typed and explained answer out.

The configuration is an `Inputs` record (``scalefront._inputs``, generated from the core's parameter table: its
fields are `evaluate`'s keywords, ``scalefront eval``'s options and a validation row's keys, each with its meaning
and default); building one checks every value. This module resolves what a missing value means (the catalog's
entries, the derived degrees and batch), converts the record into the core's configuration in one step and calls
the Rust core, which owns every formula and every unit conversion of a result. The result type,
:class:`~scalefront.Evaluation`, is generated from the core's output schema (see :mod:`scalefront.schema`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Protocol, Unpack

from scalefront._core import evaluate as core_evaluate
from scalefront._evaluation import Breakdown, Evaluation, HiddenComm, Memory
from scalefront._inputs import Inputs, Settings
from scalefront.errors import ConfigurationError
from scalefront.inputs.catalog.entries import FabricEntry, GpuEntry, ModelEntry, ScaleUpEntry, TopologyEntry
from scalefront.inputs.catalog.loader import Catalog, builtin_catalog, error_model_spec, load_model_file
from scalefront.inputs.catalog.prices import apply_price_overrides
from scalefront.inputs.overlap import Overlap, parse_overlap
from scalefront.inputs.params import core_sections, param
from scalefront.schema import INPUT_COLUMNS

__all__ = [
    "DEFAULT_BATCH_TOKENS",
    "Breakdown",
    "ClusterEntries",
    "ClusterNames",
    "Evaluation",
    "HiddenComm",
    "Inputs",
    "Memory",
    "Overlap",
    "evaluate",
    "evaluate_inputs",
    "parse_overlap",
    "resolve_cluster",
    "resolve_model",
]

#: Default global batch: about 4M tokens (Llama 3 pre-training started at 4M, GPT-3 175B used 3.2M).
DEFAULT_BATCH_TOKENS = 2**22


def evaluate(
    model: str | Path | ModelEntry = Inputs.model,
    gpu: str = Inputs.gpu,
    gpus: int = Inputs.gpus,
    *,
    catalog: Catalog | None = None,
    **settings: Unpack[Settings],
) -> Evaluation:
    """Evaluate one training configuration: any field of :class:`~scalefront.Inputs` by keyword (``model``, ``gpu``
    and ``gpus`` also by position), each with the meaning and default its doc gives. Names are catalog ids (of
    ``catalog``, default: the built-in catalogs); ``model`` may also be a model TOML file or a ``ModelEntry``.

    Raises :class:`~scalefront.errors.CatalogError` for an unknown name or a bad file,
    :class:`~scalefront.errors.UsageError` for a bad argument and
    :class:`~scalefront.errors.ConfigurationError` for an impossible configuration.
    """
    return evaluate_inputs(Inputs(model=model, gpu=gpu, gpus=gpus, **settings), catalog)


def evaluate_inputs(inputs: Inputs, catalog: Catalog | None = None) -> Evaluation:
    """Evaluate a configuration given as an `Inputs` record (see `evaluate`)."""
    cat = catalog or builtin_catalog()
    model_name, model = resolve_model(inputs.model, cat)
    cluster = resolve_cluster(cat, inputs)
    values = _resolved(inputs, model, cluster)
    overlap = parse_overlap(inputs.overlap)
    prices = cat.prices(inputs.gpu, inputs.fabric, cluster.scale_up_name, inputs.cost_mode)
    apply_price_overrides(prices, dict(inputs.prices or {}))
    errors = error_model_spec(cat, inputs.interval)
    config = {
        "model": model.core_spec(),
        "gpu": cluster.gpu.core_spec(),
        "scale_up": cluster.scale_up.core_spec(),
        "fabric": cluster.fabric.core_spec(),
        "topology": cluster.topology.core_spec(cluster.oversubscription),
        "framework": cat.framework(inputs.framework).core_spec(),
        "prices": prices,
        "gpus": values["gpus"],
        **core_sections(values),
        "overlap": overlap.core_spec(),
        "reliability": cat.reliability_profile(inputs.reliability).core_spec(),
        "errors": errors,
    }
    columns = {**values, "model": model_name, "overlap": overlap.label(), "interval": errors["level"]}
    return Evaluation(**{c: param(c).normalised(columns[c]) for c in INPUT_COLUMNS}, **core_evaluate(config))


def resolve_model(model: str | Path | ModelEntry, catalog: Catalog) -> tuple[str, ModelEntry]:
    """The model's name as a column shows it, and its entry: a catalog id, a model TOML file or an entry."""
    if isinstance(model, ModelEntry):
        return model.name, model
    text = str(model)
    if text.endswith(".toml") or Path(text).suffix == ".toml":
        entry = load_model_file(text)
        return text, entry
    return text, catalog.model(text)


@dataclass(frozen=True)
class ClusterEntries:
    """The catalog entries of one cluster design, resolved and checked against each other."""

    gpu: GpuEntry
    scale_up_name: str
    scale_up: ScaleUpEntry
    fabric: FabricEntry
    #: The fabric's canonical id (its mode named: `roce-400g@untuned`), as every output names it.
    fabric_name: str
    topology: TopologyEntry
    oversubscription: float


class ClusterNames(Protocol):
    """The inputs that name a cluster design (an `Inputs` record, or a serving configuration's values)."""

    @property
    def gpu(self) -> str: ...
    @property
    def scale_up(self) -> str | None: ...
    @property
    def fabric(self) -> str: ...
    @property
    def topology(self) -> str: ...
    @property
    def oversubscription(self) -> float | None: ...


def resolve_cluster(cat: Catalog, inputs: ClusterNames) -> ClusterEntries:
    """The catalog entries `inputs` names (gpu, scale_up, fabric, topology, oversubscription), checked together."""
    gpu = cat.gpu(inputs.gpu)
    scale_up_name = gpu.default_scale_up if inputs.scale_up is None else inputs.scale_up
    scale_up = cat.scale_up_domain(scale_up_name)
    cat.check_scale_up(inputs.gpu, scale_up_name)
    fabric = cat.fabric(inputs.fabric)
    topology = cat.topology(inputs.topology)
    cat.check_design(inputs.fabric, inputs.topology)
    over = topology.oversubscription if inputs.oversubscription is None else inputs.oversubscription
    return ClusterEntries(gpu, scale_up_name, scale_up, fabric, cat.fabric_id(inputs.fabric), topology, float(over))


def _resolved(inputs: Inputs, model: ModelEntry, cluster: ClusterEntries) -> dict[str, Any]:
    """Every input's value, what a missing one means filled in: the scale-up domain and the oversubscription of
    the catalog, dp, the expert TP, the sequence length and the global batch (each checked as given ones are)."""
    values = {f.name: getattr(inputs, f.name) for f in fields(inputs)}
    values["scale_up"] = cluster.scale_up_name
    values["fabric"] = cluster.fabric_name
    values["oversubscription"] = cluster.oversubscription
    values["dp"] = inputs.dp if inputs.dp is not None else _data_parallel(inputs.gpus, inputs.tp, inputs.pp, inputs.cp)
    values["etp"] = inputs.etp or inputs.tp
    values["seq_len"] = inputs.seq_len if inputs.seq_len is not None else model.seq_len
    param("seq_len").check(values["seq_len"])
    if inputs.global_batch is None:
        unit = values["dp"] * inputs.micro_batch * (inputs.pp if inputs.vpp > 1 else 1)
        values["global_batch"] = _default_global_batch(values["seq_len"], unit)
    for name in ("dp", "global_batch"):
        param(name).check(values[name])
    return values


def _data_parallel(gpus: int, tp: int, pp: int, cp: int) -> int:
    """gpus / (tp x pp x cp), which must be whole: else the layout is impossible, as the core says of a dp given
    that does not fill the GPUs (the same class and category)."""
    if gpus % (tp * pp * cp):
        raise ConfigurationError(
            f"tp x pp x cp = {tp} x {pp} x {cp} = {tp * pp * cp} does not divide gpus = {gpus}",
            "gpu_count_mismatch",
            "gpus",
        )
    return gpus // (tp * pp * cp)


def _default_global_batch(seq_len: int, unit: int) -> int:
    """About DEFAULT_BATCH_TOKENS, rounded up to a multiple of `unit` (dp x micro-batch, x pp when interleaved)."""
    sequences = math.ceil(DEFAULT_BATCH_TOKENS / seq_len)
    return max(unit, math.ceil(sequences / unit) * unit)
