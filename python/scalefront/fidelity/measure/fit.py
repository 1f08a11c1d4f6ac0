"""The catalog figures of a recorded run, and its curves.

Each fitted figure is a median achieved rate over the run's kernels of its kind, divided by the base GPU's datasheet
figure (the entry keeps the base's peaks, so peak x figure is the measured rate):

- ``gemm_efficiency``: BF16 layer GEMMs of at least `SMALL_GEMM_FLOPS` (50 GFLOP a pass), each counted over its
  forward, data- and weight-gradient passes (3 x 2mkn FLOPs over the three times), / ``peak_bf16_tflops``;
- ``small_gemm_efficiency``: the same over the smaller ones whose dimensions are all at least `MIN_COMPUTE_DIM`
  (narrower GEMMs, the routers, are memory-bound: the model's roofline times them by their bytes);
- ``gemm_efficiency_fp8``: FP8 layer GEMMs the same way over the passes measured, else (a gpu_bench.py run, which
  has none) its large FP8 GEMMs, / ``peak_fp8_tflops``;
- ``attention_efficiency``: the table of fused causal attention forward+backward with PyTorch's default backend
  (cuDNN on Hopper) by heads per GPU and sequence length, FLOPs counted causal as the model counts them
  (3.5 x 2 b h s^2 d), / ``peak_bf16_tflops``, when the run measured every cell (`bench.py --attention-grid`);
  ``attention_efficiency_fa2`` the same with the FlashAttention-2 backend (``flash``). A cell whose forward+
  backward took less than `GPU_BOUND_MS` is bound by eager PyTorch's launches, not the kernels: it is read from
  its forward rate times the median forward+backward / forward ratio of the backend's longer cells;
- ``hbm_efficiency``: the median of the streaming kernels (copy, triad; bytes read + written), / ``hbm_gbytes_per_s``.

These are sustained rates of the kernels a training step runs, not the best large-GEMM burst (MAMF): the compute
model multiplies nothing on top of them (docs/design/fidelity-v3.md).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from scalefront._core import SMALL_GEMM_FLOPS
from scalefront.errors import UsageError
from scalefront.fidelity.measure.cases import ATTENTION_GRID_HEADS, ATTENTION_GRID_SEQS, PASSES
from scalefront.fidelity.measure.driver import tflops
from scalefront.fidelity.measure.replay import Run
from scalefront.fidelity.measure.rows import AttentionRow, ExpertRow, GemmRow
from scalefront.inputs.catalog.entries import GpuEntry
from scalefront.inputs.catalog.measured import (
    AttentionPoint,
    ExpertPoint,
    GemmPoint,
    LargeGemmPoint,
    Measured,
    RoutingPoint,
)

__all__ = ["FIGURES", "Figure", "Fit", "fit_run"]

#: The catalog figures a run can fit, in the catalog's order.
FIGURES = (
    "gemm_efficiency",
    "small_gemm_efficiency",
    "gemm_efficiency_fp8",
    "attention_efficiency",
    "attention_efficiency_fa2",
    "hbm_efficiency",
)
#: GEMMs with a dimension under this are memory-bound (routers: n = 8-256): they fit no compute rate.
MIN_COMPUTE_DIM = 512
#: Forward+backward attention calls shorter than this are bound by eager PyTorch's autograd launches (0.2-0.45 ms
#: for any smaller call on H200, data/measurements/h200-measure-grid.json), not by the kernels.
GPU_BOUND_MS = 1.0
_T = TypeVar("_T")


@dataclass(frozen=True)
class Figure:
    """A fitted figure: `rate` (TF/s or GB/s, `unit`) over the base's `peak`, and what the rate is the median of;
    a table's `cells` (fractions of the peak by heads and sequence length) where the figure is one."""

    name: str
    rate: float
    peak: float
    unit: str
    basis: str
    cells: tuple[tuple[float, ...], ...] | None = None

    @property
    def value(self) -> float | list[list[float]]:
        """The figure as written: three decimals (the third is already noise on one card); a table's rows."""
        if self.cells is not None:
            return [list(row) for row in self.cells]
        return round(self.rate / self.peak, 3)


