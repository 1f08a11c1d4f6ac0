"""`scalefront bom`: the network's bill of materials (NICs, switches per tier, cables, optics, capex, power)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from scalefront.cli.parser import Help, add_catalog_option, add_input_options, catalog_of, input_values
from scalefront.inputs.network import bom
from scalefront.report import render_bom

if TYPE_CHECKING:
    from scalefront.cli.parser import Commands


def add(sub: Commands) -> None:
    p = sub.add_parser(
        "bom",
        help="the network's bill of materials: NICs, switches per tier, cables, optics, capex, power",
        description="Count the scale-out network of a cluster (NICs, switches per tier, cables and optics by reach) "
        "and price it: capital cost and power, from the catalog's prices.",
        formatter_class=Help,
    )
    add_input_options(p, "bom", grouped=False, defaults={"gpus": None, "topology": "fat-tree"})
    add_catalog_option(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    b = bom(**input_values(args, "bom"), catalog=catalog_of(args))
    if args.json:
        print(json.dumps(b, indent=2))
        return 0
    print(render_bom(b))
    return 0
