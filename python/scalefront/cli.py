"""The ``scalefront`` command.

Errors in input (unknown names, malformed files, impossible parallelism, bad numbers) print one line to
stderr and exit with status 2; no traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from scalefront import __version__
from scalefront.engine.job import SweepPlan, SweepRequest, check_outputs, merge, sweep
from scalefront.engine.progress import ProgressLine
from scalefront.engine.sweep import SweepResult
from scalefront.errors import ClusterError, InternalError, ScalefrontError, UsageError, message_of
from scalefront.inputs.catalog.loader import Catalog, builtin_catalog
from scalefront.inputs.model import evaluate
from scalefront.report import render

if TYPE_CHECKING:
    import polars as pl

    from scalefront.api import UserInterface

EXIT_USAGE = 2
#: A bug in scalefront (the core panicked): EX_SOFTWARE from sysexits.h, distinct from bad input.
EXIT_INTERNAL = 70

_SUFFIXES = {"k": 10**3, "m": 10**6, "b": 10**9, "g": 10**9, "t": 10**12}


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (with the accepted values argparse lists) and exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


if TYPE_CHECKING:
    _Commands = argparse._SubParsersAction[_Parser]


class _Help(argparse.HelpFormatter):
    """Each option's default shown once: appended to its help unless the help already says it, and not for options
    whose default means "not given" (None), "off" (False) or "none" (an empty list)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        # argparse %-formats every help text: a literal % (as in "+/-20%") must be written %% or the help prints
        # the action's dict.
        text = (action.help or "").replace("%", "%%")
        default = action.default
        if "default" in text or default is None or default is False or default == [] or default == argparse.SUPPRESS:
            return text
        shown = f"{default:,}" if isinstance(default, int) and not isinstance(default, bool) else str(default)
        return f"{text} (default: {shown.replace('%', '%%')})"


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _decimal(text: str) -> Decimal:
    """A number as written, exactly: `15T`, `1.5e12`, `300_000`, `2,000` (suffixes k, M, B/G, T)."""
    t = text.strip().lower().replace("_", "").replace(",", "")
    scale = 1
    if t and t[-1] in _SUFFIXES:
        scale, t = _SUFFIXES[t[-1]], t[:-1]
    try:
        value = Decimal(t) * scale
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value.is_finite():
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def _number(text: str, *, allow_zero: bool) -> float:
    value = _decimal(text)
    if value < 0 or (value == 0 and not allow_zero):
        raise argparse.ArgumentTypeError(
            f"expected a {'non-negative' if allow_zero else 'positive'} number, got {text!r}"
        )
    return float(value)


def _positive_number(text: str) -> float:
    return _number(text, allow_zero=False)


def _count(text: str) -> int:
    """A whole positive number (tokens, configurations): `1.5T` is 1,500,000,000,000; `1.5` is refused."""
    value = _decimal(text)
    if value <= 0 or value != value.to_integral_value():
        raise argparse.ArgumentTypeError(f"expected a whole positive number such as 2e12 or 15T, got {text!r}")
    return int(value)


def _size(text: str) -> int:
    """A whole number >= 0 (layers, modules)."""
    value = _decimal(text)
    if value < 0 or value != value.to_integral_value():
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return int(value)


def _imbalance(text: str) -> float:
    value = _number(text, allow_zero=False)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a ratio >= 1 (1 = balanced), got {text!r}")
    return value


def _level(text: str) -> float:
    percent = text.strip().endswith("%")
    value = _number(text.strip().rstrip("%"), allow_zero=False) / (100.0 if percent else 1.0)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a coverage level between 0 and 1 (0.9 or 90%), got {text!r}")
    return value


def _oversubscription(text: str) -> float:
    """`2`, `2:1` or `3:2` (= 1.5): leaf downlink over uplink bandwidth, at least 1."""
    down, sep, up = text.partition(":")
    ratio = _number(down, allow_zero=False) / (_number(up, allow_zero=False) if sep else 1.0)
    if ratio < 1:
        raise argparse.ArgumentTypeError(f"expected a ratio >= 1 (1 = non-blocking, 2 or 2:1, 3:2), got {text!r}")
    return ratio


def _price(text: str) -> tuple[str, float]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE such as switch_usd=40000, got {text!r}")
    return key.strip(), _number(value, allow_zero=True)


def _add_cluster_options(group: argparse._ActionsContainer, *, gpus: int | None, topology: str) -> None:
    """--gpu, --gpus (required when there is no default), --scale-up, --fabric, --topology, --oversubscription."""
    group.add_argument("--gpu", default="h100-sxm", help="GPU id (servers per GPU count, NVLink domain)")
    group.add_argument("--gpus", type=_positive_int, default=gpus, required=gpus is None, help="number of GPUs")
    group.add_argument("--scale-up", help="intra-node domain id (default: the GPU's)")
    group.add_argument("--fabric", default="ib-ndr", help="scale-out fabric id")
    group.add_argument("--topology", default=topology, help="topology id")
    group.add_argument(
        "--oversubscription",
        type=_oversubscription,
        help="leaf oversubscription (2, 2:1, or 3:2 = 1.5); default: the topology's",
    )


