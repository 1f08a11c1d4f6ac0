"""`scalefront roi`: is fabric A worth its premium over fabric B, how sure is that, and what would flip the
answer? The command builds the options, `scalefront.roi.compare` computes, the ROI text, report and JSON render."""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from scalefront import roi
from scalefront.cli import types as arg
from scalefront.cli.parser import Help, add_catalog_option, catalog_of
from scalefront.engine.export import Outputs
from scalefront.engine.job import check_outputs
from scalefront.engine.limits import DEFAULT_MAX_CONFIGS, LimitExceeded
from scalefront.engine.progress import ProgressLine
from scalefront.errors import CatalogError, UsageError, message_of
from scalefront.inputs.params import enum_names
from scalefront.inputs.scenario.build import read_scenario
from scalefront.inputs.scenario.file import DEFAULT_SCENARIO, validate_file
from scalefront.roi.quote import load_quote
from scalefront.roi.result import McProgress, RoiOptions, RoiResult, result_dict
from scalefront.roi.text import render, verdict

if TYPE_CHECKING:
    from scalefront.cli.parser import Commands


def add(sub: Commands) -> None:
    p = sub.add_parser(
        "roi",
        help="is fabric A worth its premium over fabric B, how sure is that, and what would flip the answer?",
        description="Compare two fabrics on a scenario, owning the cluster for its life (total cost of ownership): "
        "break-even premium, NPV and payback per GPU count, a Monte Carlo over every price range, fabric figure and "
        "the model's own error, and a tornado with the value at which each input flips the verdict.",
        formatter_class=Help,
    )
    p.add_argument("scenario", nargs="?", default=DEFAULT_SCENARIO, help="built-in scenario id or TOML file")
    p.add_argument(
        "--a", default="ib-ndr", dest="fabric_a", type=_design, help="the fabric whose premium is in question"
    )
    p.add_argument(
        "--b",
        dest="fabric_b",
        type=_designs,
        metavar="FABRIC[,FABRIC...]",
        help="the designs it is compared with: fabric ids, FABRIC@MODE or FABRIC@MODE@VARIANT, comma-separated "
        "(each a column of the verdict); default: the scenario's [cluster] compare_with, else roce-400g",
    )
    _add_comparison_options(p.add_argument_group("comparison"))
    _add_uncertainty_options(p.add_argument_group("uncertainty"))
    g = p.add_argument_group("output")
    g.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    g.add_argument("--out", help="write the per-GPU-count table here (.csv or .parquet)")
    g.add_argument(
        "--report",
        metavar="DIR",
        help="write the decision memo: report.html (self-contained) and report.md with charts",
    )
    g.add_argument(
        "--date",
        type=_date,
        metavar="YYYY-MM-DD",
        help="the date the memo states (default: today); the same date and seed give the same report bytes",
    )
    g.add_argument("--force", action="store_true", help="replace existing output files")
    add_catalog_option(g)
    p.set_defaults(run=run)


def _add_comparison_options(g: argparse._ActionsContainer) -> None:
    g.add_argument(
        "--premium",
        type=arg.positive_number,
        help="set A's fabric cost to this multiple of B's (1.3 = 30% dearer); default: both at catalog prices",
    )
    g.add_argument(
        "--design",
        choices=enum_names("DesignRule"),
        default="same",
        help="same: both fabrics on the same topology; cheapest: each on its own cheapest design",
    )
    g.add_argument("--gpus", type=arg.positive_int, help="the GPU count the verdict is about (default: the largest)")
    g.add_argument(
        "--quote",
        metavar="FILE",
        help="a vendor quote (TOML or CSV: line items mapped to price lines, bundle discounts, currency); its "
        "lines replace the catalog's prices and are marked quoted",
    )
    g.add_argument(
        "--value-per-gpu-hour",
        type=lambda t: arg.number(t, allow_zero=True),
        metavar="USD",
        help="what an extra busy GPU-hour of A is worth (rent it out, time to market) for NPV and payback; "
        "default: B's own cost of a busy GPU-hour",
    )


def _add_uncertainty_options(g: argparse._ActionsContainer) -> None:
    g.add_argument("--samples", type=arg.count, default=roi.DEFAULT_SAMPLES, help="Monte Carlo samples")
    g.add_argument(
        "--seed", type=arg.seed, default=0, help="random seed, 0 to 2^64 - 1 (the same seed gives the same numbers)"
    )
    g.add_argument(
        "--model-error",
        default="auto",
        metavar="SOURCE",
        help="the model's error: auto, validation (the scalefront validate residuals), none, or a TOML file "
        "of common_log_residuals and collective_log_residuals",
    )
    g.add_argument(
        "--max-samples", type=arg.count, default=10**6, help="refuse a Monte Carlo with more samples than this"
    )
    g.add_argument(
        "--max-configs",
        type=arg.count,
        default=DEFAULT_MAX_CONFIGS,
        help="refuse a scenario whose space has more configurations than this (each workload is swept first)",
    )
    g.add_argument(
        "--time-limit",
        type=arg.positive_number,
        default=600.0,
        metavar="SECONDS",
        help="stop (with a message) when a workload's sweep or the Monte Carlo is projected to take longer than this",
    )
    g.add_argument(
        "--cluster",
        default="auto",
        metavar="auto|local|ADDRESS",
        help="where to run the Monte Carlo, in shards of samples (the same numbers as here): `local` starts a Dask "
        "cluster on this machine (127.0.0.1), ADDRESS attaches to a Dask scheduler (tcp://host:8786); `auto`: local "
        "with --workers > 1 when the cluster extra is installed, else this process",
    )
    g.add_argument("--workers", type=arg.positive_int, metavar="N", help="worker processes of a local cluster")


