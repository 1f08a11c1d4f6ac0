//! The step's time: one micro-batch on the busiest pipeline stage with the communication it hides, then the
//! step around it (bubble, pipeline sends, data parallelism, optimizer, stragglers), with one compute budget
//! for everything that hides behind compute; and what the framework adds to the kernels (`crate::software`):
//! per layer, per micro-batch and per step, and the compute that overlapped communication slows.

use crate::network::collectives::exposed_and_hidden;
use crate::software::FrameworkSpec;
use crate::step::compute::LayerForward;
use crate::step::modules::RecomputeModule;
use crate::step::parallelism::{Overlap, Parallelism, Recompute, StageSplit};

use super::ep_overlap::{unpaired_share, PairedLayer};
use super::stages::{ClusterStage, LayoutStage};
use super::zero3::{zero3_gathers, zero3_list_host_s};
use super::{HiddenComm, StepBreakdown, DP_BUCKET_MIN_PARAMS, DP_BUCKET_PARAMS_PER_RANK};

/// One micro-batch on the busiest stage: its compute and the TP, CP and EP communication around it.
#[derive(Clone, Debug, Default)]
pub(super) struct MicroBatch {
    /// Forward and backward of its layers plus the output layer and loss (no recomputation).
    compute_s: f64,
    recompute_s: f64,
    tp_exposed_s: f64,
    tp_hidden_s: f64,
    cp_exposed_s: f64,
    cp_hidden_s: f64,
    ep_exposed_s: f64,
    ep_hidden_s: f64,
    /// The framework's time: its layer overhead, its fixed time per micro-batch, and the compute lost to the TP,
    /// CP and EP traffic hidden behind it.
    framework_s: f64,
    /// The MoE layers' waits for the host's launches (`LayerForward::host_wait_s`): the GPU idles, and hides
    /// nothing behind it.
    host_wait_s: f64,
    /// What the layer overhead is a fraction of: the compute and recomputation with the layers at BF16 rates.
    overhead_base_s: f64,
}

impl MicroBatch {
    /// Wall time of the micro-batch: compute, recomputation, exposed communication, the framework's time and the
    /// waits for the host.
    fn total_s(&self) -> f64 {
        self.compute_s
            + self.recompute_s
            + self.tp_exposed_s
            + self.cp_exposed_s
            + self.ep_exposed_s
            + self.framework_s
            + self.host_wait_s
    }
    /// Compute time not yet spent hiding this micro-batch's own TP, CP and EP traffic.
    /// (The framework's time is GPU time too: its kernels and gaps hide traffic as the model's own kernels do.)
    fn spare_compute_s(&self) -> f64 {
        self.compute_s + self.recompute_s + self.framework_s - self.hidden_s()
    }
    fn hidden_s(&self) -> f64 {
        self.tp_hidden_s + self.cp_hidden_s + self.ep_hidden_s
    }
}

