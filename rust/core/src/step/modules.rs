//! Megatron-Core's selective recomputation by submodule (`recompute_modules`): the run names the submodules whose
//! forward is rerun in the backward pass, and each costs its own forward time and frees its own activations
//! [megatron/core/transformer/transformer_config.py `recompute_modules`, default `["core_attn"]`, and
//! transformer_layer.py at NVIDIA/Megatron-LM d98e8a64dd]. "moe_act", "layernorm" and "mla_up_proj" discard their
//! outputs and rerun them (CheckpointWithoutOutput); "core_attn", "mlp", "moe" and "shared_experts" checkpoint the
//! submodule (its inputs kept, everything inside it rerun). "mlp" applies to dense layers only (`if not
//! self.is_moe_layer`); "moe", "moe_act" and "shared_experts" to MoE layers, "mla_up_proj" to MLA attention. A
//! module the layer does not have reruns nothing. Without modules, selective recomputation is the framework's own
//! rule (`compute::LayerForward::selective_recompute_s`, `recompute`).

use crate::software::FrameworkSpec;
use crate::step::compute::{attention_forward, elementwise_forward_s, Shard, Throughput};
use crate::step::compute::{LayerForward, ACTIVATION_BYTES};
use crate::step::workload::TransformerSpec;

crate::named_enum! {
    /// A submodule that Megatron-Core's selective recomputation can rerun (`recompute_modules`).
    pub enum RecomputeModule {
        /// The core attention (softmax(QK^T)V): its fused kernel's forward rerun; unfused, its scores not kept.
        CoreAttn = "core_attn",
        /// The MoE experts' activation function: its output not kept, rerun.
        MoeAct = "moe_act",
        /// The input and pre-MLP norms: their outputs not kept, rerun.
        Layernorm = "layernorm",
        /// MLA's up-projections and rotary embedding: Q, K and V not kept, rerun.
        MlaUpProj = "mla_up_proj",
        /// A dense layer's MLP, rerun whole.
        Mlp = "mlp",
        /// A MoE layer's MoE block (router, dispatch, experts, combine), rerun whole.
        Moe = "moe",
        /// A MoE layer's shared experts, rerun whole.
        SharedExperts = "shared_experts",
    }
}

/// The set of submodules a run reruns; empty: the framework's own selective rule.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecomputeModules(u16);

impl RecomputeModules {
    pub const NONE: RecomputeModules = RecomputeModules(0);

    pub fn with(self, m: RecomputeModule) -> Self {
        RecomputeModules(self.0 | 1 << m as u16)
    }
    pub fn contains(self, m: RecomputeModule) -> bool {
        self.0 & (1 << m as u16) != 0
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// How many modules the set names.
    pub fn count(self) -> u32 {
        self.0.count_ones()
    }

    /// Read `core_attn,moe_act` (commas or spaces between names; "" is the empty set); an unknown or repeated name
    /// is an error naming it and the accepted ones.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut set = RecomputeModules::NONE;
        for name in text.split(|c: char| c == ',' || c.is_whitespace()).filter(|n| !n.is_empty()) {
            let m = RecomputeModule::from_name(name)
                .ok_or_else(|| format!("unknown module {name:?}: expected {}", RecomputeModule::names()))?;
            if set.contains(m) {
                return Err(format!("module {name:?} named twice"));
            }
            set = set.with(m);
        }
        Ok(set)
    }

    /// The names, comma-separated, in declaration order ("" for none): one spelling per set.
    pub fn label(self) -> String {
        let names: Vec<&str> = RecomputeModule::ALL.iter().filter(|m| self.contains(**m)).map(|m| m.name()).collect();
        names.join(",")
    }
}

impl crate::records::PyHint for RecomputeModules {
    fn hint() -> String {
        "str".to_string()
    }
}

#[cfg(feature = "python")]
impl<'a, 'py> pyo3::FromPyObject<'a, 'py> for RecomputeModules {
    type Error = pyo3::PyErr;

