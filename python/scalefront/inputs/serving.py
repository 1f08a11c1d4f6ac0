"""``scalefront.serve_model``: one inference-serving configuration in, its latency, throughput and cost out.

The inputs are the parameter table's ``serve`` parameters (``scalefront._core.parameters()``, surface ``serve``):
the cluster (model, GPU, GPU count, scale-up domain, fabric, topology), the serving layout (tp, pp, ep,
dp_attention; co-located or disaggregated with a P:D ratio) and the workload (lengths, formats, batch). This module
fills what is not given from the table's defaults, checks each value against its bounds, resolves the catalog names
into the core's specs and calls the core (`_core.serve`), which owns every formula. The answer's metrics are the
core's serving schema (`scalefront.schema.SERVING_METRICS`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from scalefront._core import serve as core_serve
from scalefront.errors import UsageError
from scalefront.inputs.catalog.loader import Catalog, builtin_catalog
from scalefront.inputs.catalog.prices import apply_price_overrides
from scalefront.inputs.model import resolve_cluster, resolve_model
from scalefront.inputs.params import Param, serving_section, taking

__all__ = ["SERVING_DEFAULTS", "SERVING_DOCS", "ServingResult", "serve_model", "serving_config", "serving_inputs"]

#: Where `scalefront inference` defaults differ from the table's (whose defaults are `eval`'s): one 8-GPU server.
SERVING_DEFAULTS: dict[str, Any] = {"gpus": 8}

#: Where an input means something else to a serving instance than to a training job (the table's docs are
#: training's): the rule `crate::serve::layout::PhaseLayout::new` checks, the cost `cost_usd_per_million_tokens` uses.
SERVING_DOCS: dict[str, str] = {
    "ep": "expert-parallel degree (ep divides tp x dp_attention and the routed plus redundant experts)",
    "pp": "pipeline-parallel degree (stages of one serving instance)",
    "cost_mode": "which cost cost_usd_per_million_tokens uses: rent (GPU-hours) or own (capex, power, operations)",
}


@dataclass(frozen=True)
class ServingResult:
    """One serving evaluation: its resolved inputs and the core's serving metrics, both by name."""

    inputs: dict[str, Any]
    metrics: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """Inputs then metrics, as ``--json`` prints them."""
        return {**self.inputs, **self.metrics}

    def __getitem__(self, name: str) -> Any:
        return self.metrics[name] if name in self.metrics else self.inputs[name]


def _default(p: Param) -> Any:
    return SERVING_DEFAULTS.get(p.name, p.default)


def serving_inputs(values: Mapping[str, Any]) -> dict[str, Any]:
    """Every serving input: the given `values` (checked against the table) and the defaults of the others."""
    params = {p.name: p for p in taking("serve")}
    unknown = sorted(set(values) - set(params))
    if unknown:
        raise UsageError(f"{unknown[0]}: not a serving input (see scalefront inference --help)")
    out = {}
    for name, p in params.items():
        value = values.get(name)
        if value is None:
            value = _default(p)
        p.check(value)
        out[name] = value
    return out


def serving_config(inputs: Mapping[str, Any], catalog: Catalog | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The core's serving configuration (`scalefront_core::serve::ServingConfig`) of checked `inputs`, and the inputs
    with what a missing value means filled in (the scale-up domain, the oversubscription, the model's name)."""
    cat = catalog or builtin_catalog()
    model_name, model = resolve_model(inputs["model"], cat)
    names = SimpleNamespace(**{k: inputs.get(k) for k in ("gpu", "scale_up", "fabric", "topology", "oversubscription")})
    cluster = resolve_cluster(cat, names)
    prices = cat.prices(inputs["gpu"], inputs["fabric"], cluster.scale_up_name, inputs["cost_mode"])
    apply_price_overrides(prices, dict(inputs.get("prices") or {}))
    config = {
        "model": model.core_spec(),
        "gpu": cluster.gpu.core_spec(),
        "scale_up": cluster.scale_up.core_spec(),
        "fabric": cluster.fabric.core_spec(),
        "topology": cluster.topology.core_spec(cluster.oversubscription),
        "prices": prices,
        "gpus": int(inputs["gpus"]),
        "serving": serving_section(inputs),
    }
    resolved = {
        **inputs,
        "model": model_name,
        "scale_up": cluster.scale_up_name,
        "oversubscription": cluster.oversubscription,
        "prices": dict(inputs.get("prices") or {}),
    }
    return config, resolved


def serve_model(catalog: Catalog | None = None, **values: Any) -> ServingResult:
    """Evaluate one serving configuration: any serving input by keyword (`model`, `gpu`, `gpus`, `tp`, `ep`,
    `dp_attention`, `mode`, `batch`, `input_tokens`, `output_tokens`, `quantization`, ...; the parameter table's
    ``serve`` parameters), the others at their defaults.

    Raises :class:`~scalefront.errors.CatalogError` for an unknown name, :class:`~scalefront.errors.UsageError` for a
    bad value and :class:`~scalefront.errors.ConfigurationError` for an impossible layout (naming the input).
    """
    inputs = serving_inputs(values)
    config, resolved = serving_config(inputs, catalog)
    return ServingResult(resolved, dict(core_serve(config)))
