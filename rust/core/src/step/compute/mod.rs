//! Compute time of one layer's forward pass for one micro-batch on one GPU, from the GPU's measured kernel rates
//! with nothing multiplied on top (what the framework adds is `crate::software`'s, applied in `evaluate`).
//!
//! Each GEMM is timed with a roofline: max(FLOPs / (peak x sustained layer-GEMM efficiency), bytes / (HBM
//! bandwidth x its efficiency)) (Williams, Waterman & Patterson, "Roofline", CACM 2009; Calculon system.py
//! 'roofline' mode); GEMMs under `SMALL_GEMM_FLOPS` run at the GPU's small-GEMM efficiency, and small per-GPU
//! shapes (large TP, few tokens per expert) become memory-bound. The routed experts' grouped GEMMs also pay wave
//! quantization. Fused attention runs at the GPU's table by heads per GPU and sequence length (`attention`);
//! element-wise kernels (norms, residuals, rotary embedding, activation) are memory-bound. The backward pass
//! costs twice the forward (two GEMMs per forward GEMM: data and weight gradients), except fused attention,
//! whose backward costs 2.5 times its forward (FlashAttention-2, Dao 2023, Sec. 3.1.2 and its
//! benchmarks/benchmark_flash_attention.py, which count the backward as 2.5x the forward FLOPs; the attention
//! tables are measured with the same weights). FP8 GEMMs run at the measured FP8 efficiency and first cast their
//! activation input from BF16 (the framework's `fp8_cast_bytes` per element: Transformer Engine's FP8 recipe
//! casts GEMM inputs, weights once per step) [derived].

use crate::hardware::{AttentionTable, GpuSpec};
use crate::software::FrameworkSpec;
use crate::step::attention::{attention_fraction, MLA_ATTENTION_FACTOR};
use crate::step::moe::token_reorders;
use crate::step::parallelism::{AttentionKernel, Dispatcher, Precision};
pub use crate::step::shard::Shard;
use crate::step::workload::TransformerSpec;

/// Bytes of one BF16 activation element.
pub const ACTIVATION_BYTES: f64 = 2.0;
/// GEMMs of fewer FLOPs than this run at `small_gemm_efficiency`: on H200 and H100 the layer GEMMs under 50 GFLOP
/// (TP 8 output projections and MLP downs of 8B-class models) sustain 0.656 and 0.642 of the peak against 0.69-0.70
/// above it (data/measurements/h200-gpu-bench.json, h100-gpu-bench.json `gemms`; design note Sec. 1) [measured].
pub const SMALL_GEMM_FLOPS: f64 = 50e9;
/// Output tile of a grouped GEMM (CUTLASS's 128 x 256 Hopper tile that torch._grouped_mm and Transformer Engine's
/// grouped GEMM run): one tile per SM and wave, so a partial last wave costs a whole one (design note Sec. 2.5).
pub const GROUPED_GEMM_TILE: (f64, f64) = (128.0, 256.0);
/// The least one per-expert GEMM of a loop takes (a PyTorch op's launch and the slicing around it): the loop of
/// Qwen3-30B-A3B experts, 32 x 128 tokens, ran at 43 TF/s on H100: 38.7 GFLOP in 0.90 ms, 28 us per expert for
/// its two GEMMs whose rooflines are 1-2 us (data/measurements/h100-moe-fp8-bench.json `experts`) [measured].
pub const EXPERT_LOOP_FLOOR_S: f64 = 14e-6;

/// How a framework runs the routed experts' GEMMs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExpertGemms {
    /// One GEMM per expert, in a loop.
    Loop,
    /// One grouped GEMM per projection at the dense layer-GEMM rate (cuBLAS GEMMs per expert on several streams:
    /// Transformer Engine's GroupedLinear, MegaBlocks).
    Grouped,
    /// One grouped GEMM per projection with PyTorch's `torch._grouped_mm`, at its measured rate.
    TorchGroupedMm,
}

impl ExpertGemms {
    pub fn of(framework: &FrameworkSpec) -> Self {
        match (framework.grouped_gemm, framework.torch_grouped_mm) {
            (false, _) => ExpertGemms::Loop,
            (true, false) => ExpertGemms::Grouped,
            (true, true) => ExpertGemms::TorchGroupedMm,
        }
    }
}

