//! Invariants the serving model must keep for any configuration (proptest): more bandwidth never makes a service
//! slower, the figures are finite and consistent with each other, and the batch stays within the KV cache.

use proptest::prelude::*;
use scalefront_core::examples::serving_config;
use scalefront_core::serve::{serve, KvCacheDtype, Quantization, ServingConfig, ServingEvaluation, ServingMode};

/// A random serving configuration of Llama 3 70B on 2..32 H100s (some do not fit: those are skipped).
fn config() -> impl Strategy<Value = ServingConfig> {
    (
        prop::sample::select(vec![2u32, 4, 8]), // tp
        prop::sample::select(vec![1u32, 2, 4]), // instances' worth of GPUs
        prop::sample::select(vec![ServingMode::Colocated, ServingMode::Disaggregated]),
        prop::sample::select(vec![0u32, 1, 8, 64, 256]), // batch (0: what the KV cache holds)
        16.0f64..4000.0,                                 // input tokens
        16.0f64..2000.0,                                 // output tokens
        prop::sample::select(vec![Quantization::Bf16, Quantization::Fp8]),
        prop::sample::select(vec![KvCacheDtype::Bf16, KvCacheDtype::Fp8]),
        0.0f64..1.5, // length spread
    )
        .prop_map(|(tp, k, mode, batch, isl, osl, q, kv, cv)| {
            let mut c = serving_config();
            c.gpus = 2 * tp * k; // a P:D group of one prefill and one decode instance divides it
            let s = &mut c.serving;
            (s.tp, s.mode, s.batch, s.input_tokens, s.output_tokens) = (tp, mode, batch, isl, osl);
            (s.quantization, s.kv_cache_dtype, s.input_tokens_cv, s.output_tokens_cv) = (q, kv, cv, cv);
            c
        })
}

fn no_slower(fast: &ServingEvaluation, base: &ServingEvaluation) -> bool {
    let tol = 1.0 + 1e-9;
    fast.tpot_s <= base.tpot_s * tol
        && fast.ttft_s <= base.ttft_s * tol
        && fast.output_tokens_per_s * tol >= base.output_tokens_per_s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn more_bandwidth_never_makes_serving_slower(c in config(), factor in 1.0f64..8.0) {
        let Ok(base) = serve(&c) else { return Ok(()) };
        let mut hbm = c.clone();
        hbm.gpu.hbm_bytes_per_s *= factor;
        prop_assert!(no_slower(&serve(&hbm).unwrap(), &base));
        let mut net = c.clone();
        net.fabric.link_bytes_per_s *= factor;
        prop_assert!(no_slower(&serve(&net).unwrap(), &base));
        let mut nvlink = c.clone();
        nvlink.scale_up.bytes_per_s *= factor;
        prop_assert!(no_slower(&serve(&nvlink).unwrap(), &base));
    }

    #[test]
    fn figures_are_finite_and_consistent(c in config()) {
        let Ok(e) = serve(&c) else { return Ok(()) };
        for v in [e.ttft_s, e.tpot_s, e.output_tokens_per_s, e.cost_usd_per_million_tokens, e.request_latency_s] {
            prop_assert!(v.is_finite() && v > 0.0, "{e:?}");
        }
        prop_assert!(e.batch <= e.max_batch && e.batch >= 1.0);
        prop_assert!(e.ttft_p99_s >= e.ttft_s * (1.0 - 1e-12));
        prop_assert!(e.request_latency_p99_s >= e.request_latency_s * (1.0 - 1e-12));
        let per_gpu = e.output_tokens_per_s / c.gpus as f64;
        prop_assert!((e.output_tokens_per_s_per_gpu - per_gpu).abs() <= 1e-9 * per_gpu);
        prop_assert!(e.memory.kv_cache_bytes + e.memory.weights_bytes <= e.memory.hbm_bytes);
    }
}
