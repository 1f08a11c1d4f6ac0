"""Calibration of each GPU's `sustained_efficiency` on the calibration rows of the training table, chosen by a
stated rule before any fit (`calibration_rule`), and writing the fitted values into data/gpus.toml."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import Any

from scalefront._core import model_params
from scalefront.fidelity.validation.tables import load_table, source_family
from scalefront.fidelity.validation.training import row_model, training_checks
from scalefront.inputs.catalog.loader import Catalog, builtin_catalog

__all__ = ["calibrate", "calibrated_catalog", "calibration_rule", "write_calibration"]


def _params(row: dict[str, Any], catalog: Catalog) -> float:
    model, _ = row_model(row)
    entry = catalog.model(model) if isinstance(model, str) else model
    return float(model_params(entry.core_spec()))


def calibration_rule(rows: list[dict[str, Any]], catalog: Catalog | None = None) -> list[str]:
    """The ids of the calibration rows, by the rule the table's header states (chosen before any fit): for each
    GPU, for each source family with at least three dense non-reference rows on it, the row at the lower median of
    their GPU counts (ties: the larger model, then the first in the table); a GPU where no family has three takes
    the same median over all its dense non-reference rows."""
    cat = catalog or builtin_catalog()
    dense = [
        (n, r)
        for n, r in enumerate(rows)
        if r.get("role") != "reference" and not (r.get("ep", 1) > 1 or _is_moe(r, cat))
    ]

    def median_row(candidates: list[tuple[int, dict[str, Any]]]) -> str:
        ordered = sorted(candidates, key=lambda nr: (nr[1]["gpus"], -_params(nr[1], cat), nr[0]))
        return str(ordered[(len(ordered) - 1) // 2][1]["id"])

    chosen = []
    for gpu in sorted({r["gpu"] for _, r in dense}):
        on_gpu = [(n, r) for n, r in dense if r["gpu"] == gpu]
        families = sorted({source_family(r["id"]) for _, r in on_gpu})
        picked = [
            median_row(group)
            for family in families
            if len(group := [(n, r) for n, r in on_gpu if source_family(r["id"]) == family]) >= 3
        ]
        chosen += picked or [median_row(on_gpu)]
    return sorted(chosen)


def _is_moe(row: dict[str, Any], catalog: Catalog) -> bool:
    model, _ = row_model(row)
    entry = catalog.model(model) if isinstance(model, str) else model
    return entry.is_moe


def calibrate(catalog: Catalog | None = None) -> dict[str, tuple[float, list[str]]]:
    """Fit each GPU's `sustained_efficiency` on its calibration rows: the value (to 0.01) at which the
    geometric mean of predicted / measured step time over those rows is 1. Returns {gpu: (value, row ids)}."""
    base = catalog or builtin_catalog()
    table = [r for r in load_table("training_runs")["run"] if r.get("role") == "calibration"]
    fitted: dict[str, tuple[float, list[str]]] = {}
    for gpu in sorted({r["gpu"] for r in table}):
        rows = [r for r in table if r["gpu"] == gpu]

        def log_ratio(value: float, gpu: str = gpu, rows: list[dict[str, Any]] = rows) -> float:
            gpus = dict(base.gpus)
            gpus[gpu] = gpus[gpu].model_copy(update={"sustained_efficiency": value})
            checks = training_checks(replace(base, gpus=gpus), rows)
            return sum(math.log(c.predicted_step_time_s / c.measured_step_time_s) for c in checks) / len(checks)

        lo, hi = 0.2, 1.0  # slower at lo; step time falls as the efficiency rises
        if log_ratio(hi) > 0:
            fitted[gpu] = (1.0, [r["id"] for r in rows])
            continue
        for _ in range(40):
            mid = (lo + hi) / 2
            if log_ratio(mid) > 0:
                lo = mid
            else:
                hi = mid
        fitted[gpu] = (round((lo + hi) / 2, 2), [r["id"] for r in rows])
    return fitted


def calibrated_catalog(catalog: Catalog | None = None) -> Catalog:
    """The catalog with every GPU's `sustained_efficiency` as `calibrate` fits it (equal to the catalog's own
    values when data/gpus.toml is current)."""
    base = catalog or builtin_catalog()
    gpus = dict(base.gpus)
    for gpu, (value, _) in calibrate(base).items():
        gpus[gpu] = gpus[gpu].model_copy(update={"sustained_efficiency": value})
    return replace(base, gpus=gpus)


_CALIBRATED_SOURCE = re.compile(r'^sustained_efficiency = "Calibrated: [^"]*"$', re.M)


def write_calibration(gpus_toml: str, fitted: dict[str, tuple[float, list[str]]], date: str) -> str:
    """data/gpus.toml's text with each fitted GPU's `sustained_efficiency` and its source line set from
    `fitted` (`calibrate()`); every other line unchanged."""
    return write_fitted_figure(gpus_toml, fitted, date, "sustained_efficiency", "training_runs", _CALIBRATED_SOURCE)


def write_fitted_figure(
    gpus_toml: str,
    fitted: dict[str, tuple[float, list[str]]],
    date: str,
    field: str,
    table: str,
    source: re.Pattern[str],
) -> str:
    """data/gpus.toml's text with each fitted GPU's figure `field` set from `fitted` ({gpu: (value, row ids)}) and
    its source line (the one `source` matches) naming the calibration rows of data/validation/`table`.toml;
    every other line unchanged."""
    out = gpus_toml
    for gpu, (value, rows) in fitted.items():
        start = out.find(f"[{gpu}]\n")
        sources = out.find(f"[{gpu}.sources]\n")
        if start < 0 or sources < 0:
            raise ValueError(f"it has no [{gpu}] entry with sources")
        end = out.find("\n[", sources + 1)
        end = len(out) if end < 0 else end
        entry = re.sub(rf"(?m)^{field} = [0-9.]+$", f"{field} = {value:.2f}", out[start:sources])
        which = "row" if len(rows) == 1 else "rows"
        line = (
            f'{field} = "Calibrated: fits the calibration {which} {", ".join(rows)} of '
            f'data/validation/{table}.toml (scalefront validate --calibrate); {date}"'
        )
        out = out[:start] + entry + source.sub(line, out[sources:end]) + out[end:]
    return out
