"""``scalefront.evaluate``: one training configuration in, a typed and explained answer out.

This module names things from the catalogs, fills in defaults, converts catalog units (TFLOP/s, GB, Gb/s,
µs) to SI and calls the Rust core, which owns every formula.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Literal

from scalefront import _core
from scalefront.catalog import (
    Catalog,
    FabricEntry,
    GpuEntry,
    ModelEntry,
    ReliabilityEntry,
    ScaleUpEntry,
    load_model_file,
)
from scalefront.errors import UsageError

__all__ = [
    "DEFAULT_BATCH_TOKENS",
    "Breakdown",
    "Evaluation",
    "HiddenComm",
    "Memory",
    "Overlap",
    "builtin_catalog",
    "evaluate",
    "parse_overlap",
]

#: Default global batch: about 4M tokens (Llama 3 pre-training started at 4M, GPT-3 175B used 3.2M).
DEFAULT_BATCH_TOKENS = 2**22

_BUILTIN: Catalog | None = None


def builtin_catalog() -> Catalog:
    """The shipped catalogs, parsed once per process."""
    global _BUILTIN
    if _BUILTIN is None:
        _BUILTIN = Catalog.builtin()
    return _BUILTIN


@dataclass(frozen=True)
class Overlap:
    """Fractions (0..1) of each kind of communication allowed to hide behind compute."""

    dp: float = 0.0
    tp: float = 0.0
    pp: float = 0.0
    ep: float = 0.0


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


@dataclass(frozen=True)
class Breakdown:
    """Step time by component, seconds; the components add up to the step time. Communication is the exposed
    part only (see :class:`HiddenComm` for what hid behind compute)."""

    compute_s: float
    recompute_s: float
    tp_comm_s: float
    pp_comm_s: float
    dp_comm_s: float
    cp_comm_s: float
    ep_comm_s: float
    bubble_s: float
    optimizer_s: float


@dataclass(frozen=True)
class HiddenComm:
    """Communication hidden behind compute, seconds per step."""

    tp_comm_s: float
    pp_comm_s: float
    dp_comm_s: float
    cp_comm_s: float
    ep_comm_s: float


@dataclass(frozen=True)
class Memory:
    """Memory of the busiest GPU, bytes."""

    weights_bytes: float
    gradients_bytes: float
    optimizer_bytes: float
    activations_bytes: float
    reserve_bytes: float
    total_bytes: float
    hbm_bytes: float
    margin_bytes: float


@dataclass(frozen=True)
class Evaluation:
    """The model's answer for one configuration: the inputs as resolved (defaults filled in), then results.

    ``feasible`` is False when the busiest GPU needs more memory than its HBM; ``reason`` then says by how
    much. Times are per optimizer step unless named otherwise; ``cost_to_train_usd`` is in ``cost_mode``.
    """

    # Inputs, as resolved.
    model: str
    gpu: str
    gpus: int
    scale_up: str
    fabric: str
    topology: str
    oversubscription: float
    tp: int
    pp: int
    dp: int
    cp: int
    ep: int
    vpp: int
    micro_batch: int
    global_batch: int
    seq_len: int
    recompute: str
    zero: int
    sequence_parallel: bool
    overlap: Overlap
    precision: str
    flash_attention: bool
    tokens: float
    cost_mode: str
    # Results.
    feasible: bool
    reason: str | None
    step_time_s: float
    tokens_per_s: float
    mfu: float
    hfu: float
    tflops_per_gpu: float
    scaling_efficiency: float
    memory_per_gpu_gb: float
    breakdown: Breakdown
    hidden: HiddenComm
    memory: Memory
    micro_batches: int
    steps: float
    time_to_train_s: float
    time_to_train_days: float
    energy_mwh: float
    cost_to_train_usd: float
    cost_rent_usd: float
    cost_own_usd: float
    capex_usd: float
    network_capex_usd: float
    it_power_w: float
    network_tiers: int
    network_switches: float
    interruptions_per_day: float
    checkpoint_interval_s: float
    goodput: float
    params_total: float
    params_active: float
    model_flops_per_token: float

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (nested breakdown, hidden, memory and overlap)."""
        return asdict(self)


