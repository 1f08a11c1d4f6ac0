"""`scalefront inference`: one serving configuration (latency, throughput, cost per million tokens, KV-cache
capacity), or with ``--scenario`` a serving sweep's Pareto frontiers under service-level objectives."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from typing import TYPE_CHECKING, Any

from scalefront.cli.parser import Help, add_catalog_option, add_input_options, catalog_of, input_values
from scalefront.engine.export import write_text
from scalefront.engine.serving import ServingFrontier, frontiers_csv, run_serving_sweep
from scalefront.errors import UsageError
from scalefront.inputs.scenario.serving import parse_slo, read_serving_scenario, serving_objectives
from scalefront.inputs.scenario.serving_default import training_serving_scenario
from scalefront.inputs.serving import SERVING_DEFAULTS, SERVING_DOCS, ServingResult, serve_model
from scalefront.report import wrap80

if TYPE_CHECKING:
    from scalefront.cli.parser import Commands


def add(sub: Commands) -> None:
    p = sub.add_parser(
        "inference",
        help="serve a model: time to first token, time per output token, throughput and cost per million tokens",
        description="Evaluate one inference-serving configuration, or sweep a serving scenario's layouts to Pareto "
        "frontiers (--scenario). Without options: Llama 3 70B on one 8-GPU H100 server over InfiniBand NDR, TP 8, "
        "FP8, 1,000 tokens in and out, the largest batch the KV cache holds.",
        formatter_class=Help,
    )
    groups = add_input_options(p, "serve", grouped=True, defaults=SERVING_DEFAULTS, docs=SERVING_DOCS)
    add_catalog_option(groups["cost"])
    sweep = p.add_argument_group("sweep")
    sweep.add_argument(
        "--scenario",
        metavar="SCENARIO",
        help="a serving scenario (TOML, [serving]), or a training scenario, built-in id or TOML file (its [serving] "
        "table over the Serving tab's defaults): print its frontiers",
    )
    sweep.add_argument(
        "--slo",
        action="append",
        default=[],
        metavar="METRIC<=VALUE",
        help="a service-level objective every frontier point meets (tpot_s<=0.05, ttft_s<=2; repeatable)",
    )
    sweep.add_argument("--objectives", metavar="A,B", help="what the frontiers trade (serving metrics, 1-3)")
    sweep.add_argument("--out", metavar="FILE", help="write every frontier point as CSV")
    sweep.add_argument("--force", action="store_true", help="replace an existing --out file")
    p.add_argument("--json", action="store_true", help="print JSON instead of the text")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if not args.scenario:
        for option in ("slo", "objectives", "out"):
            if getattr(args, option):
                raise UsageError(f"--{option} goes with --scenario")
        result = serve_model(catalog_of(args), **input_values(args, "serve"))
        print(json.dumps(result.to_dict(), indent=2) if args.json else render(result))
        return 0
    scenario = training_serving_scenario(args.scenario, catalog_of(args)) or read_serving_scenario(args.scenario)
    if args.objectives:
        objectives = serving_objectives([n.strip() for n in args.objectives.split(",") if n.strip()])
        scenario = type(scenario)(scenario.fixed, scenario.clusters, scenario.axes, objectives, scenario.slos)
    frontiers = run_serving_sweep(scenario, catalog_of(args), [parse_slo(s) for s in args.slo])
    if args.out:
        write_text(frontiers_csv(frontiers), args.out, args.force)
        print(f"wrote {args.out}", file=sys.stderr)
    if args.json:
        print(json.dumps([f.to_dict() for f in frontiers], indent=2))
    else:
        print("\n\n".join(render_frontier(f, scenario.objectives) for f in frontiers))
    for f in frontiers:
        if not f.points:
            print(
                f"scalefront: no layout of {_design(f.cluster)} meets the SLOs ({f.evaluated:,} evaluated, "
                f"{f.over_slo:,} over them, {f.rejected:,} impossible)",
                file=sys.stderr,
            )
    return 0


def _design(c: dict[str, Any]) -> str:
    return f"{c['gpus']:,} x {c['gpu']} ({c['scale_up']}) over {c['fabric']}, {c['topology']}"


def _attention_format(inputs: dict[str, Any]) -> str:
    """ " (attention bf16)" where the attention projections have a format of their own."""
    own = inputs.get("attention_quantization", "same")
    return "" if own in ("same", inputs["quantization"]) else f" (attention {own})"


def _job_lines(i: dict[str, Any], m: dict[str, Any]) -> list[str]:
    """The finite job's line, where `requests` asks for one."""
    if not i.get("requests") or not m["job_time_s"]:
        return []
    steady = i["requests"] * i["output_tokens"] / m["output_tokens_per_s"] if m["output_tokens_per_s"] else 0.0
    text = (
        f"job of {i['requests']:,} requests: {_duration(m['job_time_s'])} "
        f"({m['job_output_tokens_per_s']:,.0f} output tokens/s; the steady state would take {_duration(steady)}), "
        f"{_duration(m['job_drain_s'])} of it draining the last batch"
    )
    return textwrap.wrap(text, 80, subsequent_indent="  ", break_on_hyphens=False)


def _duration(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:,.2f} h"
    return f"{seconds / 60:,.1f} min" if seconds >= 60 else f"{seconds:,.1f} s"


