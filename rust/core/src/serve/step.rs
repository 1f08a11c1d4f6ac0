//! One step of a serving engine on one GPU of a pipeline stage: the decode tokens of the running sequences (one
//! each) and the prefill tokens that ride with them, through every layer of the stage.
//!
//! Kernels are the core's (`step::compute`): each weight GEMM by the roofline over the tokens of the step, so a
//! decode step of a small batch is bound by reading the weights and a large prefill chunk by FLOPs; prefill's
//! projections and fused attention by `attention_forward`, the element-wise work by `elementwise_forward_s`, the
//! output layer by `logits_forward_s`. Decode attention reads each sequence's KV cache (FlashDecoding, Dao et al.
//! 2023; FlashInfer, Ye et al. 2025): max(bytes / HBM, FLOPs / attention rate), its FLOPs 4 x head_dim per key
//! and head (QK^T and AV), or with MLA's absorbed weights 2 (kv_lora + rope) + 2 kv_lora per key and head, which
//! FlashMLA runs compute-bound (DeepSeek-V2 App. C weight absorption; deepseek-ai/FlashMLA README, 2025-02).
//! Communication, and what of it two-batch overlap hides, is `comm`'s.

use crate::step::compute::{
    attention_forward, elementwise_forward_s, logits_forward_s, permutation_s, ExpertGemms, Shard, Throughput,
};
use crate::step::workload::TransformerSpec;

use super::comm::layer_comm_s;
use super::layout::PhaseLayout;
use super::memory::{kv_bytes_per_token, stage_layers};
use super::{Quantization, Serving, ServingCluster, StepTime};

/// Fixed time a kernel of a CUDA-graph-launched serving step costs beyond its roofline: launch, the first wave's
/// ramp, the last wave's tail. Measured on one H100 SXM (data/measurements/h100-decode-floor.json, written by
/// `benchmarks/decode_floor.py`, 2026-11-26): a Llama 3 70B TP-8 BF16 decode layer of 13 kernels in a CUDA graph
/// of 80 layers took 122.0 us at batch 1 against 69.6 us of weight reads at the measured 3,072 GB/s: 4.0 us a
/// kernel (4.4 at batch 8, 5.1 at batch 64; a chain of tiny GEMMs 3.6 us, of tiny element-wise kernels 1.2 us).
/// EST for other GPUs: the same (launch latency and wave ramp are of the same order on Hopper and Blackwell).
pub const KERNEL_OVERHEAD_S: f64 = 4.0e-6;

/// Kernels of one layer of a serving engine, its collectives apart (the protocol model counts their launch): the
/// GEMMs (attention projections; the MLP's two, or the router, the routed experts' two grouped GEMMs and the shared
/// experts' two), attention, two norms, rotary, the activation(s), two residual adds, and in a MoE layer top-k,
/// permute and un-permute. A Llama layer: 2 + 2 + 7 = 11 (the measured PyTorch layer had 13 without attention:
/// its norms are two kernels each). MLA adds what its decode runs beyond five projections: the RMSNorms of its
/// query and KV latents, and the KV up-projection absorbed as two batched GEMMs, W_UK on the query before
/// attention and W_UV on its output after (TensorRT-LLM tech blog 1, 2025-05, a DeepSeek-R1 decode layer:
/// "Module2: 2x RMSNorm Performs normalization for Q/K tensors", "Module4: UK_BGEMM", "Module7: UV_GEMM";
/// DeepSeek-V2 App. C, weight absorption). A DeepSeek-V3 MoE layer: 6 + 2 + 1 + 2 + 3 + 3 + 7 = 24.
pub fn layer_kernels(model: &TransformerSpec, moe: bool) -> f64 {
    let a = model.attention_shapes();
    let projections = a.replicated.iter().chain(&a.split_out).filter(|(i, _)| *i > 0.0).count() as f64 + 1.0;
    // MLA: the latents' norms (no query latent, no query norm) and the second absorbed batched GEMM.
    let mla = model.mla.as_ref().map_or(0.0, |m| if m.q_lora_rank > 0 { 3.0 } else { 2.0 });
    let common = 7.0 + mla; // two norms, rotary, attention, activation, two residual adds; MLA's above
    match model.moe.as_ref().filter(|_| moe) {
        None => projections + 2.0 + common,
        Some(m) => {
            let shared = if m.shared_experts > 0 { 3.0 } else { 0.0 }; // two GEMMs and their activation
            projections + 1.0 + 2.0 + shared + 3.0 + common
        }
    }
}

