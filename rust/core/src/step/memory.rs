//! Memory per GPU: weights, gradients and optimizer states per ZeRO stage; activations per recomputation mode
//! and pipeline schedule; a runtime reserve.

use crate::step::compute::{Shard, ACTIVATION_BYTES};
use crate::step::modules::{freed_elements_per_token, RecomputeModule, SelectiveRule};
use crate::step::parallelism::{Layout, Parallelism, Recompute, StageSplit};
use crate::step::recompute::saved_elements_per_token;
use crate::step::workload::TransformerSpec;

/// Mixed-precision Adam: 2 bytes of BF16 weights, 12 of FP32 master weights and the two moments per parameter
/// (Rajbhandari et al., "ZeRO", SC20, Sec. 3.1, K = 12), plus the gradients in their reduction format
/// (`Training::grad_reduce_dtype`: FP32 main gradients, 4 bytes, in Megatron-LM, whose
/// theoretical_memory_usage.py counts 18 bytes per parameter, 6 + 12/d with the distributed optimizer).
pub const WEIGHT_BYTES: f64 = 2.0;
pub const OPTIMIZER_BYTES: f64 = 12.0;

/// Memory of one GPU, in bytes, on its most loaded pipeline stage.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MemoryPerGpu {
    pub weights_bytes: f64,
    pub gradients_bytes: f64,
    pub optimizer_bytes: f64,
    pub activations_bytes: f64,
    pub reserve_bytes: f64,
    pub total_bytes: f64,
    pub hbm_bytes: f64,
    /// hbm - total: negative when the configuration does not fit.
    pub margin_bytes: f64,
}

/// Weight tensors of an attention block as Megatron-LM's modules hold them (the fused QKV projection and the
/// output projection): what a framework that gathers by tensor issues one collective for. Biases and norms stay
/// gathered (DeepSpeed keeps tensors under stage3_param_persistence_threshold, 1e5 elements, resident:
/// zero/constants.py, v0.3.13).
pub const ATTENTION_WEIGHT_TENSORS: f64 = 2.0;
/// Weight tensors of an MLP, a dense layer's or one expert's (routed or shared): its first projection (the gate
/// fused in, as Megatron-LM's linear_fc1) and its second.
pub const MLP_WEIGHT_TENSORS: f64 = 2.0;

/// Parameters one GPU holds, split by how they are replicated, and the weight tensors they come in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LocalParams {
    /// Replicated over the dp x cp ranks (attention, norms, dense MLPs, shared experts, router, embeddings).
    pub dense: f64,
    /// Routed experts: replicated over dp x cp / ep ranks.
    pub expert: f64,
    /// Weight tensors of `dense`: the attention's and the MLP's per dense layer; the attention's, the router and
    /// the shared experts' per MoE layer; one per embedding table and multi-token-prediction projection.
    pub dense_tensors: f64,
    /// Weight tensors of `expert`: `MLP_WEIGHT_TENSORS` per local routed expert.
    pub expert_tensors: f64,
}

impl LocalParams {
    /// Parameters on the most loaded pipeline stage, split by TP (and experts by EP and expert TP): the first
    /// stage holds the input embedding, the last the output layer and any multi-token-prediction modules (both
    /// embeddings when there is one stage and they are not tied).
    pub fn on_busiest_stage(model: &TransformerSpec, par: &Parallelism, layout: &Layout, mtp_layers: u32) -> Self {
        let split = &layout.stages;
        let table = model.vocab as f64 * model.hidden as f64;
        let experts_per_layer = model.moe.as_ref().map_or(0.0, |m| m.experts as f64) / par.ep as f64;
        let h = model.hidden as f64;
        let is_moe = model.moe.is_some();
        let shared = model.moe.as_ref().map_or(0.0, |m| m.shared_experts as f64);
        let dense_layer_tensors = ATTENTION_WEIGHT_TENSORS + MLP_WEIGHT_TENSORS;
        let moe_layer_tensors = ATTENTION_WEIGHT_TENSORS + 1.0 + shared * MLP_WEIGHT_TENSORS;
        let (dense_layer, moe_layer, expert) =
            (model.dense_layer_params(), model.moe_layer_non_expert_params(), model.expert_params());
        let stage = |index: usize, embeddings: f64, mtp: f64| {
            let dense_layers = split.dense[index].min(split.layers[index]) as f64 + if is_moe { 0.0 } else { mtp };
            let moe_layers = split.layers[index] as f64 - split.dense[index].min(split.layers[index]) as f64
                + if is_moe { mtp } else { 0.0 };
            let dense =
                (dense_layers * dense_layer + moe_layers * moe_layer + embeddings + mtp * 2.0 * h * h) / par.tp as f64;
            let expert = moe_layers * experts_per_layer * expert / par.expert_tp() as f64;
            let dense_tensors =
                dense_layers * dense_layer_tensors + moe_layers * moe_layer_tensors + embeddings / table + mtp;
            let expert_tensors = moe_layers * experts_per_layer * MLP_WEIGHT_TENSORS;
            LocalParams { dense, expert, dense_tensors, expert_tensors }
        };
        let mtp = mtp_layers as f64;
        if par.pp == 1 {
            return stage(StageSplit::FIRST, model.embedding_params(), mtp);
        }
        [stage(StageSplit::FIRST, table, 0.0), stage(StageSplit::MIDDLE, 0.0, 0.0), stage(StageSplit::LAST, table, mtp)]
            .into_iter()
            .max_by(|a, b| a.total().total_cmp(&b.total()))
            .unwrap_or(LocalParams { dense: 0.0, expert: 0.0, dense_tensors: 0.0, expert_tensors: 0.0 })
    }

