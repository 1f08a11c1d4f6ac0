"""Serving runs (data/validation/serving_runs.toml): each published row is one serving configuration in the inputs
of `scalefront inference` and one measured figure (`metric`, `measured`); the error is predicted / measured - 1 on
that figure (positive: the model is too fast, since every judged figure is a throughput). Each GPU's
`serving_efficiency` is fitted on the calibration rows, which a stated rule picks (`serving_calibration_rule`)."""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass, replace
from typing import Any

from scalefront.errors import ScalefrontError, message_of
from scalefront.fidelity.validation.calibration import write_fitted_figure
from scalefront.fidelity.validation.tables import load_table, source_family, summary
from scalefront.inputs.catalog.loader import Catalog, builtin_catalog
from scalefront.inputs.params import taking
from scalefront.inputs.serving import ServingResult, serve_model

__all__ = [
    "SERVING_MEDIAN_LIMIT_PCT",
    "SERVING_SCOPE",
    "SERVING_WORST_LIMIT_PCT",
    "ServingCheck",
    "calibrate_serving",
    "judged_serving",
    "serving_calibration_rule",
    "serving_checks",
    "serving_markdown_lines",
    "serving_plain_lines",
    "serving_summary_lines",
    "write_serving_calibration",
]

#: The serving gates (issue 23), written before the final measurement: judged median and worst absolute error.
SERVING_MEDIAN_LIMIT_PCT = 15.0
SERVING_WORST_LIMIT_PCT = 40.0

#: The calibration rule's rows (stated in the table's header before any fit): TensorRT-LLM's perf-overview rows of
#: the dense catalog models llama3-70b and llama3-8b at these input/output lengths.
_CALIBRATION_FAMILY = "trtllm"
_CALIBRATION_MODELS = ("llama3-70b", "llama3-8b")
_CALIBRATION_SHAPES = ((1000.0, 1000.0), (2048.0, 128.0))


@dataclass(frozen=True)
class ServingCheck:
    """One serving row: its measured figure and the model's, or why it could not be evaluated."""

    id: str
    role: str
    gpu: str
    gpus: int
    model: str
    framework: str
    metric: str
    measured: float
    predicted: float
    excluded_because: str = ""
    #: The model's one-line error when the row cannot be evaluated (reference rows only).
    failure: str = ""

    @property
    def error(self) -> float:
        return self.predicted / self.measured - 1.0 if self.measured and not math.isnan(self.predicted) else math.nan

    @property
    def family(self) -> str:
        return source_family(self.id)


def _inputs(row: dict[str, Any]) -> dict[str, Any]:
    """The row's serving inputs: its keys that are parameters of `scalefront inference`."""
    names = {p.name for p in taking("serve")}
    return {k: v for k, v in row.items() if k in names}


def _served(row: dict[str, Any], catalog: Catalog) -> ServingResult:
    """The row served: with its inputs as given, or, where it gives an engine's `max_batch` (a cap the scheduler
    fills as far as the KV cache allows, MLPerf's gpu_batch_size), with as many sequences as the modelled KV cache
    holds and at most that many."""
    inputs = _inputs(row)
    cap = row.get("max_batch")
    if cap is None:
        return serve_model(catalog, **inputs)
    held = serve_model(catalog, **{**inputs, "batch": 0})
    if held["max_batch"] <= cap:
        return held
    return serve_model(catalog, **{**inputs, "batch": int(cap)})


def _check(row: dict[str, Any], catalog: Catalog) -> ServingCheck:
    metric = row.get("metric", "")
    predicted, failure = math.nan, ""
    if metric:
        try:
            predicted = float(_served(row, catalog)[metric])
        except ScalefrontError as err:
            if row.get("role") != "reference":
                raise type(err)(f"serving_runs.toml, row {row['id']}: {message_of(err)}") from err
            failure = message_of(err)
    return ServingCheck(
        id=row["id"],
        role=row.get("role", "judged"),
        gpu=row["gpu"],
        gpus=int(row.get("gpus") or 0),
        model=row["model"],
        framework=row.get("framework", ""),
        metric=metric,
        measured=float(row.get("measured", math.nan)),
        predicted=predicted,
        excluded_because=row.get("excluded_because", ""),
        failure=failure,
    )


def serving_checks(catalog: Catalog | None = None, rows: list[dict[str, Any]] | None = None) -> list[ServingCheck]:
    """Every row of the serving table (or `rows`), predicted with `catalog` (default: the built-in one)."""
    cat = catalog or builtin_catalog()
    table = rows if rows is not None else load_table("serving_runs")["run"]
    return [_check(r, cat) for r in table]


