"""``scalefront.evaluate``: one training configuration in, a typed and explained answer out.

This module names things from the catalogs, fills in defaults and calls the Rust core, which owns every formula
and every unit conversion of a result. The result type, :class:`~scalefront.Evaluation`, is generated from the
core's schema (see :mod:`scalefront.schema`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from scalefront._core import evaluate as core_evaluate
from scalefront._core import schema as core_schema
from scalefront._evaluation import Breakdown, Evaluation, HiddenComm, Memory
from scalefront.errors import UsageError
from scalefront.inputs.catalog.entries import FabricEntry, GpuEntry, ModelEntry, ScaleUpEntry, TopologyEntry
from scalefront.inputs.catalog.loader import Catalog, builtin_catalog, error_model_spec, load_model_file
from scalefront.inputs.catalog.prices import apply_price_overrides

__all__ = [
    "DEFAULT_BATCH_TOKENS",
    "Breakdown",
    "Evaluation",
    "HiddenComm",
    "Memory",
    "Overlap",
    "evaluate",
    "parse_overlap",
    "positive_int",
]

#: Default global batch: about 4M tokens (Llama 3 pre-training started at 4M, GPT-3 175B used 3.2M).
DEFAULT_BATCH_TOKENS = 2**22

#: The input columns of an evaluation, in the core's schema order (scalefront.schema reads the same).
_INPUT_COLUMNS: list[str] = [str(i["name"]) for i in core_schema()["inputs"]]


@dataclass(frozen=True)
class Overlap:
    """Fractions (0..1) of each kind of communication allowed to hide behind compute."""

    dp: float = 0.0
    tp: float = 0.0
    pp: float = 0.0
    ep: float = 0.0

    def label(self) -> str:
        """The mode's name when it is one (none, dp, full), else ``dp=..,tp=..,pp=..,ep=..``."""
        for name, mode in OVERLAP_MODES.items():
            if mode == self:
                return name
        return ",".join(f"{k}={v:g}" for k, v in vars(self).items())

    def core_spec(self) -> dict[str, float]:
        return {"dp": self.dp, "tp": self.tp, "pp": self.pp, "ep": self.ep}


#: Named overlap modes: ``none``; ``dp`` = Megatron's overlapped gradient reduce-scatter and parameter
#: all-gather (overlap_grad_reduce, overlap_param_gather); ``full`` = also TP comm/GEMM overlap (Transformer
#: Engine userbuffers), overlapped pipeline sends and expert all-to-all hidden by micro-batch interleaving.
OVERLAP_MODES = {
    "none": Overlap(),
    "dp": Overlap(dp=1.0),
    "full": Overlap(dp=1.0, tp=1.0, pp=1.0, ep=1.0),
}


def parse_overlap(value: str | float | Overlap) -> Overlap:
    """An overlap mode name (none, dp, full), one fraction for all kinds, or ``dp=0.9,tp=0.5,...``."""
    if isinstance(value, Overlap):
        return value
    if isinstance(value, (int, float)):
        return _fraction_overlap({k: float(value) for k in ("dp", "tp", "pp", "ep")}, value)
    text = str(value).strip()
    if text in OVERLAP_MODES:
        return OVERLAP_MODES[text]
    try:
        return _fraction_overlap({k: float(text) for k in ("dp", "tp", "pp", "ep")}, text)
    except ValueError:
        pass
    parts: dict[str, float] = {}
    for item in text.split(","):
        key, sep, num = item.partition("=")
        key = key.strip()
        if not sep or key not in ("dp", "tp", "pp", "ep"):
            raise UsageError(
                f"overlap {text!r}: expected one of {', '.join(OVERLAP_MODES)}, a fraction in [0, 1], "
                "or kind=fraction pairs such as dp=0.9,tp=0.5 (kinds: dp, tp, pp, ep)"
            )
        try:
            parts[key] = float(num)
        except ValueError:
            raise UsageError(f"overlap {key}={num.strip()!r}: expected a fraction in [0, 1]") from None
    return _fraction_overlap(parts, text)


def _fraction_overlap(parts: dict[str, float], shown: object) -> Overlap:
    for key, v in parts.items():
        if not (0.0 <= v <= 1.0) or math.isnan(v):
            raise UsageError(f"overlap {key}={v} (from {shown!r}): expected a fraction in [0, 1]")
    return Overlap(**parts)