/// What one step of one attention replica processes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepWork {
    /// Running sequences, one decode token each.
    pub decode_seqs: f64,
    /// Their mean context: the keys each decode token attends to.
    pub context: f64,
    /// Prefill tokens in the step, and the length of the prompts they belong to: in a steady state of spread
    /// prompt lengths, the length-biased mean (`schedule::length_biased_mean`), what a prompt token's causal
    /// attention spans on average.
    pub prefill_tokens: f64,
    pub prompt: f64,
}

impl StepWork {
    pub(super) fn tokens(&self) -> f64 {
        self.decode_seqs + self.prefill_tokens
    }
}

/// Expected distinct experts that `tokens` tokens select, each choosing `top_k` of `experts` uniformly: E (1 - (1 -
/// k/E)^T) (occupancy). A decode step of few tokens reads only these experts' weights.
pub fn experts_hit(experts: f64, top_k: f64, tokens: f64) -> f64 {
    experts * (1.0 - (1.0 - top_k / experts).powf(tokens))
}

/// Expected experts the busiest of `ep` ranks holds among those the step's tokens hit, each rank holding
/// `experts / ep`: every expert is hit with probability rho = hit / experts, so a rank's count is Binomial(experts /
/// ep, rho) and the busiest rank's is the expected maximum of `ep` of them, sum over m of 1 - F(m)^ep (ranks
/// treated as independent). A decode step of few tokens reads the busiest rank's experts, not the mean's: one
/// token's 8 of 256 experts over 8 ranks put 2.54 on the busiest, not 1 (TensorRT-LLM tech blog 1, 2025-05: with EP
/// "token placement is data-dependent, distributing workloads unevenly across GPUs"); with every expert hit, all
/// ranks hold experts / ep.
pub fn busiest_rank_experts(experts: f64, hit: f64, ep: f64) -> f64 {
    let per_rank = (experts / ep).floor();
    let rho = (hit / experts).clamp(0.0, 1.0);
    if ep <= 1.0 || rho >= 1.0 {
        return hit / ep.max(1.0);
    }
    let ratio = rho / (1.0 - rho);
    let (mut pmf, mut cdf, mut busiest) = ((1.0 - rho).powf(per_rank), 0.0, 0.0);
    let mut m = 0.0;
    while m < per_rank {
        cdf += pmf;
        let above = 1.0 - cdf.min(1.0).powf(ep);
        if above < 1e-9 && cdf > 0.0 {
            break;
        }
        busiest += above;
        pmf *= (per_rank - m) / (m + 1.0) * ratio;
        m += 1.0;
    }
    busiest.max(hit / ep)
}

/// Time of the decode tokens' core attention over their KV cache, on one GPU of a tp-way replica, one layer.
fn decode_attention_s(model: &TransformerSpec, w: &StepWork, s: &Serving, tp: f64, tput: &Throughput) -> f64 {
    if w.decode_seqs <= 0.0 {
        return 0.0;
    }
    let keys = w.decode_seqs * w.context;
    let heads = model.heads as f64 / tp;
    let per_key = match &model.mla {
        Some(a) => 2.0 * (a.kv_lora_rank + a.qk_rope_head_dim) as f64 + 2.0 * a.kv_lora_rank as f64,
        None => 4.0 * model.head_dim(),
    };
    let bytes = keys * kv_bytes_per_token(model, tp as u32, s.kv_cache_dtype);
    // The GPU's attention table at the heads this GPU runs for all decoding sequences, over their context.
    let rate = tput.attention_flops_per_s(heads * w.decode_seqs, w.context.max(1.0));
    (keys * heads * per_key / rate).max(bytes / tput.hbm_bytes_per_s)
}

