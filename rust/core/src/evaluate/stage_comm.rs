//! The collective times of a layout stage on its interconnect: tensor, context, expert and data parallelism's
//! collectives and sends, as `LayoutStage::link` sets them.

use crate::network::collectives::{Collective, Interconnect};
use crate::step::compute::{Shard, ACTIVATION_BYTES};
use crate::step::memory::{LocalParams, WEIGHT_BYTES};
use crate::step::moe::{dispatch_time_s, Dispatch};
use crate::step::parallelism::{Layout, Parallelism, Precision, Training};
use crate::step::workload::TransformerSpec;

/// Tensor parallelism of one layer, by half: the attention's and the MLP's collectives of one forward pass and
/// their sequence-parallel re-gathers, for a dense layer and a MoE layer (`[dense, moe]`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct TpComm {
    /// The attention's collectives in one forward pass: an all-reduce (Shoeybi et al. 2019 Sec. 3), or with
    /// sequence parallelism an all-gather and a reduce-scatter of the same total (Korthikanti et al. 2022 Sec. 4).
    pub attention_pass_s: f64,
    /// The MLP's: as the attention's in a dense layer. A MoE layer's run over the expert-TP group: none where
    /// etp = 1 (MoE Parallel Folding, arXiv 2504.14960 App. 6.2: between attention and MoE "only a reshape ...
    /// no explicit communication"; Megatron-Core's dispatchers gather across the expert-TP group only), the
    /// group's share of the tokens over its etp ranks otherwise.
    pub mlp_pass_s: [f64; 2],
    /// With sequence parallelism, the backward pass all-gathers the inputs of the first GEMMs again for their
    /// weight gradients (Korthikanti et al. 2022 Sec. 4.2.2; Megatron-LM tensor_parallel/layers.py
    /// LinearWithGradAccumulationAndAsyncCommunication.backward issues it behind the data-gradient GEMM): the
    /// attention's QKV input, and the MLP's where its forward gathered one.
    pub attention_regather_s: f64,
    pub mlp_regather_s: [f64; 2],
}

impl TpComm {
    /// One layer's collectives in one forward pass, dense (0) or MoE (1).
    pub fn pass_s(&self, kind: usize) -> f64 {
        self.attention_pass_s + self.mlp_pass_s[kind]
    }
    pub fn regather_s(&self, kind: usize) -> f64 {
        self.attention_regather_s + self.mlp_regather_s[kind]
    }
}

pub(super) fn tp_comm_s(links: &Interconnect, model: &TransformerSpec, shard: &Shard, lay: &Layout) -> TpComm {
    let half = |tokens: f64, g| {
        let message = tokens * model.hidden as f64 * ACTIVATION_BYTES;
        let gather = links.collective_time_s(Collective::AllGather, message, g);
        if shard.sequence_parallel {
            (gather + links.collective_time_s(Collective::ReduceScatter, message, g), gather)
        } else {
            (links.collective_time_s(Collective::AllReduce, message, g), 0.0)
        }
    };
    let (attention, attention_regather) = half(shard.tokens, &lay.tp);
    // The expert-TP group holds etp / tp of the attention group's tokens under sequence parallelism; at etp = tp
    // it is the TP group and its collectives are the attention's.
    let share = if shard.sequence_parallel { shard.etp / shard.tp } else { 1.0 };
    let (moe, moe_regather) = match shard.etp {
        e if e <= 1.0 => (0.0, 0.0),
        e if e == shard.tp => (attention, attention_regather),
        _ => half(shard.tokens * share, &lay.etp),
    };
    TpComm {
        attention_pass_s: attention,
        mlp_pass_s: [attention, moe],
        attention_regather_s: attention_regather,
        mlp_regather_s: [attention_regather, moe_regather],
    }
}

/// Context parallelism: ring exchange of this rank's K and V chunk (Megatron-LM context_parallel.rst).
pub(super) fn cp_send_s(
    links: &Interconnect,
    model: &TransformerSpec,
    par: &Parallelism,
    shard: &Shard,
    lay: &Layout,
) -> f64 {
    if par.cp <= 1 {
        return 0.0;
    }
    let kv = model.attention_shapes().kv_elements;
    links.send_time_s(shard.tokens * kv / shard.tp * ACTIVATION_BYTES, &lay.cp)
}

