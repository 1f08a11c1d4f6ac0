"""Fidelity: scalefront's predictions against published measurements (tests/validation/*.toml, embedded in
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
"""

from __future__ import annotations

import math
import re
import statistics
import tomllib
from dataclasses import dataclass
from typing import Any, Literal

from scalefront import _core
from scalefront.inputs.catalog.entries import ModelEntry
from scalefront.inputs.catalog.loader import Catalog, builtin_catalog
from scalefront.inputs.model import evaluate

__all__ = ["CollectiveCheck", "TrainingCheck", "collective_checks", "load_table", "summary", "training_checks"]

#: Rows without an `overlap` key take it from `dp_overlap` (the source's overlapped gradient reduction: "dp" when
#: true, "none" when false), else Megatron-LM's usual setting, overlapped gradient reduction.
DEFAULT_OVERLAP = "dp"
#: Rows name no topology: DGX SuperPODs and the other published clusters are rail-optimized fat-trees.
DEFAULT_TOPOLOGY = "rail-fat-tree"


@dataclass(frozen=True)
class TrainingCheck:
    id: str
    source: str
    gpu: str
    gpus: int
    fabric: str
    model: str
    measured_step_time_s: float
    predicted_step_time_s: float
    feasible: bool
    metric: str
    note: str
    #: "validation" rows are judged; "calibration" rows fit their GPU's sustained_efficiency and "reference" rows
    #: (configuration incomplete in the source, see `excluded_because`) are shown but not counted.
    role: str = "validation"
    excluded_because: str = ""
    #: The prediction interval the model gives for this row (the error model's level).
    predicted_lo_s: float = 0.0
    predicted_hi_s: float = 0.0
    #: Regime keys of the prediction intervals: the GPU's generation, MoE or dense.
    generation: str = ""
    moe: bool = False
    framework: str = ""

    @property
    def error(self) -> float:
        return self.predicted_step_time_s / self.measured_step_time_s - 1.0

    @property
    def log_residual(self) -> float:
        """ln(measured / predicted): what the prediction intervals are fitted on."""
        return math.log(self.measured_step_time_s / self.predicted_step_time_s)

    @property
    def source_family(self) -> str:
        """The publication a row comes from (its id's prefix): the unit of independent sources and of hold-out."""
        return source_family(self.id)


def source_family(row_id: str) -> str:
    """The publication family of a row id: the part before the first dash (megatron-sc21 and megatron-h100 are
    told apart by their second part)."""
    head, _, rest = row_id.partition("-")
    return f"{head}-{rest.split('-')[0]}" if head == "megatron" else head


@dataclass(frozen=True)
class CollectiveCheck:
    id: str
    source: str
    size_bytes: float
    measured_busbw_gbytes_per_s: float
    predicted_busbw_gbytes_per_s: float
    op: str = "all_reduce"
    #: "validation" (judged), "calibration" (a catalog figure was read from the curve) or "reference" (the run
    #: forces an algorithm or protocol; the model predicts NCCL's default choice): the last two shown, not judged.
    role: str = "validation"
    #: The curve's scale-out fabric id ("none" inside one scale-up domain).
    fabric: str = "none"

    @property
    def error(self) -> float:
        return self.predicted_busbw_gbytes_per_s / self.measured_busbw_gbytes_per_s - 1.0


def load_table(name: str) -> dict[str, Any]:
    """A validation table embedded in the package (`training_runs` or `collectives`)."""
    return tomllib.loads(_core.data_files()[f"validation/{name}.toml"])


def _sc21_flops_per_step(m: ModelEntry, global_batch: int, seq_len: int) -> float:
    # Narayanan et al. SC21, eq. 3 (full recomputation counted): 96 B s l h^2 (1 + s / 6h + V / 16 l h).
    b, s, layers, h, v = global_batch, seq_len, m.layers, m.hidden, m.vocab
    return 96.0 * b * s * layers * h * h * (1.0 + s / (6.0 * h) + v / (16.0 * layers * h))


def _row_model(row: dict[str, Any]) -> tuple[Any, str]:
    if "model_dims" in row:
        model = ModelEntry.model_validate(row["model_dims"])
        return model, model.name
    return row["model"], row["model"]


def _overlap(row: dict[str, Any]) -> str:
    if "overlap" in row:
        return str(row["overlap"])
    if "dp_overlap" in row:
        return "dp" if row["dp_overlap"] else "none"
    return DEFAULT_OVERLAP


