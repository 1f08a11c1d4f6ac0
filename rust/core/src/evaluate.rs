//! One configuration in, one explained answer out: step time and where it goes, memory per GPU, time, energy
//! and cost of the whole run.

use crate::collectives::{exposed_and_hidden, Collective, Interconnect};
use crate::compute::{dense_layer_forward, logits_forward_s, moe_layer_forward, Shard, Throughput, ACTIVATION_BYTES};
use crate::economics::{run_cost, ClusterCost, RunCost};
use crate::error::ConfigError;
use crate::hardware::{FabricSpec, GpuSpec, ScaleUpSpec, TopologySpec};
use crate::memory::{activation_bytes, model_state_bytes, LocalParams, MemoryPerGpu, WEIGHT_BYTES};
use crate::moe::{dispatch_time_s, Dispatch};
use crate::parallelism::{GroupPlacement, Overlap, Parallelism, Precision, Recompute, StageSplit, Training};
use crate::prices::Prices;
use crate::reliability::{goodput, Goodput, PartCounts, ReliabilitySpec};
use crate::topology::Network;
use crate::uncertainty::ErrorModel;
use crate::workload::TransformerSpec;

/// Megatron-LM DDP bucket: max(40M, 1M x dp) parameters (distributed_data_parallel_config.py). Only the last
/// bucket's reduction cannot start before the backward pass ends.
pub const DP_BUCKET_MIN_PARAMS: f64 = 40e6;
pub const DP_BUCKET_PARAMS_PER_RANK: f64 = 1e6;
/// Adam step traffic per local parameter: read BF16 gradient (2) and FP32 master, m, v (12); write master, m,
/// v (12) and the BF16 weight (2) [derived; formulas.md 2.4 gives 28-32].
pub const OPTIMIZER_STEP_BYTES_PER_PARAM: f64 = 28.0;

/// Everything that describes one configuration.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct Config {
    pub model: TransformerSpec,
    pub gpu: GpuSpec,
    pub scale_up: ScaleUpSpec,
    pub fabric: FabricSpec,
    pub topology: TopologySpec,
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
        self.prices.validate()?;
        self.overlap.validate()?;
        self.reliability.validate()?;
        self.errors.validate()?;
        self.training.validate()
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

/// Stage 1 of an evaluation: what the cluster and the training run fix, whatever the parallel layout.
#[derive(Clone, Debug)]
pub struct ClusterStage<'a> {
    pub model: &'a TransformerSpec,
    pub gpu: &'a GpuSpec,
    pub scale_up: &'a ScaleUpSpec,
    pub fabric: &'a FabricSpec,
    pub prices: &'a Prices,
    pub training: &'a Training,
    pub gpus: u32,
    goodput: Goodput,
    network: Network,
    tput: Throughput,
    bf16: Throughput,
    cost: ClusterCost,
    network_switches: f64,
    model_flops_per_token: f64,
    params_total: f64,
    params_active: f64,
    /// Expected slowdown of the slowest of the job's GPUs (fraction of the GPU-bound time).
    straggler_fraction: f64,
    /// The step's small synchronising all-reduces over every GPU.
    sync_s: f64,
    /// Prediction-interval factors (low, high) on the step time.
    interval: (f64, f64),
}

/// Small all-reduces every step waits for over all GPUs: the gradient norm for clipping and the loss
/// (Megatron-LM optimizer clip_grad_norm_fp32 and training loop; 4-byte FP32 scalars).
pub const SYNC_ALL_REDUCES_PER_STEP: f64 = 2.0;

/// Expected maximum of `n` independent standard normal variables, by Blom's approximation
/// E[Z_(n)] ~ Phi^-1((n - 0.375) / (n + 0.25)) (Blom 1958; Harter 1961 tabulates the exact values: n = 2
/// 0.564, 10 1.539, 100 2.508, 1000 3.241).
pub fn expected_max_of_normals(n: f64) -> f64 {
    if n <= 1.0 {
        return 0.0;
    }
    inverse_normal_cdf((n - 0.375) / (n + 0.25))
}