def _resolve_model(model: str | Path | ModelEntry, catalog: Catalog) -> tuple[str, ModelEntry]:
    if isinstance(model, ModelEntry):
        return model.name, model
    text = str(model)
    if text.endswith(".toml") or Path(text).suffix == ".toml":
        entry = load_model_file(text)
        return text, entry
    return text, catalog.model(text)


def _prices(
    catalog: Catalog, gpu: str, fabric: str, scale_up: str, overrides: dict[str, float] | None
) -> dict[str, float]:
    prices: dict[str, float] = {}
    prices.update(catalog.gpu_price(gpu).model_dump())
    prices.update(catalog.fabric_price(fabric).model_dump())
    prices.update(catalog.scale_up_price(scale_up).model_dump())
    prices.update(catalog.economics_or_error().model_dump())
    for key, value in (overrides or {}).items():
        if key not in prices:
            close = difflib.get_close_matches(key, list(prices), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(sorted(prices))}"
            raise UsageError(f"unknown price {key!r}{hint}")
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
            raise UsageError(f"price {key}={value!r}: expected a finite number >= 0")
        prices[key] = float(value)
    return prices


# Catalog entries in the SI units the core takes. The one place catalog units are converted.


def gpu_dict(g: GpuEntry) -> dict[str, Any]:
    return {
        "peak_bf16_flops": g.peak_bf16_tflops * 1e12,
        "peak_fp8_flops": g.peak_fp8_tflops * 1e12,
        "hbm_bytes": g.hbm_gb * 1e9,
        "hbm_bytes_per_s": g.hbm_gbytes_per_s * 1e9,
        "tdp_w": g.tdp_w,
        "gemm_efficiency": g.gemm_efficiency,
        "gemm_efficiency_fp8": g.gemm_efficiency_fp8,
        "attention_efficiency": g.attention_efficiency,
        "hbm_efficiency": g.hbm_efficiency,
        "sustained_efficiency": g.sustained_efficiency,
        "runtime_reserve_bytes": g.runtime_reserve_gb * 1e9,
        "server_gpus": g.server_gpus,
        "host_power_w": g.host_power_w,
    }


def scale_up_dict(s: ScaleUpEntry) -> dict[str, Any]:
    return {
        "bytes_per_s": s.gbytes_per_s * 1e9,
        "domain_gpus": s.domain_gpus,
        "step_latency_s": s.step_latency_us * 1e-6,
        "ring_efficiency": s.ring_efficiency,
        "in_switch_allreduce_efficiency": s.in_switch_allreduce_efficiency,
        "switch_trays_per_domain": s.switch_trays_per_domain,
    }


def reliability_dict(r: ReliabilityEntry) -> dict[str, Any]:
    return r.model_dump(exclude={"name"})


def fabric_dict(f: FabricEntry) -> dict[str, Any]:
    return {
        "link_bytes_per_s": f.link_gbps * 1e9 / 8,
        "links_per_gpu": f.links_per_gpu,
        "efficiency": f.efficiency,
        "congestion_efficiency": f.congestion_efficiency,
        "nic_latency_s": f.nic_latency_us * 1e-6,
        "switch_hop_latency_s": f.switch_hop_latency_us * 1e-6,
        "switch_radix": f.switch_radix,
        "in_network_reduction_efficiency": f.in_network_reduction_efficiency,
    }


def model_dict(m: ModelEntry) -> dict[str, Any]:
    moe = None
    if m.is_moe:
        moe = {
            "experts": m.moe_experts,
            "top_k": m.moe_top_k,
            "ffn_hidden": m.moe_ffn_hidden,
            "shared_experts": m.moe_shared_experts,
            "first_dense_layers": m.moe_first_dense_layers,
        }
    return {
        "layers": m.layers,
        "hidden": m.hidden,
        "heads": m.heads,
        "kv_heads": m.kv_heads,
        "head_dim": m.head_dim,
        "ffn_hidden": m.ffn_hidden,
        "gated_mlp": m.gated_mlp,
        "vocab": m.vocab,
        "tied_embeddings": m.tied_embeddings,
        "moe": moe,
    }