def _resolve_model(model: str | Path | ModelEntry, catalog: Catalog) -> tuple[str, ModelEntry]:
    if isinstance(model, ModelEntry):
        return model.name, model
    text = str(model)
    if text.endswith(".toml") or Path(text).suffix == ".toml":
        entry = load_model_file(text)
        return text, entry
    return text, catalog.model(text)


def _default_global_batch(seq_len: int, dp: int, micro_batch: int, pp: int, vpp: int) -> int:
    """About DEFAULT_BATCH_TOKENS, rounded up to a multiple of dp x micro-batch (x pp when interleaved)."""
    unit = dp * micro_batch * (pp if vpp > 1 else 1)
    sequences = math.ceil(DEFAULT_BATCH_TOKENS / seq_len)
    return max(unit, math.ceil(sequences / unit) * unit)


#: Largest count the core accepts (its counts are 32-bit).
MAX_COUNT = 2**31


def positive_int(name: str, value: Any) -> int:
    """`value` when it is a whole number from 1 to MAX_COUNT, else UsageError naming the argument `name`."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_COUNT:
        raise UsageError(f"{name}={value!r}: expected a positive integer up to {MAX_COUNT:,}")
    return value


def _choice(name: str, value: Any, options: tuple[str, ...]) -> str:
    if value not in options:
        raise UsageError(f"{name}={value!r}: expected one of {', '.join(options)}")
    return str(value)


@dataclass(frozen=True)
class _Cluster:
    """The catalog entries of one cluster design, resolved and checked against each other."""

    gpu: GpuEntry
    scale_up_name: str
    scale_up: ScaleUpEntry
    fabric: FabricEntry
    topology: TopologyEntry
    oversubscription: float


def _resolve_cluster(
    cat: Catalog, gpu: str, scale_up: str | None, fabric: str, topology: str, oversubscription: float | None
) -> _Cluster:
    gpu_entry = cat.gpu(gpu)
    scale_up_name = scale_up or gpu_entry.default_scale_up
    su = cat.scale_up_domain(scale_up_name)
    cat.check_scale_up(gpu, scale_up_name)
    fab = cat.fabric(fabric)
    topo = cat.topology(topology)
    over = topo.oversubscription if oversubscription is None else oversubscription
    return _Cluster(gpu_entry, scale_up_name, su, fab, topo, float(over))


def _check_choices(zero: Any, recompute: Any, precision: Any, cost_mode: Any) -> None:
    if isinstance(zero, bool) or not isinstance(zero, int) or zero not in (0, 1, 2, 3):
        raise UsageError(f"zero={zero!r}: expected one of 0, 1, 2, 3")
    _choice("recompute", recompute, ("none", "selective", "full"))
    _choice("precision", precision, ("bf16", "fp8"))
    _choice("cost_mode", cost_mode, ("rent", "own"))


def _data_parallel(gpus: int, tp: int, pp: int, cp: int, dp: int | None) -> int:
    """`dp`, or gpus / (tp x pp x cp) when not given."""
    if dp is None:
        if gpus % (tp * pp * cp):
            raise UsageError(f"tp x pp x cp = {tp} x {pp} x {cp} = {tp * pp * cp} does not divide gpus = {gpus}")
        dp = gpus // (tp * pp * cp)
    return positive_int("dp", dp)


def _check_tokens(tokens: Any) -> float:
    """A positive finite number here; the core checks that it is a whole number of at least one sequence."""
    if isinstance(tokens, bool) or not isinstance(tokens, int | float) or not (math.isfinite(tokens) and tokens > 0):
        raise UsageError(f"tokens={tokens!r}: expected a positive number")
    return float(tokens)


def evaluate(
    model: str | Path | ModelEntry = "llama3-70b",
    gpu: str = "h100-sxm",
    gpus: int = 1024,
    *,
    scale_up: str | None = None,
    fabric: str = "ib-ndr",
    topology: str = "rail-fat-tree",
    oversubscription: float | None = None,
    tp: int = 8,
    pp: int = 1,
    dp: int | None = None,
    cp: int = 1,
    ep: int = 1,
    vpp: int = 1,
    micro_batch: int = 1,
    global_batch: int | None = None,
    seq_len: int | None = None,
    recompute: Literal["none", "selective", "full"] = "selective",
    zero: int = 1,
    sequence_parallel: bool = True,
    overlap: str | float | Overlap = "dp",
    precision: Literal["bf16", "fp8"] = "bf16",
    flash_attention: bool = True,
    attention_kernel: Literal["best", "fa2"] = "best",
    tokens: float = 1e12,
    cost_mode: Literal["rent", "own"] = "rent",
    prices: dict[str, float] | None = None,
    reliability: str = "default",
    uneven_stages: bool = False,
    etp: int | None = None,
    first_stage_layers: int | None = None,
    last_stage_layers: int | None = None,
    embedding_in_split: bool = False,
    loss_in_split: bool = False,
    reshard_after_forward: bool = True,
    grad_reduce_dtype: Literal["fp32", "bf16"] = "fp32",
    moe_imbalance: float = 1.0,
    moe_dispatcher: Literal["alltoall", "flex", "allgather"] = "alltoall",
    mtp_layers: int = 0,
    interval: float | None = None,
    catalog: Catalog | None = None,
) -> Evaluation:
    """Evaluate one training configuration.

    Names (``model``, ``gpu``, ``scale_up``, ``fabric``, ``topology``) are catalog ids; ``model`` may also be a
    path to a model TOML file. ``scale_up`` defaults to the GPU's own domain (a domain the GPU cannot join, such
    as an NVLink 5 rack for an NVLink 4 GPU, is refused), ``oversubscription`` to the topology's, ``dp`` to
    gpus / (tp x pp x cp), ``seq_len`` to the model's, and ``global_batch`` to about 4M tokens rounded to a
    multiple of dp x micro_batch. ``tokens`` is a whole number of at least one sequence. ``flash_attention=False``
    models attention that materialises its scores (Megatron-LM before 2022); ``attention_kernel="fa2"`` runs
    FlashAttention-2-class kernels (PyTorch SDPA's flash backend) instead of the GPU's best (FlashAttention-3,
    cuDNN). ``prices`` overrides any catalog price by field name (``rent_usd_per_gpu_hour``, ``switch_usd``,
    ``usd_per_kwh``, ...). ``reliability`` names a failure profile of data/reliability.toml (``default``: Llama 3's
    measured rates; ``perfect``: no failures); time and cost to train are divided by the resulting goodput.

    Pipeline stages: an interleaved layout whose layers do not split evenly over pp x vpp virtual stages is
    refused unless the run's split is given as Megatron-Core has it: ``first_stage_layers`` /
    ``last_stage_layers`` (uneven first and last stages, the rest even), or ``embedding_in_split`` /
    ``loss_in_split`` (the embedding and the loss counted as layers); ``uneven_stages=True`` accepts it without
    the exact split (the busiest stage holds ceil(layers / pp)).

    Software settings: ``etp`` the expert tensor-parallel degree (default: ``tp``; with MoE parallel folding
    ep x etp divides tp x dp x cp); with ``zero=3``, ``reshard_after_forward`` (FSDP's; False = keep gathered
    parameters until the backward, as Llama 3 did); ``grad_reduce_dtype`` (Megatron's default fp32 main
    gradients, or bf16); for MoE models ``moe_imbalance`` (busiest expert rank's tokens / mean),
    ``moe_dispatcher`` (alltoall, flex = DeepEP, allgather) and ``mtp_layers`` (multi-token prediction modules).
    ``interval`` is the coverage of the ``_lo``/``_hi`` prediction intervals (default: data/model_error.toml's
    level, 0.9).

    Raises :class:`~scalefront.errors.CatalogError` for an unknown name or a bad file,
    :class:`~scalefront.errors.UsageError` for a bad argument and
    :class:`~scalefront.errors.ConfigurationError` for an impossible configuration.
    """
    cat = catalog or builtin_catalog()
    model_name, m = _resolve_model(model, cat)
    cluster = _resolve_cluster(cat, gpu, scale_up, fabric, topology, oversubscription)
    gpus = positive_int("gpus", gpus)
    for name, value in (("tp", tp), ("pp", pp), ("cp", cp), ("ep", ep), ("vpp", vpp), ("micro_batch", micro_batch)):
        positive_int(name, value)
    _check_choices(zero, recompute, precision, cost_mode)
    _check_software(grad_reduce_dtype, attention_kernel, moe_dispatcher, moe_imbalance, mtp_layers, interval)
    etp = tp if etp is None else positive_int("etp", etp)
    for name, layers in (("first_stage_layers", first_stage_layers), ("last_stage_layers", last_stage_layers)):
        if layers is not None and (
            isinstance(layers, bool) or not isinstance(layers, int) or not 0 <= layers <= MAX_COUNT
        ):
            raise UsageError(f"{name}={layers!r}: expected a whole number of layers >= 0")
    dp = _data_parallel(gpus, tp, pp, cp, dp)
    seq_len = positive_int("seq_len", seq_len if seq_len is not None else m.seq_len)
    if global_batch is None:
        global_batch = _default_global_batch(seq_len, dp, micro_batch, pp, vpp)
    global_batch = positive_int("global_batch", global_batch)
    tokens = _check_tokens(tokens)
    ov = parse_overlap(overlap)
    price = cat.prices(gpu, fabric, cluster.scale_up_name, cost_mode)
    apply_price_overrides(price, prices or {})
    parallelism = {
        "tp": tp,
        "pp": pp,
        "dp": dp,
        "cp": cp,
        "ep": ep,
        "vpp": vpp,
        "micro_batch": micro_batch,
        "zero_stage": zero,
        "recompute": recompute,
        "sequence_parallel": bool(sequence_parallel),
        "uneven_stages": bool(uneven_stages),
        "etp": etp,
        "first_stage_layers": first_stage_layers,
        "last_stage_layers": last_stage_layers,
        "embedding_in_split": bool(embedding_in_split),
        "loss_in_split": bool(loss_in_split),
        "reshard_after_forward": bool(reshard_after_forward),
    }
    training = {
        "global_batch": global_batch,
        "seq_len": seq_len,
        "tokens": tokens,
        "precision": precision,
        "flash_attention": bool(flash_attention),
        "attention_kernel": attention_kernel,
        "grad_reduce_dtype": grad_reduce_dtype,
        "moe_imbalance": float(moe_imbalance),
        "moe_dispatcher": moe_dispatcher,
        "mtp_layers": mtp_layers,
    }
    errors = error_model_spec(cat, interval)
    config = {
        "model": m.core_spec(),
        "gpu": cluster.gpu.core_spec(),
        "scale_up": cluster.scale_up.core_spec(),
        "fabric": cluster.fabric.core_spec(),
        "topology": cluster.topology.core_spec(cluster.oversubscription),
        "prices": price,
        "gpus": gpus,
        "parallelism": parallelism,
        "training": training,
        "overlap": ov.core_spec(),
        "reliability": cat.reliability_profile(reliability).core_spec(),
        "errors": errors,
    }
    values: dict[str, Any] = {
        "model": model_name,
        "gpu": gpu,
        "gpus": gpus,
        "scale_up": cluster.scale_up_name,
        "fabric": fabric,
        "topology": topology,
        "oversubscription": cluster.oversubscription,
        **{k: v for k, v in parallelism.items() if k not in ("zero_stage", "uneven_stages")},
        "zero": zero,
        **training,
        "overlap": ov.label(),
        "cost_mode": cost_mode,
        "interval": float(errors["level"]),
    }
    inputs = {name: values[name] for name in _INPUT_COLUMNS}
    return Evaluation(**inputs, **core_evaluate(config))


def _check_software(
    grad_reduce_dtype: str,
    attention_kernel: str,
    moe_dispatcher: str,
    moe_imbalance: float,
    mtp_layers: int,
    interval: float | None,
) -> None:
    """The software settings' names and ranges (the core checks the same; this names the argument)."""
    _choice("grad_reduce_dtype", grad_reduce_dtype, ("fp32", "bf16"))
    _choice("attention_kernel", attention_kernel, ("best", "fa2"))
    _choice("moe_dispatcher", moe_dispatcher, ("alltoall", "flex", "allgather"))
    if isinstance(mtp_layers, bool) or not isinstance(mtp_layers, int) or not 0 <= mtp_layers <= MAX_COUNT:
        raise UsageError(f"mtp_layers={mtp_layers!r}: expected a whole number >= 0")
    if (
        isinstance(moe_imbalance, bool)
        or not isinstance(moe_imbalance, (int, float))
        or not (math.isfinite(moe_imbalance) and moe_imbalance >= 1)
    ):
        raise UsageError(f"moe_imbalance={moe_imbalance!r}: expected a number >= 1 (busiest rank's tokens / mean)")
    if interval is not None and (
        isinstance(interval, bool) or not isinstance(interval, (int, float)) or not 0 < interval < 1
    ):
        raise UsageError(f"interval={interval!r}: expected a coverage level strictly between 0 and 1, e.g. 0.9")
