"""The host probe of `scalefront measure` (`HostCase`): what the node's CPU spends launching kernels in eager
PyTorch, alone and in a dropless MoE layer, against the GPU's busy time for the same kernels.

Host time is read on the host's clock around the launching code, before the final synchronisation: a CUDA launch
returns when the kernel is queued, so while the GPU keeps up the loop runs at the host's pace. A MoE layer's host
time includes the waits at its own syncs (the count copies to the host), as a real layer's host thread does. GPU
busy time and the kernel count come from one pass under PyTorch's profiler (the kernels' own durations, summed: one
stream, so they do not overlap). Imported only when a run starts: PyTorch is the optional ``measure`` extra.
"""

from __future__ import annotations

import os
import platform
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

from .cases import HostCase

__all__ = ["measure_host"]

#: Launches per timed loop of the launch probe, and timed repeats of each probe (the median is reported).
_LAUNCHES = 4000
_REPEATS = 7
_WARMUP = 3


def _gpu_kernels(fn: Callable[[], object]) -> tuple[int, float]:
    """Kernels `fn` launches and their summed GPU time in milliseconds, from one profiled call."""
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    # The device's own events: kernels, and the memset and memcpy operations (each a launch too).
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    if not kernels:
        raise RuntimeError("the profiler recorded no GPU kernels")
    busy_us = sum(e.time_range.elapsed_us() for e in kernels)
    return len(kernels), busy_us / 1e3


def _median_phases(phases: Sequence[Callable[[Any], Any]]) -> tuple[list[float], float]:
    """Median host milliseconds of each phase (each given the previous one's result) until it returns, and of the
    wall time until the GPU has run them all, over the timed repeats after the warm-up ones."""
    host: list[list[float]] = [[] for _ in phases]
    wall: list[float] = []
    for repeat in range(_WARMUP + _REPEATS):
        torch.cuda.synchronize()
        out: Any = None
        marks = [time.perf_counter()]
        for phase in phases:
            out = phase(out)
            marks.append(time.perf_counter())
        torch.cuda.synchronize()
        end = time.perf_counter()
        if repeat >= _WARMUP:
            for k, times in enumerate(host):
                times.append((marks[k + 1] - marks[k]) * 1e3)
            wall.append((end - marks[0]) * 1e3)
    return [statistics.median(times) for times in host], statistics.median(wall)


def _timed(fn: Callable[[], object]) -> tuple[float, float]:
    """Median host milliseconds until `fn` returns (kernels queued) and until the GPU has run them."""
    (host_ms,), wall_ms = _median_phases([lambda _: fn()])
    return host_ms, wall_ms


def _per_launch(fn: Callable[[], object]) -> dict[str, float]:
    """Host microseconds per kernel of `fn`, the GPU's per kernel, and the kernels per call."""
    host_ms, wall_ms = _timed(fn)  # warms up first: the profiled call sees no one-off set-up
    kernels, busy_ms = _gpu_kernels(fn)
    return {
        "kernels": kernels,
        "host_us": host_ms * 1e3 / kernels,
        "gpu_us": busy_ms * 1e3 / kernels,
        "wall_us": wall_ms * 1e3 / kernels,
    }


def _cpu_name() -> str:
    """The host CPU's model name (Linux), which the launch times depend on."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
    except OSError:
        names = []
    return names[0] if names else platform.processor()


def _launch(dev: torch.device) -> dict[str, Any]:
    bf16 = {"dtype": torch.bfloat16, "device": dev}
    x = torch.zeros(1024, **bf16)
    a, b = torch.randn(64, 64, **bf16), torch.randn(64, 64, **bf16)
    w = torch.randn(256, 256, **bf16, requires_grad=True)
    xi = torch.randn(64, 256, **bf16, requires_grad=True)

    def elementwise() -> None:
        for _ in range(_LAUNCHES):
            x.add_(1.0)

    def gemm() -> None:
        for _ in range(_LAUNCHES):
            torch.mm(a, b)

    def linear() -> None:
        for _ in range(_LAUNCHES // 20):
            F.linear(xi, w).sum().backward()

    out: dict[str, Any] = {"cpu": _cpu_name(), "cpus": os.cpu_count() or 0}
    for name, fn in (("elementwise", elementwise), ("gemm", gemm), ("linear_fwdbwd", linear)):
        out |= {f"{name}_{k}": v for k, v in _per_launch(fn).items()}
    return out


def _moe_weights(c: HostCase, dev: torch.device) -> dict[str, Any]:
    """Inputs, router and experts; the loop's experts as tensors of their own (a module list), so that no
    expert's gradient is a slice of one big tensor."""
    bf16 = {"dtype": torch.bfloat16, "device": dev}
    up = (2 if c.gated else 1) * c.ffn
    scale = c.hidden**-0.5
    w_up = torch.randn(c.experts_local, c.hidden, up, **bf16) * scale
    w_dn = torch.randn(c.experts_local, c.ffn, c.hidden, **bf16) * c.ffn**-0.5
    experts = (
        (w_up.requires_grad_(), w_dn.requires_grad_())
        if c.grouped
        else ([w.clone().requires_grad_() for w in w_up], [w.clone().requires_grad_() for w in w_dn])
    )
    return {
        "x": torch.randn(c.tokens, c.hidden, **bf16).requires_grad_(),
        "router": (torch.randn(c.experts, c.hidden, **bf16) * scale).requires_grad_(),
        "w_up": experts[0],
        "w_dn": experts[1],
        "grad": torch.randn(c.tokens, c.hidden, **bf16),
    }


