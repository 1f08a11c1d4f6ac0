//! From steps to the service: how a schedule strings the engine's steps into time to first token, time per output
//! token and throughput, co-located or disaggregated.
//!
//! Co-located (continuous batching with chunked prefill; Orca, Yu et al., OSDI 2022; Sarathi-Serve, Agrawal et
//! al., OSDI 2024): each step carries one token of every running sequence and, to keep the batch full, the prompts
//! of the sequences that replace finished ones: input/output tokens of them a step on average, within the step's
//! token budget `max_num_tokens` (a budget too small for that lowers the batch the engine can keep). A prompt is
//! prefilled in chunks of what the budget leaves. Disaggregated (DistServe, Zhong et al., OSDI 2024): prefill
//! instances run steps of `max_num_tokens` prompt tokens, decode instances steps of their batch; the KV cache of a
//! prompt moves between them layer by layer; the slower side sets the requests per second. With pp stages an
//! instance keeps pp micro-batches in flight: a token crosses every stage, so a step of the instance is pp stage
//! steps plus the sends between them, and every stage stays busy (GPipe-style pipelining of decode, as vLLM and
//! TensorRT-LLM run it). Queueing delay is not modelled: TTFT is the service time of a prompt at the batch.

use crate::cost::economics::SECONDS_PER_HOUR;
use crate::cost::uncertainty::inverse_normal_cdf;
use crate::error::ConfigError;
use crate::network::placement::GroupPlacement;
use crate::step::compute::ACTIVATION_BYTES;

use super::job::job;
use super::layout::{PhaseLayout, ServingLayout};
use super::memory::{kv_bytes_per_token, memory, stage_layers};
use super::step::{step_time, StepWork};
use super::{
    KvAdmission, KvCacheDtype, Quantization, Serving, ServingCluster, ServingEvaluation, ServingMode, StepTime,
};

/// The percentile latencies are taken at (MLPerf's servers: p99, loadgen mlperf.conf).
pub const LATENCY_PERCENTILE: f64 = 0.99;

/// The variance of the logarithm of a log-normal length with this coefficient of variation: s^2 = ln(1 + cv^2)
/// (log-normal moments).
pub(super) fn lognormal_s2(cv: f64) -> f64 {
    (1.0 + cv * cv).ln()
}

/// The `q`-quantile of a log-normal length with this mean and coefficient of variation: mean exp(z s - s^2 / 2).
pub fn lognormal_quantile(mean: f64, cv: f64, q: f64) -> f64 {
    if cv <= 0.0 {
        return mean;
    }
    let s2 = lognormal_s2(cv);
    mean * (inverse_normal_cdf(q) * s2.sqrt() - s2 / 2.0).exp()
}

/// Mean of the length-biased distribution of a length with this mean and coefficient of variation: E[X^2] / E[X]
/// = mean (1 + cv^2). A running sequence is one picked in proportion to its output length (it runs one step per
/// output token), at a uniform point of its output: its mean output so far is half the length-biased mean, the mean
/// age of the interval in progress (Kleinrock, Queueing Systems Vol. 1, 1975, Sec. 5.2, "the paradox of residual
/// life": E[X^2] / (2 E[X])). A prompt token belongs to a prompt picked in proportion to its length: the prompt
/// its causal attention spans has the length-biased mean.
pub fn length_biased_mean(mean: f64, cv: f64) -> f64 {
    mean * (1.0 + cv * cv)
}

/// Mean context of a running sequence: its prompt and the output it has generated so far (length-biased).
pub(super) fn running_context(s: &Serving) -> f64 {
    s.input_tokens + length_biased_mean(s.output_tokens, s.output_tokens_cv) / 2.0
}

