//! The serving model (`scalefront_core::serve`), each check worked by hand from the example configurations
//! (`scalefront_core::examples`: Llama 3 70B on 8 deterministic H100s, NVLink4, InfiniBand NDR).

use scalefront_core::error::ConfigError;
use scalefront_core::examples::{deepseek_v3, roce_400g, serving_config};
use scalefront_core::serve::{
    kv_bytes_per_token, serve, KvAdmission, KvCacheDtype, Quantization, ServingConfig, ServingMode,
};

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs()
}

#[test]
fn weights_on_a_gpu_are_the_model_split_over_tp_in_its_format() {
    // Llama 3 70B, TP 8, FP8: a layer's attention 2 x 8192 x 8192 + 2 x 8192 x 1024 = 150.99M and MLP
    // 3 x 8192 x 28672 = 704.64M weights, / 8 ranks x 1 byte = 106.95 MB; x 80 layers = 8,556.3 MB; two RMSNorms
    // a layer in BF16 (80 x 16,384 x 2 B = 2.6 MB); embedding and output layer in BF16, vocabulary-parallel:
    // 2 x 128,256 x 8,192 / 8 x 2 B = 525.3 MB. In all 9,084.3 MB.
    let e = serve(&serving_config()).unwrap();
    assert!(close(e.memory.weights_bytes, 9_084.338_176e6, 1e-12), "{}", e.memory.weights_bytes);
    // In BF16, the layers' share doubles: 80 x 855,638,016 / 8 x 2 B = 17,112.76 MB, + 2.62 + 525.34 = 17,640.72 MB.
    let mut bf16 = serving_config();
    bf16.serving.quantization = Quantization::Bf16;
    assert!(close(serve(&bf16).unwrap().memory.weights_bytes, 17_640.718_336e6, 1e-12));
}

#[test]
fn the_kv_cache_takes_what_is_left_and_bounds_the_batch() {
    let cfg = serving_config();
    let e = serve(&cfg).unwrap();
    let m = &e.memory;
    // (80 GB - 3.5 GB reserve - weights - activations) x 0.9 is the KV cache.
    let free = 80e9 - 3.5e9 - m.weights_bytes - m.activation_bytes;
    assert!(close(m.kv_cache_bytes, 0.9 * free, 1e-12));
    // A token: 80 layers x 1 KV head a rank (8 heads / TP 8) x 2 (K, V) x 128 x 1 byte (FP8) = 20,480 B.
    assert_eq!(m.kv_bytes_per_token, 20_480.0);
    assert_eq!(kv_bytes_per_token(&cfg.model, 8, KvCacheDtype::Fp8) * 80.0, 20_480.0);
    // A running sequence holds 1,000 prompt tokens, 500 of its output on average, half a 32-token page: 1,516.
    let max = (m.kv_cache_bytes / (20_480.0 * 1_516.0)).floor();
    assert_eq!(e.max_batch, max);
    // batch 0: as many as fit.
    assert_eq!(e.batch, max);
    // Reserving the whole output at admission (TensorRT-LLM's default) holds 2,016 tokens a sequence.
    let mut reserve = cfg.clone();
    reserve.serving.kv_admission = KvAdmission::Reserve;
    assert_eq!(serve(&reserve).unwrap().max_batch, (m.kv_cache_bytes / (20_480.0 * 2_016.0)).floor());
    // One sequence more than fits is refused, naming the batch.
    let mut over = cfg.clone();
    over.serving.batch = max as u32 + 1;
    let err = serve(&over).unwrap_err();
    assert_eq!((err.category(), err.field()), ("kv_cache", "batch"));
    // Weights that leave no room for one sequence: Llama 3 70B in BF16 on one 80 GB GPU (141 GB of weights).
    let mut one = cfg.clone();
    (one.gpus, one.serving.tp, one.serving.quantization) = (1, 1, Quantization::Bf16);
    let err = serve(&one).unwrap_err();
    assert_eq!((err.category(), err.field()), ("kv_cache", "tp"));
}