def _cluster_arguments(args: argparse.Namespace) -> dict[str, Any]:
    """The cluster options, prices and catalogs as `evaluate` and `bom` take them."""
    return {
        "gpu": args.gpu,
        "gpus": args.gpus,
        "scale_up": args.scale_up,
        "fabric": args.fabric,
        "topology": args.topology,
        "oversubscription": args.oversubscription,
        "prices": dict(args.price),
        "catalog": _catalog(args),
    }


def _add_price_option(group: argparse._ActionsContainer, what: str) -> None:
    group.add_argument("--price", type=_price, action="append", default=[], metavar="KEY=VALUE", help=what)


def _add_catalog_option(group: argparse._ActionsContainer) -> None:
    group.add_argument(
        "--catalog",
        action="append",
        default=[],
        metavar="FILE",
        help="a catalog file that adds or replaces entries (repeatable)",
    )


def _catalog(args: argparse.Namespace) -> Catalog:
    """The built-in catalogs, with the --catalog files merged in."""
    return Catalog.load(*args.catalog) if args.catalog else builtin_catalog()


def _add_eval(sub: _Commands) -> None:
    p = sub.add_parser(
        "eval",
        help="evaluate one configuration: step time, where it goes, memory, time and cost to train",
        description="Evaluate one training configuration. Without options: Llama 3 70B on 1,024 H100s over "
        "InfiniBand NDR, TP 8, 1T tokens.",
        formatter_class=_Help,
    )
    g = p.add_argument_group("workload")
    g.add_argument("--model", default="llama3-70b", help="catalog model id, or a model TOML file")
    g.add_argument("--tokens", type=_count, default=10**12, help="training tokens, a whole number (1e12, 15T, 300B)")
    g.add_argument("--global-batch", type=_positive_int, help="sequences per step (default: ~4M tokens)")
    g.add_argument("--seq-len", type=_positive_int, help="sequence length (default: the model's)")
    g.add_argument("--precision", choices=["bf16", "fp8"], default="bf16", help="GEMM precision")
    g.add_argument(
        "--no-flash-attention",
        action="store_true",
        help="attention materialises its scores (no fused/flash attention kernel)",
    )
    _add_cluster_options(p.add_argument_group("cluster"), gpus=1024, topology="rail-fat-tree")
    g = p.add_argument_group("parallelism")
    g.add_argument("--tp", type=_positive_int, default=8, help="tensor parallel")
    g.add_argument("--pp", type=_positive_int, default=1, help="pipeline parallel")
    g.add_argument("--dp", type=_positive_int, help="data parallel (default: gpus / (tp x pp x cp))")
    g.add_argument("--cp", type=_positive_int, default=1, help="context parallel")
    g.add_argument("--ep", type=_positive_int, default=1, help="expert parallel (ep x etp divides tp x dp x cp)")
    g.add_argument("--vpp", type=_positive_int, default=1, help="virtual pipeline stages per GPU (interleaved)")
    g.add_argument("--micro-batch", type=_positive_int, default=1, help="sequences per micro-batch")
    g.add_argument("--zero", type=int, choices=[0, 1, 2, 3], default=1, help="ZeRO stage (3 = FSDP)")
    g.add_argument(
        "--recompute", choices=["none", "selective", "full"], default="selective", help="activation recomputation"
    )
    g.add_argument("--no-sequence-parallel", action="store_true", help="turn off sequence parallelism")
    g.add_argument(
        "--overlap",
        default="dp",
        help="none, dp, full, a fraction for all, or dp=0.9,tp=0.5,pp=0,ep=0",
    )
    g.add_argument("--etp", type=_positive_int, help="expert tensor parallel (default: tp); ep x etp | tp x dp x cp")
    g.add_argument("--first-stage-layers", type=_size, help="transformer layers on the first pipeline stage")
    g.add_argument("--last-stage-layers", type=_size, help="transformer layers on the last pipeline stage")
    g.add_argument(
        "--embedding-in-split", action="store_true", help="count the embedding as a layer of the pipeline split"
    )
    g.add_argument("--loss-in-split", action="store_true", help="count the loss as a layer of the pipeline split")
    g.add_argument(
        "--no-reshard-after-forward",
        action="store_true",
        help="ZeRO-3: keep gathered parameters until the backward pass (FSDP reshard_after_forward=False)",
    )
    g = p.add_argument_group("software")
    g.add_argument("--grad-reduce-dtype", choices=["fp32", "bf16"], default="fp32", help="gradient reduction format")
    g.add_argument(
        "--attention-kernel",
        choices=["best", "fa2"],
        default="best",
        help="fused attention kernel: the GPU's best or FA2",
    )
    g.add_argument(
        "--moe-dispatcher", choices=["alltoall", "flex", "allgather"], default="alltoall", help="MoE token dispatcher"
    )
    g.add_argument("--moe-imbalance", type=_imbalance, default=1.0, help="busiest expert rank's routed tokens / mean")
    g.add_argument("--mtp-layers", type=_size, default=0, help="multi-token-prediction modules (DeepSeek-V3: 1)")
    g.add_argument(
        "--interval", type=_level, help="coverage of the prediction intervals (default: 0.9, data/model_error.toml)"
    )
    g = p.add_argument_group("cost")
    g.add_argument("--cost-mode", choices=["rent", "own"], default="rent", help="cost_to_train_usd in this mode")
    _add_price_option(g, "override a catalog price (repeatable): rent_usd_per_gpu_hour, server_usd, switch_usd, ...")
    _add_catalog_option(g)
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.set_defaults(run=_run_eval)