/// Evaluate one serving layout on a cluster.
pub fn evaluate_layout(c: &ServingCluster, s: &Serving) -> Result<ServingEvaluation, ConfigError> {
    if !c.supports(s.quantization) {
        return Err(ConfigError::FormatNotSupported { field: "quantization", format: s.quantization.name() });
    }
    if !c.supports(s.attention_format()) {
        let format = s.attention_format().name();
        return Err(ConfigError::FormatNotSupported { field: "attention_quantization", format });
    }
    if s.kv_cache_dtype == KvCacheDtype::Fp8 && !c.supports(Quantization::Fp8) {
        return Err(ConfigError::FormatNotSupported { field: "kv_cache_dtype", format: "fp8" });
    }
    let layout = ServingLayout::new(c, s)?;
    // A running sequence holds its prompt and the output generated so far (on-demand pages: vLLM's PagedAttention,
    // TensorRT-LLM's MAX_UTILIZATION), or prompt and whole output reserved at admission (TensorRT-LLM's default
    // GUARANTEED_NO_EVICT, docs "Useful Runtime Options"), both length-biased; pages round up by half a page.
    let held = match s.kv_admission {
        KvAdmission::OnDemand => running_context(s),
        KvAdmission::Reserve => s.input_tokens + length_biased_mean(s.output_tokens, s.output_tokens_cv),
    };
    let context = held + s.kv_block_tokens as f64 / 2.0;
    let mem = memory(c.gpu, c.model, &layout.decode, s, context)?;
    let max_batch = (mem.sequences(context) * layout.decode.dp_attention as f64).floor();
    let batch = if s.batch == 0 { max_batch } else { s.batch as f64 };
    if batch > max_batch {
        return Err(ConfigError::KvCacheDoesNotFit {
            field: "batch",
            batch: s.batch,
            max_batch: max_batch as u32,
            free_gb: mem.kv_cache_bytes / 1e9,
            needed_gb: batch * context * mem.kv_bytes_per_token / 1e9,
        });
    }
    let mut e = match layout.mode {
        ServingMode::Colocated => colocated(c, &layout, s, batch),
        ServingMode::Disaggregated => disaggregated(c, &layout, s, batch, context)?,
    };
    e.max_batch = max_batch;
    e.memory = mem;
    let mut e = finish(c, &layout, s, e);
    if s.requests > 0 {
        e.job = job(c, &layout, s, &e);
    }
    Ok(e)
}

/// A step of the whole instance: pp stage steps and the pp - 1 sends of the step's hidden states between them, in
/// turn (`Interconnect::chain_send_time_s`: those that leave a scale-up domain over the fabric).
pub(super) fn instance_step_s(c: &ServingCluster, p: &PhaseLayout, stage: &StepTime, tokens: f64) -> f64 {
    let sends = c.links().chain_send_time_s(tokens * c.model.hidden as f64 * ACTIVATION_BYTES, &p.pp_group);
    p.pp as f64 * stage.total_s() + sends
}

/// Prefill time of a prompt of `prompt` tokens whose chunks ride with `decode_seqs` decode tokens in steps of at
/// most `chunk` prompt tokens, beside `others` prompt tokens of other prompts (the steady state's share of each step
/// beyond one mean prompt: Sarathi-Serve fills a step's token budget with every waiting prompt's chunks):
/// ceil((prompt + others) / chunk) instance steps; and the stage step of one of them.
fn prefill_s(
    c: &ServingCluster,
    p: &PhaseLayout,
    s: &Serving,
    decode_seqs: f64,
    chunk: f64,
    prompt: f64,
    others: f64,
) -> (f64, StepTime) {
    let carried = prompt + others;
    let tokens = chunk.min(carried);
    let w = StepWork { decode_seqs, context: running_context(s), prefill_tokens: tokens, prompt };
    let stage = step_time(c, p, s, &w);
    ((carried / chunk).ceil().max(1.0) * instance_step_s(c, p, &stage, decode_seqs + tokens), stage)
}