def _check_outputs(args: argparse.Namespace) -> None:
    """The table's file and the report's folder writable, and apart, before any work."""
    check_outputs(args.force, out=args.out)
    if args.report is None:
        return
    from scalefront.roi.report import REPORT_FILES, check_report_dir  # the memo's libraries: only for --report

    report = check_report_dir(args.report, args.force)
    if args.out is not None and Path(args.out).resolve() in {
        report.resolve(),
        *(report.resolve() / n for n in REPORT_FILES),
    }:
        raise UsageError(f"--out {args.out} and --report {args.report} overlap; give the table another name")


def _design(text: str) -> str:
    name = text.strip()
    if not name:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a fabric id (ib-ndr) or FABRIC@MODE")
    return name


def _designs(text: str) -> list[str]:
    names = [t.strip() for t in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"{text!r}: expected fabric ids separated by commas (roce-400g,spectrum-x)")
    return names


def _date(text: str) -> str:
    try:
        return datetime.date.fromisoformat(text).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a date YYYY-MM-DD") from None


def _compared(args: argparse.Namespace) -> list[str]:
    """The designs B: --b, else the scenario's [cluster] compare_with, else roce-400g."""
    if args.fabric_b:
        return list(args.fabric_b)
    try:
        raw, file = read_scenario(args.scenario)
    except UsageError:
        return ["roce-400g"]  # the comparison reports the scenario's own error
    listed = validate_file(raw, file).cluster.compare_with  # the scenario's own check, a bad file first
    cat = catalog_of(args)
    for i, name in enumerate(listed, 1):
        try:
            cat.fabric_id(name)
        except CatalogError as err:
            raise UsageError(f"{file}: [cluster] compare_with, item {i}: {message_of(err)}") from None
    return list(listed) or ["roce-400g"]


def run(args: argparse.Namespace) -> int:
    _check_outputs(args)
    if args.quote is not None:
        load_quote(args.quote, catalog_of(args))  # a bad quote is refused before any work
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
        quote=args.quote,
    )
    line = ProgressLine("monte carlo", noun="samples")
    limit = _time_limit(args.samples, args.time_limit)

    def watch(p: McProgress) -> None:
        line(p)
        limit(p)

    try:
        result = roi.compare(
            args.scenario,
            args.fabric_a,
            _compared(args),
            catalog=catalog_of(args),
            options=options,
            on_progress=watch,
            cluster=args.cluster,
            workers=args.workers,
            max_configs=args.max_configs,
            time_limit_s=args.time_limit,
        )
    finally:
        line.close()
    _write(result, args)
    return 0


def _time_limit(samples: int, limit_s: float) -> Callable[[McProgress], None]:
    """Stops the Monte Carlo (LimitExceeded) once it is projected past `limit_s`, after its first second."""

    def check(p: McProgress) -> None:
        if p.elapsed_s < 1.0 or p.done >= p.total or p.rate <= 0:
            return
        projected = p.elapsed_s + (p.eta_s or 0.0)
        if projected > limit_s:
            raise LimitExceeded(
                f"{samples:,} Monte Carlo samples at {p.rate:,.0f}/s would take about {projected:,.0f} s, over "
                f"--time-limit {limit_s:g} s; lower --samples or raise --time-limit"
            )

    return check


def _write(result: RoiResult, args: argparse.Namespace) -> None:
    """The table and the report to their files, all or none (said on stderr), then the verdict and table or the
    JSON."""
    written = []
    with Outputs(args.force) as outputs:
        if args.out is not None:
            outputs.frame(result.table, args.out)
            written.append(args.out)
        if args.report is not None:
            from scalefront.roi.report import stage_report

            date = args.date or datetime.date.today().isoformat()
            path = stage_report(result, args.report, outputs, date=date)
            written += [str(path), str(path.with_suffix(".md"))]
        outputs.commit()
    if written:
        print(f"wrote {', '.join(written)}", file=sys.stderr)
    if args.json:
        print(json.dumps(result_dict(result, verdict(result)), indent=2))
    else:
        print(render(result))
