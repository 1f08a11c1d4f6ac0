//! How the training job is split over the GPUs: the parallel degrees, their validity, and where each
//! communication group lands in the cluster.

use crate::error::ConfigError;
use crate::workload::TransformerSpec;

crate::named_enum! {
    /// What the backward pass recomputes instead of keeping in memory.
    pub enum Recompute {
        None = "none",
        /// Recompute the cheap, memory-heavy element-wise parts (norms and the MLP activation) in the backward pass,
        /// as Megatron-Core's `--recompute-modules layernorm,mlp-activation` and DeepSeek-V3 (Sec. 3.2.3) do.
        /// With flash attention the attention matrix is never stored, so recomputing the core attention saves nothing.
        Selective = "selective",
        /// Store only each layer's input; rerun the whole forward pass in the backward pass.
        Full = "full",
    }
}

crate::named_enum! {
    /// Number format of the transformer layers' matrix multiplications.
    pub enum Precision {
        Bf16 = "bf16",
        /// FP8 matrix multiplications (Transformer Engine); attention and element-wise work stay in BF16.
        Fp8 = "fp8",
    }
}

#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct Parallelism {
    pub tp: u32,
    pub pp: u32,
    pub dp: u32,
    pub cp: u32,
    /// Expert parallelism, carved out of the dp x cp ranks (Megatron-Core), so it does not multiply the GPU count.
    pub ep: u32,
    /// Virtual pipeline stages per GPU (interleaved 1F1B); 1 = plain 1F1B.
    pub vpp: u32,
    pub micro_batch: u32,
    /// 0 = plain data parallel, 1 = optimizer states sharded, 2 = + gradients, 3 = + parameters (FSDP).
    pub zero_stage: u32,
    pub recompute: Recompute,
    /// Megatron sequence parallelism inside the TP group (activations of norms and dropout split by tp).
    pub sequence_parallel: bool,
    /// Accept layers that do not split evenly over pp x vpp virtual stages (published runs use asymmetric
    /// first/last stages); the busiest stage then holds the rounded-up count. Off by default: see
    /// `check_stage_split`.
    #[cfg_attr(feature = "python", pyo3(default))]
    pub uneven_stages: bool,
}

#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct Training {
    /// Sequences per optimizer step.
    pub global_batch: u32,
    pub seq_len: u32,
    /// Tokens of the whole run.
    pub tokens: f64,
    pub precision: Precision,
    /// Fused (flash) attention that never stores the attention scores (Dao et al. 2022). Without it, the
    /// scores are materialised: scale-mask-softmax and dropout kernels stream them through HBM and they stay
    /// in memory for the backward pass (Megatron-LM before 2022).
    pub flash_attention: bool,
}

/// The tokens of a run are a count: a whole number, and at least one sequence (fewer cannot be trained; a
/// fraction of a token means nothing). Fewer tokens than one optimizer step are allowed: the run is then one step
/// (`steps` rounds up), which is what training that many tokens costs.
pub fn check_tokens(tokens: f64, seq_len: u32) -> Result<(), ConfigError> {
    if tokens.is_finite() && tokens >= seq_len.max(1) as f64 && tokens.fract() == 0.0 {
        return Ok(());
    }
    Err(ConfigError::InvalidFigure {
        field: "tokens",
        value: tokens,
        expected: "a whole number of tokens, at least one sequence (seq_len tokens)",
    })
}

/// Fractions (0..1) of each kind of communication that may hide behind compute, when compute is there to hide it.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct Overlap {
    /// Gradient reduce-scatter/all-reduce during backward, parameter all-gather during forward.
    pub dp: f64,
    /// Tensor-parallel collectives overlapped with the GEMMs (Transformer Engine userbuffers).
    pub tp: f64,
    /// Pipeline sends and receives overlapped with the next micro-batch.
    pub pp: f64,
    /// Expert all-to-all overlapped with compute of another micro-batch (DeepSeek-V3 DualPipe).
    pub ep: f64,
}

