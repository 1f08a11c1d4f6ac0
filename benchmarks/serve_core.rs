//! Cost of one serving evaluation in the Rust core (`scalefront_core::serve`), and of a serving sweep of 10^7
//! layouts on 2 threads. Run: `cargo bench --bench serve`. Prints the medians and one JSON line last.
//!
//! One evaluation: the median of 9 runs of 1,000,000 `evaluate_layout` calls on a staged cluster (what a sweep
//! runs per layout), cycling through 16 layouts (dense and MoE, co-located and disaggregated, TP, EP, attention DP,
//! PP) so nothing is computed once and reused; and of 100,000 whole `serve` calls (cluster stage included: network,
//! bill of materials, prices). The sweep: Llama 3 70B and DeepSeek-V3 on 1,024 H100s, 11 axes, 10,321,920 layouts
//! of which most are valid, on a 2-thread pool (the median of 3).

use scalefront_core::examples as common;
use scalefront_core::serve::sweep::{sweep, Objective, ServingSpace};
use scalefront_core::serve::{
    evaluate_layout, serve, KvCacheDtype, Quantization, Serving, ServingCluster, ServingConfig, ServingEvaluation,
    ServingMode,
};
use std::hint::black_box;
use std::time::Instant;

fn deepseek(gpus: u32) -> ServingConfig {
    let mut c = common::serving_config();
    c.model = common::deepseek_v3();
    c.gpus = gpus;
    c
}

fn layouts() -> Vec<(ServingConfig, Serving)> {
    let mut out = Vec::new();
    let mut dense = common::serving_config();
    dense.gpus = 64;
    for (tp, pp, batch) in
        [(8, 1, 0), (4, 2, 64), (2, 1, 256), (8, 1, 1), (4, 1, 32), (8, 2, 512), (2, 4, 128), (4, 1, 0)]
    {
        let mut s = dense.serving.clone();
        (s.tp, s.pp, s.batch) = (tp, pp, batch);
        out.push((dense.clone(), s));
    }
    let moe = deepseek(64);
    for (ep, dpa, mode, batch) in [
        (16, 16, ServingMode::Disaggregated, 2048),
        (16, 16, ServingMode::Colocated, 2048),
        (64, 64, ServingMode::Colocated, 8192),
        (32, 32, ServingMode::Colocated, 0),
        (16, 16, ServingMode::Disaggregated, 512),
        (16, 16, ServingMode::Disaggregated, 1024),
        (16, 16, ServingMode::Disaggregated, 64),
        (16, 16, ServingMode::Colocated, 256),
    ] {
        let mut s = moe.serving.clone();
        (s.tp, s.ep, s.dp_attention, s.mode, s.batch) = (1, ep, dpa, mode, batch);
        out.push((moe.clone(), s));
    }
    out
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn one_evaluation() -> (f64, f64) {
    let cases = layouts();
    let clusters: Vec<ServingCluster> = cases.iter().map(|(c, _)| ServingCluster::new(c).unwrap()).collect();
    for ((_, s), c) in cases.iter().zip(&clusters) {
        if let Err(e) = evaluate_layout(c, s) {
            panic!("benchmark layout {s:?} is invalid: {e}");
        }
    }
    let n = 1_000_000usize;
    let mut runs = Vec::new();
    for _ in 0..9 {
        let start = Instant::now();
        let mut acc = 0.0;
        for i in 0..n {
            let e: ServingEvaluation = evaluate_layout(&clusters[i & 15], black_box(&cases[i & 15].1)).unwrap();
            acc += e.tpot_s;
        }
        black_box(acc);
        runs.push(start.elapsed().as_nanos() as f64 / n as f64);
    }
    let configs: Vec<ServingConfig> =
        cases.iter().map(|(c, s)| ServingConfig { serving: s.clone(), ..c.clone() }).collect();
    let m = 100_000usize;
    let mut whole = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        for i in 0..m {
            black_box(serve(black_box(&configs[i & 15])).unwrap());
        }
        whole.push(start.elapsed().as_nanos() as f64 / m as f64);
    }
    (median(runs), median(whole))
}

fn per_gpu(e: &ServingEvaluation) -> f64 {
    e.output_tokens_per_s_per_gpu
}
fn tpot(e: &ServingEvaluation) -> f64 {
    e.tpot_s
}

fn ten_million() -> (u64, u64, f64) {
    let cfg = deepseek(1024);
    let cluster = ServingCluster::new(&cfg).unwrap();
    let mut space = ServingSpace::of(cfg.serving.clone());
    space.tp = vec![1, 2, 4, 8];
    space.pp = vec![1, 2];
    space.ep = vec![8, 16, 32, 64];
    space.dp_attention = vec![8, 16, 32, 64];
    space.mode = vec![ServingMode::Colocated, ServingMode::Disaggregated];
    space.prefill_instances = vec![1, 2, 3];
    space.decode_instances = vec![1, 2, 4];
    space.batch = (1..=280).map(|k| k * k / 4 + 1).collect();
    space.max_num_tokens = vec![2048, 4096, 8192, 16384];
    space.quantization = vec![Quantization::Bf16, Quantization::Fp8];
    space.kv_cache_dtype = vec![KvCacheDtype::Bf16, KvCacheDtype::Fp8];
    let objectives = [Objective { value: per_gpu, maximise: true }, Objective { value: tpot, maximise: false }];
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let mut runs = Vec::new();
    let mut last = (0, 0);
    for _ in 0..3 {
        let start = Instant::now();
        let f = pool.install(|| sweep(&cluster, &space, &objectives, &[]));
        runs.push(start.elapsed().as_secs_f64());
        last = (space.size(), f.evaluated);
        black_box(f.points.len());
    }
    (last.0, last.1, median(runs))
}

fn main() {
    let (eval_ns, serve_ns) = one_evaluation();
    println!("serving evaluation (staged cluster): median {eval_ns:.1} ns; whole serve(): median {serve_ns:.1} ns");
    let (size, evaluated, secs) = ten_million();
    println!("serving sweep: {size} layouts ({evaluated} valid) on 2 threads in {secs:.2} s (median of 3)");
    println!(
        "{{\"bench\": \"serve_core\", \"ns_per_layout_median\": {eval_ns:.1}, \"ns_per_serve_median\": {serve_ns:.1}, \
         \"sweep_layouts\": {size}, \"sweep_valid\": {evaluated}, \"sweep_s_2_threads\": {secs:.3}}}"
    );
}