/// Compute of one layer (GEMMs, attention, element-wise) for the step's tokens on one GPU, and the parts of it
/// that two-batch overlap schedules apart (`comm`).
pub(super) struct LayerCompute {
    pub gemm_s: f64,
    pub attention_s: f64,
    pub elementwise_s: f64,
    /// The attention block's share of the three (projections and attention): what runs before the dispatch.
    pub attention_block_s: f64,
    /// The projections before core attention (DeepSeek's decode profile's ATTN-0: "MLA down/up projection").
    pub pre_attention_s: f64,
    /// Core attention, the output projection and the router (its ATTN-1: "Core attention, attention output
    /// projection and MoE routing gate").
    pub post_attention_s: f64,
    /// The shared experts (its SHARED).
    pub shared_experts_s: f64,
}

impl LayerCompute {
    pub fn total_s(&self) -> f64 {
        self.gemm_s + self.attention_s + self.elementwise_s
    }
}

fn attention_block(
    model: &TransformerSpec,
    p: &PhaseLayout,
    s: &Serving,
    w: &StepWork,
    tput: &Throughput,
) -> LayerCompute {
    let t = w.tokens();
    let shard = Shard {
        // The prefill's prompts batch into one attention call: its heads per GPU times the prompts.
        micro_batch: (w.prefill_tokens / w.prompt.max(1.0)).max(1.0),
        ep: p.ep as f64,
        etp: p.etp as f64,
        imbalance: s.moe_imbalance,
        ..Shard::plain(t, w.prompt.max(1.0), p.tp as f64)
    };
    let (projections, core, _, _) = attention_forward(model, &shard, tput);
    // The fused kernel's time is proportional to the tokens it runs: keep the prefill tokens' share.
    let prefill_core = if t > 0.0 { core * w.prefill_tokens / t } else { 0.0 };
    let attention_s = prefill_core + decode_attention_s(model, w, s, p.tp as f64, tput);
    let output_projection = tput.gemm_time_s(t, model.hidden as f64, model.attention_shapes().out_in / p.tp as f64);
    LayerCompute {
        gemm_s: projections,
        attention_s,
        elementwise_s: 0.0,
        attention_block_s: projections + attention_s,
        pre_attention_s: projections - output_projection,
        post_attention_s: attention_s + output_projection,
        shared_experts_s: 0.0,
    }
}

/// The kernel rates of a layer: its GEMMs in `quantization`, its attention projections in their own format
/// (`Serving::attention_format`; the attention core and HBM rates are the same in both).
type Rates<'a> = (&'a Throughput, &'a Throughput);

/// One dense layer: attention, then the MLP split over tp.
fn dense_layer(model: &TransformerSpec, p: &PhaseLayout, s: &Serving, w: &StepWork, rates: Rates) -> LayerCompute {
    let (tput, attention_tput) = rates;
    let mut l = attention_block(model, p, s, w, attention_tput);
    let (t, tp, h, f) = (w.tokens(), p.tp as f64, model.hidden as f64, model.ffn_hidden as f64);
    l.gemm_s += tput.gemm_time_s(t, (model.mlp_matrices() - 1.0) * f / tp, h) + tput.gemm_time_s(t, h, f / tp);
    let shard = Shard::plain(t, 1.0, tp);
    l.elementwise_s = elementwise_forward_s(model, &shard, tput, model.mlp_matrices() * f / tp).0;
    l
}