/// Phi^-1(p) for 0 < p < 1 by Acklam's rational approximation (relative error < 1.2e-9; P. J. Acklam, "An
/// algorithm for computing the inverse normal cumulative distribution function", 2003).
pub fn inverse_normal_cdf(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969683028665376e1,
        2.209460984245205e2,
        -2.759285104469687e2,
        1.38357751867269e2,
        -3.066479806614716e1,
        2.506628277459239,
    ];
    const B: [f64; 5] =
        [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
    const C: [f64; 6] = [
        -7.784894002430293e-3,
        -3.223964580411365e-1,
        -2.400758277161838,
        -2.549732539343734,
        4.374664141464968,
        2.938163982698783,
    ];
    const D: [f64; 4] = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < 0.02425 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.02425 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
}

impl<'a> ClusterStage<'a> {
    pub fn new(cfg: &'a Config) -> Result<Self, ConfigError> {
        Self::from_parts(
            &cfg.model,
            &cfg.gpu,
            &cfg.scale_up,
            &cfg.fabric,
            &cfg.topology,
            &cfg.prices,
            &cfg.training,
            &cfg.reliability,
            &cfg.errors,
            cfg.gpus,
        )
    }

    #[allow(clippy::too_many_arguments)]
    pub fn from_parts(
        model: &'a TransformerSpec,
        gpu: &'a GpuSpec,
        scale_up: &'a ScaleUpSpec,
        fabric: &'a FabricSpec,
        topology: &TopologySpec,
        prices: &'a Prices,
        training: &'a Training,
        reliability: &ReliabilitySpec,
        errors: &ErrorModel,
        gpus: u32,
    ) -> Result<Self, ConfigError> {
        check_cluster(gpu, training)?;
        let network = Network::new(fabric, topology, gpus, gpu.server_gpus);
        let parts = crate::bom::parts(&network, &crate::bom::Cabling::new(topology, &prices.network));
        let switch_trays = scale_up.switch_trays(gpus);
        let cost = ClusterCost::new(gpus, gpu, prices, &parts, switch_trays);
        let counts = PartCounts {
            gpus: gpus as f64,
            servers: cost.servers,
            nics: parts.nics,
            switches: parts.switches + switch_trays,
            links: parts.cables,
        };
        let params_total = model.params_total();
        let seq_len = training.seq_len as f64;
        let model_flops_per_token = model.training_flops_per_token(seq_len)
            + 3.0 * training.mtp_layers as f64 * model.mtp_flops_per_token(seq_len);
        let links = Interconnect { scale_up, fabric, network: &network };
        let world = GroupPlacement::new(gpus, 1, scale_up.domain_gpus);
        let sync_s = SYNC_ALL_REDUCES_PER_STEP * links.collective_time_s(Collective::AllReduce, 4.0, &world);
        // A synchronous step runs at the pace of its slowest GPU: for per-GPU speeds with coefficient of
        // variation cv, the slowest of N is E[max of N standard normals] x cv slower than the mean (order
        // statistics; the straggler effect of Petrini et al., SC03, and Sinha et al., SC22, for GPUs).
        let straggler_fraction = expected_max_of_normals(gpus as f64) * gpu.speed_cv;
        let interval = errors.factors(gpu.generation, model.moe.is_some(), gpus);
        Ok(ClusterStage {
            model,
            gpu,
            scale_up,
            fabric,
            prices,
            training,
            gpus,
            tput: Throughput::new(gpu, training.precision, training.attention_kernel),
            bf16: Throughput::new(gpu, Precision::Bf16, training.attention_kernel),
            network,
            cost,
            goodput: goodput(reliability, &counts, params_total),
            network_switches: parts.switches,
            model_flops_per_token,
            params_total,
            params_active: model.params_active(),
            straggler_fraction,
            sync_s,
            interval,
        })
    }

    /// What the cluster costs to buy and run (capex lines, yearly lines, power).
    pub fn cost(&self) -> &ClusterCost {
        &self.cost
    }

    fn links(&self) -> Interconnect<'_> {
        Interconnect { scale_up: self.scale_up, fabric: self.fabric, network: &self.network }
    }
}

/// The one check of a cluster design that does not depend on the layout: FP8 needs a GPU that has it. A sweep
/// uses it to estimate a cell's cost without building the stage.
pub fn check_cluster(gpu: &GpuSpec, training: &Training) -> Result<(), ConfigError> {
    if training.precision == Precision::Fp8 && gpu.peak_fp8_flops <= 0.0 {
        return Err(ConfigError::Fp8NotSupported);
    }
    Ok(())
}