    fn extract(obj: pyo3::Borrowed<'a, 'py, pyo3::PyAny>) -> Result<Self, Self::Error> {
        let text: String = obj.extract()?;
        RecomputeModules::parse(&text).map_err(pyo3::exceptions::PyValueError::new_err)
    }
}

/// What selective recomputation reruns: Korthikanti et al.'s rule (the norms and the activation with fused
/// attention; the attention scores without), every other GEMM of a block (torchtitan's per-op rule, `recompute`),
/// or the modules a Megatron-Core run names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SelectiveRule {
    Korthikanti,
    AlternateMms,
    Modules(RecomputeModules),
}

impl SelectiveRule {
    /// The run's modules where it names any, else the framework's rule.
    pub fn of(framework: &FrameworkSpec, modules: RecomputeModules) -> Self {
        if !modules.is_empty() {
            SelectiveRule::Modules(modules)
        } else if framework.selective_recomputes_alternate_mms {
            SelectiveRule::AlternateMms
        } else {
            SelectiveRule::Korthikanti
        }
    }
}

/// One layer's forward time each module reruns (s), by `RecomputeModule` index, for a dense layer
/// (`moe_layer` false) or a MoE layer of `model` whose forward is `layer`. The MoE block's dispatch and combine,
/// which "moe" also reruns (moe/moe_layer.py `custom_forward`: route, dispatch, experts, combine, checkpointed
/// whole), are communication: `evaluate` counts them as one more pass.
pub fn rerun_s(
    model: &TransformerSpec,
    shard: &Shard,
    tput: &Throughput,
    layer: &LayerForward,
    moe_layer: bool,
) -> [f64; 7] {
    let (h, t, tp) = (model.hidden as f64, shard.tokens, shard.tp);
    let per_element = ACTIVATION_BYTES / tput.hbm_bytes_per_s;
    let norms_s = t * 4.0 * h / shard.hidden_split() * per_element;
    let a = model.attention_shapes();
    let up_projections_s: f64 =
        a.split_out.iter().filter(|m| m.1 > 0.0).map(|m| tput.gemm_time_s(t, m.1 / tp, m.0)).sum();
    let rotary_s = t * (a.rotary_per_head_part / tp + a.rotary_replicated) * per_element;
    let mla_s = if model.mla.is_some() { up_projections_s + rotary_s } else { 0.0 };
    let mm = model.mlp_matrices();
    let mlp_s = |width: f64| {
        tput.gemm_time_s(t, (mm - 1.0) * width, h) + tput.gemm_time_s(t, h, width) + t * mm * width * per_element
    };
    let mut s = [0.0; 7];
    s[RecomputeModule::CoreAttn as usize] = layer.attention_s;
    s[RecomputeModule::Layernorm as usize] = norms_s;
    s[RecomputeModule::MlaUpProj as usize] = mla_s;
    match (&model.moe, moe_layer) {
        (Some(moe), true) => {
            let fe = moe.ffn_hidden as f64;
            s[RecomputeModule::MoeAct as usize] = t * moe.top_k as f64 * shard.imbalance * mm * fe / tp * per_element;
            s[RecomputeModule::SharedExperts as usize] =
                if moe.shared_experts > 0 { mlp_s(moe.shared_experts as f64 * fe / tp) } else { 0.0 };
            s[RecomputeModule::Moe as usize] = moe_block_s(model, shard, tput, layer);
        }
        _ => s[RecomputeModule::Mlp as usize] = mlp_s(model.ffn_hidden as f64 / tp),
    }
    s
}

/// The MoE block's forward (router, permutations, routed and shared experts, activation): the MoE layer's forward
/// `layer` less its attention projections and the norms, residuals and rotary every layer has.
fn moe_block_s(model: &TransformerSpec, shard: &Shard, tput: &Throughput, layer: &LayerForward) -> f64 {
    let (attention_gemms_s, _, _, _) = attention_forward(model, shard, tput);
    let (base_elementwise_s, _) = elementwise_forward_s(model, shard, tput, 0.0);
    (layer.gemm_s - attention_gemms_s).max(0.0) + (layer.elementwise_s - base_elementwise_s).max(0.0)
}

