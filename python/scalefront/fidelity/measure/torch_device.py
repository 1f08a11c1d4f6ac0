"""The GPU as a `Device`: each case timed with PyTorch on random data by triton's ``do_bench`` (the median of
repeats after warm-up, the L2 cache flushed between repeats).

The kernels and their timing are adapted from the project's reference scripts ``gpu_bench.py`` (HBM copy and triad,
the three GEMMs of a linear layer with input buffers rotated past the L2 cache, fused causal attention by SDPA
backend) and ``moe_bench.py`` (routed experts as ``torch._grouped_mm`` and as a loop; FP8 GEMMs by
``torch._scaled_mm`` with per-tensor scales), which measured the recorded H100 and H200 runs in
``data/measurements/``. FP8 data and weight gradients are new here: their operands are laid out as cuBLASLt's FP8
GEMM needs them (the first row-major, the second column-major) before timing, as Transformer Engine keeps
transposed FP8 copies.

Imported only when a run starts: PyTorch and Triton are the optional ``measure`` extra.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Callable, Iterator
from typing import Any

import torch
import torch.nn.functional as F
from triton.testing import do_bench

from .cases import AttentionCase, Case, ExpertCase, GemmCase, HbmCase, HostCase

__all__ = ["TorchDevice"]

#: Buffers smaller than this are rotated over several copies so that a repeat does not find its operands in the
#: L2 cache (50-60 MB on Hopper) (gpu_bench.py).
_ROTATE_BELOW_BYTES = 2e8
_ROTATIONS = 4


def _nvidia_smi(query: str) -> str:
    try:
        out = subprocess.run(
            ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.strip().splitlines()[0] if out.strip() else ""


class TorchDevice:
    """CUDA device 0 through PyTorch; `rep_ms` of repeats per timed kernel."""

    def __init__(self, rep_ms: int, warmup_ms: int = 10):
        if not torch.cuda.is_available():
            raise RuntimeError("PyTorch sees no CUDA GPU")
        self.dev = torch.device("cuda")
        self.rep_ms = rep_ms
        self.warmup_ms = warmup_ms
        torch.manual_seed(0)

    def describe(self) -> dict[str, Any]:
        props = torch.cuda.get_device_properties(0)
        return {
            "gpu": torch.cuda.get_device_name(0),
            "torch": torch.__version__,
            "cuda": torch.version.cuda or "",
            "driver": _nvidia_smi("driver_version"),
            "sms": props.multi_processor_count,
            "memory_bytes": props.total_memory,
            "nvidia_smi": _nvidia_smi("name,clocks.max.sm,clocks.sm,power.limit,temperature.gpu"),
        }

    def _ms(self, fn: Callable[[], object]) -> float:
        return float(do_bench(fn, warmup=self.warmup_ms, rep=self.rep_ms, return_mode="median"))

    def measure(self, case: Case) -> dict[str, Any]:
        try:
            if isinstance(case, HbmCase):
                return self._hbm(case)
            if isinstance(case, GemmCase):
                return self._gemm_fp8(case) if case.dtype == "fp8" else self._gemm_bf16(case)
            if isinstance(case, AttentionCase):
                return self._attention(case)
            if isinstance(case, HostCase):
                from .torch_host import measure_host

                return measure_host(case, self.dev)
            return self._experts(case)
        except (RuntimeError, NotImplementedError, ValueError) as e:  # no kernel here, out of memory: go on
            return {"error": repr(e)[:200]}
        finally:
            torch.cuda.empty_cache()

    def _hbm(self, c: HbmCase) -> dict[str, Any]:
        a = torch.randn(c.elements, dtype=torch.bfloat16, device=self.dev)
        b, s = torch.empty_like(a), torch.randn_like(a)
        copy = 2 * 2 * c.elements / (self._ms(lambda: b.copy_(a)) * 1e-3) / 1e9  # bytes read + written
        triad = 3 * 2 * c.elements / (self._ms(lambda: torch.add(a, s, alpha=2.0, out=b)) * 1e-3) / 1e9
        return {"copy_GBps": copy, "triad_GBps": triad}

    def _rotating(self, c: GemmCase, make: Callable[[], tuple[torch.Tensor, ...]]) -> Callable[[], tuple[Any, ...]]:
        """A picker that hands out one of several operand sets in turn when the operands fit in L2."""
        sets = 1 if 2 * (c.m * c.k + c.k * c.n + c.m * c.n) > _ROTATE_BELOW_BYTES else _ROTATIONS
        pool = [make() for _ in range(sets)]
        i = [0]

        def pick() -> tuple[Any, ...]:
            i[0] = (i[0] + 1) % sets
            return pool[i[0]]

        return pick

    def _gemm_bf16(self, c: GemmCase) -> dict[str, Any]:
        def make() -> tuple[torch.Tensor, ...]:
            bf16 = {"dtype": torch.bfloat16, "device": self.dev}
            return torch.randn(c.m, c.k, **bf16), torch.randn(c.n, c.k, **bf16), torch.randn(c.m, c.n, **bf16)

        pick = self._rotating(c, make)

        def fwd() -> object:
            x, w, _ = pick()
            return F.linear(x, w)

        def dgrad() -> object:
            _, w, dy = pick()
            return dy @ w

        def wgrad() -> object:
            x, _, dy = pick()
            return dy.t() @ x

        return {f"{name}_ms": self._ms(fn) for name, fn in (("fwd", fwd), ("dgrad", dgrad), ("wgrad", wgrad))}

    def _gemm_fp8(self, c: GemmCase) -> dict[str, Any]:
        one = torch.tensor(1.0, device=self.dev)

        def fp8(rows: int, cols: int) -> torch.Tensor:
            return (torch.randn(rows, cols, device=self.dev) * 0.5).to(torch.float8_e4m3fn)

        def make() -> tuple[torch.Tensor, ...]:
            x, w, dy = fp8(c.m, c.k), fp8(c.n, c.k), fp8(c.m, c.n)
            # Row-major first operand, column-major second, for each pass: fwd x . w^T, dgrad dy . w, wgrad dy^T . x.
            return x, w.t(), dy, w.t().contiguous().t(), dy.t().contiguous(), x.t().contiguous().t()

        pick = self._rotating(c, make)

        def mm(i: int, j: int) -> Callable[[], object]:
            def run() -> object:
                ops = pick()
                return torch._scaled_mm(ops[i], ops[j], scale_a=one, scale_b=one, out_dtype=torch.bfloat16)

            return run

        return {"fwd_ms": self._ms(mm(0, 1)), "dgrad_ms": self._ms(mm(2, 3)), "wgrad_ms": self._ms(mm(4, 5))}

    @contextlib.contextmanager
    def _backend(self, name: str) -> Iterator[None]:
        if name == "default":
            yield
            return
        from torch.nn.attention import SDPBackend, sdpa_kernel

        backend = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}[name]
        with sdpa_kernel([backend]):
            yield

    def _attention(self, c: AttentionCase) -> dict[str, Any]:
        bf16 = {"dtype": torch.bfloat16, "device": self.dev}
        q = torch.randn(c.batch, c.heads, c.seq, c.head_dim, **bf16, requires_grad=True)
        k = torch.randn(c.batch, c.kv_heads, c.seq, c.head_dim, **bf16, requires_grad=True)
        v = torch.randn(c.batch, c.kv_heads, c.seq, c.v_head_dim, **bf16, requires_grad=True)
        grad = torch.randn(c.batch, c.heads, c.seq, c.v_head_dim, **bf16)
        gqa = c.kv_heads != c.heads

        def fwd() -> torch.Tensor:
            return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)

        def fwdbwd() -> None:
            fwd().backward(grad)

        with self._backend(c.backend):
            return {"fwd_ms": self._ms(fwd), "fwdbwd_ms": self._ms(fwdbwd)}

    def _experts(self, c: ExpertCase) -> dict[str, Any]:
        bf16 = {"dtype": torch.bfloat16, "device": self.dev}
        e, n, h, f = c.experts_local, c.tokens_per_expert, c.hidden, c.ffn
        up = (2 if c.gated else 1) * f
        x, a = torch.randn(e * n, h, **bf16), torch.randn(e * n, f, **bf16)
        dy, dup = torch.randn(e * n, h, **bf16), torch.randn(e * n, up, **bf16)
        w_up, w_dn = torch.randn(e, h, up, **bf16), torch.randn(e, f, h, **bf16)
        out: dict[str, Any] = {}
        if hasattr(torch, "_grouped_mm"):
            offs = torch.arange(n, e * n + 1, n, dtype=torch.int32, device=self.dev)
            gm = torch._grouped_mm
            out["grouped_fwd_ms"] = self._ms(lambda: (gm(x, w_up, offs=offs), gm(a, w_dn, offs=offs)))

            def dgrad() -> object:  # dX = dY . W^T per expert
                return gm(dy, w_dn.transpose(1, 2), offs=offs), gm(dup, w_up.transpose(1, 2), offs=offs)

            out["grouped_dgrad_ms"] = self._ms(dgrad)
        else:
            out["grouped_error"] = f"torch {torch.__version__} has no _grouped_mm"
        xs, as_, dys = x.split(n), a.split(n), dy.split(n)
        out["loop_fwd_ms"] = self._ms(lambda: [(xs[i] @ w_up[i], as_[i] @ w_dn[i]) for i in range(e)])
        out["loop_wgrad_down_ms"] = self._ms(lambda: [as_[i].t() @ dys[i] for i in range(e)])
        return out