/// One MoE layer: attention, router, the routed experts this GPU holds (only those the stage's tokens select),
/// the shared experts split over tp, and the token permutation around the experts.
fn moe_layer(model: &TransformerSpec, p: &PhaseLayout, s: &Serving, w: &StepWork, rates: Rates) -> LayerCompute {
    let Some(m) = &model.moe else {
        return dense_layer(model, p, s, w, rates);
    };
    let (tput, attention_tput) = rates;
    let mut l = attention_block(model, p, s, w, attention_tput);
    let (t, tp, h, fe) = (w.tokens(), p.tp as f64, model.hidden as f64, m.ffn_hidden as f64);
    // Redundant replicas spread the routed copies over more physical experts (DeepSeek's EPLB).
    let experts = (m.experts + s.redundant_experts) as f64;
    let (top_k, shared, c) = (m.top_k as f64, m.shared_experts as f64, model.mlp_matrices());
    let stage_tokens = t * p.dp_attention as f64;
    let hit = experts_hit(experts, top_k, stage_tokens);
    let per_expert = stage_tokens * top_k / hit * s.moe_imbalance;
    let etp = p.etp as f64;
    let shared_mlp = if shared > 0.0 {
        tput.gemm_time_s(t, shared * (c - 1.0) * fe / tp, h) + tput.gemm_time_s(t, h, shared * fe / tp)
    } else {
        0.0
    };
    // The busiest rank's experts in two grouped GEMMs, timed as training times them (`experts_gemm_time_s`): their
    // rooflines together, in whole waves of output tiles. Below a wave too (the decode regime) this is nearer the
    // H100's measured grouped GEMMs than the rooflines alone: the seven whose first GEMM fills less than a wave (4-8
    // experts of 128-512 tokens) ran 1.2-5.3x their rooflines and 0.62-4.2x the wave model, nearer it in six
    // (data/measurements/h100-moe-fp8-bench.json `experts`; torch._grouped_mm's tiles, EST for the engines' own).
    let busiest = busiest_rank_experts(experts, hit, p.ep as f64);
    let grouped = |n: f64, k: f64| tput.experts_gemm_time_s(busiest, per_expert, n, k, ExpertGemms::Grouped);
    let routed = grouped((c - 1.0) * fe / etp, h) + grouped(h, fe / etp);
    let router = tput.gemm_time_s(t, experts, h);
    l.gemm_s += router + routed + shared_mlp;
    l.post_attention_s += router;
    l.shared_experts_s = shared_mlp;
    let shard = Shard { etp, ..Shard::plain(t, 1.0, tp) };
    let activation = (top_k * s.moe_imbalance + shared) * c * fe / tp;
    l.elementwise_s = elementwise_forward_s(model, &shard, tput, activation).0
        + permutation_s(t, top_k, s.moe_imbalance, h, tp, tput);
    l
}

