//! One configuration in, one explained answer out: step time and where it goes, memory per GPU, time, energy
//! and cost of the whole run.

use crate::cost::reliability::ReliabilitySpec;
use crate::cost::uncertainty::ErrorModel;
use crate::error::ConfigError;
use crate::hardware::{FabricSpec, GpuSpec, ScaleUpSpec, TopologySpec};
use crate::prices::Prices;
use crate::software::FrameworkSpec;
use crate::step::memory::MemoryPerGpu;
use crate::step::parallelism::{check_schedule, Overlap, Parallelism, Recompute, Training};
use crate::step::workload::TransformerSpec;

mod ep_overlap;
mod stage_comm;
mod stages;
mod step;
mod summary;
mod zero3;

pub use stages::{check_cluster, cluster_cost, ClusterParts, ClusterStage, LayoutStage, ModelTerms};

/// Megatron-LM DDP bucket: max(40M, 1M x dp) parameters (distributed_data_parallel_config.py). Only the last
/// bucket's reduction cannot start before the backward pass ends.
pub const DP_BUCKET_MIN_PARAMS: f64 = 40e6;
pub const DP_BUCKET_PARAMS_PER_RANK: f64 = 1e6;

/// Everything that describes one configuration.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct Config {
    pub model: TransformerSpec,
    pub gpu: GpuSpec,
    pub scale_up: ScaleUpSpec,
    pub fabric: FabricSpec,
    pub topology: TopologySpec,
    /// The training framework's software terms.
    pub framework: FrameworkSpec,
    pub prices: Prices,
    pub gpus: u32,
    pub parallelism: Parallelism,
    pub training: Training,
    pub overlap: Overlap,
    pub reliability: ReliabilitySpec,
    /// Validation residuals by regime and the level of the prediction intervals.
    pub errors: ErrorModel,
}

impl Config {
    /// Check every figure once (sweeps check the specs once, not per configuration).
    pub fn validate_figures(&self) -> Result<(), ConfigError> {
        self.model.validate()?;
        self.gpu.validate()?;
        self.scale_up.validate()?;
        self.fabric.validate()?;
        self.topology.validate()?;
        self.framework.validate()?;
        self.prices.validate()?;
        self.overlap.validate()?;
        self.reliability.validate()?;
        self.errors.validate()?;
        self.training.validate()?;
        // Resharding after the forward pass is FSDP's (ZeRO-3) choice; below stage 3 the parameters are never
        // gathered, so turning it off would be silently ignored (a sweep's shared setting applies at stage 3 only).
        if !self.parallelism.reshard_after_forward && self.parallelism.zero_stage != 3 {
            return Err(ConfigError::InvalidFigure {
                field: "zero",
                value: self.parallelism.zero_stage as f64,
                expected: "3 when reshard_after_forward is off (resharding after the forward is a ZeRO-3 setting)",
            });
        }
        // Naming the modules to rerun is a setting of selective recomputation: with another mode it would be
        // silently ignored.
        if !self.training.recompute_modules.is_empty() && self.parallelism.recompute != Recompute::Selective {
            return Err(ConfigError::InvalidFigure {
                field: "recompute_modules",
                value: self.training.recompute_modules.count() as f64,
                expected: "none unless recompute is selective (they name what selective recomputation reruns)",
            });
        }
        Ok(())
    }
}

/// Step time by component, in seconds. The components add up to the step time; communication counts only
/// its exposed part.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepBreakdown {
    /// Forward and backward compute of all micro-batches on the busiest stage (no recomputation).
    pub compute_s: f64,
    pub recompute_s: f64,
    pub tp_comm_s: f64,
    pub pp_comm_s: f64,
    pub dp_comm_s: f64,
    pub cp_comm_s: f64,
    pub ep_comm_s: f64,
    /// Pipeline fill and drain: (p - 1) / v micro-batch times.
    pub bubble_s: f64,
    pub optimizer_s: f64,
    /// Per-step cost outside the micro-batches: waiting for the slowest GPU of the synchronous step and the
    /// step's small synchronising all-reduces (gradient norm, loss).
    pub overhead_s: f64,
    /// What the training framework adds to the kernels (`crate::software`): its per-layer, per-micro-batch and
    /// per-step time, and the compute that overlapped communication slows.
    pub framework_s: f64,
    /// The GPU waiting for the host (`FrameworkSpec::host_s_per_kernel`): a dropless MoE layer syncs with the host,
    /// so the GPU idles while the host launches more slowly than the GPU runs; ZeRO-3 collectives issued by tensor
    /// through the list API block on a copy per rank issued by the host (zero3::zero3_list_host_s).
    pub host_wait_s: f64,
}

