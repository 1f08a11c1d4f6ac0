//! A training framework's fields (data/frameworks.toml): the software terms `crate::software::FrameworkSpec` holds.

use super::{
    core, flag, num, sampled, text, CatalogSection, CatalogUnit::*, Figure, AT_LEAST_ONE, NON_NEGATIVE, NOT_IN_CORE,
    SHARE,
};

const W: CatalogSection = CatalogSection::Frameworks;
pub(super) const FRAMEWORKS: &[Figure] = &[
    text(W, "name", NOT_IN_CORE).doc("display name"),
    text(W, "family", NOT_IN_CORE)
        .doc("the software the terms describe, as validation rows name it (Megatron-Core, NeMo, Megatron-Bridge, ...)"),
    num(W, "layer_overhead", Fraction, NON_NEGATIVE, core("layer_overhead"), "framework layer overhead").doc(
        "time a layer spends beyond its kernels, as a fraction of its forward and backward compute at BF16 rates \
            (copies and casts, element-wise work in several kernels, launch gaps: set by the layer's shapes, so FP8 \
            GEMMs do not shrink it); fitted per framework on named calibration rows (`scalefront validate \
            --calibrate`)",
    ),
    num(W, "microbatch_overhead_s", S, NON_NEGATIVE, core("microbatch_overhead_s"), "framework micro-batch overhead")
        .doc("fixed time per micro-batch on each pipeline stage (schedule bookkeeping, point-to-point waits)"),
    num(W, "step_overhead_s", S, NON_NEGATIVE, core("step_overhead_s"), "framework step overhead")
        .doc("fixed time per optimizer step beyond the optimizer's memory traffic (launches, clipping, logging)"),
    num(W, "optimizer_bytes_per_param", Bytes, NON_NEGATIVE, core("optimizer_bytes_per_param"), "optimizer bytes").doc(
        "bytes the optimizer step moves through HBM per parameter it updates (the local shard under ZeRO 1-3): \
            Adam's 28 (FP32 gradient, master, m, v read; master, m, v written) and the framework's passes around \
            it: the gradient norm's read (4), clipping's scale (8), the copy into the 16-bit weights (6)",
    ),
    flag(W, "zeroes_grad_buffer", core("zeroes_grad_buffer")).doc(
        "every step starts by zeroing the whole main-gradient buffer, the local gradients in their reduction format \
            (Megatron-Core's `zero_grad_buffer`; `false`: gradients set to None)",
    ),
    num(
        W,
        "overlap_interference",
        Fraction,
        NON_NEGATIVE,
        sampled!(framework, overlap_interference),
        "overlap interference",
    )
    .doc(
        "share of the communication hidden behind compute that the compute loses to it (collective kernels take \
            SMs and HBM bandwidth); fitted per framework like `layer_overhead`, with the range the calibration rows \
            leave open, which the ROI samples",
    ),
    num(W, "tp_backward_overlap", Fraction, SHARE, core("tp_backward_overlap"), "TP backward overlap").doc(
        "share of the backward pass's tensor-parallel collectives hidden behind the weight-gradient GEMMs without TP \
            overlap (Megatron-LM's asynchronous input-gradient all-reduce: 1; 0 where the framework waits)",
    ),
    num(W, "fp8_cast_bytes", Bytes, NON_NEGATIVE, core("fp8_cast_bytes"), "FP8 cast bytes").doc(
        "bytes moved per element to quantise a GEMM's activation input to FP8 (read BF16, write FP8: 3; a dynamic \
            scale reads it once more: 5)",
    ),
    num(W, "moe_permute_factor", Ratio, AT_LEAST_ONE, core("moe_permute_factor"), "MoE permutation factor")
        .doc("token permutation and un-permutation time over their bytes at HBM speed (1: fused kernels)"),
    num(W, "moe_router_s", S, NON_NEGATIVE, core("moe_router_s"), "MoE router time")
        .doc("fixed time of the router per MoE layer forward, beside its GEMM (softmax, top-k, auxiliary loss)"),
    num(W, "host_s_per_kernel", S, NON_NEGATIVE, core("host_s_per_kernel"), "host time per kernel").doc(
        "host time per op the framework issues from Python: each kernel of a MoE layer (eager PyTorch's \
            dispatch), and each rank's slice and copy of a ZeRO-3 collective issued by tensor; a dropless layer \
            syncs with the host, and by-tensor gathers block, so a host slower than the GPU's work leaves the GPU \
            waiting (0: the host keeps ahead, or not measured); `scalefront measure --host` measures it",
    ),
    num(W, "moe_host_kernels", Count, NON_NEGATIVE, core("moe_host_kernels"), "MoE layer kernels")
        .doc("kernels a MoE layer launches forward and backward beside the per-expert ones"),
    num(
        W,
        "moe_host_kernels_per_expert",
        Count,
        NON_NEGATIVE,
        core("moe_host_kernels_per_expert"),
        "kernels per expert",
    )
    .doc("more kernels per local expert where the experts launch one by one (a loop, or cuBLAS GEMMs per expert)"),
    flag(W, "grouped_gemm", core("grouped_gemm"))
        .doc("routed experts as one grouped GEMM per projection (`false`: a loop of per-expert GEMMs)"),
    flag(W, "torch_grouped_mm", core("torch_grouped_mm")).doc(
        "the grouped GEMMs are PyTorch's `torch._grouped_mm`, at the GPU's `grouped_mm_efficiency` (`false`: cuBLAS \
            GEMMs per expert, as Transformer Engine's GroupedLinear, at the dense layer-GEMM rate)",
    ),
    flag(W, "zero3_gather_per_tensor", core("zero3_gather_per_tensor")).doc(
        "ZeRO-3 gathers weights and reduce-scatters gradients one parameter tensor per collective, each paying a \
            ring's (n - 1) steps of latency over the data-parallel group (`false`: one collective per flat bucket or \
            unit, as FSDP, FSDP2 and Megatron's distributed optimizer)",
    ),
    flag(W, "zero3_prefetch", core("zero3_prefetch")).doc(
        "ZeRO-3's weight gathers run ahead of the compute that needs them and hide behind it as the data-parallel \
            overlap allows (`false`: each gather blocks, and is exposed)",
    ),
    flag(W, "zero_reduce_per_micro_batch", core("zero_reduce_per_micro_batch")).doc(
        "ZeRO-2 and ZeRO-3 reduce-scatter the gradients after every micro-batch's backward and accumulate their \
            shards (`false`: once a step, the full gradients kept until the last micro-batch)",
    ),
    flag(W, "pp_defers_zero_reduce", core("pp_defers_zero_reduce")).doc(
        "under pipeline parallelism the schedule holds ZeRO-2/3's gradient reduction back to the step's last \
            backward, keeping the stage's full gradients meanwhile (torch.distributed.pipelining with FSDP2)",
    ),
    flag(W, "pp_keeps_weights_gathered", core("pp_keeps_weights_gathered")).doc(
        "under pipeline parallelism the schedule keeps ZeRO-3's gathered weights after each backward: without \
            resharding after the forward they are gathered once a step, with it m + 1 times, not 2m \
            (torch.distributed.pipelining with FSDP2)",
    ),
    flag(W, "selective_recomputes_alternate_mms", core("selective_recomputes_alternate_mms")).doc(
        "selective recomputation saves every other matrix multiplication of a block and the attention kernel's \
            output and reruns the rest that the backward reads, GEMMs included (torchtitan's per-operator policy; \
            `false`: Korthikanti et al.'s, which reruns the norms and activation only)",
    ),
    flag(W, "fp8_keeps_quantized_inputs", core("fp8_keeps_quantized_inputs")).doc(
        "under FP8 a GEMM keeps the one-byte quantised copy of its activation input for the backward, not the BF16 \
            one (Transformer Engine's modules; torchao's tensorwise Float8Linear): the norm outputs and the MLP's \
            activation output take half the activation memory, the attention output a byte more",
    ),
];
