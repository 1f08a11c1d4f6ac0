"""`scalefront sweep`: a scenario's space on all cores (here, as one shard of a job array, or on a Dask
cluster), its Pareto frontiers printed or exported. The command builds an `engine.job.SweepRequest`; the engine
runs it."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

import polars as pl

from scalefront.cli import types as arg
from scalefront.cli.parser import Help, add_catalog_option
from scalefront.engine.job import SweepPlan, SweepRequest, sweep
from scalefront.engine.progress import ProgressLine
from scalefront.engine.sweep import SweepResult
from scalefront.inputs.scenario.file import AXES, DEFAULT_SCENARIO, OBJECTIVES, group_by_problem, objectives_problem
from scalefront.report import render_sweep

if TYPE_CHECKING:
    from scalefront.cli.parser import Commands

__all__ = ["add", "print_sweep", "run"]


def add(sub: Commands) -> None:
    p = sub.add_parser(
        "sweep",
        help="sweep a scenario's space on all cores and print or export its Pareto frontiers",
        description="Evaluate every configuration of a scenario (a built-in id or a TOML file; the README "
        "documents the format) and keep the Pareto frontiers. Without --out, prints them.",
        formatter_class=Help,
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
        type=arg.names(group_by_problem),
        metavar="AXES",
        help=f"frontier per value of these axes, comma-separated ({', '.join(AXES)}); default: the scenario's",
    )
    p.add_argument(
        "--objectives",
        type=arg.names(objectives_problem),
        metavar="NAMES",
        help=f"two or three of {', '.join(OBJECTIVES)}; default: the scenario's",
    )
    add_catalog_option(p)
    p.add_argument(
        "--max-configs", type=arg.count, default=10**11, help="refuse a space with more configurations than this"
    )
    p.add_argument(
        "--time-limit",
        type=arg.positive_number,
        default=1800.0,
        metavar="SECONDS",
        help="stop (with a message) when the sweep is projected to take longer than this",
    )
    _add_run_options(p)
    p.set_defaults(run=run)


def _add_run_options(p: argparse.ArgumentParser) -> None:
    """Where and in which pieces the sweep runs."""
    p.add_argument(
        "--shard",
        type=arg.shard,
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
        type=arg.positive_int,
        metavar="N",
        help="worker processes of a local cluster: with --cluster auto, more than 1 starts one; with --cluster "
        "local, default one per core",
    )


def run(args: argparse.Namespace) -> int:
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
    print_sweep(outcome.result, outcome.frontier, outcome.written, args.out)
    return 0


def _announce(plan: SweepPlan) -> None:
    """On a terminal, what is about to be swept."""
    if sys.stderr.isatty():
        what = f"shard {plan.shard.label}, " if plan.shard else ""
        print(f"{plan.scenario.name}: {what}{plan.size:,} configurations", file=sys.stderr)


def print_sweep(result: SweepResult, frontier: pl.DataFrame, written: list[str], out: str | None) -> None:
    """What was written goes to stderr (always, so that a piped stdout still gets only the result); the frontiers
    go to stdout unless --out took them and stdout is not a terminal."""

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
