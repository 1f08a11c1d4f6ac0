"""The model's own error as an uncertain input of the comparison: ln(measured / predicted) residuals of step time
(common to both fabrics) and of collective time (one draw per fabric), from data/model_error.toml's regimes, the
validation tables, or a file."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scalefront.errors import UsageError
from scalefront.fidelity import validation
from scalefront.inputs.catalog.loader import Catalog
from scalefront.inputs.files import parse_toml, read_text
from scalefront.inputs.messages import toml_repr

__all__ = ["model_error_residuals"]


def _log_ratio(a: float, b: float) -> float:
    return math.log(a / b)


def _validation_residuals(catalog: Catalog) -> tuple[list[float], list[float]]:
    """ln(measured / predicted step time) of the held-out training rows; ln(measured / predicted time) of the
    judged nccl-tests points over a network (not NVLink-only curves) in the regime of training's gradient and
    parameter traffic: messages of 64 MiB and more (Megatron's buckets hold >= 40M parameters)."""
    training = validation.judged_training(validation.training_checks(catalog))
    common = sorted(_log_ratio(c.measured_step_time_s, c.predicted_step_time_s) for c in training)
    networked = {c["id"] for c in validation.load_table("collectives")["curve"] if c.get("fabric", "none") != "none"}
    points = validation.judged_collectives(validation.collective_checks(catalog), validation.MEDIUM_COLLECTIVE_BYTES)
    # Time is inversely proportional to bus bandwidth: ln(t_meas / t_pred) = ln(bw_pred / bw_meas).
    collective = sorted(
        _log_ratio(p.predicted_busbw_gbytes_per_s, p.measured_busbw_gbytes_per_s) for p in points if p.id in networked
    )
    return common, collective


def _numbers(value: Any, path: str, key: str) -> list[float]:
    """A list of finite numbers at `key` of the file, or a one-line UsageError naming the file and the key."""
    if not isinstance(value, list) or any(
        isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) for v in value
    ):
        raise UsageError(
            f"{path}: {key}: expected a list of finite numbers, ln(measured / predicted), got {toml_repr(value)}"
        )
    return [float(v) for v in value]


def _file_residuals(path: str) -> tuple[list[float], list[float]]:
    """The residuals of a `--model-error` file: common_log_residuals and collective_log_residuals, or the
    [[regime]] tables of data/model_error.toml (all regimes pooled)."""
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
    if not common + collective:
        raise UsageError(
            f"{path}: no residuals; expected common_log_residuals = [...] and collective_log_residuals = [...] "
            "(ln(measured / predicted)), or the [[regime]] tables of data/model_error.toml"
        )
    return sorted(common), sorted(collective)


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
) -> tuple[list[float], list[float], str]:
    """(common step-time log residuals, collective log residuals, a label of the source). `regimes`: the
    (GPU generation, MoE) of each workload, to pick data/model_error.toml's regimes (all pooled when empty)."""
    if source == "none":
        return [], [], "none"
    errors = getattr(catalog, "errors", None)  # data/model_error.toml (the fidelity work's conformal residuals)
    if source == "auto" and errors is not None:
        common, names = _regime_residuals(errors, regimes)
        if not common:
            common, names = sorted(v for r in errors.regime for v in r.log_residuals), ["all regimes"]
        _, collective = _validation_residuals(catalog)
        label = f"data/model_error.toml ({', '.join(names)}) and nccl-tests validation residuals (collectives)"
        return common, collective, label
    if source in ("auto", "validation"):
        common, collective = _validation_residuals(catalog)
        return common, collective, "validation residuals (scalefront validate)"
    common, collective = _file_residuals(source)
    return common, collective, source