    pub fn total(&self) -> f64 {
        self.dense + self.expert
    }
}

/// Bytes of (weights, gradients, optimizer states) of `params` replicated over `replicas` ranks at ZeRO `stage`
/// (ZeRO paper, Sec. 5: stage 1 shards optimizer states, 2 also gradients, 3 also weights), with gradients of
/// `grad_bytes` each.
pub fn model_state_bytes(params: f64, replicas: f64, stage: u32, grad_bytes: f64) -> (f64, f64, f64) {
    let shard = |sharded: bool, bytes: f64| if sharded { params * bytes / replicas } else { params * bytes };
    (shard(stage >= 3, WEIGHT_BYTES), shard(stage >= 2, grad_bytes), shard(stage >= 1, OPTIMIZER_BYTES))
}

/// Elements per token an MLP keeps before any TP split: everything it keeps, its activation output (the second
/// GEMM's input), and the routed tokens' permuted input copies (the experts' first GEMM's input; 0 for a dense
/// MLP). The busiest expert rank keeps `imbalance` times the mean of routed copies, each with its input (h).
fn mlp_kept_elements(model: &TransformerSpec, shard: &Shard, moe_layer: bool) -> (f64, f64, f64) {
    let h = model.hidden as f64;
    let per_width = if model.gated_mlp { 3.0 } else { 2.0 };
    match (&model.moe, moe_layer) {
        (Some(moe), true) => {
            let routed = moe.top_k as f64 * shard.imbalance;
            let copies = routed + moe.shared_experts as f64;
            let f = moe.ffn_hidden as f64;
            (copies * per_width * f + routed * h, copies * f, routed * h)
        }
        _ => {
            let f = model.ffn_hidden as f64;
            (per_width * f, f, 0.0)
        }
    }
}