/// Stage 2: what the parallel degrees, micro-batch size and sequence parallelism fix (per micro-batch compute,
/// collective times, parameters per GPU), whatever the schedule (vpp), recomputation, ZeRO stage and overlap.
#[derive(Clone, Debug)]
pub struct LayoutStage {
    pub layout: Layout,
    dense: LayerForward,
    moe: LayerForward,
    logits_forward_s: f64,
    /// Multi-token-prediction modules' forward on the last stage (their layers, projections, output layers).
    mtp_forward_s: f64,
    /// One layer's TP collectives for one forward pass (two all-reduces or AG + RS pairs).
    tp_forward_pass_s: f64,
    /// With sequence parallelism, the backward pass all-gathers the inputs of the attention's and the MLP's
    /// first GEMMs again for their weight gradients (Korthikanti et al. 2022 Sec. 4.2.2; Megatron-LM
    /// tensor_parallel/layers.py LinearWithGradAccumulationAndAsyncCommunication.backward issues it
    /// asynchronously behind the data-gradient GEMM).
    tp_regather_s: f64,
    cp_send_s: f64,
    ep_dispatch_s: f64,
    pp_send_s: f64,
    local: LocalParams,
    /// Gradient all-reduce; gradient reduce-scatter; weight all-gather, for (non-expert, expert) parameters.
    dp_all_reduce_s: f64,
    dp_reduce_scatter_s: f64,
    dp_all_gather_s: f64,
    /// Activation bytes per token of one (dense, MoE) layer for recompute none, selective, full.
    activation_bytes_per_token: [[f64; 3]; 2],
    shard: Shard,
}

use crate::compute::LayerForward;
use crate::memory::activation_bytes_per_token_per_layer;
use crate::parallelism::{check_schedule, placement, stage_split, Layout};

impl LayoutStage {
    /// Check the parallel degrees (not vpp or ZeRO, see `finish`) and precompute what they imply.
    pub fn new(c: &ClusterStage, par: &Parallelism) -> Result<Self, ConfigError> {
        let model = c.model;
        let lay = placement(model, par, c.training, c.gpus, c.scale_up.domain_gpus)?;
        let links = c.links();
        let shard = Shard::new(par, c.training);
        let h = model.hidden as f64;
        let dense = dense_layer_forward(model, &shard, &c.tput);
        let moe = moe_layer_forward(model, &shard, &c.tput);

        // Tensor parallelism: two all-reduces of the layer's activations per forward pass (Shoeybi et al. 2019
        // Sec. 3); with sequence parallelism an all-gather and a reduce-scatter of the same total (Korthikanti
        // et al. 2022 Sec. 4).
        let tp_message = shard.tokens * h * ACTIVATION_BYTES;
        let all_gather_s = links.collective_time_s(Collective::AllGather, tp_message, &lay.tp);
        let tp_forward_pass_s = 2.0
            * if shard.sequence_parallel {
                all_gather_s + links.collective_time_s(Collective::ReduceScatter, tp_message, &lay.tp)
            } else {
                links.collective_time_s(Collective::AllReduce, tp_message, &lay.tp)
            };
        let tp_regather_s = if shard.sequence_parallel { 2.0 * all_gather_s } else { 0.0 };
        // Context parallelism: ring exchange of this rank's K and V chunk (Megatron-LM context_parallel.rst).
        let cp_send_s = if par.cp > 1 {
            let kv = model.attention_shapes().kv_elements;
            links.send_time_s(shard.tokens * kv / shard.tp * ACTIVATION_BYTES, &lay.cp)
        } else {
            0.0
        };
        // Expert parallelism: one dispatch (or combine) of top_k copies of each local token (moe.rs).
        let ep_dispatch_s = match &model.moe {
            Some(moe_spec) if par.ep > 1 => {
                let dispatch = Dispatch {
                    tokens_per_rank: shard.tokens / shard.hidden_split(),
                    top_k: moe_spec.top_k as f64,
                    token_bytes: h * ACTIVATION_BYTES,
                    node_limit: moe_spec.node_limit,
                    imbalance: shard.imbalance,
                };
                dispatch_time_s(&links, &dispatch, &lay.ep, c.training.moe_dispatcher)
            }
            _ => 0.0,
        };
        // Pipeline sends, split over TP ranks (scatter/gather, Narayanan SC21 Sec. 4.1).
        let pp_send_s = links.send_time_s(shard.tokens * h * ACTIVATION_BYTES / shard.tp, &lay.pp);
        let local = LocalParams::on_busiest_stage(model, par, &lay, c.training.mtp_layers);
        // Non-expert parameters reduce over dp x cp ranks, experts over their own data-parallel group.
        let per_group = |op, bytes: f64| {
            links.collective_time_s(op, local.dense * bytes, &lay.dp)
                + links.collective_time_s(op, local.expert * bytes, &lay.expert_dp)
        };
        let grad_bytes = c.training.grad_reduce_dtype.bytes();
        let dp_all_reduce_s = per_group(Collective::AllReduce, grad_bytes);
        let dp_reduce_scatter_s = per_group(Collective::ReduceScatter, grad_bytes);
        let dp_all_gather_s = per_group(Collective::AllGather, WEIGHT_BYTES);
        let act = |moe_layer: bool| {
            [Recompute::None, Recompute::Selective, Recompute::Full]
                .map(|r| activation_bytes_per_token_per_layer(model, &shard, r, moe_layer && model.moe.is_some()))
        };
        let logits_forward_s = logits_forward_s(model, &shard, &c.bf16);
        let mtp_layer = if model.moe.is_some() { moe.total_s() } else { dense.total_s() };
        let mtp_projection = c.bf16.gemm_time_s(shard.tokens, h / shard.tp, 2.0 * h);
        let mtp_forward_s = c.training.mtp_layers as f64 * (mtp_layer + mtp_projection + logits_forward_s);
        Ok(LayoutStage {
            dense,
            moe,
            logits_forward_s,
            mtp_forward_s,
            tp_forward_pass_s,
            tp_regather_s,
            cp_send_s,
            ep_dispatch_s,
            pp_send_s,
            local,
            dp_all_reduce_s,
            dp_reduce_scatter_s,
            dp_all_gather_s,
            activation_bytes_per_token: [act(false), act(true)],
            shard,
            layout: lay,
        })
    }

