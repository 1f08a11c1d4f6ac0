//! HBM of a serving GPU: the weights its stage holds in the chosen format, the activation workspace of a step,
//! the runtime reserve, and the paged KV cache that takes the rest and so bounds the batch.

use crate::error::ConfigError;
use crate::hardware::GpuSpec;
use crate::step::compute::FP4_ELEMENT_BYTES;
use crate::step::workload::TransformerSpec;

use super::layout::PhaseLayout;
use super::{KvCacheDtype, Quantization, Serving};

/// Bytes of a weight in each format: BF16 2, FP8 1 (its per-block scales, one FP32 per 128 x 128 block in
/// DeepSeek-V3's recipe, add 0.02%), NVFP4 4.5 bits with its block scales (`FP4_ELEMENT_BYTES`).
pub fn weight_bytes(q: Quantization) -> f64 {
    match q {
        Quantization::Bf16 => 2.0,
        Quantization::Fp8 => 1.0,
        Quantization::Fp4 => FP4_ELEMENT_BYTES,
    }
}

fn kv_element_bytes(kv: KvCacheDtype) -> f64 {
    match kv {
        KvCacheDtype::Bf16 => 2.0,
        KvCacheDtype::Fp8 => 1.0,
    }
}

/// KV-cache bytes of one token in one layer on one GPU of a `tp`-way attention replica. Grouped-query attention
/// keeps K and V of kv_heads heads of head_dim, split over TP or replicated when tp exceeds them; MLA keeps the
/// compressed latent and the shared rotary key, kv_lora_rank + qk_rope_head_dim per token, on every TP rank
/// (DeepSeek-V2 Sec. 2.1.4: 4.5 d_h per token instead of 2 n_h d_h; SGLang's DP attention exists because TP
/// replicates it).
pub fn kv_bytes_per_token(model: &TransformerSpec, tp: u32, kv: KvCacheDtype) -> f64 {
    let elements = match &model.mla {
        Some(a) => (a.kv_lora_rank + a.qk_rope_head_dim) as f64,
        None => 2.0 * (model.kv_heads as f64 / tp as f64).max(1.0) * model.head_dim(),
    };
    elements * kv_element_bytes(kv)
}

/// Memory of one GPU of an instance's busiest stage.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ServingMemory {
    pub weights_bytes: f64,
    /// The activation workspace of the largest step (a forward pass at max_num_tokens, as vLLM's profile run
    /// measures it before sizing the KV cache).
    pub activation_bytes: f64,
    pub reserve_bytes: f64,
    /// The KV cache: what is left, times `kv_cache_fraction`.
    pub kv_cache_bytes: f64,
    /// KV-cache bytes of one token over the GPU's layers.
    pub kv_bytes_per_token: f64,
    pub hbm_bytes: f64,
}

impl ServingMemory {
    /// Sequences one attention replica holds at `context` tokens each.
    pub fn sequences(&self, context: f64) -> f64 {
        self.kv_cache_bytes / (self.kv_bytes_per_token * context)
    }
}

/// Layers on the busiest stage: ceil(layers / pp).
pub(super) fn stage_layers(model: &TransformerSpec, pp: u32) -> f64 {
    model.layers.div_ceil(pp) as f64
}

/// Weight bytes on one GPU of the busiest stage: each layer's attention split over tp (MLA's down-projections
/// whole on every rank), dense MLPs and shared experts over tp, routed experts over the stage's width (ep x etp),
/// the router and norms whole; the attention projections in their own format where the checkpoint keeps them
/// apart (`Serving::attention_format`), the rest in `quantization`; the embedding and the output layer in BF16
/// (quantized checkpoints, ModelOpt's FP8/NVFP4 among them, leave them unquantized), vocabulary-parallel over tp,
/// both on a one-stage instance.
fn weights_bytes(model: &TransformerSpec, p: &PhaseLayout, s: &Serving) -> f64 {
    let (tp, h) = (p.tp as f64, model.hidden as f64);
    let a = model.attention_shapes();
    let replicated: f64 = a.replicated.iter().map(|(i, o)| i * o).sum();
    let split: f64 = a.split_out.iter().map(|(i, o)| i * o).sum::<f64>() + a.out_in * h;
    let attention = replicated + split / tp;
    let (experts, shared) =
        model.moe.as_ref().map_or((0.0, 0.0), |m| ((m.experts + s.redundant_experts) as f64, m.shared_experts as f64));
    let dense = attention + model.dense_mlp_params() / tp;
    let moe = attention
        + model.router_params()
        + shared * model.expert_params() / tp
        + experts * model.expert_params() / p.width as f64;
    let per_layer = (model.dense_layers() as f64 * dense + model.moe_layers() as f64 * moe) / model.layers as f64;
    let (format, attention_format) = (s.quantization, s.attention_format());
    let layer_bytes = if attention_format == format {
        per_layer * weight_bytes(format)
    } else {
        attention * weight_bytes(attention_format) + (per_layer - attention) * weight_bytes(format)
    };
    let table = model.vocab as f64 * h / tp;
    let embeddings = if p.pp == 1 && !model.tied_embeddings { 2.0 * table } else { table };
    stage_layers(model, p.pp) * (layer_bytes + model.norm_params_per_layer() * 2.0) + embeddings * 2.0
}