def _run_eval(args: argparse.Namespace) -> int:
    result = evaluate(
        args.model,
        **_cluster_arguments(args),
        tp=args.tp,
        pp=args.pp,
        dp=args.dp,
        cp=args.cp,
        ep=args.ep,
        vpp=args.vpp,
        micro_batch=args.micro_batch,
        global_batch=args.global_batch,
        seq_len=args.seq_len,
        recompute=args.recompute,
        zero=args.zero,
        sequence_parallel=not args.no_sequence_parallel,
        overlap=args.overlap,
        precision=args.precision,
        flash_attention=not args.no_flash_attention,
        tokens=args.tokens,
        cost_mode=args.cost_mode,
        etp=args.etp,
        first_stage_layers=args.first_stage_layers,
        last_stage_layers=args.last_stage_layers,
        embedding_in_split=args.embedding_in_split,
        loss_in_split=args.loss_in_split,
        reshard_after_forward=not args.no_reshard_after_forward,
        grad_reduce_dtype=args.grad_reduce_dtype,
        attention_kernel=args.attention_kernel,
        moe_imbalance=args.moe_imbalance,
        moe_dispatcher=args.moe_dispatcher,
        mtp_layers=args.mtp_layers,
        interval=args.interval,
    )
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print(render(result))
    return 0


def _csv_list(text: str) -> list[str]:
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise argparse.ArgumentTypeError("expected a comma-separated list")
    return items


def _names(problem_of: Callable[[list[str]], str | None]) -> Callable[[str], list[str]]:
    """An argparse type: a comma-separated list in which `problem_of` finds nothing wrong."""

    def parse(text: str) -> list[str]:
        names = _csv_list(text)
        problem = problem_of(names)
        if problem:
            raise argparse.ArgumentTypeError(problem)
        return names

    return parse


def _add_sweep(sub: _Commands) -> None:
    from scalefront.inputs.scenario.file import AXES, DEFAULT_SCENARIO, OBJECTIVES, group_by_problem, objectives_problem

    p = sub.add_parser(
        "sweep",
        help="sweep a scenario's space on all cores and print or export its Pareto frontiers",
        description="Evaluate every configuration of a scenario (a built-in id or a TOML file; the README "
        "documents the format) and keep the Pareto frontiers. Without --out, prints them.",
        formatter_class=_Help,
    )
    p.add_argument("scenario", nargs="?", default=DEFAULT_SCENARIO, help="built-in scenario id or TOML file")
    p.add_argument("--out", help="write the frontier here (.csv or .parquet)")
    p.add_argument(
        "--all",
        metavar="OUT",
        dest="all_out",
        help="also write every feasible configuration here (.csv or .parquet), streamed to disk",
    )
    p.add_argument("--force", action="store_true", help="replace existing output files")
    p.add_argument("--workload", metavar="NAME", help="the workload of a scenario's mix to sweep")
    p.add_argument(
        "--group-by",
        type=_names(group_by_problem),
        metavar="AXES",
        help=f"frontier per value of these axes, comma-separated ({', '.join(AXES)}); default: the scenario's",
    )
    p.add_argument(
        "--objectives",
        type=_names(objectives_problem),
        metavar="NAMES",
        help=f"two or three of {', '.join(OBJECTIVES)}; default: the scenario's",
    )
    _add_catalog_option(p)
    p.add_argument(
        "--max-configs", type=_count, default=10**11, help="refuse a space with more configurations than this"
    )
    p.add_argument(
        "--time-limit",
        type=_positive_number,
        default=1800.0,
        metavar="SECONDS",
        help="stop (with a message) when the sweep is projected to take longer than this",
    )
    p.add_argument(
        "--shard",
        type=_shard,
        metavar="K/N",
        help="sweep only shard K of N (cells split by estimated cost) and write its part to --out (.parquet), "
        "for job arrays; `scalefront merge` joins the parts",
    )
    p.add_argument(
        "--cluster",
        default="auto",
        metavar="auto|local|ADDRESS",
        help="where to run: `local` starts a Dask cluster on this machine (127.0.0.1, no dashboard), ADDRESS "
        "attaches to a Dask scheduler (tcp://host:8786); `auto`: local with --workers > 1 when the cluster extra "
        "is installed, else this process",
    )
    p.add_argument(
        "--workers",
        type=_positive_int,
        metavar="N",
        help="worker processes of a local cluster: with --cluster auto, more than 1 starts one; with --cluster "
        "local, default one per core",
    )
    p.set_defaults(run=_run_sweep)


