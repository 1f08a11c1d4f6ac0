"""The serving sweep a training scenario implies, for front ends that show a serving frontier beside the training
one: a training scenario has no ``[serving]`` table (its schema is strict), so the scenario's model is served on its
first GPU, over each of its fabrics, on two 8-GPU servers, with ``scalefront inference``'s default workload (1,000
tokens in and 1,000 out, FP8 weights and KV cache, chunks of 8,192 tokens) and the scenario's cost basis; the
layouts swept are below (:data:`DEFAULT_SERVING_AXES`). :func:`serving_toml` writes it as a serving scenario file,
to run with ``scalefront inference --scenario`` or to edit."""

from __future__ import annotations

from typing import Any

import tomli_w

from scalefront.inputs.scenario.build import Scenario
from scalefront.inputs.scenario.serving import DEFAULT_OBJECTIVES, ServingScenario

__all__ = ["DEFAULT_SERVING_AXES", "DEFAULT_SERVING_GPUS", "default_serving_scenario", "serving_toml"]

#: Two servers: pipeline stages (pp 2) cross the scale-out fabric, so the fabrics' frontiers can differ.
DEFAULT_SERVING_GPUS = 16
#: The layouts swept per fabric: 4 x 2 x 7 = 56 (batch 0 = as many sequences as the KV cache holds).
DEFAULT_SERVING_AXES: dict[str, list[Any]] = {
    "tp": [1, 2, 4, 8],
    "pp": [1, 2],
    "batch": [1, 4, 16, 64, 256, 1024, 0],
}


def default_serving_scenario(scenario: Scenario, cost_mode: str = "rent") -> ServingScenario:
    """The serving sweep of `scenario`'s model (see the module doc); `cost_mode` is rent or own."""
    fixed = {
        "model": scenario.model_name,
        "gpu": scenario.gpu_names[0],
        "gpus": DEFAULT_SERVING_GPUS,
        "scale_up": scenario.scale_up_names[0],
        "topology": "rail-fat-tree",
        "cost_mode": cost_mode,
    }
    clusters = [{"fabric": f} for f in scenario.fabric_names]
    axes = {k: list(v) for k, v in DEFAULT_SERVING_AXES.items()}
    return ServingScenario(fixed, clusters, axes, list(DEFAULT_OBJECTIVES), [])


def serving_toml(s: ServingScenario) -> str:
    """`s` as a serving scenario file (``[serving]``, ``[objectives]``, ``[slo]``)."""
    fabrics = [c["fabric"] for c in s.clusters]
    doc: dict[str, Any] = {"serving": {**s.fixed, "fabric": fabrics, **s.axes}}
    doc["objectives"] = {"maximize": s.objectives[:1], "minimize": s.objectives[1:]}
    doc["slo"] = {name: ({"max": v} if op == "<=" else {"min": v}) for name, op, v in s.slos}
    return tomli_w.dumps(doc)
