"""A fabric calibration as `scalefront calibrate` prints it (every point's measured and fitted bus bandwidth, the
fitted figures, the residuals) and as it writes it: a catalog file with the calibrated fabric, each fitted figure
sourced to its fit, for `--catalog`."""

from __future__ import annotations

import statistics
from pathlib import Path

from scalefront._core import __version__
from scalefront.fidelity.calibrate import MIN_SIZE_BYTES, Calibration, PointFit, figure_text, size_text, with_figures
from scalefront.fidelity.catalog_toml import entry_lines
from scalefront.inputs.catalog.loader import Catalog

__all__ = ["fitted_source", "render", "render_toml"]


def render(c: Calibration) -> str:
    """The points per run, the fitted figures and the residuals, as `scalefront calibrate` prints them."""
    s = c.setup
    lines = [
        f"calibrating {s.fabric_id} from {len(c.runs)} run{'s' if len(c.runs) != 1 else ''}, "
        f"{len(c.points)} points of {size_text(MIN_SIZE_BYTES)} and more; topology {s.topology_id} "
        f"{s.topology['oversubscription']:g}:1, scale-up {s.scale_up_id}"
    ]
    for run, why in c.skipped:
        lines.append(f"  not used: {run.where} {run.collective}, {run.nodes} node: {why}")
    by_run: dict[int, list[PointFit]] = {}
    for p in c.points:  # grouped once: a log of thousands of runs is not scanned once per run
        by_run.setdefault(id(p.run), []).append(p)
    for run in c.runs:
        pts = by_run.get(id(run), [])
        lines += [
            "",
            f"{run.where}  {run.collective}, {run.nodes} nodes x {run.gpus_per_node} GPUs ({run.ranks} ranks)",
            f"  {'size':>9}  {'measured GB/s':>13}  {'fitted GB/s':>11}  {'residual':>8}",
        ]
        lines += [
            f"  {size_text(p.size_bytes):>9}  {p.measured_busbw:>13.2f}  {p.fitted_busbw:>11.2f}  {p.residual:>+8.1%}"
            for p in pts
        ]
        med = statistics.median(abs(p.residual) for p in pts)
        worst = max(pts, key=lambda p: abs(p.residual))
        lines.append(f"  median |residual| {med:.1%}, worst {worst.residual:+.1%} at {size_text(worst.size_bytes)}")
    lines += ["", f"fitted figures ({s.fabric_id} -> calibrated):"]
    for name, value in c.fitted.items():
        lines.append(f"  {name:<32} {figure_text(getattr(s.fabric, name)):>6} -> {figure_text(value)}")
    for name, why in c.not_fitted.items():
        lines.append(f"  {name:<32} not fitted: {why}")
    lines += [f"  note: {note}" for note in c.notes]
    w = c.worst
    lines.append(
        f"all {len(c.points)} points: median |residual| {c.median_abs_residual:.1%}, worst {w.residual:+.1%} "
        f"({w.run.file}:{w.line}, {size_text(w.size_bytes)}); residual = fitted / measured bus bandwidth - 1"
    )
    return "\n".join(lines)


def fitted_source(c: Calibration) -> str:
    """The source of every fitted figure."""
    return (
        f"fitted by scalefront calibrate from {', '.join(c.files)} ({len(c.points)} points, median |residual| "
        f"{c.median_abs_residual:.1%}); {c.date}"
    )


def render_toml(c: Calibration, name: str, catalog: Catalog) -> str:
    """The calibrated fabric as a catalog file: `[fabrics.NAME]` (fitted figures with their fit as source, the
    base's figures and sources for the rest) and, when the base has one, a copy of its price as
    `[prices.fabric.NAME]` so that `eval`, `bom` and `roi` can use it."""
    s = c.setup
    base = s.fabric
    source = fitted_source(c)
    sources = {k: source if k in c.fitted else v for k, v in base.sources.items()}
    sources.update({k: source for k in c.fitted})
    runs = [
        f"#   {Path(r.file).name}:{r.line}  {r.collective}, {r.nodes} nodes x {r.gpus_per_node} GPUs" for r in c.runs
    ]
    w = c.worst
    lines = [
        f"# Fabric catalog entry written by scalefront calibrate ({__version__}) from nccl-tests output:",
        *runs,
        f"# Base fabric {s.fabric_id}; topology {s.topology_id} {s.topology['oversubscription']:g}:1, "
        f"scale-up {s.scale_up_id}; sizes of {size_text(MIN_SIZE_BYTES)} and more.",
        f"# Fitted: {', '.join(c.fitted) or 'nothing'}; every other figure is {s.fabric_id}'s.",
        *[f"# Not fitted: {k}: {why}." for k, why in c.not_fitted.items()],
        *[f"# Note: {note}." for note in c.notes],
        f"# Residuals (fitted / measured bus bandwidth - 1): median |r| {c.median_abs_residual:.1%}, "
        f"worst {w.residual:+.1%} ({Path(w.run.file).name}:{w.line}).",
        f"# Use: scalefront eval --catalog FILE --fabric {name} ...",
        "",
    ]
    entry = with_figures(base, {}).model_copy(update={"name": f"{base.name}, calibrated"})
    lines += entry_lines(f"fabrics.{name}", entry, {**c.fitted, "name": entry.name}, sources)
    price = catalog.fabric_price(s.fabric_id) if s.fabric_id.partition("@")[0] in catalog.fabric_prices else None
    if price is not None:
        lines += [""]
        lines += entry_lines(f"prices.fabric.{name}", price, {}, dict(price.sources))
    return "\n".join(lines) + "\n"
