"""Plain-text reports of the command line: one evaluation (where the time goes, memory, the run), a sweep's frontiers
and counts, and a network's bill of materials as a quote lists it."""

from __future__ import annotations

import math
import textwrap
from typing import TYPE_CHECKING, Any

import polars as pl

from scalefront._evaluation import Evaluation
from scalefront.units import REPORT_SCALES, scale_of

if TYPE_CHECKING:
    from scalefront.engine.sweep import SweepResult

_BAR_WIDTH = 30

_COMPONENTS = [
    ("compute", "compute_s"),
    ("recompute", "recompute_s"),
    ("TP comm", "tp_comm_s"),
    ("PP comm", "pp_comm_s"),
    ("DP comm", "dp_comm_s"),
    ("CP comm", "cp_comm_s"),
    ("EP comm", "ep_comm_s"),
    ("pipeline bubble", "bubble_s"),
    ("optimizer step", "optimizer_s"),
    ("step overhead", "overhead_s"),
    ("framework", "framework_s"),
    ("host wait", "host_wait_s"),
]


def _host_wait_note(e: Evaluation) -> list[str]:
    """What the host-wait line means for this run and how to measure it, within 80 columns: MoE layers whose
    launches outpace the GPU, ZeRO-3 collectives issued by tensor (a slice and a copy per rank on the host)."""
    causes = []
    if e.params_active < e.params_total:
        causes.append("  MoE layers launch kernels slower than the GPU runs them;")
    if e.zero >= 3:
        causes.append("  ZeRO-3 collectives by tensor slice and copy once per rank on the host;")
    return [
        "  host wait: the GPU waits for the host (the framework's host_s_per_kernel):",
        *causes,
        "  `scalefront measure --host` times your node's host",
    ]


def _interval(e: Evaluation, lo: float, hi: float, fmt: str) -> str:
    """`(90%: 6.1-7.0)` for a prediction interval; nothing when the error model gives none."""
    if lo == hi:
        return ""
    return f" ({e.interval:.0%}: {format(lo, fmt)}-{format(hi, fmt)})"


def _bar(fraction: float) -> str:
    cells = max(0.0, min(1.0, fraction)) * _BAR_WIDTH
    full = int(cells)
    return "#" * full + ("+" if cells - full >= 0.5 else "")


def _seconds(s: float) -> str:
    if s >= 1:
        return f"{s:8.3f} s "
    if s >= 1e-3:
        return f"{s * 1e3:8.2f} ms"
    return f"{s * 1e6:8.1f} us"


def _count(x: float) -> str:
    scaled, suffix = scale_of(x, REPORT_SCALES)
    return f"{scaled:.3g}{suffix}"


def suggested_segment(e: Evaluation, domain_gpus: int, server_gpus: int) -> int:
    """The Slurm segment NVIDIA's launcher would pick for a job that fills multi-server NVLink domains in rank order
    with a part-full last one (the greatest divisor of its servers up to a domain's); 0 where there is none."""
    servers, domain_servers = e.gpus // server_gpus, domain_gpus // server_gpus
    if e.nvlink_segment_nodes or domain_servers <= 1 or e.gpus <= domain_gpus or e.gpus % domain_gpus == 0:
        return 0
    if e.gpus % server_gpus:
        return 0
    segment = next(k for k in range(domain_servers, 0, -1) if servers % k == 0)
    return segment if segment > 1 else 0


def segment_note(e: Evaluation, domain_gpus: int, segment: int, segmented_step_s: float) -> list[str]:
    """A hint within 80 columns: the job part-fills its last NVLink domain, and in Slurm segments of `segment`
    servers its step would take `segmented_step_s`."""
    change = segmented_step_s / e.step_time_s - 1
    return [
        f"  placement  {e.gpus:,} GPUs fill {domain_gpus}-GPU NVLink domains in rank order, the last",
        "             part-full: groups that cross a domain ride the NICs. In Slurm",
        f"             segments of {segment} servers the step takes {segmented_step_s:.3f} s ({change:+.0%}):",
        f"             --nvlink-segment-nodes {segment}",
    ]


