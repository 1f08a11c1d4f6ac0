"""What `scalefront measure` times, and the FLOP counts its rates are computed with.

A `Plan` is a list of cases: HBM streaming, every GEMM of a layer (forward, data gradient, weight gradient) at each
TP degree and micro-batch size a scenario sweeps, fused causal attention by heads per GPU, and the routed experts'
grouped GEMMs of a mixture-of-experts model by tokens per expert. The shapes are the ones the model computes with
(rust/core/src/step/workload.rs `attention_shapes`, compute.rs `dense_layer_forward` and `moe_layer_forward`):
QKV (hidden -> (q + 2 kv) / tp), the output projection (q / tp -> hidden), the MLP's up (with the gate) and down
projections, or MLA's down- and up-projections, the router and the shared experts.

Standard library only: the device half of the package (see its docstring).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ATTENTION_GRID_HEADS",
    "ATTENTION_GRID_SEQS",
    "PASSES",
    "AttentionCase",
    "Case",
    "ExpertCase",
    "GemmCase",
    "GemmUse",
    "HbmCase",
    "HostCase",
    "Mla",
    "ModelShape",
    "Plan",
    "Request",
    "attention_fwd_flops",
    "attention_grid_cases",
    "build_plan",
    "expert_fwd_flops",
    "layer_gemms",
]

#: The three GEMMs of a linear layer in training: Y = X W^T, dX = dY W, dW = dY^T X.
PASSES = ("fwd", "dgrad", "wgrad")
#: Tokens per expert every MoE plan measures (moe_bench.py's ladder), beside the scenario's own.
EXPERT_TOKENS_LADDER = (128, 512, 2048)
#: Local experts x tokens per expert at most in one grouped GEMM case: the buffers of a DeepSeek-V3-sized expert
#: layer at 64K tokens take about 20 GB.
MAX_EXPERT_TOKENS = 65536
#: Bytes of expert weights and gradients one host-probe MoE layer holds at most (on a 40 GB card, room to spare).
HOST_WEIGHT_BYTES = 16e9
#: The fused-attention table of the GPU catalog (`attention_efficiency`: the core's `ATTENTION_HEADS` and
#: `ATTENTION_SEQS`, rust/core/src/step/attention.rs; a test holds them equal): heads per GPU times sequences per
#: micro-batch, and sequence lengths. `bench.py --attention-grid` measures every cell with both backends.
ATTENTION_GRID_HEADS = (2, 4, 8, 16, 32, 64, 128)
ATTENTION_GRID_SEQS = (1024, 2048, 4096, 8192, 16384, 32768)


@dataclass(frozen=True)
class Mla:
    """Multi-head latent attention's dimensions (DeepSeek-V2/V3)."""

    q_lora_rank: int
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int


