//! The training evaluation's metrics (`crate::evaluate::Evaluation`), in export order.

use super::{Direction, Group, Kind, Metric};
use crate::cost::economics::{JOULES_PER_MWH, SECONDS_PER_DAY};

/// Every metric of an evaluation, in export order.
pub const METRICS: &[Metric] = &[
    metric!("feasible", "", Flag, Result, "fits in the GPU's memory", |e| e.feasible as u8 as f64),
    metric!("step_time_s", "s", Float, Result, "one optimizer step", |e| e.step_time_s),
    metric!("step_time_s_lo", "s", Float, Result, "step time, low end of the prediction interval", |e| e
        .step_time_s_lo),
    metric!("step_time_s_hi", "s", Float, Result, "step time, high end of the prediction interval", |e| e
        .step_time_s_hi),
    metric!("tokens_per_s", "tokens/s", Float, Result, "training tokens per second, whole cluster", |e| e.tokens_per_s),
    metric!(
        "mfu",
        "fraction",
        Float,
        Result,
        "model FLOPs utilisation (no recomputation counted)",
        |e| e.mfu,
        Maximise
    ),
    metric!("hfu", "fraction", Float, Result, "hardware FLOPs utilisation (recomputation counted)", |e| e.hfu),
    metric!("tflops_per_gpu", "TFLOP/s", Float, Result, "model TFLOP/s per GPU", |e| e.tflops_per_gpu),
    metric!(
        "scaling_efficiency",
        "fraction",
        Float,
        Result,
        "compute_s / step_time_s: the share of a step spent on the model's arithmetic",
        |e| e.scaling_efficiency
    ),
    metric!("memory_per_gpu_gb", "GB", Float, Result, "memory of the busiest GPU", |e| e.memory.total_bytes / 1e9),
    metric!("memory_margin_gb", "GB", Float, Result, "HBM left on the busiest GPU (negative: does not fit)", |e| e
        .memory
        .margin_bytes
        / 1e9),
    metric!("compute_s", "s", Float, Step, "forward and backward compute", |e| e.breakdown.compute_s),
    metric!("recompute_s", "s", Float, Step, "activation recomputation", |e| e.breakdown.recompute_s),
    metric!("tp_comm_s", "s", Float, Step, "exposed tensor-parallel communication", |e| e.breakdown.tp_comm_s),
    metric!("pp_comm_s", "s", Float, Step, "exposed pipeline sends", |e| e.breakdown.pp_comm_s),
    metric!("dp_comm_s", "s", Float, Step, "exposed data-parallel communication", |e| e.breakdown.dp_comm_s),
    metric!("cp_comm_s", "s", Float, Step, "exposed context-parallel communication", |e| e.breakdown.cp_comm_s),
    metric!("ep_comm_s", "s", Float, Step, "exposed expert-parallel all-to-all", |e| e.breakdown.ep_comm_s),
    metric!("bubble_s", "s", Float, Step, "pipeline fill and drain", |e| e.breakdown.bubble_s),
    metric!("optimizer_s", "s", Float, Step, "optimizer step", |e| e.breakdown.optimizer_s),
    metric!(
        "overhead_s",
        "s",
        Float,
        Step,
        "per-step overhead: waiting for the slowest GPU, synchronising all-reduces",
        |e| e.breakdown.overhead_s
    ),
    metric!(
        "framework_s",
        "s",
        Float,
        Step,
        "what the training framework adds to the kernels: per layer, micro-batch and step, and overlap interference",
        |e| e.breakdown.framework_s
    ),
    metric!(
        "host_wait_s",
        "s",
        Float,
        Step,
        "the GPU waiting for the host: MoE layers' kernel launches, ZeRO-3 collectives issued by tensor",
        |e| e.breakdown.host_wait_s
    ),
    metric!("tp_comm_hidden_s", "s", Float, Hidden, "TP communication hidden behind compute", |e| e.hidden.tp_comm_s),
    metric!("pp_comm_hidden_s", "s", Float, Hidden, "PP sends hidden behind compute", |e| e.hidden.pp_comm_s),
    metric!("dp_comm_hidden_s", "s", Float, Hidden, "DP communication hidden behind compute", |e| e.hidden.dp_comm_s),
    metric!("cp_comm_hidden_s", "s", Float, Hidden, "CP communication hidden behind compute", |e| e.hidden.cp_comm_s),
    metric!("ep_comm_hidden_s", "s", Float, Hidden, "EP all-to-all hidden behind compute", |e| e.hidden.ep_comm_s),
    metric!("weights_bytes", "bytes", Float, Memory, "weights", |e| e.memory.weights_bytes),
    metric!("gradients_bytes", "bytes", Float, Memory, "gradients", |e| e.memory.gradients_bytes),
    metric!("optimizer_bytes", "bytes", Float, Memory, "optimizer states", |e| e.memory.optimizer_bytes),
    metric!("activations_bytes", "bytes", Float, Memory, "activations kept for backward", |e| e
        .memory
        .activations_bytes),
    metric!("reserve_bytes", "bytes", Float, Memory, "runtime reserve", |e| e.memory.reserve_bytes),
    metric!("memory_per_gpu_bytes", "bytes", Float, Memory, "total", |e| e.memory.total_bytes),
    metric!("hbm_bytes", "bytes", Float, Memory, "the GPU's HBM", |e| e.memory.hbm_bytes),
    metric!("memory_margin_bytes", "bytes", Float, Memory, "HBM minus total", |e| e.memory.margin_bytes),
    metric!("micro_batches", "", Count, Run, "micro-batches per step per pipeline", |e| e.micro_batches as f64),
    metric!("steps", "", Count, Run, "optimizer steps to train the tokens", |e| e.steps),
    metric!("time_to_train_s", "s", Float, Run, "steps x step time / goodput", |e| e.time_to_train_s),
    metric!(
        "time_to_train_days",
        "days",
        Float,
        Run,
        "time_to_train_s in days",
        |e| e.time_to_train_s / SECONDS_PER_DAY,
        Minimise
    ),
    metric!("time_to_train_days_lo", "days", Float, Run, "time to train, low end of the prediction interval", |e| e
        .time_to_train_s_lo
        / SECONDS_PER_DAY),
    metric!("time_to_train_days_hi", "days", Float, Run, "time to train, high end of the prediction interval", |e| e
        .time_to_train_s_hi
        / SECONDS_PER_DAY),
    metric!(
        "energy_mwh",
        "MWh",
        Float,
        Run,
        "facility energy of the run (IT power x PUE)",
        |e| e.energy_j / JOULES_PER_MWH,
        Minimise
    ),
    metric!("cost_to_train_usd", "USD", Float, Run, "the run's cost in cost_mode", |e| e.cost_to_train_usd, Minimise),
    metric!("cost_to_train_usd_lo", "USD", Float, Run, "cost to train, low end of the prediction interval", |e| e
        .cost_to_train_usd_lo),
    metric!("cost_to_train_usd_hi", "USD", Float, Run, "cost to train, high end of the prediction interval", |e| e
        .cost_to_train_usd_hi),
    metric!("cost_rent_usd", "USD", Float, Run, "GPU-hours at the rental price", |e| e.cost_rent_usd),
    metric!(
        "cost_own_usd",
        "USD",
        Float,
        Run,
        "the run's busy time at the cluster's levelised total cost of ownership",
        |e| e.cost_own_usd
    ),
    metric!(
        "usd_per_million_tokens",
        "USD/Mtoken",
        Float,
        Run,
        "cost_to_train_usd per million training tokens",
        |e| e.usd_per_million_tokens,
        Minimise
    ),
    metric!("capex_usd", "USD", Float, Cluster, "servers, network, spares, installation, management network", |e| e
        .capex_usd),
    metric!(
        "network_capex_usd",
        "USD",
        Float,
        Cluster,
        "network hardware: NICs, switches, optics, copper, fibre, NVLink trays",
        |e| e.network_capex_usd,
        Minimise
    ),
    metric!("it_power_w", "W", Float, Cluster, "IT power while training", |e| e.it_power_w),
    metric!(
        "network_tiers",
        "",
        Count,
        Cluster,
        "switch tiers as built (1 for a dragonfly's routers, 0 for a torus)",
        |e| e.network_tiers as f64
    ),
    metric!("network_switches", "", Count, Cluster, "scale-out switches (routers for a dragonfly)", |e| e
        .network_switches),
    metric!(
        "interruptions_per_day",
        "1/day",
        Float,
        Cluster,
        "expected job interruptions a day from the cluster's parts",
        |e| e.interruptions_per_day
    ),
    metric!("checkpoint_interval_s", "s", Float, Cluster, "Young/Daly optimal time between checkpoints", |e| e
        .checkpoint_interval_s),
    metric!("goodput", "fraction", Float, Cluster, "share of wall-clock time that advances training", |e| e.goodput),
    metric!("params_total", "", Float, Model, "parameters", |e| e.params_total),
    metric!("params_active", "", Float, Model, "parameters active per token (MoE: routed top-k)", |e| e.params_active),
    metric!("model_flops_per_token", "FLOP", Float, Model, "training FLOPs per token (3 x forward)", |e| e
        .model_flops_per_token),
];