impl Overlap {
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (field, v) in
            [("overlap.dp", self.dp), ("overlap.tp", self.tp), ("overlap.pp", self.pp), ("overlap.ep", self.ep)]
        {
            if !(v.is_finite() && (0.0..=1.0).contains(&v)) {
                return Err(ConfigError::InvalidFigure { field, value: v, expected: "a fraction in [0, 1]" });
            }
        }
        Ok(())
    }
}

/// Where one communication group's ranks sit. Ranks are numbered with TP innermost, then CP, DP and PP
/// (Megatron-LM's default order tp-cp-ep-dp-pp); a group of `size` ranks is every `stride`-th rank.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroupPlacement {
    pub size: u32,
    pub stride: u32,
    /// Ranks of the group inside one scale-up (NVLink) domain.
    pub per_domain: u32,
    /// Scale-up domains the group spans.
    pub domains: u32,
}

impl GroupPlacement {
    pub fn new(size: u32, stride: u32, domain_gpus: u32) -> Self {
        let per_domain = if stride >= domain_gpus { 1 } else { (domain_gpus / stride).clamp(1, size) };
        GroupPlacement { size, stride, per_domain, domains: size.div_ceil(per_domain) }
    }
    /// Consecutive GPU indices the group covers, first to last member.
    pub fn span_gpus(&self) -> f64 {
        self.stride as f64 * (self.size as f64 - 1.0) + 1.0
    }
}

/// What the parallel degrees imply for one configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    pub micro_batches: u32,
    /// Layers held by one GPU (all its virtual stages), on the most loaded pipeline stage.
    pub layers_per_gpu: u32,
    pub tp: GroupPlacement,
    pub cp: GroupPlacement,
    /// Data-parallel replicas of the non-expert weights: dp x cp ranks (CP ranks hold replicas too).
    pub dp: GroupPlacement,
    pub ep: GroupPlacement,
    /// Data-parallel replicas of an expert's weights: dp x cp / ep ranks.
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

/// Layers one GPU holds (all its virtual stages) on the busiest stage: uneven splits put the extra layers on
/// some stages, and the slowest stage sets the pace.
pub fn layers_per_gpu(model: &TransformerSpec, par: &Parallelism) -> u32 {
    let stages = par.pp.saturating_mul(par.vpp).max(1);
    model.layers.div_ceil(stages).saturating_mul(par.vpp)
}

/// The checks that depend on the pipeline schedule and optimizer sharding only (vpp, ZeRO stage), given the
/// micro-batch count the other degrees imply.
pub fn check_schedule(model: &TransformerSpec, par: &Parallelism, micro_batches: u32) -> Result<(), ConfigError> {
    if par.vpp == 0 {
        return Err(ConfigError::ZeroDegree { field: "vpp" });
    }
    let stages = par.pp as u64 * par.vpp as u64;
    if stages > model.layers as u64 {
        return Err(ConfigError::PipelineDeeperThanLayers {
            stages: (stages.min(u32::MAX as u64)) as u32,
            layers: model.layers,
        });
    }
    if par.vpp > 1 && par.pp == 1 {
        return Err(ConfigError::InterleavingNeedsPipeline { vpp: par.vpp });
    }
    check_stage_split(model, par)?;
    if par.vpp > 1 && !micro_batches.is_multiple_of(par.pp) {
        return Err(ConfigError::InterleavingMicroBatches { micro_batches, pp: par.pp });
    }
    if par.zero_stage > 3 {
        return Err(ConfigError::ZeroStageOutOfRange { stage: par.zero_stage });
    }
    Ok(())
}

