#!/usr/bin/env python3
"""`scalefront measure`'s benchmarks on a bare GPU box: PyTorch and Triton, no scalefront install needed.

From a scalefront checkout on the GPU machine:

    python3 python/scalefront/fidelity/measure/bench.py --quick

runs the GEMMs (BF16 and FP8, forward, data and weight gradient) of every layer of the models named (default: every
built-in model) at TP 1, 2, 4 and 8, fused causal attention by heads per GPU, HBM, and the MoE models' routed
experts by tokens per expert, reading the models from the checkout's data/models/. It prints
a line per case on stderr, writes the record to $OUT/measure-run.json (else ./measure-run.json; --out DIR), and
prints, last, one JSON line on stdout: the device, the wall time and the median rates. Make the catalog entry
from the record anywhere scalefront is installed:
``scalefront measure --replay measure-run.json --gpu h100-sxm --out my-h100.toml``.

`--quick` takes the models' own sequence length as the tokens per micro-batch (else half, one and two times it),
PyTorch's default attention backend only (else also FlashAttention-2), and 25 ms of repeats per kernel (else 100).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

if __name__ == "__main__" and not __package__:
    # Run as a file: this folder is imported as the package `measure` (PEP 366), so nothing of scalefront (whose
    # extension may not be built here) is needed.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "measure"

from .cases import (
    PASSES,
    AttentionCase,
    Case,
    ExpertCase,
    GemmCase,
    HostCase,
    ModelShape,
    Plan,
    Request,
    attention_fwd_flops,
    build_plan,
    expert_fwd_flops,
)
from .driver import Device, Status, result_text, run_plan, tflops

__all__ = ["DEFAULT_MODELS", "main", "summary"]

#: Every model of the built-in catalog: the dense shapes of the recorded runs in data/measurements/ (Llama 3 8B, 70B,
#: 405B, GPT-3 175B), MLA and DeepSeek-V3's and Mixtral's routed experts.
DEFAULT_MODELS = ("llama3-8b", "llama3-70b", "llama3-405b", "gpt3-175b", "mixtral-8x7b", "deepseek-v3")
RECORD_NAME = "measure-run.json"
#: data/models/ of the checkout this file sits in (python/scalefront/fidelity/measure/bench.py).
MODELS_DIR = Path(__file__).resolve().parents[4] / "data" / "models"


def _ints(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected whole numbers separated by commas, got {text!r}") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive whole numbers, got {text!r}")
    return values


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="bench.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer token counts and backends, shorter repeats")
    p.add_argument("--model", action="append", help=f"model id in data/models/ (repeatable; default {DEFAULT_MODELS})")
    p.add_argument("--tp", type=_ints, default=(1, 2, 4, 8), help="TP degrees, e.g. 1,2,4,8")
    p.add_argument("--tokens", type=_ints, help="tokens per micro-batch (default: from each model's seq_len)")
    p.add_argument("--no-fp8", action="store_true", help="skip the FP8 GEMMs")
    p.add_argument("--no-experts", action="store_true", help="skip the routed experts of MoE models")
    p.add_argument(
        "--attention-grid",
        action="store_true",
        help="also every cell of the catalog's attention table (heads per GPU x sequence length), both backends",
    )
    p.add_argument("--ep", type=_ints, default=(1,), help="expert-parallel degrees of the MoE models, e.g. 8,64")
    p.add_argument(
        "--host",
        action="store_true",
        help="also the host's kernel-launch times and each MoE model's layer in eager PyTorch, host against GPU",
    )
    p.add_argument("--only-host", action="store_true", help="the host probe alone (--host without the GPU kernels)")
    p.add_argument("--models-dir", type=Path, default=MODELS_DIR, help="folder of the model TOML files")
    p.add_argument("--out", type=Path, help="folder for measure-run.json (default: $OUT, else .)")
    return p


def _requests(args: argparse.Namespace) -> list[Request]:
    out = []
    for name in args.model or DEFAULT_MODELS:
        path = args.models_dir / f"{name}.toml"
        if not path.is_file():
            raise SystemExit(f"bench.py: no model file {path} (run from a scalefront checkout, or pass --models-dir)")
        model = ModelShape.from_fields(name, tomllib.loads(path.read_text(encoding="utf-8")))
        s = model.seq_len
        tokens = args.tokens or ((s,) if args.quick else (s // 2, s, 2 * s))
        tps = tuple(tp for tp in args.tp if model.heads % tp == 0 and model.kv_heads % tp == 0)
        out.append(Request(model, tps, tokens, eps=args.ep))
    return out


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def summary(plan: Plan, record: dict[str, Any], results: list[tuple[Case, dict[str, Any]]]) -> dict[str, Any]:
    """The one-line JSON summary: the device, the wall time, errors, and median rates by kind of kernel."""
    ok = [(c, v) for c, v in results if "error" not in v]
    gemm: dict[str, list[float]] = {"bf16": [], "fp8": []}
    for c, v in ok:
        if isinstance(c, GemmCase):
            ms = sum(v[f"{p}_ms"] for p in PASSES)
            gemm[c.dtype] += [tflops(len(PASSES) * 2.0 * c.m * c.k * c.n, ms)] * len(c.uses)
    att: dict[str, list[float]] = {}
    for c, v in ok:
        if isinstance(c, AttentionCase):
            att.setdefault(c.backend, []).append(tflops(3.5 * attention_fwd_flops(c), v["fwdbwd_ms"]))
    grouped = [
        tflops(expert_fwd_flops(c), v["grouped_fwd_ms"])
        for c, v in ok
        if isinstance(c, ExpertCase) and "grouped_fwd_ms" in v
    ]
    host = [v["host_ms"] * 1e3 / v["kernels"] for c, v in ok if isinstance(c, HostCase) and c.kind == "moe_layer"]
    return {
        "device": record.get("gpu"),
        "torch": record.get("torch"),
        "driver": record.get("driver"),
        "quick": plan.quick,
        "cases": len(results),
        "errors": len(results) - len(ok),
        "wall_s": round(record["wall_s"], 1),
        "hbm_copy_gbytes_per_s": _median([record["copy_GBps"]]) if "copy_GBps" in record else None,
        "gemm_bf16_median_tflops": _median(gemm["bf16"]),
        "gemm_fp8_median_tflops": _median(gemm["fp8"]),
        "attention_fwdbwd_median_tflops": {backend: _median(rates) for backend, rates in att.items()},
        "experts_grouped_fwd_median_tflops": _median(grouped),
        "host_moe_us_per_kernel_median": _median(host),
    }


def _reporter(stream: Any) -> Callable[[Case, dict[str, Any], Status], None]:
    def report(case: Case, values: dict[str, Any], s: Status) -> None:
        eta = f", ETA {s.eta_s:.0f} s" if s.eta_s is not None and s.done < s.total else ""
        print(f"[{s.done}/{s.total}{eta}] {result_text(case, values)}", file=stream, flush=True)

    return report


def main(argv: Sequence[str] | None = None, device: Callable[[int], Device] | None = None) -> int:
    """Run the plan on `device(rep_ms)` (default: the PyTorch device), write the record, print the summary."""
    args = _parser().parse_args(argv)
    plan = build_plan(
        _requests(args),
        fp8=not args.no_fp8,
        experts=not args.no_experts,
        quick=args.quick,
        attention_grid=args.attention_grid,
        host=args.host or args.only_host,
    )
    if args.only_host:
        plan = Plan(tuple(c for c in plan.cases if isinstance(c, HostCase)), plan.rep_ms, plan.quick)
    out_dir = args.out or Path(os.environ.get("OUT") or ".")
    if device is None:
        from .torch_device import TorchDevice

        device = TorchDevice
    dev = device(plan.rep_ms)
    results: list[tuple[Case, dict[str, Any]]] = []
    report = _reporter(sys.stderr)

    def on_result(case: Case, values: dict[str, Any], s: Status) -> None:
        results.append((case, values))
        report(case, values, s)

    command = "python3 bench.py " + " ".join(argv if argv is not None else sys.argv[1:])
    date = time.strftime("%Y-%m-%d", time.gmtime())
    record = run_plan(plan, dev, date=date, command=command.strip(), on_result=on_result)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / RECORD_NAME
    tmp = path.with_name(f".{RECORD_NAME}.tmp")
    tmp.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    print(json.dumps(summary(plan, record, results) | {"record": str(path)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
