//! The checks and the group placement a configuration's parallel degrees imply: each communication group's
//! place on the cluster (`GroupPlacement`), with the reason when the degrees are impossible.

use crate::error::ConfigError;
use crate::network::placement::GroupPlacement;
use crate::step::workload::TransformerSpec;

use super::stages::{check_schedule, stage_split, StageSplit};
use super::{Parallelism, Training};

/// What the parallel degrees imply for one configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    pub micro_batches: u32,
    /// Layers held by one GPU (all its virtual stages), on the most loaded pipeline stage.
    pub layers_per_gpu: u32,
    /// Layers of the first, a middle and the last stage.
    pub stages: StageSplit,
    pub tp: GroupPlacement,
    /// The routed experts' tensor-parallel group: the first etp ranks of a TP group.
    pub etp: GroupPlacement,
    pub cp: GroupPlacement,
    /// Data-parallel replicas of the non-expert weights: dp x cp ranks (CP ranks hold replicas too).
    pub dp: GroupPlacement,
    pub ep: GroupPlacement,
    /// Data-parallel replicas of an expert's weights: tp x dp x cp / (etp x ep) ranks.
    pub expert_dp: GroupPlacement,
    /// Neighbouring pipeline stages.
    pub pp: GroupPlacement,
}

/// Check a configuration's parallelism against the model and the cluster; return its layout or the reason
/// it is impossible. Cheap and allocation-free: sweeps call it for every candidate.
pub fn layout(
    model: &TransformerSpec,
    par: &Parallelism,
    training: &Training,
    gpus: u32,
    domain_gpus: u32,
) -> Result<Layout, ConfigError> {
    let layout = placement(model, par, training, gpus, domain_gpus)?;
    check_schedule(model, par, layout.micro_batches)?;
    Ok(layout)
}
/// The checks and group placement that depend on the parallel degrees and micro-batch size (not on vpp or the
/// ZeRO stage); `layers_per_gpu` uses the given vpp.
pub fn placement(
    model: &TransformerSpec,
    par: &Parallelism,
    training: &Training,
    gpus: u32,
    domain_gpus: u32,
) -> Result<Layout, ConfigError> {
    let micro_batches = check_degrees(model, par, training, gpus)?;
    check_moe_settings(model, par.expert_tp() != par.tp, training)?;
    let (etp, stage_ranks) = check_experts(model, par)?;
    let stages = stage_split(model, par)?;
    let d = domain_gpus.max(1);
    Ok(Layout {
        micro_batches,
        layers_per_gpu: stages.busiest(),
        stages,
        tp: GroupPlacement::in_cluster(par.tp, 1, d, gpus),
        etp: GroupPlacement::in_cluster(etp, 1, d, gpus),
        cp: GroupPlacement::in_cluster(par.cp, par.tp, d, gpus),
        dp: GroupPlacement::in_cluster(par.dp * par.cp, par.tp, d, gpus),
        ep: GroupPlacement::in_cluster(par.ep, etp, d, gpus),
        expert_dp: GroupPlacement::in_cluster(stage_ranks / (par.ep * etp), etp * par.ep, d, gpus),
        pp: GroupPlacement::in_cluster(par.pp, stage_ranks, d, gpus),
    })
}

/// The degrees against the cluster, the attention heads, the global batch and the sequence; returns the
/// micro-batches per step.
fn check_degrees(
    model: &TransformerSpec,
    par: &Parallelism,
    training: &Training,
    gpus: u32,
) -> Result<u32, ConfigError> {
    for (field, v) in [
        ("tp", par.tp),
        ("pp", par.pp),
        ("dp", par.dp),
        ("cp", par.cp),
        ("ep", par.ep),
        ("micro_batch", par.micro_batch),
        ("global_batch", training.global_batch),
        ("seq_len", training.seq_len),
        ("gpus", gpus),
    ] {
        if v == 0 {
            return Err(ConfigError::ZeroDegree { field });
        }
    }
    let product = par.tp as u64 * par.pp as u64 * par.dp as u64 * par.cp as u64;
    if product != gpus as u64 {
        return Err(ConfigError::GpuCountMismatch { tp: par.tp, pp: par.pp, dp: par.dp, cp: par.cp, product, gpus });
    }
    if !model.heads.is_multiple_of(par.tp) || !model.kv_heads.is_multiple_of(par.tp) {
        return Err(ConfigError::TpDoesNotDivideHeads { tp: par.tp, heads: model.heads, kv_heads: model.kv_heads });
    }
    let per_step = par.dp as u64 * par.micro_batch as u64;
    if !(training.global_batch as u64).is_multiple_of(per_step) {
        return Err(ConfigError::GlobalBatchNotDivisible {
            global_batch: training.global_batch,
            dp: par.dp,
            micro_batch: par.micro_batch,
        });
    }
    if par.cp > 1 && !(training.seq_len as u64).is_multiple_of(2 * par.cp as u64) {
        return Err(ConfigError::CpDoesNotDivideSequence { cp: par.cp, seq_len: training.seq_len });
    }
    // Megatron-LM: "sequence length must be divisible by tensor parallel size" with sequence parallelism (its
    // sequence-parallel scatter splits each cp chunk over the tp ranks).
    if par.sequence_parallel && par.tp > 1 && !(training.seq_len as u64).is_multiple_of(par.tp as u64 * par.cp as u64) {
        return Err(ConfigError::SequenceParallelSplit { seq_len: training.seq_len, tp: par.tp, cp: par.cp });
    }
    Ok((training.global_batch as u64 / per_step) as u32)
}

