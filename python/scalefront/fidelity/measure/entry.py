"""A fit as `scalefront measure` prints it (the figures, base -> measured, with the rates behind them) and as it
writes it: a catalog file with the GPU entry (fitted figures sourced to the run, every other figure and source the
base GPU's), its `[<id>.measured]` curves, and a copy of the base's price, for `--catalog FILE --gpu NAME`."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from scalefront._core import __version__
from scalefront.fidelity.catalog_toml import entry_lines, toml_value
from scalefront.fidelity.measure.fit import Fit, gemm_tflops, run_text
from scalefront.fidelity.measure.host_rows import host_lines, host_terms
from scalefront.fidelity.measure.replay import Run
from scalefront.inputs.catalog.loader import Catalog

__all__ = ["EAGER_BASE", "framework_id", "framework_lines", "host_only", "render", "render_host_toml", "render_toml"]

#: The framework whose terms a measured host's entry keeps beside the host figures: the probe times eager PyTorch.
EAGER_BASE = "eager-pytorch"
#: The host terms a run can identify (`host_rows.HostTerms`), in the catalog's order.
HOST_TERMS = ("host_s_per_kernel", "moe_host_kernels", "moe_host_kernels_per_expert")


def _spread(values: Sequence[float], unit: str) -> str:
    return f"{min(values):,.0f} / {statistics.median(values):,.0f} / {max(values):,.0f} {unit} (min / median / max)"


def _curves_text(fit: Fit) -> list[str]:
    run, m = fit.run, fit.measured
    lines = []
    for dtype in ("bf16", "fp8"):
        rows = [gemm_tflops(r) for r in run.gemms if r.dtype == dtype]
        if rows:
            lines.append(f"  {dtype.upper()} layer GEMMs, {len(rows)}: {_spread(rows, 'TF/s')}")
    by_heads: dict[str, dict[int, list[float]]] = {}
    for a in m.attention:
        by_heads.setdefault(a.backend, {}).setdefault(a.heads, []).append(a.fwdbwd_tflops)
    for backend, heads in sorted(by_heads.items()):
        shown = ", ".join(f"{h}: {statistics.median(r):,.0f}" for h, r in sorted(heads.items()))
        lines.append(f"  attention {backend}, forward+backward TF/s by heads per GPU (median): {shown}")
    by_tokens: dict[int, list[float]] = {}
    for e in m.experts:
        by_tokens.setdefault(e.tokens_per_expert, []).append(e.grouped_fwd_tflops or e.loop_fwd_tflops)
    for tokens, rates in sorted(by_tokens.items()):
        lines.append(f"  routed experts, {tokens:,} tokens per expert: {_spread(rates, 'TF/s')} forward")
    return lines


def render(fit: Fit) -> str:
    """The fitted figures (base -> measured), the curves in brief, what was not fitted and why."""
    run = fit.run
    lines = [f"measured {run_text(run)}, {fit.date}: {', '.join(run.files)}", *_curves_text(fit)]
    lines += [*host_lines(run.host_launch, list(run.host)), ""]
    lines.append(f"fitted figures ({fit.base_id} -> measured):")
    for name, f in fit.figures.items():
        if f.cells is not None:
            was = statistics.median(v for row in getattr(fit.base, name) for v in row)
            lines.append(f"  {name:<26} table, median cell {was:.3g} -> {f.rate / f.peak:.3g}: {f.basis}")
            continue
        base = getattr(fit.base, name)
        lines.append(f"  {name:<26} {base:>5g} -> {f.value:<6g} {f.basis}: {f.rate:,.1f} of {f.peak:,.0f} {f.unit}")
    lines += [f"  {name:<26} not fitted: {why}" for name, why in fit.not_fitted.items()]
    if run.failed:
        lines.append(
            f"  not available in the run ({len(run.failed)}): {run.failed[0]}" + (" ..." if len(run.failed) > 1 else "")
        )
    return "\n".join(lines)


def _source(fit: Fit, name: str, command: str) -> str:
    f = fit.figures[name]
    rate = f"median cell {f.rate:,.1f} / {f.peak:,.0f}" if f.cells is not None else f"{f.rate:,.1f} / {f.peak:,.0f}"
    return (
        f"measured: {f.basis}, {rate} {f.unit} of the datasheet; {run_text(fit.run)}, "
        f"record: {', '.join(fit.run.files)}; `{command}`; {fit.date}"
    )


def _measured_lines(header: str, fit: Fit) -> list[str]:
    lines = [f"[{header}]"]
    for name, value in fit.measured.model_dump(exclude_none=True).items():
        if isinstance(value, list):
            if value:
                lines += [f"{name} = [", *(f"    {_inline(point)}," for point in value), "]"]
        else:
            lines.append(f"{name} = {toml_value(value)}")
    return lines


def _inline(point: dict[str, Any]) -> str:
    return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in point.items() if v is not None) + " }"


def render_toml(fit: Fit, name: str, catalog: Catalog, command: str) -> str:
    """The measured GPU as a catalog file (see the module's docstring); `command` is cited in the sources."""
    base = fit.base
    fitted = {k: f.value for k, f in fit.figures.items()}
    sources = {k: _source(fit, k, command) if k in fitted else v for k, v in base.sources.items()}
    lines = [
        f"# GPU catalog entry written by scalefront measure ({__version__}) from a run on {fit.run.gpu}, {fit.date}:",
        *[f"#   {file}" for file in fit.run.files],
        f"# Command: {command}",
        f"# Base GPU {fit.base_id}: every figure not fitted, the price and their sources are its.",
        f"# Fitted (median rate / datasheet): {', '.join(fitted) or 'nothing'}.",
        *[f"# Not fitted: {k}: {why}." for k, why in fit.not_fitted.items()],
        f"# [gpus.{name}.measured]: the kernel rates by shape the fit is the median of.",
        f"# Use: scalefront eval --catalog FILE --gpu {name} ...",
        "",
    ]
    overrides: dict[str, Any] = {**fitted, "name": f"{base.name}, measured"}
    lines += entry_lines(f"gpus.{name}", base, overrides, sources, skip=("measured",))
    lines += ["", *_measured_lines(f"gpus.{name}.measured", fit)]
    price = catalog.gpu_prices.get(fit.base_id)
    if price is not None:
        lines += ["", *entry_lines(f"prices.gpu.{name}", price, {}, dict(price.sources))]
    host = framework_lines(fit.run, name, catalog, command, fit.date)
    return "\n".join([*lines, *(["", *host] if host else [])]) + "\n"


def framework_id(name: str) -> str:
    """The id of the framework entry a run with a host probe writes beside GPU `name`."""
    return f"{name}-eager"


def framework_lines(run: Run, name: str, catalog: Catalog, command: str, date: str) -> list[str]:
    """The run's host terms as `[frameworks.<name>-eager]`: eager PyTorch's other terms kept (its entry's sources),
    the host figures the run identifies sourced to it; none without a MoE layer in the host probe."""
    terms = host_terms(list(run.host))
    if terms is None:
        return []
    base = catalog.framework(EAGER_BASE)
    where = f"{run_text(run)}, record: {', '.join(run.files)}; `{command}`; {run.date or date}"
    how = {
        "host_s_per_kernel": f"measured: median host time per kernel over {terms.layers} MoE layers forward and "
        "backward in eager PyTorch",
        "moe_host_kernels": f"measured: kernels beside the experts, the intercept of a line through {terms.looped} "
        "looped MoE layers against their local experts",
        "moe_host_kernels_per_expert": "measured: kernels per looped expert, that line's slope",
    }
    fitted = {k: float(f"{v:.3g}") for k in HOST_TERMS if (v := getattr(terms, k)) is not None}
    sources = {k: f"{how[k]}; {where}" if k in fitted else v for k, v in base.sources.items()}
    overrides = {**fitted, "name": f"{base.name}, host measured on {run.gpu}"}
    header = [
        f"# Framework entry from the run's host probe: {EAGER_BASE}'s terms with the host figures measured",
        f"# ({', '.join(fitted)}). Use: scalefront eval --catalog FILE --framework {framework_id(name)} ...",
        "",
    ]
    return header + entry_lines(f"frameworks.{framework_id(name)}", base, overrides, sources)


def host_only(run: Run) -> bool:
    """The run holds a host probe and no GPU kernel (`bench.py --only-host`): no GPU entry can be fitted."""
    gpu = run.gemms or run.large or run.attention or run.experts or run.copy_gbytes_per_s is not None
    return not gpu and bool(run.host)


def render_host_toml(run: Run, name: str, catalog: Catalog, command: str, date: str) -> str:
    """A host-only run as a catalog file: its framework entry alone."""
    lines = [
        f"# Framework catalog entry written by scalefront measure ({__version__}) from a host probe on {run.gpu}:",
        *[f"#   {file}" for file in run.files],
        f"# Command: {command}",
        "",
        *framework_lines(run, name, catalog, command, date),
    ]
    return "\n".join(lines) + "\n"
