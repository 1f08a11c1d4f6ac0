"""The model's own error as uncertain inputs of the comparison: ln(measured / predicted) residuals of step time
(common to every design) and of collective time, split into a term common to every fabric and a term specific to
each fabric (`collective_error_terms`), from data/model_error.toml, the validation tables, or a file.

The split. The collective model is one model (NCCL's algorithms and protocols over a fabric's figures), so most of
its error is shared by every fabric it predicts; drawing it independently per fabric, from one pooled set, made
most of the old P(IB cheaper) = 17% (roi-review-2, E2). The fidelity work's decomposition per NCCL transport family
and per fabric, at the scale each was validated (data/model_error.toml's `[[collective_family]]` and
`[[collective_fabric]]`, `scalefront.fidelity.validation.fabric_error`), is used when the catalog carries it
(`--model-error auto`); `--model-error validation`, or a catalog without it, falls back to the pooled residuals of
the judged multi-node nccl-tests points:
- the common term is the residuals of the RDMA fabrics (InfiniBand and RoCE curves) pooled, EFA kept apart (its
  own transport, its own error; an EFA fabric draws from the EFA curves);
- a fabric's specific term is how far its own curves' median residual sits from the pooled median, with the
  uncertainty of that offset: a cluster bootstrap over its curves (each testbed's curve resampled whole; Efron &
  Tibshirani, An Introduction to the Bootstrap, 1993, ch. 6; clustered resampling: Field & Welsh, JRSS B 69(3),
  2007), a fixed number of replicates from a fixed seed, so the same catalog gives the same inputs. A fabric without
  curves of its own takes its family's (InfiniBand, RoCE, EFA).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from scalefront.errors import UsageError
from scalefront.fidelity import validation
from scalefront.fidelity.validation.fabric_error import CollectiveErrors, collective_errors, fabric_family
from scalefront.inputs.catalog.loader import Catalog
from scalefront.inputs.files import parse_toml, read_text
from scalefront.inputs.messages import toml_repr

__all__ = ["CollectiveError", "collective_error_terms", "model_error_residuals"]

#: Bootstrap replicates of a fabric's specific term, and their seed.
REPLICATES = 400
#: Equal-probability points a normal term of the decomposition is resampled from: the (k + 0.5) / N quantiles.
NORMAL_POINTS = 400
SEED = 20
#: The fabric kinds whose collective residuals are pooled into the common term (EFA kept apart).
RDMA_KINDS = ("infiniband", "roce")


@dataclass(frozen=True)
class CollectiveError:
    """The collective model's error: a term every fabric shares, and a term per fabric (by base fabric id, the
    part before any `@mode`), each as log residuals to resample."""

    common: list[float]
    specific: dict[str, list[float]] = field(default_factory=dict)
    #: Where the terms came from, for the report.
    label: str = ""
    #: When the fabrics compared span NCCL transport families (EFA against InfiniBand): each family's own common
    #: term, by family, and each base fabric's family (`common` is then unused).
    common_by_family: dict[str, list[float]] = field(default_factory=dict)
    family_of: dict[str, str] = field(default_factory=dict)


def _log_ratio(a: float, b: float) -> float:
    return math.log(a / b)


def _collective_points(catalog: Catalog) -> dict[str, list[tuple[str, float]]]:
    """The judged nccl-tests points over a network by the curve's fabric id: (curve id, ln(measured / predicted
    time)), in the regime of training's gradient and parameter traffic (messages of 64 MiB and more: Megatron's
    buckets hold >= 40M parameters). Time is inversely proportional to bus bandwidth: ln(t_meas / t_pred) =
    ln(bw_pred / bw_meas)."""
    fabric_of = {c["id"]: c.get("fabric", "none") for c in validation.load_table("collectives")["curve"]}
    points = validation.judged_collectives(validation.collective_checks(catalog), validation.MEDIUM_COLLECTIVE_BYTES)
    out: dict[str, list[tuple[str, float]]] = {}
    for p in points:
        fabric = fabric_of.get(p.id, "none")
        if fabric != "none":
            out.setdefault(fabric, []).append(
                (p.id, _log_ratio(p.predicted_busbw_gbytes_per_s, p.measured_busbw_gbytes_per_s))
            )
    return out


def _kind(catalog: Catalog, fabric: str) -> str:
    try:
        return catalog.fabric(fabric).kind
    except Exception:  # a curve of a fabric the user's catalog dropped: its id is its family
        return fabric


def _offsets(curves: dict[str, list[float]], pooled_median: float, rng: np.random.Generator) -> list[float]:
    """Cluster bootstrap of (median of the resampled curves' points) - the pooled median: `REPLICATES` values."""
    ids = sorted(curves)
    out = []
    for _ in range(REPLICATES):
        drawn = rng.integers(0, len(ids), len(ids))
        values = [v for i in drawn for v in curves[ids[i]]]
        out.append(statistics.median(values) - pooled_median)
    return sorted(out)


def _from_validation(catalog: Catalog, fabrics: Sequence[str]) -> CollectiveError:
    """The fallback decomposition from the validation curves (module docstring)."""
    by_fabric = _collective_points(catalog)
    kind = {f: _kind(catalog, f) for f in by_fabric}
    pool = [v for f, pts in by_fabric.items() if kind[f] in RDMA_KINDS for _, v in pts]
    efa = [v for f, pts in by_fabric.items() if kind[f] == "efa" for _, v in pts]
    rng = np.random.default_rng(SEED)
    specific: dict[str, list[float]] = {}
    wants_efa = any(_kind(catalog, f) == "efa" for f in fabrics)
    common = sorted(efa if wants_efa and efa else pool)
    median = statistics.median(common) if common else 0.0
    for fabric in sorted({f.split("@", 1)[0] for f in fabrics}):
        family = _kind(catalog, fabric)
        sources = [f for f in by_fabric if f == fabric] or [f for f in by_fabric if kind[f] == family]
        own: dict[str, list[float]] = {}  # curve id -> its points
        for f in sources:
            for curve, v in by_fabric[f]:
                own.setdefault(curve, []).append(v)
        if own:
            specific[fabric] = _offsets(own, median, rng)
    label = (
        f"nccl-tests validation residuals: a term common to every fabric ({len(common)} points of the "
        f"{'EFA' if wants_efa and efa else 'InfiniBand and RoCE'} curves) and one per fabric (cluster bootstrap of its "
        "curves' offset)"
    )
    return CollectiveError(common, specific, label)


def _normal(sd: float) -> list[float]:
    """A zero-mean normal term of standard deviation `sd` (ln) as `NORMAL_POINTS` equal-probability values."""
    z = statistics.NormalDist()
    return [sd * z.inv_cdf((k + 0.5) / NORMAL_POINTS) for k in range(NORMAL_POINTS)]


def _from_decomposition(errors: CollectiveErrors, fabrics: Sequence[str]) -> CollectiveError:
    """The fidelity work's decomposition (data/model_error.toml, `scalefront.fidelity.validation.fabric_error`):
    each NCCL transport family's common term and each fabric's specific term, root mean squares of the judged
    nccl-tests curves' residuals, drawn as zero-mean normals (a fabric without curves takes its family's largest,
    as that module states). One family: one common draw for every fabric; several (EFA against InfiniBand): one
    per family."""
    bases = sorted({f.split("@", 1)[0] for f in fabrics})
    family_of = {b: fabric_family(b) for b in bases}
    families = sorted(set(family_of.values()))
    by_family = {fam: _normal(errors.families[fam].log_rms) for fam in families if fam in errors.families}
    specific = {b: _normal(errors.specific(b).log_rms) for b in bases}
    parts = [f"{fam} {errors.families[fam].curves} curves, RMS {errors.families[fam].log_rms:.1%}" for fam in by_family]
    own = [f"{b} {errors.specific(b).log_rms:.1%} (to {errors.specific(b).validated_gpus:,} GPUs)" for b in bases]
    label = (
        f"data/model_error.toml's decomposition: a term common to each NCCL transport family ({'; '.join(parts)}) "
        f"and one per fabric ({', '.join(own)}), normal"
    )
    if len(by_family) == 1:
        return CollectiveError(next(iter(by_family.values())), specific, label)
    return CollectiveError([], specific, label, by_family, family_of)


def collective_error_terms(catalog: Catalog, fabrics: Sequence[str], source: str = "auto") -> CollectiveError:
    """The collective model's error for the fabrics compared: a common term and one term per fabric. `source` is
    the comparison's `--model-error`: "none" (no error), a TOML file (`collective_log_residuals`, and optionally
    `[collective_by_fabric]` tables of per-fabric residuals), else data/model_error.toml's decomposition when it
    carries one and `source` is "auto", else the validation curves' (module docstring)."""
    if source == "none":
        return CollectiveError([], {}, "none")
    if source not in ("auto", "validation"):
        doc = _read_file(source)
        by_fabric = {k: sorted(float(x) for x in v) for k, v in doc.get("collective_by_fabric", {}).items()}
        return CollectiveError(sorted(doc.get("collective_log_residuals", [])), by_fabric, source)
    decomposition = collective_errors(getattr(catalog, "errors", None)) if source == "auto" else None
    if decomposition is not None:
        return _from_decomposition(decomposition, fabrics)
    return _from_validation(catalog, fabrics)


def _training_residuals(catalog: Catalog) -> list[float]:
    """ln(measured / predicted step time) of the held-out training rows."""
    training = validation.judged_training(validation.training_checks(catalog))
    return sorted(_log_ratio(c.measured_step_time_s, c.predicted_step_time_s) for c in training)


def _numbers(value: Any, path: str, key: str) -> list[float]:
    """A list of finite numbers at `key` of the file, or a one-line UsageError naming the file and the key."""
    if not isinstance(value, list) or any(
        isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) for v in value
    ):
        raise UsageError(
            f"{path}: {key}: expected a list of finite numbers, ln(measured / predicted), got {toml_repr(value)}"
        )
    return [float(v) for v in value]


