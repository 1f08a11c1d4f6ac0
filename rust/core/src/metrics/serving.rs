//! The serving evaluation's metrics (`crate::serve::ServingEvaluation`), in export order.

use super::{Direction, Group, Kind, Metric};
use crate::serve::ServingEvaluation;

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
    metric!("prefill_gemm_s", "s", Float, Decode, "prefill step: weight GEMMs, one stage", |e| e.prefill_step.gemm_s),
    metric!("prefill_attention_s", "s", Float, Decode, "prefill step: core attention (fused kernel)", |e| e
        .prefill_step
        .attention_s),
    metric!("prefill_elementwise_s", "s", Float, Decode, "prefill step: norms, activations, permutation", |e| e
        .prefill_step
        .elementwise_s),
    metric!("prefill_comm_s", "s", Float, Decode, "prefill step: exposed TP all-reduces and MoE all-to-all", |e| e
        .prefill_step
        .comm_s),
    metric!("prefill_kernel_overhead_s", "s", Float, Decode, "prefill step: kernel launch, ramp and tail", |e| e
        .prefill_step
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
    metric!(
        "job_time_s",
        "s",
        Float,
        Serving,
        "a job of `requests` requests, first prompt to last token (0: none)",
        |e| e.job.time_s,
        Minimise
    ),
    metric!("job_drain_s", "s", Float, Serving, "of job_time_s: the batch draining once the queue is empty", |e| e
        .job
        .drain_s),
    metric!(
        "job_output_tokens_per_s",
        "tokens/s",
        Float,
        Serving,
        "the job's output tokens over job_time_s, whole cluster (0: no job)",
        |e| e.job.output_tokens_per_s,
        Maximise
    ),
    metric!("it_power_w", "W", Float, Cluster, "IT power of the cluster", |e| e.it_power_w),
    metric!("capex_usd", "USD", Float, Cluster, "servers, network, spares, installation", |e| e.capex_usd),
];

/// The serving metric with this name.
pub fn serving_metric(name: &str) -> Option<&'static Metric<ServingEvaluation>> {
    super::find(SERVING_METRICS, name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serving_names_are_unique_and_carry_their_units() {
        crate::metrics::assert_named_once_with_units(SERVING_METRICS, "serving metric");
        let e = crate::serve::serve(&crate::examples::serving_config()).unwrap();
        let get = |name| (serving_metric(name).unwrap().value)(&e);
        assert_eq!(get("tpot_s"), e.tpot_s);
        assert_eq!(
            serving_metric("output_tokens_per_s_per_gpu").unwrap().minimised(&e),
            -e.output_tokens_per_s_per_gpu
        );
    }
}