def _shard(text: str) -> tuple[int, int]:
    from scalefront.engine.shards import parse_shard

    try:
        return parse_shard(text)
    except UsageError as err:
        raise argparse.ArgumentTypeError(str(err).removeprefix("--shard: ")) from None


def _run_sweep(args: argparse.Namespace) -> int:
    request = SweepRequest(
        args.scenario,
        catalogs=tuple(args.catalog),
        group_by=args.group_by,
        objectives=args.objectives,
        workload=args.workload,
        out=args.out,
        all_out=args.all_out,
        force=args.force,
        shard=args.shard,
        cluster=args.cluster,
        workers=args.workers,
        max_configs=args.max_configs,
        time_limit_s=args.time_limit,
    )
    line = ProgressLine("sweep")
    try:
        outcome = sweep(request, on_start=_announce, on_progress=line)
    finally:
        line.close()
    assert outcome.result is not None and outcome.frontier is not None
    _print_sweep(outcome.result, outcome.frontier, outcome.written, args.out)
    return 0


def _announce(plan: SweepPlan) -> None:
    """On a terminal, what is about to be swept."""
    if sys.stderr.isatty():
        what = f"shard {plan.shard.label}, " if plan.shard else ""
        print(f"{plan.scenario.name}: {what}{plan.size:,} configurations", file=sys.stderr)


def _print_sweep(result: SweepResult, frontier: pl.DataFrame, written: list[str], out: str | None) -> None:
    """What was written goes to stderr (always, so that a piped stdout still gets only the result); the frontiers
    go to stdout unless --out took them and stdout is not a terminal."""
    import polars as pl

    from scalefront.report import render_sweep

    if written:
        print(f"wrote {', '.join(written)}", file=sys.stderr)
    if out and not sys.stdout.isatty():
        return
    with pl.Config(
        tbl_rows=-1,
        tbl_cols=-1,
        tbl_hide_dataframe_shape=True,
        tbl_hide_column_data_types=True,
        tbl_width_chars=200,
        float_precision=3,
        thousands_separator=True,
    ):
        print(render_sweep(result, frontier), file=sys.stdout)


