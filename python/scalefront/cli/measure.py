"""`scalefront measure`: a GPU's kernels timed on a proof-of-concept node (or a recorded run replayed), fitted to
a GPU catalog entry for `--catalog`."""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scalefront.cli import types as arg
from scalefront.cli.parser import Help, add_catalog_option, catalog_of
from scalefront.engine.export import check_text_target, write_text
from scalefront.engine.progress import ProgressLine
from scalefront.errors import UsageError
from scalefront.fidelity.measure.cases import Case, build_plan
from scalefront.fidelity.measure.driver import Status, result_text
from scalefront.fidelity.measure.entry import framework_id, host_only, render, render_host_toml, render_toml
from scalefront.fidelity.measure.fit import Fit, fit_run
from scalefront.fidelity.measure.host_rows import host_lines
from scalefront.fidelity.measure.plan import Wanted, model_request, scenario_requests
from scalefront.fidelity.measure.replay import Run, read_runs
from scalefront.fidelity.measure.session import gpu_for, measure, open_device, today
from scalefront.inputs.catalog.loader import Catalog
from scalefront.inputs.scenario.file import DEFAULT_SCENARIO

if TYPE_CHECKING:
    from scalefront.cli.parser import Commands

__all__ = ["add", "run"]


def add(sub: Commands) -> None:
    p = sub.add_parser(
        "measure",
        help="time a GPU's kernels (layer GEMMs, attention, HBM) and write a GPU catalog entry for --catalog",
        description="On a proof-of-concept GPU node (needs the measure extra: pip install 'scalefront[measure]'), "
        "time the GEMMs of every layer shape a scenario or a model needs (forward, data and weight gradient, at each "
        "TP degree and micro-batch it sweeps; BF16, and FP8 when it trains in FP8), fused causal attention by heads "
        "per GPU, HBM streaming, and a MoE model's grouped expert GEMMs by tokens per expert; fit the catalog's "
        "kernel figures (median rate / datasheet) and write the GPU as a catalog file, the rates by shape in its "
        "[<id>.measured] table, every figure sourced to the run. Use it with `--catalog FILE --gpu NAME`. "
        "--replay builds the same entry from a recorded run (--record's JSON, or gpu_bench.py's and moe_bench.py's).",
        formatter_class=Help,
    )
    p.add_argument("scenario", nargs="?", help=f"built-in scenario id or TOML file (default: {DEFAULT_SCENARIO})")
    p.add_argument("--model", help="measure one model's layers instead (catalog id or model TOML file)")
    p.add_argument("--tp", type=arg.counts, metavar="LIST", help="TP degrees (default: the scenario's; 1,2,4,8)")
    p.add_argument("--tokens", type=arg.counts, metavar="LIST", help="tokens per micro-batch (default: the scenario's)")
    p.add_argument("--ep", type=arg.counts, metavar="LIST", help="expert-parallel degrees (default: the scenario's)")
    p.add_argument(
        "--fp8", action=argparse.BooleanOptionalAction, help="FP8 GEMMs too (default: when the scenario trains in FP8)"
    )
    p.add_argument("--no-experts", action="store_true", help="skip the grouped expert GEMMs of MoE models")
    p.add_argument(
        "--quick", action="store_true", help="the sequence length only, the default attention backend, short repeats"
    )
    p.add_argument(
        "--host",
        action="store_true",
        help="also the host's time per kernel launch and each MoE layer in eager PyTorch, host time against GPU "
        "busy time, written as [frameworks.<name>-eager] for --framework",
    )
    p.add_argument("--replay", action="append", metavar="FILE", help="fit a recorded run of one GPU (repeatable)")
    p.add_argument("--date", type=arg.day, help="date to cite for a recorded run without one (default: today)")
    p.add_argument(
        "--gpu",
        help="the catalog GPU measured, whose peaks, price and other figures the entry takes (default: found "
        "from the device's name)",
    )
    p.add_argument("--out", required=True, metavar="FILE", help="the catalog file to write (e.g. my-h100.toml)")
    p.add_argument("--name", help="id of the written GPU (default: the --out file's name without .toml)")
    p.add_argument("--force", action="store_true", help="replace --out (and --record) if they exist")
    p.add_argument("--record", metavar="FILE", help="also write the run's measurements as JSON, for --replay")
    add_catalog_option(p)
    p.set_defaults(run=run)


#: A GPU id as the catalogs write them.
_GPU_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_MEASURE_ONLY = ("scenario", "model", "tp", "tokens", "ep", "fp8", "record")


