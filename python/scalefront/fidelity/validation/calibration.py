"""Calibration of each training framework's fitted software terms (`FITTED_TERMS` of data/frameworks.toml) on the
calibration rows of the training table, chosen by a stated rule before any fit (`calibration_rule`); writing the
fitted values into data/frameworks.toml. The GPUs' kernel figures are measured or estimated, never fitted here: no
figure is fitted per GPU.

The fit: for each framework, the terms that minimise the squared ln(predicted / measured) step time over its
calibration rows, within `TERM_BOUNDS`, by projected Gauss-Newton (the step time is piecewise linear in both terms:
the layer overhead scales the layers' compute, the interference the communication hidden behind it). One
calibration row fits the layer overhead alone (the interference stays 0); so do rows that hide no communication.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from scalefront._core import model_params
from scalefront.fidelity.validation.tables import load_table, source_family
from scalefront.fidelity.validation.training import row_model, training_checks
from scalefront.inputs.catalog.loader import Catalog, builtin_catalog

__all__ = [
    "FITTED_TERMS",
    "INTERFERENCE_RANGE",
    "TERM_BOUNDS",
    "FrameworkFit",
    "calibrate",
    "calibrated_catalog",
    "calibration_rule",
    "fit_frameworks",
    "measured_gpus",
    "with_terms",
    "write_calibration",
]

#: The framework terms fitted on calibration rows, in fit order.
FITTED_TERMS = ("layer_overhead", "overlap_interference")
#: The overlap interference's range around its fit, which the ROI samples: from 0, which the calibration rows do not
#: exclude (Megatron-Core's fit moved 0 -> 0.509 with two rows fewer along a nearly flat objective, 0.0287 against
#: 0.0267: docs/design/fidelity-v3.md Sec. 29), to 0.6 (EST: Lee et al., arXiv 2507.03114, 2025-07, on 4 A100s /
#: H100s / MI250s / MI210s: overlapped compute 18.9% slower, sequential 10.2% slower than overlapped, about 0.6 of
#: the hidden communication's time; single-node, PyTorch's overlap), or the fit where it is higher.
INTERFERENCE_RANGE = (0.0, 0.6)
_INTERFERENCE_RANGE_SOURCE = (
    "range 0 (the calibration rows do not exclude it: docs/design/fidelity-v3.md Sec. 29) to 0.6 (EST: Lee et al., "
    "arXiv 2507.03114, overlapped compute 18.9% slower and sequential 10.2% slower than overlapped on one node: "
    "about 0.6 of the hidden communication's time)"
)
#: Where a fitted term may lie: no framework makes the kernels faster, nor doubles a layer's time.
TERM_BOUNDS = (0.0, 1.0)
_STEP = 0.01
_ITERATIONS = 12


@dataclass(frozen=True)
class FrameworkFit:
    """A framework's fitted terms and the calibration rows they were fitted on."""

    framework: str
    values: dict[str, float]
    rows: tuple[str, ...]
    #: The terms the rows fitted (one row fits the layer overhead alone; the others are then 0).
    fitted: tuple[str, ...] = FITTED_TERMS


def _params(row: dict[str, Any], catalog: Catalog) -> float:
    model, _ = row_model(row)
    entry = catalog.model(model) if isinstance(model, str) else model
    return float(model_params(entry.core_spec()))


def _is_moe(row: dict[str, Any], catalog: Catalog) -> bool:
    model, _ = row_model(row)
    entry = catalog.model(model) if isinstance(model, str) else model
    return entry.is_moe


def measured_gpus(catalog: Catalog) -> set[str]:
    """GPUs whose kernel figures were measured by `scalefront measure` on a recorded run (their GEMM source says
    "measured" and names its record), not estimated: a framework's terms fitted on rows of an estimated GPU would
    carry that GPU's estimate to every GPU. A published GEMM measurement alone (the V100's DeepBench figure, design
    note Sec. 34) leaves the GPU's other kernel figures estimates, so it does not make the GPU one of these."""

    def recorded(source: str) -> bool:
        return source.startswith("measured") and "record:" in source

    return {gid for gid, g in catalog.gpus.items() if recorded(g.sources.get("gemm_efficiency", ""))}


