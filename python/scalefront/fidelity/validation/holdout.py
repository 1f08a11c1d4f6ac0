"""How far the fitted figures carry to sources they were not fitted on, and what stays per GPU.

- Leave one source family out (`held_out_errors`): each source family's judged rows predicted with the framework
  terms refitted without that family's calibration rows (the only figures fitted on rows: the GPUs' kernel figures
  are measured or estimated, the prediction intervals have their own held-out coverage, `error_model`).
- The per-GPU residual (`gpu_residuals`): the median signed error of each GPU's judged rows, reported and never
  applied: what the GPU's kernel figures (and the software that ran on it) leave that no GPU factor absorbs.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass

from scalefront.fidelity.validation.calibration import calibrate, calibrated_catalog, fit_frameworks
from scalefront.fidelity.validation.tables import load_table, source_family
from scalefront.fidelity.validation.training import TrainingCheck, training_checks
from scalefront.inputs.catalog.loader import Catalog, builtin_catalog

__all__ = ["Group", "HeldOut", "by_group", "gpu_residuals", "held_out_errors"]


@dataclass(frozen=True)
class HeldOut:
    """Each judged row's error when its source family's calibration rows are left out of the framework fit."""

    errors: dict[str, float]
    #: The families whose leaving out changed a fit (the others' rows are predicted as in the full fit).
    refitted: tuple[str, ...]


def held_out_errors(catalog: Catalog | None = None) -> HeldOut:
    """Leave one source family out for every fitted figure (see the module's docstring)."""
    base = catalog or builtin_catalog()
    rows = load_table("training_runs")["run"]
    judged = [r for r in rows if r.get("role", "validation") == "validation"]
    calibrating = {source_family(r["id"]) for r in rows if r.get("role") == "calibration"}
    full = calibrated_catalog(base, calibrate(base).values())
    errors: dict[str, float] = {}
    for family in sorted({source_family(r["id"]) for r in judged}):
        mine = [r for r in judged if source_family(r["id"]) == family]
        cat = calibrated_catalog(base, fit_frameworks(base, family).values()) if family in calibrating else full
        errors |= {c.id: c.error for c in training_checks(cat, mine)}
    return HeldOut(errors, tuple(sorted(calibrating)))


@dataclass(frozen=True)
class Group:
    """Judged rows of one group (a GPU, a source family, a framework): how many, the median signed and absolute
    error, the worst."""

    name: str
    rows: int
    median: float
    median_abs: float
    worst: float


def by_group(checks: Iterable[TrainingCheck], key: str) -> list[Group]:
    """The judged rows grouped by `key` (an attribute of TrainingCheck: gpu, source_family, framework)."""
    groups: dict[str, list[float]] = {}
    for c in checks:
        if c.role == "validation":
            groups.setdefault(str(getattr(c, key)), []).append(c.error)
    return [
        Group(name, len(e), statistics.median(e), statistics.median(abs(x) for x in e), max(e, key=abs))
        for name, e in sorted(groups.items())
    ]


def gpu_residuals(checks: Iterable[TrainingCheck]) -> list[Group]:
    """The per-GPU residual: each GPU's judged rows' median signed error (never applied to a prediction)."""
    return by_group(checks, "gpu")
