"""`scalefront calibrate`: a fabric's figures fitted to a buyer's nccl-tests logs, written as a catalog entry."""

from __future__ import annotations

import argparse
import hashlib
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING

from scalefront.cli import types as arg
from scalefront.cli.parser import Help, add_catalog_option, catalog_of
from scalefront.engine.export import check_text_target, write_text
from scalefront.engine.progress import ProgressLine, Steps
from scalefront.errors import UsageError
from scalefront.fidelity.calibrate import calibrate
from scalefront.fidelity.calibrate_text import render, render_toml
from scalefront.fidelity.nccl_log import Run, parse_log

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


def _check_options(args: argparse.Namespace) -> str:
    """--out (a new .toml file), the fabric's id, the logs given once each; the fabric's id."""
    try:
        check_text_target(args.out, args.force)
    except UsageError as err:
        raise UsageError(f"--out: {err}") from None
    if Path(args.out).suffix.lower() != ".toml":
        raise UsageError(f"--out {args.out}: the calibrated fabric is a catalog file; name it .toml")
    name = args.name if args.name is not None else Path(args.out).name.removesuffix(".toml")
    if not _FABRIC_ID.match(name):
        raise UsageError(f"--name {name!r}: a fabric id is letters, digits, '.', '_' and '-'; pass --name")
    seen: dict[bytes, str] = {}
    for log in args.logs:
        path = Path(log)
        key = hashlib.sha256(path.read_bytes()).digest() if path.is_file() else str(path.resolve()).encode()
        if key in seen:
            raise UsageError(f"{log}: the same log as {seen[key]}; give each run once (its points would count twice)")
        seen[key] = log
    return name


def _read_logs(logs: list[str]) -> list[Run]:
    """Every run of the logs, with a progress line on a terminal (a proof of concept's logs may be large)."""
    line = ProgressLine("reading", noun="logs")
    start = time.monotonic()
    runs: list[Run] = []
    try:
        for i, log in enumerate(logs):
            runs += parse_log(log)
            line(Steps(i + 1, len(logs), time.monotonic() - start))
    finally:
        line.close()
    return runs


def run(args: argparse.Namespace) -> int:
    name = _check_options(args)
    catalog = catalog_of(args)
    base = catalog.fabric(args.fabric)
    if args.collnet and base.in_network_reduction_efficiency == 0:
        raise UsageError(
            f"--collnet: {args.fabric} has no in-network reduction (SHARP; its in_network_reduction_efficiency is "
            "0), so runs over it cannot have used it; drop --collnet"
        )
    runs = _read_logs(args.logs)
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