def _add_merge(sub: _Commands) -> None:
    p = sub.add_parser(
        "merge",
        help="merge the parts of a sharded sweep (sweep --shard K/N) into its frontier or --all export",
        description="Check that the parts come from one scenario and catalog and that every shard is there once, "
        "then merge them: frontier parts into the sweep's frontier (the rows and bytes a one-machine run writes), "
        "--all parts into its every-feasible-row export. Without --out, prints the frontiers.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument("parts", nargs="+", metavar="PART", help="the parts (.parquet), in any order")
    p.add_argument("--out", help="write the merged frontier (or rows) here (.csv or .parquet)")
    p.add_argument("--force", action="store_true", help="replace an existing output file")
    p.set_defaults(run=_run_merge)


def _run_merge(args: argparse.Namespace) -> int:
    outcome = merge(args.parts, args.out, args.force)
    if outcome.result is None or outcome.frontier is None:
        print(f"wrote {', '.join(outcome.written)}", file=sys.stderr)
        return 0
    _print_sweep(outcome.result, outcome.frontier, outcome.written, args.out)
    return 0


def _add_validate(sub: _Commands) -> None:
    p = sub.add_parser(
        "validate",
        help="compare the model with published training runs and nccl-tests curves",
        description="Predict every published measurement in the validation tables and print the errors.",
    )
    p.add_argument("--markdown", action="store_true", help="print the Markdown report (docs/validation.md)")
    p.add_argument(
        "--calibrate", action="store_true", help="print each GPU's sustained_efficiency fitted on the calibration rows"
    )
    p.add_argument(
        "--write",
        metavar="GPUS_TOML",
        help="with --calibrate: write the fitted values and their source lines into this gpus.toml (needs --force)",
    )
    p.add_argument(
        "--calibrate-errors",
        action="store_true",
        help="fit the prediction intervals' residuals by regime (data/model_error.toml) and print them",
    )
    p.add_argument("--out", help="with --calibrate-errors: write the file here instead of printing it")
    p.add_argument("--coverage", action="store_true", help="the intervals' coverage on rows held out by source family")
    p.add_argument("--force", action="store_true", help="replace an existing file")
    p.set_defaults(run=_run_validate)


def _run_validate(args: argparse.Namespace) -> int:
    import datetime

    from scalefront.engine.export import write_text
    from scalefront.fidelity import validation

    if args.write and not args.calibrate:
        raise UsageError("--write goes with --calibrate")
    if args.out and not args.calibrate_errors:
        raise UsageError("--out goes with --calibrate-errors")
    if args.calibrate:
        fitted = validation.calibrate()
        for gpu, (value, rows) in fitted.items():
            print(f"{gpu}: sustained_efficiency = {value}  (rows: {', '.join(rows)})")
        if args.write:
            path = Path(args.write)
            if not path.exists():
                raise UsageError(f"{path}: no such file (give the gpus.toml to update)")
            date = datetime.date.today().strftime("%Y-%m")
            write_text(validation.write_calibration(path.read_text(), fitted, date), path, args.force)
            print(f"wrote {path}", file=sys.stderr)
        return 0
    if args.calibrate_errors:
        text = validation.fit_error_model()
        if args.out:
            write_text(text, args.out, args.force)
            print(f"wrote {args.out}", file=sys.stderr)
        else:
            print(text, end="")
        return 0
    if args.coverage:
        c = validation.held_out_coverage()
        for family, (n, k) in c.by_family.items():
            print(f"{family:16} {k:3d} of {n:3d} inside")
        print(f"held-out coverage of the {c.level:.0%} intervals: {c.coverage:.1%} ({c.covered} of {c.rows} rows)")
        return 0
    training = validation.training_checks()
    collectives = validation.collective_checks()
    coverage = validation.held_out_coverage()
    text = validation.render(training, collectives, markdown=args.markdown, coverage=coverage)
    print(text, end="" if args.markdown else "\n")
    return 0


def _add_bom(sub: _Commands) -> None:
    p = sub.add_parser(
        "bom",
        help="the network's bill of materials: NICs, switches per tier, cables, optics, capex, power",
        formatter_class=_Help,
    )
    _add_cluster_options(p, gpus=None, topology="fat-tree")
    _add_price_option(p, "override a part price (repeatable): nic_usd, switch_usd, transceiver_usd, ...")
    _add_catalog_option(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=_run_bom)


def _run_bom(args: argparse.Namespace) -> int:
    from scalefront.inputs.network import bom

    b = bom(**_cluster_arguments(args))
    if args.json:
        print(json.dumps(b, indent=2))
        return 0
    print(render_bom(b))
    return 0


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
        f"  fibres                  {b['fibres']:>12,}   ${b['fibre_usd']:>14,.0f}",
    ]
    if b["nvlink_switch_trays"]:
        lines.append(f"  NVLink switch trays     {b['nvlink_switch_trays']:>12,}   ${b['nvlink_trays_usd']:>14,.0f}")
    lines += [
        f"  network hardware        {'':>12}   ${b['network_capex_usd']:>14,.0f}   (${per_gpu:,.0f} per GPU)",
        f"  spares                  {'':>12}   ${b['spares_usd']:>14,.0f}",
        f"  installation            {'':>12}   ${b['installation_usd']:>14,.0f}",
        f"  out-of-band management  {b['racks']:>8,} racks   ${b['oob_usd']:>14,.0f}",
        f"  support per year        {'':>12}   ${b['support_usd_per_year']:>14,.0f}",
        f"  NOS licences per year   {'':>12}   ${b['licences_usd_per_year']:>14,.0f}",
        f"  network power           {b['network_power_w'] / 1e3:>12,.1f} kW",
    ]
    return "\n".join(lines)


