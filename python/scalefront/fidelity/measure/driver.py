"""Runs a `Plan` on a `Device`, one case after another, reporting each result and the progress (count, rate,
ETA), into a record: a JSON object in the layout `gpu_bench.py` writes (``copy_GBps``, ``triad_GBps``, ``gemms``
rows of per-pass milliseconds, ``attention`` rows), with ``moe_bench.py``'s ``experts`` rows, plus what this tool
adds (``tool``, ``format``, the device's driver and CUDA versions, the date, the command, and how many rows the
plan had, so that a truncated run is told from a whole one).

Nothing is written here: an interrupted run (Ctrl-C raises KeyboardInterrupt out of `Device.measure`) leaves no
record. Standard library only: the device half of the package.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from .cases import (
    PASSES,
    AttentionCase,
    Case,
    ExpertCase,
    GemmCase,
    HbmCase,
    HostCase,
    Plan,
    attention_fwd_flops,
    expert_fwd_flops,
)

__all__ = ["FORMAT", "TOOL", "Device", "Status", "record_of", "result_text", "run_plan", "tflops"]

#: What a record written by this tool says it is (`tool`), and the version of its layout (`format`).
TOOL = "scalefront measure"
FORMAT = 1


class Device(Protocol):
    """A GPU that can time the cases: `describe` says what it is (``gpu``, ``torch``, ``cuda``, ``driver``,
    ``sms``, ...); `measure` times one case and returns milliseconds (GB/s for HBM) by the record's keys, or
    ``{"error": ...}`` when the kernel is not available there."""

    def describe(self) -> dict[str, Any]: ...
    def measure(self, case: Case) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Status:
    """Progress after a case: count, rate and ETA (what `ProgressLine` shows)."""

    done: int
    total: int
    elapsed_s: float

    @property
    def rate(self) -> float:
        return self.done / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def eta_s(self) -> float | None:
        return (self.total - self.done) / self.rate if self.rate > 0 else None


def tflops(flops: float, ms: float) -> float:
    """TFLOP/s of `flops` done in `ms` milliseconds."""
    return flops / (ms * 1e-3) / 1e12


def _gemm_text(c: GemmCase, v: dict[str, Any]) -> str:
    flops = 2.0 * c.m * c.k * c.n
    rates = ", ".join(f"{p} {tflops(flops, v[f'{p}_ms']):.0f}" for p in PASSES if f"{p}_ms" in v)
    u = c.uses[0]
    more = f" and {len(c.uses) - 1} more" if len(c.uses) > 1 else ""
    return f"{c.label} ({u.model} tp {u.tp} {u.gemm}{more}): {rates} TF/s"


def _host_text(c: HostCase, v: dict[str, Any]) -> str:
    if c.kind == "launch":
        per = ", ".join(f"{n} {v[f'{n}_host_us']:.1f}" for n in ("elementwise", "gemm", "linear_fwdbwd"))
        return f"{c.label}: host us per kernel {per}"
    each_us = v["host_ms"] * 1e3 / v["kernels"]
    return (
        f"{c.label}: {v['kernels']} kernels, host {v['host_ms']:.2f} ms ({each_us:.1f} us each), "
        f"GPU busy {v['gpu_busy_ms']:.2f} ms, wall {v['wall_ms']:.2f} ms"
    )


def result_text(case: Case, v: dict[str, Any]) -> str:
    """One line for a finished case."""
    if "error" in v:
        return f"{case.label}: not available: {v['error']}"
    if isinstance(case, HostCase):
        return _host_text(case, v)
    if isinstance(case, HbmCase):
        return f"{case.label}: copy {v['copy_GBps']:.0f} GB/s, triad {v['triad_GBps']:.0f} GB/s"
    if isinstance(case, GemmCase):
        return _gemm_text(case, v)
    if isinstance(case, AttentionCase):
        fwd = attention_fwd_flops(case)
        return (
            f"{case.label}: forward {tflops(fwd, v['fwd_ms']):.0f}, "
            f"forward+backward {tflops(3.5 * fwd, v['fwdbwd_ms']):.0f} TF/s"
        )
    flops = expert_fwd_flops(case)
    grouped = f"grouped {tflops(flops, v['grouped_fwd_ms']):.0f}, " if "grouped_fwd_ms" in v else ""
    return f"{case.label}: forward {grouped}loop {tflops(flops, v['loop_fwd_ms']):.0f} TF/s"


def run_plan(
    plan: Plan,
    device: Device,
    *,
    date: str,
    command: str,
    on_result: Callable[[Case, dict[str, Any], Status], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> dict[str, Any]:
    """Time every case of `plan` on `device` and return the record; `on_result` hears of each as it finishes."""
    info = device.describe()
    start = clock()
    results: list[tuple[Case, dict[str, Any]]] = []
    for case in plan.cases:
        values = device.measure(case)
        results.append((case, values))
        if on_result is not None:
            on_result(case, values, Status(len(results), len(plan.cases), clock() - start))
    return record_of(plan, info, results, wall_s=clock() - start, date=date, command=command)


def _rows(case: Case, values: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """The record section a case's results go to, and its rows there."""
    if isinstance(case, GemmCase):
        shape = {"dtype": case.dtype, "m": case.m, "k": case.k, "n": case.n}
        return "gemms", [
            {"model": u.model, "tp": u.tp, "tokens": u.tokens, "gemm": u.gemm, **shape, **values} for u in case.uses
        ]
    if isinstance(case, AttentionCase | ExpertCase | HostCase):
        # The case's fields (its dataclass fields) name the row's keys, as gpu_bench.py and moe_bench.py did.
        name = {AttentionCase: "attention", ExpertCase: "experts", HostCase: "host"}[type(case)]
        return name, [dataclasses.asdict(case) | values]
    return "hbm", [values]


def record_of(
    plan: Plan,
    info: dict[str, Any],
    results: list[tuple[Case, dict[str, Any]]],
    *,
    wall_s: float,
    date: str,
    command: str,
) -> dict[str, Any]:
    """The record of a finished run (see the module's docstring)."""
    sections: dict[str, list[dict[str, Any]]] = {"hbm": [], "gemms": [], "attention": [], "experts": [], "host": []}
    for case, values in results:
        name, rows = _rows(case, values)
        sections[name] += rows
    record: dict[str, Any] = {"tool": TOOL, "format": FORMAT, **info, "date": date, "command": command}
    record |= {"quick": plan.quick, "rep_ms": plan.rep_ms}
    if not sections["host"]:  # the host probe is asked for; a record without it keeps gpu_bench.py's layout
        del sections["host"]
    record["plan"] = {name: len(rows) for name, rows in sections.items()}
    for hbm in sections.pop("hbm"):
        record |= {"hbm_error": hbm["error"]} if "error" in hbm else {k: hbm[k] for k in ("copy_GBps", "triad_GBps")}
    return record | sections | {"wall_s": wall_s}
