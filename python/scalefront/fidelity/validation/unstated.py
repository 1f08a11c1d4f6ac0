"""Inputs a training row's source does not give and no software default fixes (the row's `unstated` list), and how
far they move the row's prediction: a row whose unstated inputs move its predicted step time by more than
`UNSTATED_SPREAD_LIMIT_PCT` is `reference` (data/validation/training_runs.toml header; docs/design/fidelity-v3.md
Sec. 28 for the micro-batch, Sec. 29 for recomputation)."""

from __future__ import annotations

from itertools import product
from typing import Any

from scalefront.errors import ConfigurationError
from scalefront.fidelity.validation.tables import MEDIAN_TARGET_PCT
from scalefront.fidelity.validation.training import evaluate_row
from scalefront.inputs.catalog.loader import Catalog, builtin_catalog

__all__ = [
    "RECOMPUTE_SETTINGS",
    "UNSTATED_INPUTS",
    "UNSTATED_SPREAD_LIMIT_PCT",
    "admissible_micro_batches",
    "unstated_spread",
]

#: The inputs a row may list as unstated: those whose admissible values the table can enumerate.
UNSTATED_INPUTS = ("micro_batch", "recompute")
#: Activation recomputation a run may have used where its source does not say (the table's `recompute` values).
RECOMPUTE_SETTINGS = ("none", "selective", "full")
#: An unstated input that moves the prediction by more than the judged-median gate, fastest to slowest, leaves the
#: row unable to test the model to that precision.
UNSTATED_SPREAD_LIMIT_PCT = MEDIAN_TARGET_PCT


def admissible_micro_batches(row: dict[str, Any]) -> list[int]:
    """Micro-batches the row's global batch admits: those dividing global_batch / dp (whole micro-batch counts)."""
    per_replica = row["global_batch"] // row["dp"]
    return [mb for mb in range(1, per_replica + 1) if per_replica % mb == 0]


def _candidates(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The row with each combination of its unstated inputs' values (the row itself where nothing is unstated)."""
    unstated = row.get("unstated", [])
    unknown = [name for name in unstated if name not in UNSTATED_INPUTS]
    if unknown:
        raise ValueError(f"validation row {row['id']}: unstated {unknown} not among {list(UNSTATED_INPUTS)}")
    micro_batches = admissible_micro_batches(row) if "micro_batch" in unstated else [row["micro_batch"]]
    recomputes = RECOMPUTE_SETTINGS if "recompute" in unstated else (row.get("recompute", "none"),)
    return [{**row, "micro_batch": mb, "recompute": rc} for mb, rc in product(micro_batches, recomputes)]


def unstated_spread(row: dict[str, Any], catalog: Catalog | None = None) -> float:
    """How far the row's unstated inputs move its predicted step time: slowest / fastest - 1 over the admissible
    values that give a valid schedule and fit the GPU's memory (0 for a row with nothing unstated)."""
    candidates = _candidates(row)
    if not row.get("unstated"):
        return 0.0
    cat = catalog or builtin_catalog()
    times = []
    for candidate in candidates:
        try:
            e = evaluate_row(candidate, cat)
        except ConfigurationError:
            continue  # not a schedule the software runs (an interleaved pipeline's count not a multiple of pp)
        if e.feasible:
            times.append(e.step_time_s)
    return max(times) / min(times) - 1.0 if times else 0.0