fn colocated(c: &ServingCluster, l: &ServingLayout, s: &Serving, batch: f64) -> ServingEvaluation {
    let p = &l.decode;
    let (isl, osl) = (s.input_tokens, s.output_tokens);
    let replicas = (p.dp_attention * p.pp) as f64;
    let budget = s.max_num_tokens as f64;
    // Sequences a replica's micro-batch keeps running: the batch, unless the token budget cannot carry their
    // prompts (b + b isl / osl <= budget).
    let b = (batch / replicas).min(budget * osl / (osl + isl));
    // The steady state's prompt tokens attend over prompts of the length-biased mean length.
    let prompt = length_biased_mean(isl, s.input_tokens_cv);
    let w = StepWork { decode_seqs: b, context: running_context(s), prefill_tokens: b * isl / osl, prompt };
    let stage = step_time(c, p, s, &w);
    let tpot_s = instance_step_s(c, p, &stage, b + w.prefill_tokens);
    let chunk = budget - b;
    let isl_p99 = lognormal_quantile(isl, s.input_tokens_cv, LATENCY_PERCENTILE);
    // The steady state's prompt tokens a step beyond one mean prompt ride with each prompt's chunks.
    let others = (w.prefill_tokens - isl).max(0.0);
    let (ttft_s, prefill_step) = prefill_s(c, p, s, b, chunk, isl, others);
    ServingEvaluation {
        batch: b * replicas,
        ttft_s,
        ttft_p99_s: prefill_s(c, p, s, b, chunk, isl_p99, others).0,
        tpot_s,
        prefill_s: ttft_s,
        decode_step: stage,
        prefill_step,
        requests_per_s: l.instances as f64 * b * replicas / (osl * tpot_s),
        prefill_tokens_per_s_per_gpu: b * replicas * isl / osl / tpot_s / p.gpus as f64,
        decode_tokens_per_s_per_gpu: b * replicas / tpot_s / p.gpus as f64,
        ..ServingEvaluation::default()
    }
}

/// Time to move one prompt's KV cache from its prefill replica to its decode replica: layer by layer (as
/// Mooncake's and NIXL's connectors stream it), each GPU of the smaller replica carrying its share, over NVLink
/// inside a scale-up domain or over the fabric between domains (`Interconnect::send_time_s`: the protocol
/// model's latency per message and the achieved bandwidth).
fn kv_transfer_s(c: &ServingCluster, l: &ServingLayout, s: &Serving, prompt: f64) -> f64 {
    let model = c.model;
    let total = prompt * kv_bytes_per_token(model, 1, s.kv_cache_dtype) * model.layers as f64;
    let senders = (l.prefill.tp * l.prefill.pp).min(l.decode.tp * l.decode.pp) as f64;
    let domain = c.scale_up.domain_gpus;
    let pair =
        if l.kv_over_fabric { GroupPlacement::new(2, domain, domain) } else { GroupPlacement::new(2, 1, domain) };
    let messages = stage_layers(model, l.prefill.pp.max(l.decode.pp));
    messages * c.links().send_time_s(total / senders / messages, &pair)
}