/// Activation bytes one token leaves in memory for the backward pass of one layer, on one GPU, with flash
/// attention (no attention matrix stored). Counted as Korthikanti et al. 2022 (Sec. 4, Table 2) count them,
/// generalised to GQA and SwiGLU and without dropout:
/// attention: norm input and output 2h + 2h, Q, K, V 2(q + 2 kv), attention output 2q;
/// MLP: norm input and output 2h + 2h, gated up and gate outputs and activation output 6F (plain MLP 4F).
/// Norm-related terms are split by TP only with sequence parallelism. Selective recomputation drops the norm
/// outputs and the activation output (where the framework reruns every other GEMM, `SelectiveRule::AlternateMms`,
/// the block keeps what `recompute::saved_elements_per_token` counts; where the run names Megatron-Core's modules,
/// what `modules::freed_elements_per_token` frees is not kept); full recomputation keeps only the layer input.
/// (For a GPT with F = 4h this gives 32 s b h, Korthikanti's 34 s b h less the two dropout masks.)
/// `gemm_input_bytes` is what a GEMM keeps of its activation input per element: 2 (BF16), or 1 where an FP8 run's
/// framework keeps the quantised copy (`FrameworkSpec::fp8_keeps_quantized_inputs`): then the norm outputs, the
/// activation output and the experts' permuted inputs are kept at that size, and the attention output, which the
/// attention kernel keeps in BF16 for its own backward, once more for the output projection. (Without recomputation
/// and with Korthikanti's selective rule; a run naming Megatron-Core's modules, or rerunning every other GEMM, is
/// counted in BF16, which overstates its FP8 memory.)
pub fn activation_bytes_per_token_per_layer(
    model: &TransformerSpec,
    shard: &Shard,
    recompute: Recompute,
    moe_layer: bool,
    rule: SelectiveRule,
    gemm_input_bytes: f64,
) -> f64 {
    let h = model.hidden as f64;
    let tp = shard.tp;
    let hs = shard.hidden_split();
    let b = ACTIVATION_BYTES;
    if recompute == Recompute::Full {
        return b * h / hs;
    }
    let (mlp_elements, mlp_activation_outputs, permuted_inputs) = mlp_kept_elements(model, shard, moe_layer);
    let norm_inputs = 2.0 * h / hs;
    let norm_outputs = 2.0 * h / hs;
    let shapes = model.attention_shapes();
    let attention = shapes.stored_per_head_part / tp + shapes.stored_replicated;
    let mlp = mlp_elements / tp;
    let scores = 5.0 * model.heads as f64 * shard.seq_len / tp;
    if let (Recompute::Selective, SelectiveRule::Modules(modules)) = (recompute, rule) {
        // The run's modules free their own activations; the layer keeps at least its input.
        let freed = freed_elements_per_token(model, shard, modules, moe_layer);
        let kept = (norm_inputs + norm_outputs + attention + mlp - freed).max(h / hs);
        let unfused = !shard.flash_attention && !modules.contains(RecomputeModule::CoreAttn);
        return b * kept + if unfused { scores } else { 0.0 };
    }
    if !shard.flash_attention {
        // Unfused attention keeps the scores: softmax output (2 bytes), dropout mask (1) and output (2) per
        // score, 5 a s per token (Korthikanti et al. 2022, Table 2); selective recomputation drops exactly these.
        let base = b * (norm_inputs + norm_outputs + attention + mlp);
        return if recompute == Recompute::None { base + scores } else { base };
    }
    // What an FP8 GEMM keeps at `gemm_input_bytes` instead of BF16, in elements' worth of BF16 bytes (0 in BF16).
    let quantized = |gemm_inputs: f64| gemm_inputs * (b - gemm_input_bytes) / b;
    let projection_copy = if gemm_input_bytes < b { shapes.out_in / tp * gemm_input_bytes / b } else { 0.0 };
    let elements = match recompute {
        Recompute::None => {
            let gemm_inputs = norm_outputs + (mlp_activation_outputs + permuted_inputs) / tp;
            norm_inputs + norm_outputs + attention + mlp - quantized(gemm_inputs) + projection_copy
        }
        // Every other GEMM's output kept where the backward reads it (`recompute`); a MoE layer's MLP part by
        // Korthikanti's rule, its norm's input rebuilt from what the attention part keeps.
        _ if rule == SelectiveRule::AlternateMms => {
            let moe_mlp = if moe_layer { mlp - mlp_activation_outputs / tp } else { 0.0 };
            saved_elements_per_token(model, shard, !moe_layer) + moe_mlp
        }
        _ => {
            norm_inputs + attention + mlp - mlp_activation_outputs / tp - quantized(permuted_inputs / tp)
                + projection_copy
        }
    };
    b * elements
}

/// Activation bytes per token of a stage's layers, summed over them, in the configuration's recomputation mode.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StageActivations {
    pub first_stage: f64,
    /// The last stage's layers and its multi-token-prediction modules.
    pub last_stage: f64,
    /// The largest single layer without recomputation.
    pub largest_layer_without_recompute: f64,
}