def _flash(row: dict[str, Any]) -> bool:
    if "flash_attention" in row:
        return bool(row["flash_attention"])
    return bool(row.get("attention", "flash") != "unfused")


#: The attention kernels rows name, by the catalog efficiency they run at: FlashAttention-2-class kernels ("flash":
#: FlashAttention 1/2 before FlashAttention-3, "sdpa-flash": PyTorch SDPA's flash backend) or the GPU's best.
ATTENTION_KERNELS: dict[str, Literal["best", "fa2"]] = {
    "flash": "fa2",
    "sdpa-flash": "fa2",
    "cudnn-fused": "best",
    "flash3": "best",
    "unfused": "best",
}


def evaluate_row(row: dict[str, Any], catalog: Catalog | None = None) -> Any:
    """The model's evaluation of one validation row, with every software setting the row records."""
    model, _ = _row_model(row)
    return evaluate(
        model,
        row["gpu"],
        row["gpus"],
        scale_up=row.get("scale_up"),
        fabric=row["fabric"],
        topology=row.get("topology", DEFAULT_TOPOLOGY),
        tp=row["tp"],
        pp=row["pp"],
        dp=row["dp"],
        cp=row["cp"],
        ep=row["ep"],
        vpp=row["vpp"],
        micro_batch=row["micro_batch"],
        global_batch=row["global_batch"],
        seq_len=row["seq_len"],
        recompute=row["recompute"],
        zero=row["zero"],
        overlap=_overlap(row),
        precision=row["precision"],
        flash_attention=_flash(row),
        uneven_stages=row.get("uneven_stages", False),
        attention_kernel=ATTENTION_KERNELS[row.get("attention", "cudnn-fused")],
        etp=row.get("etp"),
        first_stage_layers=row.get("first_stage_layers"),
        last_stage_layers=row.get("last_stage_layers"),
        embedding_in_split=row.get("embedding_in_split", False),
        loss_in_split=row.get("loss_in_split", False),
        reshard_after_forward=row.get("reshard_after_forward", True),
        grad_reduce_dtype=row.get("grad_reduce_dtype", "fp32"),
        moe_imbalance=row.get("moe_imbalance", 1.0),
        moe_dispatcher=row.get("moe_dispatcher", "alltoall"),
        mtp_layers=row.get("mtp_layers", 0),
        catalog=catalog or builtin_catalog(),
    )


def measured_step_time_s(row: dict[str, Any], r: Any, catalog: Catalog) -> tuple[str, float]:
    """(metric, measured step time) of a row, in the source's own FLOP convention."""
    tokens_per_step = row["global_batch"] * row["seq_len"]
    if "step_time_s" in row:
        return "step_time_s", float(row["step_time_s"])
    if "tokens_per_s_per_gpu" in row:
        return "tokens_per_s_per_gpu", tokens_per_step / (row["tokens_per_s_per_gpu"] * row["gpus"])
    if "tflops_per_gpu" in row:
        if row.get("tflops_formula") == "megatron-sc21":
            model, _ = _row_model(row)
            entry = catalog.model(model) if isinstance(model, str) else model
            flops = _sc21_flops_per_step(entry, row["global_batch"], row["seq_len"])
        else:
            per_token = r.model_flops_per_token
            if row.get("tflops_counts_recompute"):
                per_token *= r.hfu / r.mfu
            flops = per_token * tokens_per_step
        return "tflops_per_gpu", flops / (row["tflops_per_gpu"] * 1e12 * row["gpus"])
    raise ValueError(f"validation row {row['id']}: no measurement")


def training_checks(catalog: Catalog | None = None, rows: list[dict[str, Any]] | None = None) -> list[TrainingCheck]:
    cat = catalog or builtin_catalog()
    out = []
    for row in rows if rows is not None else load_table("training_runs")["run"]:
        _, model_name = _row_model(row)
        r = evaluate_row(row, cat)
        metric, measured = measured_step_time_s(row, r, cat)
        model = cat.model(row["model"]) if "model" in row else ModelEntry.model_validate(row["model_dims"])
        out.append(
            TrainingCheck(
                id=row["id"],
                source=row["source"],
                gpu=row["gpu"],
                gpus=row["gpus"],
                fabric=row["fabric"],
                model=model_name,
                measured_step_time_s=measured,
                predicted_step_time_s=r.step_time_s,
                feasible=r.feasible,
                metric=metric,
                note=row.get("note", ""),
                role=row.get("role", "validation"),
                excluded_because=row.get("excluded_because", ""),
                predicted_lo_s=r.step_time_s_lo,
                predicted_hi_s=r.step_time_s_hi,
                generation=cat.gpu(row["gpu"]).generation,
                moe=model.is_moe,
                framework=row.get("framework", ""),
            )
        )
    return out


