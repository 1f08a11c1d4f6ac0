"""The serving sweep a training scenario implies, for front ends that show a serving frontier beside the training
one and for ``scalefront inference --scenario`` given a training scenario. A scenario's own ``[serving]`` table (its
serving inputs by name, lists on the swept axes and cluster keys, as a serving scenario's) sets what it gives; the
rest is the default: the scenario's model served on its first GPU, over each of its fabrics, on two 8-GPU servers,
with ``scalefront inference``'s default workload (1,000 tokens in and 1,000 out, FP8 weights and KV cache, chunks of
8,192 tokens) and the scenario's cost basis; the layouts swept are below (:data:`DEFAULT_SERVING_AXES`), less the
axes ``[serving]`` fixes to one value. Given as a file to ``inference``, a ``[lifecycle]`` table's SLOs are the
sweep's (the Serving tab has its own SLO fields). :func:`serving_toml` writes it as a serving scenario file, to
run with ``scalefront inference --scenario`` or to edit."""

from __future__ import annotations

import itertools
from typing import Any

import tomli_w

from scalefront.errors import CatalogError, ScalefrontError, message_of
from scalefront.inputs.catalog.loader import Catalog, builtin_catalog
from scalefront.inputs.scenario.build import Scenario, load_scenario, read_scenario
from scalefront.inputs.scenario.serving import CLUSTER_KEYS, DEFAULT_OBJECTIVES, ServingScenario, serving_table

__all__ = [
    "DEFAULT_SERVING_AXES",
    "DEFAULT_SERVING_GPUS",
    "default_serving_axes",
    "default_serving_scenario",
    "lifecycle_slos",
    "scenario_serving",
    "serving_toml",
    "training_serving_scenario",
]

#: Two servers: pipeline stages (pp 2) cross the scale-out fabric, so the fabrics' frontiers can differ.
DEFAULT_SERVING_GPUS = 16
#: The layouts swept per fabric: 4 x 2 x 7 = 56 (batch 0 = as many sequences as the KV cache holds).
DEFAULT_SERVING_AXES: dict[str, list[Any]] = {
    "tp": [1, 2, 4, 8],
    "pp": [1, 2],
    "batch": [1, 4, 16, 64, 256, 1024, 0],
}


def scenario_serving(scenario: Scenario) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """The scenario's ``[serving]`` table (checked when the file was read): its one-value keys and its lists."""
    return serving_table(scenario.spec.serving or {}, f"{scenario.path}:")


def default_serving_axes(fixed: dict[str, Any], lists: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """The swept axes: the default ones less those given one value, then the lists given."""
    axes = {k: list(v) for k, v in DEFAULT_SERVING_AXES.items() if k not in fixed}
    axes.update({k: v for k, v in lists.items() if k not in CLUSTER_KEYS})
    return axes


def default_serving_scenario(scenario: Scenario, cost_mode: str = "rent") -> ServingScenario:
    """The serving sweep of `scenario` (see the module doc); `cost_mode` is rent or own."""
    own, lists = scenario_serving(scenario)
    fixed = {
        "model": scenario.model_name,
        "gpu": scenario.gpu_names[0],
        "gpus": DEFAULT_SERVING_GPUS,
        "scale_up": scenario.scale_up_names[0],
        "topology": "rail-fat-tree",
        "cost_mode": cost_mode,
        **own,
    }
    cluster_lists = {k: v for k, v in lists.items() if k in CLUSTER_KEYS}
    if "fabric" not in cluster_lists and "fabric" not in own:
        cluster_lists = {"fabric": list(scenario.fabric_names), **cluster_lists}
    keys = [k for k in CLUSTER_KEYS if k in cluster_lists]
    clusters = [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*(cluster_lists[k] for k in keys))]
    return ServingScenario(fixed, clusters, default_serving_axes(fixed, lists), list(DEFAULT_OBJECTIVES), [])


def lifecycle_slos(scenario: Scenario) -> list[tuple[str, str, float]]:
    """The SLOs of the scenario's ``[lifecycle]`` (none without one): TPOT, and TTFT when it is bounded."""
    life = scenario.spec.lifecycle
    if life is None:
        return []
    slos = [("tpot_s", "<=", life.tpot_slo_s)]
    if life.ttft_slo_s is not None:
        slos.append(("ttft_s", "<=", life.ttft_slo_s))
    return slos


def serving_toml(s: ServingScenario) -> str:
    """`s` as a serving scenario file (``[serving]``, ``[objectives]``, ``[slo]``)."""
    fabrics = [c["fabric"] for c in s.clusters]
    doc: dict[str, Any] = {"serving": {**s.fixed, "fabric": fabrics, **s.axes}}
    doc["objectives"] = {"maximize": s.objectives[:1], "minimize": s.objectives[1:]}
    doc["slo"] = {name: ({"max": v} if op == "<=" else {"min": v}) for name, op, v in s.slos}
    return tomli_w.dumps(doc)


def training_serving_scenario(path: str, catalog: Catalog | None = None) -> ServingScenario | None:
    """The serving sweep of the training scenario at `path`, a file or a built-in id (its ``[serving]`` table over
    the defaults, its ``[lifecycle]`` SLOs, its ``[economics] mode``), or None when it is not a training scenario
    (no ``[workload]``, ``[[workloads]]`` or ``[cluster]`` table)."""
    doc, _ = read_scenario(path)
    if not {"workload", "workloads", "cluster"} & set(doc):
        return None
    scenario = load_scenario(path, catalog)
    s = default_serving_scenario(scenario, scenario.spec.economics.mode)
    serving = ServingScenario(s.fixed, s.clusters, s.axes, s.objectives, lifecycle_slos(scenario))
    try:
        (catalog or builtin_catalog()).model(serving.fixed["model"])
    except ScalefrontError as err:
        raise CatalogError(f"{path}: [serving] model: {message_of(err)}") from None
    return serving