def judged_serving(checks: list[ServingCheck]) -> list[ServingCheck]:
    return [c for c in checks if c.role == "judged"]


def serving_calibration_rule(rows: list[dict[str, Any]]) -> list[str]:
    """The ids the header's rule picks: TensorRT-LLM perf-overview rows (family `trtllm`, id `trtllm-perf-...`) of
    llama3-70b and llama3-8b at 1000/1000 and 2048/128, not `reference`."""
    return sorted(
        r["id"]
        for r in rows
        if r.get("role") != "reference"
        and source_family(r["id"]) == _CALIBRATION_FAMILY
        and r["id"].startswith("trtllm-perf-")
        and r.get("model") in _CALIBRATION_MODELS
        and (r.get("input_tokens"), r.get("output_tokens")) in _CALIBRATION_SHAPES
    )


def _with_efficiency(catalog: Catalog, gpu: str, value: float) -> Catalog:
    gpus = dict(catalog.gpus)
    gpus[gpu] = gpus[gpu].model_copy(update={"serving_efficiency": value})
    return replace(catalog, gpus=gpus)


#: The fit's upper bound: a serving engine at most 1.5 times the measured kernel rates (the catalog allows 2).
FIT_MAX_SERVING_EFFICIENCY = 1.5


def calibrate_serving(catalog: Catalog | None = None) -> dict[str, tuple[float, list[str]]]:
    """Fit each GPU's `serving_efficiency` on its calibration rows: the value (to 0.01) at which the geometric mean
    of predicted / measured over them is 1 (every calibrated figure is a throughput, rising with the efficiency).
    Returns {gpu: (value, row ids)}."""
    base = catalog or builtin_catalog()
    table = [r for r in load_table("serving_runs")["run"] if r.get("role") == "calibration"]
    fitted: dict[str, tuple[float, list[str]]] = {}
    for gpu in sorted({r["gpu"] for r in table}):
        rows = [r for r in table if r["gpu"] == gpu]

        def log_ratio(value: float, gpu: str = gpu, rows: list[dict[str, Any]] = rows) -> float:
            checks = serving_checks(_with_efficiency(base, gpu, value), rows)
            return statistics.fmean(math.log(c.predicted / c.measured) for c in checks)

        # Too slow at lo; throughput rises with the efficiency. Above 1 is allowed: a serving engine's forward-only
        # kernels may beat the measured forward / data- / weight-gradient median (H100 FP8: 0.628 against 0.612).
        lo, hi = 0.2, FIT_MAX_SERVING_EFFICIENCY
        if log_ratio(hi) < 0:
            fitted[gpu] = (hi, [r["id"] for r in rows])
            continue
        for _ in range(30):
            mid = (lo + hi) / 2
            if log_ratio(mid) > 0:
                hi = mid
            else:
                lo = mid
        fitted[gpu] = (round((lo + hi) / 2, 2), [r["id"] for r in rows])
    return fitted


_CALIBRATED_SOURCE = re.compile(r'^serving_efficiency = "[^"]*"$', re.M)


def write_serving_calibration(gpus_toml: str, fitted: dict[str, tuple[float, list[str]]], date: str) -> str:
    """data/gpus.toml's text with each fitted GPU's `serving_efficiency` and its source line set from `fitted`
    (`calibrate_serving()`); every other line unchanged. Any source line is replaced (an EST placeholder too)."""
    return write_fitted_figure(gpus_toml, fitted, date, "serving_efficiency", "serving_runs", _CALIBRATED_SOURCE)


def serving_summary_lines(checks: list[ServingCheck]) -> list[str]:
    """The serving table's facts and its judged rows against the gates, overall and per source family."""
    judged = judged_serving(checks)
    s = summary([c.error for c in judged])
    families = []
    for f in sorted({c.family for c in judged}):
        m = summary([c.error for c in judged if c.family == f])
        families.append(f"{f} {m['rows']} rows: median {m['median_ape_pct']:.1f}%, worst {m['worst_ape_pct']:.1f}%")
    met = s["median_ape_pct"] <= SERVING_MEDIAN_LIMIT_PCT and s["worst_ape_pct"] <= SERVING_WORST_LIMIT_PCT
    n = {role: sum(c.role == role for c in checks) for role in ("judged", "calibration", "reference")}
    return [
        f"**Serving runs**: {len(checks)} rows from {len({c.family for c in checks})} source families: "
        f"{n['calibration']} fit `serving_efficiency`, {n['reference']} reference rows, {n['judged']} judged rows.",
        "",
        f"**Judged serving rows**: median absolute error {s['median_ape_pct']:.1f}%, worst {s['worst_ape_pct']:.1f}% "
        f"(gates: median {SERVING_MEDIAN_LIMIT_PCT:.0f}%, worst {SERVING_WORST_LIMIT_PCT:.0f}%: "
        f"{'met' if met else 'not met'}); {sum(abs(c.error) <= 0.15 for c in judged)} of {len(judged)} serving rows "
        f"within 15%. By source family: {'; '.join(families)}.",
    ]


