"""`scalefront eval`: one configuration: step time, where it goes, memory, time and cost to train."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from scalefront.cli import types as arg
from scalefront.cli.parser import Help, add_catalog_option, add_cluster_options, add_price_option, cluster_arguments
from scalefront.inputs.model import evaluate
from scalefront.report import render

if TYPE_CHECKING:
    from scalefront.cli.parser import Commands


def add(sub: Commands) -> None:
    p = sub.add_parser(
        "eval",
        help="evaluate one configuration: step time, where it goes, memory, time and cost to train",
        description="Evaluate one training configuration. Without options: Llama 3 70B on 1,024 H100s over "
        "InfiniBand NDR, TP 8, 1T tokens.",
        formatter_class=Help,
    )
    g = p.add_argument_group("workload")
    g.add_argument("--model", default="llama3-70b", help="catalog model id, or a model TOML file")
    g.add_argument("--tokens", type=arg.count, default=10**12, help="training tokens, a whole number (1e12, 15T, 300B)")
    g.add_argument("--global-batch", type=arg.positive_int, help="sequences per step (default: ~4M tokens)")
    g.add_argument("--seq-len", type=arg.positive_int, help="sequence length (default: the model's)")
    g.add_argument("--precision", choices=["bf16", "fp8"], default="bf16", help="GEMM precision")
    g.add_argument(
        "--no-flash-attention",
        action="store_true",
        help="attention materialises its scores (no fused/flash attention kernel)",
    )
    add_cluster_options(p.add_argument_group("cluster"), gpus=1024, topology="rail-fat-tree")
    g = p.add_argument_group("parallelism")
    g.add_argument("--tp", type=arg.positive_int, default=8, help="tensor parallel")
    g.add_argument("--pp", type=arg.positive_int, default=1, help="pipeline parallel")
    g.add_argument("--dp", type=arg.positive_int, help="data parallel (default: gpus / (tp x pp x cp))")
    g.add_argument("--cp", type=arg.positive_int, default=1, help="context parallel")
    g.add_argument("--ep", type=arg.positive_int, default=1, help="expert parallel (ep x etp divides tp x dp x cp)")
    g.add_argument("--vpp", type=arg.positive_int, default=1, help="virtual pipeline stages per GPU (interleaved)")
    g.add_argument("--micro-batch", type=arg.positive_int, default=1, help="sequences per micro-batch")
    g.add_argument("--zero", type=int, choices=[0, 1, 2, 3], default=1, help="ZeRO stage (3 = FSDP)")
    g.add_argument(
        "--recompute", choices=["none", "selective", "full"], default="selective", help="activation recomputation"
    )
    g.add_argument("--no-sequence-parallel", action="store_true", help="turn off sequence parallelism")
    g.add_argument(
        "--overlap",
        default="dp",
        help="none, dp, full, a fraction for all, or dp=0.9,tp=0.5,pp=0,ep=0",
    )
    g.add_argument("--etp", type=arg.positive_int, help="expert tensor parallel (default: tp); ep x etp | tp x dp x cp")
    g.add_argument("--first-stage-layers", type=arg.size, help="transformer layers on the first pipeline stage")
    g.add_argument("--last-stage-layers", type=arg.size, help="transformer layers on the last pipeline stage")
    g.add_argument(
        "--embedding-in-split", action="store_true", help="count the embedding as a layer of the pipeline split"
    )
    g.add_argument("--loss-in-split", action="store_true", help="count the loss as a layer of the pipeline split")
    g.add_argument(
        "--no-reshard-after-forward",
        action="store_true",
        help="ZeRO-3: keep gathered parameters until the backward pass (FSDP reshard_after_forward=False)",
    )
    g = p.add_argument_group("software")
    g.add_argument("--grad-reduce-dtype", choices=["fp32", "bf16"], default="fp32", help="gradient reduction format")
    g.add_argument(
        "--attention-kernel",
        choices=["best", "fa2"],
        default="best",
        help="fused attention kernel: the GPU's best or FA2",
    )
    g.add_argument(
        "--moe-dispatcher", choices=["alltoall", "flex", "allgather"], default="alltoall", help="MoE token dispatcher"
    )
    g.add_argument(
        "--moe-imbalance", type=arg.imbalance, default=1.0, help="busiest expert rank's routed tokens / mean"
    )
    g.add_argument("--mtp-layers", type=arg.size, default=0, help="multi-token-prediction modules (DeepSeek-V3: 1)")
    g.add_argument(
        "--interval", type=arg.level, help="coverage of the prediction intervals (default: 0.9, data/model_error.toml)"
    )
    g = p.add_argument_group("cost")
    g.add_argument("--cost-mode", choices=["rent", "own"], default="rent", help="cost_to_train_usd in this mode")
    add_price_option(g, "override a catalog price (repeatable): rent_usd_per_gpu_hour, server_usd, switch_usd, ...")
    add_catalog_option(g)
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    result = evaluate(
        args.model,
        **cluster_arguments(args),
        tp=args.tp,
        pp=args.pp,
        dp=args.dp,
        cp=args.cp,
        ep=args.ep,
        vpp=args.vpp,
        micro_batch=args.micro_batch,
        global_batch=args.global_batch,
        seq_len=args.seq_len,
        recompute=args.recompute,
        zero=args.zero,
        sequence_parallel=not args.no_sequence_parallel,
        overlap=args.overlap,
        precision=args.precision,
        flash_attention=not args.no_flash_attention,
        tokens=args.tokens,
        cost_mode=args.cost_mode,
        etp=args.etp,
        first_stage_layers=args.first_stage_layers,
        last_stage_layers=args.last_stage_layers,
        embedding_in_split=args.embedding_in_split,
        loss_in_split=args.loss_in_split,
        reshard_after_forward=not args.no_reshard_after_forward,
        grad_reduce_dtype=args.grad_reduce_dtype,
        attention_kernel=args.attention_kernel,
        moe_imbalance=args.moe_imbalance,
        moe_dispatcher=args.moe_dispatcher,
        mtp_layers=args.mtp_layers,
        interval=args.interval,
    )
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print(render(result))
    return 0