#[test]
fn a_small_decode_step_reads_the_weights_once() {
    // Batch 1, one token in and out: each layer's GEMMs read its 106.95 MB of FP8 weights at the measured 3.35 TB/s
    // x 0.90: 35.47 us a layer, 2.838 ms for 80; the output layer reads 2 x 128,256 x 8,192 / 8 B at the same rate
    // (0.087 ms of its logits step with its FP32 softmax).
    let mut cfg = serving_config();
    cfg.serving.batch = 1;
    cfg.serving.input_tokens = 1.0;
    cfg.serving.output_tokens = 1.0;
    let e = serve(&cfg).unwrap();
    let hbm = 3.35e12 * 0.90;
    let layers = 80.0 * 106.95e6 / hbm;
    let logits = 128_256.0 * 8_192.0 / 8.0 * 2.0 / hbm;
    assert!(e.decode_step.gemm_s > layers + logits && e.decode_step.gemm_s < 1.01 * (layers + logits), "{e:?}");
    // Beyond its rooflines the step pays 4 us for each of its 883 kernels (80 layers x 11, the output layer's 3),
    // as a CUDA-graph decode layer on an H100 measured (data/measurements/h100-decode-floor.json): 3.53 ms.
    assert!(close(e.decode_step.overhead_s, 883.0 * 4e-6, 1e-12), "{}", e.decode_step.overhead_s);
    // A batch of 32 (and its 32 one-token prompts) reads the same weights: the GEMMs take under 10% longer (the
    // activations and their FP8 casts), so about 32 times the tokens per step.
    cfg.serving.batch = 32;
    let e32 = serve(&cfg).unwrap();
    assert!(e32.decode_step.gemm_s < 1.10 * e.decode_step.gemm_s);
    assert!(e32.output_tokens_per_s > 25.0 * e.output_tokens_per_s);
}

#[test]
fn decode_attention_reads_every_sequences_kv_cache() {
    // 256 sequences at 1,000 + 500 tokens of context (prompt 1,000, output 1,000): the KV bytes of one layer on a
    // rank, 256 x 1,500 x 256 B = 98.3 MB, at 3.015 TB/s = 32.6 us; x 80 layers = 2.61 ms. Co-located, the step
    // also carries 256 prompt tokens, whose fused attention adds its FLOPs at the attention rate.
    let mut cfg = serving_config();
    cfg.serving.mode = ServingMode::Disaggregated;
    cfg.serving.prefill_instances = 0; // a decode pool: no prefill tokens in its steps
    cfg.serving.batch = 256;
    let e = serve(&cfg).unwrap();
    let expected = 80.0 * 256.0 * 1_500.0 * 256.0 / (3.35e12 * 0.90);
    assert!(close(e.decode_step.attention_s, expected, 1e-9), "{} vs {expected}", e.decode_step.attention_s);
    // TPOT is the step; a decode pool's throughput is its batch over it.
    assert!(close(e.output_tokens_per_s, 256.0 / e.tpot_s, 1e-12));
    assert_eq!(e.prefill_instances, 0);
}

#[test]
fn mla_keeps_one_latent_per_token_and_its_decode_attention_is_compute_bound() {
    // DeepSeek-V3 on 32 GPUs, attention data-parallel 32, EP 32: the KV cache holds 576 FP8 bytes a token a layer
    // (61 layers: 35,136 B), whatever the TP. Decode attention of 128 sequences at 1,500 tokens: FLOPs 128 x 1,500
    // x 128 heads x (2 x 576 + 2 x 512) = 53.5 GFLOP at the H100 attention table's rate for 128 heads x 128
    // sequences (its last row, 128) at 1,500 tokens: between 0.357 (1,024) and 0.406 (2,048) at log2(1500 / 1024)
    // = 0.551 of the way, 0.384 of 989 TF/s: 0.1409 ms a layer, against 110.6 MB of latents in 36.7 us at
    // 3.015 TB/s: compute-bound.
    let cfg = ServingConfig {
        model: deepseek_v3(),
        gpus: 32,
        serving: scalefront_core::serve::Serving {
            tp: 1,
            ep: 32,
            dp_attention: 32,
            batch: 128 * 32,
            mode: ServingMode::Disaggregated,
            prefill_instances: 0,
            ..serving_config().serving
        },
        ..serving_config()
    };
    let e = serve(&cfg).unwrap();
    assert_eq!(e.memory.kv_bytes_per_token, 576.0 * 61.0);
    let fraction = 0.357 + (0.406 - 0.357) * (1_500.0f64 / 1_024.0).log2();
    let per_layer = 128.0 * 1_500.0 * 128.0 * 2_176.0 / (989e12 * fraction);
    assert!(close(e.decode_step.attention_s, 61.0 * per_layer, 1e-9), "{}", e.decode_step.attention_s);
}