fn disaggregated(
    c: &ServingCluster,
    l: &ServingLayout,
    s: &Serving,
    batch: f64,
    context: f64,
) -> Result<ServingEvaluation, ConfigError> {
    let (d, p) = (&l.decode, &l.prefill);
    let (isl, osl) = (s.input_tokens, s.output_tokens);
    // The prefill instance holds the prompts of one step in its KV cache until they move.
    memory(c.gpu, c.model, p, s, isl.min(context))?;
    let chunk = s.max_num_tokens as f64;
    let prompt = length_biased_mean(isl, s.input_tokens_cv);
    let pw = StepWork { decode_seqs: 0.0, context: 0.0, prefill_tokens: chunk, prompt };
    let prefill_stage = step_time(c, p, s, &pw);
    let prefill_step = instance_step_s(c, p, &prefill_stage, chunk);
    // pp micro-batches in flight keep every stage busy: an instance finishes dp_attention x pp chunks a step.
    let prefill_tokens_per_s = (p.dp_attention * p.pp) as f64 * chunk / prefill_step;
    let b = batch / (d.dp_attention * d.pp) as f64;
    let w = StepWork { decode_seqs: b, context: running_context(s), prefill_tokens: 0.0, prompt: isl };
    let stage = step_time(c, d, s, &w);
    let tpot_s = instance_step_s(c, d, &stage, b);
    let transfer = kv_transfer_s(c, l, s, isl);
    let isl_p99 = lognormal_quantile(isl, s.input_tokens_cv, LATENCY_PERCENTILE);
    let prompt_s = |prompt: f64| (prompt / chunk).ceil().max(1.0) * prefill_step;
    // The slower pool sets the pace; a pool of 0 instances is served elsewhere and sets none.
    let pools = [(l.prefill_instances, prefill_tokens_per_s / isl), (l.instances, batch / (osl * tpot_s))];
    let requests = pools.iter().filter(|(n, _)| *n > 0).map(|(n, rate)| *n as f64 * rate).fold(f64::INFINITY, f64::min);
    Ok(ServingEvaluation {
        batch,
        ttft_s: prompt_s(isl) + transfer,
        ttft_p99_s: prompt_s(isl_p99) + kv_transfer_s(c, l, s, isl_p99),
        tpot_s,
        prefill_s: prompt_s(isl),
        kv_transfer_s: transfer,
        decode_step: stage,
        prefill_step: prefill_stage,
        requests_per_s: requests,
        prefill_tokens_per_s_per_gpu: prefill_tokens_per_s / p.gpus as f64,
        decode_tokens_per_s_per_gpu: batch / tpot_s / d.gpus as f64,
        ..ServingEvaluation::default()
    })
}

/// The whole-cluster figures: throughput, latency of a request, cost.
fn finish(c: &ServingCluster, l: &ServingLayout, s: &Serving, mut e: ServingEvaluation) -> ServingEvaluation {
    let (isl, osl) = (s.input_tokens, s.output_tokens);
    let osl_p99 = lognormal_quantile(osl, s.output_tokens_cv, LATENCY_PERCENTILE);
    e.instance_gpus = l.decode.gpus;
    e.instances = l.instances;
    e.prefill_instance_gpus = l.prefill.gpus;
    e.prefill_instances = if l.mode == ServingMode::Colocated { 0 } else { l.prefill_instances };
    e.request_latency_s = e.ttft_s + (osl - 1.0).max(0.0) * e.tpot_s;
    e.request_latency_p99_s = e.ttft_p99_s + (osl_p99 - 1.0).max(0.0) * e.tpot_s;
    e.output_tokens_per_s = e.requests_per_s * osl;
    e.output_tokens_per_s_per_gpu = e.output_tokens_per_s / c.gpus as f64;
    e.input_tokens_per_s_per_gpu = e.requests_per_s * isl / c.gpus as f64;
    e.output_tokens_per_s_per_user = 1.0 / e.tpot_s;
    e.cost_usd_per_hour = c.cost_usd_per_s * SECONDS_PER_HOUR;
    e.cost_usd_per_million_tokens = c.cost_usd_per_s / e.output_tokens_per_s * 1e6;
    e.it_power_w = c.it_power_w;
    e.capex_usd = c.capex_usd;
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lognormal_quantiles_keep_the_mean() {
        // cv 0: every length is the mean. cv 1: s^2 = ln 2, p99 = mean exp(2.3263 x 0.8326 - 0.3466) = 4.90 mean.
        assert_eq!(lognormal_quantile(1000.0, 0.0, 0.99), 1000.0);
        let q = lognormal_quantile(1000.0, 1.0, 0.99);
        assert!((q / 1000.0 - 4.90).abs() < 0.01, "{q}");
        // The median of a log-normal lies below its mean: exp(-s^2 / 2) = 1 / sqrt(2) at cv 1.
        assert!((lognormal_quantile(1000.0, 1.0, 0.5) - 1000.0 / 2f64.sqrt()).abs() < 1e-6);
    }
}