    /// Layers on the busiest stage.
    pub fn layers_per_gpu(&self) -> u32 {
        self.layout.layers_per_gpu
    }

    /// Whether this stage can serve `par` (same degrees and the same layers per stage under its vpp).
    pub fn serves(&self, model: &TransformerSpec, par: &Parallelism) -> bool {
        stage_split(model, par).is_ok_and(|split| split == self.layout.stages)
    }
}

/// Evaluate one configuration. Figures are assumed valid (see `Config::validate_figures`); parallelism is
/// checked here and an impossible one is returned as the error. Never panics.
pub fn evaluate(cfg: &Config) -> Result<Evaluation, ConfigError> {
    let cluster = ClusterStage::new(cfg)?;
    let stage = LayoutStage::new(&cluster, &cfg.parallelism)?;
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
    let mb = busiest_micro_batch(s, par, overlap);
    let step = step_time(c, s, par, overlap, &mb);
    let memory = memory_per_gpu(c, s, par);
    Ok(summarise(c, s, par, step, memory))
}

/// One micro-batch on the busiest stage: its compute and the TP, CP and EP communication around it.
#[derive(Clone, Debug, Default)]
struct MicroBatch {
    /// Forward and backward of its layers plus the output layer and loss (no recomputation).
    compute_s: f64,
    recompute_s: f64,
    tp_exposed_s: f64,
    tp_hidden_s: f64,
    cp_exposed_s: f64,
    cp_hidden_s: f64,
    ep_exposed_s: f64,
    ep_hidden_s: f64,
}

impl MicroBatch {
    /// Wall time of the micro-batch: compute, recomputation and exposed communication.
    fn total_s(&self) -> f64 {
        self.compute_s + self.recompute_s + self.tp_exposed_s + self.cp_exposed_s + self.ep_exposed_s
    }
    /// Compute time not yet spent hiding this micro-batch's own TP, CP and EP traffic.
    fn spare_compute_s(&self) -> f64 {
        self.compute_s + self.recompute_s - self.tp_hidden_s - self.cp_hidden_s - self.ep_hidden_s
    }
}