/// The expert degrees against the model's experts and the stage's ranks; returns (expert TP, the stage's ranks).
/// MoE parallel folding (Megatron-Core parallel_state, expert rank generator "tp-ep-dp-pp" with the expert TP):
/// the expert layers regroup the stage's tp x dp x cp ranks as etp x ep x expert-dp.
/// Expert settings against the model: on a dense model, an expert TP other than the attention's, a dispatcher other
/// than the default all-to-all or a routing imbalance would be silently ignored, so they are refused; on a MoE
/// model the busiest rank's load over the mean is at most the number of experts (every token on one expert).
/// `etp_given`: an expert TP was set apart from tp.
pub fn check_moe_settings(model: &TransformerSpec, etp_given: bool, training: &Training) -> Result<(), ConfigError> {
    match &model.moe {
        None if etp_given => Err(ConfigError::MoeSettingOnDenseModel { field: "etp" }),
        None if training.moe_dispatcher != Training::default().moe_dispatcher => {
            Err(ConfigError::MoeSettingOnDenseModel { field: "moe_dispatcher" })
        }
        None if training.moe_imbalance != 1.0 => Err(ConfigError::MoeSettingOnDenseModel { field: "moe_imbalance" }),
        Some(moe) if training.moe_imbalance > moe.experts as f64 => Err(ConfigError::InvalidFigure {
            field: "moe_imbalance",
            value: training.moe_imbalance,
            expected: "at most the number of experts (every token routed to one rank)",
        }),
        _ => Ok(()),
    }
}