@dataclass(frozen=True)
class ModelShape:
    """The dimensions of a decoder layer that set its kernel shapes (a catalog model's fields)."""

    name: str
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn_hidden: int
    gated_mlp: bool
    seq_len: int
    moe_experts: int = 0
    moe_top_k: int = 0
    moe_ffn_hidden: int = 0
    moe_shared_experts: int = 0
    moe_first_dense_layers: int = 0
    mla: Mla | None = None

    @classmethod
    def from_fields(cls, name: str, f: Mapping[str, Any]) -> ModelShape:
        """From a model's catalog fields (a data/models/<id>.toml table or a ModelEntry's)."""
        mla = None
        if f.get("mla_kv_lora_rank") is not None:
            mla = Mla(
                int(f.get("mla_q_lora_rank") or 0),
                int(f["mla_kv_lora_rank"]),
                int(f["mla_qk_nope_head_dim"]),
                int(f["mla_qk_rope_head_dim"]),
                int(f["mla_v_head_dim"]),
            )
        return cls(
            name=name,
            hidden=int(f["hidden"]),
            heads=int(f["heads"]),
            kv_heads=int(f["kv_heads"]),
            head_dim=int(f.get("head_dim") or f["hidden"] // f["heads"]),
            ffn_hidden=int(f["ffn_hidden"]),
            gated_mlp=bool(f["gated_mlp"]),
            seq_len=int(f["seq_len"]),
            moe_experts=int(f.get("moe_experts") or 0),
            moe_top_k=int(f.get("moe_top_k") or 0),
            moe_ffn_hidden=int(f.get("moe_ffn_hidden") or 0),
            moe_shared_experts=int(f.get("moe_shared_experts") or 0),
            moe_first_dense_layers=int(f.get("moe_first_dense_layers") or 0),
            mla=mla,
        )

    @property
    def is_moe(self) -> bool:
        return self.moe_experts > 0

    @property
    def up_matrices(self) -> int:
        """Matrices the MLP's first GEMM holds: gate and up (SwiGLU), or up alone."""
        return 2 if self.gated_mlp else 1


def _split(x: int, tp: int) -> int:
    """One TP rank's share of a dimension (Megatron-LM requires it to divide; a remainder rounds up)."""
    return -(-x // tp)


def _attention_gemms(model: ModelShape, tp: int) -> list[tuple[str, int, int]]:
    h, heads = model.hidden, model.heads
    a = model.mla
    if a is None:
        q, kv = heads * model.head_dim, model.kv_heads * model.head_dim
        return [("qkv", h, _split(q + 2 * kv, tp)), ("proj", _split(q, tp), h)]
    qk = a.qk_nope_head_dim + a.qk_rope_head_dim
    q_up = [("q_down", h, a.q_lora_rank), ("q_up", a.q_lora_rank, _split(heads * qk, tp))]
    return [
        *(q_up if a.q_lora_rank else [("q_up", h, _split(heads * qk, tp))]),
        ("kv_down", h, a.kv_lora_rank + a.qk_rope_head_dim),
        ("kv_up", a.kv_lora_rank, _split(heads * (a.qk_nope_head_dim + a.v_head_dim), tp)),
        ("proj", _split(heads * a.v_head_dim, tp), h),
    ]


def layer_gemms(model: ModelShape, tp: int) -> list[tuple[str, int, int]]:
    """(name, k, n) of every GEMM of one layer on one TP rank (m is the tokens): attention's projections, then a
    dense MLP (dense models and the dense first layers of a MoE model), then the router and the shared experts.
    The routed experts are `ExpertCase`s."""
    h = model.hidden
    out = _attention_gemms(model, tp)
    if not model.is_moe or model.moe_first_dense_layers:
        f = model.ffn_hidden
        out += [("up", h, _split(model.up_matrices * f, tp)), ("down", _split(f, tp), h)]
    if model.is_moe:
        out.append(("router", h, model.moe_experts))
        if model.moe_shared_experts:
            fs = model.moe_shared_experts * model.moe_ffn_hidden
            out += [("shared_up", h, _split(model.up_matrices * fs, tp)), ("shared_down", _split(fs, tp), h)]
    return out


@dataclass(frozen=True)
class GemmUse:
    """Where a GEMM shape occurs: one layer GEMM of a model at a TP degree and tokens per micro-batch."""

    model: str
    tp: int
    tokens: int
    gemm: str


@dataclass(frozen=True)
class GemmCase:
    """(m x k) . (k x n) in `dtype`, all three passes; `uses` names every layer GEMM of this shape."""

    m: int
    k: int
    n: int
    dtype: str
    uses: tuple[GemmUse, ...]

    @property
    def label(self) -> str:
        return f"gemm {self.dtype} {self.m}x{self.k}x{self.n}"


@dataclass(frozen=True)
class AttentionCase:
    """Fused causal attention (scaled_dot_product_attention) forward and forward+backward with `backend`
    ("default": what PyTorch picks)."""

    heads: int
    kv_heads: int
    head_dim: int
    v_head_dim: int
    seq: int
    batch: int
    backend: str

    @property
    def label(self) -> str:
        return f"attention {self.heads}/{self.kv_heads} heads, seq {self.seq} x {self.batch}, {self.backend}"


@dataclass(frozen=True)
class HbmCase:
    """Streaming copy and triad over BF16 buffers of `elements` each."""

    elements: int

    @property
    def label(self) -> str:
        return f"hbm copy and triad, {2 * self.elements / 2**30:g} GiB buffers"


@dataclass(frozen=True)
class ExpertCase:
    """Routed experts of one MoE layer on one GPU: `experts_local` experts of width `ffn` each receiving
    `tokens_per_expert` tokens, as grouped GEMMs (forward, data gradient) and as a loop (forward, the down
    projection's weight gradient)."""

    model: str
    hidden: int
    ffn: int
    experts_local: int
    tokens_per_expert: int
    gated: bool

    @property
    def label(self) -> str:
        return f"experts {self.model} {self.experts_local} x {self.hidden}->{self.ffn}, {self.tokens_per_expert} tokens"


@dataclass(frozen=True)
class HostCase:
    """What the host spends launching kernels. ``kind="launch"``: eager PyTorch's host time per launch of a tiny
    element-wise kernel, a tiny GEMM and a small linear layer's forward and backward (GPU work negligible, so the
    loop runs at the host's pace). ``kind="moe_layer"``: one dropless MoE layer in eager PyTorch, forward and
    backward, as an expert-parallel rank runs it after the dispatch (its `tokens` routed over all `experts`, the
    copies for its `experts_local` experts computed): router, top-k, sort by expert, the tokens-per-expert copy to
    the host that a loop of per-expert GEMMs needs (a device-to-host sync), the experts (``grouped``:
    ``torch._grouped_mm``, no sync), the weighted un-permutation. Host time against GPU busy time tells whether
    the layer is host-bound on this node (docs/design/fidelity-v3.md, section 14)."""

    kind: str
    model: str = ""
    hidden: int = 0
    ffn: int = 0
    experts: int = 0
    top_k: int = 0
    experts_local: int = 0
    tokens: int = 0
    gated: bool = True
    grouped: bool = False

    @property
    def label(self) -> str:
        if self.kind == "launch":
            return "host launch: element-wise, GEMM, linear forward+backward"
        how = "grouped_mm" if self.grouped else "per-expert loop"
        return (
            f"host moe layer {self.model}: {self.tokens} tokens, {self.experts_local}/{self.experts} experts local, "
            f"top {self.top_k}, {how}"
        )


Case = HbmCase | GemmCase | AttentionCase | ExpertCase | HostCase


def attention_fwd_flops(c: AttentionCase) -> float:
    """Forward FLOPs of causal attention: half of QK^T and AV over s x s, 2 b h s^2 (d_qk + d_v) / 2 (the model's
    `attention_core_flops_per_token`; FlashAttention's benchmark count). Forward+backward is 3.5 times this."""
    return float(c.batch * c.heads * c.seq * c.seq * (c.head_dim + c.v_head_dim))


def expert_fwd_flops(c: ExpertCase) -> float:
    """Forward FLOPs of the routed experts: up (with the gate) and down projections of every routed token."""
    tokens = c.experts_local * c.tokens_per_expert
    return 2.0 * tokens * c.hidden * c.ffn * ((2 if c.gated else 1) + 1)


@dataclass(frozen=True)
class Request:
    """One model's share of a plan: the TP degrees, tokens per micro-batch and micro-batch sizes a scenario sweeps,
    and for MoE models the expert-parallel degrees and expert-TP degrees (0: the TP degree, the model's default)."""

    model: ModelShape
    tps: tuple[int, ...]
    tokens: tuple[int, ...]
    batches: tuple[int, ...] = (1,)
    eps: tuple[int, ...] = (1,)
    etp: int = 0


@dataclass(frozen=True)
class Plan:
    cases: tuple[Case, ...]
    #: Milliseconds of repeats per timed kernel (triton's do_bench `rep`).
    rep_ms: int
    quick: bool

    def count(self, kind: type) -> int:
        return sum(isinstance(c, kind) for c in self.cases)


def _gemm_cases(requests: Iterable[Request], dtypes: tuple[str, ...]) -> list[GemmCase]:
    uses: dict[tuple[int, int, int, str], list[GemmUse]] = {}
    for r in requests:
        for tp in r.tps:
            for tokens in r.tokens:
                for name, k, n in layer_gemms(r.model, tp):
                    for dtype in dtypes:
                        uses.setdefault((tokens, k, n, dtype), []).append(GemmUse(r.model.name, tp, tokens, name))
    return [GemmCase(m, k, n, dtype, tuple(u)) for (m, k, n, dtype), u in uses.items()]


def _attention_cases(r: Request, backends: tuple[str, ...]) -> list[AttentionCase]:
    m = r.model
    if m.mla is None:
        dims, kv_heads = (m.head_dim, m.head_dim), m.kv_heads
    else:  # after the up-projections every head has its own keys and values
        dims, kv_heads = (m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim, m.mla.v_head_dim), m.heads
    return [
        AttentionCase(_split(m.heads, tp), _split(kv_heads, tp), *dims, m.seq_len, batch, backend)
        for tp in r.tps
        for batch in r.batches
        for backend in backends
    ]


def _expert_cases(r: Request) -> list[ExpertCase]:
    m = r.model
    if not m.is_moe:
        return []
    out = []
    for etp in sorted({r.etp} if r.etp else set(r.tps)):
        for ep in r.eps:
            # Tokens an expert receives from ep ranks of `tokens` each (the model's tokens_per_expert, no imbalance).
            scenario = {max(16, round(t * m.moe_top_k * ep / m.moe_experts / 16) * 16) for t in r.tokens}
            for n in sorted(scenario | set(EXPERT_TOKENS_LADDER)):
                local = max(1, min(m.moe_experts // ep, MAX_EXPERT_TOKENS // n))
                out.append(ExpertCase(m.name, m.hidden, _split(m.moe_ffn_hidden, etp), local, n, m.gated_mlp))
    return out


def _host_cases(r: Request) -> list[HostCase]:
    """The MoE layer's host probe at each expert-parallel degree and tokens per micro-batch, looped and grouped;
    the local experts at most as many as `HOST_WEIGHT_BYTES` of weights and gradients hold (the kernel counts
    per expert extrapolate beyond)."""
    m = r.model
    if not m.is_moe:
        return []
    # Weights and gradients of an expert: up (with the gate) and down projections, BF16, twice.
    held = max(1, int(HOST_WEIGHT_BYTES // (2 * 2 * (m.up_matrices + 1) * m.hidden * m.moe_ffn_hidden)))
    return [
        HostCase(
            "moe_layer",
            m.name,
            m.hidden,
            m.moe_ffn_hidden,
            m.moe_experts,
            m.moe_top_k,
            min(max(1, m.moe_experts // ep), held),
            t,
            m.gated_mlp,
            grouped,
        )
        for ep in r.eps
        for t in r.tokens
        for grouped in (False, True)
    ]


def attention_grid_cases(backends: tuple[str, ...]) -> list[AttentionCase]:
    """Every cell of the catalog's attention table: one sequence of each length, head dim 128, grouped-query
    attention with one key-value head per eight query heads (Llama 3's ratio), by backend."""
    return [
        AttentionCase(heads, max(1, heads // 8), 128, 128, seq, 1, backend)
        for heads in ATTENTION_GRID_HEADS
        for seq in ATTENTION_GRID_SEQS
        for backend in backends
    ]


def _unique(cases: Iterable[Case]) -> list[Case]:
    return list(dict.fromkeys(cases))


def build_plan(
    requests: Iterable[Request],
    *,
    fp8: bool,
    experts: bool,
    quick: bool,
    attention_backends: tuple[str, ...] = ("default", "flash"),
    attention_grid: bool = False,
    host: bool = False,
) -> Plan:
    """Every case the requests need, each shape once: HBM, GEMMs (BF16, and FP8 when asked), attention, experts.
    `quick`: PyTorch's default attention backend only, smaller HBM buffers, 25 ms of repeats instead of 100.
    `attention_grid`: also every cell of the catalog's attention table with every backend (`attention_grid_cases`).
    `host`: also the host's launch times and each MoE model's layer in eager PyTorch (`HostCase`)."""
    requests = list(requests)
    backends = attention_backends[:1] if quick else attention_backends
    cases: list[Case] = [HbmCase(1 << 28 if quick else 1 << 30)]
    cases += _gemm_cases(requests, ("bf16", "fp8") if fp8 else ("bf16",))
    cases += _unique(c for r in requests for c in _attention_cases(r, backends))
    if attention_grid:
        cases += [c for c in attention_grid_cases(attention_backends) if c not in cases]
    if experts:
        cases += _unique(c for r in requests for c in _expert_cases(r))
    if host:
        cases += [HostCase("launch"), *_unique(c for r in requests for c in _host_cases(r))]
    return Plan(tuple(cases), 25 if quick else 100, quick)