def _params(row: dict[str, Any], catalog: Catalog) -> float:
    model, _ = _row_model(row)
    entry = catalog.model(model) if isinstance(model, str) else model
    return float(_core.model_params(entry.core_spec()))


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
    model, _ = _row_model(row)
    entry = catalog.model(model) if isinstance(model, str) else model
    return entry.is_moe


def calibrate(catalog: Catalog | None = None) -> dict[str, tuple[float, list[str]]]:
    """Fit each GPU's `sustained_efficiency` on its calibration rows: the value (to 0.01) at which the
    geometric mean of predicted / measured step time over those rows is 1. Returns {gpu: (value, row ids)}."""
    from dataclasses import replace

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
    from dataclasses import replace

    base = catalog or builtin_catalog()
    gpus = dict(base.gpus)
    for gpu, (value, _) in calibrate(base).items():
        gpus[gpu] = gpus[gpu].model_copy(update={"sustained_efficiency": value})
    return replace(base, gpus=gpus)


_CALIBRATED_SOURCE = re.compile(r'^sustained_efficiency = "Calibrated: [^"]*"$', re.M)


def write_calibration(gpus_toml: str, fitted: dict[str, tuple[float, list[str]]], date: str) -> str:
    """data/gpus.toml's text with each fitted GPU's `sustained_efficiency` and its source line set from
    `fitted` (`calibrate()`); every other line unchanged."""
    out = gpus_toml
    for gpu, (value, rows) in fitted.items():
        start = out.find(f"[{gpu}]\n")
        sources = out.find(f"[{gpu}.sources]\n")
        if start < 0 or sources < 0:
            raise ValueError(f"data/gpus.toml has no [{gpu}] entry with sources")
        end = out.find("\n[", sources + 1)
        end = len(out) if end < 0 else end
        entry = re.sub(
            r"(?m)^sustained_efficiency = [0-9.]+$", f"sustained_efficiency = {value:.2f}", out[start:sources]
        )
        which = "row" if len(rows) == 1 else "rows"
        line = (
            f'sustained_efficiency = "Calibrated: fits the calibration {which} {", ".join(rows)} of '
            f'tests/validation/training_runs.toml (scalefront validate --calibrate); {date}"'
        )
        source = _CALIBRATED_SOURCE.sub(line, out[sources:end])
        out = out[:start] + entry + source + out[end:]
    return out


# ---------------------------------------------------------------------------------------------------------
# Prediction intervals: split-conformal residuals by regime (the core applies them; see uncertainty.rs).

#: The nominal coverage the intervals are fitted and reported for.
INTERVAL_LEVEL = 0.9
#: Residuals a regime needs before it is kept: the smallest n whose 90% two-sided split-conformal bounds are
#: order statistics of the sample, ceil((n + 1) x 0.95) <= n.
MIN_REGIME_ROWS = 19
#: Generations of the catalog, for regimes.
GENERATIONS = ("ampere", "hopper", "blackwell", "cdna3")


@dataclass(frozen=True)
class Regime:
    name: str
    generation: str | None
    moe: bool | None
    rows: tuple[str, ...]
    log_residuals: tuple[float, ...]


def fit_regimes(checks: list[TrainingCheck]) -> list[Regime]:
    """Split-conformal residuals by regime, most specific first: GPU generation x (dense | MoE), then dense or
    MoE alone, then everything; a regime is kept when it has at least MIN_REGIME_ROWS judged rows (the pooled
    one always). The residuals are ln(measured / predicted) of the judged rows."""
    judged = [c for c in checks if c.role == "validation"]
    candidates: list[tuple[str, str | None, bool | None]] = [
        (f"{g} {'moe' if m else 'dense'}", g, m) for m in (True, False) for g in GENERATIONS
    ]
    candidates += [("moe", None, True), ("dense", None, False), ("all", None, None)]
    regimes = []
    for name, generation, moe in candidates:
        members = sorted(
            (c for c in judged if (generation is None or c.generation == generation) and (moe is None or c.moe == moe)),
            key=lambda c: (c.log_residual, c.id),
        )
        if len(members) >= MIN_REGIME_ROWS or (generation is None and moe is None and members):
            regimes.append(
                Regime(name, generation, moe, tuple(c.id for c in members), tuple(c.log_residual for c in members))
            )
    return regimes