def _check(args: argparse.Namespace) -> str:
    """The entry's id, after the checks that need no work: the options agree, the files can be written."""
    name = args.name if args.name is not None else Path(args.out).name.removesuffix(".toml")
    if not _GPU_ID.match(name):
        raise UsageError(f"--name {name!r}: a GPU id is letters, digits, '.', '_' and '-'; pass --name")
    if args.replay:
        given = [o for o in _MEASURE_ONLY if getattr(args, o) is not None]
        given += [flag for flag in ("quick", "host") if getattr(args, flag)]
        if given:
            raise UsageError(f"--replay fits a recorded run: --{given[0].replace('_', '-')} measures (leave it out)")
    if args.scenario is not None and args.model is not None:
        raise UsageError("give a scenario or --model, not both")
    if args.record is not None and Path(args.record).resolve() == Path(args.out).resolve():
        raise UsageError("--record and --out name the same file")
    check_text_target(args.out, args.force)
    if args.record is not None:
        check_text_target(args.record, args.force)
    return name


def _command(args: argparse.Namespace) -> str:
    """The command as the sources cite it (the options that decide what was measured and written: run again, it
    writes the same entry)."""
    words = ["scalefront", "measure"] + ([args.scenario] if args.scenario else [])
    for option in ("model", "tp", "tokens", "ep", "gpu", "out", "name", "date"):
        value = getattr(args, option)
        if value is not None:
            words += [f"--{option}", ",".join(map(str, value)) if isinstance(value, list) else str(value)]
    words += [w for f in args.replay or [] for w in ("--replay", f)]
    words += [w for f in args.catalog for w in ("--catalog", f)]
    flags = {"--fp8": args.fp8 is True, "--no-fp8": args.fp8 is False, "--no-experts": args.no_experts}
    words += [flag for flag, on in (*flags.items(), ("--quick", args.quick), ("--host", args.host)) if on]
    return shlex.join(words)


def _wanted(args: argparse.Namespace, catalog: Catalog) -> Wanted:
    options = {"tps": args.tp, "tokens": args.tokens, "eps": args.ep}
    if args.model is not None:
        return model_request(args.model, catalog, **options)
    return scenario_requests(args.scenario or DEFAULT_SCENARIO, catalog, **options)


def _measure(args: argparse.Namespace, catalog: Catalog, command: str) -> tuple[dict[str, Any], Run, str]:
    wanted = _wanted(args, catalog)
    if args.gpu is not None:
        catalog.gpu(args.gpu)
    fp8 = wanted.fp8 if args.fp8 is None else args.fp8
    plan = build_plan(wanted.requests, fp8=fp8, experts=not args.no_experts, quick=args.quick, host=args.host)
    device = open_device(plan.rep_ms)
    info = device.describe()
    # The card in hand, not the scenario's GPU, is what was measured.
    base = args.gpu or gpu_for(str(info.get("gpu", "")), catalog)
    print(f"measuring {info.get('gpu')} ({base}): {len(plan.cases)} benchmarks; {wanted.what}", flush=True)
    progress = ProgressLine("measuring", noun="benchmarks")

    def on_result(case: Case, values: dict[str, Any], status: Status) -> None:
        progress.clear()
        print(result_text(case, values), flush=True)
        progress(status)

    try:
        record, run = measure(plan, device, command=command, date=today(), on_result=on_result)
    finally:
        progress.close()
    # The sources name the run by the --record file that keeps it, if any.
    return record, run if args.record is None else dataclasses.replace(run, files=(Path(args.record).name,)), base


def run(args: argparse.Namespace) -> int:
    name = _check(args)
    command = _command(args)
    catalog = catalog_of(args)
    record: dict[str, Any] | None = None
    if args.replay:
        data = read_runs(args.replay)
        base = args.gpu or gpu_for(data.gpu, catalog)
    else:
        record, data, base = _measure(args, catalog, command)
    if host_only(data):
        text = render_host_toml(data, name, catalog, command, args.date or today())
        print(
            "\n".join(
                [f"host probe on {data.gpu}: {', '.join(data.files)}", *host_lines(data.host_launch, [*data.host])]
            )
        )
    else:
        fit: Fit = fit_run(data, base, catalog.gpu(base), args.date or today())
        text = render_toml(fit, name, catalog, command)
        print(render(fit))
    if record is not None and args.record is not None:
        write_text(json.dumps(record, indent=1) + "\n", args.record, args.force)
        print(f"wrote {args.record}: the run's measurements (scalefront measure --replay {args.record} ...)")
    write_text(text, args.out, args.force)
    if not host_only(data):
        print(f"wrote {args.out}: [gpus.{name}]; use it with --catalog {args.out} --gpu {name}")
    if data.host:  # a framework entry was written (host_terms finds terms in any MoE layer)
        fw = framework_id(name)
        print(f"wrote {args.out}: [frameworks.{fw}]; use it with --catalog {args.out} --framework {fw}")
    sys.stdout.flush()
    return 0