/// Expert parallelism: one dispatch (or combine) of top_k copies of each local token (moe.rs).
pub(super) fn ep_dispatch_s(
    links: &Interconnect,
    training: &Training,
    model: &TransformerSpec,
    par: &Parallelism,
    shard: &Shard,
    lay: &Layout,
) -> f64 {
    match &model.moe {
        Some(moe_spec) if par.ep > 1 => {
            let dispatch = Dispatch {
                tokens_per_rank: shard.tokens / shard.hidden_split(),
                top_k: moe_spec.top_k as f64,
                token_bytes: model.hidden as f64 * ACTIVATION_BYTES,
                node_limit: moe_spec.node_limit,
                imbalance: shard.imbalance,
            };
            dispatch_time_s(links, &dispatch, &lay.ep, training.moe_dispatcher)
        }
        _ => 0.0,
    }
}

/// Data parallelism's collectives once per step: [gradient all-reduce, gradient reduce-scatter, weight
/// all-gather, and ZeRO-3's reduce-scatter and all-gather: by weight tensor where the framework issues one
/// collective per tensor (`per_tensor`), else the flat two]; NaN where `zero` does not read them. Non-expert
/// parameters reduce over dp x cp ranks, experts over their own data-parallel group. The
/// weights are gathered in BF16, or in FP8 when FP8 training gathers its FP8 copy (`fp8_param_gather`: torchao's
/// enable_fsdp_float8_all_gather, Megatron-LM's --fp8-param-gather; one byte per element).
pub(super) fn dp_comm_s(
    links: &Interconnect,
    training: &Training,
    local: &LocalParams,
    lay: &Layout,
    zero: Option<u32>,
    per_tensor: bool,
) -> [f64; 5] {
    let per_group = |op, bytes: f64| {
        links.collective_time_s(op, local.dense * bytes, &lay.dp)
            + links.collective_time_s(op, local.expert * bytes, &lay.expert_dp)
    };
    // One collective per weight tensor: the count times one of the mean tensor's bytes (a ring's time is its
    // latency plus its bytes over the bandwidth, so the mean tensor's time is the tensors' mean time).
    let by_tensor = |op, bytes: f64| {
        let one = |params: f64, tensors: f64, group| {
            let tensors = tensors.max(1.0);
            tensors * links.collective_time_s(op, params * bytes / tensors, group)
        };
        one(local.dense, local.dense_tensors, &lay.dp) + one(local.expert, local.expert_tensors, &lay.expert_dp)
    };
    let grad_bytes = training.grad_reduce_dtype.bytes();
    let fp8_gather = training.fp8_param_gather && training.precision == Precision::Fp8;
    let weight_bytes = if fp8_gather { FP8_WEIGHT_BYTES } else { WEIGHT_BYTES };
    // ZeRO 0 reduces with an all-reduce; 1 and 2 with a reduce-scatter and an all-gather, 3 with the framework's.
    let (reduce, shard, zero3) = match zero {
        None => (true, true, true),
        Some(z) => (z == 0, z == 1 || z == 2, z >= 3),
    };
    let time = |wanted: bool, op, bytes| if wanted { per_group(op, bytes) } else { f64::NAN };
    let (reduce_scatter_s, all_gather_s) =
        (time(shard, Collective::ReduceScatter, grad_bytes), time(shard, Collective::AllGather, weight_bytes));
    let zero3_s = |op, bytes, flat_s: f64| match (zero3, per_tensor) {
        (false, _) => f64::NAN,
        (true, true) => by_tensor(op, bytes),
        (true, false) if flat_s.is_nan() => per_group(op, bytes),
        (true, false) => flat_s,
    };
    [
        time(reduce, Collective::AllReduce, grad_bytes),
        reduce_scatter_s,
        all_gather_s,
        zero3_s(Collective::ReduceScatter, grad_bytes, reduce_scatter_s),
        zero3_s(Collective::AllGather, weight_bytes, all_gather_s),
    ]
}

/// Bytes of one weight element gathered in FP8.
pub const FP8_WEIGHT_BYTES: f64 = 1.0;