def render_error_model(regimes: list[Regime], level: float = INTERVAL_LEVEL) -> str:
    """data/model_error.toml's text for `regimes`."""
    from scalefront import __version__

    lines = [
        "# Prediction intervals of scalefront's step time (and so of time and cost to train): split-conformal",
        "# residuals by regime. Generated by `scalefront validate --calibrate-errors --out data/model_error.toml`;",
        "# do not edit by hand (a test checks this file equals what the current model and validation table give).",
        "#",
        "# How: every judged row of tests/validation/training_runs.toml (role = validation; calibration and reference",
        "# rows excluded) is predicted with the calibrated catalog; its residual is ln(measured / predicted step",
        "# time). For a level 1 - a the core takes, in the first regime that matches a configuration (GPU generation",
        "# and dense/MoE, then dense/MoE, then all) and has at least min_rows residuals, the floor((n + 1) a / 2)-th",
        "# and the ceil((n + 1)(1 - a / 2))-th smallest residual as the interval's ends (Lei et al., JASA 2018,",
        "# Sec. 2.2; Mondrian conformal prediction by regime); beyond what n supports, the extremes. Coverage on rows",
        "# not used to fit: `scalefront validate --coverage` (leave one source family out).",
        f"level = {level}",
        f"min_rows = {MIN_REGIME_ROWS}",
        'method = "split-conformal, ln(measured / predicted) step time, by regime (rust/core/src/uncertainty.rs)"',
        f'model_version = "scalefront {__version__}"',
    ]
    for r in regimes:
        lines += ["", "[[regime]]", f'name = "{r.name}"']
        if r.generation is not None:
            lines.append(f'generation = "{r.generation}"')
        if r.moe is not None:
            lines.append(f"moe = {'true' if r.moe else 'false'}")
        lines.append("rows = [")
        lines += [f'  "{i}",' for i in r.rows]
        lines.append("]")
        lines.append("log_residuals = [")
        lines += [f"  {x:.6f}," for x in r.log_residuals]
        lines.append("]")
    return "\n".join(lines) + "\n"


def fit_error_model(catalog: Catalog | None = None) -> str:
    """`scalefront validate --calibrate-errors`: data/model_error.toml's text, from the judged rows predicted
    with the calibrated catalog (so it needs no rebuild after `--calibrate`)."""
    cat = calibrated_catalog(catalog)
    return render_error_model(fit_regimes(training_checks(cat)))


def with_error_model(catalog: Catalog, text: str) -> Catalog:
    from dataclasses import replace

    from scalefront.inputs.catalog.error_model import load_error_model

    return replace(catalog, errors=load_error_model(text, "model_error.toml"))


@dataclass(frozen=True)
class Coverage:
    level: float
    rows: int
    covered: int
    #: Per source family held out: (rows, covered).
    by_family: dict[str, tuple[int, int]]

    @property
    def coverage(self) -> float:
        return self.covered / self.rows if self.rows else float("nan")


def held_out_coverage(catalog: Catalog | None = None, level: float = INTERVAL_LEVEL) -> Coverage:
    """Coverage of the intervals on rows not used to fit them: for each source family, fit the regimes on the
    other families' judged rows, predict the family's judged rows with them, and count the measured step times
    inside their interval."""
    cat = calibrated_catalog(catalog)
    checks = training_checks(cat)
    rows_by_id = {r["id"]: r for r in load_table("training_runs")["run"]}
    judged = [c for c in checks if c.role == "validation"]
    by_family: dict[str, tuple[int, int]] = {}
    for family in sorted({c.source_family for c in judged}):
        held = [c for c in judged if c.source_family == family]
        regimes = fit_regimes([c for c in checks if c.source_family != family])
        fitted = with_error_model(cat, render_error_model(regimes, level))
        covered = 0
        for c in held:
            r = evaluate_row(rows_by_id[c.id], fitted)
            covered += r.step_time_s_lo <= c.measured_step_time_s <= r.step_time_s_hi
        by_family[family] = (len(held), covered)
    total = sum(n for n, _ in by_family.values())
    return Coverage(level, total, sum(k for _, k in by_family.values()), by_family)


#: nccl-tests' operation names -> the core's.
_CORE_OP = {
    "all_reduce": "all_reduce",
    "all_gather": "all_gather",
    "reduce_scatter": "reduce_scatter",
    "alltoall": "all_to_all",
}