/// The slowest of the first, a middle and the last pipeline stage: uneven splits, the leading dense layers and
/// the output layer (and MTP modules) on the last stage make them differ; the pipeline runs at its pace.
fn busiest_micro_batch(s: &LayoutStage, par: &Parallelism, overlap: &Overlap) -> MicroBatch {
    let split = &s.layout.stages;
    let stage_time = |stage: usize| {
        let last = stage == StageSplit::LAST || par.pp == 1;
        micro_batch_time(s, par, overlap, split.layers[stage], split.dense[stage], last)
    };
    if par.pp == 1 {
        return stage_time(StageSplit::LAST);
    }
    let mut busiest = stage_time(StageSplit::LAST);
    // A stage with no more layers than the last, all of one kind, cannot be slower than it (the last also runs
    // the output layer); the first and a middle stage differ only when their layers or dense layers do.
    let last = (split.layers[StageSplit::LAST], split.dense[StageSplit::LAST]);
    let first = (split.layers[StageSplit::FIRST], split.dense[StageSplit::FIRST]);
    let middle = (split.layers[StageSplit::MIDDLE], split.dense[StageSplit::MIDDLE]);
    let within_last = |(layers, dense): (u32, u32)| layers <= last.0 && dense == last.1;
    let first_needed = !within_last(first);
    let middle_needed = par.pp > 2 && middle != first && !within_last(middle);
    for (stage, needed) in [(StageSplit::FIRST, first_needed), (StageSplit::MIDDLE, middle_needed)] {
        if needed {
            let mb = stage_time(stage);
            if mb.total_s() > busiest.total_s() {
                busiest = mb;
            }
        }
    }
    busiest
}

fn micro_batch_time(
    s: &LayoutStage,
    par: &Parallelism,
    overlap: &Overlap,
    layers: u32,
    dense_layers: u32,
    last_stage: bool,
) -> MicroBatch {
    let (dense, moe) = (&s.dense, &s.moe);
    let layers = layers as f64;
    let dense_layers = (dense_layers as f64).min(layers);
    let moe_layers = layers - dense_layers;
    let (logits_s, mtp_s) = if last_stage { (s.logits_forward_s, s.mtp_forward_s) } else { (0.0, 0.0) };
    let layers_forward_s = dense_layers * dense.total_s() + moe_layers * moe.total_s();
    // Forward plus backward: 2x for GEMMs and element-wise work, 2.5x for fused attention (compute.rs).
    let compute_s =
        dense_layers * dense.forward_backward_s() + moe_layers * moe.forward_backward_s() + 3.0 * (logits_s + mtp_s);
    let recompute_s = match par.recompute {
        Recompute::None => 0.0,
        Recompute::Selective => dense_layers * dense.selective_recompute_s + moe_layers * moe.selective_recompute_s,
        Recompute::Full => layers_forward_s + mtp_s,
    };
    let gemm_window_s = 3.0 * (dense_layers * dense.gemm_s + moe_layers * moe.gemm_s);
    // Forward and backward passes that communicate; full recomputation adds a forward.
    let passes = if par.recompute == Recompute::Full { 3.0 } else { 2.0 };
    let tp_s = layers * passes * s.tp_forward_pass_s;
    let (mut tp_exposed_s, mut tp_hidden_s) = exposed_and_hidden(tp_s, overlap.tp, gemm_window_s);
    // The sequence-parallel re-gather hides behind its own data-gradient GEMMs whatever the overlap setting.
    let regather_window_s = dense_layers * dense.regather_window_s + moe_layers * moe.regather_window_s;
    let (e, h) = exposed_and_hidden(layers * s.tp_regather_s, 1.0, regather_window_s);
    tp_exposed_s += e;
    tp_hidden_s += h;
    // CP: (c - 1) ring steps forward and twice that backward, overlapped with attention by design.
    let cp_s = layers * 3.0 * (par.cp as f64 - 1.0) * s.cp_send_s;
    let attention_window_s = dense_layers * (dense.attention_s + dense.attention_backward_s)
        + moe_layers * (moe.attention_s + moe.attention_backward_s);
    let (cp_exposed_s, cp_hidden_s) = exposed_and_hidden(cp_s, 1.0, attention_window_s);
    // EP: dispatch and combine per pass, hidden behind MoE compute not already hiding TP or CP traffic (one
    // compute budget: the same GEMMs cannot hide two transfers' worth of time twice).
    let ep_s = moe_layers * 2.0 * passes * s.ep_dispatch_s;
    let ep_window_s =
        (moe_layers * moe.forward_backward_s()).min(compute_s + recompute_s - tp_hidden_s - cp_hidden_s).max(0.0);
    let (ep_exposed_s, ep_hidden_s) = exposed_and_hidden(ep_s, overlap.ep, ep_window_s);
    MicroBatch {
        compute_s,
        recompute_s,
        tp_exposed_s,
        tp_hidden_s,
        cp_exposed_s,
        cp_hidden_s,
        ep_exposed_s,
        ep_hidden_s,
    }
}

