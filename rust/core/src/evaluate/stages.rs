//! The first two stages of an evaluation, each built once and reused by a sweep: what the cluster and the
//! training run fix (`ClusterStage`), and what the parallel degrees fix (`LayoutStage`).

use crate::cost::economics::{ClusterCost, Tco};
use crate::cost::reliability::{goodput, Goodput, PartCounts, ReliabilitySpec};
use crate::cost::uncertainty::{expected_max_of_normals, ErrorModel};
use crate::error::ConfigError;
use crate::hardware::{FabricSpec, GpuSpec, ScaleUpSpec, TopologySpec};
use crate::network::bom::{self, Cabling, NetworkParts};
use crate::network::collectives::{Collective, Interconnect};
use crate::network::placement::{job_domain_gpus, GroupPlacement};
use crate::network::topology::Network;
use crate::prices::Prices;
use crate::software::FrameworkSpec;
use crate::step::compute::{
    dense_layer_forward, logits_forward_s, moe_layer_forward, LayerForward, Shard, Throughput, ACTIVATION_BYTES,
};
use crate::step::gradients::accumulation_s;
use crate::step::memory::{activation_bytes_per_token_per_layer, LocalParams};
use crate::step::modules::{modules_rerun_s, rerun_s, SelectiveRule};
use crate::step::parallelism::{placement, stage_split, Layout, Parallelism, Precision, Recompute, Training};
use crate::step::recompute::recomputed_mm_s;
use crate::step::workload::TransformerSpec;

use super::stage_comm::{cp_send_s, dp_comm_s, ep_dispatch_s, tp_comm_s, TpComm};
use super::Config;

/// Small all-reduces every step waits for over all GPUs: the gradient norm for clipping and the loss
/// (Megatron-LM optimizer clip_grad_norm_fp32 and training loop; 4-byte FP32 scalars).
pub const SYNC_ALL_REDUCES_PER_STEP: f64 = 2.0;

/// The specs a cluster stage is built from, borrowed: a `Config`'s, or a sweep cell's (which builds no `Config`).
#[derive(Clone, Copy, Debug)]
pub struct ClusterParts<'a> {
    pub model: &'a TransformerSpec,
    pub gpu: &'a GpuSpec,
    pub scale_up: &'a ScaleUpSpec,
    pub fabric: &'a FabricSpec,
    pub topology: &'a TopologySpec,
    pub framework: &'a FrameworkSpec,
    pub prices: &'a Prices,
    pub training: &'a Training,
    pub reliability: &'a ReliabilitySpec,
    pub errors: &'a ErrorModel,
    pub gpus: u32,
}

impl<'a> ClusterParts<'a> {
    /// The parts of one configuration.
    pub fn of(cfg: &'a Config) -> Self {
        ClusterParts {
            model: &cfg.model,
            gpu: &cfg.gpu,
            scale_up: &cfg.scale_up,
            fabric: &cfg.fabric,
            topology: &cfg.topology,
            framework: &cfg.framework,
            prices: &cfg.prices,
            training: &cfg.training,
            reliability: &cfg.reliability,
            errors: &cfg.errors,
            gpus: cfg.gpus,
        }
    }
}

/// Stage 1 of an evaluation: what the cluster and the training run fix, whatever the parallel layout.
#[derive(Clone, Debug)]
pub struct ClusterStage<'a> {
    pub model: &'a TransformerSpec,
    pub gpu: &'a GpuSpec,
    pub scale_up: &'a ScaleUpSpec,
    pub fabric: &'a FabricSpec,
    pub framework: &'a FrameworkSpec,
    pub prices: &'a Prices,
    pub training: &'a Training,
    pub gpus: u32,
    pub(super) goodput: Goodput,
    pub(super) network: Network,
    pub(super) tput: Throughput,
    pub(super) bf16: Throughput,
    pub(super) cost: ClusterCost,
    /// The cluster's levelised cost of a busy second (`Tco::usd_per_busy_s`), for every layout's own-mode cost.
    pub(super) usd_per_busy_s: f64,
    pub(super) network_switches: f64,
    pub(super) model_flops_per_token: f64,
    pub(super) params_total: f64,
    pub(super) params_active: f64,
    /// Expected slowdown of the slowest of the job's GPUs (fraction of the GPU-bound time).
    pub(super) straggler_fraction: f64,
    /// The step's small synchronising all-reduces over every GPU.
    pub(super) sync_s: f64,
    /// Prediction-interval factors (low, high) on the step time.
    pub(super) interval: (f64, f64),
}