/// The slowest of the first, a middle and the last pipeline stage: uneven splits, the leading dense layers and
/// the output layer (and MTP modules) on the last stage make them differ; the pipeline runs at its pace.
pub(super) fn busiest_micro_batch(
    c: &ClusterStage,
    s: &LayoutStage,
    par: &Parallelism,
    overlap: &Overlap,
) -> MicroBatch {
    let split = &s.layout.stages;
    let stage_time = |stage: usize| {
        let last = stage == StageSplit::LAST || par.pp == 1;
        let mb = micro_batch_time(c, s, par, overlap, split.layers[stage], split.dense[stage], last);
        with_framework(c.framework, mb)
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
    c: &ClusterStage,
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
    let (logits_s, [mtp_s, mtp_bf16_s]) =
        if last_stage { (s.logits_forward_s, [s.mtp_forward_s, s.mtp_forward_bf16_s]) } else { (0.0, [0.0; 2]) };
    // The output layer and MTP modules (forward and backward), and the gradients' accumulation where the framework
    // does not fuse it into the weight-gradient GEMMs; the MTP modules' forward again under full recomputation.
    let full = if par.recompute == Recompute::Full { 1.0 } else { 0.0 };
    let beyond_layers = |mtp: f64| (3.0 * (logits_s + mtp) + s.grad_accumulation_s, full * mtp);
    let (beyond_layers_s, mtp_recompute_s) = beyond_layers(mtp_s);
    let counts = (dense_layers, moe_layers, par.recompute);
    let (layers_s, layers_recompute_s) = layers_compute_s([dense, moe], counts);
    let compute_s = layers_s + beyond_layers_s;
    let recompute_s = layers_recompute_s + mtp_recompute_s;
    // The layer overhead's base: the same work with every layer, the MTP modules' included, at BF16 rates.
    let (bf16_s, bf16_recompute_s) = layers_compute_s([&s.bf16_layers[0], &s.bf16_layers[1]], counts);
    let (bf16_beyond_s, bf16_mtp_recompute_s) = beyond_layers(mtp_bf16_s);
    let overhead_base_s = bf16_s + bf16_recompute_s + bf16_beyond_s + bf16_mtp_recompute_s;
    let own = if c.training.tp_async_allreduce { c.framework.tp_backward_overlap } else { 0.0 };
    let rerun = mlp_reruns(c, par, dense_layers, moe_layers);
    let (tp_exposed_s, tp_hidden_s) = tensor_parallel(s, par, overlap, own, layers, dense_layers, rerun);
    // CP: (c - 1) ring steps forward and twice that backward, overlapped with attention by design.
    let cp_s = layers * 3.0 * (par.cp as f64 - 1.0) * s.cp_send_s;
    let attention_window_s = dense_layers * (dense.attention_s + dense.attention_backward_s)
        + moe_layers * (moe.attention_s + moe.attention_backward_s);
    let (cp_exposed_s, cp_hidden_s) = exposed_and_hidden(cp_s, 1.0, attention_window_s);
    // EP: dispatch and combine per pass (a third where the MoE block is rerun), hidden as a paired forward and
    // backward allow (`ep_hideable_s`) and within MoE compute not already hiding TP or CP traffic (one compute
    // budget: the same GEMMs cannot hide two transfers' worth twice).
    let moe_rerun = reruns(c, par, RecomputeModule::Moe);
    let passes = if par.recompute == Recompute::Full || moe_rerun { 3.0 } else { 2.0 };
    let ep_s = moe_layers * 2.0 * passes * s.ep_dispatch_s;
    let ep_window_s =
        (moe_layers * moe.forward_backward_s()).min(compute_s + recompute_s - tp_hidden_s - cp_hidden_s).max(0.0);
    let ep_hidden_s = (overlap.ep * ep_hideable_s(s, par, moe_layers, passes)).min(ep_window_s).min(ep_s);
    let ep_exposed_s = ep_s - ep_hidden_s;
    MicroBatch {
        compute_s,
        recompute_s,
        tp_exposed_s,
        tp_hidden_s,
        cp_exposed_s,
        cp_hidden_s,
        ep_exposed_s,
        ep_hidden_s,
        framework_s: 0.0,
        host_wait_s: moe_layers * moe.host_wait_s,
        overhead_base_s,
    }
}

/// Of one micro-batch's EP traffic on the stage, what can hide at full overlap: in the passes the schedule pairs
/// (all but the warm-up and cool-down ones), what each layer's forward and backward hide as a pair (`ep_overlap`);
/// a rerun forward's dispatch and combine where compute is left (the window `micro_batch_time` caps it to).
fn ep_hideable_s(s: &LayoutStage, par: &Parallelism, moe_layers: f64, passes: f64) -> f64 {
    let moe = &s.moe;
    let (forward_s, backward_s) = (moe.total_s(), moe.forward_backward_s() - moe.total_s());
    let layer = PairedLayer {
        pre_dispatch_s: forward_s - moe.experts_s,
        experts_s: moe.experts_s,
        pre_dispatch_backward_s: backward_s - 2.0 * moe.experts_s,
        all_to_all_s: s.ep_dispatch_s,
    };
    let paired = 1.0 - unpaired_share(par.pp, par.vpp, s.layout.micro_batches);
    moe_layers * (paired * layer.hidden_s() + (passes - 2.0) * 2.0 * s.ep_dispatch_s)
}

/// (dense, MoE) layers whose MLP half selective recomputation reruns by the run's modules (`mlp` on dense layers,
/// `moe` on MoE layers): the MLP's tensor-parallel collectives run again with it (`TpComm::mlp_pass_s`).
fn mlp_reruns(c: &ClusterStage, par: &Parallelism, dense_layers: f64, moe_layers: f64) -> [f64; 2] {
    let count = |m: RecomputeModule, layers: f64| if reruns(c, par, m) { layers } else { 0.0 };
    [count(RecomputeModule::Mlp, dense_layers), count(RecomputeModule::Moe, moe_layers)]
}

/// Whether selective recomputation reruns module `m` in this run (it names the module).
fn reruns(c: &ClusterStage, par: &Parallelism, m: RecomputeModule) -> bool {
    par.recompute == Recompute::Selective && c.training.recompute_modules.contains(m)
}

/// Forward and backward, and recomputation, of `dense_layers` dense and `moe_layers` MoE layers of the given kinds:
/// 2x forward for GEMMs and element-wise work, 2.5x for fused attention (step::compute); selective recomputation reruns
/// what `selective_recompute_s` names, full recomputation the layers' forward.
fn layers_compute_s(
    [dense, moe]: [&LayerForward; 2],
    (dense_layers, moe_layers, recompute): (f64, f64, Recompute),
) -> (f64, f64) {
    let compute_s = dense_layers * dense.forward_backward_s() + moe_layers * moe.forward_backward_s();
    let recompute_s = match recompute {
        Recompute::None => 0.0,
        Recompute::Selective => dense_layers * dense.selective_recompute_s + moe_layers * moe.selective_recompute_s,
        Recompute::Full => dense_layers * dense.total_s() + moe_layers * moe.total_s(),
    };
    (compute_s, recompute_s)
}

/// Tensor parallelism of one micro-batch on `layers` layers, (exposed, hidden): two collectives per layer and
/// pass (a third pass with full recomputation) hide behind the layers' GEMMs by `overlap.tp`; where the framework
/// overlaps the backward pass's collectives by itself (`tp_backward_overlap`, Megatron-LM's asynchronous input-
/// gradient all-reduce), one pass's worth hides behind the weight-gradient GEMMs of the layers' first projections
/// (QKV or MLA's up-projections, the MLP's first GEMM: as long as their forward). With sequence parallelism the
/// backward all-gathers those GEMMs' inputs again, hidden behind their data-gradient GEMMs whatever the setting.
/// A MoE layer's MLP half runs over its expert-TP group (none at etp 1: `TpComm`); `mlp_reruns` (dense, MoE) layers
/// rerun their MLP's collectives.
fn tensor_parallel(
    s: &LayoutStage,
    par: &Parallelism,
    overlap: &Overlap,
    own: f64,
    layers: f64,
    dense_layers: f64,
    mlp_reruns: [f64; 2],
) -> (f64, f64) {
    let (dense, moe) = (&s.dense, &s.moe);
    let moe_layers = layers - dense_layers;
    let passes = if par.recompute == Recompute::Full { 3.0 } else { 2.0 };
    let pass_s = dense_layers * s.tp.pass_s(0) + moe_layers * s.tp.pass_s(1);
    let tp_s = passes * pass_s + mlp_reruns[0] * s.tp.mlp_pass_s[0] + mlp_reruns[1] * s.tp.mlp_pass_s[1];
    let gemm_window_s = 3.0 * (dense_layers * dense.gemm_s + moe_layers * moe.gemm_s);
    let first_gemms_s = dense_layers * dense.regather_window_s + moe_layers * moe.regather_window_s;
    // What the framework's asynchronous backward hides first, behind the weight gradients of the first GEMMs; the
    // rest hides by the overlap setting behind what is left of the layers' GEMMs.
    let asynchronous_s = (own * pass_s).min(first_gemms_s);
    let (mut exposed, mut hidden) =
        exposed_and_hidden(tp_s - asynchronous_s, overlap.tp, gemm_window_s - asynchronous_s);
    hidden += asynchronous_s;
    let regather_s = dense_layers * s.tp.regather_s(0) + moe_layers * s.tp.regather_s(1);
    let (e, h) = exposed_and_hidden(regather_s, 1.0, first_gemms_s);
    exposed += e;
    hidden += h;
    (exposed, hidden)
}

/// The micro-batch with the framework's time: its layer overhead, its fixed time per micro-batch, and the compute
/// lost to the traffic hidden behind it. The layer overhead (norms, casts and element-wise work split over more
/// kernels than the model counts, launch gaps) is a fraction of the layers' compute at BF16 rates, recomputation
/// included: that work is set by the layer's shapes, not by its GEMMs' format, so FP8 GEMMs, which halve the GEMMs'
/// time, leave it as it is (validated: with the fraction on the run's own compute, Megatron-Core's judged rows
/// came out 3-17 points slower in BF16 than in FP8 on the same GPU, docs/design/fidelity-v3.md Sec. 13).
fn with_framework(f: &FrameworkSpec, mb: MicroBatch) -> MicroBatch {
    let framework_s =
        f.layer_overhead * mb.overhead_base_s + f.microbatch_overhead_s + f.overlap_interference * mb.hidden_s();
    MicroBatch { framework_s, ..mb }
}

/// A step's time by component (exposed) and the communication hidden behind compute.
#[derive(Clone, Debug)]
pub(super) struct Step {
    pub(super) breakdown: StepBreakdown,
    pub(super) hidden: HiddenComm,
}

pub(super) fn step_time(
    c: &ClusterStage,
    s: &LayoutStage,
    par: &Parallelism,
    overlap: &Overlap,
    mb: &MicroBatch,
) -> Step {
    let m = s.layout.micro_batches as f64;
    let compute_s = m * mb.compute_s;
    // Pipeline bubble: (p - 1) / v micro-batch times (Narayanan et al. SC21, Sec. 2.2).
    let bubble_s = (par.pp as f64 - 1.0) / par.vpp as f64 * mb.total_s();
    // The interleaved schedule's drain also hides DP and PP traffic.
    let drain_s = if par.vpp > 1 { bubble_s / 2.0 } else { 0.0 };
    let (pp_exposed, pp_hidden) = pipeline_sends(s, par, overlap, compute_s);
    let gathers = zero3_gathers(c, par);
    let (dp_exposed, dp_hidden) = data_parallel(c, s, par, overlap, mb, drain_s, gathers.bytes);
    // One compute budget for the step: what TP, CP and EP hide per micro-batch is spent; DP (and ZeRO-3
    // gathers) and PP share the rest (plus the interleaved drain). Without this the same compute would hide
    // several transfers, and faster compute could make a step slower.
    let budget = (m * mb.spare_compute_s() + drain_s).max(0.0);
    let [(dp_exposed, dp_hidden), (pp_exposed, pp_hidden)] =
        share_budget(budget, [(dp_exposed, dp_hidden), (pp_exposed, pp_hidden)]);
    let recompute_s = m * mb.recompute_s;
    let f = c.framework;
    // The framework's time: per micro-batch (its share of the bubble is in bubble_s), per step, and the compute
    // that the DP and PP traffic hidden behind it loses.
    let framework_s = m * mb.framework_s + f.step_overhead_s + f.overlap_interference * (dp_hidden + pp_hidden);
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
        framework_s,
        host_wait_s: m * mb.host_wait_s + zero3_list_host_s(c, s, par, gathers.count),
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

/// Pipeline sends, (exposed, hidden): a forward and a backward per micro-batch and virtual stage, which the
/// schedule may overlap with the next chunk's compute (Megatron-LM's overlap_p2p_comm posts them and waits only
/// before the chunk that needs them, pipeline_parallel/schedules.py), each at the pipeline's slowest edge, and the
/// fill's and drain's chains of p - 1 sends, which an idle stage in the bubble waits for whatever the overlap (the
/// first micro-batch's round trip takes at least p (T_F + T_B) + 2 (p - 1) T_comm: Qi et al., Zero Bubble Pipeline
/// Parallelism, ICLR 2024, App. B).
fn pipeline_sends(s: &LayoutStage, par: &Parallelism, overlap: &Overlap, compute_s: f64) -> (f64, f64) {
    if par.pp <= 1 {
        return (0.0, 0.0);
    }
    let (m, v) = (s.layout.micro_batches as f64, par.vpp as f64);
    let (exposed, hidden) = exposed_and_hidden(2.0 * v * m * s.pp_send_s, overlap.pp, compute_s);
    (exposed + 2.0 * s.pp_chain_s, hidden)
}

/// Data parallelism, (exposed, hidden): gradients reduced once per step (all-reduce; reduce-scatter + all-gather
/// of the weights when optimizer states are sharded), after every micro-batch where ZeRO-2/3 shard them and the
/// framework reduces as it goes; ZeRO-3 also all-gathers the weights for every
/// micro-batch's forward, and again for its backward when it reshards after the forward, and for a recomputed
/// forward where the framework gathers from submodule hooks (`zero3_gathers` passes over the weights, by bytes), as
/// the framework issues them (by tensor or by flat bucket), hidden only where it prefetches them. The last Megatron
/// bucket is always exposed.
fn data_parallel(
    c: &ClusterStage,
    s: &LayoutStage,
    par: &Parallelism,
    overlap: &Overlap,
    mb: &MicroBatch,
    drain_s: f64,
    zero3_gathers: f64,
) -> (f64, f64) {
    let (reduce_s, gather_s) = match par.zero_stage {
        0 => (s.dp_all_reduce_s, 0.0),
        1 | 2 => (s.dp_reduce_scatter_s, s.dp_all_gather_s),
        _ => (s.zero3_reduce_scatter_s, 0.0),
    };
    let m = s.layout.micro_batches;
    // ZeRO-2/3 reduce the sharded gradients after each micro-batch where the framework does (`FrameworkSpec`).
    let reductions = c.framework.sharded_grad_reductions(par.zero_stage, par.pp, m) as f64;
    let dp_step = reductions * reduce_s + gather_s;
    let bucket = DP_BUCKET_MIN_PARAMS.max(DP_BUCKET_PARAMS_PER_RANK * s.layout.dp.size as f64);
    let last_bucket = (reduce_s + gather_s) * (bucket / s.local.total()).min(1.0);
    // Reduction hides behind the last micro-batch's backward (and, interleaved, the drain of earlier chunks),
    // an earlier micro-batch's behind its own backward and the next forward; the sharded weights' all-gather
    // behind the next step's first forward.
    let mut window = 2.0 / 3.0 * mb.compute_s + drain_s + (reductions - 1.0) * mb.compute_s;
    if par.zero_stage >= 1 {
        window += mb.compute_s / 3.0;
    }
    let (mut exposed, mut hidden) = exposed_and_hidden(dp_step - last_bucket, overlap.dp, window);
    exposed += last_bucket;
    if par.zero_stage >= 3 {
        let gathers = c.framework.weight_gathers_per_step(par.pp, par.reshard_after_forward, m, zero3_gathers);
        // A framework that waits for each gather (no prefetch) hides none of them, whatever the overlap setting.
        let hides = if c.framework.zero3_prefetch { overlap.dp } else { 0.0 };
        let m = m as f64;
        let (e, h) = exposed_and_hidden(gathers * s.zero3_all_gather_s, hides, m * mb.compute_s);
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

/// Optimizer step: memory-bound over the local parameters it updates (sharded under ZeRO 1-3), at the framework's
/// bytes per parameter, and the main-gradient buffer where the framework zeroes it each step (sharded under ZeRO
/// 2-3, as `step::memory` holds it; docs/design/fidelity-v3.md Sec. 36).
fn optimizer_step_s(c: &ClusterStage, s: &LayoutStage, par: &Parallelism) -> f64 {
    let (local, lay) = (&s.local, &s.layout);
    let sharded = local.dense / lay.dp.size as f64 + local.expert / lay.expert_dp.size as f64;
    let updated = if par.zero_stage >= 1 { sharded } else { local.total() };
    let f = c.framework;
    let zeroed_bytes = if f.zeroes_grad_buffer {
        let grads = if par.zero_stage >= 2 { sharded } else { local.total() };
        grads * c.training.grad_reduce_dtype.bytes()
    } else {
        0.0
    };
    (updated * f.optimizer_bytes_per_param + zeroed_bytes) / c.tput.hbm_bytes_per_s
}
