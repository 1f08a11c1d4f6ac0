"""A scenario's lifecycle for the comparison (issue 23): the cluster trains for ``[lifecycle] training_months`` (12
by default), then serves for the rest of its life a model at a workload (the scenario's ``[serving]`` table; by
default the scenario's model at ``scalefront inference``'s default workload, 1,000 tokens in and 1,000 out, FP8,
co-located, over the Serving tab's layouts) within an SLO (``tpot_slo_s``, 50 ms by default; ``ttft_slo_s``
optional). Each design's serving speed is the best layout that meets the SLO on that design's fabric, GPU count and
topology (the core's serving sweep with throughput per GPU as its one objective, which is
``serve::sweep::best_at_slo``), with its decode step's communication share and its configuration (the Monte Carlo
evaluates that layout again on each sample's fabric figures); the core prices the two phases
(``decision/roi/lifecycle.rs``). The serving model's own error is the serving validation's residuals, a common
factor on the time per output token, as the training residuals are on the step time.

Bad input is one line naming the file, the table and the key: months beyond the life, an SLO no layout meets on a
design, an unknown serving model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from scalefront._core import serve_axes, serve_sweep
from scalefront.errors import CatalogError, ScalefrontError, UsageError, message_of
from scalefront.inputs.catalog.loader import Catalog
from scalefront.inputs.scenario.build import MixPart, Scenario
from scalefront.inputs.scenario.serving import CLUSTER_KEYS
from scalefront.inputs.scenario.serving_default import default_serving_axes, lifecycle_slos, scenario_serving
from scalefront.inputs.serving import serving_config, serving_inputs
from scalefront.roi.result import UncertainInput
from scalefront.roi.uncertain import error_input
from scalefront.schema import SERVING_METRICS

__all__ = ["Lifecycle", "lifecycle_of", "serving_error_input", "split_frame", "with_serving"]

#: The one objective of the serving months: the most output tokens per second per GPU within the SLO.
_OBJECTIVE = "output_tokens_per_s_per_gpu"
#: The decode step's parts (`ServingEvaluation::decode_step`): the communication's share of their sum.
_DECODE_PARTS = ("decode_gemm_s", "decode_attention_s", "decode_elementwise_s", "decode_comm_s")


@dataclass(frozen=True)
class Lifecycle:
    """What the serving months serve: the months of training first, the serving inputs (one value each), the
    swept layouts and the SLOs."""

    path: str
    training_months: int
    life_months: float
    fixed: dict[str, Any]
    axes: dict[str, list[Any]]
    slos: list[tuple[str, str, float]]

    @property
    def model(self) -> str:
        return str(self.fixed["model"])


def lifecycle_of(scenario: Scenario, catalog: Catalog) -> Lifecycle | None:
    """The scenario's lifecycle, checked (None when it has no ``[lifecycle]`` table)."""
    spec, where = scenario.spec, f"{scenario.path}:"
    if spec.lifecycle is None:
        return None
    years = float(scenario.space["economics"]["amortization_years"])
    life = 12.0 * years
    months = spec.lifecycle.training_months
    if months > life:
        raise UsageError(
            f"{where} [lifecycle] training_months: {months} months is beyond the cluster's {life:g}-month life "
            f"(amortization_years {years:g}); give 0 to {life:g}"
        )
    fixed, lists = scenario_serving(scenario)
    # The cluster is each design's own (GPU, count, scale-up domain, fabric, topology): [serving]'s cluster keys are
    # for the Serving tab and `scalefront inference --scenario`.
    fixed = {k: v for k, v in fixed.items() if k not in CLUSTER_KEYS and k != "oversubscription"}
    fixed = {"model": scenario.model_name, **fixed, "cost_mode": "own"}
    _check_model(where, str(fixed["model"]), catalog)
    axes = default_serving_axes(fixed, lists)
    return Lifecycle(str(scenario.path), months, life, fixed, axes, lifecycle_slos(scenario))


def _check_model(where: str, model: str, catalog: Catalog) -> None:
    try:
        catalog.model(model)
    except ScalefrontError as err:
        raise CatalogError(f"{where} [serving] model: {message_of(err)}") from None


def _design_cluster(design: dict[str, Any], fabric: str, scenario: Scenario) -> dict[str, Any]:
    """The serving cluster of a comparison's design: its fabric and GPU count, the scenario's GPU and scale-up
    domain, the design's topology and oversubscription (its label, `designs._design_label`)."""
    words = str(design["topology"]).split()
    return {
        "gpu": scenario.gpu_names[0],
        "scale_up": scenario.scale_up_names[0] if len(words) < 3 else words[2],
        "gpus": int(design["gpus"]),
        "fabric": fabric,
        "topology": words[0],
        "oversubscription": float(words[1].split(":")[0]),
    }


