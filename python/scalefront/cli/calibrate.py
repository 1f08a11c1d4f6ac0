"""`scalefront calibrate`: a fabric's figures fitted to a buyer's nccl-tests logs, written as a catalog entry."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import TYPE_CHECKING

from scalefront.cli import types as arg
from scalefront.cli.parser import Help, add_catalog_option, catalog_of
from scalefront.engine.export import check_text_target, write_text
from scalefront.errors import UsageError
from scalefront.fidelity.calibrate import calibrate
from scalefront.fidelity.calibrate_text import render, render_toml
from scalefront.fidelity.nccl_log import parse_log

if TYPE_CHECKING:
    from scalefront.cli.parser import Commands


def add(sub: Commands) -> None:
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
        formatter_class=Help,
    )
    p.add_argument("logs", nargs="+", metavar="LOG", help="nccl-tests output files")
    p.add_argument(
        "--fabric", required=True, help="the base fabric id (e.g. ib-ndr, roce-400g); unfitted figures are its"
    )
    p.add_argument("--out", required=True, metavar="FILE", help="the catalog file to write (e.g. my-fabric.toml)")
    p.add_argument("--name", help="id of the written fabric (default: the --out file's name without .toml)")
    p.add_argument("--force", action="store_true", help="replace --out if it exists")
    p.add_argument(
        "--gpu", help="GPU id (default: the GPU whose device_names the logs' Rank lines bear; only sets the scale-up)"
    )
    p.add_argument("--scale-up", help="the nodes' scale-up domain id (default: the GPU's)")
    p.add_argument("--topology", default="rail-fat-tree", help="the proof of concept's topology id")
    p.add_argument(
        "--oversubscription",
        type=arg.ratio,
        help="leaf oversubscription (2, 2:1, or 3:2 = 1.5); default: the topology's",
    )
    p.add_argument(
        "--collnet",
        action="store_true",
        help="the runs enabled in-network reduction (NCCL_COLLNET_ENABLE=1, SHARP); without it the model leaves "
        "SHARP out, as NCCL does by default, and keeps the base's figure",
    )
    add_catalog_option(p)
    p.set_defaults(run=run)


#: A fabric id as the catalogs write them.
_FABRIC_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def run(args: argparse.Namespace) -> int:
    name = args.name if args.name is not None else Path(args.out).name.removesuffix(".toml")
    if not _FABRIC_ID.match(name):
        raise UsageError(f"--name {name!r}: a fabric id is letters, digits, '.', '_' and '-'; pass --name")
    check_text_target(args.out, args.force)
    catalog = catalog_of(args)
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