/// A step's time by component (exposed) and the communication hidden behind compute.
#[derive(Clone, Debug)]
struct Step {
    breakdown: StepBreakdown,
    hidden: HiddenComm,
}

fn step_time(c: &ClusterStage, s: &LayoutStage, par: &Parallelism, overlap: &Overlap, mb: &MicroBatch) -> Step {
    let m = s.layout.micro_batches as f64;
    let compute_s = m * mb.compute_s;
    // Pipeline bubble: (p - 1) / v micro-batch times (Narayanan et al. SC21, Sec. 2.2).
    let bubble_s = (par.pp as f64 - 1.0) / par.vpp as f64 * mb.total_s();
    // The interleaved schedule's drain also hides DP and PP traffic.
    let drain_s = if par.vpp > 1 { bubble_s / 2.0 } else { 0.0 };
    let (pp_exposed, pp_hidden) = pipeline_sends(s, par, overlap, compute_s);
    let (dp_exposed, dp_hidden) = data_parallel(s, par, overlap, mb, drain_s);
    // One compute budget for the step: what TP, CP and EP hide per micro-batch is spent; DP (and ZeRO-3
    // gathers) and PP share the rest (plus the interleaved drain). Without this the same compute would hide
    // several transfers, and faster compute could make a step slower.
    let budget = (m * mb.spare_compute_s() + drain_s).max(0.0);
    let [(dp_exposed, dp_hidden), (pp_exposed, pp_hidden)] =
        share_budget(budget, [(dp_exposed, dp_hidden), (pp_exposed, pp_hidden)]);
    let recompute_s = m * mb.recompute_s;
    let breakdown = StepBreakdown {
        compute_s,
        recompute_s,
        tp_comm_s: m * mb.tp_exposed_s,
        pp_comm_s: pp_exposed,
        dp_comm_s: dp_exposed,
        cp_comm_s: m * mb.cp_exposed_s,
        ep_comm_s: m * mb.ep_exposed_s,
        bubble_s,
        optimizer_s: optimizer_step_s(c, s, par),
        overhead_s: c.straggler_fraction * (compute_s + recompute_s + bubble_s) + c.sync_s,
    };
    let hidden = HiddenComm {
        tp_comm_s: m * mb.tp_hidden_s,
        pp_comm_s: pp_hidden,
        dp_comm_s: dp_hidden,
        cp_comm_s: m * mb.cp_hidden_s,
        ep_comm_s: m * mb.ep_hidden_s,
    };
    Step { breakdown, hidden }
}

/// Pipeline sends: forward and backward per micro-batch and virtual stage, plus the fill and drain; (exposed,
/// hidden) behind the step's compute.
fn pipeline_sends(s: &LayoutStage, par: &Parallelism, overlap: &Overlap, compute_s: f64) -> (f64, f64) {
    if par.pp <= 1 {
        return (0.0, 0.0);
    }
    let (m, p, v) = (s.layout.micro_batches as f64, par.pp as f64, par.vpp as f64);
    exposed_and_hidden(2.0 * (v * m + p - 1.0) * s.pp_send_s, overlap.pp, compute_s)
}

/// Data parallelism, (exposed, hidden): gradients reduced once per step (all-reduce; reduce-scatter + all-gather
/// of the weights when optimizer states are sharded); ZeRO-3 also all-gathers the weights for every
/// micro-batch's forward, and again for its backward when it reshards after the forward (FSDP
/// reshard_after_forward; ZeRO paper Sec. 7). The last Megatron bucket is always exposed.
fn data_parallel(s: &LayoutStage, par: &Parallelism, overlap: &Overlap, mb: &MicroBatch, drain_s: f64) -> (f64, f64) {
    let dp_step = match par.zero_stage {
        0 => s.dp_all_reduce_s,
        1 | 2 => s.dp_reduce_scatter_s + s.dp_all_gather_s,
        _ => s.dp_reduce_scatter_s,
    };
    let bucket = DP_BUCKET_MIN_PARAMS.max(DP_BUCKET_PARAMS_PER_RANK * s.layout.dp.size as f64);
    let last_bucket = dp_step * (bucket / s.local.total()).min(1.0);
    // Reduction hides behind the last micro-batch's backward (and, interleaved, the drain of earlier chunks);
    // the sharded weights' all-gather behind the next step's first forward.
    let mut window = 2.0 / 3.0 * mb.compute_s + drain_s;
    if par.zero_stage >= 1 {
        window += mb.compute_s / 3.0;
    }
    let (mut exposed, mut hidden) = exposed_and_hidden(dp_step - last_bucket, overlap.dp, window);
    exposed += last_bucket;
    if par.zero_stage >= 3 {
        let m = s.layout.micro_batches as f64;
        let gathers = if par.reshard_after_forward { 2.0 } else { 1.0 };
        let (e, h) = exposed_and_hidden(gathers * m * s.dp_all_gather_s, overlap.dp, m * mb.compute_s);
        exposed += e;
        hidden += h;
    }
    (exposed, hidden)
}