def _read_file(path: str) -> dict[str, Any]:
    """A `--model-error` file, every list of residuals checked: common_log_residuals and collective_log_residuals
    (optionally `[collective_by_fabric]` lists), or the [[regime]] tables of data/model_error.toml."""
    if not path.strip():
        raise UsageError("--model-error: the value is empty; give auto, validation, none or a TOML file")
    p = Path(path)
    if not p.is_file():
        what = "is a directory" if p.is_dir() else "no such file"
        raise UsageError(f"--model-error {path}: {what}; give auto, validation, none or a TOML file")
    doc = parse_toml(read_text(p), path)
    if "regime" in doc:  # the fidelity file's format: residuals by regime; all regimes pooled
        regimes = doc["regime"]
        if not isinstance(regimes, list) or not all(isinstance(r, dict) for r in regimes):
            raise UsageError(f"{path}: regime: expected [[regime]] tables, got {toml_repr(regimes)}")
        common = [v for r in regimes for v in _numbers(r.get("log_residuals", []), path, "regime.log_residuals")]
    else:
        common = _numbers(doc.get("common_log_residuals", []), path, "common_log_residuals")
    collective = _numbers(doc.get("collective_log_residuals", []), path, "collective_log_residuals")
    by_fabric = doc.get("collective_by_fabric", {})
    if not isinstance(by_fabric, dict):
        raise UsageError(f"{path}: collective_by_fabric: expected a table of lists, got {toml_repr(by_fabric)}")
    for fabric, values in by_fabric.items():
        collective += _numbers(values, path, f"collective_by_fabric.{fabric}")
    if not common + collective:
        raise UsageError(
            f"{path}: no residuals; expected common_log_residuals = [...] and collective_log_residuals = [...] "
            "(ln(measured / predicted)), or the [[regime]] tables of data/model_error.toml"
        )
    return doc