/// Activation elements per token of one layer's widest point: the hidden state in and out, plus the widest of the
/// QKV projection, the MLP's up-projection and the routed experts' up-projections of a token's top-k copies.
fn activation_elements(model: &TransformerSpec, p: &PhaseLayout) -> f64 {
    let (h, tp) = (model.hidden as f64, p.tp as f64);
    let qkv = (model.q_dim() + 2.0 * model.kv_dim()) / tp;
    let mlp = (model.mlp_matrices() - 1.0) * model.ffn_hidden as f64 / tp;
    let experts = model
        .moe
        .as_ref()
        .map_or(0.0, |m| m.top_k as f64 * (model.mlp_matrices() - 1.0) * m.ffn_hidden as f64 / p.etp as f64);
    2.0 * h + qkv.max(mlp).max(experts)
}

/// The memory of one GPU of a phase's instance and what its KV cache holds. Errors when the weights leave no room
/// for one sequence of `context` tokens.
pub(super) fn memory(
    gpu: &GpuSpec,
    model: &TransformerSpec,
    p: &PhaseLayout,
    s: &Serving,
    context: f64,
) -> Result<ServingMemory, ConfigError> {
    let weights_bytes = weights_bytes(model, p, s);
    // BF16 activations of a step of max_num_tokens tokens, and FP32 logits of its sampled tokens.
    let tokens = s.max_num_tokens as f64;
    let logits = tokens.min(s.batch.max(1) as f64) * model.vocab as f64 / p.tp as f64 * 4.0;
    let activation_bytes = tokens * activation_elements(model, p) * 2.0 + logits;
    let free = gpu.hbm_bytes - gpu.runtime_reserve_bytes - weights_bytes - activation_bytes;
    let kv_bytes_per_token = kv_bytes_per_token(model, p.tp, s.kv_cache_dtype) * stage_layers(model, p.pp);
    let m = ServingMemory {
        weights_bytes,
        activation_bytes,
        reserve_bytes: gpu.runtime_reserve_bytes,
        kv_cache_bytes: free.max(0.0) * s.kv_cache_fraction,
        kv_bytes_per_token,
        hbm_bytes: gpu.hbm_bytes,
    };
    if m.sequences(context) < 1.0 {
        return Err(ConfigError::KvCacheDoesNotFit {
            field: "tp",
            batch: s.batch,
            max_batch: 0,
            free_gb: free / 1e9,
            needed_gb: kv_bytes_per_token * context / 1e9,
        });
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::examples::{deepseek_v3, llama3_70b};

    #[test]
    fn attention_projections_in_their_own_format() {
        use crate::error::ConfigError;
        use crate::examples::serving_config;
        use crate::serve::{serve, AttentionQuantization, Quantization};
        // Llama 3 70B at TP 8, FP8: a layer's attention projections are QKV 8,192 -> 10,240 and O 8,192 -> 8,192,
        // 150,994,944 weights, 18,874,368 a GPU; over 80 layers 1,509,949,440, one byte more each in BF16.
        let mut fp8 = serving_config();
        fp8.serving.batch = 64; // the same batch on both (the bigger weights would leave a smaller KV cache)
        let mut bf16 = fp8.clone();
        bf16.serving.attention_quantization = AttentionQuantization::Bf16;
        let (a, b) = (serve(&fp8).unwrap(), serve(&bf16).unwrap());
        let extra = b.memory.weights_bytes - a.memory.weights_bytes;
        assert!((extra - 1_509_949_440.0).abs() < 1e-6 * extra, "{extra}");
        // Wider attention weights are read and multiplied more slowly: decode GEMMs and TPOT never shrink.
        assert!(b.decode_step.gemm_s > a.decode_step.gemm_s && b.tpot_s > a.tpot_s, "{} {}", b.tpot_s, a.tpot_s);
        // Naming the format the rest has is the same as `same`.
        let mut named = fp8.clone();
        named.serving.attention_quantization = AttentionQuantization::Fp8;
        assert_eq!(serve(&named).unwrap(), a);
        // A format the GPU lacks is refused by its own field.
        let mut fp4 = fp8.clone();
        fp4.serving.attention_quantization = AttentionQuantization::Fp4;
        let refused = ConfigError::FormatNotSupported { field: "attention_quantization", format: "fp4" };
        assert_eq!(serve(&fp4).unwrap_err(), refused);
        assert_eq!(bf16.serving.attention_format(), Quantization::Bf16);
    }

    #[test]
    fn kv_cache_per_token_follows_the_attention_kind() {
        // Llama 3 70B: 8 KV heads of 128, K and V: 2 x 8 x 128 = 2,048 elements a layer; BF16 4,096 B, FP8 2,048 B.
        let m = llama3_70b();
        assert_eq!(kv_bytes_per_token(&m, 1, KvCacheDtype::Bf16), 4096.0);
        assert_eq!(kv_bytes_per_token(&m, 8, KvCacheDtype::Fp8), 256.0);
        // TP 16 replicates each KV head on two ranks: still one head a rank.
        assert_eq!(kv_bytes_per_token(&m, 16, KvCacheDtype::Fp8), 256.0);
        // DeepSeek-V3's MLA: 512 + 64 = 576 elements whatever tp (70,272 B a token over 61 layers in BF16,
        // the 70 KB DeepSeek-V2 Sec. 2.1.4 implies).
        let d = deepseek_v3();
        assert_eq!(kv_bytes_per_token(&d, 8, KvCacheDtype::Bf16), 1152.0);
        assert_eq!(kv_bytes_per_token(&d, 1, KvCacheDtype::Bf16) * 61.0, 70_272.0);
    }
}