#: What the serving table does and does not validate (docs/validation.md); the figures are computed above it.
SERVING_SCOPE = """### What the serving rows validate, and what they do not

Judged rows: dense serving of Llama 3 8B, 70B and 405B in one node (TP 1-8) on H100, H200, B200 and GB200 with FP8
and NVFP4 weights at maximum load, from prefill-heavy (5,000/500) to long-context (20,000/2,000) and decode-heavy
(128/2,048) shapes, where the KV-cache capacity sets the batch (TensorRT-LLM's perf-overview rows: the model holds
them within 27%); DeepSeek-V3 with attention data parallelism and wide expert parallelism, as phase benchmarks:
decode over 72 H100s across 9 nodes of InfiniBand and prefill over 32 H100s across 4 (the only judged rows whose
model traffic crosses a scale-out fabric), decode over 48 GB200s inside one NVL72 (SGLang's rows: decode 11% too
slow to 15% too fast; prefill 26-33% too fast with the router's own expert distribution, whose imbalance the rows
do not give the model, 13% with the router replaced by random experts, so wide-EP serving is checked but not
validated); one small-batch latency row (DeepSeek-R1 on 8 B200s at batch 1: 50% too fast).

Not validated: throughput at a stated latency bound (the MLPerf Server and Interactive rows are reference: the
datasets' mean input lengths are not published in any source read); disaggregated serving end to end (no published
run prints its numbers): only its KV transfer is checked, by the Mooncake rows (reference: a time, not a
throughput; a negative error there is a transfer the model makes too fast); RoCE or any Ethernet fabric for serving
throughput (no judged row runs on one; the Mooncake transfers do); pipeline parallelism in serving; speculative
decoding (MTP) and prefix caching, which the model does not describe; AMD GPUs.
"""


def _figure(value: float) -> str:
    """A measured or predicted figure: throughputs to 0.1, small ones (seconds) to four significant digits."""
    return f"{value:,.1f}" if abs(value) >= 10 else f"{value:.4g}"


def serving_markdown_lines(checks: list[ServingCheck]) -> list[str]:
    """The serving section of docs/validation.md: the summary, how it is judged, the scope, every row."""
    lines = [
        "## Serving",
        "",
        "Rows of `data/validation/serving_runs.toml`: each a serving configuration in the inputs of `scalefront "
        "inference` and one published figure (`metric`); error = predicted / measured - 1 (positive: the model is too "
        "fast). `calibration` rows fit their GPU's `serving_efficiency` by the rule in the table's header (stated "
        "before any fit); `reference` rows are not counted (the reason is in the table).",
        "",
        *serving_summary_lines(checks),
        "",
        SERVING_SCOPE,
        "| row | role | GPU | GPUs | model | metric | measured | predicted | error |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in checks:
        role = c.role if c.role != "reference" else f"reference: {c.excluded_because}"
        if c.failure:
            role += f" (the model: {c.failure})"
        shown = not math.isnan(c.predicted)
        lines.append(
            f"| {c.id} | {role} | {c.gpu} | {c.gpus} | {c.model} | {c.metric or '-'} | "
            f"{_figure(c.measured)} | {_figure(c.predicted) if shown else '-'} | "
            f"{f'{c.error:+.1%}' if shown else '-'} |"
            if c.metric
            else f"| {c.id} | {role} | {c.gpu} | {c.gpus} | {c.model} | - | - | - | - |"
        )
    return lines


def serving_plain_lines(checks: list[ServingCheck]) -> list[str]:
    """`scalefront validate`'s serving rows (those with a figure) and the summary."""
    lines = [f"{'serving row':44} {'role':11} {'metric':30} {'measured':>10} {'predicted':>10} {'error':>8}"]
    for c in checks:
        if c.metric and not math.isnan(c.predicted):
            lines.append(
                f"{c.id[:44]:44} {c.role:11} {c.metric[:30]:30} "
                f"{_figure(c.measured):>10} {_figure(c.predicted):>10} {c.error:+8.1%}"
            )
    return [*lines, "", *(line.replace("**", "") for line in serving_summary_lines(checks) if line)]
