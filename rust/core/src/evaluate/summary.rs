//! What an evaluation reports besides the step time: the busiest GPU's memory, FLOP rates, and the whole run's
//! time, energy and cost, gathered into the `Evaluation`.

use crate::cost::economics::{run_cost_at, RunCost};
use crate::network::bom;
use crate::step::memory::{activation_bytes, model_state_bytes, MemoryPerGpu, StageActivations, WEIGHT_BYTES};
use crate::step::parallelism::{Parallelism, Precision, Recompute, StageSplit};

use super::stages::{ClusterStage, LayoutStage};
use super::step::Step;
use super::Evaluation;

/// Memory of the busiest GPU.
pub(super) fn memory_per_gpu(c: &ClusterStage, s: &LayoutStage, par: &Parallelism) -> MemoryPerGpu {
    let (model, lay, local) = (c.model, &s.layout, &s.local);
    let grad_bytes = c.training.grad_reduce_dtype.bytes();
    let (dense_w, mut dense_g, dense_o) =
        model_state_bytes(local.dense, lay.dp.size as f64, par.zero_stage, grad_bytes);
    let (exp_w, mut exp_g, exp_o) =
        model_state_bytes(local.expert, lay.expert_dp.size as f64, par.zero_stage, grad_bytes);
    if c.framework.keeps_full_gradients(par.zero_stage, par.pp, lay.micro_batches) {
        // Reduced once, after the last micro-batch: the stage's whole gradients until then.
        (dense_g, exp_g) = (local.dense * grad_bytes, local.expert * grad_bytes);
    }
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
    let per_token = StageActivations {
        first_stage: stage_bytes(StageSplit::FIRST, index, 0.0),
        last_stage: stage_bytes(StageSplit::LAST, index, mtp),
        largest_layer_without_recompute: dense_bytes[0].max(if model.moe.is_some() { moe_bytes[0] } else { 0.0 }),
    };
    let activations_bytes = activation_bytes(model, par, lay, &s.shard, &per_token, mtp);
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
    (steps, time_to_train_s, run_cost_at(time_to_train_s, c.gpus, &c.cost, c.prices, c.usd_per_busy_s))
}

pub(super) fn summarise(
    c: &ClusterStage,
    s: &LayoutStage,
    par: &Parallelism,
    step: Step,
    memory: MemoryPerGpu,
) -> Evaluation {
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
        network_tiers: bom::tiers(&c.network),
        network_switches: c.network_switches,
        interruptions_per_day: c.goodput.interruptions_per_day,
        checkpoint_interval_s: c.goodput.checkpoint_interval_s,
        goodput: c.goodput.goodput,
    }
}
