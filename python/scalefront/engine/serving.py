"""A serving sweep (`scalefront inference --scenario`): for each cluster design of the scenario, every layout of its
axes evaluated by the core on all cores (`_core.serve_sweep`), folded into the Pareto frontier of its objectives
among the layouts that meet its SLOs. An SLO nothing meets gives an empty frontier, not an error."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Any

from scalefront._core import serve_axes, serve_sweep
from scalefront.errors import UsageError
from scalefront.inputs.catalog.loader import Catalog, builtin_catalog
from scalefront.inputs.scenario.serving import CLUSTER_KEYS, ServingScenario
from scalefront.inputs.serving import serving_config, serving_inputs
from scalefront.schema import SERVING_METRICS

__all__ = ["ServingFrontier", "frontiers_csv", "run_serving_sweep"]


@dataclass(frozen=True)
class ServingFrontier:
    """The frontier of one cluster design: its points (swept values and metrics, by name) and the counts."""

    cluster: dict[str, Any]
    points: list[dict[str, Any]]
    layouts: int
    evaluated: int
    rejected: int
    over_slo: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "cluster": self.cluster,
            "layouts": self.layouts,
            "evaluated": self.evaluated,
            "rejected": self.rejected,
            "over_slo": self.over_slo,
            "points": self.points,
        }


def run_serving_sweep(
    scenario: ServingScenario, catalog: Catalog | None = None, slos: list[tuple[str, str, float]] | None = None
) -> list[ServingFrontier]:
    """One frontier per cluster design, in the scenario's order (`slos` add to the scenario's)."""
    cat = catalog or builtin_catalog()
    _check_job_metrics(scenario, slos or [])
    out = []
    for cluster in scenario.clusters:
        first = {k: v[0] for k, v in scenario.axes.items()}
        inputs = serving_inputs({**scenario.fixed, **cluster, **first})
        config, resolved = serving_config(inputs, cat)
        result = serve_sweep(config, scenario.axes, scenario.objectives, scenario.slos + (slos or []))
        design = {k: resolved[k] for k in CLUSTER_KEYS}
        out.append(
            ServingFrontier(
                design,
                list(result["points"]),
                int(result["size"]),
                int(result["evaluated"]),
                int(result["rejected"]),
                int(result["over_slo"]),
            )
        )
    return out


def _check_job_metrics(scenario: ServingScenario, slos: list[tuple[str, str, float]]) -> None:
    """A job's metrics are 0 without a job: as an objective or an SLO they need `requests`."""
    named = [*scenario.objectives, *(name for name, _, _ in [*scenario.slos, *slos])]
    job = next((n for n in named if n.startswith("job_")), None)
    if job and not scenario.fixed.get("requests") and "requests" not in scenario.axes:
        raise UsageError(f"{job}: a finite job's metric needs [serving] requests (0, the default, is no job)")


def frontiers_csv(frontiers: list[ServingFrontier]) -> str:
    """Every frontier point as CSV: the cluster design, the swept values, every serving metric."""
    metrics = [m.name for m in SERVING_METRICS]
    axes = list(serve_axes())
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([*CLUSTER_KEYS, *axes, *metrics])
    for f in frontiers:
        for p in f.points:
            writer.writerow([*(f.cluster[k] for k in CLUSTER_KEYS), *(p[k] for k in axes), *(p[k] for k in metrics)])
    return buf.getvalue()