def bus_bandwidth_factor(op: str, ranks: int) -> float:
    """busbw / algbw as nccl-tests reports it (doc/PERFORMANCE.md): 2(n-1)/n for all-reduce, (n-1)/n otherwise."""
    per_rank = (ranks - 1) / ranks
    return 2.0 * per_rank if op == "all_reduce" else per_rank


def collective_checks(catalog: Catalog | None = None) -> list[CollectiveCheck]:
    cat = catalog or builtin_catalog()
    out = []
    for curve in load_table("collectives")["curve"]:
        fabric = cat.fabric(curve["fabric"]) if curve["fabric"] != "none" else cat.fabric("ib-ndr")
        topo = cat.topology(curve.get("topology", DEFAULT_TOPOLOGY))
        sizes = [float(p[0]) for p in curve["points"]]
        op = curve["op"]
        fabric_spec = fabric.core_spec()
        if not curve.get("collnet", False):
            # NCCL runs in-network reduction (CollNet/SHARP) only when asked: NCCL_COLLNET_ENABLE defaults to 0
            # (NVIDIA/nccl docs/userguide env.rst @5067397c); nccl-tests curves say when they set it.
            fabric_spec["in_network_reduction_efficiency"] = 0.0
        times = _core.collective_times(
            {
                "scale_up": cat.scale_up_domain(curve["scale_up"]).core_spec(),
                "fabric": fabric_spec,
                "topology": topo.core_spec(),
                "gpus": curve["gpus"],
                "server_gpus": curve["gpus_per_node"],
                "op": _CORE_OP[op],
                "sizes_bytes": sizes,
            }
        )
        factor = bus_bandwidth_factor(op, curve["gpus"])
        role = curve.get("role", "validation")
        for (size, measured), t in zip(curve["points"], times, strict=True):
            busbw = size / t * factor / 1e9
            out.append(
                CollectiveCheck(
                    curve["id"], curve["source"], float(size), float(measured), busbw, op, role, curve["fabric"]
                )
            )
    return out


def summary(errors: list[float]) -> dict[str, float]:
    """Median and worst absolute percentage error."""
    abs_pct = [abs(e) * 100.0 for e in errors]
    return {"rows": len(abs_pct), "median_ape_pct": statistics.median(abs_pct), "worst_ape_pct": max(abs_pct)}


#: Collective points judged: every size from 64 KiB (issue 11); smaller messages are shown, not judged. The
#: large-message regime (>= 1 GiB) and the >= 64 MiB regime (issue 10) are reported apart.
JUDGED_COLLECTIVE_BYTES = 2**16
LARGE_COLLECTIVE_BYTES = 2**30
MEDIUM_COLLECTIVE_BYTES = 2**26
#: The fidelity targets (issue 11): median and worst absolute percentage error of the judged training rows, and
#: the median of the judged MoE rows.
MEDIAN_TARGET_PCT = 5.0
WORST_TARGET_PCT = 15.0
MOE_MEDIAN_TARGET_PCT = 10.0
#: The test gate: the model may not fall behind what it reaches today (see docs/validation.md for the targets'
#: shortfall and why).
MEDIAN_LIMIT_PCT = 10.0
WORST_LIMIT_PCT = 50.0
MOE_MEDIAN_LIMIT_PCT = 22.0
#: The collectives' gates, at what the model reaches (docs/validation.md): median from 64 KiB (14.9% with NCCL's
#: protocols and tree pipeline fill, rust/core/src/nccl.rs; the issue's target of 10% is not reached); median and
#: worst from 1 GiB (medium sizes on multi-node trees are the known shortfall, see SHORTFALL).
COLLECTIVE_MEDIAN_LIMIT_PCT = 16.0
COLLECTIVE_LARGE_MEDIAN_LIMIT_PCT = 12.0
COLLECTIVE_LARGE_WORST_LIMIT_PCT = 50.0
#: Held-out coverage of the prediction intervals must be within this many points of the nominal level: 2.5 binomial
#: standard errors of a 90% coverage measured on ~100 rows (100 x sqrt(0.9 x 0.1 / 100) = 3.0 points), so a
#: miss beyond it is the intervals' fault, not the sample's.
COVERAGE_TOLERANCE_PCT = 7.5


def judged_training(checks: list[TrainingCheck]) -> list[TrainingCheck]:
    return [c for c in checks if c.role == "validation"]


def judged_collectives(
    checks: list[CollectiveCheck], min_bytes: int = JUDGED_COLLECTIVE_BYTES
) -> list[CollectiveCheck]:
    """Held-out points (not calibration curves) of at least `min_bytes`."""
    return [c for c in checks if c.size_bytes >= min_bytes and c.role == "validation"]