def render(e: Evaluation, notes: list[str] | None = None) -> str:
    """`scalefront eval`'s table, every line within 80 columns (a long one breaks between its items, never inside
    one, and goes on indented under its label)."""
    tiers = f"{e.network_tiers} switch tier{'s' if e.network_tiers != 1 else ''}"
    lines = [
        *wrap80(
            [
                f"{e.model} on {e.gpus:,} x {e.gpu} ({e.scale_up})",
                f"over {e.fabric},",
                f"{e.topology} {e.oversubscription:g}:1,",
                tiers,
            ],
            "",
            "  ",
            " ",
        ),
        *wrap80(
            [
                f"tp {e.tp} x pp {e.pp}"
                + (f" (vpp {e.vpp})" if e.vpp > 1 else "")
                + f" x dp {e.dp} x cp {e.cp}, ep {e.ep};",
                f"micro-batch {e.micro_batch},",
                f"{_micro_batches(e)},",
                f"global batch {e.global_batch} x {e.seq_len} tokens",
            ],
            "  parallel   ",
            " " * 13,
            " ",
        ),
        *wrap80(
            [
                f"ZeRO-{e.zero}",
                f"recompute {e.recompute}",
                f"sequence parallel {'on' if e.sequence_parallel else 'off'}",
                e.precision,
                f"overlap {e.overlap}",
            ],
            "  settings   ",
            " " * 13,
            ", ",
        ),
        *([f"  placement  in NVLink segments of {e.nvlink_segment_nodes} servers"] if e.nvlink_segment_nodes else []),
        *(notes or []),
        "",
    ]
    if not e.feasible:
        fits = textwrap.wrap(f"DOES NOT FIT: {e.reason}", 80, initial_indent="  ", subsequent_indent="    ")
        lines += [*fits, ""]
    step = [
        f"step time {e.step_time_s:.3f} s{_interval(e, e.step_time_s_lo, e.step_time_s_hi, '.3g')}",
        f"{e.tokens_per_s:,.0f} tokens/s",
        f"MFU {e.mfu:.1%}",
        f"{e.tflops_per_gpu:.0f} TFLOP/s per GPU",
        f"scaling efficiency {e.scaling_efficiency:.1%}",
    ]
    lines += [*wrap80(step, "", " " * 10, "   "), "", "where the time goes (exposed)"]
    lines += _breakdown_lines(e)
    return "\n".join(lines + _memory_and_cost_lines(e))


def wrap80(items: list[str], first: str, rest: str, sep: str) -> list[str]:
    """`items` joined by `sep` after `first`, broken between items into lines of at most 80 columns, each after the
    first starting with `rest` (an item longer than a line keeps a line of its own)."""
    glued = sep.join(item.replace(" ", "\xa0") for item in items)  # a no-break space keeps an item whole
    out = textwrap.wrap(
        glued, 80, initial_indent=first, subsequent_indent=rest, break_long_words=False, break_on_hyphens=False
    )
    return [line.replace("\xa0", " ") for line in out]


def _breakdown_lines(e: Evaluation) -> list[str]:
    lines = []
    for label, key in _COMPONENTS:
        value = getattr(e.breakdown, key)
        if value <= 0 and key not in ("compute_s",):
            continue
        share = value / e.step_time_s
        lines.append(f"  {label:<16}{_seconds(value)} {share:6.1%}  {_bar(share)}")
    if e.breakdown.host_wait_s > 0:
        lines += _host_wait_note(e)
    hidden = [(k.removesuffix("_comm_hidden_s").upper(), v) for k, v in vars(e.hidden).items() if v > 0]
    if hidden:
        lines += wrap80([f"{k} {_seconds(v).strip()}" for k, v in hidden], "  hidden behind compute: ", "    ", ", ")
    return lines