def _act(c: HostCase, h: torch.Tensor) -> torch.Tensor:
    if not c.gated:
        return F.gelu(h)
    g, u = h.chunk(2, dim=-1)
    return F.silu(g) * u


def _experts(c: HostCase, w: dict[str, Any], xs: torch.Tensor, expert: torch.Tensor) -> torch.Tensor:
    """The local experts over the copies sorted by expert: one grouped GEMM per projection, or a loop."""
    if c.grouped:
        offs = torch.cumsum(torch.bincount(expert, minlength=c.experts_local), 0).to(torch.int32)
        return torch._grouped_mm(_act(c, torch._grouped_mm(xs, w["w_up"], offs=offs)), w["w_dn"], offs=offs)
    counts = torch.bincount(expert, minlength=c.experts_local).tolist()  # the host needs the split sizes: a sync
    parts = xs.split(counts)
    return torch.cat([_act(c, p @ w["w_up"][e]) @ w["w_dn"][e] for e, p in enumerate(parts)])


def _moe_forward(c: HostCase, w: dict[str, Any]) -> Callable[[], torch.Tensor]:
    """The layer's forward: the rank's copies are those routed to experts 0 .. experts_local - 1, the share one
    of experts / experts_local ranks holds. Finding them (`nonzero`) copies their count to the host, as an
    expert-parallel dispatch does to size its all-to-all; the loop of per-expert GEMMs syncs once more for the
    split sizes."""

    def forward() -> torch.Tensor:
        x = w["x"]
        probs = (x @ w["router"].t()).float().softmax(dim=-1)
        top_p, top_i = probs.topk(c.top_k, dim=-1)
        top_p = (top_p / top_p.sum(dim=-1, keepdim=True)).flatten()
        flat = top_i.flatten()
        local = torch.nonzero(flat < c.experts_local).squeeze(1)
        expert = flat[local]
        order = torch.argsort(expert, stable=True)
        copies = local[order]
        token = copies // c.top_k
        y = _experts(c, w, x[token], expert[order])
        y = y * top_p[copies].unsqueeze(1).to(y.dtype)
        return torch.zeros_like(x).index_add(0, token, y)

    return forward


def _phases(forward: Callable[[], torch.Tensor], grad: torch.Tensor) -> dict[str, float]:
    """Median host milliseconds of the forward and of the backward, and the wall time of both."""
    (fwd_ms, bwd_ms), wall_ms = _median_phases([lambda _: forward(), lambda out: out.backward(grad)])
    return {"host_fwd_ms": fwd_ms, "host_bwd_ms": bwd_ms, "wall_ms": wall_ms}


def measure_host(c: HostCase, dev: torch.device) -> dict[str, Any]:
    """The probe's figures for `c` (see the module's docstring)."""
    if c.kind == "launch":
        return _launch(dev)
    w = _moe_weights(c, dev)
    forward = _moe_forward(c, w)
    out = _phases(forward, w["grad"])  # warms up first: the profiled calls see no one-off set-up
    fwd_kernels, fwd_busy_ms = _gpu_kernels(forward)
    kernels, busy_ms = _gpu_kernels(lambda: forward().backward(w["grad"]))
    host_ms = out["host_fwd_ms"] + out["host_bwd_ms"]
    return out | {
        "kernels": kernels,
        "fwd_kernels": fwd_kernels,
        "host_ms": host_ms,
        "gpu_busy_ms": busy_ms,
        "gpu_fwd_busy_ms": fwd_busy_ms,
    }