/// What one GPU sustains for this configuration.
#[derive(Clone, Copy, Debug)]
pub struct Throughput {
    pub gemm_flops_per_s: f64,
    /// PyTorch's grouped GEMM kernel (`torch._grouped_mm`) in this format, for the frameworks that run it.
    pub grouped_mm_flops_per_s: f64,
    /// GEMMs under `SMALL_GEMM_FLOPS`.
    pub small_gemm_flops_per_s: f64,
    /// BF16 GEMM rate, for the batched GEMMs of unfused attention (they stay in BF16 under FP8 training).
    pub bf16_gemm_flops_per_s: f64,
    /// The 16-bit peak the attention table's fractions are of.
    pub peak_16bit_flops_per_s: f64,
    pub attention: AttentionTable,
    pub hbm_bytes_per_s: f64,
    /// Bytes of a GEMM input element: 2 in BF16, 1 in FP8.
    pub gemm_input_bytes: f64,
    /// Bytes moved per activation-input element to cast it before the GEMM: 0 in BF16, the framework's in FP8.
    pub cast_bytes: f64,
    pub sm_count: f64,
}

/// One GEMM number format: its tensor peak and measured efficiency, the bytes of an input element, and the bytes
/// moved per activation element to cast it into the format before the GEMM.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GemmFormat {
    pub peak_flops: f64,
    pub efficiency: f64,
    /// `torch._grouped_mm`'s (or its scaled FP8 variant's) measured fraction of the same peak.
    pub grouped_mm_efficiency: f64,
    pub input_bytes: f64,
    pub cast_bytes: f64,
}

/// Bytes of one NVFP4 element: 4 bits plus one FP8 (E4M3) scale per 16-element block = 4.5 bits (NVIDIA,
/// "Introducing NVFP4 for Efficient and Accurate Low-Precision Inference", developer blog, 2025-06).
pub const FP4_ELEMENT_BYTES: f64 = 0.5625;

impl GemmFormat {
    pub fn bf16(gpu: &GpuSpec) -> Self {
        GemmFormat {
            peak_flops: gpu.peak_bf16_flops,
            efficiency: gpu.gemm_efficiency,
            grouped_mm_efficiency: gpu.grouped_mm_efficiency,
            input_bytes: 2.0,
            cast_bytes: 0.0,
        }
    }
    /// FP8 (E4M3): 1 byte, the activation input cast from BF16 (read 2, write 1).
    pub fn fp8(gpu: &GpuSpec) -> Self {
        GemmFormat {
            peak_flops: gpu.peak_fp8_flops,
            efficiency: gpu.gemm_efficiency_fp8,
            grouped_mm_efficiency: gpu.grouped_mm_efficiency_fp8,
            input_bytes: 1.0,
            cast_bytes: 3.0,
        }
    }
    /// FP4 (NVFP4, weights and activations): the activation cast reads 2 bytes and writes an FP4 element.
    /// `torch._scaled_grouped_mm` has no FP4 (pytorch/pytorch issue 187095): its grouped rate is the dense one.
    pub fn fp4(gpu: &GpuSpec) -> Self {
        GemmFormat {
            peak_flops: gpu.peak_fp4_flops,
            efficiency: gpu.gemm_efficiency_fp4,
            grouped_mm_efficiency: gpu.gemm_efficiency_fp4,
            input_bytes: FP4_ELEMENT_BYTES,
            cast_bytes: 2.0 + FP4_ELEMENT_BYTES,
        }
    }
}

impl Throughput {
    pub fn new(gpu: &GpuSpec, precision: Precision, kernel: AttentionKernel, framework: &FrameworkSpec) -> Self {
        let format = match precision {
            Precision::Bf16 => GemmFormat::bf16(gpu),
            Precision::Fp8 => GemmFormat { cast_bytes: framework.fp8_cast_bytes, ..GemmFormat::fp8(gpu) },
        };
        Self::serving(gpu, format, kernel, 1.0)
    }