def _add_calibrate(sub: _Commands) -> None:
    p = sub.add_parser(
        "calibrate",
        help="fit a fabric's figures to your nccl-tests logs and write a catalog entry for --catalog",
        description="Read nccl-tests output (all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf; "
        "one or several runs per file, any node counts) from a proof of concept, fit the figures of the base fabric "
        "--fabric that the runs identify (efficiency, NIC latency, in-network reduction, and load balance when runs "
        "at several node counts depend on it) with the model's own collective times, on log bus bandwidth at "
        "sizes of 64 KiB and more, and write the calibrated fabric as a catalog file: use it with "
        "`--catalog FILE --fabric NAME` in eval, sweep, bom and roi. Prints each point's measured and fitted bus "
        "bandwidth and the residuals. Runs on one node are shown but not used (the fabric carries nothing).",
        formatter_class=_Help,
    )
    p.add_argument("logs", nargs="+", metavar="LOG", help="nccl-tests output files")
    p.add_argument(
        "--fabric", required=True, help="the base fabric id (e.g. ib-ndr, roce-400g); unfitted figures are its"
    )
    p.add_argument("--out", required=True, metavar="FILE", help="the catalog file to write (e.g. my-fabric.toml)")
    p.add_argument("--name", help="id of the written fabric (default: the --out file's name without .toml)")
    p.add_argument("--force", action="store_true", help="replace --out if it exists")
    p.add_argument("--gpu", help="GPU id (default: from the logs' Rank lines; only sets the default scale-up domain)")
    p.add_argument("--scale-up", help="the nodes' scale-up domain id (default: the GPU's)")
    p.add_argument("--topology", default="rail-fat-tree", help="the proof of concept's topology id")
    p.add_argument(
        "--oversubscription",
        type=_oversubscription,
        help="leaf oversubscription (2, 2:1, or 3:2 = 1.5); default: the topology's",
    )
    p.add_argument(
        "--collnet",
        action="store_true",
        help="the runs enabled in-network reduction (NCCL_COLLNET_ENABLE=1, SHARP); without it the model leaves "
        "SHARP out, as NCCL does by default, and keeps the base's figure",
    )
    _add_catalog_option(p)
    p.set_defaults(run=_run_calibrate)


#: A fabric id as the catalogs write them.
_FABRIC_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def _run_calibrate(args: argparse.Namespace) -> int:
    from scalefront.engine.export import check_text_target, write_text
    from scalefront.fidelity.calibrate import calibrate
    from scalefront.fidelity.calibrate_text import render, render_toml
    from scalefront.fidelity.nccl_log import parse_log

    name = args.name if args.name is not None else Path(args.out).name.removesuffix(".toml")
    if not _FABRIC_ID.match(name):
        raise UsageError(f"--name {name!r}: a fabric id is letters, digits, '.', '_' and '-'; pass --name")
    check_text_target(args.out, args.force)
    catalog = _catalog(args)
    catalog.fabric(args.fabric)
    runs = [run for log in args.logs for run in parse_log(log)]
    result = calibrate(
        runs,
        catalog,
        args.fabric,
        gpu=args.gpu,
        scale_up=args.scale_up,
        topology=args.topology,
        oversubscription=args.oversubscription,
        collnet=args.collnet,
    )
    text = render_toml(result, name, catalog)
    print(render(result))
    write_text(text, args.out, args.force)
    print(f"wrote {args.out}: [fabrics.{name}]; use it with --catalog {args.out} --fabric {name}")
    return 0


def _add_roi(sub: _Commands) -> None:
    from scalefront.inputs.scenario.file import DEFAULT_SCENARIO
    from scalefront.roi import DEFAULT_SAMPLES

    p = sub.add_parser(
        "roi",
        help="is fabric A worth its premium over fabric B, how sure is that, and what would flip the answer?",
        description="Compare two fabrics on a scenario, owning the cluster for its life (total cost of ownership): "
        "break-even premium, NPV and payback per GPU count, a Monte Carlo over every price range, fabric figure and "
        "the model's own error, and a tornado with the value at which each input flips the verdict.",
        formatter_class=_Help,
    )
    p.add_argument("scenario", nargs="?", default=DEFAULT_SCENARIO, help="built-in scenario id or TOML file")
    p.add_argument("--a", default="ib-ndr", dest="fabric_a", help="the fabric whose premium is in question")
    p.add_argument("--b", default="roce-400g", dest="fabric_b", help="the fabric it is compared with")
    g = p.add_argument_group("comparison")
    g.add_argument(
        "--premium",
        type=_positive_number,
        help="set A's fabric cost to this multiple of B's (1.3 = 30% dearer); default: both at catalog prices",
    )
    g.add_argument(
        "--design",
        choices=["same", "cheapest"],
        default="same",
        help="same: both fabrics on the same topology; cheapest: each on its own cheapest design",
    )
    g.add_argument("--gpus", type=_positive_int, help="the GPU count the verdict is about (default: the largest)")
    g.add_argument(
        "--value-per-gpu-hour",
        type=lambda t: _number(t, allow_zero=True),
        metavar="USD",
        help="what an extra busy GPU-hour of A is worth (rent it out, time to market) for NPV and payback; "
        "default: B's own cost of a busy GPU-hour",
    )
    g = p.add_argument_group("uncertainty")
    g.add_argument("--samples", type=_count, default=DEFAULT_SAMPLES, help="Monte Carlo samples")
    g.add_argument("--seed", type=int, default=0, help="random seed (the same seed gives the same numbers)")
    g.add_argument(
        "--model-error",
        default="auto",
        metavar="SOURCE",
        help="the model's error: auto, validation (the scalefront validate residuals), none, or a TOML file "
        "of common_log_residuals and collective_log_residuals",
    )
    g.add_argument("--max-samples", type=_count, default=10**6, help="refuse a Monte Carlo with more samples than this")
    g.add_argument(
        "--time-limit",
        type=_positive_number,
        default=600.0,
        metavar="SECONDS",
        help="stop (with a message) when the Monte Carlo is projected to take longer than this",
    )
    g.add_argument(
        "--cluster",
        default="auto",
        metavar="auto|local|ADDRESS",
        help="where to run the Monte Carlo, in shards of samples (the same numbers as here): `local` starts a Dask "
        "cluster on this machine (127.0.0.1), ADDRESS attaches to a Dask scheduler (tcp://host:8786); `auto`: local "
        "with --workers > 1 when the cluster extra is installed, else this process",
    )
    g.add_argument("--workers", type=_positive_int, metavar="N", help="worker processes of a local cluster")
    g = p.add_argument_group("output")
    g.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    g.add_argument("--out", help="write the per-GPU-count table here (.csv or .parquet)")
    g.add_argument("--report", metavar="DIR", help="write report.html (self-contained) and report.md with charts")
    g.add_argument("--force", action="store_true", help="replace existing output files")
    _add_catalog_option(g)
    p.set_defaults(run=_run_roi)