@dataclass(frozen=True)
class Fit:
    base_id: str
    base: GpuEntry
    run: Run
    figures: dict[str, Figure]
    #: Figures the run has no data for, with why (they stay the base's).
    not_fitted: dict[str, str]
    measured: Measured
    #: The date the sources cite: the run's, else the one given (a gpu_bench.py run records none).
    date: str


def gemm_tflops(r: GemmRow) -> float:
    """A layer GEMM's rate over the passes measured."""
    return tflops(len(r.ms) * 2.0 * r.m * r.k * r.n, sum(r.ms.values()))


def attention_tflops(r: AttentionRow) -> float:
    """Forward+backward rate, FLOPs counted causal: 3.5 x b h s^2 (d_qk + d_v) (`cases.attention_fwd_flops`)."""
    return tflops(3.5 * r.batch * r.heads * r.seq * r.seq * (r.head_dim + r.v_head_dim), r.fwdbwd_ms)


def _median_figure(name: str, rates: Sequence[float], peak: float, unit: str, basis: str) -> Figure | None:
    if not rates or peak <= 0:
        return None
    return Figure(name, statistics.median(rates), peak, unit, f"median of {len(rates)} {basis}")


def _is_small(r: GemmRow) -> bool:
    return 2.0 * r.m * r.k * r.n < SMALL_GEMM_FLOPS


def _gemm_figures(run: Run, gpu: GpuEntry) -> list[Figure | None]:
    bf16 = [r for r in run.gemms if r.dtype == "bf16" and len(r.ms) == len(PASSES)]
    large = [gemm_tflops(r) for r in bf16 if not _is_small(r)]
    small = [gemm_tflops(r) for r in bf16 if _is_small(r) and min(r.m, r.k, r.n) >= MIN_COMPUTE_DIM]
    fp8_rows = [r for r in run.gemms if r.dtype == "fp8"]
    passes = sorted({p for r in fp8_rows for p in r.ms}, key=PASSES.index)
    fp8 = _median_figure(
        "gemm_efficiency_fp8",
        [gemm_tflops(r) for r in fp8_rows],
        gpu.peak_fp8_tflops,
        "TF/s",
        f"FP8 layer GEMMs ({', '.join(passes)})",
    )
    if fp8 is None:
        mamf = [g.tflops for g in run.large if g.dtype == "fp8"]
        fp8 = _median_figure("gemm_efficiency_fp8", mamf, gpu.peak_fp8_tflops, "TF/s", "large FP8 GEMMs (forward)")
    passes_text = "(forward, data and weight gradient)"
    return [
        _median_figure(
            "gemm_efficiency",
            large,
            gpu.peak_bf16_tflops,
            "TF/s",
            f"BF16 layer GEMMs of 50 GFLOP and more {passes_text}",
        ),
        _median_figure(
            "small_gemm_efficiency",
            small,
            gpu.peak_bf16_tflops,
            "TF/s",
            f"BF16 layer GEMMs under 50 GFLOP, every dimension {MIN_COMPUTE_DIM} or more {passes_text}",
        ),
        fp8,
    ]