    /// The GPU's measured kernel rates (GEMMs in `format`, the attention table, HBM), each scaled by the fraction
    /// `s` sustained over a step: 1 in training (what the framework adds is `crate::software`'s), serving's
    /// per-GPU `serving_efficiency`, fitted on the serving calibration rows.
    pub fn serving(gpu: &GpuSpec, format: GemmFormat, kernel: AttentionKernel, s: f64) -> Self {
        let gemm_flops_per_s = format.peak_flops * format.efficiency * s;
        Throughput {
            gemm_flops_per_s,
            grouped_mm_flops_per_s: format.peak_flops * format.grouped_mm_efficiency * s,
            small_gemm_flops_per_s: gemm_flops_per_s * gpu.small_gemm_efficiency / gpu.gemm_efficiency,
            bf16_gemm_flops_per_s: gpu.peak_bf16_flops * gpu.gemm_efficiency * s,
            peak_16bit_flops_per_s: gpu.peak_bf16_flops * s,
            attention: match kernel {
                AttentionKernel::Best => gpu.attention_efficiency,
                AttentionKernel::Fa2 => gpu.attention_efficiency_fa2,
            },
            hbm_bytes_per_s: gpu.hbm_bytes_per_s * gpu.hbm_efficiency * s,
            gemm_input_bytes: format.input_bytes,
            cast_bytes: format.cast_bytes,
            sm_count: gpu.sm_count as f64,
        }
    }

    /// Roofline time of `flops` moving `bytes`, plus the FP8 cast of `cast_elements` input elements; GEMMs under
    /// `SMALL_GEMM_FLOPS` at the small-GEMM rate.
    fn roofline_s(&self, flops: f64, bytes: f64, cast_elements: f64) -> f64 {
        let rate = if flops < SMALL_GEMM_FLOPS { self.small_gemm_flops_per_s } else { self.gemm_flops_per_s };
        (flops / rate).max(bytes / self.hbm_bytes_per_s) + self.cast_bytes * cast_elements / self.hbm_bytes_per_s
    }

    /// Roofline time of an (m x k) . (k x n) GEMM with a BF16 output, plus the cast of its (m x k)
    /// activation input in FP8.
    pub fn gemm_time_s(&self, m: f64, n: f64, k: f64) -> f64 {
        let bytes = self.gemm_input_bytes * (m * k + k * n) + ACTIVATION_BYTES * m * n;
        self.roofline_s(2.0 * m * n * k, bytes, m * k)
    }

    /// The routed experts' (m x k) . (k x n) GEMM for `experts` local experts of m tokens each. Grouped: one
    /// kernel, the experts' rooflines together (each expert's weights read once), times wave quantization: its
    /// experts x ceil(m / 128) x ceil(n / 256) tiles run in waves of one per SM, and a partial last wave costs a
    /// whole one (design note Sec. 2.5: on H100 this takes the roofline's median error over the 33 grouped rows
    /// of h100-moe-fp8-bench.json from 10.5% to 7.2%); `ExpertGemms::TorchGroupedMm` computes at the GPU's
    /// measured `torch._grouped_mm` rate instead of the dense layer-GEMM rate. A loop: each expert's GEMM alone,
    /// at least `EXPERT_LOOP_FLOOR_S`.
    pub fn experts_gemm_time_s(&self, experts: f64, m: f64, n: f64, k: f64, kernel: ExpertGemms) -> f64 {
        if kernel == ExpertGemms::Loop {
            return experts * self.gemm_time_s(m, n, k).max(EXPERT_LOOP_FLOOR_S);
        }
        let bytes = self.gemm_input_bytes * (m * k + k * n) + ACTIVATION_BYTES * m * n;
        let flops = experts * 2.0 * m * n * k;
        let roofline = if kernel == ExpertGemms::TorchGroupedMm {
            (flops / self.grouped_mm_flops_per_s).max(experts * bytes / self.hbm_bytes_per_s)
                + self.cast_bytes * experts * m * k / self.hbm_bytes_per_s
        } else {
            self.roofline_s(flops, experts * bytes, experts * m * k)
        };
        let (tile_m, tile_n) = GROUPED_GEMM_TILE;
        let waves = experts * (m / tile_m).ceil() * (n / tile_n).ceil() / self.sm_count;
        if waves > 0.0 {
            roofline * waves.ceil() / waves
        } else {
            roofline
        }
    }

    /// FLOP/s of fused causal attention with `heads` heads per GPU x sequences per micro-batch over `seq` tokens.
    pub fn attention_flops_per_s(&self, heads: f64, seq: f64) -> f64 {
        self.peak_16bit_flops_per_s * attention_fraction(&self.attention, heads, seq)
    }
}

/// Backward / forward time of fused attention (FlashAttention-2 benchmarks: bwd FLOPs = 2.5 x fwd).
pub const FLASH_ATTENTION_BACKWARD_RATIO: f64 = 2.5;
/// Backward / forward time of everything else: a data-gradient and a weight-gradient GEMM per forward GEMM
/// (Narayanan et al. SC21 Sec. 5.1: 3 x forward in all).
pub const BACKWARD_RATIO: f64 = 2.0;