/// The forward time `modules` rerun in one layer, from `rerun_s`.
pub fn modules_rerun_s(modules: RecomputeModules, rerun: &[f64; 7]) -> f64 {
    RecomputeModule::ALL.iter().filter(|m| modules.contains(**m)).map(|m| rerun[*m as usize]).sum()
}

/// Activation elements per token one layer no longer keeps for the backward pass when `modules` are rerun
/// (`memory::activation_bytes_per_token_per_layer` counts what is kept): the norms' outputs, the routed copies'
/// activation output (F each), MLA's Q, K, V; a checkpointed dense MLP or MoE block keeps only its input, the
/// shared experts likewise. The core attention keeps Q, K and V as its checkpoint's inputs and its output as the
/// output projection's input: with a fused kernel nothing more is freed (unfused, its scores: `memory`).
pub fn freed_elements_per_token(
    model: &TransformerSpec,
    shard: &Shard,
    modules: RecomputeModules,
    moe_layer: bool,
) -> f64 {
    let (h, tp) = (model.hidden as f64, shard.tp);
    let per_copy = if model.gated_mlp { 3.0 } else { 2.0 };
    let mut freed = 0.0;
    if modules.contains(RecomputeModule::Layernorm) {
        freed += 2.0 * h / shard.hidden_split();
    }
    if let (Some(a), true) = (&model.mla, modules.contains(RecomputeModule::MlaUpProj)) {
        let qk = (a.qk_nope_head_dim + a.qk_rope_head_dim) as f64;
        freed += model.heads as f64 * (2.0 * qk + a.v_head_dim as f64) / tp;
    }
    match (&model.moe, moe_layer) {
        (Some(moe), true) => {
            let (fe, routed) = (moe.ffn_hidden as f64, moe.top_k as f64 * shard.imbalance);
            let shared = moe.shared_experts as f64;
            if modules.contains(RecomputeModule::Moe) {
                freed += ((routed + shared) * per_copy * fe + routed * h) / tp;
            } else {
                if modules.contains(RecomputeModule::MoeAct) {
                    freed += routed * fe / tp;
                }
                if modules.contains(RecomputeModule::SharedExperts) {
                    freed += shared * per_copy * fe / tp;
                }
            }
        }
        _ if modules.contains(RecomputeModule::Mlp) => freed += per_copy * model.ffn_hidden as f64 / tp,
        _ => {}
    }
    freed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::examples::{deepseek_v3, h100, llama3_70b, mixtral_8x7b};
    use crate::step::compute::{dense_layer_forward, moe_layer_forward};
    use crate::step::parallelism::{AttentionKernel, Dispatcher, Parallelism, Precision, Training};

    fn one_gpu(model: &TransformerSpec) -> (Shard, Throughput, [f64; 7], [f64; 7]) {
        let tput = Throughput::new(&h100(), Precision::Bf16, AttentionKernel::Best, &FrameworkSpec::kernels_only());
        let training = Training { seq_len: 4096, ..Training::default() };
        let shard = Shard::new(&Parallelism { micro_batch: 1, ..Parallelism::default() }, &training);
        let dense = dense_layer_forward(model, &shard, &tput);
        let moe = moe_layer_forward(model, &shard, &tput, &FrameworkSpec::kernels_only(), Dispatcher::AllToAll);
        (shard, tput, rerun_s(model, &shard, &tput, &dense, false), rerun_s(model, &shard, &tput, &moe, true))
    }

    fn set(text: &str) -> RecomputeModules {
        RecomputeModules::parse(text).unwrap()
    }

    #[test]
    fn names_read_in_any_order_and_spell_one_way() {
        assert_eq!(set("moe, core_attn").label(), "core_attn,moe");
        assert_eq!(set("layernorm moe_act"), set("moe_act,layernorm"));
        assert!(set("").is_empty() && set(" , ").is_empty());
        assert_eq!(set("mlp,moe,shared_experts").count(), 3);
        assert!(RecomputeModules::parse("attn").unwrap_err().contains("core_attn, moe_act"));
        assert!(RecomputeModules::parse("mlp,mlp").unwrap_err().contains("twice"));
    }

    #[test]
    fn element_wise_modules_rerun_their_bytes_at_hbm_speed() {
        // Mixtral 8x7B on one H100, 4,096 tokens: the two norms read and write 4 x 4,096 elements a token, 134.2 MB;
        // the experts' SwiGLU reads gate and up and writes one for each of 2 routed copies, 2 x 3 x 14,336
        // elements a token, 704.6 MB; both at 3.35 TB/s x 0.90 = 3.015 TB/s: 44.5 us and 233.7 us.
        let (_, tput, dense, moe) = one_gpu(&mixtral_8x7b());
        assert!((tput.hbm_bytes_per_s - 3.015e12).abs() < 1e9, "{}", tput.hbm_bytes_per_s);
        let layernorm = moe[RecomputeModule::Layernorm as usize];
        assert!(
            (layernorm - 134_217_728.0 / tput.hbm_bytes_per_s).abs() < 1e-12 && (layernorm - 44.5e-6).abs() < 0.1e-6
        );
        let act = moe[RecomputeModule::MoeAct as usize];
        assert!((act - 704_643_072.0 / tput.hbm_bytes_per_s).abs() < 1e-12 && (act - 233.7e-6).abs() < 0.1e-6);
        // Mixtral has no dense layer, no shared experts and no MLA: those modules rerun nothing on a MoE layer.
        for m in [RecomputeModule::Mlp, RecomputeModule::SharedExperts, RecomputeModule::MlaUpProj] {
            assert_eq!(moe[m as usize], 0.0, "{m}");
        }
        assert_eq!(dense[RecomputeModule::MoeAct as usize], 0.0);
    }

    #[test]
    fn rerunning_the_moe_block_costs_its_expert_gemms_and_more() {
        // 4,096 tokens x 2 experts x 3 GEMMs x 4,096 x 14,336 x 2 FLOP = 2.886 TFLOP at 0.70 x 989 TF/s = 4.17 ms;
        // the router, permutations and activation add under a millisecond of HBM traffic.
        let (_, _, _, moe) = one_gpu(&mixtral_8x7b());
        let block = moe[RecomputeModule::Moe as usize];
        let gemms: f64 = 4096.0 * 2.0 * 3.0 * 4096.0 * 14336.0 * 2.0 / (989e12 * 0.70);
        assert!((gemms - 4.17e-3).abs() < 0.01e-3, "{gemms}");
        assert!(block > gemms && block < gemms + 1e-3, "{block}");
        assert!(block > moe[RecomputeModule::MoeAct as usize]);
    }

    #[test]
    fn each_module_frees_its_own_activations() {
        // Per token at TP 1: the norms' outputs 2h; a routed copy's activation output F; the MoE block all its
        // copies' gate, up and activation outputs (3F each) and permuted inputs (h each); a dense MLP its 3F;
        // MLA's Q, K (192 each per head) and V (128) over 128 heads.
        let (shard, ..) = one_gpu(&mixtral_8x7b());
        let freed =
            |m: &TransformerSpec, text: &str, moe_layer| freed_elements_per_token(m, &shard, set(text), moe_layer);
        let mixtral = mixtral_8x7b();
        assert_eq!(freed(&mixtral, "layernorm", true), 2.0 * 4096.0);
        assert_eq!(freed(&mixtral, "moe_act", true), 2.0 * 14336.0);
        assert_eq!(freed(&mixtral, "moe", true), 2.0 * 3.0 * 14336.0 + 2.0 * 4096.0);
        assert_eq!(freed(&mixtral, "moe,moe_act", true), freed(&mixtral, "moe", true));
        assert_eq!(freed(&mixtral, "core_attn,mla_up_proj,mlp", true), 0.0);
        assert_eq!(freed(&llama3_70b(), "mlp", false), 3.0 * 28672.0);
        assert_eq!(freed(&deepseek_v3(), "mla_up_proj", true), 128.0 * (2.0 * 192.0 + 128.0));
        let (_, _, _, dsv3) = one_gpu(&deepseek_v3());
        assert!(dsv3[RecomputeModule::MlaUpProj as usize] > 0.0);
    }
}
