"""A fake GPU for `scalefront measure`'s tests: it times every case at fixed rates (so each fitted figure is a rate
worked by hand over the datasheet), and raises KeyboardInterrupt at a chosen case (Ctrl-C there)."""

from __future__ import annotations

from typing import Any

from scalefront.fidelity.measure.cases import (
    AttentionCase,
    Case,
    ExpertCase,
    GemmCase,
    HbmCase,
    attention_fwd_flops,
    expert_fwd_flops,
)

__all__ = ["COPY_GBPS", "RATES", "TRIAD_GBPS", "FakeDevice"]

#: TFLOP/s (GB/s for HBM) the fake device runs every kernel at.
RATES = {"bf16": 700.0, "fp8": 1400.0, "default": 490.0, "flash": 270.0, "grouped": 350.0, "loop": 300.0}
COPY_GBPS, TRIAD_GBPS = 3000.0, 3100.0


def _ms(flops: float, tflops: float) -> float:
    return flops / (tflops * 1e12) * 1e3


class FakeDevice:
    """Times every case at RATES; raises KeyboardInterrupt on the `interrupt_at`-th case (Ctrl-C there)."""

    def __init__(self, rep_ms: int = 25, interrupt_at: int | None = None):
        self.rep_ms = rep_ms
        self.interrupt_at = interrupt_at
        self.measured: list[Case] = []

    def describe(self) -> dict[str, Any]:
        return {"gpu": "NVIDIA H100 80GB HBM3", "torch": "2.11.0+cu130", "cuda": "13.0", "driver": "580.159.04"}

    def measure(self, case: Case) -> dict[str, Any]:
        self.measured.append(case)
        if len(self.measured) == self.interrupt_at:
            raise KeyboardInterrupt
        if isinstance(case, HbmCase):
            return {"copy_GBps": COPY_GBPS, "triad_GBps": TRIAD_GBPS}
        if isinstance(case, GemmCase):
            ms = _ms(2.0 * case.m * case.k * case.n, RATES[case.dtype])
            return {"fwd_ms": ms, "dgrad_ms": ms, "wgrad_ms": ms}
        if isinstance(case, AttentionCase):
            fwd = attention_fwd_flops(case)
            return {"fwd_ms": _ms(fwd, RATES[case.backend]), "fwdbwd_ms": _ms(3.5 * fwd, RATES[case.backend])}
        assert isinstance(case, ExpertCase)
        fwd = expert_fwd_flops(case)
        grouped, loop = _ms(fwd, RATES["grouped"]), _ms(fwd, RATES["loop"])
        wgrad = _ms(2.0 * case.experts_local * case.tokens_per_expert * case.ffn * case.hidden, RATES["loop"])
        return {
            "grouped_fwd_ms": grouped,
            "grouped_dgrad_ms": grouped,
            "loop_fwd_ms": loop,
            "loop_wgrad_down_ms": wgrad,
        }