impl StepBreakdown {
    pub fn total_s(&self) -> f64 {
        self.compute_s
            + self.recompute_s
            + self.tp_comm_s
            + self.pp_comm_s
            + self.dp_comm_s
            + self.cp_comm_s
            + self.ep_comm_s
            + self.bubble_s
            + self.optimizer_s
            + self.overhead_s
            + self.framework_s
            + self.host_wait_s
    }
}

/// Communication time hidden behind compute, per step, in seconds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HiddenComm {
    pub tp_comm_s: f64,
    pub pp_comm_s: f64,
    pub dp_comm_s: f64,
    pub cp_comm_s: f64,
    pub ep_comm_s: f64,
}

/// The model's answer for one configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluation {
    /// Fits in memory.
    pub feasible: bool,
    pub step_time_s: f64,
    /// Prediction interval of the step time at the error model's level (validation residuals by regime).
    pub step_time_s_lo: f64,
    pub step_time_s_hi: f64,
    pub breakdown: StepBreakdown,
    pub hidden: HiddenComm,
    pub micro_batches: u32,
    pub tokens_per_s: f64,
    /// Model FLOPs (no recomputation) per second / (GPUs x peak of the precision used).
    pub mfu: f64,
    /// Hardware FLOPs (recomputation included) utilisation.
    pub hfu: f64,
    pub tflops_per_gpu: f64,
    /// compute_s / step_time_s: the share of the step spent on the model's own arithmetic.
    pub scaling_efficiency: f64,
    pub memory: MemoryPerGpu,
    pub params_total: f64,
    pub params_active: f64,
    pub model_flops_per_token: f64,
    pub steps: f64,
    pub time_to_train_s: f64,
    pub time_to_train_s_lo: f64,
    pub time_to_train_s_hi: f64,
    pub energy_j: f64,
    /// The run's cost in the economics' `cost_mode` (rent or own).
    pub cost_to_train_usd: f64,
    pub cost_to_train_usd_lo: f64,
    pub cost_to_train_usd_hi: f64,
    /// `cost_to_train_usd` per million training tokens.
    pub usd_per_million_tokens: f64,
    pub cost_rent_usd: f64,
    pub cost_own_usd: f64,
    pub capex_usd: f64,
    pub network_capex_usd: f64,
    pub it_power_w: f64,
    pub network_tiers: u32,
    pub network_switches: f64,
    /// Expected job interruptions a day from the cluster's parts.
    pub interruptions_per_day: f64,
    /// Young/Daly optimal time between checkpoints.
    pub checkpoint_interval_s: f64,
    /// Share of wall-clock time that advances training; `time_to_train_s` is divided by it.
    pub goodput: f64,
}

/// Evaluate one configuration. Figures are assumed valid (see `Config::validate_figures`); parallelism is
/// checked here and an impossible one is returned as the error. Never panics. Only the data-parallel collectives
/// of the configuration's ZeRO stage are timed (`LayoutStage::link_schedule`, as a Monte Carlo sample does): the
/// same evaluation as a sweep's fully linked stage, about 10% sooner (tests/model.rs pins the equality).
pub fn evaluate(cfg: &Config) -> Result<Evaluation, ConfigError> {
    let cluster = ClusterStage::new(cfg)?;
    let mut stage = LayoutStage::unlinked(&cluster, &cfg.parallelism)?;
    stage.link_schedule(&cluster, &cfg.parallelism);
    finish(&cluster, &stage, &cfg.parallelism, &cfg.overlap)
}

/// Stage 3: the schedule (vpp), recomputation, ZeRO stage and overlap; returns the full evaluation.
/// `stage` must have been built for `par`'s degrees (a sweep reuses it across these inner choices).
pub fn finish(
    c: &ClusterStage,
    s: &LayoutStage,
    par: &Parallelism,
    overlap: &Overlap,
) -> Result<Evaluation, ConfigError> {
    check_schedule(c.model, par, s.layout.micro_batches)?;
    let mb = step::busiest_micro_batch(c, s, par, overlap);
    let step = step::step_time(c, s, par, overlap, &mb);
    let memory = summary::memory_per_gpu(c, s, par);
    Ok(summary::summarise(c, s, par, step, memory))
}