def _memory_and_cost_lines(e: Evaluation) -> list[str]:
    m = e.memory
    interval = _interval(e, e.cost_to_train_usd_lo, e.cost_to_train_usd_hi, ",.0f")
    return [
        "",
        f"memory per GPU {m.memory_per_gpu_bytes / 1e9:.1f} GB of {m.hbm_bytes / 1e9:.0f} GB "
        f"(margin {m.memory_margin_bytes / 1e9:+.1f} GB)",
        *wrap80(
            [
                f"weights {m.weights_bytes / 1e9:.1f}",
                f"gradients {m.gradients_bytes / 1e9:.1f}",
                f"optimizer {m.optimizer_bytes / 1e9:.1f}",
                f"activations {m.activations_bytes / 1e9:.1f}",
                f"reserve {m.reserve_bytes / 1e9:.1f} GB",
            ],
            "  ",
            "  ",
            "  ",
        ),
        "",
        *wrap80(
            [
                f"model {_count(e.params_total)} parameters ({_count(e.params_active)} active),",
                f"{e.model_flops_per_token / 1e9:,.0f} GFLOP per token",
            ],
            "",
            "      ",
            " ",
        ),
        *wrap80(
            [
                f"{_count(e.tokens)} tokens in {e.steps:,.0f} steps:",
                f"{e.time_to_train_days:,.1f} days"
                f"{_interval(e, e.time_to_train_days_lo, e.time_to_train_days_hi, ',.1f')},",
                f"{e.energy_mwh:,.0f} MWh",
            ],
            "run   ",
            "      ",
            " ",
        ),
        *wrap80(
            [
                f"${e.cost_to_train_usd:,.0f} to train ({e.cost_mode}){interval};",
                f"rent ${e.cost_rent_usd:,.0f},",
                f"own ${e.cost_own_usd:,.0f}",
                f"(capex ${e.capex_usd:,.0f},",
                f"network ${e.network_capex_usd:,.0f})",
            ],
            "cost  ",
            "      ",
            " ",
        ),
    ]


def _micro_batches(e: Evaluation) -> str:
    return f"{e.micro_batches} micro-batch" + ("es" if e.micro_batches != 1 else "")


_FRONTIER_COLUMNS = [
    "gpus",
    "gpu",
    "topology",
    "tp",
    "pp",
    "dp",
    "cp",
    "ep",
    "vpp",
    "micro_batch",
    "recompute",
    "zero",
    "overlap",
    "time_to_train_days",
    "cost_to_train_usd",
    "mfu",
    "memory_per_gpu_gb",
]


def _cost_mode_note(result: SweepResult) -> str:
    """Which cost `cost_to_train_usd` is: rent (GPU-hours at the rental price) or own (the levelised TCO)."""
    if result.cost_mode == "rent":
        return "(cost_to_train_usd in rent mode: GPU-hours at the rental price; network prices do not enter it)"
    return "(cost_to_train_usd in own mode: the run's busy time at the cluster's levelised total cost of ownership)"