/// What a cluster stage takes from the model, the GPU, the framework, the training run and the GPU count alone:
/// the same for every fabric, network and price (a Monte Carlo design keeps it between samples).
#[derive(Clone, Copy, Debug)]
pub struct ModelTerms {
    tput: Throughput,
    bf16: Throughput,
    model_flops_per_token: f64,
    params_total: f64,
    params_active: f64,
    straggler_fraction: f64,
    interval: (f64, f64),
}

impl ModelTerms {
    pub fn of(p: &ClusterParts) -> Self {
        ModelTerms {
            tput: Throughput::new(p.gpu, p.training.precision, p.training.attention_kernel, p.framework),
            bf16: Throughput::new(p.gpu, Precision::Bf16, p.training.attention_kernel, p.framework),
            model_flops_per_token: model_flops_per_token(p.model, p.training),
            params_total: p.model.params_total(),
            params_active: p.model.params_active(),
            // A synchronous step runs at the pace of its slowest GPU: for per-GPU speeds with coefficient of
            // variation cv, the slowest of N is E[max of N standard normals] x cv slower than the mean (order
            // statistics; the straggler effect of Petrini et al., SC03, and Sinha et al., SC22, for GPUs).
            straggler_fraction: expected_max_of_normals(p.gpus as f64) * p.gpu.speed_cv,
            interval: p.errors.factors(p.gpu.generation, p.model.moe.is_some(), p.gpus),
        }
    }
}

impl<'a> ClusterStage<'a> {
    pub fn new(cfg: &'a Config) -> Result<Self, ConfigError> {
        Self::from_parts(ClusterParts::of(cfg))
    }

    pub fn from_parts(p: ClusterParts<'a>) -> Result<Self, ConfigError> {
        Self::from_parts_with(p, &ModelTerms::of(&p))
    }