/// Forward-pass time of one layer for one micro-batch on one GPU, by kind of work.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LayerForward {
    pub gemm_s: f64,
    pub attention_s: f64,
    /// Backward time of the core attention (2.5 x forward fused; unfused: 2 x its GEMMs, 17/13 x its memory).
    pub attention_backward_s: f64,
    pub elementwise_s: f64,
    /// What selective recomputation reruns: with flash attention the norms and MLP activation, without it the
    /// core attention (Korthikanti et al. 2022's selective recomputation).
    pub selective_recompute_s: f64,
    /// The GEMMs whose input the sequence-parallel backward all-gathers again (QKV or MLA up-projections'
    /// input and the MLP's first GEMM): their data-gradient GEMMs hide that all-gather.
    pub regather_window_s: f64,
    /// Forward and backward, the time the GPU waits for the host's launches (`FrameworkSpec::moe_host_s`).
    pub host_wait_s: f64,
    /// Of the forward, what runs between a MoE layer's dispatch and combine: the routed experts' GEMMs and
    /// activation and the token permutation (0 in a dense layer); the rest runs before the dispatch. (The alltoall
    /// dispatcher permutes once before its all-to-all too; all its reorders are counted here, a small share.)
    pub experts_s: f64,
}

impl LayerForward {
    pub fn total_s(&self) -> f64 {
        self.gemm_s + self.attention_s + self.elementwise_s
    }
    /// Forward and backward time of the layer.
    pub fn forward_backward_s(&self) -> f64 {
        (1.0 + BACKWARD_RATIO) * (self.gemm_s + self.elementwise_s) + self.attention_s + self.attention_backward_s
    }
}

/// Bytes moved per attention-score element in an unfused forward pass: QK^T writes it (2), the fused
/// scale-mask-softmax reads and writes it (4), dropout reads it, writes it and a 1-byte mask (5), AV reads it
/// (2) [derived from Megatron-LM's kernels; Korthikanti et al. 2022 Sec. 4 count the same tensors: 5 a s^2 b
/// bytes stored].
pub const UNFUSED_ATTENTION_BYTES_PER_SCORE: f64 = 13.0;
/// The same in the backward pass: AV's gradient reads the probabilities and writes their gradient (4), dropout's
/// backward reads it and the mask and writes (5), the softmax backward reads the gradient and the softmax output
/// and writes (6), QK^T's gradient reads it (2) [derived, same kernels].
pub const UNFUSED_ATTENTION_BACKWARD_BYTES_PER_SCORE: f64 = 17.0;

/// Attention forward time: (projection GEMMs, core attention, GEMMs the SP backward re-gather hides behind).
/// Flash attention runs at the GPU's table (heads per GPU, the call's sequence length) over the causal-halved
/// FLOPs, MLA at `MLA_ATTENTION_FACTOR` of it; unfused attention computes the
/// full s x s scores with batched BF16 GEMMs and streams them through HBM. MLA's down-projections are whole on
/// every TP rank (Megatron-Core duplicates them), its up-projections and the output split by heads.
pub fn attention_forward(model: &TransformerSpec, shard: &Shard, tput: &Throughput) -> (f64, f64, f64, f64) {
    let h = model.hidden as f64;
    let (t, tp) = (shard.tokens, shard.tp);
    let a = model.attention_shapes();
    let gemm = |(inputs, outputs): (f64, f64), split: f64| {
        if outputs > 0.0 {
            tput.gemm_time_s(t, outputs / split, inputs)
        } else {
            0.0
        }
    };
    let replicated: f64 = a.replicated.iter().map(|&m| gemm(m, 1.0)).sum();
    let split: f64 = a.split_out.iter().map(|&m| gemm(m, tp)).sum();
    let out = tput.gemm_time_s(t, h, a.out_in / tp);
    let (core, core_backward) = if shard.flash_attention {
        let mla = if model.mla.is_some() { MLA_ATTENTION_FACTOR } else { 1.0 };
        let rate = mla * tput.attention_flops_per_s(shard.attention_heads(model.heads as f64), shard.attention_seq());
        let forward = t * model.attention_core_flops_per_token(shard.seq_len) / tp / rate;
        (forward, FLASH_ATTENTION_BACKWARD_RATIO * forward)
    } else {
        // QK^T and AV over all seq_len keys (the mask does not skip work): twice the causal-halved FLOPs; the
        // backward runs two batched GEMMs per forward one and streams the scores once more.
        let gemms = t * 2.0 * model.attention_core_flops_per_token(shard.seq_len) / tp / tput.bf16_gemm_flops_per_s;
        let scores = t * model.heads as f64 / tp * shard.seq_len / tput.hbm_bytes_per_s;
        (
            gemms + scores * UNFUSED_ATTENTION_BYTES_PER_SCORE,
            BACKWARD_RATIO * gemms + scores * UNFUSED_ATTENTION_BACKWARD_BYTES_PER_SCORE,
        )
    };
    // With sequence parallelism the first projection's input is all-gathered again in the backward pass.
    let regather_window = gemm(a.split_out[0], tp).max(replicated);
    (replicated + split + out, core, core_backward, regather_window)
}

