//! The output schema, defined once: every metric of an evaluation, with its unit, meaning and, for those a sweep
//! can optimise, its direction; the input columns are the `COLUMN` rows of the parameter table
//! (`crate::inputs::columns`). The Python bindings, `scalefront.Evaluation`, the sweep columns and objectives, the
//! CSV/Parquet schema, `--json` and the README's field table are all derived from these lists.

use crate::cost::economics::{JOULES_PER_MWH, SECONDS_PER_DAY};
use crate::evaluate::Evaluation;
use crate::serve::ServingEvaluation;

/// How a value is stored and printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A real number.
    Float,
    /// A whole number (printed and exported as an integer).
    Count,
    /// True or false.
    Flag,
    /// A name (inputs only: catalog ids, modes).
    Text,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Float => "float",
            Kind::Count => "count",
            Kind::Flag => "flag",
            Kind::Text => "text",
        }
    }
}

/// Which part of the answer a metric belongs to; the Python layer groups `step`, `hidden` and `memory`
/// metrics into `Evaluation.breakdown`, `.hidden` and `.memory`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    /// Headline results of one step.
    Result,
    /// Step time by component, exposed part; they add up to `step_time_s`.
    Step,
    /// Communication hidden behind compute, per step.
    Hidden,
    /// Memory of the busiest GPU.
    Memory,
    /// The whole training run.
    Run,
    /// The cluster: capex, power, network, reliability.
    Cluster,
    /// The model's size and FLOPs.
    Model,
    /// Serving: latency, throughput and cost of the service.
    Serving,
    /// Serving: the decode step by kind of work.
    Decode,
}

impl Group {
    pub fn name(self) -> &'static str {
        match self {
            Group::Result => "result",
            Group::Step => "step",
            Group::Hidden => "hidden",
            Group::Memory => "memory",
            Group::Run => "run",
            Group::Cluster => "cluster",
            Group::Model => "model",
            Group::Serving => "serving",
            Group::Decode => "decode",
        }
    }
}

/// One output metric of an evaluation (`E`: `Evaluation` for training, `ServingEvaluation` for serving).
#[derive(Clone, Copy, Debug)]
pub struct Metric<E: 'static = Evaluation> {
    pub name: &'static str,
    /// Unit, also spelled at the end of `name` where it has one; "fraction" marks a share in [0, 1] (shown as a
    /// percentage by readers such as the UI), "" a plain number.
    pub unit: &'static str,
    pub kind: Kind,
    pub group: Group,
    pub doc: &'static str,
    /// The value, as f64 (counts are whole, flags 0 or 1).
    pub value: fn(&E) -> f64,
    /// Which way is better, for a metric a sweep can take as an objective (`--objectives`, `[objectives]
    /// minimize`); None for the others.
    pub direction: Option<Direction>,
}

/// Which way a metric is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Minimise,
    Maximise,
}

impl Direction {
    pub fn name(self) -> &'static str {
        match self {
            Direction::Minimise => "min",
            Direction::Maximise => "max",
        }
    }
}

impl<E> Metric<E> {
    /// The value a sweep minimises for this metric as an objective: the metric itself, or its negation when it is
    /// maximised.
    pub fn minimised(&self, e: &E) -> f64 {
        match self.direction {
            Some(Direction::Maximise) => -(self.value)(e),
            _ => (self.value)(e),
        }
    }
}

/// The suffix a name carries for its unit (`time_to_train_days`, `it_power_w`), where the unit has one; names in
/// other units ("fraction", "tokens/s", "USD/Mtoken", ...) carry none. Metrics and input parameters follow it (a
/// test holds each list to it), and readers drop it to make a column's label.
pub const UNIT_SUFFIXES: &[(&str, &str)] = &[
    ("s", "_s"),
    ("days", "_days"),
    ("USD", "_usd"),
    ("W", "_w"),
    ("GB", "_gb"),
    ("bytes", "_bytes"),
    ("MWh", "_mwh"),
    ("1/day", "_per_day"),
];

/// The suffix for `unit`, if it has one (see `UNIT_SUFFIXES`).
pub fn unit_suffix(unit: &str) -> Option<&'static str> {
    UNIT_SUFFIXES.iter().find(|(u, _)| *u == unit).map(|(_, s)| *s)
}

