"""A GPU entry's optional ``[<id>.measured]`` table: the kernel rates `scalefront measure` recorded on the GPU, by
GEMM shape, attention heads per GPU and tokens per routed expert (the curves of issue 22's kernel model; today's
model reads only the entry's fitted figures, not these). `scalefront measure` writes it from this record, and the
catalog loader checks it with the same record, so the table has one definition.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["AttentionPoint", "ExpertPoint", "GemmPoint", "LargeGemmPoint", "Measured", "RoutingPoint"]

_DATED = re.compile(r"\d{4}-\d{2}(-\d{2})?\s*$")
#: A measured rate or time: positive and finite.
Rate = Annotated[float, Field(gt=0, allow_inf_nan=False)]
#: A dimension, a head or token count.
Dim = Annotated[int, Field(ge=1, le=2**31)]


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class GemmPoint(_Row):
    """One layer GEMM shape, (m x k) . (k x n): TFLOP/s of each pass measured (forward, data and weight
    gradient); the median when the shape occurs more than once."""

    m: Dim
    k: Dim
    n: Dim
    fwd_tflops: Rate | None = None
    dgrad_tflops: Rate | None = None
    wgrad_tflops: Rate | None = None


class LargeGemmPoint(_Row):
    """A large GEMM's forward TFLOP/s (the ceiling shapes of gpu_bench.py)."""

    m: Dim
    k: Dim
    n: Dim
    fwd_tflops: Rate


class AttentionPoint(_Row):
    """Fused causal attention with `backend` ("default": what PyTorch picks): forward and forward+backward TFLOP/s,
    FLOPs counted causal (half of 4 b h s^2 d forward; the backward 2.5 times the forward)."""

    heads: Dim
    kv_heads: Dim
    head_dim: Dim
    v_head_dim: Dim
    seq: Dim
    batch: Dim
    backend: str
    fwd_tflops: Rate
    fwdbwd_tflops: Rate


class ExpertPoint(_Row):
    """Routed experts on one GPU, `experts_local` of width `ffn`, `tokens_per_expert` each: forward TFLOP/s as
    grouped GEMMs and as a loop of per-expert GEMMs, the grouped data gradient, the looped weight gradient of the
    down projection."""

    hidden: Dim
    ffn: Dim
    experts_local: Dim
    tokens_per_expert: Dim
    grouped_fwd_tflops: Rate | None = None
    grouped_dgrad_tflops: Rate | None = None
    loop_fwd_tflops: Rate
    loop_wgrad_tflops: Rate


class RoutingPoint(_Row):
    """Unfused token routing of `tokens` tokens to `top_k` of `experts` experts: router GEMM with softmax and
    top-k, permutation (sort and gather), weighted un-permutation (scatter-add), milliseconds."""

    hidden: Dim
    tokens: Dim
    experts: Dim
    top_k: Dim
    route_ms: Rate
    permute_ms: Rate
    unpermute_ms: Rate


class Measured(_Row):
    """What one run measured on the GPU, with the run as its dated source."""

    source: str
    device: str
    hbm_copy_gbytes_per_s: Rate | None = None
    hbm_triad_gbytes_per_s: Rate | None = None
    gemm_bf16: list[GemmPoint] = []
    gemm_fp8: list[GemmPoint] = []
    gemm_bf16_large: list[LargeGemmPoint] = []
    gemm_fp8_large: list[LargeGemmPoint] = []
    attention: list[AttentionPoint] = []
    experts: list[ExpertPoint] = []
    token_routing: list[RoutingPoint] = []

    @field_validator("source")
    @classmethod
    def _dated(cls, source: str) -> str:
        if not _DATED.search(source):
            raise ValueError(f"must end with the date of the run, YYYY-MM-DD: {source!r}")
        return source
