"""Training runs: each published row converted to a *measured step time* in the source's own FLOP convention and
compared with the predicted step time of the same configuration (see `scalefront.fidelity.validation`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from scalefront._enums import AttentionKernel
from scalefront._inputs import Inputs
from scalefront.fidelity.validation.tables import load_table, source_family
from scalefront.inputs.catalog.entries import ModelEntry
from scalefront.inputs.catalog.loader import Catalog, builtin_catalog
from scalefront.inputs.model import Evaluation, evaluate_inputs
from scalefront.inputs.params import taking

__all__ = [
    "ATTENTION_KERNELS",
    "DEFAULT_OVERLAP",
    "DEFAULT_TOPOLOGY",
    "TrainingCheck",
    "evaluate_row",
    "judged_training",
    "measured_step_time_s",
    "row_model",
    "row_model_entry",
    "training_checks",
]

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
    #: "validation" rows are judged; "calibration" rows fit their framework's terms and "reference" rows
    #: (configuration incomplete in the source, see `excluded_because`) are shown but not counted.
    role: str = "validation"
    excluded_because: str = ""
    #: The prediction interval the model gives for this row (the error model's level).
    predicted_lo_s: float = 0.0
    predicted_hi_s: float = 0.0
    #: Regime keys of the prediction intervals: the GPU's generation, MoE or dense.
    generation: str = ""
    moe: bool = False
    #: The framework id whose terms the row is predicted with (data/frameworks.toml), and the software the source
    #: names, as it names it.
    framework: str = ""
    software: str = ""
    #: The model's memory estimate per GPU and what is left of the GPU's memory beside it (negative: the model says
    #: the configuration does not fit, though it ran).
    memory_per_gpu_gb: float = 0.0
    memory_margin_gb: float = 0.0

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


def _sc21_flops_per_step(m: ModelEntry, global_batch: int, seq_len: int) -> float:
    # Narayanan et al. SC21, eq. 3 (full recomputation counted): 96 B s l h^2 (1 + s / 6h + V / 16 l h).
    b, s, layers, h, v = global_batch, seq_len, m.layers, m.hidden, m.vocab
    return 96.0 * b * s * layers * h * h * (1.0 + s / (6.0 * h) + v / (16.0 * layers * h))


def row_model(row: dict[str, Any]) -> tuple[Any, str]:
    """A row's model (a catalog id, or a ModelEntry from its `model_dims`) and its name."""
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
ATTENTION_KERNELS: dict[str, AttentionKernel] = {
    "flash": "fa2",
    "sdpa-flash": "fa2",
    "cudnn-fused": "best",
    "flash3": "best",
    "unfused": "best",
}


def row_model_entry(row: dict[str, Any], catalog: Catalog) -> ModelEntry:
    """A row's model as a catalog entry: the catalog's for a model id, else the one its `model_dims` describe."""
    return catalog.model(row["model"]) if "model" in row else ModelEntry.model_validate(row["model_dims"])


def evaluate_row(row: dict[str, Any], catalog: Catalog | None = None) -> Evaluation:
    """The model's evaluation of one validation row: every input the row gives by its name (a missing one takes
    `evaluate`'s default), with the model, overlap, attention and topology as the row records them."""
    model, _ = row_model(row)
    given = {p.name: row[p.name] for p in taking("api") if p.name in row}
    recorded = {
        "model": model,
        "topology": row.get("topology", DEFAULT_TOPOLOGY),
        "overlap": _overlap(row),
        "flash_attention": _flash(row),
        "attention_kernel": ATTENTION_KERNELS[row.get("attention", "cudnn-fused")],
    }
    return evaluate_inputs(Inputs(**{**given, **recorded}), catalog or builtin_catalog())


def measured_step_time_s(row: dict[str, Any], r: Any, catalog: Catalog) -> tuple[str, float]:
    """(metric, measured step time) of a row, in the source's own FLOP convention."""
    tokens_per_step = row["global_batch"] * row["seq_len"]
    if "step_time_s" in row:
        return "step_time_s", float(row["step_time_s"])
    if "tokens_per_s_per_gpu" in row:
        return "tokens_per_s_per_gpu", tokens_per_step / (row["tokens_per_s_per_gpu"] * row["gpus"])
    if "tflops_per_gpu" in row:
        if row.get("tflops_formula") == "megatron-sc21":
            model, _ = row_model(row)
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
        _, model_name = row_model(row)
        r = evaluate_row(row, cat)
        metric, measured = measured_step_time_s(row, r, cat)
        model = row_model_entry(row, cat)
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
                software=row.get("software", ""),
                memory_per_gpu_gb=r.memory_per_gpu_gb,
                memory_margin_gb=r.memory_margin_gb,
            )
        )
    return out


def judged_training(checks: list[TrainingCheck]) -> list[TrainingCheck]:
    return [c for c in checks if c.role == "validation"]