    /// `from_parts`, with `m` the parts' `ModelTerms` (computed before, for the same model, GPU, framework,
    /// training run and GPU count).
    pub fn from_parts_with(p: ClusterParts<'a>, m: &ModelTerms) -> Result<Self, ConfigError> {
        let Priced { network, parts, switch_trays, cost } = Priced::of(&p)?;
        let (switches, links) = parts.single_points(p.fabric.dual_tor);
        let counts = PartCounts {
            gpus: p.gpus as f64,
            servers: cost.servers,
            nics: parts.nics,
            switches: switches + switch_trays,
            links,
        };
        let links = Interconnect { scale_up: p.scale_up, fabric: p.fabric, network: &network };
        let world = GroupPlacement::new(p.gpus, 1, p.scale_up.domain_gpus);
        let sync_s = SYNC_ALL_REDUCES_PER_STEP * links.collective_time_s(Collective::AllReduce, 4.0, &world);
        Ok(ClusterStage {
            model: p.model,
            gpu: p.gpu,
            scale_up: p.scale_up,
            fabric: p.fabric,
            framework: p.framework,
            prices: p.prices,
            training: p.training,
            gpus: p.gpus,
            tput: m.tput,
            bf16: m.bf16,
            network,
            usd_per_busy_s: Tco::new(&cost, &p.prices.economics).usd_per_busy_s(),
            cost,
            goodput: goodput(p.reliability, &counts, m.params_total),
            network_switches: parts.switches,
            model_flops_per_token: m.model_flops_per_token,
            params_total: m.params_total,
            params_active: m.params_active,
            straggler_fraction: m.straggler_fraction,
            sync_s,
            interval: m.interval,
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

/// A cluster's network with the job placed on it, its parts and what it costs: the first part of a cluster stage,
/// and all that a price needs (`cluster_cost`).
struct Priced {
    network: Network,
    parts: NetworkParts,
    switch_trays: f64,
    cost: ClusterCost,
}

impl Priced {
    fn of(p: &ClusterParts) -> Result<Self, ConfigError> {
        check_cluster(p.gpu, p.fabric, p.topology, p.training, p.gpus)?;
        let network = Network::new(p.fabric, p.topology, p.gpus, p.gpu.server_gpus).placed(p.training.placement);
        let parts = bom::parts(&network, &Cabling::new(&network, p.topology, p.prices));
        let switch_trays = p.scale_up.switch_trays(p.gpus);
        let cost = ClusterCost::new(p.gpus, p.gpu, p.prices, &parts, switch_trays);
        Ok(Priced { network, parts, switch_trays, cost })
    }
}

/// What a configuration's cluster costs (`ClusterStage::cost`), without the rest of the stage (its goodput,
/// throughputs, synchronising collectives): the same numbers, for a price that moves no step time.
pub fn cluster_cost(cfg: &Config) -> Result<ClusterCost, ConfigError> {
    Ok(Priced::of(&ClusterParts::of(cfg))?.cost)
}

/// Model FLOPs per trained token: the transformer's forward and backward, and three times the forward of the
/// multi-token-prediction modules.
fn model_flops_per_token(model: &TransformerSpec, training: &Training) -> f64 {
    let seq_len = training.seq_len as f64;
    model.training_flops_per_token(seq_len) + 3.0 * training.mtp_layers as f64 * model.mtp_flops_per_token(seq_len)
}

/// The checks of a cluster design that do not depend on the layout: FP8 needs a GPU that has it, a cluster of
/// several servers is built of whole servers (a run inside one server may use some of its GPUs, as the published
/// 4-GPU runs on 8-GPU servers of the validation table do), and the topology must carry the fabric's features
/// (`FabricSpec::check_topology`). A sweep uses it to estimate a cell's cost without building the stage.
pub fn check_cluster(
    gpu: &GpuSpec,
    fabric: &FabricSpec,
    topology: &TopologySpec,
    training: &Training,
    gpus: u32,
) -> Result<(), ConfigError> {
    if training.precision == Precision::Fp8 && gpu.peak_fp8_flops <= 0.0 {
        return Err(ConfigError::Fp8NotSupported);
    }
    if gpus > gpu.server_gpus && gpu.server_gpus > 0 && !gpus.is_multiple_of(gpu.server_gpus) {
        return Err(ConfigError::PartialServer { gpus, server_gpus: gpu.server_gpus });
    }
    fabric.check_topology(topology)
}

/// Stage 2: what the parallel degrees, micro-batch size and sequence parallelism fix (per micro-batch compute,
/// collective times, parameters per GPU), whatever the schedule (vpp), recomputation, ZeRO stage and overlap.
#[derive(Clone, Debug)]
pub struct LayoutStage {
    pub layout: Layout,
    pub(super) dense: LayerForward,
    pub(super) moe: LayerForward,
    /// The same (dense, MoE) layers at BF16 rates (the layers themselves when the run is BF16): what the framework's
    /// layer overhead is a fraction of (`step::with_framework`).
    pub(super) bf16_layers: [LayerForward; 2],
    pub(super) logits_forward_s: f64,
    /// Multi-token-prediction modules' forward on the last stage (their layers, projections, output layers).
    pub(super) mtp_forward_s: f64,
    /// The same with their layers at BF16 rates: their share of the layer overhead's base (`bf16_layers`).
    pub(super) mtp_forward_bf16_s: f64,
    /// A layer's TP collectives for one forward pass and their sequence-parallel re-gathers, by half and kind.
    pub(super) tp: TpComm,
    pub(super) cp_send_s: f64,
    pub(super) ep_dispatch_s: f64,
    /// One pipeline send at the pipeline's slowest edge (the steady state), and the chain of its pp - 1 sends in
    /// order (the fill or the drain).
    pub(super) pp_send_s: f64,
    pub(super) pp_chain_s: f64,
    pub(super) local: LocalParams,
    /// What each micro-batch's gradient accumulation costs outside the GEMMs: 0 with gradient accumulation fusion.
    pub(super) grad_accumulation_s: f64,
    /// Gradient all-reduce; gradient reduce-scatter; weight all-gather, for (non-expert, expert) parameters.
    pub(super) dp_all_reduce_s: f64,
    pub(super) dp_reduce_scatter_s: f64,
    pub(super) dp_all_gather_s: f64,
    /// ZeRO-3's gradient reduce-scatter and weight all-gather of all the parameters, as the framework issues them
    /// (one collective per weight tensor where it gathers by tensor, else the two above).
    pub(super) zero3_reduce_scatter_s: f64,
    pub(super) zero3_all_gather_s: f64,
    /// Activation bytes per token of one (dense, MoE) layer for recompute none, selective, full.
    pub(super) activation_bytes_per_token: [[f64; 3]; 2],
    pub(super) shard: Shard,
    /// Whether the collective times were set by a `link` (`link_schedule` keeps those of single-domain groups).
    linked: bool,
}

impl LayoutStage {
    /// Check the parallel degrees (not vpp or ZeRO, see `finish`) and precompute what they imply.
    pub fn new(c: &ClusterStage, par: &Parallelism) -> Result<Self, ConfigError> {
        let mut stage = Self::unlinked(c, par)?;
        stage.link(c, par);
        Ok(stage)
    }

    /// The stage without its collective times (all zero until `link`): the layout, compute, parameters and
    /// activations, which depend on the model, GPU, training run, GPU count and scale-up domain, not on the
    /// fabric, the network or the job's placement on it.
    pub fn unlinked(c: &ClusterStage, par: &Parallelism) -> Result<Self, ConfigError> {
        let model = c.model;
        let domain_gpus =
            job_domain_gpus(c.gpus, c.scale_up.domain_gpus, c.gpu.server_gpus, c.training.nvlink_segment_nodes)?;
        let lay = placement(model, par, c.training, c.gpus, domain_gpus)?;
        let shard = Shard::new(par, c.training);
        let h = model.hidden as f64;
        let rule = SelectiveRule::of(c.framework, c.training.recompute_modules);
        let [dense, moe] = layer_kinds(c, &shard, &c.tput, rule);
        let local = LocalParams::on_busiest_stage(model, par, &lay, c.training.mtp_layers);
        let grad_accumulation_s = accumulation_s(c.training, par, local.total(), &c.tput);
        let bf16_layers =
            if c.training.precision == Precision::Bf16 { [dense, moe] } else { layer_kinds(c, &shard, &c.bf16, rule) };
        let logits_forward_s = logits_forward_s(model, &shard, &c.bf16);
        // Multi-token prediction: per module one layer, a 2h -> h projection and another output layer.
        let mtp_projection = c.bf16.gemm_time_s(shard.tokens, h / shard.tp, 2.0 * h);
        let mtp_forward = |[dense, moe]: &[LayerForward; 2]| {
            let layer = if model.moe.is_some() { moe.total_s() } else { dense.total_s() };
            c.training.mtp_layers as f64 * (layer + mtp_projection + logits_forward_s)
        };
        let (mtp_forward_s, mtp_forward_bf16_s) = (mtp_forward(&[dense, moe]), mtp_forward(&bf16_layers));
        Ok(LayoutStage {
            dense,
            moe,
            bf16_layers,
            logits_forward_s,
            mtp_forward_s,
            mtp_forward_bf16_s,
            tp: TpComm::default(),
            cp_send_s: 0.0,
            ep_dispatch_s: 0.0,
            pp_send_s: 0.0,
            pp_chain_s: 0.0,
            local,
            grad_accumulation_s,
            dp_all_reduce_s: 0.0,
            dp_reduce_scatter_s: 0.0,
            dp_all_gather_s: 0.0,
            zero3_reduce_scatter_s: 0.0,
            zero3_all_gather_s: 0.0,
            activation_bytes_per_token: [false, true]
                .map(|moe_layer| activation_per_token(model, &shard, moe_layer, rule, gemm_input_bytes(c))),
            shard,
            layout: lay,
            linked: false,
        })
    }

    /// Set the collective times on `c`'s interconnect (its scale-up domain, fabric and network, the job placed on
    /// it): what a Monte Carlo sample of the fabric's figures or the placement moves, for a stage `unlinked` from a
    /// cluster stage of the same model, GPU, training run and GPU count.
    pub fn link(&mut self, c: &ClusterStage, par: &Parallelism) {
        self.link_zero(c, par, None);
    }

    /// `link` for `par`'s schedule only, on a stage linked before on cluster stages of the same scale-up domain:
    /// of the data-parallel collectives only those its ZeRO stage reads (`step::data_parallel`), the others NaN;
    /// the collectives of groups inside one scale-up domain timed once (they ride NVLink only, and no Monte Carlo
    /// input moves the scale-up domain's figures: only the fabric's, the network's and the placement's). What a
    /// Monte Carlo sample, which finishes each stage with one schedule, needs: the same numbers as `link` for that
    /// schedule, with fewer collectives timed.
    pub fn link_schedule(&mut self, c: &ClusterStage, par: &Parallelism) {
        self.link_zero(c, par, Some(par.zero_stage));
    }

    /// `link`, with the data-parallel collectives of ZeRO stage `zero` only (all three when None); with a ZeRO
    /// stage, a group inside one domain keeps the times of an earlier link.
    fn link_zero(&mut self, c: &ClusterStage, par: &Parallelism, zero: Option<u32>) {
        let (model, links, lay, shard) = (c.model, c.links(), &self.layout, &self.shard);
        let h = model.hidden as f64;
        let again =
            |groups: &[&GroupPlacement]| !(zero.is_some() && self.linked && groups.iter().all(|g| g.domains <= 1));
        if again(&[&lay.tp, &lay.etp]) {
            self.tp = tp_comm_s(&links, model, shard, lay);
        }
        if again(&[&lay.dp, &lay.expert_dp]) {
            let per_tensor = c.framework.zero3_gather_per_tensor;
            [
                self.dp_all_reduce_s,
                self.dp_reduce_scatter_s,
                self.dp_all_gather_s,
                self.zero3_reduce_scatter_s,
                self.zero3_all_gather_s,
            ] = dp_comm_s(&links, c.training, &self.local, lay, zero, per_tensor);
        }
        if again(&[&lay.cp]) {
            self.cp_send_s = cp_send_s(&links, model, par, shard, lay);
        }
        if again(&[&lay.ep]) {
            self.ep_dispatch_s = ep_dispatch_s(&links, c.training, model, par, shard, lay);
        }
        if again(&[&lay.pp]) {
            // Pipeline sends, split over TP ranks (scatter/gather, Narayanan SC21 Sec. 4.1).
            let bytes = shard.tokens * h * ACTIVATION_BYTES / shard.tp;
            (self.pp_send_s, self.pp_chain_s) = links.sends_s(bytes, &lay.pp);
        }
        self.linked = true;
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

/// The forward of a dense and of a MoE layer at `tput`'s rates (a dense model's "MoE layer" is its dense layer);
/// where the framework's selective recomputation reruns every other GEMM, those GEMMs join what it reruns; where
/// the run names Megatron-Core's modules, selective recomputation reruns those (`modules`).
fn layer_kinds(c: &ClusterStage, shard: &Shard, tput: &Throughput, rule: SelectiveRule) -> [LayerForward; 2] {
    let model = c.model;
    let mut dense = dense_layer_forward(model, shard, tput);
    let mut moe = match model.moe {
        Some(_) => moe_layer_forward(model, shard, tput, c.framework, c.training.moe_dispatcher),
        None => dense,
    };
    match rule {
        SelectiveRule::Korthikanti => {}
        SelectiveRule::AlternateMms => {
            dense.selective_recompute_s += recomputed_mm_s(model, shard, tput, true);
            moe.selective_recompute_s += recomputed_mm_s(model, shard, tput, model.moe.is_none());
        }
        SelectiveRule::Modules(m) => {
            dense.selective_recompute_s = modules_rerun_s(m, &rerun_s(model, shard, tput, &dense, false));
            moe.selective_recompute_s = match model.moe {
                Some(_) => modules_rerun_s(m, &rerun_s(model, shard, tput, &moe, true)),
                None => dense.selective_recompute_s,
            };
        }
    }
    [dense, moe]
}

/// Activation bytes per token of one dense (or MoE) layer for recompute none, selective, full, the GEMMs keeping
/// their inputs at `gemm_input_bytes` per element (the function of that name says which).
fn activation_per_token(
    model: &TransformerSpec,
    shard: &Shard,
    moe_layer: bool,
    rule: SelectiveRule,
    gemm_input_bytes: f64,
) -> [f64; 3] {
    let moe_layer = moe_layer && model.moe.is_some();
    [Recompute::None, Recompute::Selective, Recompute::Full]
        .map(|r| activation_bytes_per_token_per_layer(model, shard, r, moe_layer, rule, gemm_input_bytes))
}

/// Bytes per element a GEMM keeps of its activation input for the backward: FP8's one byte where the framework
/// keeps the quantised copy (Transformer Engine's Linear keeps the FP8 input, column-wise, when FP8 is on:
/// module/linear.py, NVIDIA/TransformerEngine d0067d0; MXFP8's scale, a byte per 32, left out), BF16's two
/// otherwise.
fn gemm_input_bytes(c: &ClusterStage) -> f64 {
    let quantized = c.training.precision == Precision::Fp8 && c.framework.fp8_keeps_quantized_inputs;
    if quantized {
        1.0
    } else {
        ACTIVATION_BYTES
    }
}
