"""`scalefront eval`: one configuration: step time, where it goes, memory, time and cost to train."""

from __future__ import annotations

import argparse
import dataclasses
import json
import textwrap
from typing import TYPE_CHECKING, Any

from scalefront._evaluation import Evaluation
from scalefront._inputs import Inputs
from scalefront.cli.parser import Help, add_catalog_option, add_input_options, catalog_of, input_values
from scalefront.inputs.model import evaluate_inputs
from scalefront.report import render, segment_note, suggested_segment

if TYPE_CHECKING:
    from scalefront.cli.parser import Commands
    from scalefront.inputs.catalog import Catalog


def add(sub: Commands) -> None:
    p = sub.add_parser(
        "eval",
        help="evaluate one configuration: step time, where it goes, memory, time and cost to train",
        description="Evaluate one training configuration. Without options: Llama 3 70B on 1,024 H100s over "
        "InfiniBand NDR, TP 8, 1T tokens.",
        formatter_class=Help,
    )
    groups = add_input_options(p, "flag", grouped=True)
    add_catalog_option(groups["cost"])
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    catalog, values = catalog_of(args), input_values(args, "flag")
    result = evaluate_inputs(Inputs(**values), catalog)
    if args.json:
        # An infeasible result carries its reason, as the table does (feasible ones stay as they were).
        reason = {"reason": result.reason} if result.reason else {}
        print(json.dumps({**result.to_dict(), **reason}, indent=2))
    else:
        notes = _software_notes(result, values) + _recompute_notes(result, catalog)
        print(render(result, notes + _placement_notes(result, values, catalog)))
    return 0


def _software_notes(result: Evaluation, values: dict[str, Any]) -> list[str]:
    """The framework whose terms apply, and the software switches the run sets away from their defaults that the
    settings line above does not show (`--no-tp-async-allreduce`, `--fp8-param-gather`, ...), by input name."""
    shown = {f.name for f in dataclasses.fields(Evaluation)}
    changed = [
        f"{f.name} {'on' if values[f.name] else 'off'}"
        for f in dataclasses.fields(Inputs)
        if f.type in ("bool", bool) and f.name not in shown and f.name in values and values[f.name] != f.default
    ]
    text = "; ".join([result.framework, ", ".join(changed)] if changed else [result.framework])
    return textwrap.wrap(text, 80, initial_indent="  software   ", subsequent_indent=" " * 13)


def _recompute_notes(result: Evaluation, catalog: Catalog) -> list[str]:
    """What selective recomputation reruns where it is not Korthikanti et al.'s rule: the modules the run names, or
    the framework's own policy."""
    if result.recompute != "selective":
        return []
    if result.recompute_modules:
        return [f"  recompute  selective, these modules rerun: {result.recompute_modules.replace(',', ', ')}"]
    if not catalog.framework(result.framework).selective_recomputes_alternate_mms:
        return []
    return [f"  recompute  selective as {result.framework} runs it: every other GEMM of a layer rerun"]


def _placement_notes(result: Evaluation, values: dict[str, Any], catalog: Catalog) -> list[str]:
    """The segment hint where a job part-fills its last NVLink domain and the segment shortens its step."""
    domain = catalog.scale_up_domain(result.scale_up).domain_gpus
    segment = suggested_segment(result, domain, catalog.gpu(result.gpu).server_gpus)
    if not segment:
        return []
    segmented = evaluate_inputs(Inputs(**{**values, "nvlink_segment_nodes": segment}), catalog)
    if segmented.step_time_s >= result.step_time_s * 0.995:
        return []
    return segment_note(result, domain, segment, segmented.step_time_s)
