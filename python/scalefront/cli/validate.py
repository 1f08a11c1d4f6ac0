"""`scalefront validate`: the model against published training runs and nccl-tests curves; the GPU calibration
and the prediction intervals' fit."""

from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from scalefront.engine.export import write_text
from scalefront.errors import UsageError
from scalefront.fidelity import validation

if TYPE_CHECKING:
    from scalefront.cli.parser import Commands


def add(sub: Commands) -> None:
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
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
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