def _setup_lines(i: dict[str, Any], m: dict[str, Any], mode: str) -> list[str]:
    """The layout and workload lines, each broken between its items within 80 columns."""
    return [
        *wrap80(
            [
                f"{m['instances']} instance(s) of {m['instance_gpus']} GPUs:",
                f"tp {i['tp']} x dp_attention {i['dp_attention']} x pp {i['pp']}, ep {i['ep']};",
                mode,
            ],
            "  layout     ",
            " " * 13,
            " ",
        ),
        *wrap80(
            [
                f"{i['input_tokens']:,.0f} tokens in, {i['output_tokens']:,.0f} out;",
                f"{i['quantization']} weights{_attention_format(i)},",
                f"{i['kv_cache_dtype']} KV cache;",
                f"batch {m['concurrent_sequences']:,.0f}",
                f"(the KV cache holds {m['max_batch']:,.0f})",
            ],
            "  workload   ",
            " " * 13,
            " ",
        ),
    ]


def render(r: ServingResult) -> str:
    """The text of one serving evaluation."""
    i, m = r.inputs, r.metrics
    mode = (
        "co-located"
        if i["mode"] == "colocated"
        else f"disaggregated {i['prefill_instances']}:{i['decode_instances']} (P:D), "
        f"{m['prefill_instances_total']} prefill instances of {m['prefill_instance_gpus']} GPUs"
    )
    lines = [
        f"{i['model']} on {i['gpus']:,} x {i['gpu']} ({i['scale_up']}) over {i['fabric']}",
        *_setup_lines(i, m, mode),
        "",
        f"TTFT {m['ttft_s'] * 1e3:,.1f} ms (p99 {m['ttft_p99_s'] * 1e3:,.1f} ms)   TPOT {m['tpot_s'] * 1e3:,.2f} ms   "
        f"{m['output_tokens_per_s_per_user']:,.1f} tokens/s per user",
        f"{m['output_tokens_per_s_per_gpu']:,.0f} output tokens/s per GPU ({m['output_tokens_per_s']:,.0f} in all), "
        f"{m['requests_per_s']:,.2f} requests/s",
        f"${m['cost_usd_per_million_tokens']:,.3f} per million output tokens (${m['cost_usd_per_hour']:,.2f} an hour, "
        f"{i['cost_mode']})",
        *_job_lines(i, m),
        "",
        "decode step (one stage)",
    ]
    for label, key in (
        ("GEMMs", "decode_gemm_s"),
        ("attention", "decode_attention_s"),
        ("element-wise", "decode_elementwise_s"),
        ("communication", "decode_comm_s"),
        ("kernel launch", "decode_kernel_overhead_s"),
    ):
        lines.append(f"  {label:<14}{m[key] * 1e3:10.3f} ms")
    lines += [
        "",
        *wrap80(
            [
                f"memory per GPU: weights {m['weights_bytes'] / 1e9:.1f} GB,",
                f"activations {m['activation_bytes'] / 1e9:.1f} GB,",
                f"KV cache {m['kv_cache_bytes'] / 1e9:.1f} GB ({m['kv_token_bytes']:,.0f} bytes a token)",
                f"of {m['hbm_bytes'] / 1e9:.0f} GB",
            ],
            "",
            "  ",
            " ",
        ),
    ]
    if i["mode"] == "disaggregated":
        lines.append(f"KV transfer of a prompt {m['kv_transfer_s'] * 1e3:,.2f} ms")
    return "\n".join(lines)


_COLUMNS = (
    ("tp", "tp", "{}"),
    ("pp", "pp", "{}"),
    ("ep", "ep", "{}"),
    ("dp_attention", "dpa", "{}"),
    ("mode", "mode", "{}"),
    ("batch", "batch", "{:,}"),
    ("max_num_tokens", "tokens", "{:,}"),
    ("quantization", "fmt", "{}"),
    ("ttft_s", "TTFT ms", "{:,.1f}"),
    ("tpot_s", "TPOT ms", "{:,.2f}"),
    ("output_tokens_per_s_per_gpu", "tok/s/GPU", "{:,.0f}"),
    ("cost_usd_per_million_tokens", "$/Mtok", "{:,.3f}"),
)


def render_frontier(f: ServingFrontier, objectives: list[str]) -> str:
    """One cluster design's frontier as a table, fastest per GPU first."""
    head = (
        f"{_design(f.cluster)}: {f.layouts:,} layouts, {f.evaluated:,} possible, {f.over_slo:,} over the SLOs; "
        f"{len(f.points)} on the frontier of {', '.join(objectives)}"
    )
    # A finite job's time where the scenario runs one (`requests`).
    columns = _COLUMNS + ((("job_time_s", "job min", "{:,.1f}"),) if any(p["job_time_s"] for p in f.points) else ())
    rows = [[label for _, label, _ in columns]]
    ordered = sorted(f.points, key=lambda p: -p["output_tokens_per_s_per_gpu"])
    scale = {"ttft_s": 1e3, "tpot_s": 1e3, "job_time_s": 1 / 60}
    for p in ordered:
        rows.append([fmt.format(p[k] * scale[k] if k in scale else p[k]) for k, _, fmt in columns])
    widths = [max(len(r[c]) for r in rows) for c in range(len(columns))]
    table = ["  ".join(cell.rjust(w) for cell, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join([head, *table]) if ordered else head