#[test]
fn a_pd_ratio_must_divide_the_gpus_and_the_kv_cache_crosses_the_fabric_between_domains() {
    // 1 prefill + 1 decode instance of 8 GPUs: groups of 16. 24 GPUs do not split into them.
    let mut cfg = serving_config();
    cfg.serving.mode = ServingMode::Disaggregated;
    cfg.gpus = 24;
    let err = serve(&cfg).unwrap_err();
    assert!(matches!(err, ConfigError::PdRatioDoesNotDivideGpus { group_gpus: 16, .. }));
    assert_eq!((err.category(), err.field()), ("pd_ratio", "decode_instances"));
    // 16 GPUs: the two instances sit in two 8-GPU domains; a prompt's KV cache (1,000 tokens x 80 layers x 2,048 B
    // = 163.8 MB, 20.5 MB for each of the 8 ranks) crosses the fabric layer by layer: 80 messages of 256 kB. Over
    // 400G InfiniBand (50 GB/s) that is >= 0.41 ms; RoCE's higher latency makes it longer.
    cfg.gpus = 16;
    let ib = serve(&cfg).unwrap();
    assert!(ib.kv_transfer_s > 20.48e6 / 50e9, "{}", ib.kv_transfer_s);
    assert!(close(ib.ttft_s, ib.prefill_s + ib.kv_transfer_s, 1e-12));
    let roce = serve(&ServingConfig { fabric: roce_400g(), ..cfg.clone() }).unwrap();
    assert!(roce.kv_transfer_s > ib.kv_transfer_s);
    // The slower pool sets the requests per second; per GPU, the cluster's 16.
    let decode_rate = ib.batch / (1_000.0 * ib.tpot_s);
    assert!(ib.requests_per_s <= decode_rate * (1.0 + 1e-12));
}

/// DeepSeek-V3 on 64 GPUs as one instance: attention data-parallel over 64 ranks, EP 64, batch 8 a rank.
fn deepseek_ep64_decode() -> ServingConfig {
    ServingConfig {
        model: deepseek_v3(),
        gpus: 64,
        serving: scalefront_core::serve::Serving {
            tp: 1,
            ep: 64,
            dp_attention: 64,
            batch: 8 * 64,
            ..serving_config().serving
        },
        ..serving_config()
    }
}

#[test]
fn expert_all_to_all_over_the_fabric_is_latency_bound_in_decode() {
    // DeepSeek-V3 decode over 64 GPUs in 8 servers, EP 64: every step dispatches and combines each layer's tokens
    // across servers. At batch 8 a rank, the messages are small: the fabric's latency, not its bandwidth, sets
    // the time, so RoCE's higher latency and tail make every token slower than InfiniBand.
    let mut base = deepseek_ep64_decode();
    (base.serving.mode, base.serving.prefill_instances) = (ServingMode::Disaggregated, 0);
    let ib = serve(&base).unwrap();
    let roce = serve(&ServingConfig { fabric: roce_400g(), ..base.clone() }).unwrap();
    assert!(ib.decode_step.comm_s > 0.0);
    assert!(roce.decode_step.comm_s > ib.decode_step.comm_s && roce.tpot_s > ib.tpot_s);
    // DeepSeek-V3 in FP8 does not fit one 8-GPU H100 server with room for a KV cache: refused, naming it.
    let mut small = base.clone();
    (small.gpus, small.serving.ep, small.serving.dp_attention, small.serving.batch) = (8, 8, 8, 64);
    assert_eq!(serve(&small).unwrap_err().category(), "kv_cache");
}