def calibration_rule(rows: list[dict[str, Any]], catalog: Catalog | None = None) -> list[str]:
    """The ids of the calibration rows, by the rule the table's header states (chosen before any fit): for each
    framework, its candidates are its dense non-reference rows on GPUs with measured kernel figures, or, where it
    has none, all its dense non-reference rows; for each source family with at least three candidates, the one at
    the lower median of their GPU counts (ties: the larger model, then the first in the table); a framework where
    no family has three takes the same median over all its candidates."""
    cat = catalog or builtin_catalog()
    measured = measured_gpus(cat)
    dense = [
        (n, r)
        for n, r in enumerate(rows)
        if r.get("role") != "reference" and not (r.get("ep", 1) > 1 or _is_moe(r, cat))
    ]

    def median_row(candidates: list[tuple[int, dict[str, Any]]]) -> str:
        ordered = sorted(candidates, key=lambda nr: (nr[1]["gpus"], -_params(nr[1], cat), nr[0]))
        return str(ordered[(len(ordered) - 1) // 2][1]["id"])

    chosen = []
    for framework in sorted({r["framework"] for _, r in dense}):
        mine = [(n, r) for n, r in dense if r["framework"] == framework]
        mine = [(n, r) for n, r in mine if r["gpu"] in measured] or mine
        families = sorted({source_family(r["id"]) for _, r in mine})
        picked = [
            median_row(group)
            for family in families
            if len(group := [(n, r) for n, r in mine if source_family(r["id"]) == family]) >= 3
        ]
        chosen += picked or [median_row(mine)]
    return sorted(chosen)


def with_terms(catalog: Catalog, framework: str, values: dict[str, float]) -> Catalog:
    """The catalog with `framework`'s terms set to `values`."""
    frameworks = dict(catalog.frameworks)
    frameworks[framework] = frameworks[framework].model_copy(update=values)
    return replace(catalog, frameworks=frameworks)


def _residuals(catalog: Catalog, rows: list[dict[str, Any]]) -> np.ndarray:
    checks = training_checks(catalog, rows)
    return np.array([math.log(c.predicted_step_time_s / c.measured_step_time_s) for c in checks])


def _gauss_newton(residuals: Callable[[np.ndarray], np.ndarray], start: np.ndarray) -> np.ndarray:
    """Projected Gauss-Newton within TERM_BOUNDS: each step solves for the terms free to move, a term at a bound
    that the step would push past it held there (an active set), so that the others settle where the least squares
    is least with it at its bound; a term whose column is zero (nothing it acts on) stays put."""
    x = start.copy()
    for _ in range(_ITERATIONS):
        r = residuals(x)
        jac = np.column_stack([(residuals(x + _STEP * e) - r) / _STEP for e in np.eye(len(x))])
        step = _bounded_step(x, jac, r)
        x = np.clip(x + step, *TERM_BOUNDS)
        if np.abs(step).max() < 1e-4:
            break
    return x


def _bounded_step(x: np.ndarray, jac: np.ndarray, r: np.ndarray) -> np.ndarray:
    """The Gauss-Newton step over the free terms: solved, then solved again without each term it pushes past the
    bound it sits on, until none does (zero where nothing is free)."""
    low, high = TERM_BOUNDS
    free = np.abs(jac).sum(axis=0) > 1e-9
    step = np.zeros_like(x)
    for _ in range(len(x) + 1):
        step = np.zeros_like(x)
        if not free.any():
            break
        step[free] = np.linalg.lstsq(jac[:, free], -r, rcond=None)[0]
        pushed = free & (((x <= low) & (step < 0)) | ((x >= high) & (step > 0)))
        if not pushed.any():
            break
        free &= ~pushed
    return step


def _fitted_terms(rows: list[dict[str, Any]]) -> tuple[str, ...]:
    return FITTED_TERMS if len(rows) >= len(FITTED_TERMS) else FITTED_TERMS[: len(rows)]


def _fit_one(catalog: Catalog, framework: str, rows: list[dict[str, Any]]) -> dict[str, float]:
    terms = _fitted_terms(rows)

    def residuals(x: np.ndarray) -> np.ndarray:
        values = dict(zip(terms, (float(v) for v in x), strict=True))
        return _residuals(with_terms(catalog, framework, values), rows)

    fitted = _gauss_newton(residuals, np.zeros(len(terms)))
    values = dict.fromkeys(FITTED_TERMS, 0.0)
    values.update({t: round(float(v), 3) for t, v in zip(terms, fitted, strict=True)})
    return values


def fit_frameworks(catalog: Catalog | None = None, exclude_family: str | None = None) -> dict[str, FrameworkFit]:
    """Fit the terms of every framework some calibration row names on its calibration rows (those of
    `exclude_family` left out: the fit that family's rows are held out of; a framework left without rows then has
    its terms at 0, what an uncalibrated framework adds). Frameworks no calibration row names keep their catalog
    values (measured, as eager PyTorch's, or none to fit)."""
    base = catalog or builtin_catalog()
    table = [r for r in load_table("training_runs")["run"] if r.get("role") == "calibration"]
    fitted = {}
    for framework in sorted({r["framework"] for r in table}):
        rows = [r for r in table if r["framework"] == framework and source_family(r["id"]) != exclude_family]
        values = _fit_one(base, framework, rows) if rows else dict.fromkeys(FITTED_TERMS, 0.0)
        fitted[framework] = FrameworkFit(framework, values, tuple(r["id"] for r in rows), _fitted_terms(rows))
    return fitted


def calibrate(catalog: Catalog | None = None) -> dict[str, FrameworkFit]:
    """`scalefront validate --calibrate`: every framework's fitted terms on all its calibration rows."""
    return fit_frameworks(catalog)


def calibrated_catalog(catalog: Catalog | None = None, fits: Iterable[FrameworkFit] | None = None) -> Catalog:
    """The catalog with every framework's terms as `calibrate` fits them (equal to the catalog's own values when
    data/frameworks.toml is current), or as `fits` give them."""
    base = catalog or builtin_catalog()
    out = base
    for fit in fits if fits is not None else calibrate(base).values():
        out = with_terms(out, fit.framework, fit.values)
    return out


_CALIBRATED_SOURCE = r'^{term} = "Calibrated: [^"]*"$'


def _fitted_value(term: str, value: float) -> str:
    """A fitted term as data/frameworks.toml holds it: the overlap interference as its range around the fit
    (`INTERFERENCE_RANGE`), the layer overhead as the number."""
    if term != "overlap_interference":
        return repr(value)
    low, high = INTERFERENCE_RANGE
    return f"{{ low = {low!r}, typical = {value!r}, high = {max(high, value)!r} }}"


def write_calibration(frameworks_toml: str, fitted: dict[str, FrameworkFit], date: str) -> str:
    """data/frameworks.toml's text with each framework's fitted terms and their source lines set from `fitted`
    (`calibrate()`); every other line unchanged."""
    out = frameworks_toml
    for framework, fit in fitted.items():
        start = out.find(f"[{framework}]\n")
        sources = out.find(f"[{framework}.sources]\n")
        if start < 0 or sources < 0:
            raise ValueError(f"it has no [{framework}] entry with sources")
        end = out.find("\n[", sources + 1)
        end = len(out) if end < 0 else end
        entry, source = out[start:sources], out[sources:end]
        which = "row" if len(fit.rows) == 1 else "rows"
        basis = f"fits the calibration {which} {', '.join(fit.rows)} of data/validation/training_runs.toml"
        for term in FITTED_TERMS:
            entry = re.sub(rf"(?m)^{term} = .*$", f"{term} = {_fitted_value(term, float(fit.values[term]))}", entry)
            why = basis if term in fit.fitted else f"not identified: {basis} ({', '.join(fit.fitted)} alone); 0"
            if term == "overlap_interference":
                why += f"; {_INTERFERENCE_RANGE_SOURCE}"
            line = f'{term} = "Calibrated: {why} (scalefront validate --calibrate); {date}"'
            source = re.sub(_CALIBRATED_SOURCE.format(term=term), line, source, flags=re.M)
        out = out[:start] + entry + source + out[end:]
    return out


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