/// Scale the hidden parts of several transfers down to fit one compute budget; what no longer hides is
/// exposed. Each pair is (exposed, hidden).
fn share_budget<const N: usize>(budget: f64, parts: [(f64, f64); N]) -> [(f64, f64); N] {
    let wanted: f64 = parts.iter().map(|p| p.1).sum();
    if wanted <= budget {
        return parts;
    }
    let keep = budget / wanted;
    parts.map(|(exposed, hidden)| (exposed + hidden * (1.0 - keep), hidden * keep))
}

/// Optimizer step: memory-bound over the local (possibly sharded) parameters.
fn optimizer_step_s(c: &ClusterStage, s: &LayoutStage, par: &Parallelism) -> f64 {
    let (local, lay) = (&s.local, &s.layout);
    let params = if par.zero_stage >= 1 {
        local.dense / lay.dp.size as f64 + local.expert / lay.expert_dp.size as f64
    } else {
        local.total()
    };
    params * OPTIMIZER_STEP_BYTES_PER_PARAM / c.tput.hbm_bytes_per_s
}

/// Memory of the busiest GPU.
fn memory_per_gpu(c: &ClusterStage, s: &LayoutStage, par: &Parallelism) -> MemoryPerGpu {
    let (model, lay, local) = (c.model, &s.layout, &s.local);
    let grad_bytes = c.training.grad_reduce_dtype.bytes();
    let (dense_w, dense_g, dense_o) = model_state_bytes(local.dense, lay.dp.size as f64, par.zero_stage, grad_bytes);
    let (exp_w, exp_g, exp_o) = model_state_bytes(local.expert, lay.expert_dp.size as f64, par.zero_stage, grad_bytes);
    let mut weights_bytes = dense_w + exp_w;
    if par.zero_stage >= 3 {
        weights_bytes += if par.reshard_after_forward {
            // Two layers gathered at a time (current and prefetched).
            let experts = model.moe.as_ref().map_or(0.0, |x| x.experts as f64) / par.ep as f64;
            let layer_params =
                model.dense_layer_params().max(model.moe_layer_non_expert_params() + experts * model.expert_params());
            2.0 * layer_params / par.tp as f64 * WEIGHT_BYTES
        } else {
            // Gathered parameters stay until the backward pass: the whole stage's, unsharded.
            local.total() * WEIGHT_BYTES
        };
    }
    let index = match par.recompute {
        Recompute::None => 0,
        Recompute::Selective => 1,
        Recompute::Full => 2,
    };
    let split = &lay.stages;
    let [dense_bytes, moe_bytes] = s.activation_bytes_per_token;
    let stage_bytes = |stage: usize, mode: usize, extra_layers: f64| {
        let dense = split.dense[stage].min(split.layers[stage]) as f64;
        let moe = split.layers[stage] as f64 - dense + extra_layers;
        dense * dense_bytes[mode] + moe * moe_bytes[mode]
    };
    let mtp = c.training.mtp_layers as f64;
    let first = stage_bytes(StageSplit::FIRST, index, 0.0);
    let last = stage_bytes(StageSplit::LAST, index, mtp);
    let largest_layer = dense_bytes[0].max(if model.moe.is_some() { moe_bytes[0] } else { 0.0 });
    let activations_bytes = activation_bytes(model, par, lay, &s.shard, first, last, largest_layer, mtp);
    let reserve_bytes = c.gpu.runtime_reserve_bytes;
    let total_bytes = weights_bytes + dense_g + exp_g + dense_o + exp_o + activations_bytes + reserve_bytes;
    MemoryPerGpu {
        weights_bytes,
        gradients_bytes: dense_g + exp_g,
        optimizer_bytes: dense_o + exp_o,
        activations_bytes,
        reserve_bytes,
        total_bytes,
        hbm_bytes: c.gpu.hbm_bytes,
        margin_bytes: c.gpu.hbm_bytes - total_bytes,
    }
}