#[test]
fn formats_need_the_gpus_tensor_cores() {
    let mut cfg = serving_config();
    cfg.serving.quantization = Quantization::Fp4; // the H100 has no FP4
    let err = serve(&cfg).unwrap_err();
    assert_eq!((err.category(), err.field()), ("format_unsupported", "quantization"));
    let mut no_fp8 = serving_config();
    (no_fp8.gpu.peak_fp8_flops, no_fp8.gpu.gemm_efficiency_fp8) = (0.0, 0.0);
    no_fp8.serving.quantization = Quantization::Bf16;
    let err = serve(&no_fp8).unwrap_err();
    assert_eq!((err.category(), err.field()), ("format_unsupported", "kv_cache_dtype"));
    // With FP4 tensor cores (a Blackwell-like part), NVFP4 weights (0.5625 B) leave more room for the KV cache.
    let mut fp4 = serving_config();
    (fp4.gpu.peak_fp4_flops, fp4.gpu.gemm_efficiency_fp4) = (4.0 * 989e12, 0.7);
    let fp8 = serve(&fp4).unwrap();
    fp4.serving.quantization = Quantization::Fp4;
    let e = serve(&fp4).unwrap();
    assert!(e.memory.weights_bytes < 0.6 * fp8.memory.weights_bytes && e.max_batch > fp8.max_batch);
}

#[test]
fn cost_per_million_tokens_is_the_clusters_hour_over_its_tokens() {
    // Rent: 8 GPUs x $2.99 an hour = $23.92; per million output tokens: 23.92 / (tokens/s x 3,600) x 1e6.
    let e = serve(&serving_config()).unwrap();
    assert!(close(e.cost_usd_per_hour, 8.0 * 2.99, 1e-12));
    let expected = e.cost_usd_per_hour / (e.output_tokens_per_s * 3_600.0) * 1e6;
    assert!(close(e.cost_usd_per_million_tokens, expected, 1e-12));
    assert!(close(e.output_tokens_per_s_per_gpu, e.output_tokens_per_s / 8.0, 1e-12));
}

#[test]
fn spread_lengths_raise_the_p99_latencies() {
    // A log-normal prompt length with cv 1 puts the 99th percentile at 4.9 x the mean: a longer prefill. At 256
    // sequences the steady state feeds a step 256 prompt tokens, less than one prompt, so a prompt's step carries
    // it alone: 1,000 against 4,900 prompt tokens beside the same decode tokens.
    let mut cfg = serving_config();
    cfg.serving.input_tokens_cv = 1.0;
    cfg.serving.output_tokens_cv = 1.0;
    cfg.serving.batch = 256;
    let e = serve(&cfg).unwrap();
    assert!(e.ttft_p99_s > 2.0 * e.ttft_s);
    assert!(e.request_latency_p99_s > 3.0 * e.request_latency_s);
    // At the largest batch (~2,000 prompt tokens a step) a mean prompt shares a step of ~2,000 and the p99 one of
    // ~2,000 - 1,000 + 4,900 = 5,900: still longer.
    cfg.serving.batch = 0;
    let full = serve(&cfg).unwrap();
    assert!(full.ttft_p99_s > full.ttft_s && full.request_latency_p99_s > 3.0 * full.request_latency_s);
    let flat = serve(&serving_config()).unwrap();
    assert_eq!(flat.ttft_p99_s, flat.ttft_s);
}

#[test]
fn spread_output_lengths_lengthen_the_running_sequences_context() {
    // A running sequence is picked in proportion to its output length, at a uniform point of it: its output so far
    // is E[L^2] / (2 E[L]) = 1,000 (1 + 1^2) / 2 = 1,000 tokens at cv 1, not 500. On-demand it holds 1,000 + 1,000
    // + 16 = 2,016 tokens (cv 0: 1,516); reserving the output, 1,000 + 2,000 + 16 = 3,016 (cv 0: 2,016).
    let mut cfg = serving_config();
    cfg.serving.output_tokens_cv = 1.0;
    let e = serve(&cfg).unwrap();
    let kv = e.memory.kv_cache_bytes;
    assert_eq!(e.max_batch, (kv / (20_480.0 * 2_016.0)).floor());
    cfg.serving.kv_admission = KvAdmission::Reserve;
    assert_eq!(serve(&cfg).unwrap().max_batch, (kv / (20_480.0 * 3_016.0)).floor());
    // A decode pool at 256 sequences: their KV reads are those of 1,000 + 1,000 tokens, exactly as of a fixed
    // 2,000-token output at cv 0 (context 1,000 + 1,000), 4/3 of the cv-0 1,000-token output's (1,500).
    let pool = |output_tokens: f64, output_tokens_cv: f64| {
        let mut c = serving_config();
        (c.serving.mode, c.serving.prefill_instances, c.serving.batch) = (ServingMode::Disaggregated, 0, 256);
        (c.serving.output_tokens, c.serving.output_tokens_cv) = (output_tokens, output_tokens_cv);
        serve(&c).unwrap().decode_step
    };
    assert_eq!(pool(1_000.0, 1.0), pool(2_000.0, 0.0));
    assert!(close(pool(1_000.0, 1.0).attention_s, pool(1_000.0, 0.0).attention_s * 2_000.0 / 1_500.0, 1e-12));
}