def collective_summary_lines(collectives: list[CollectiveCheck]) -> list[str]:
    """One line per regime: sizes >= 64 KiB, >= 64 MiB, >= 1 GiB; and per operation from 64 KiB."""
    lines = []
    for label, floor in (
        ("64 KiB", JUDGED_COLLECTIVE_BYTES),
        ("64 MiB", MEDIUM_COLLECTIVE_BYTES),
        ("1 GiB", LARGE_COLLECTIVE_BYTES),
    ):
        judged = judged_collectives(collectives, floor)
        s = summary([c.error for c in judged])
        curves = len({c.id for c in judged})
        lines.append(
            f"**Collectives, held-out curves, sizes >= {label}**: {s['rows']} points on {curves} curves, median "
            f"|error| {s['median_ape_pct']:.1f}%, worst {s['worst_ape_pct']:.1f}%."
        )
    judged_all = judged_collectives(collectives)
    for op in sorted({c.op for c in collectives}):
        lines += _group_line(f"- {op} (>= 64 KiB): {{points}} points, ", [c for c in judged_all if c.op == op])
    for fabric in sorted({c.fabric for c in collectives}):
        judged = [c for c in judged_all if c.fabric == fabric]
        lines += _group_line(f"- fabric {fabric} (>= 64 KiB): {{points}} points on {{curves}} curves, ", judged)
    return lines


def _group_line(head: str, judged: list[CollectiveCheck]) -> list[str]:
    """`head` (with {points} and {curves} filled in) and the group's median and worst |error|; nothing if empty."""
    if not judged:
        return []
    s = summary([c.error for c in judged])
    head = head.format(points=s["rows"], curves=len({c.id for c in judged}))
    return [f"{head}median {s['median_ape_pct']:.1f}%, worst {s['worst_ape_pct']:.1f}%."]


def collective_curve_lines(collectives: list[CollectiveCheck], markdown: bool) -> list[str]:
    """Median and worst |error| per curve at sizes >= 64 KiB (calibration and reference curves marked)."""
    lines = (
        ["| curve | fabric | role | points >= 64 KiB | median |error| | worst |error| |", "|---|---|---|---|---|---|"]
        if markdown
        else [f"{'curve':48} {'fabric':10} {'role':11} {'points':>6} {'median':>7} {'worst':>7}"]
    )
    for cid in dict.fromkeys(c.id for c in collectives):
        points = [c for c in collectives if c.id == cid and c.size_bytes >= JUDGED_COLLECTIVE_BYTES]
        if not points:
            continue
        s = summary([c.error for c in points])
        c = points[0]
        if markdown:
            lines.append(
                f"| {cid} | {c.fabric} | {c.role} | {s['rows']} | {s['median_ape_pct']:.1f}% | "
                f"{s['worst_ape_pct']:.1f}% |"
            )
        else:
            lines.append(
                f"{cid[:48]:48} {c.fabric:10} {c.role:11} {s['rows']:6d} {s['median_ape_pct']:6.1f}% "
                f"{s['worst_ape_pct']:6.1f}%"
            )
    return lines


@dataclass(frozen=True)
class TableFacts:
    """What the training table holds: rows, independent sources, MoE and Blackwell rows, judged rows."""

    rows: int
    sources: int
    moe: int
    blackwell: int
    judged: int
    calibration: int
    reference: int


def table_facts(training: list[TrainingCheck]) -> TableFacts:
    return TableFacts(
        rows=len(training),
        sources=len({c.source_family for c in training}),
        moe=sum(c.moe for c in training),
        blackwell=sum(c.generation == "blackwell" for c in training),
        judged=sum(c.role == "validation" for c in training),
        calibration=sum(c.role == "calibration" for c in training),
        reference=sum(c.role == "reference" for c in training),
    )