/// Model and hardware FLOP/s per GPU: (model, hardware (recomputation included)).
fn flops_per_s_per_gpu(c: &ClusterStage, par: &Parallelism, step_time_s: f64) -> (f64, f64) {
    let tokens_per_step = c.training.global_batch as f64 * c.training.seq_len as f64;
    let recompute_flops_per_token = match par.recompute {
        Recompute::Full => (c.model_flops_per_token - 3.0 * c.model.logits_flops_per_token()) / 3.0,
        _ => 0.0,
    };
    let per_s = |flops_per_token: f64| flops_per_token * tokens_per_step / step_time_s / c.gpus as f64;
    (per_s(c.model_flops_per_token), per_s(c.model_flops_per_token + recompute_flops_per_token))
}

/// The whole run: steps, time (with goodput), energy and cost.
fn whole_run(c: &ClusterStage, step_time_s: f64) -> (f64, f64, RunCost) {
    let tokens_per_step = c.training.global_batch as f64 * c.training.seq_len as f64;
    let steps = (c.training.tokens / tokens_per_step).ceil();
    let time_to_train_s = steps * step_time_s / c.goodput.goodput;
    (steps, time_to_train_s, run_cost(time_to_train_s, c.gpus, &c.cost, c.prices))
}

fn summarise(c: &ClusterStage, s: &LayoutStage, par: &Parallelism, step: Step, memory: MemoryPerGpu) -> Evaluation {
    let step_time_s = step.breakdown.total_s();
    let peak = match c.training.precision {
        Precision::Bf16 => c.gpu.peak_bf16_flops,
        Precision::Fp8 => c.gpu.peak_fp8_flops,
    };
    let (model_flops, hardware_flops) = flops_per_s_per_gpu(c, par, step_time_s);
    let (steps, time_to_train_s, run) = whole_run(c, step_time_s);
    let cost_to_train_usd = run.in_mode(c.prices.economics.cost_mode);
    let tokens_per_step = c.training.global_batch as f64 * c.training.seq_len as f64;
    // Time and cost to train are proportional to the step time (rent: GPU-hours; own: amortised capex and
    // energy over the run's duration), so they take the step time's interval factors.
    let (lo, hi) = c.interval;
    Evaluation {
        feasible: memory.margin_bytes >= 0.0,
        step_time_s,
        step_time_s_lo: step_time_s * lo,
        step_time_s_hi: step_time_s * hi,
        scaling_efficiency: step.breakdown.compute_s / step_time_s,
        breakdown: step.breakdown,
        hidden: step.hidden,
        micro_batches: s.layout.micro_batches,
        tokens_per_s: tokens_per_step / step_time_s,
        mfu: model_flops / peak,
        hfu: hardware_flops / peak,
        tflops_per_gpu: model_flops / 1e12,
        memory,
        params_total: c.params_total,
        params_active: c.params_active,
        model_flops_per_token: c.model_flops_per_token,
        steps,
        time_to_train_s,
        time_to_train_s_lo: time_to_train_s * lo,
        time_to_train_s_hi: time_to_train_s * hi,
        energy_j: run.energy_j,
        cost_to_train_usd,
        cost_to_train_usd_lo: cost_to_train_usd * lo,
        cost_to_train_usd_hi: cost_to_train_usd * hi,
        usd_per_million_tokens: cost_to_train_usd / (c.training.tokens / 1e6),
        cost_rent_usd: run.rent_usd,
        cost_own_usd: run.own_usd,
        capex_usd: c.cost.capex_usd(),
        network_capex_usd: c.cost.network_capex_usd,
        it_power_w: c.cost.it_power_w,
        network_tiers: crate::bom::tiers(&c.network),
        network_switches: c.network_switches,
        interruptions_per_day: c.goodput.interruptions_per_day,
        checkpoint_interval_s: c.goodput.checkpoint_interval_s,
        goodput: c.goodput.goodput,
    }
}