/// The metric with this name.
pub fn metric(name: &str) -> Option<&'static Metric> {
    super::find(METRICS, name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::evaluate;
    use crate::examples::reference;
    use crate::metrics::{named_for_unit, Kind};

    #[test]
    fn names_are_unique_and_carry_their_units() {
        crate::metrics::assert_named_once_with_units(METRICS, "metric");
        // The rule itself: interval ends carry the unit before _lo / _hi; units without a suffix ask for none.
        assert!(named_for_unit("step_time_s_hi", "s") && !named_for_unit("step_time", "s"));
        assert!(named_for_unit("mfu", "fraction") && named_for_unit("interruptions_per_day", "1/day"));
    }

    #[test]
    fn objectives_are_the_metrics_with_a_direction() {
        let e = evaluate(&reference()).unwrap();
        let objectives: Vec<&str> = METRICS.iter().filter(|m| m.direction.is_some()).map(|m| m.name).collect();
        assert!(objectives.contains(&"time_to_train_days") && objectives.contains(&"mfu"), "{objectives:?}");
        let mfu = metric("mfu").unwrap();
        assert_eq!(mfu.minimised(&e), -e.mfu); // maximised: the sweep minimises its negation
        assert_eq!(metric("cost_to_train_usd").unwrap().minimised(&e), e.cost_to_train_usd);
    }

    #[test]
    fn conversions_hold() {
        let e = evaluate(&reference()).unwrap();
        let get = |name| (metric(name).unwrap().value)(&e);
        assert!((get("time_to_train_days") * 86400.0 - e.time_to_train_s).abs() < 1e-6);
        assert!((get("energy_mwh") * 3.6e9 - e.energy_j).abs() < 1e-3);
        assert_eq!(get("feasible"), 1.0);
        for m in METRICS.iter().filter(|m| m.unit == "fraction") {
            let v = (m.value)(&e);
            assert!((0.0..=1.0).contains(&v), "{} = {v} is not a fraction", m.name);
        }
        for m in METRICS.iter().filter(|m| m.kind == Kind::Count) {
            let v = (m.value)(&e);
            assert_eq!(v, v.round(), "{} is a count but {v} is not whole", m.name);
        }
    }
}