#: Why the judged rows miss the targets (docs/validation.md); the figures themselves are computed above it.
SHORTFALL = """## Where the model misses the targets, and why

The targets (median 5%, worst 15%, MoE median 10%) are not reached; the summary above gives by how much. The
misses are not one bias that a constant could remove: per source family the median signed error is within a few
percent for most families (Megatron-LM SC21, MegaScale, NeMo, dgxc, Megatron-Bridge, torchtitan), while the
spread inside families is wide. What the model does not describe, by the rows that show it:

- **Software efficiency differs by framework and release, and one `sustained_efficiency` per GPU cannot follow
  it.** The same 530B model on the same A100s runs at 163 TFLOP/s per GPU in Megatron-LM (SC21) and 113-126 in
  MT-NLG's DeepSpeed pipeline (mtnlg rows, too fast by about 15%); Megatron-Bridge's own performance summary
  gives DeepSeek-V3 on 256 GB200 with one layout (TP 1, PP 4, VP 4, EP 64, MXFP8) anywhere from 3,955 to 5,008
  tokens/s/GPU across its container releases (stored copies of docs/performance-summary*.md), a 27% spread with
  nothing in the configuration to tell them apart. A per-framework efficiency would fit these, but it would be a
  per-source constant, which the project rules out; the calibration stays one figure per GPU, fitted on rows
  chosen by the rule in the table's header.
- **MoE runs lose time in kernels the model does not itemise**: routing, permutation, grouped GEMMs of small
  experts, token-drop padding and the framework's MoE bookkeeping. Small-expert models (Qwen3-30B-A3B, Mixtral
  on Blackwell, DeepSeek-V3 with 2,048-wide experts) come out 10-35% too fast; where expert-parallel traffic
  dominates and the dispatcher is not printed (DeepSeek-V3 on H100 in Megatron-Bridge 25.09), too slow.
- **Runs whose settings the source leaves out** carry stated assumptions (recomputation, micro-batch, TP
  communication overlap in NVIDIA's recipes, the DeepSeek-V3 stage split): each is in the row's `note`.
- **Rows excluded from judgement** (reference) say why: power-limited or unstated GPUs (pytorch/ao B200 and H100
  tables), sources that contradict themselves (torchtitan GB200 Llama 4), whole-run averages (DeepSeek-V3 report),
  attention the model does not describe (GPT-OSS's sliding windows with sinks) and inferred model dimensions
  (MegaScale-MoE).

The prediction intervals carry this spread honestly: they are fitted on these residuals, wider for MoE than for
dense runs, and their coverage is checked on source families held out of the fit.

**Collectives.** Judged at every size from 64 KiB on the held-out curves (calibration curves and runs that force an
algorithm or protocol are shown, not judged). NCCL's cost model (rust/core/src/nccl.rs, NCCL 2.30.7's tuning
tables): rings and trees each with LL, LL128 and Simple, their bandwidth shares and caps, per-step latency per
protocol (the fabrics' LL/LL128 savings fitted on named calibration curves), channels opened by size, chunk loops,
and the trees' (and NVLSTree's) pipeline fill over their network hops; NVLSTree pays NCCL's 20.9 us per network
level and gets its 2-node bandwidth credit; in-network reduction only where a run enables it (NCCL_COLLNET_ENABLE
is off by default). What remains: medium messages (16-256 MiB) on 8 to 32 nodes come out too fast (EFA +70% to
+125% at 32-128 MiB, IB NDR 8 nodes +87% at 16 MiB): the chain through the GPUs of each node, which NCCL's trees
pipeline through before the network, is not itemised (charging it at the network's channel rate made the other
curves worse); the GB200 RoCE rack-pair curve (NVL72 domains split over 2 racks, 32 trays) is far off both ways
(+270% at 64 KiB: its measured ~200 us floor is not explained by any per-step latency in the catalog); the A100
single-process curve (-g 8, one process driving 8 GPUs) is 30-45% too fast below 16 MiB with NCCL's NVLink LL
latencies.
"""


def _training_summary_lines(training: list[TrainingCheck], coverage: Coverage | None) -> list[str]:
    judged = judged_training(training)
    t_sum = summary([c.error for c in judged])
    moe = summary([c.error for c in judged if c.moe])
    facts = table_facts(training)
    lines = [
        f"**Training runs**: {facts.rows} rows from {facts.sources} source families ({facts.moe} MoE, "
        f"{facts.blackwell} on Blackwell GPUs); {facts.calibration} calibrate, {facts.reference} are shown as "
        f"reference, {facts.judged} are judged.",
        "",
        f"**Judged rows**: median absolute error {t_sum['median_ape_pct']:.1f}%, worst {t_sum['worst_ape_pct']:.1f}% "
        f"(target: median {MEDIAN_TARGET_PCT:.0f}%, worst {WORST_TARGET_PCT:.0f}%; test gate: "
        f"{MEDIAN_LIMIT_PCT:.0f}% / {WORST_LIMIT_PCT:.0f}%); {sum(abs(c.error) <= 0.15 for c in judged)} of "
        f"{len(judged)} within 15%. MoE rows ({moe['rows']}): median {moe['median_ape_pct']:.1f}%, worst "
        f"{moe['worst_ape_pct']:.1f}% (target: median {MOE_MEDIAN_TARGET_PCT:.0f}%).",
    ]
    if coverage is not None:
        lines += [
            "",
            f"**Prediction intervals** ({coverage.level:.0%}, data/model_error.toml): held-out coverage "
            f"{coverage.coverage:.1%} ({coverage.covered} of {coverage.rows} judged rows inside the interval fitted "
            f"without their source family; nominal {coverage.level:.0%}, tolerance {COVERAGE_TOLERANCE_PCT:g} "
            "points).",
        ]
    return lines