#[test]
fn a_prompt_token_attends_over_the_length_biased_prompt() {
    // Causal attention over a prompt of n tokens costs in proportion to n^2, so the steady state's prompt tokens
    // attend over prompts of E[n^2] / E[n] = 1,000 (1 + 1^2) = 2,000 tokens at cv 1: a prefill pool's step of
    // 8,192 prompt tokens is the one of 2,000-token prompts at cv 0, and costs more than of 1,000-token ones.
    let pool = |input_tokens: f64, input_tokens_cv: f64| {
        let mut c = serving_config();
        (c.serving.mode, c.serving.decode_instances) = (ServingMode::Disaggregated, 1);
        (c.serving.input_tokens, c.serving.input_tokens_cv) = (input_tokens, input_tokens_cv);
        c.gpus = 16;
        serve(&c).unwrap()
    };
    let (spread, long, flat) = (pool(1_000.0, 1.0), pool(2_000.0, 0.0), pool(1_000.0, 0.0));
    assert_eq!(spread.prefill_step, long.prefill_step);
    assert_eq!(spread.prefill_tokens_per_s_per_gpu, long.prefill_tokens_per_s_per_gpu);
    assert!(spread.prefill_step.attention_s > 1.5 * flat.prefill_step.attention_s);
    assert!(spread.prefill_tokens_per_s_per_gpu < flat.prefill_tokens_per_s_per_gpu);
}

/// A decode pool of Llama 3 70B on 8 H100s (prefill served elsewhere) at 256 sequences, fixed lengths 1,000/1,000.
fn decode_pool_job(requests: u32) -> scalefront_core::serve::ServingEvaluation {
    let mut cfg = serving_config();
    (cfg.serving.mode, cfg.serving.prefill_instances, cfg.serving.batch) = (ServingMode::Disaggregated, 0, 256);
    cfg.serving.requests = requests;
    serve(&cfg).unwrap()
}

#[test]
fn a_job_that_fits_the_batch_runs_every_output_at_the_full_batch() {
    // 256 requests on 256 slots, every output 1,000 tokens: 1,000 steps at 256 sequences, the context growing from
    // 1,000 to 2,000. The KV reads are linear in the context, so the steps average the one at 1,500 tokens: the
    // steady state's TPOT. The job is the drain alone, at the steady throughput.
    let e = decode_pool_job(256);
    assert!(close(e.job.time_s, 1_000.0 * e.tpot_s, 1e-3), "{} vs {}", e.job.time_s, 1_000.0 * e.tpot_s);
    assert_eq!(e.job.drain_s, e.job.time_s);
    assert!(close(e.job.output_tokens_per_s, e.output_tokens_per_s, 1e-3));
    // Without requests there is no job.
    assert_eq!(decode_pool_job(0).job, scalefront_core::serve::Job::default());
}

#[test]
fn a_larger_job_drains_its_last_batch_at_a_falling_batch() {
    // 512 requests on 256 slots: when the queue empties, the running outputs are at uniform points of their 1,000
    // tokens, 500 left on average: 128,000 tokens drain, and the other 384,000 run at the steady 256 / TPOT, in
    // 1,500 TPOTs. The drain's 1,000 steps shrink from 256 sequences to one: each no longer than a full step at
    // the longest context and no shorter than a one-sequence step, so the job's throughput is below the steady one.
    let e = decode_pool_job(512);
    assert!(close(e.job.time_s - e.job.drain_s, 1_500.0 * e.tpot_s, 1e-3), "{}", e.job.time_s - e.job.drain_s);
    let one = decode_pool_job(1).job.time_s; // one sequence's 1,000 steps
    assert!(e.job.drain_s > one && e.job.drain_s < 1_000.0 * e.tpot_s * 2_500.0 / 1_500.0, "{}", e.job.drain_s);
    assert!(e.job.output_tokens_per_s < e.output_tokens_per_s);
    assert!(close(e.job.output_tokens_per_s, 512.0 * 1_000.0 / e.job.time_s, 1e-12));
}