fn check_experts(model: &TransformerSpec, par: &Parallelism) -> Result<(u32, u32), ConfigError> {
    match &model.moe {
        None if par.ep > 1 => return Err(ConfigError::ExpertParallelOnDenseModel { ep: par.ep }),
        Some(moe) if moe.experts % par.ep != 0 => {
            return Err(ConfigError::EpDoesNotDivideExperts { ep: par.ep, experts: moe.experts })
        }
        _ => {}
    }
    let etp = par.expert_tp();
    let stage_ranks = par.tp * par.dp * par.cp;
    if etp == 0 || !stage_ranks.is_multiple_of(par.ep * etp) {
        return Err(ConfigError::EpDoesNotDivideDataParallel { ep: par.ep, etp, stage_ranks });
    }
    Ok((etp, stage_ranks))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::examples::{llama3_70b, mixtral_8x7b};

    fn par(tp: u32, pp: u32, dp: u32) -> Parallelism {
        Parallelism { tp, pp, dp, ..Parallelism::default() }
    }
    fn training(global_batch: u32) -> Training {
        Training { global_batch, seq_len: 8192, ..Training::default() }
    }

    #[test]
    fn placement_on_eight_gpu_servers() {
        // tp=8 fills a server; the DP group (stride 8) then has one rank per server.
        let l = layout(&llama3_70b(), &par(8, 4, 32), &training(1024), 1024, 8).unwrap();
        assert_eq!((l.tp.per_domain, l.tp.domains), (8, 1));
        assert_eq!((l.dp.per_domain, l.dp.domains), (1, 32));
        assert_eq!(l.micro_batches, 32);
        assert_eq!(l.layers_per_gpu, 20);
        // tp=2: four DP ranks per server.
        let l = layout(&llama3_70b(), &par(2, 1, 64), &training(1024), 128, 8).unwrap();
        assert_eq!((l.dp.per_domain, l.dp.domains), (4, 16));
        // An NVL72 domain holds nine tp=8 groups.
        let l = layout(&llama3_70b(), &par(8, 1, 72), &training(576), 576, 72).unwrap();
        assert_eq!((l.dp.per_domain, l.dp.domains), (9, 8));
    }

    #[test]
    fn impossible_parallelism_is_rejected_with_its_reason() {
        let m = llama3_70b();
        let e = layout(&m, &par(8, 4, 32), &training(1024), 512, 8).unwrap_err();
        assert_eq!(e.category(), "gpu_count_mismatch");
        assert!(e.to_string().contains("must equal the GPU count 512"), "{e}");
        // 64 heads and 8 KV heads: tp=16 does not divide the KV heads.
        let e = layout(&m, &par(16, 1, 8), &training(1024), 128, 8).unwrap_err();
        assert_eq!(e.category(), "tp_heads");
        let e = layout(&m, &par(8, 1, 3), &training(1024), 24, 8).unwrap_err();
        assert_eq!(e.category(), "global_batch");
        let e = layout(&m, &par(1, 81, 1), &training(1024), 81, 8).unwrap_err();
        assert_eq!(e.category(), "pp_layers");
        let mut p = par(8, 1, 4);
        p.ep = 2;
        assert_eq!(layout(&m, &p, &training(1024), 32, 8).unwrap_err().category(), "ep_dense");
        let mut p = par(8, 4, 4);
        p.vpp = 2;
        // 1024 / 4 = 256 micro-batches, a multiple of pp = 4: fine; 36 sequences / 4 = 9 are not.
        assert!(layout(&m, &p, &training(1024), 128, 8).is_ok());
        assert_eq!(layout(&m, &p, &training(36), 128, 8).unwrap_err().category(), "vpp_micro_batches");
        let mut p = par(8, 1, 4);
        p.cp = 3;
        p.dp = 1;
        p.tp = 8;
        assert_eq!(layout(&m, &p, &training(12), 24, 8).unwrap_err().category(), "cp_seq_len");
    }

    #[test]
    fn interleaved_stages_must_split_the_layers_evenly() {
        // Llama 3 70B has 80 layers. pp 4 x vpp 3 = 12 virtual stages: 80 / 12 = 6.67 layers each, refused;
        // pp 4 x vpp 5 = 20 stages of 4 layers, fine; plain pp 3 (vpp 1) keeps the uneven model (27 + 27 + 26).
        let m = llama3_70b();
        let mut p = par(8, 4, 32);
        p.vpp = 3;
        let e = layout(&m, &p, &training(1024), 1024, 8).unwrap_err();
        assert_eq!((e.category(), e.field()), ("pp_vpp_layers", "vpp"));
        assert!(e.to_string().contains("80 layers do not split evenly over pp x vpp = 4 x 3 = 12"), "{e}");
        p.vpp = 5;
        assert!(layout(&m, &p, &training(1024), 1024, 8).is_ok());
        assert!(layout(&m, &par(8, 3, 1), &training(3), 24, 8).is_ok());
        // Asked for explicitly, an uneven split is modelled with the busiest stage's real count: 80 layers over 4
        // stages are 20 each, whatever the interleaving (rounding per virtual chunk would say ceil(80 / 12) x 3 =
        // 21).
        p.vpp = 3;
        p.uneven_stages = true;
        assert_eq!(layout(&m, &p, &training(1024), 1024, 8).unwrap().layers_per_gpu, 20);
    }

    #[test]
    fn expert_parallelism_reuses_data_parallel_ranks() {
        let m = mixtral_8x7b();
        let mut p = par(2, 1, 16);
        p.ep = 8;
        let l = layout(&m, &p, &training(256), 32, 8).unwrap();
        assert_eq!((l.ep.size, l.ep.stride, l.expert_dp.size), (8, 2, 2));
        p.ep = 16;
        assert_eq!(layout(&m, &p, &training(256), 32, 8).unwrap_err().category(), "ep_experts");
    }

    #[test]
    fn embedding_and_loss_in_the_split_let_126_layers_run_on_pp16_vpp8() {
        // (126 + 1 + 1) / (16 x 8) = 1 unit per chunk: the first stage builds 8 - 1 = 7 transformer layers (its
        // first chunk is the embedding), the last 7 (its last chunk is the loss), the others 8.
        let mut m = llama3_70b();
        m.layers = 126;
        let mut p = Parallelism { vpp: 8, ..par(8, 16, 8) };
        assert_eq!(check_schedule(&m, &p, 16).unwrap_err().category(), "pp_layers");
        p.embedding_in_split = true;
        p.loss_in_split = true;
        let split = stage_split(&m, &p).unwrap();
        assert_eq!(split.layers, [7, 8, 7]);
        assert!(check_schedule(&m, &p, 16).is_ok());
        let l = layout(&m, &p, &training(128), 1024, 8).unwrap();
        assert_eq!(l.layers_per_gpu, 8);
        // 127 units do not split over 128 chunks.
        p.loss_in_split = false;
        assert_eq!(stage_split(&m, &p).unwrap_err().category(), "uneven_stages");
    }

    #[test]
    fn moe_parallel_folding_accepts_ep_beyond_dp() {
        // Megatron-Core MoE parallel folding: TP 2 x DP 16 = 32 ranks regrouped as ETP 1 x EP 32.
        let mut m = mixtral_8x7b();
        if let Some(moe) = m.moe.as_mut() {
            moe.experts = 64;
        }
        let mut p = Parallelism { ep: 32, etp: 1, ..par(2, 1, 16) };
        let l = layout(&m, &p, &training(256), 32, 8).unwrap();
        assert_eq!((l.ep.size, l.ep.stride, l.ep.per_domain, l.ep.domains), (32, 1, 8, 4));
        assert_eq!(l.expert_dp.size, 1);
        // With the expert TP equal to the attention's (the default), 32 x 2 = 64 ranks do not fit in 32.
        p.etp = 0;
        assert_eq!(layout(&m, &p, &training(256), 32, 8).unwrap_err().category(), "ep_dp");
    }
}
