"""The host probe of a recorded run (`scalefront measure --host`, the record's ``host`` section), read, checked and
shown: eager PyTorch's host time per kernel launch on the node, and each MoE layer's launches, host time and GPU
busy time. These are figures of the node's CPU and the framework's software, not of the GPU: `host_terms` gives the
framework terms they identify (data/frameworks.toml `host_s_per_kernel`, `moe_host_kernels`,
`moe_host_kernels_per_expert`), which `measure` writes as an eager-PyTorch framework entry beside the GPU's."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from scalefront.fidelity.measure.rows import Problem, number, section_rows, text

__all__ = ["HostLaunch", "HostLayer", "HostTerms", "host_lines", "host_section", "host_terms"]

#: The launch probe's loops: a tiny element-wise kernel, a tiny GEMM, a small linear layer forward and backward.
LAUNCH_LOOPS = ("elementwise", "gemm", "linear_fwdbwd")


@dataclass(frozen=True)
class HostLaunch:
    """Host microseconds per kernel of each launch loop, on `cpu`."""

    cpu: str
    host_us: dict[str, float]


@dataclass(frozen=True)
class HostLayer:
    """One dropless MoE layer, forward and backward, in eager PyTorch: kernels launched, host and GPU busy time."""

    model: str
    tokens: int
    experts_local: int
    grouped: bool
    kernels: int
    host_ms: float
    gpu_busy_ms: float
    wall_ms: float

    @property
    def host_us_per_kernel(self) -> float:
        return self.host_ms * 1e3 / self.kernels


def _launch(where: str, row: dict[str, Any], bad: Problem) -> HostLaunch:
    host = {loop: number(row, f"{loop}_host_us", where, bad) for loop in LAUNCH_LOOPS}
    return HostLaunch(text(row, "cpu", where, bad, ""), host)


def _layer(where: str, row: dict[str, Any], bad: Problem) -> HostLayer:
    where = f"{where} ({text(row, 'model', where, bad, '')})"
    return HostLayer(
        model=text(row, "model", where, bad, ""),
        tokens=number(row, "tokens", where, bad, whole=True),
        experts_local=number(row, "experts_local", where, bad, whole=True),
        grouped=row.get("grouped") is True,
        kernels=number(row, "kernels", where, bad, whole=True),
        host_ms=number(row, "host_ms", where, bad),
        gpu_busy_ms=number(row, "gpu_busy_ms", where, bad),
        wall_ms=number(row, "wall_ms", where, bad),
    )


@dataclass(frozen=True)
class HostTerms:
    """The framework's host terms a run identifies: the median host time per kernel over its MoE layers, and,
    where its looped layers cover two or more local-expert counts, the least-squares line of their kernels against
    the local experts (intercept: the kernels beside the experts; slope: each looped expert's)."""

    host_s_per_kernel: float
    moe_host_kernels: float | None
    moe_host_kernels_per_expert: float | None
    layers: int
    looped: int


def host_terms(layers: list[HostLayer]) -> HostTerms | None:
    """The host terms of `layers` (see `HostTerms`), or None without a MoE layer."""
    if not layers:
        return None
    per_kernel = statistics.median(r.host_ms * 1e-3 / r.kernels for r in layers)
    loop = [(float(r.experts_local), float(r.kernels)) for r in layers if not r.grouped]
    if len({x for x, _ in loop}) < 2:
        return HostTerms(per_kernel, None, None, len(layers), len(loop))
    slope, intercept = statistics.linear_regression([x for x, _ in loop], [y for _, y in loop])
    return HostTerms(per_kernel, intercept, slope, len(layers), len(loop))


def host_section(doc: dict[str, Any], bad: Problem) -> tuple[HostLaunch | None, list[HostLayer], list[str]]:
    """The record's host rows (none when it has no ``host`` section), and those the run could not measure."""
    launch, layers, failed = None, [], []
    for where, row in section_rows(doc, "host", bad, required=False):
        kind = row.get("kind")
        if "error" in row:
            failed.append(f"{where} host {kind}: {row['error']}")
        elif kind == "launch":
            launch = _launch(where, row, bad)
        elif kind == "moe_layer":
            layers.append(_layer(where, row, bad))
        else:
            raise bad(where, f"kind: expected 'launch' or 'moe_layer', got {kind!r}")
    return launch, layers, failed


def host_lines(launch: HostLaunch | None, layers: list[HostLayer]) -> list[str]:
    """The host probe as `measure` prints it: per-launch times, then each MoE layer, host against GPU busy."""
    lines = []
    if launch is not None:
        per = ", ".join(f"{loop.replace('_', ' ')} {launch.host_us[loop]:.1f}" for loop in LAUNCH_LOOPS)
        lines.append(f"  host ({launch.cpu or 'CPU not named'}), eager PyTorch, us per kernel launched: {per}")
    if layers:
        bound = sum(r.host_ms > r.gpu_busy_ms for r in layers)
        median = statistics.median(r.host_us_per_kernel for r in layers)
        lines.append(
            f"  MoE layers forward+backward in eager PyTorch, {len(layers)}: {median:.1f} us of host time per kernel "
            f"(median); host-bound (host time over GPU busy time) in {bound}"
        )
        for r in layers:
            how = "grouped_mm" if r.grouped else "loop"
            lines.append(
                f"    {r.model} {r.tokens} tokens, {r.experts_local} experts local, {how}: {r.kernels} kernels, "
                f"host {r.host_ms:.2f} ms, GPU busy {r.gpu_busy_ms:.2f} ms, wall {r.wall_ms:.2f} ms"
            )
    return lines
