"""`scalefront merge`: the parts of a sharded sweep (`sweep --shard K/N`) into its frontier or `--all` export."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from scalefront.cli.parser import Help
from scalefront.cli.sweep import print_sweep
from scalefront.engine.job import merge

if TYPE_CHECKING:
    from scalefront.cli.parser import Commands


def add(sub: Commands) -> None:
    p = sub.add_parser(
        "merge",
        help="merge the parts of a sharded sweep (sweep --shard K/N) into its frontier or --all export",
        description="Check that the parts come from one scenario and catalog and that every shard is there once, "
        "then merge them: frontier parts into the sweep's frontier (the rows and bytes a one-machine run writes), "
        "--all parts into its every-feasible-row export. Without --out, prints the frontiers.",
        formatter_class=Help,
    )
    p.add_argument("parts", nargs="+", metavar="PART", help="the parts (.parquet), in any order")
    p.add_argument("--out", help="write the merged frontier (or rows) here (.csv or .parquet)")
    p.add_argument("--force", action="store_true", help="replace an existing output file")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    outcome = merge(args.parts, args.out, args.force)
    if outcome.result is None or outcome.frontier is None:
        print(f"wrote {', '.join(outcome.written)}", file=sys.stderr)
        return 0
    print_sweep(outcome.result, outcome.frontier, outcome.written, args.out)
    return 0