/// One step on one GPU of the busiest stage of the phase's instance: every layer of the stage, and the output
/// layer (the last stage's, on a one-stage instance).
pub fn step_time(c: &ServingCluster, p: &PhaseLayout, s: &Serving, w: &StepWork) -> StepTime {
    let model = c.model;
    let tput = c.rate(s.quantization);
    let rates = (tput, c.rate(s.attention_format()));
    let layers = stage_layers(model, p.pp);
    let share = |n: u32| layers * n as f64 / model.layers as f64;
    let mut out = StepTime::default();
    for (n, moe) in [(model.dense_layers(), false), (model.moe_layers(), true)] {
        if n == 0 {
            continue;
        }
        let l = if moe { moe_layer(model, p, s, w, rates) } else { dense_layer(model, p, s, w, rates) };
        let k = share(n);
        out.gemm_s += k * l.gemm_s;
        out.attention_s += k * l.attention_s;
        out.elementwise_s += k * l.elementwise_s;
        out.comm_s += k * layer_comm_s(c, p, s, w, moe, &l);
        out.overhead_s += k * c.layer_kernels[moe as usize] * KERNEL_OVERHEAD_S;
    }
    // Logits of the decode tokens and of each prompt's last token, in BF16 (the output layer stays unquantized).
    // Over a length-biased prompt length this counts 1 / (1 + cv^2) of the prompts: a row each, beside the batch.
    let sampled = w.decode_seqs + if w.prompt > 0.0 { w.prefill_tokens / w.prompt } else { 0.0 };
    let shard = Shard::plain(sampled, 1.0, p.tp as f64);
    out.gemm_s += logits_forward_s(model, &shard, c.rate(Quantization::Bf16));
    // The output layer's norm, GEMM and sampling, on the last stage (one stage carries it, as its time above).
    out.overhead_s += 3.0 * KERNEL_OVERHEAD_S;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn few_tokens_select_few_experts() {
        // One token picks its top-8 of 256: 8 experts; 256 tokens hit 256 (1 - (1 - 8/256)^256) = 256 x 0.9997.
        assert!((experts_hit(256.0, 8.0, 1.0) - 8.0).abs() < 1e-9);
        assert!((experts_hit(256.0, 8.0, 256.0) - 255.92).abs() < 0.01, "{}", experts_hit(256.0, 8.0, 256.0));
        // Mixtral's 8 experts, top-2: two tokens hit 8 (1 - 0.75^2) = 3.5 on average.
        assert!((experts_hit(8.0, 2.0, 2.0) - 3.5).abs() < 1e-12);
    }

    #[test]
    fn the_busiest_rank_holds_more_of_few_tokens_experts() {
        // One token, 8 of 256 experts over 8 ranks of 32: rho = 1/32, a rank's count Binomial(32, 1/32), F(0) =
        // (31/32)^32 = 0.36206, F(1) = 0.73579, F(2) = 0.92266, F(3) = 0.98294, F(4) = 0.99703, F(5) = 0.99958,
        // F(6) = 0.99995; the busiest of 8: sum of 1 - F^8 = 0.99970 + 0.91409 + 0.47480 + 0.12863 + 0.02348 +
        // 0.00335 + 0.00039 + ... = 2.5445.
        let b = busiest_rank_experts(256.0, 8.0, 8.0);
        assert!((b - 2.5445).abs() < 1e-3, "{b}");
        // Every expert hit: each rank holds its 32; one rank: all 8.
        assert_eq!(busiest_rank_experts(256.0, 256.0, 8.0), 32.0);
        assert_eq!(busiest_rank_experts(256.0, 8.0, 1.0), 8.0);
        // Never fewer than the mean.
        for &(hit, ep) in &[(64.0, 8.0), (200.0, 32.0), (250.0, 2.0), (1.0, 256.0)] {
            let b = busiest_rank_experts(256.0, hit, ep);
            assert!(b >= hit / ep - 1e-12 && b <= 256.0 / ep + 1e-12, "{hit} {ep}: {b}");
        }
    }

    #[test]
    fn experts_inside_one_attention_replica_need_no_all_to_all() {
        use crate::examples::{deepseek_v3, serving_config};
        use crate::serve::{ServingCluster, ServingLayout};
        // DeepSeek-V3 on 8 GPUs, attention TP 8, one token: its experts over 8 GPUs (EP 8) or split 8 ways (EP 1)
        // communicate the same two all-reduces; spread over 8 attention replicas (TP 1, EP 8) they dispatch.
        let mut cfg = serving_config();
        cfg.model = deepseek_v3();
        cfg.serving.batch = 1;
        let comm = |tp: u32, ep: u32, dp_attention: u32| {
            let s = Serving { tp, ep, dp_attention, ..cfg.serving.clone() };
            let c = ServingCluster::new(&cfg).unwrap();
            let l = ServingLayout::new(&c, &s).unwrap();
            let w = StepWork { decode_seqs: 1.0, context: 1000.0, prefill_tokens: 0.0, prompt: 1000.0 };
            step_time(&c, &l.decode, &s, &w).comm_s
        };
        assert_eq!(comm(8, 8, 1), comm(8, 1, 1));
        assert!(comm(8, 8, 1) > 0.0);
        assert!(comm(1, 8, 8) > 0.0 && comm(1, 8, 8) != comm(8, 8, 1));
    }

    #[test]
    fn kernels_per_layer_follow_the_layer_kind() {
        use crate::examples::{deepseek_v3, llama3_70b, mixtral_8x7b};
        // Llama: QKV and output projections, gate/up and down, and 7 others.
        assert_eq!(layer_kernels(&llama3_70b(), false), 11.0);
        // DeepSeek-V3's MoE layer: MLA's five projections (q down and up, kv down, output, and the kv up-projection
        // absorbed as two batched GEMMs: 6) and its two latent norms, router, two grouped expert GEMMs, the shared
        // expert's two GEMMs and activation, top-k, permute, un-permute, 7 others.
        assert_eq!(layer_kernels(&deepseek_v3(), true), 24.0);
        assert_eq!(layer_kernels(&deepseek_v3(), false), 17.0); // its three dense layers: 6 + 2 + 2 + 7
                                                                // Mixtral: no shared expert.
        assert_eq!(layer_kernels(&mixtral_8x7b(), true), 15.0);
    }
}