/// The interleaved schedule gives every GPU `vpp` model chunks of the same number of layers, so the layers must
/// split evenly over pp x vpp virtual stages: Megatron-LM refuses anything else ("Number of layers per pipeline
/// stage must be divisible by number of layers per virtual pipeline stage", megatron/training/arguments.py
/// `validate_args`, NVIDIA/Megatron-LM; search-tool read_file id 44870655626). A plain 1F1B pipeline (vpp = 1)
/// keeps today's model of an uneven split (the busiest stage holds the rounded-up count), and so does
/// `uneven_stages`, which stands for Megatron's asymmetric first/last stages until they are modelled exactly.
pub fn check_stage_split(model: &TransformerSpec, par: &Parallelism) -> Result<(), ConfigError> {
    let stages = par.pp.saturating_mul(par.vpp);
    if par.vpp > 1 && !par.uneven_stages && !model.layers.is_multiple_of(stages) {
        return Err(ConfigError::LayersNotSplitOverStages { layers: model.layers, pp: par.pp, vpp: par.vpp });
    }
    Ok(())
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
    let micro_batches = (training.global_batch as u64 / per_step) as u32;
    if par.cp > 1 && !(training.seq_len as u64).is_multiple_of(2 * par.cp as u64) {
        return Err(ConfigError::CpDoesNotDivideSequence { cp: par.cp, seq_len: training.seq_len });
    }
    let dp_times_cp = par.dp * par.cp;
    match &model.moe {
        None if par.ep > 1 => return Err(ConfigError::ExpertParallelOnDenseModel { ep: par.ep }),
        Some(moe) if moe.experts % par.ep != 0 => {
            return Err(ConfigError::EpDoesNotDivideExperts { ep: par.ep, experts: moe.experts })
        }
        _ => {}
    }
    if !dp_times_cp.is_multiple_of(par.ep) {
        return Err(ConfigError::EpDoesNotDivideDataParallel { ep: par.ep, dp_times_cp });
    }
    let d = domain_gpus.max(1);
    Ok(Layout {
        micro_batches,
        layers_per_gpu: layers_per_gpu(model, par),
        tp: GroupPlacement::new(par.tp, 1, d),
        cp: GroupPlacement::new(par.cp, par.tp, d),
        dp: GroupPlacement::new(dp_times_cp, par.tp, d),
        ep: GroupPlacement::new(par.ep, par.tp, d),
        expert_dp: GroupPlacement::new(dp_times_cp / par.ep, par.tp * par.ep, d),
        pp: GroupPlacement::new(par.pp, par.tp * par.cp * par.dp, d),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::examples::{llama3_70b, mixtral_8x7b};

    fn par(tp: u32, pp: u32, dp: u32) -> Parallelism {
        Parallelism {
            tp,
            pp,
            dp,
            cp: 1,
            ep: 1,
            vpp: 1,
            micro_batch: 1,
            zero_stage: 1,
            recompute: Recompute::None,
            sequence_parallel: true,
            uneven_stages: false,
        }
    }
    fn training(global_batch: u32) -> Training {
        Training { global_batch, seq_len: 8192, tokens: 1e12, precision: Precision::Bf16, flash_attention: true }
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
        // Asked for explicitly, an uneven split is modelled with the busiest stage: ceil(80 / 12) x 3 = 21 layers.
        p.vpp = 3;
        p.uneven_stages = true;
        assert_eq!(layout(&m, &p, &training(1024), 1024, 8).unwrap().layers_per_gpu, 21);
    }

    #[test]
    fn tokens_are_a_whole_number_of_at_least_one_sequence() {
        for ok in [8192.0, 8193.0, 15e12, 1.5e12] {
            assert!(check_tokens(ok, 8192).is_ok(), "{ok}");
        }
        for bad in [1.5, 8191.0, 8192.5, 0.0, -8192.0, f64::NAN, f64::INFINITY] {
            let e = check_tokens(bad, 8192).unwrap_err();
            assert_eq!((e.category(), e.field()), ("invalid_figure", "tokens"), "{bad}");
        }
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
}