def _attention_table(name: str, run: Run, gpu: GpuEntry, backend: str, what: str) -> Figure | None:
    """The attention table of `backend`, when the run measured every cell (see the module's docstring)."""
    rows = [r for r in run.attention if r.backend == backend and r.batch == 1 and r.head_dim == r.v_head_dim == 128]
    cells: dict[tuple[int, int], list[AttentionRow]] = {}
    for r in rows:
        cells.setdefault((r.heads, r.seq), []).append(r)
    grid = [(h, s) for h in ATTENTION_GRID_HEADS for s in ATTENTION_GRID_SEQS]
    if not all(cell in cells for cell in grid):
        return None
    bound = [r for r in rows if r.fwdbwd_ms >= GPU_BOUND_MS]
    ratio = statistics.median(attention_tflops(r) / forward_tflops(r) for r in bound) if bound else 1.0

    def rate(r: AttentionRow) -> float:
        return attention_tflops(r) if r.fwdbwd_ms >= GPU_BOUND_MS else forward_tflops(r) * ratio

    peak = gpu.peak_bf16_tflops
    table = tuple(
        tuple(round(statistics.median(rate(r) for r in cells[(h, s)]) / peak, 3) for s in ATTENTION_GRID_SEQS)
        for h in ATTENTION_GRID_HEADS
    )
    basis = (
        f"table of {len(grid)} {what} causal attention cells, forward+backward (heads per GPU "
        f"{ATTENTION_GRID_HEADS[0]}-{ATTENTION_GRID_HEADS[-1]} x sequence {ATTENTION_GRID_SEQS[0]:,}-"
        f"{ATTENTION_GRID_SEQS[-1]:,}; {sum(r.fwdbwd_ms < GPU_BOUND_MS for r in rows)} calls under {GPU_BOUND_MS:g} ms "
        f"read from their forward x {ratio:.2f}, the median forward+backward / forward of the {len(bound)} longer)"
    )
    median_rate = statistics.median(c for row in table for c in row) * peak
    return Figure(name, median_rate, peak, "TF/s", basis, table)


def forward_tflops(r: AttentionRow) -> float:
    """Forward rate, FLOPs counted causal: b h s^2 (d_qk + d_v) (`cases.attention_fwd_flops`)."""
    return tflops(r.batch * r.heads * r.seq * r.seq * (r.head_dim + r.v_head_dim), r.fwd_ms)


def _hbm_figure(run: Run, gpu: GpuEntry) -> Figure | None:
    streams = [v for v in (run.copy_gbytes_per_s, run.triad_gbytes_per_s) if v is not None]
    return _median_figure("hbm_efficiency", streams, gpu.hbm_gbytes_per_s, "GB/s", "streaming kernels (copy, triad)")


_WHY_NOT = {
    "gemm_efficiency": "the run has no BF16 layer GEMMs of 50 GFLOP or more with all three passes",
    "small_gemm_efficiency": "the run has no BF16 layer GEMMs under 50 GFLOP with all three passes",
    "gemm_efficiency_fp8": "the run has no FP8 GEMMs (or the GPU has no FP8)",
    "attention_efficiency": "the run has not every cell of the attention table with PyTorch's default backend "
    "(bench.py --attention-grid)",
    "attention_efficiency_fa2": "the run has not every cell of the attention table with the FlashAttention-2 backend "
    "(bench.py --attention-grid)",
    "hbm_efficiency": "the run has no HBM streaming kernels",
}


def fit_run(run: Run, base_id: str, gpu: GpuEntry, date: str) -> Fit:
    """The figures `run` identifies, on base GPU `gpu` (catalog id `base_id`), and its curves; `date` is cited when
    the run records none."""
    found = [
        *_gemm_figures(run, gpu),
        _attention_table("attention_efficiency", run, gpu, "default", "PyTorch-default (cuDNN)"),
        _attention_table("attention_efficiency_fa2", run, gpu, "flash", "FlashAttention-2"),
        _hbm_figure(run, gpu),
    ]
    figures = {f.name: f for f in found if f is not None}
    for f in figures.values():
        if f.rate > f.peak:
            raise UsageError(
                f"{run.files[0]}: {f.name}: the {f.basis} run at {f.rate:,.0f} {f.unit}, above GPU {base_id!r}'s "
                f"{f.peak:,.0f} {f.unit}; is --gpu the GPU that was measured ({run.gpu})?"
            )
    if not figures:
        raise UsageError(f"{run.files[0]}: nothing to fit: no GEMM, attention or HBM measurement in the run")
    not_fitted = {name: why for name, why in _WHY_NOT.items() if name not in figures}
    date = run.date or date
    ordered = {n: figures[n] for n in FIGURES if n in figures}
    return Fit(base_id, gpu, run, ordered, not_fitted, measured_of(run, date), date)


def _grouped(items: Iterable[_T], key: Callable[[_T], tuple[object, ...]]) -> dict[tuple[object, ...], list[_T]]:
    groups: dict[tuple[object, ...], list[_T]] = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return dict(sorted(groups.items(), key=lambda kv: tuple(map(str, kv[0]))))