/// Element-wise bytes per token of one layer's forward pass, split into (norms + residuals, rotary, activation).
/// Two RMSNorms (read and write h each: 4h elements), two residual adds (read 2h, write h: 6h), rotary on Q and
/// K (read and write: 2(q + kv)), activation (SwiGLU reads gate and up, writes one: 3F; GeLU 2F) [derived].
pub fn elementwise_forward_s(
    model: &TransformerSpec,
    shard: &Shard,
    tput: &Throughput,
    activation_elements: f64,
) -> (f64, f64) {
    let h = model.hidden as f64;
    let norms = 4.0 * h / shard.hidden_split();
    let residuals = 6.0 * h / shard.hidden_split();
    let a = model.attention_shapes();
    let rotary = a.rotary_per_head_part / shard.tp + a.rotary_replicated;
    let per_token = ACTIVATION_BYTES / tput.hbm_bytes_per_s;
    let all = shard.tokens * (norms + residuals + rotary + activation_elements) * per_token;
    let recomputable = shard.tokens * (norms + activation_elements) * per_token;
    (all, recomputable)
}

/// Forward time of one dense layer.
pub fn dense_layer_forward(model: &TransformerSpec, shard: &Shard, tput: &Throughput) -> LayerForward {
    let h = model.hidden as f64;
    let f = model.ffn_hidden as f64;
    let (t, tp) = (shard.tokens, shard.tp);
    let (attn_gemm, attention_s, attention_backward_s, attn_window) = attention_forward(model, shard, tput);
    let up = tput.gemm_time_s(t, (model.mlp_matrices() - 1.0) * f / tp, h);
    let mlp = up + tput.gemm_time_s(t, h, f / tp);
    let activation = model.mlp_matrices() * f / tp;
    let (elementwise_s, recomputable) = elementwise_forward_s(model, shard, tput, activation);
    let selective_recompute_s = if shard.flash_attention { recomputable } else { attention_s };
    LayerForward {
        gemm_s: attn_gemm + mlp,
        attention_s,
        attention_backward_s,
        elementwise_s,
        selective_recompute_s,
        regather_window_s: attn_window + up,
        host_wait_s: 0.0,
        experts_s: 0.0,
    }
}

/// Time of the token permutation around a MoE layer's experts for `tokens` tokens: `PERMUTATION_REORDERS`
/// reorders, permute before and unpermute after, each reading and writing top_k copies (times the busiest rank's
/// `imbalance`) of a token's h / tp BF16 elements, at HBM speed [derived].
pub fn permutation_s(tokens: f64, top_k: f64, imbalance: f64, h: f64, tp: f64, tput: &Throughput) -> f64 {
    tokens * 4.0 * top_k * imbalance * h / tp * ACTIVATION_BYTES / tput.hbm_bytes_per_s
}

/// Reorders of the routed copies `permutation_s` prices: the permute and the unpermute.
pub const PERMUTATION_REORDERS: f64 = 2.0;