def render_sweep(result: SweepResult, frontier: pl.DataFrame) -> str:
    """The frontiers per group, the best configuration per (fabric, GPU count), and the sweep's counts."""
    groups = result.group_by
    objectives = result.objectives
    shown = [c for c in [*groups, *objectives, *_FRONTIER_COLUMNS] if c in frontier.columns]
    shown = list(dict.fromkeys(shown))
    rejected = ", ".join(f"{k} {v:,}" for k, v in sorted(result.rejected.items(), key=lambda kv: -kv[1]))
    timing = (
        f" in {result.wall_s:.2f} s ({result.evaluated / max(result.wall_s, 1e-9) / 1e6:,.1f}M/s)"
        if math.isfinite(result.wall_s)
        else " (merged from its parts)"
    )
    lines = [
        f"scenario {result.name}: {result.evaluated:,} configurations{timing}, {result.feasible:,} feasible"
        + (" (CANCELLED)" if result.cancelled else ""),
        f"rejected: {rejected or 'none'}",
        "",
        f"Pareto frontier ({' vs '.join(objectives)}) per {', '.join(groups)}:",
        _cost_mode_note(result),
        str(frontier.select(shown)),
        "",
        "fastest configuration per fabric and GPU count:",
        str(
            result.best_per_fabric_and_size().select(
                [
                    c
                    for c in [
                        "fabric",
                        "gpus",
                        "topology",
                        "tp",
                        "pp",
                        "dp",
                        "cp",
                        "vpp",
                        "recompute",
                        "zero",
                        "time_to_train_days",
                        "cost_to_train_usd",
                        "mfu",
                    ]
                ]
            )
        ),
    ]
    return "\n".join(lines)


def render_bom(b: dict[str, Any]) -> str:
    """A bill of materials as a quote lists it (parts, then capex lines, then yearly lines)."""
    if b["tiers"] == 0:
        tiers_text = "no switches: servers wired to their neighbours"
    elif b["topology_kind"] == "dragonfly":
        tiers_text = "1 tier of routers"
    else:
        names = ["leaf", "spine", "core"] + [f"tier {i}" for i in range(4, 10)]
        tiers_text = f"{b['tiers']} tier{'s' if b['tiers'] != 1 else ''}: " + ", ".join(
            f"{n:,.0f} {names[i]}" for i, n in enumerate(b["switches_by_tier"])
        )
    per_gpu = b["network_capex_usd"] / b["gpus"]
    lines = [
        f"{b['gpus']:,} x {b['gpu']} on {b['fabric']}, {b['topology']} {b['oversubscription']:g}:1 ({tiers_text})",
        f"  NIC ports               {b['nics']:>12,}   ${b['nics_usd']:>14,.0f}",
        f"  switches                {b['switches_total']:>12,}   ${b['switches_usd']:>14,.0f}",
        f"  optical modules         {b['transceivers']:>12,}   ${b['optics_usd']:>14,.0f}"
        f"   ({b['nic_optics']:,} NIC-side, {b['switch_optics']:,} switch-side)",
        f"  copper (DAC) cables     {b['dac_cables']:>12,}   ${b['copper_usd']:>14,.0f}"
        f"   ({b['copper_links']:,} host links)",
    ]
    if b["acc_cables"]:
        lines.append(
            f"  active copper (ACC)     {b['acc_cables']:>12,}   ${b['active_copper_usd']:>14,.0f}"
            f"   ({b['active_copper_links']:,} host links)"
        )
    lines.append(f"  fibres                  {b['fibres']:>12,}   ${b['fibre_usd']:>14,.0f}")
    if b["fabric_manager_usd"]:
        lines.append(f"  fabric manager          {'':>12}   ${b['fabric_manager_usd']:>14,.0f}")
    if b["nvlink_switch_trays"]:
        lines.append(f"  NVLink switch trays     {b['nvlink_switch_trays']:>12,}   ${b['nvlink_trays_usd']:>14,.0f}")
    lines += [
        f"  network hardware        {'':>12}   ${b['network_capex_usd']:>14,.0f}   (${per_gpu:,.0f} per GPU)",
        f"  spares                  {'':>12}   ${b['spares_usd']:>14,.0f}",
        f"  installation            {'':>12}   ${b['installation_usd']:>14,.0f}",
        f"  out-of-band management  {b['racks']:>12,}   ${b['oob_usd']:>14,.0f}   (racks)",
        f"  support per year        {'':>12}   ${b['support_usd_per_year']:>14,.0f}",
        f"  NOS licences per year   {'':>12}   ${b['licences_usd_per_year']:>14,.0f}",
        f"  network power           {b['network_power_w'] / 1e3:>12,.1f} kW",
    ]
    return "\n".join(lines)
