"""`scalefront validate`: the model against published training runs and nccl-tests curves; the training
frameworks' calibration and the prediction intervals' fit."""

from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from scalefront.engine.export import check_text_target, write_text
from scalefront.errors import UsageError
from scalefront.fidelity import validation
from scalefront.inputs.files import read_text

if TYPE_CHECKING:
    from scalefront.cli.parser import Commands


def add(sub: Commands) -> None:
    p = sub.add_parser(
        "validate",
        help="compare the model with published training runs and nccl-tests curves",
        description="Predict every published measurement in the validation tables and print the errors.",
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--markdown", action="store_true", help="print the Markdown report (docs/validation.md)")
    mode.add_argument(
        "--calibrate",
        action="store_true",
        help="print each training framework's fitted terms (layer overhead, overlap interference) and each GPU's "
        "serving_efficiency, with their rows",
    )
    p.add_argument(
        "--calibrate-protocols",
        action="store_true",
        help="print each NIC's LL and LL128 step savings fitted on its fabrics' calibration curves",
    )
    p.add_argument(
        "--write",
        metavar="TOML",
        help="with --calibrate: write the fitted terms and their source lines into this frameworks.toml; with "
        "--calibrate-protocols, into this fabrics.toml (needs --force)",
    )
    p.add_argument(
        "--write-gpus",
        metavar="TOML",
        help="with --calibrate: write each GPU's fitted serving_efficiency and its source line into this gpus.toml "
        "(needs --force)",
    )
    mode.add_argument(
        "--calibrate-errors",
        action="store_true",
        help="fit the prediction intervals' residuals by regime (data/model_error.toml) and print them",
    )
    p.add_argument("--out", help="with --calibrate-errors: write the file here instead of printing it")
    mode.add_argument(
        "--coverage", action="store_true", help="the intervals' coverage on rows held out by source family"
    )
    p.add_argument("--force", action="store_true", help="replace an existing file")
    p.set_defaults(run=run)


def _check_outputs(args: argparse.Namespace) -> None:
    """--write and --out with their modes, writable (before the fits run)."""
    if args.write is not None and not (args.calibrate or args.calibrate_protocols):
        raise UsageError("--write goes with --calibrate or --calibrate-protocols")
    if args.calibrate and args.calibrate_protocols:
        raise UsageError("--calibrate and --calibrate-protocols write different files: run them one at a time")
    if args.out is not None and not args.calibrate_errors:
        raise UsageError("--out goes with --calibrate-errors")
    if args.write_gpus is not None and not args.calibrate:
        raise UsageError("--write-gpus goes with --calibrate")
    targets = {"--write": args.write, "--write-gpus": args.write_gpus}
    for flag, target in targets.items():
        if target is None:
            continue
        path = Path(target)
        if not path.is_file():
            what = (
                "gpus.toml"
                if flag == "--write-gpus"
                else "fabrics.toml"
                if args.calibrate_protocols
                else "frameworks.toml"
            )
            raise UsageError(f"{flag} {target}: no such file (give the {what} to update)")
        try:
            check_text_target(path, args.force)
        except UsageError as err:
            raise UsageError(f"{flag}: {err}") from None
    if args.out is not None:
        try:
            check_text_target(args.out, args.force)
        except UsageError as err:
            raise UsageError(f"--out: {err}") from None


def run(args: argparse.Namespace) -> int:
    _check_outputs(args)
    if args.calibrate_protocols:
        return _protocols(args.write, args.force)
    if args.calibrate:
        return _calibrate(args)
    if args.calibrate_errors:
        text = validation.fit_error_model()
        if args.out is not None:
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
    held_out = validation.held_out_errors()
    serving = validation.serving_checks()
    text = validation.render(
        training, collectives, markdown=args.markdown, coverage=coverage, held_out=held_out, serving=serving
    )
    print(text, end="" if args.markdown else "\n")
    return 0


def _protocols(write: str | None, force: bool) -> int:
    """`--calibrate-protocols`: each NIC's fitted LL/LL128 savings, and with `--write` the fabrics.toml updated."""
    fits = validation.fit_protocols()
    for nic, fit in fits.items():
        how = f"borrowed from {fit.borrowed_from}" if fit.borrowed_from else f"curves: {', '.join(fit.curves)}"
        print(f"{nic}: ll_step_saving_us = {fit.ll_us}, ll128_step_saving_us = {fit.ll128_us}  ({how})")
    if write:
        path = Path(write)
        if not path.exists():
            raise UsageError(f"{path}: no such file (give the fabrics.toml to update)")
        date = datetime.date.today().strftime("%Y-%m")
        write_text(validation.write_protocols(path.read_text(), fits, date), path, force)
        print(f"wrote {path}", file=sys.stderr)
    return 0


def _calibrate(args: argparse.Namespace) -> int:
    """Fit and print (and with --write / --write-gpus, write) each training framework's terms and each GPU's
    serving_efficiency."""
    fitted = validation.calibrate()
    for framework, fit in fitted.items():
        terms = ", ".join(f"{t} = {v:g}" for t, v in fit.values.items())
        print(f"{framework}: {terms}  (rows: {', '.join(fit.rows) or 'none'})")
    serving = validation.calibrate_serving()
    for gpu, (value, rows) in serving.items():
        print(f"{gpu}: serving_efficiency = {value}  (rows: {', '.join(rows)})")
    date = datetime.date.today().strftime("%Y-%m")
    writers = [
        (args.write, "frameworks.toml", lambda text: validation.write_calibration(text, fitted, date)),
        (args.write_gpus, "gpus.toml", lambda text: validation.write_serving_calibration(text, serving, date)),
    ]
    for target, what, write in writers:
        if target is None:
            continue
        path = Path(target)
        try:
            text = write(read_text(path))
        except ValueError as err:
            raise UsageError(f"{path}: not a {what} to update ({err})") from None
        write_text(text, path, args.force)
        print(f"wrote {path}", file=sys.stderr)
    return 0
