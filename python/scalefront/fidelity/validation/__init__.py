"""Validation: scalefront's predictions against published measurements (data/validation/*.toml, embedded in
the package at build time as validation/*.toml).

Each training row is converted to a *measured step time* in the source's own FLOP convention, then compared
with the predicted step time of the same configuration:
- `step_time_s`: as published;
- `tokens_per_s_per_gpu`: global_batch x seq_len / (tokens/s/GPU x GPUs);
- `tflops_per_gpu`: the source's FLOPs per step / (TFLOP/s x GPUs). `tflops_formula = "megatron-sc21"` is
  Narayanan et al. SC21 eq. 3, 96 B s l h^2 (1 + s/6h + V/16lh) (recomputation included); otherwise the
  model's own FLOP count (with recomputed FLOPs when `tflops_counts_recompute`).
Collective rows compare predicted all-reduce bus bandwidth with nccl-tests' at each message size.
The error of a row is predicted / measured - 1 on step time (positive = the model is too slow).

Serving rows (``serving``) compare one published serving figure (throughput per GPU of a phase, output tokens per
second, tokens per second per user) with the model's for the same configuration; each GPU's `serving_efficiency` is
fitted on the serving table's calibration rows.

Modules: ``tables`` (the embedded tables, source families, targets and gates), ``training``, ``collectives``,
``serving`` (the serving table's checks and each GPU's serving_efficiency),
``calibration`` (each training framework's fitted terms), ``holdout`` (leave one source family out for the fitted
terms; the per-GPU residual, never applied), ``protocols`` (each NIC's LL/LL128 savings), ``error_model`` (the
prediction intervals and their held-out coverage), ``unstated`` (inputs a row's source does not give, and how far
they move its prediction), ``report`` (the text and docs/validation.md).
"""

from __future__ import annotations

from scalefront.fidelity.validation.calibration import (
    calibrate,
    calibrated_catalog,
    calibration_rule,
    write_calibration,
)
from scalefront.fidelity.validation.collectives import (
    CollectiveCheck,
    bus_bandwidth_factor,
    collective_checks,
    judged_collectives,
)
from scalefront.fidelity.validation.error_model import (
    INTERVAL_LEVEL,
    MIN_REGIME_ROWS,
    Coverage,
    Regime,
    fit_error_model,
    fit_regimes,
    held_out_coverage,
    render_error_model,
)
from scalefront.fidelity.validation.holdout import Group, HeldOut, by_group, gpu_residuals, held_out_errors
from scalefront.fidelity.validation.protocols import ProtocolFit, fit_protocols, write_protocols
from scalefront.fidelity.validation.report import (
    SHORTFALL,
    TableFacts,
    render,
    table_facts,
)
from scalefront.fidelity.validation.serving import (
    SERVING_MEDIAN_LIMIT_PCT,
    SERVING_WORST_LIMIT_PCT,
    ServingCheck,
    calibrate_serving,
    judged_serving,
    serving_calibration_rule,
    serving_checks,
    write_serving_calibration,
)
from scalefront.fidelity.validation.tables import (
    COLLECTIVE_LARGE_MEDIAN_LIMIT_PCT,
    COLLECTIVE_LARGE_WORST_LIMIT_PCT,
    COLLECTIVE_MEDIAN_LIMIT_PCT,
    COVERAGE_RANGE_PCT,
    COVERAGE_TOLERANCE_PCT,
    JUDGED_COLLECTIVE_BYTES,
    LARGE_COLLECTIVE_BYTES,
    MEDIAN_LIMIT_PCT,
    MEDIAN_TARGET_PCT,
    MEDIUM_COLLECTIVE_BYTES,
    MOE_MEDIAN_LIMIT_PCT,
    MOE_MEDIAN_TARGET_PCT,
    WORST_LIMIT_PCT,
    WORST_TARGET_PCT,
    load_table,
    source_family,
    summary,
)
from scalefront.fidelity.validation.training import (
    ATTENTION_KERNELS,
    DEFAULT_OVERLAP,
    DEFAULT_TOPOLOGY,
    TrainingCheck,
    evaluate_row,
    judged_training,
    measured_step_time_s,
    training_checks,
)
from scalefront.fidelity.validation.unstated import (
    RECOMPUTE_SETTINGS,
    UNSTATED_INPUTS,
    UNSTATED_SPREAD_LIMIT_PCT,
    admissible_micro_batches,
    unstated_spread,
)

__all__ = [
    "ATTENTION_KERNELS",
    "COLLECTIVE_LARGE_MEDIAN_LIMIT_PCT",
    "COLLECTIVE_LARGE_WORST_LIMIT_PCT",
    "COLLECTIVE_MEDIAN_LIMIT_PCT",
    "COVERAGE_RANGE_PCT",
    "COVERAGE_TOLERANCE_PCT",
    "DEFAULT_OVERLAP",
    "DEFAULT_TOPOLOGY",
    "INTERVAL_LEVEL",
    "JUDGED_COLLECTIVE_BYTES",
    "LARGE_COLLECTIVE_BYTES",
    "MEDIAN_LIMIT_PCT",
    "MEDIAN_TARGET_PCT",
    "MEDIUM_COLLECTIVE_BYTES",
    "MIN_REGIME_ROWS",
    "MOE_MEDIAN_LIMIT_PCT",
    "MOE_MEDIAN_TARGET_PCT",
    "RECOMPUTE_SETTINGS",
    "SERVING_MEDIAN_LIMIT_PCT",
    "SERVING_WORST_LIMIT_PCT",
    "SHORTFALL",
    "UNSTATED_INPUTS",
    "UNSTATED_SPREAD_LIMIT_PCT",
    "WORST_LIMIT_PCT",
    "WORST_TARGET_PCT",
    "CollectiveCheck",
    "Coverage",
    "Group",
    "HeldOut",
    "ProtocolFit",
    "Regime",
    "ServingCheck",
    "TableFacts",
    "TrainingCheck",
    "admissible_micro_batches",
    "bus_bandwidth_factor",
    "by_group",
    "calibrate",
    "calibrate_serving",
    "calibrated_catalog",
    "calibration_rule",
    "collective_checks",
    "evaluate_row",
    "fit_error_model",
    "fit_protocols",
    "fit_regimes",
    "gpu_residuals",
    "held_out_coverage",
    "held_out_errors",
    "judged_collectives",
    "judged_serving",
    "judged_training",
    "load_table",
    "measured_step_time_s",
    "render",
    "render_error_model",
    "serving_calibration_rule",
    "serving_checks",
    "source_family",
    "summary",
    "table_facts",
    "training_checks",
    "unstated_spread",
    "write_calibration",
    "write_protocols",
    "write_serving_calibration",
]
