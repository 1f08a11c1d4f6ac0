//! A serving layout checked against the model and the cluster: each phase's instance (its GPUs, its groups and
//! where they sit), how many instances the cluster holds, and where the KV cache travels when disaggregated.
//!
//! One instance is `pp` pipeline stages of `tp x dp_attention` GPUs each: `dp_attention` replicas of attention,
//! each `tp`-way tensor parallel with its own sequences, and the routed experts spread `ep` ways over the stage's
//! GPUs (expert tensor parallelism `tp x dp_attention / ep`), as SGLang's DP attention with DeepEP and
//! TensorRT-LLM's attention DP with wide EP lay it out (SGLang blog "Large-scale EP", 2025-05; TensorRT-LLM
//! `enable_attention_dp`). Dense MLPs and shared experts are split `tp` ways inside each attention replica.
//! Ranks are numbered tp innermost, then dp_attention, then pp, so a stage's GPUs are consecutive.

use crate::error::ConfigError;
use crate::network::placement::{instance_domain_gpus, GroupPlacement};
use crate::step::workload::TransformerSpec;

use super::{Serving, ServingCluster, ServingMode};

/// The instance of one phase.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PhaseLayout {
    pub tp: u32,
    pub pp: u32,
    pub ep: u32,
    pub dp_attention: u32,
    /// GPUs of one pipeline stage: tp x dp_attention.
    pub width: u32,
    /// Expert tensor parallelism: width / ep.
    pub etp: u32,
    /// GPUs of the instance: width x pp.
    pub gpus: u32,
    pub tp_group: GroupPlacement,
    pub ep_group: GroupPlacement,
    pub pp_group: GroupPlacement,
}

impl PhaseLayout {
    /// Check the degrees against the model and place the groups (`domain_gpus`: the scale-up domain's size).
    pub fn new(
        model: &TransformerSpec,
        (tp, pp, ep, dp_attention): (u32, u32, u32, u32),
        redundant_experts: u32,
        domain_gpus: u32,
        cluster_gpus: u32,
    ) -> Result<Self, ConfigError> {
        // A KV head is split over TP ranks or replicated on them (TensorRT-LLM and vLLM replicate KV heads when tp
        // exceeds them); the query heads must split evenly.
        let kv_fits = model.kv_heads.is_multiple_of(tp) || tp.is_multiple_of(model.kv_heads);
        if !model.heads.is_multiple_of(tp) || !kv_fits {
            return Err(ConfigError::TpDoesNotDivideHeads { tp, heads: model.heads, kv_heads: model.kv_heads });
        }
        if pp > model.layers {
            return Err(ConfigError::PipelineDeeperThanLayers { stages: pp, layers: model.layers });
        }
        let width = tp * dp_attention;
        match &model.moe {
            None if ep > 1 => return Err(ConfigError::ExpertParallelOnDenseModel { ep }),
            Some(m) if !(m.experts + redundant_experts).is_multiple_of(ep) => {
                return Err(ConfigError::EpDoesNotDivideExperts { ep, experts: m.experts + redundant_experts })
            }
            Some(_) if !width.is_multiple_of(ep) => return Err(ConfigError::EpDoesNotDivideWidth { ep, width }),
            _ => {}
        }
        let etp = if model.moe.is_some() { width / ep } else { 1 };
        let domain = instance_domain_gpus(width * pp, domain_gpus);
        let place = |size, stride| GroupPlacement::in_cluster(size, stride, domain, cluster_gpus);
        Ok(PhaseLayout {
            tp,
            pp,
            ep,
            dp_attention,
            width,
            etp,
            gpus: width * pp,
            tp_group: place(tp, 1),
            ep_group: place(ep, etp),
            pp_group: place(pp, width),
        })
    }
}

/// Both phases' instances and their counts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ServingLayout {
    /// The decode instance (co-located: the one instance kind).
    pub decode: PhaseLayout,
    pub prefill: PhaseLayout,
    pub mode: ServingMode,
    /// Decode (or co-located) instances and prefill instances in the cluster.
    pub instances: u32,
    pub prefill_instances: u32,
    /// Whether the KV cache crosses the scale-out fabric between prefill and decode (disaggregated only).
    pub kv_over_fabric: bool,
}

impl ServingLayout {
    pub fn new(c: &ServingCluster, s: &Serving) -> Result<Self, ConfigError> {
        let domain = c.scale_up.domain_gpus;
        let decode =
            PhaseLayout::new(c.model, (s.tp, s.pp, s.ep, s.dp_attention), s.redundant_experts, domain, c.gpus)?;
        if s.mode == ServingMode::Colocated {
            if !c.gpus.is_multiple_of(decode.gpus) {
                return Err(ConfigError::InstanceDoesNotDivideGpus { instance_gpus: decode.gpus, gpus: c.gpus });
            }
            let instances = c.gpus / decode.gpus;
            return Ok(ServingLayout {
                decode,
                prefill: decode,
                mode: s.mode,
                instances,
                prefill_instances: instances,
                kv_over_fabric: false,
            });
        }
        let or = |v: u32, d: u32| if v == 0 { d } else { v };
        let degrees =
            (or(s.prefill_tp, s.tp), s.pp, or(s.prefill_ep, s.ep), or(s.prefill_dp_attention, s.dp_attention));
        let prefill = PhaseLayout::new(c.model, degrees, s.redundant_experts, domain, c.gpus)?;
        let group = s.prefill_instances as u64 * prefill.gpus as u64 + s.decode_instances as u64 * decode.gpus as u64;
        if !(c.gpus as u64).is_multiple_of(group) {
            return Err(ConfigError::PdRatioDoesNotDivideGpus {
                group_gpus: group,
                prefill_instances: s.prefill_instances,
                decode_instances: s.decode_instances,
                gpus: c.gpus,
            });
        }
        let groups = (c.gpus as u64 / group) as u32;
        Ok(ServingLayout {
            decode,
            prefill,
            mode: s.mode,
            instances: groups * s.decode_instances,
            prefill_instances: groups * s.prefill_instances,
            // A P:D group inside one scale-up domain moves its KV caches over NVLink (the GB200 NVL72 Dynamo runs);
            // otherwise prefill and decode instances sit in different domains.
            kv_over_fabric: group > domain as u64 || !(domain as u64).is_multiple_of(group),
        })
    }
}
