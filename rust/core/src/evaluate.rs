//! One configuration in, one explained answer out: step time and where it goes, memory per GPU, time, energy
//! and cost of the whole run.

use crate::collectives::{exposed_and_hidden, Collective, Interconnect};
use crate::compute::{dense_layer_forward, logits_forward_s, moe_layer_forward, Shard, Throughput, ACTIVATION_BYTES};
use crate::economics::{run_cost, ClusterCost};
use crate::error::ConfigError;
use crate::hardware::{FabricSpec, GpuSpec, PriceSpec, ScaleUpSpec, TopologySpec};
use crate::memory::{activation_bytes, model_state_bytes, LocalParams, MemoryPerGpu, GRADIENT_BYTES, WEIGHT_BYTES};
use crate::parallelism::{layout, Overlap, Parallelism, Precision, Recompute, Training};
use crate::topology::Network;
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
pub struct Config {
    pub model: TransformerSpec,
    pub gpu: GpuSpec,
    pub scale_up: ScaleUpSpec,
    pub fabric: FabricSpec,
    pub topology: TopologySpec,
    pub prices: PriceSpec,
    pub gpus: u32,
    pub parallelism: Parallelism,
    pub training: Training,
    pub overlap: Overlap,
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
        if !(self.training.tokens.is_finite() && self.training.tokens > 0.0) {
            return Err(ConfigError::InvalidFigure {
                field: "tokens",
                value: self.training.tokens,
                expected: "a finite number > 0",
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
    pub energy_j: f64,
    pub cost_rent_usd: f64,
    pub cost_own_usd: f64,
    pub capex_usd: f64,
    pub network_capex_usd: f64,
    pub it_power_w: f64,
    pub network_tiers: u32,
    pub network_switches: f64,
}

/// Evaluate one configuration. Figures are assumed valid (see `Config::validate_figures`); parallelism is
/// checked here and an impossible one is returned as the error. Never panics.
pub fn evaluate(cfg: &Config) -> Result<Evaluation, ConfigError> {
    let model = &cfg.model;
    let par = &cfg.parallelism;
    let training = &cfg.training;
    let gpu: &GpuSpec = &cfg.gpu;
    let scale_up: &ScaleUpSpec = &cfg.scale_up;
    let fabric: &FabricSpec = &cfg.fabric;
    let topology: &TopologySpec = &cfg.topology;
    let prices: &PriceSpec = &cfg.prices;
    let lay = layout(model, par, training, cfg.gpus, scale_up.domain_gpus)?;
    if training.precision == Precision::Fp8 && gpu.peak_fp8_flops <= 0.0 {
        return Err(ConfigError::Fp8NotSupported);
    }

    let network = Network::new(fabric, topology, cfg.gpus, gpu.server_gpus);
    let links = Interconnect { scale_up, fabric, network: &network };
    let tput = Throughput::new(gpu, training.precision);
    let shard = Shard::new(par, training.seq_len);
    let h = model.hidden as f64;
    let m = lay.micro_batches as f64;
    let p = par.pp as f64;
    let v = par.vpp as f64;

    // Compute of one micro-batch on the busiest stage (its layers plus the output layer and loss).
    let layers = lay.layers_per_gpu as f64;
    let moe_layers = layers * model.moe_layer_fraction();
    let dense_layers = layers - moe_layers;
    let dense = dense_layer_forward(model, &shard, &tput);
    let moe = moe_layer_forward(model, &shard, &tput);
    let layers_forward_s = dense_layers * dense.total_s() + moe_layers * moe.total_s();
    let bf16 = Throughput::new(gpu, Precision::Bf16);
    let forward_s = layers_forward_s + logits_forward_s(model, &shard, &bf16);
    let compute_mb = 3.0 * forward_s;
    let recompute_mb = match par.recompute {
        Recompute::None => 0.0,
        Recompute::Selective => {
            dense_layers * dense.recomputable_elementwise_s + moe_layers * moe.recomputable_elementwise_s
        }
        Recompute::Full => layers_forward_s,
    };
    let gemm_window_mb = 3.0 * (dense_layers * dense.gemm_s + moe_layers * moe.gemm_s);

    // Tensor parallelism: two all-reduces of the layer's activations forward, two backward, two more when the
    // forward is recomputed (Shoeybi et al. 2019 Sec. 3; with sequence parallelism an all-gather and a
    // reduce-scatter of the same total, Korthikanti et al. 2022 Sec. 4).
    let tp_message = shard.tokens * h * ACTIVATION_BYTES;
    let tp_collective = if shard.sequence_parallel {
        links.collective_time_s(Collective::AllGather, tp_message, &lay.tp)
            + links.collective_time_s(Collective::ReduceScatter, tp_message, &lay.tp)
    } else {
        links.collective_time_s(Collective::AllReduce, tp_message, &lay.tp)
    };
    let tp_passes = if par.recompute == Recompute::Full { 6.0 } else { 4.0 };
    let tp_mb = layers * tp_passes / 2.0 * tp_collective;
    let (tp_exposed_mb, tp_hidden_mb) = exposed_and_hidden(tp_mb, cfg.overlap.tp, gemm_window_mb);

    // Context parallelism: ring exchange of this rank's K and V chunk, (c - 1) steps forward and twice that
    // backward (K, V again and their gradients), overlapped with the attention kernels by design
    // (Megatron-LM docs context_parallel.rst).
    let cp_mb = if par.cp > 1 {
        let chunk = 2.0 * shard.tokens * model.kv_dim() / shard.tp * ACTIVATION_BYTES;
        layers * 3.0 * (par.cp as f64 - 1.0) * links.send_time_s(chunk, &lay.cp)
    } else {
        0.0
    };
    let attention_window_mb = 3.0 * (dense_layers * dense.attention_s + moe_layers * moe.attention_s);
    let (cp_exposed_mb, cp_hidden_mb) = exposed_and_hidden(cp_mb, 1.0, attention_window_mb);

    // Expert parallelism: dispatch and combine all-to-alls forward and backward (again when recomputing) of
    // top_k copies of each local token (scaling book, "Expert Parallelism").
    let ep_mb = match &model.moe {
        Some(moe_spec) if par.ep > 1 => {
            let tokens = shard.tokens / shard.hidden_split();
            let bytes = tokens * moe_spec.top_k as f64 * h * ACTIVATION_BYTES;
            let passes = if par.recompute == Recompute::Full { 6.0 } else { 4.0 };
            moe_layers * passes * links.all_to_all_time_s(bytes, &lay.ep)
        }
        _ => 0.0,
    };
    let (ep_exposed_mb, ep_hidden_mb) = exposed_and_hidden(ep_mb, cfg.overlap.ep, 3.0 * moe_layers * moe.total_s());

    let t_mb = compute_mb + recompute_mb + tp_exposed_mb + cp_exposed_mb + ep_exposed_mb;
    let compute_s = m * compute_mb;
    // Pipeline bubble: (p - 1) / v micro-batch times (Narayanan et al. SC21, Sec. 2.2).
    let bubble_s = (p - 1.0) / v * t_mb;

    // Pipeline sends: activations forward and gradients backward, per micro-batch and virtual stage, plus the
    // fill and drain on the critical path; split over TP ranks (scatter/gather, Narayanan SC21 Sec. 4.1).
    let pp_total = if par.pp > 1 {
        let message = shard.tokens * h * ACTIVATION_BYTES / shard.tp;
        2.0 * (v * m + p - 1.0) * links.send_time_s(message, &lay.pp)
    } else {
        0.0
    };
    let (pp_exposed, pp_hidden) = exposed_and_hidden(pp_total, cfg.overlap.pp, compute_s);

    // Data parallelism: reduce gradients once per step (all-reduce; reduce-scatter + all-gather of the weights
    // when optimizer states are sharded). ZeRO-3 also all-gathers the weights for every micro-batch's forward
    // and backward (ZeRO paper Sec. 7: 1.5x the traffic of plain data parallelism for one micro-batch).
    let local = LocalParams::on_busiest_stage(model, par, &lay);
    let dp_reduce = |params: f64, group| {
        if par.zero_stage == 0 {
            links.collective_time_s(Collective::AllReduce, params * GRADIENT_BYTES, group)
        } else if par.zero_stage < 3 {
            links.collective_time_s(Collective::ReduceScatter, params * GRADIENT_BYTES, group)
                + links.collective_time_s(Collective::AllGather, params * WEIGHT_BYTES, group)
        } else {
            links.collective_time_s(Collective::ReduceScatter, params * GRADIENT_BYTES, group)
        }
    };
    let dp_step = dp_reduce(local.dense, &lay.dp) + dp_reduce(local.expert, &lay.expert_dp);
    let bucket = DP_BUCKET_MIN_PARAMS.max(DP_BUCKET_PARAMS_PER_RANK * lay.dp.size as f64);
    let last_bucket = dp_step * (bucket / local.total()).min(1.0);
    // Reduction hides behind the last micro-batch's backward (and, interleaved, the drain of earlier chunks);
    // the sharded weights' all-gather behind the next step's first forward.
    let mut dp_window = 2.0 / 3.0 * compute_mb + if par.vpp > 1 { bubble_s / 2.0 } else { 0.0 };
    if par.zero_stage >= 1 {
        dp_window += compute_mb / 3.0;
    }
    let (mut dp_exposed, mut dp_hidden) = exposed_and_hidden(dp_step - last_bucket, cfg.overlap.dp, dp_window);
    dp_exposed += last_bucket;
    if par.zero_stage >= 3 {
        let gather = links.collective_time_s(Collective::AllGather, local.dense * WEIGHT_BYTES, &lay.dp)
            + links.collective_time_s(Collective::AllGather, local.expert * WEIGHT_BYTES, &lay.expert_dp);
        let (exposed, hidden) = exposed_and_hidden(2.0 * m * gather, cfg.overlap.dp, compute_s);
        dp_exposed += exposed;
        dp_hidden += hidden;
    }

    // Optimizer step: memory-bound over the local (possibly sharded) parameters.
    let sharded = par.zero_stage >= 1;
    let optimizer_params = if sharded {
        local.dense / lay.dp.size as f64 + local.expert / lay.expert_dp.size as f64
    } else {
        local.total()
    };
    let optimizer_s = optimizer_params * OPTIMIZER_STEP_BYTES_PER_PARAM / tput.hbm_bytes_per_s;

    let breakdown = StepBreakdown {
        compute_s,
        recompute_s: m * recompute_mb,
        tp_comm_s: m * tp_exposed_mb,
        pp_comm_s: pp_exposed,
        dp_comm_s: dp_exposed,
        cp_comm_s: m * cp_exposed_mb,
        ep_comm_s: m * ep_exposed_mb,
        bubble_s,
        optimizer_s,
    };
    let hidden = HiddenComm {
        tp_comm_s: m * tp_hidden_mb,
        pp_comm_s: pp_hidden,
        dp_comm_s: dp_hidden,
        cp_comm_s: m * cp_hidden_mb,
        ep_comm_s: m * ep_hidden_mb,
    };
    let step_time_s = breakdown.total_s();

    // Memory of the busiest GPU.
    let (dense_w, dense_g, dense_o) = model_state_bytes(local.dense, lay.dp.size as f64, par.zero_stage);
    let (exp_w, exp_g, exp_o) = model_state_bytes(local.expert, lay.expert_dp.size as f64, par.zero_stage);
    let mut weights_bytes = dense_w + exp_w;
    if par.zero_stage >= 3 {
        // Two layers gathered at a time (current and prefetched).
        let layer_params = model.dense_layer_params().max(
            model.moe_layer_non_expert_params()
                + model.moe.as_ref().map_or(0.0, |x| x.experts as f64) / par.ep as f64 * model.expert_params(),
        );
        weights_bytes += 2.0 * layer_params / par.tp as f64 * WEIGHT_BYTES;
    }
    let activations_bytes = activation_bytes(model, par, &lay, &shard);
    let total_bytes = weights_bytes + dense_g + exp_g + dense_o + exp_o + activations_bytes + gpu.runtime_reserve_bytes;
    let memory = MemoryPerGpu {
        weights_bytes,
        gradients_bytes: dense_g + exp_g,
        optimizer_bytes: dense_o + exp_o,
        activations_bytes,
        reserve_bytes: gpu.runtime_reserve_bytes,
        total_bytes,
        hbm_bytes: gpu.hbm_bytes,
        margin_bytes: gpu.hbm_bytes - total_bytes,
    };

    // Throughput, utilisation and the whole run.
    let seq = training.seq_len as f64;
    let tokens_per_step = training.global_batch as f64 * seq;
    let model_flops_per_token = model.training_flops_per_token(seq);
    let gpus = cfg.gpus as f64;
    let peak = match training.precision {
        Precision::Bf16 => gpu.peak_bf16_flops,
        Precision::Fp8 => gpu.peak_fp8_flops,
    };
    let model_flops_per_s_per_gpu = model_flops_per_token * tokens_per_step / step_time_s / gpus;
    let recompute_flops_per_token = match par.recompute {
        Recompute::Full => (model_flops_per_token - 3.0 * model.logits_flops_per_token()) / 3.0,
        _ => 0.0,
    };
    let hardware_flops_per_s_per_gpu =
        (model_flops_per_token + recompute_flops_per_token) * tokens_per_step / step_time_s / gpus;
    let steps = (training.tokens / tokens_per_step).ceil();
    let time_to_train_s = steps * step_time_s;
    let parts = network.parts();
    let cluster = ClusterCost::new(cfg.gpus, gpu, prices, &parts);
    let run = run_cost(time_to_train_s, cfg.gpus, &cluster, prices);

    Ok(Evaluation {
        feasible: memory.margin_bytes >= 0.0,
        step_time_s,
        breakdown,
        hidden,
        micro_batches: lay.micro_batches,
        tokens_per_s: tokens_per_step / step_time_s,
        mfu: model_flops_per_s_per_gpu / peak,
        hfu: hardware_flops_per_s_per_gpu / peak,
        tflops_per_gpu: model_flops_per_s_per_gpu / 1e12,
        scaling_efficiency: compute_s / step_time_s,
        memory,
        params_total: model.params_total(),
        params_active: model.params_active(),
        model_flops_per_token,
        steps,
        time_to_train_s,
        energy_j: run.energy_j,
        cost_rent_usd: run.rent_usd,
        cost_own_usd: run.own_usd,
        capex_usd: cluster.capex_usd(),
        network_capex_usd: cluster.network_capex_usd,
        it_power_w: cluster.it_power_w,
        network_tiers: network.tiers,
        network_switches: parts.switches,
    })
}