def _default_global_batch(seq_len: int, dp: int, micro_batch: int, pp: int, vpp: int) -> int:
    """About DEFAULT_BATCH_TOKENS, rounded up to a multiple of dp x micro-batch (x pp when interleaved)."""
    unit = dp * micro_batch * (pp if vpp > 1 else 1)
    sequences = math.ceil(DEFAULT_BATCH_TOKENS / seq_len)
    return max(unit, math.ceil(sequences / unit) * unit)


#: Largest count the core accepts (its counts are 32-bit).
MAX_COUNT = 2**31


def _positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_COUNT:
        raise UsageError(f"{name}={value!r}: expected a positive integer up to {MAX_COUNT:,}")
    return value


def _choice(name: str, value: Any, options: tuple[str, ...]) -> str:
    if value not in options:
        raise UsageError(f"{name}={value!r}: expected one of {', '.join(options)}")
    return value


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
    tokens: float = 1e12,
    cost_mode: Literal["rent", "own"] = "rent",
    prices: dict[str, float] | None = None,
    reliability: str = "default",
    catalog: Catalog | None = None,
) -> Evaluation:
    """Evaluate one training configuration.

    Names (``model``, ``gpu``, ``scale_up``, ``fabric``, ``topology``) are catalog ids; ``model`` may also be a
    path to a model TOML file. ``scale_up`` defaults to the GPU's own domain, ``oversubscription`` to the
    topology's, ``dp`` to gpus / (tp x pp x cp), ``seq_len`` to the model's, and ``global_batch`` to about 4M
    tokens rounded to a multiple of dp x micro_batch. ``flash_attention=False`` models attention that
    materialises its scores (Megatron-LM before 2022). ``prices`` overrides any catalog price by field name
    (``rent_usd_per_gpu_hour``, ``switch_usd``, ``usd_per_kwh``, ...). ``reliability`` names a failure profile
    of data/reliability.toml (``default``: Llama 3's measured rates; ``perfect``: no failures); time and cost to
    train are divided by the resulting goodput.

    Raises :class:`~scalefront.errors.CatalogError` for an unknown name or a bad file,
    :class:`~scalefront.errors.UsageError` for a bad argument and
    :class:`~scalefront.errors.ConfigurationError` for an impossible configuration.
    """
    cat = catalog or builtin_catalog()
    model_name, m = _resolve_model(model, cat)
    gpu_entry = cat.gpu(gpu)
    scale_up_name = scale_up or gpu_entry.default_scale_up
    su = cat.scale_up_domain(scale_up_name)
    fab = cat.fabric(fabric)
    topo = cat.topology(topology)
    gpus = _positive_int("gpus", gpus)
    for name, value in (("tp", tp), ("pp", pp), ("cp", cp), ("ep", ep), ("vpp", vpp), ("micro_batch", micro_batch)):
        _positive_int(name, value)
    if isinstance(zero, bool) or not isinstance(zero, int) or zero not in (0, 1, 2, 3):
        raise UsageError(f"zero={zero!r}: expected one of 0, 1, 2, 3")
    _choice("recompute", recompute, ("none", "selective", "full"))
    _choice("precision", precision, ("bf16", "fp8"))
    if dp is None:
        if gpus % (tp * pp * cp):
            raise UsageError(f"tp x pp x cp = {tp} x {pp} x {cp} = {tp * pp * cp} does not divide gpus = {gpus}")
        dp = gpus // (tp * pp * cp)
    dp = _positive_int("dp", dp)
    seq_len = _positive_int("seq_len", seq_len if seq_len is not None else m.seq_len)
    if global_batch is None:
        global_batch = _default_global_batch(seq_len, dp, micro_batch, pp, vpp)
    global_batch = _positive_int("global_batch", global_batch)
    if isinstance(tokens, bool) or not isinstance(tokens, (int, float)) or not (math.isfinite(tokens) and tokens > 0):
        raise UsageError(f"tokens={tokens!r}: expected a positive number")
    _choice("cost_mode", cost_mode, ("rent", "own"))
    ov = parse_overlap(overlap)
    over = topo.oversubscription if oversubscription is None else oversubscription
    price = _prices(cat, gpu, fabric, scale_up_name, prices)
    rel = cat.reliability_profile(reliability)

    config = {
        "model": model_dict(m),
        "gpu": gpu_dict(gpu_entry),
        "scale_up": scale_up_dict(su),
        "fabric": fabric_dict(fab),
        "topology": {"kind": topo.kind, "oversubscription": over, "rail_group_nodes": topo.rail_group_nodes},
        "prices": price,
        "gpus": gpus,
        "parallelism": {
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
        },
        "training": {
            "global_batch": global_batch,
            "seq_len": seq_len,
            "tokens": float(tokens),
            "precision": precision,
            "flash_attention": bool(flash_attention),
        },
        "overlap": {"dp": ov.dp, "tp": ov.tp, "pp": ov.pp, "ep": ov.ep},
        "reliability": reliability_dict(rel),
    }
    r = _core.evaluate(config)
    mem = Memory(
        weights_bytes=r["weights_bytes"],
        gradients_bytes=r["gradients_bytes"],
        optimizer_bytes=r["optimizer_bytes"],
        activations_bytes=r["activations_bytes"],
        reserve_bytes=r["reserve_bytes"],
        total_bytes=r["memory_per_gpu_bytes"],
        hbm_bytes=r["hbm_bytes"],
        margin_bytes=r["memory_margin_bytes"],
    )
    reason = None
    if not r["feasible"]:
        reason = (
            f"out of memory: needs {mem.total_bytes / 1e9:.1f} GB per GPU, "
            f"{gpu} has {mem.hbm_bytes / 1e9:.0f} GB ({-mem.margin_bytes / 1e9:.1f} GB over)"
        )
    return Evaluation(
        model=model_name,
        gpu=gpu,
        gpus=gpus,
        scale_up=scale_up_name,
        fabric=fabric,
        topology=topology,
        oversubscription=float(over),
        tp=tp,
        pp=pp,
        dp=dp,
        cp=cp,
        ep=ep,
        vpp=vpp,
        micro_batch=micro_batch,
        global_batch=global_batch,
        seq_len=seq_len,
        recompute=recompute,
        zero=zero,
        sequence_parallel=bool(sequence_parallel),
        overlap=ov,
        precision=precision,
        flash_attention=bool(flash_attention),
        tokens=float(tokens),
        cost_mode=cost_mode,
        feasible=r["feasible"],
        reason=reason,
        step_time_s=r["step_time_s"],
        tokens_per_s=r["tokens_per_s"],
        mfu=r["mfu"],
        hfu=r["hfu"],
        tflops_per_gpu=r["tflops_per_gpu"],
        scaling_efficiency=r["scaling_efficiency"],
        memory_per_gpu_gb=mem.total_bytes / 1e9,
        breakdown=Breakdown(**{f.name: r[f.name] for f in fields(Breakdown)}),
        hidden=HiddenComm(**{f.name: r[f.name.replace("_comm_s", "_comm_hidden_s")] for f in fields(HiddenComm)}),
        memory=mem,
        micro_batches=r["micro_batches"],
        steps=r["steps"],
        time_to_train_s=r["time_to_train_s"],
        time_to_train_days=r["time_to_train_s"] / 86400.0,
        energy_mwh=r["energy_j"] / 3.6e9,
        cost_to_train_usd=r["cost_rent_usd"] if cost_mode == "rent" else r["cost_own_usd"],
        cost_rent_usd=r["cost_rent_usd"],
        cost_own_usd=r["cost_own_usd"],
        capex_usd=r["capex_usd"],
        network_capex_usd=r["network_capex_usd"],
        it_power_w=r["it_power_w"],
        network_tiers=r["network_tiers"],
        network_switches=r["network_switches"],
        interruptions_per_day=r["interruptions_per_day"],
        checkpoint_interval_s=r["checkpoint_interval_s"],
        goodput=r["goodput"],
        params_total=r["params_total"],
        params_active=r["params_active"],
        model_flops_per_token=r["model_flops_per_token"],
    )


#: Field names of :class:`Evaluation`, in order (the JSON and later CSV schema).
EVALUATION_FIELDS = [f.name for f in fields(Evaluation)]