def _best(life: Lifecycle, cluster: dict[str, Any], catalog: Catalog) -> dict[str, Any]:
    """The best serving layout within the SLOs on one cluster: its tokens/s per GPU, communication share and
    configuration."""
    first = {k: v[0] for k, v in life.axes.items()}
    where = f"{life.path}: [lifecycle]"
    try:
        config, _ = serving_config(serving_inputs({**life.fixed, **cluster, **first}), catalog)
        result = serve_sweep(config, life.axes, [_OBJECTIVE], life.slos)
    except ScalefrontError as err:
        raise UsageError(f"{where} serving {life.model} on {cluster['fabric']}: {message_of(err)}") from None
    points = list(result["points"])
    if not points:
        bound = " and ".join(f"{m} {op} {v:g}" for m, op, v in life.slos)
        key = "tpot_slo_s" if len(life.slos) == 1 else "tpot_slo_s and ttft_slo_s"
        raise UsageError(
            f"{where} {key}: no serving layout of {life.model} meets {bound} on {cluster['fabric']} at "
            f"{cluster['gpus']:,} GPUs ({result['evaluated']} of {result['size']} layouts evaluated); loosen the SLO "
            "or give [serving] more layouts"
        )
    best = points[0]
    step = sum(float(best[k]) for k in _DECODE_PARTS) + float(best["decode_kernel_overhead_s"])
    comm = float(best["decode_comm_s"]) / step if step > 0 else 0.0
    # The layout's own configuration: the Monte Carlo evaluates it again on each sample's fabric figures.
    layout, _ = serving_config(serving_inputs({**life.fixed, **cluster, **{k: best[k] for k in serve_axes()}}), catalog)
    return {"tokens_per_s_per_gpu": float(best[_OBJECTIVE]), "comm_share": min(1.0, max(0.0, comm)), "config": layout}


def with_serving(
    life: Lifecycle, designs: list[dict[str, Any]], fabrics: Sequence[str], part: MixPart, catalog: Catalog
) -> list[dict[str, Any]]:
    """Each design with what it serves (`serving`), one serving sweep per distinct cluster; `fabrics` by side."""
    done: dict[tuple[Any, ...], dict[str, Any]] = {}
    out = []
    for d in designs:
        cluster = _design_cluster(d, fabrics[d["side"]], part.scenario)
        key = tuple(sorted(cluster.items()))
        if key not in done:
            done[key] = _best(life, cluster, catalog)
        out.append({**d, "serving": done[key]})
    return out


def serving_error_input(catalog: Catalog, model_error: str) -> list[UncertainInput]:
    """The serving model's error as an uncertain input: ln(time per output token measured / predicted) of the
    judged serving validation rows (throughput rows turned into time: predicted / measured), one draw for every
    design, as the training residuals are; none with ``--model-error none``."""
    if model_error == "none":
        return []
    from scalefront.fidelity.validation.serving import judged_serving, serving_checks

    direction = {m.name: m.direction for m in SERVING_METRICS}
    residuals = []
    for c in judged_serving(serving_checks(catalog)):
        if c.measured > 0 and c.predicted > 0 and not math.isnan(c.predicted):
            ratio = c.predicted / c.measured if direction.get(c.metric) == "max" else c.measured / c.predicted
            residuals.append(math.log(ratio))
    if not residuals:
        return []
    target = [{"section": "model_error", "side": None, "field": "serving"}]
    return [error_input("model error, serving time per token (all designs)", "serving", sorted(residuals), target)]


def split_frame(
    life: Lifecycle | None, typical: dict[str, Any], designs: list[dict[str, Any]], bs: Sequence[str]
) -> pl.DataFrame:
    """Per GPU count and design B, the typical-value NPV split: the value of A's speed while training and while
    serving (the core's `speed_value_training_usd`, `speed_value_serving_usd`) and the rest (extra costs, delay,
    resale: the NPV less both); each phase's months and speed ratio, and each side's serving tokens/s per GPU."""
    if life is None:
        return pl.DataFrame()
    serving = {(d["side"], d["gpus"], d["topology"]): d["serving"]["tokens_per_s_per_gpu"] for d in designs}
    rows = []
    for c in typical["counts"]:
        training, served = c["speed_value_training_usd"], c["speed_value_serving_usd"]
        rows.append(
            {
                "gpus": c["gpus"],
                "fabric_b": bs[c["side_b"] - 1],
                "training_months": c["training_months"],
                "serving_months": c["life_months"] - c["training_months"],
                "training_speed_ratio": c["training_speed_ratio"],
                "serving_speed_ratio": c["serving_speed_ratio"],
                "serving_tokens_per_s_per_gpu_a": serving[(0, c["gpus"], c["topology_a"])],
                "serving_tokens_per_s_per_gpu_b": serving[(c["side_b"], c["gpus"], c["topology_b"])],
                "speed_value_training_usd": training,
                "speed_value_serving_usd": served,
                "rest_usd": c["npv_usd"] - training - served,
                "npv_usd": c["npv_usd"],
            }
        )
    return pl.DataFrame(rows)