#[test]
fn a_long_tail_of_outputs_lengthens_the_drain_and_a_cap_bounds_it() {
    // The same mean output with spread: the drain waits for the longest outputs, so a cv of 1 drains longer than
    // fixed lengths, longer without a cap than with one at 5,000 tokens; a job of many batches loses less of its
    // throughput to the drain than one of few.
    let job = |requests: u32, cv: f64, cap: u32| {
        let mut cfg = serving_config();
        (cfg.serving.batch, cfg.serving.requests) = (256, requests);
        (cfg.serving.output_tokens_cv, cfg.serving.max_output_tokens) = (cv, cap);
        serve(&cfg).unwrap()
    };
    let (fixed, spread, capped) = (job(4_096, 0.0, 0), job(4_096, 1.0, 0), job(4_096, 1.0, 5_000));
    assert!(spread.job.drain_s > capped.job.drain_s && capped.job.drain_s > fixed.job.drain_s);
    assert!(spread.job.output_tokens_per_s < capped.job.output_tokens_per_s);
    let share = |e: &scalefront_core::serve::ServingEvaluation| e.job.output_tokens_per_s / e.output_tokens_per_s;
    assert!(share(&job(65_536, 1.0, 5_000)) > share(&capped));
    // A cap below the mean output cannot be: one line naming it.
    let mut bad = serving_config();
    bad.serving.max_output_tokens = 999;
    let err = serve(&bad).unwrap_err();
    assert_eq!(err.field(), "max_output_tokens");
}

#[test]
fn a_prompt_shares_its_step_with_the_steady_states_other_prompts() {
    // Co-located, 1,000 tokens in and 10 out: to keep the batch full each step carries b x 100 prompt tokens (b =
    // 8,192 x 10 / 1,010 = 81.1 sequences: 8,111 prompt tokens, the budget less the decode tokens), about eight
    // prompts' worth. A prompt rides in such a step, so its first token comes one whole step after it starts:
    // TTFT = the steady step = TPOT (pp 1). Alone in the step (the batch too small to feed more than one prompt a
    // step) it would take 1,000 tokens' time.
    let mut cfg = serving_config();
    cfg.serving.output_tokens = 10.0;
    let e = serve(&cfg).unwrap();
    assert!((e.batch - 8_192.0 * 10.0 / 1_010.0).abs() < 1e-9, "{}", e.batch);
    assert!(close(e.ttft_s, e.tpot_s, 1e-12), "{} vs {}", e.ttft_s, e.tpot_s);
    cfg.serving.batch = 1;
    let alone = serve(&cfg).unwrap();
    assert!(alone.ttft_s < 0.5 * e.ttft_s, "{} vs {}", alone.ttft_s, e.ttft_s);
}

#[test]
fn an_instance_that_fits_one_nvlink_domain_runs_inside_one() {
    // DeepSeek-V3 decode instances of 64 GPUs (EP 64) on 72-GPU NVLink domains of 4-GPU servers. Filled in rank
    // order, the second instance of a 128-GPU cluster would take GPUs 64-71 of the first rack and 72-127 of the
    // second, its all-to-all over the NICs; placed whole, each instance has a rack of its own, and two instances
    // serve exactly as one does (per GPU: the same TPOT and throughput).
    let mut one = deepseek_ep64_decode();
    one.gpu.server_gpus = 4;
    one.scale_up.domain_gpus = 72;
    let single = serve(&one).unwrap();
    let two = serve(&ServingConfig { gpus: 128, ..one.clone() }).unwrap();
    assert_eq!(two.tpot_s, single.tpot_s);
    assert_eq!(two.decode_step.comm_s, single.decode_step.comm_s);
    assert!(close(two.output_tokens_per_s, 2.0 * single.output_tokens_per_s, 1e-12));
}