def render(
    training: list[TrainingCheck],
    collectives: list[CollectiveCheck],
    markdown: bool = False,
    coverage: Coverage | None = None,
) -> str:
    """The tables and summaries, as plain text or Markdown."""
    lines: list[str] = []
    if markdown:
        lines += [
            "# Validation: scalefront against published measurements",
            "",
            "Generated by `scalefront validate --markdown` from `tests/validation/*.toml`; every row cites its "
            "source and the software settings it used there. Error = predicted / measured step time - 1 "
            "(positive: the model is too slow); for collectives, predicted / measured bus bandwidth - 1. "
            "`calibration` rows fit their GPU's `sustained_efficiency` (chosen by the rule in the table's header) "
            "and are not counted; `reference` rows lack part of their configuration in the source, or describe "
            "something the model does not, and are not counted either (the reason is in the table). The interval "
            "is the model's 90% prediction interval (data/model_error.toml).",
            "",
            *_training_summary_lines(training, coverage),
            "",
            *collective_summary_lines(collectives),
            "",
            SHORTFALL,
            "| row | role | GPU | GPUs | model | software | measured step s | predicted step s | 90% interval | "
            "error |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for c in training:
            role = c.role if c.role != "reference" else f"reference: {c.excluded_because}"
            inside = "" if c.predicted_lo_s <= c.measured_step_time_s <= c.predicted_hi_s else " (outside)"
            lines.append(
                f"| {c.id} | {role} | {c.gpu} | {c.gpus} | {c.model} | {c.framework} | "
                f"{c.measured_step_time_s:.3f} | {c.predicted_step_time_s:.3f} | "
                f"{c.predicted_lo_s:.3f}-{c.predicted_hi_s:.3f}{inside} | {c.error:+.1%} |"
            )
        lines += ["", *collective_curve_lines(collectives, markdown=True)]
        lines += [
            "",
            "| curve | op | bytes | measured busbw GB/s | predicted GB/s | error | judged |",
            "|---|---|---|---|---|---|---|",
        ]
        for k in collectives:
            judged = "yes" if judged_collectives([k]) else (k.role if k.role != "validation" else "no")
            lines.append(
                f"| {k.id} | {k.op} | {k.size_bytes:,.0f} | {k.measured_busbw_gbytes_per_s:.2f} | "
                f"{k.predicted_busbw_gbytes_per_s:.2f} | {k.error:+.1%} | {judged} |"
            )
        return "\n".join(lines) + "\n"
    lines.append(f"{'row':44} {'role':11} {'gpu':14} {'gpus':>6} {'measured s':>11} {'predicted s':>11} {'error':>8}")
    for c in training:
        lines.append(
            f"{c.id[:44]:44} {c.role:11} {c.gpu:14} {c.gpus:6d} {c.measured_step_time_s:11.3f} "
            f"{c.predicted_step_time_s:11.3f} {c.error:+8.1%}"
        )
    lines.append("")
    lines.append(f"{'collective':36} {'bytes':>14} {'measured GB/s':>13} {'predicted':>10} {'error':>8}")
    for k in collectives:
        mark = "" if judged_collectives([k]) else (f"  ({k.role})" if k.role != "validation" else "  (not judged)")
        lines.append(
            f"{k.id[:36]:36} {k.size_bytes:14,.0f} {k.measured_busbw_gbytes_per_s:13.2f} "
            f"{k.predicted_busbw_gbytes_per_s:10.2f} {k.error:+8.1%}{mark}"
        )
    lines += ["", *collective_curve_lines(collectives, markdown=False)]
    lines += ["", *(line.replace("**", "") for line in _training_summary_lines(training, coverage) if line)]
    lines += [line.replace("**", "") for line in collective_summary_lines(collectives)]
    return "\n".join(lines)