def _file_common(path: str) -> list[float]:
    doc = _read_file(path)
    if "regime" in doc:  # the fidelity file's format: residuals by regime; all regimes pooled
        return sorted(float(r) for regime in doc["regime"] for r in regime.get("log_residuals", []))
    return sorted(float(v) for v in doc.get("common_log_residuals", []))


def _regime_residuals(errors: Any, regimes: Sequence[tuple[str | None, bool]]) -> tuple[list[float], list[str]]:
    """The training residuals of the regimes the comparison's workloads fall in: for each (GPU generation, MoE)
    the first regime of data/model_error.toml that matches and holds `min_rows` residuals (the file lists the most
    specific first, as the prediction intervals pick them)."""
    chosen: dict[str, list[float]] = {}
    for generation, moe in regimes:
        for r in errors.regime:
            matches = (r.generation is None or r.generation == generation) and (r.moe is None or r.moe == moe)
            if matches and len(r.log_residuals) >= errors.min_rows:
                chosen.setdefault(r.name, list(r.log_residuals))
                break
    return sorted(v for values in chosen.values() for v in values), list(chosen)


def model_error_residuals(
    source: str, catalog: Catalog, regimes: Sequence[tuple[str | None, bool]] = ()
) -> tuple[list[float], str]:
    """(common step-time log residuals, a label of the source). `regimes`: the (GPU generation, MoE) of each
    workload, to pick data/model_error.toml's regimes (all pooled when empty)."""
    if source == "none":
        return [], "none"
    errors = getattr(catalog, "errors", None)  # data/model_error.toml (the fidelity work's conformal residuals)
    if source == "auto" and errors is not None:
        common, names = _regime_residuals(errors, regimes)
        if not common:
            common, names = sorted(v for r in errors.regime for v in r.log_residuals), ["all regimes"]
        return common, f"data/model_error.toml ({', '.join(names)})"
    if source in ("auto", "validation"):
        return _training_residuals(catalog), "validation residuals (scalefront validate)"
    return _file_common(source), source