def _rate(rows: Sequence[GemmRow], p: str) -> float | None:
    rates = [tflops(2.0 * r.m * r.k * r.n, r.ms[p]) for r in rows if p in r.ms]
    return round(statistics.median(rates), 1) if rates else None


def _gemm_points(rows: Iterable[GemmRow]) -> list[GemmPoint]:
    groups = _grouped(rows, lambda r: (r.m, r.k, r.n))
    points = [
        GemmPoint(m=g[0].m, k=g[0].k, n=g[0].n, **{f"{p}_tflops": _rate(g, p) for p in PASSES}) for g in groups.values()
    ]
    return sorted(points, key=lambda p: (p.m, p.k, p.n))


def _attention_point(r: AttentionRow) -> AttentionPoint:
    fwd = r.batch * r.heads * r.seq * r.seq * (r.head_dim + r.v_head_dim)
    return AttentionPoint(
        heads=r.heads,
        kv_heads=r.kv_heads,
        head_dim=r.head_dim,
        v_head_dim=r.v_head_dim,
        seq=r.seq,
        batch=r.batch,
        backend=r.backend,
        fwd_tflops=round(tflops(fwd, r.fwd_ms), 1),
        fwdbwd_tflops=round(attention_tflops(r), 1),
    )


def _expert_point(r: ExpertRow) -> ExpertPoint:
    tokens = r.experts_local * r.tokens_per_expert
    fwd = 2.0 * tokens * r.hidden * r.ffn * ((2 if r.gated else 1) + 1)

    def rate(flops: float, ms: float | None) -> float | None:
        return None if ms is None else round(tflops(flops, ms), 1)

    return ExpertPoint(
        hidden=r.hidden,
        ffn=r.ffn,
        experts_local=r.experts_local,
        tokens_per_expert=r.tokens_per_expert,
        grouped_fwd_tflops=rate(fwd, r.grouped_fwd_ms),
        grouped_dgrad_tflops=rate(fwd, r.grouped_dgrad_ms),
        loop_fwd_tflops=round(tflops(fwd, r.loop_fwd_ms), 1),
        loop_wgrad_tflops=round(tflops(2.0 * tokens * r.ffn * r.hidden, r.loop_wgrad_down_ms), 1),
    )


def run_text(run: Run) -> str:
    """The run as a source cites it: device, software, tools and files."""
    software = ", ".join(
        x for x in (f"torch {run.torch}" if run.torch else "", f"driver {run.driver}" if run.driver else "") if x
    )
    return f"{run.gpu} ({software or 'software not recorded'}) by {' + '.join(dict.fromkeys(run.tools))}"


def measured_of(run: Run, date: str) -> Measured:
    """The `[<id>.measured]` table of `run`."""
    large = {
        d: [LargeGemmPoint(m=g.m, k=g.k, n=g.n, fwd_tflops=round(g.tflops, 1)) for g in run.large if g.dtype == d]
        for d in ("bf16", "fp8")
    }
    return Measured(
        source=f"measured on {run_text(run)}; record: {', '.join(run.files)}; {date}",
        device=run.gpu,
        hbm_copy_gbytes_per_s=None if run.copy_gbytes_per_s is None else round(run.copy_gbytes_per_s, 1),
        hbm_triad_gbytes_per_s=None if run.triad_gbytes_per_s is None else round(run.triad_gbytes_per_s, 1),
        gemm_bf16=_gemm_points(r for r in run.gemms if r.dtype == "bf16"),
        gemm_fp8=_gemm_points(r for r in run.gemms if r.dtype == "fp8"),
        gemm_bf16_large=large["bf16"],
        gemm_fp8_large=large["fp8"],
        attention=[_attention_point(r) for r in run.attention],
        experts=[_expert_point(r) for r in run.experts],
        token_routing=[
            RoutingPoint(
                hidden=r.hidden,
                tokens=r.tokens,
                experts=r.experts,
                top_k=r.top_k,
                route_ms=round(r.route_ms, 4),
                permute_ms=round(r.permute_ms, 4),
                unpermute_ms=round(r.unpermute_ms, 4),
            )
            for r in run.routing
        ],
    )