/// Does `name` carry the suffix of `unit` (before an interval end's `_lo` / `_hi`), where the unit has one?
pub fn named_for_unit(name: &str, unit: &str) -> bool {
    let base = name.strip_suffix("_lo").or_else(|| name.strip_suffix("_hi")).unwrap_or(name);
    unit_suffix(unit).is_none_or(|s| base.ends_with(s))
}

/// `metric!(name, unit, kind, group, doc, accessor)`, and for a metric a sweep can optimise, its direction last
/// (`Minimise` or `Maximise`).
macro_rules! metric {
    ($name:literal, $unit:literal, $kind:ident, $group:ident, $doc:literal, $value:expr) => {
        Metric {
            name: $name,
            unit: $unit,
            kind: Kind::$kind,
            group: Group::$group,
            doc: $doc,
            value: $value,
            direction: None,
        }
    };
    ($name:literal, $unit:literal, $kind:ident, $group:ident, $doc:literal, $value:expr, $direction:ident) => {
        Metric { direction: Some(Direction::$direction), ..metric!($name, $unit, $kind, $group, $doc, $value) }
    };
}

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
    METRICS.iter().find(|m| m.name == name)
}

/// Every metric of a serving evaluation (`crate::serve`), in export order.
pub const SERVING_METRICS: &[Metric<ServingEvaluation>] = &[
    metric!(
        "ttft_s",
        "s",
        Float,
        Serving,
        "time to first token: prefill of a mean prompt (+ its KV transfer)",
        |e| e.ttft_s,
        Minimise
    ),
    metric!(
        "ttft_p99_s",
        "s",
        Float,
        Serving,
        "time to first token of the 99th-percentile prompt",
        |e| e.ttft_p99_s,
        Minimise
    ),
    metric!(
        "tpot_s",
        "s",
        Float,
        Serving,
        "time per output token: one decode step of the instance",
        |e| e.tpot_s,
        Minimise
    ),
    metric!(
        "request_latency_s",
        "s",
        Float,
        Serving,
        "ttft_s + (output tokens - 1) x tpot_s",
        |e| e.request_latency_s,
        Minimise
    ),
    metric!("request_latency_p99_s", "s", Float, Serving, "request latency at the 99th-percentile lengths", |e| e
        .request_latency_p99_s),
    metric!(
        "output_tokens_per_s_per_gpu",
        "tokens/s",
        Float,
        Serving,
        "generated tokens per second per GPU of the cluster",
        |e| e.output_tokens_per_s_per_gpu,
        Maximise
    ),
    metric!("output_tokens_per_s", "tokens/s", Float, Serving, "generated tokens per second, whole cluster", |e| e
        .output_tokens_per_s),
    metric!("input_tokens_per_s_per_gpu", "tokens/s", Float, Serving, "prompt tokens per second per GPU", |e| e
        .input_tokens_per_s_per_gpu),
    metric!(
        "output_tokens_per_s_per_user",
        "tokens/s",
        Float,
        Serving,
        "generated tokens per second one user sees: 1 / tpot_s",
        |e| e.output_tokens_per_s_per_user,
        Maximise
    ),
    metric!("requests_per_s", "1/s", Float, Serving, "requests served per second, whole cluster", |e| e.requests_per_s),
    metric!(
        "cost_usd_per_million_tokens",
        "USD/Mtoken",
        Float,
        Serving,
        "the cluster's cost (cost_mode) per million generated tokens",
        |e| e.cost_usd_per_million_tokens,
        Minimise
    ),
    metric!("cost_usd_per_hour", "USD/h", Float, Serving, "the cluster's cost per hour of service (cost_mode)", |e| e
        .cost_usd_per_hour),
    metric!("concurrent_sequences", "sequences", Float, Serving, "concurrent sequences per (decode) instance", |e| e
        .batch),
    metric!("max_batch", "sequences", Float, Serving, "sequences the KV cache holds per (decode) instance", |e| e
        .max_batch),
    metric!("instance_gpus", "", Count, Serving, "GPUs of one (decode) instance: tp x dp_attention x pp", |e| e
        .instance_gpus
        as f64),
    metric!("instances", "", Count, Serving, "(decode) instances in the cluster", |e| e.instances as f64),
    metric!("prefill_instances_total", "", Count, Serving, "prefill instances in the cluster (0 co-located)", |e| e
        .prefill_instances
        as f64),
    metric!("prefill_instance_gpus", "", Count, Serving, "GPUs of one prefill instance", |e| e.prefill_instance_gpus
        as f64),
    metric!("prefill_s", "s", Float, Decode, "prefill of one mean prompt", |e| e.prefill_s),
    metric!("kv_transfer_s", "s", Float, Decode, "one prompt's KV cache from prefill to decode", |e| e.kv_transfer_s),
    metric!(
        "prefill_tokens_per_s_per_gpu",
        "tokens/s",
        Float,
        Decode,
        "prompt tokens per second per GPU of the prefill instances (co-located: of all)",
        |e| e.prefill_tokens_per_s_per_gpu
    ),
    metric!(
        "decode_tokens_per_s_per_gpu",
        "tokens/s",
        Float,
        Decode,
        "generated tokens per second per GPU of the decode instances (co-located: of all)",
        |e| e.decode_tokens_per_s_per_gpu
    ),
    metric!("decode_gemm_s", "s", Float, Decode, "decode step: weight GEMMs, one stage", |e| e.decode_step.gemm_s),
    metric!("decode_attention_s", "s", Float, Decode, "decode step: core attention (KV-cache reads)", |e| e
        .decode_step
        .attention_s),
    metric!("decode_elementwise_s", "s", Float, Decode, "decode step: norms, activations, permutation", |e| e
        .decode_step
        .elementwise_s),
    metric!("decode_comm_s", "s", Float, Decode, "decode step: exposed TP all-reduces and MoE all-to-all", |e| e
        .decode_step
        .comm_s),
    metric!("decode_kernel_overhead_s", "s", Float, Decode, "decode step: kernel launch, ramp and tail", |e| e
        .decode_step
        .overhead_s),
    metric!("weights_bytes", "bytes", Float, Memory, "weights on one GPU of the busiest stage", |e| e
        .memory
        .weights_bytes),
    metric!("activation_bytes", "bytes", Float, Memory, "activation workspace of the largest step", |e| e
        .memory
        .activation_bytes),
    metric!("kv_cache_bytes", "bytes", Float, Memory, "KV cache of one GPU", |e| e.memory.kv_cache_bytes),
    metric!("kv_token_bytes", "bytes", Float, Memory, "KV-cache bytes of one token on one GPU", |e| e
        .memory
        .kv_bytes_per_token),
    metric!("hbm_bytes", "bytes", Float, Memory, "the GPU's HBM", |e| e.memory.hbm_bytes),
    metric!("it_power_w", "W", Float, Cluster, "IT power of the cluster", |e| e.it_power_w),
    metric!("capex_usd", "USD", Float, Cluster, "servers, network, spares, installation", |e| e.capex_usd),
];