/// Activation memory of the busiest pipeline stage, from the activation bytes per token of the first and the
/// last stage's layers and of the largest single layer without recomputation (`per_token`): with 1F1B the first
/// stage holds min(m, p) micro-batches of its layers in flight; the interleaved schedule adds a factor
/// 1 + (p - 1) / (p v) (Korthikanti et al. 2022, Sec. 4.2.3; Megatron-LM theoretical_memory_usage.py). Full
/// recomputation also holds one layer's full activations while it is recomputed. The last stage holds one
/// micro-batch plus FP32 logits (4 bytes x V / tp per token, Megatron-LM theoretical_memory_usage.py), once more
/// per multi-token-prediction module; memory is the larger of the two stages.
pub fn activation_bytes(
    model: &TransformerSpec,
    par: &Parallelism,
    layout: &Layout,
    shard: &Shard,
    per_token: &StageActivations,
    mtp_layers: f64,
) -> f64 {
    let StageActivations { first_stage, last_stage, largest_layer_without_recompute } = *per_token;
    let p = par.pp as f64;
    let v = par.vpp as f64;
    let in_flight = (layout.micro_batches as f64).min(p);
    let interleave = if par.vpp > 1 { 1.0 + (p - 1.0) / (p * v) } else { 1.0 };
    let recomputing =
        if par.recompute == Recompute::Full { shard.tokens * largest_layer_without_recompute } else { 0.0 };
    let logits = shard.tokens * 4.0 * model.vocab as f64 / shard.tp * (1.0 + mtp_layers);
    if par.pp == 1 {
        return shard.tokens * last_stage * in_flight * interleave + recomputing + logits;
    }
    let first = shard.tokens * first_stage * in_flight * interleave + recomputing;
    let last = shard.tokens * last_stage + recomputing + logits;
    first.max(last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::examples::{gpt3_175b, llama3_70b, mixtral_8x7b};

    /// A dense layer's kept activation bytes per token at BF16 GEMM inputs, Korthikanti's selective rule.
    fn bf16_kept(m: &TransformerSpec, shard: &Shard, r: Recompute) -> f64 {
        activation_bytes_per_token_per_layer(m, shard, r, false, SelectiveRule::Korthikanti, ACTIVATION_BYTES)
    }

    #[test]
    fn a_70b_model_has_140_gb_of_bf16_gradients() {
        let params = llama3_70b().params_total();
        let (w, g, o) = model_state_bytes(params, 1.0, 0, 2.0);
        assert!((g / 1e9 - 141.1).abs() < 0.1, "{g}");
        assert_eq!(w, g);
        // 16 bytes per parameter in all without ZeRO.
        assert!(((w + g + o) / params - 16.0).abs() < 1e-12);
    }

    #[test]
    fn zero_stages_shard_as_the_zero_paper_says() {
        // ZeRO Sec. 5 / Fig. 1: 7.5B params, 64 ranks: 120 GB, then 31.4 GB, 16.6 GB, 1.9 GB.
        let p = 7.5e9;
        for (stage, expected_gb) in [(0, 120.0), (1, 31.4), (2, 16.6), (3, 1.875)] {
            let (w, g, o) = model_state_bytes(p, 64.0, stage, 2.0);
            assert!(((w + g + o) / 1e9 - expected_gb).abs() < 0.1, "stage {stage}: {}", (w + g + o) / 1e9);
        }
    }

    #[test]
    fn weight_tensors_are_counted_as_megatrons_modules_hold_them() {
        use crate::step::parallelism::{placement, Parallelism, Training};
        let count = |model: &TransformerSpec, par: Parallelism, gpus: u32| {
            let training = Training { global_batch: 1024, seq_len: 4096, ..Training::default() };
            let layout = placement(model, &par, &training, gpus, 8).unwrap();
            let local = LocalParams::on_busiest_stage(model, &par, &layout, 0);
            (local.dense_tensors, local.expert_tensors)
        };
        // Llama 3 70B on one stage: 80 layers x (QKV, output, fc1, fc2) + 2 untied embedding tables = 322.
        let one_stage = Parallelism { tp: 8, pp: 1, dp: 8, ..Parallelism::default() };
        assert_eq!(count(&llama3_70b(), one_stage, 64), (322.0, 0.0));
        // pp 4: 20 layers per stage, one table on the first and on the last: 81.
        let four_stages = Parallelism { tp: 8, pp: 4, dp: 2, ..Parallelism::default() };
        assert_eq!(count(&llama3_70b(), four_stages, 64), (81.0, 0.0));
        // Mixtral 8x7B at ep 8: 32 layers x (QKV, output, router) + 2 tables = 98; one local expert per layer
        // with its fc1 and fc2: 64.
        let moe = Parallelism { tp: 1, pp: 1, dp: 8, ep: 8, ..Parallelism::default() };
        assert_eq!(count(&mixtral_8x7b(), moe, 8), (98.0, 64.0));
    }

    #[test]
    fn fp32_gradients_give_megatrons_18_bytes_per_parameter() {
        // Megatron-LM theoretical_memory_usage.py: 18 bytes per parameter without the distributed optimizer
        // (2 weight + 4 FP32 main gradient + 12 Adam), 6 + 12 / d with it (ZeRO-1 here).
        let p = 1e9;
        let (w, g, o) = model_state_bytes(p, 1.0, 0, 4.0);
        assert_eq!((w + g + o) / p, 18.0);
        let (w, g, o) = model_state_bytes(p, 8.0, 1, 4.0);
        assert_eq!((w + g + o) / p, 6.0 + 12.0 / 8.0);
    }

    #[test]
    fn gpt_activations_match_korthikanti_without_dropout() {
        // GPT-3: F = 4h, MHA: 32 h bytes per token per layer without TP (Korthikanti's 34 less 2 dropout masks);
        // with TP = 8 and sequence parallelism all of it splits: 4 h.
        let m = gpt3_175b();
        let h = m.hidden as f64;
        let mut shard = Shard::plain(2048.0, 2048.0, 1.0);
        let none = bf16_kept(&m, &shard, Recompute::None);
        assert!((none / h - 32.0).abs() < 1e-9, "{}", none / h);
        shard.tp = 8.0;
        shard.sequence_parallel = true;
        let sp = bf16_kept(&m, &shard, Recompute::None);
        assert!((sp / h - 4.0).abs() < 1e-9);
        // Without SP the 8 h of norm inputs and outputs stay replicated: 8 + 24 / 8 = 11 h.
        shard.sequence_parallel = false;
        let tp_only = bf16_kept(&m, &shard, Recompute::None);
        assert!((tp_only / h - 11.0).abs() < 1e-9);
        // Full recomputation keeps the 2 h layer input.
        let full = bf16_kept(&m, &shard, Recompute::Full);
        assert!((full / h - 2.0).abs() < 1e-9);
        let sel = bf16_kept(&m, &shard, Recompute::Selective);
        assert!(sel < tp_only && sel > full);
    }

    #[test]
    fn fp8_gemms_keep_their_inputs_at_one_byte() {
        // Llama 3 70B at TP 8 with sequence parallelism, per token and layer, in elements: norm inputs and
        // outputs 2 x 2 x 8192 / 8 = 4096; Q, K, V and the attention output (2 x 8192 + 2 x 1024) / 8 = 2304;
        // SwiGLU's gate and up outputs and activation output 3 x 28672 / 8 = 10752: 17152 elements, 34304 bytes.
        // Transformer Engine keeps the FP8 copy of each GEMM's input: the norm outputs (2048) and the activation
        // output (3584) at one byte, -2816 elements' worth, and the output projection's input once more, +512:
        // 14848, 29696 bytes.
        let m = llama3_70b();
        let shard = Shard { tp: 8.0, sequence_parallel: true, ..Shard::plain(8192.0, 8192.0, 1.0) };
        let bytes = |r: Recompute, b: f64| {
            activation_bytes_per_token_per_layer(&m, &shard, r, false, SelectiveRule::Korthikanti, b)
        };
        assert!((bytes(Recompute::None, ACTIVATION_BYTES) - 34304.0).abs() < 1e-9);
        assert!((bytes(Recompute::None, 1.0) - 29696.0).abs() < 1e-9);
        // Selective recomputation reruns the norms and the activation: only the projection's copy is added,
        // 1024 elements at one byte.
        let selective = bytes(Recompute::Selective, ACTIVATION_BYTES);
        assert!((bytes(Recompute::Selective, 1.0) - selective - 1024.0).abs() < 1e-9);
        // Full recomputation keeps the layer input, in BF16, either way.
        assert_eq!(bytes(Recompute::Full, 1.0), bytes(Recompute::Full, ACTIVATION_BYTES));
    }

    #[test]
    fn unfused_attention_keeps_five_a_s_bytes_of_scores_per_token() {
        // Korthikanti et al. 2022, Table 2, no parallelism: s b h (34 + 5 a s / h) bytes per layer, i.e. 34 h +
        // 5 a s per token; ours has no hidden-state dropout masks: 32 h + 5 a s. GPT-3: a = 96, s = 2048.
        let m = gpt3_175b();
        let h = m.hidden as f64;
        let shard = Shard { flash_attention: false, ..Shard::plain(2048.0, 2048.0, 1.0) };
        let none = bf16_kept(&m, &shard, Recompute::None);
        assert!((none - (32.0 * h + 5.0 * 96.0 * 2048.0)).abs() < 1e-6);
        // Selective recomputation (of the core attention) drops exactly the scores.
        let sel = bf16_kept(&m, &shard, Recompute::Selective);
        assert!((sel - 32.0 * h).abs() < 1e-6);
    }
}