def _run_roi(args: argparse.Namespace) -> int:
    from scalefront.engine.export import write_frame
    from scalefront.roi import McProgress, RoiOptions, compare, result_dict
    from scalefront.roi.text import render, verdict

    check_outputs(args.force, out=args.out)
    if args.report is not None:
        from scalefront.roi.report import check_report_dir

        check_report_dir(args.report, args.force)
    if args.samples > args.max_samples:
        raise UsageError(
            f"--samples {args.samples:,} is over --max-samples {args.max_samples:,}; lower --samples or raise "
            "--max-samples"
        )
    options = RoiOptions(
        premium=args.premium,
        design=args.design,
        value_usd_per_gpu_hour=args.value_per_gpu_hour,
        samples=args.samples,
        seed=args.seed,
        model_error=args.model_error,
        headline_gpus=args.gpus,
    )
    line = ProgressLine("monte carlo", noun="samples")

    def watch(p: McProgress) -> None:
        line(p)
        if p.elapsed_s < 1.0 or p.done >= p.total or p.rate <= 0:
            return
        projected = p.elapsed_s + (p.eta_s or 0.0)
        if projected > args.time_limit:
            raise _Abort(
                f"{args.samples:,} Monte Carlo samples at {p.rate:,.0f}/s would take about {projected:,.0f} s, over "
                f"--time-limit {args.time_limit:g} s; lower --samples or raise --time-limit"
            )

    try:
        result = compare(
            args.scenario,
            args.fabric_a,
            args.fabric_b,
            catalog=_catalog(args),
            options=options,
            on_progress=watch,
            cluster=args.cluster,
            workers=args.workers,
        )
    except _Abort as err:
        line.close()
        raise UsageError(str(err)) from None
    finally:
        line.close()
    if args.out is not None:
        write_frame(result.table, args.out, args.force)
        print(f"wrote {args.out}", file=sys.stderr)
    if args.report is not None:
        from scalefront.roi.report import write_report

        path = write_report(result, args.report, args.force)
        print(f"wrote {path} and {path.with_suffix('.md')}", file=sys.stderr)
    if args.json:
        print(json.dumps(result_dict(result, verdict(result)), indent=2))
    else:
        print(render(result))
    return 0


def _find_ui() -> UserInterface | None:
    """The installed front end (entry-point group scalefront.ui), or None."""
    from scalefront.api import find_ui

    return find_ui()


def _add_tui(sub: _Commands) -> None:
    from scalefront.inputs.scenario.file import DEFAULT_SCENARIO

    p = sub.add_parser("tui", help="browse a scenario's trade-offs in the terminal UI (needs scalefront-tui)")
    p.add_argument("scenario", nargs="?", default=DEFAULT_SCENARIO, help="built-in scenario id or TOML file")
    p.set_defaults(run=_run_tui)


def _run_tui(args: argparse.Namespace) -> int:
    from scalefront.api import ui_missing_message
    from scalefront.inputs.scenario.build import load_scenario

    ui = _find_ui()
    if ui is None:
        raise UsageError(ui_missing_message())
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError(
            "the terminal UI needs a terminal; for a browser: scalefront serve SCENARIO; "
            "for batch work: scalefront sweep SCENARIO --out F"
        )
    load_scenario(args.scenario)  # a bad scenario is one line here, before the screen is taken over
    ui.run(args.scenario)
    return 0