/// The serving metric with this name.
pub fn serving_metric(name: &str) -> Option<&'static Metric<ServingEvaluation>> {
    SERVING_METRICS.iter().find(|m| m.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::evaluate;
    use crate::examples::reference;

    #[test]
    fn names_are_unique_and_carry_their_units() {
        let mut names: Vec<&str> = METRICS.iter().map(|m| m.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), METRICS.len(), "a metric is defined twice");
        for m in METRICS {
            assert!(named_for_unit(m.name, m.unit), "{} is in {} but not named so", m.name, m.unit);
        }
        // The rule itself: interval ends carry the unit before _lo / _hi; units without a suffix ask for none.
        assert!(named_for_unit("step_time_s_hi", "s") && !named_for_unit("step_time", "s"));
        assert!(named_for_unit("mfu", "fraction") && named_for_unit("interruptions_per_day", "1/day"));
    }

    #[test]
    fn serving_names_are_unique_and_carry_their_units() {
        let mut names: Vec<&str> = SERVING_METRICS.iter().map(|m| m.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), SERVING_METRICS.len(), "a serving metric is defined twice");
        for m in SERVING_METRICS {
            assert!(named_for_unit(m.name, m.unit), "{} is in {} but not named so", m.name, m.unit);
        }
        let e = crate::serve::serve(&crate::examples::serving_config()).unwrap();
        let get = |name| (serving_metric(name).unwrap().value)(&e);
        assert_eq!(get("tpot_s"), e.tpot_s);
        assert_eq!(
            serving_metric("output_tokens_per_s_per_gpu").unwrap().minimised(&e),
            -e.output_tokens_per_s_per_gpu
        );
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
