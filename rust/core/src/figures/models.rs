//! A model's fields (data/models/<id>.toml, or a file given with `--model`): a decoder-only transformer's
//! dimensions, the mixture-of-experts fields (`moe.*` of the core's spec) and the multi-head latent attention
//! fields (`mla.*`). A group's fields go together: the core takes no group when one of its fields is absent.

use super::{core, dim, flag, text, CatalogSection, Figure, COUNT, NOT_IN_CORE, SIZE};

const M: CatalogSection = CatalogSection::Models;
pub(super) const MODELS: &[Figure] = &[
    text(M, "name", NOT_IN_CORE).doc("display name"),
    dim("layers", COUNT, core("layers")).doc("transformer layers"),
    dim("hidden", COUNT, core("hidden")).doc("hidden size"),
    dim("heads", COUNT, core("heads")).doc("attention heads"),
    dim("kv_heads", COUNT, core("kv_heads")).doc("key-value heads (grouped-query attention); divides `heads`"),
    dim("head_dim", SIZE, core("head_dim")).doc("width of one head; 0 = `hidden / heads`"),
    dim("ffn_hidden", COUNT, core("ffn_hidden")).doc("hidden size of the dense MLP"),
    flag(M, "gated_mlp", core("gated_mlp")).doc("gated MLP (SwiGLU: three weight matrices instead of two)"),
    dim("vocab", COUNT, core("vocab")).doc("vocabulary size"),
    dim("seq_len", COUNT, NOT_IN_CORE).doc("the sequence length the model was trained with: the default `seq_len`"),
    flag(M, "tied_embeddings", core("tied_embeddings")).doc("input and output embeddings shared"),
    dim("moe_experts", COUNT, core("moe.experts")).doc("mixture of experts: routed experts per MoE layer"),
    dim("moe_top_k", COUNT, core("moe.top_k")).doc("experts each token is routed to (at most `moe_experts`)"),
    dim("moe_ffn_hidden", COUNT, core("moe.ffn_hidden")).doc("hidden size of one expert's MLP"),
    dim("moe_shared_experts", SIZE, core("moe.shared_experts")).doc("experts every token goes through"),
    dim("moe_first_dense_layers", SIZE, core("moe.first_dense_layers"))
        .doc("leading layers that stay dense, with `ffn_hidden`"),
    dim("moe_node_limit", SIZE, core("moe.node_limit"))
        .doc("scale-up domains one token may be routed to (0 = no limit; DeepSeek-V3: 4)"),
    dim("mla_q_lora_rank", SIZE, core("mla.q_lora_rank"))
        .doc("multi-head latent attention (DeepSeek-V2/V3): query latent rank (0 = no query latent)"),
    dim("mla_kv_lora_rank", COUNT, core("mla.kv_lora_rank")).doc("key-value latent rank"),
    dim("mla_qk_nope_head_dim", COUNT, core("mla.qk_nope_head_dim")).doc("query-key head width without rotary"),
    dim("mla_qk_rope_head_dim", SIZE, core("mla.qk_rope_head_dim")).doc("query-key head width with rotary"),
    dim("mla_v_head_dim", COUNT, core("mla.v_head_dim")).doc("value head width"),
    text(M, "source", NOT_IN_CORE).doc("where the model's dimensions come from"),
];