/// Forward time of one MoE layer: attention, router, routed experts and shared experts, plus the token
/// permutation copies around the all-to-all. With MoE parallel folding (Megatron-Core) the expert layers run
/// etp-way tensor parallel over ep ranks: the tokens of an etp group (t / tp each with sequence parallelism)
/// are routed top_k times over `experts` experts, `experts / ep` of them local, each GEMM split etp ways. The
/// busiest rank sees `imbalance` times the mean of routed tokens and sets the pace. The framework decides how the
/// experts run (grouped GEMMs or a loop), what the permutation costs over its bytes and the router's fixed time
/// (measured for eager PyTorch: design note Sec. 2.6), the dispatcher how many times the routed copies are
/// reordered (`token_reorders`).
pub fn moe_layer_forward(
    model: &TransformerSpec,
    shard: &Shard,
    tput: &Throughput,
    framework: &FrameworkSpec,
    dispatcher: Dispatcher,
) -> LayerForward {
    let Some(moe) = &model.moe else {
        return dense_layer_forward(model, shard, tput);
    };
    let h = model.hidden as f64;
    let fe = moe.ffn_hidden as f64;
    let (t, tp) = (shard.tokens, shard.tp);
    let top_k = moe.top_k as f64;
    let experts = moe.experts as f64;
    let shared = moe.shared_experts as f64;
    let (attn_gemm, attention_s, attention_backward_s, attn_window) = attention_forward(model, shard, tput);
    let router = tput.gemm_time_s(t, experts, h);
    let local_experts = experts / shard.ep;
    // Distinct tokens an expert-TP group holds: t / tp per rank with sequence parallelism (t replicated without).
    let group_tokens = t * (shard.etp / shard.hidden_split()).min(1.0);
    let tokens_per_expert = group_tokens * top_k * shard.ep / experts * shard.imbalance;
    let up = (model.mlp_matrices() - 1.0) * fe / shard.etp;
    let kernel = ExpertGemms::of(framework);
    let routed = tput.experts_gemm_time_s(local_experts, tokens_per_expert, up, h, kernel)
        + tput.experts_gemm_time_s(local_experts, tokens_per_expert, h, fe / shard.etp, kernel);
    let shared_up = tput.gemm_time_s(t, shared * (model.mlp_matrices() - 1.0) * fe / tp, h);
    let shared_mlp = if shared > 0.0 { shared_up + tput.gemm_time_s(t, h, shared * fe / tp) } else { 0.0 };
    // Activation elements per token: the routed copies' and the shared experts' (the routed ones run between the
    // dispatch and the combine, `experts_s`).
    let (routed_copies, mlp_width) = (top_k * shard.imbalance, model.mlp_matrices() * fe / tp);
    let activation = (routed_copies + shared) * mlp_width;
    let (mut elementwise_s, recomputable) = elementwise_forward_s(model, shard, tput, activation);
    let selective_recompute_s = if shard.flash_attention { recomputable } else { attention_s };
    // The dispatcher's reorders of the routed copies at the framework's factor over HBM speed; the router's
    // fixed kernels.
    let reorders = token_reorders(dispatcher, local_experts) / PERMUTATION_REORDERS;
    let permute_s = framework.moe_permute_factor * reorders * permutation_s(t, top_k, shard.imbalance, h, tp, tput);
    elementwise_s += permute_s + framework.moe_router_s;
    let routed_activation_s = t * routed_copies * mlp_width * ACTIVATION_BYTES / tput.hbm_bytes_per_s;
    let layer = LayerForward {
        gemm_s: attn_gemm + router + routed + shared_mlp,
        attention_s,
        attention_backward_s,
        elementwise_s,
        selective_recompute_s,
        regather_window_s: attn_window + if shared > 0.0 { shared_up } else { 0.0 },
        host_wait_s: 0.0,
        experts_s: routed + routed_activation_s + permute_s,
    };
    // The host's launches against the whole layer's GPU work (the attention's own few launches left out).
    LayerForward { host_wait_s: (framework.moe_host_s(local_experts) - layer.forward_backward_s()).max(0.0), ..layer }
}

/// Forward time of the output projection and the loss for one micro-batch (on the last pipeline stage):
/// the vocabulary-parallel logits GEMM, then the softmax cross-entropy reading BF16 logits and writing FP32
/// probabilities (6 bytes per logit). Pass a BF16 `tput`: Megatron-LM's output layer is a plain
/// ColumnParallelLinear, not a Transformer Engine module, so it stays in BF16 under FP8 training.
pub fn logits_forward_s(model: &TransformerSpec, shard: &Shard, tput: &Throughput) -> f64 {
    let v = model.vocab as f64 / shard.tp;
    tput.gemm_time_s(shard.tokens, v, model.hidden as f64) + shard.tokens * v * 6.0 / tput.hbm_bytes_per_s
}

#[cfg(test)]
mod tests;