def _add_serve(sub: _Commands) -> None:
    from scalefront.inputs.scenario.file import DEFAULT_SCENARIO

    p = sub.add_parser(
        "serve",
        help="serve the UI to a web browser (needs scalefront-tui)",
        description="Serve the terminal UI to web browsers (the same app, each browser tab its own session, at "
        "most --max-sessions at once). It listens on 127.0.0.1 only and answers only pages it served itself: "
        "open the address on this machine, or tunnel it (ssh -L 8000:localhost:8000 HOST). Files written from a "
        "browser (exports, saved scenarios) go only into --export-dir. To expose it on a network, pass --host "
        "0.0.0.0: a random token is then required (printed in the address) unless you give --token, and, behind "
        "a proxy, --public-url.",
    )
    p.add_argument("scenario", nargs="?", default=DEFAULT_SCENARIO, help="built-in scenario id or TOML file")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1, this machine)")
    p.add_argument("--port", type=_port, default=8000, help="port to listen on (default: 8000)")
    p.add_argument(
        "--export-dir",
        type=Path,
        help="the only directory browser sessions may read model files from and write to (default: the working "
        "directory)",
    )
    p.add_argument("--token", help="require this token in the address (default: none on 127.0.0.1, random beyond)")
    p.add_argument(
        "--max-sessions",
        type=_positive_int,
        default=4,
        help="browser sessions (app processes, ~120 MB each) served at once (default: 4)",
    )
    p.add_argument("--public-url", help="the address browsers use, if not http://HOST:PORT (a proxy, a DNS name)")
    p.set_defaults(run=_run_serve)


def _port(text: str) -> int:
    value = _positive_int(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 1 to 65535, got {text!r}")
    return value


def _run_serve(args: argparse.Namespace) -> int:
    from scalefront.api import ui_missing_message
    from scalefront.inputs.scenario.build import load_scenario

    ui = _find_ui()
    if ui is None:
        raise UsageError(ui_missing_message())
    load_scenario(args.scenario)
    scenario = args.scenario if not Path(args.scenario).exists() else str(Path(args.scenario).resolve())
    return ui.serve(
        scenario,
        host=args.host,
        port=args.port,
        public_url=args.public_url,
        export_dir=args.export_dir,
        token=args.token,
        max_sessions=args.max_sessions,
    )


def _run_default(args: argparse.Namespace) -> int:
    """`scalefront` alone: the UI on the default scenario on a terminal, else the batch sweep of it."""
    from scalefront.api import ui_missing_message

    ui = _find_ui()
    if ui is not None and sys.stdin.isatty() and sys.stdout.isatty():
        return _run_tui(argparse.Namespace(scenario=args.scenario))
    if ui is None:
        print(f"scalefront: {ui_missing_message()}", file=sys.stderr)
    else:
        print(
            "not a terminal: running the batch sweep of the default scenario (the UI needs a terminal)", file=sys.stderr
        )
    sweep_args = build_parser().parse_args(["sweep", args.scenario])
    return _run_command(sweep_args)


def _run_command(args: argparse.Namespace) -> int:
    run: Callable[[argparse.Namespace], int] = args.run
    return run(args)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="scalefront",
        description="Plan GPU training clusters with numbers: step time, scaling, memory and cost.",
    )
    parser.add_argument("--version", action="version", version=f"scalefront {__version__}")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND", parser_class=_Parser)
    _add_eval(sub)
    _add_sweep(sub)
    _add_merge(sub)
    _add_validate(sub)
    _add_bom(sub)
    _add_roi(sub)
    _add_calibrate(sub)
    _add_tui(sub)
    _add_serve(sub)
    return parser


class _Abort(Exception):
    """A projected limit was hit while running the ROI Monte Carlo."""


class Terminated(KeyboardInterrupt):
    """SIGTERM (a job scheduler's stop, `kill`): handled like Ctrl-C, so work is cancelled and temporaries removed."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """While the command runs, SIGTERM raises Terminated in the main thread (elsewhere it cannot be handled)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


#: Exit statuses: bad input (EX_USAGE-like 2), a bug (EX_SOFTWARE), a lost cluster worker (EX_TEMPFAIL: retrying
#: may work), Ctrl-C and SIGTERM (128 + the signal, as shells report them).
EXIT_TEMPFAIL = 75
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "run"):
        from scalefront.inputs.scenario.file import DEFAULT_SCENARIO

        args = argparse.Namespace(run=_run_default, scenario=DEFAULT_SCENARIO)
    try:
        with _sigterm_as_interrupt():
            return _run_command(args)
    except ScalefrontError as err:
        print(f"scalefront: error: {message_of(err)}", file=sys.stderr)
        return EXIT_USAGE
    except InternalError as err:
        print(f"scalefront: internal error (a bug, please report it): {message_of(err)}", file=sys.stderr)
        return EXIT_INTERNAL
    except ClusterError as err:
        print(f"scalefront: error: {message_of(err)}", file=sys.stderr)
        return EXIT_TEMPFAIL
    except Terminated:
        print("scalefront: terminated; nothing was written", file=sys.stderr)
        return EXIT_TERMINATED
    except KeyboardInterrupt:
        print("scalefront: interrupted; nothing was written", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["UsageError", "build_parser", "main"]
