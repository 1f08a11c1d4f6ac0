//! Cost of one `scalefront_core::evaluate` call, in the Rust core, single-threaded.
//! Run: `cargo bench --bench evaluate`. Prints the median of 9 runs of 1,000,000 evaluations, cycling through
//! 16 parallel layouts so nothing is computed once and reused, every other one in FP8 (whose layer overhead needs
//! the layers at BF16 rates too), and one JSON line last.

use scalefront_core::examples as common;
use scalefront_core::step::parallelism::Precision;
use scalefront_core::{evaluate, Config, Recompute};
use std::hint::black_box;
use std::time::Instant;

fn configs() -> Vec<Config> {
    let mut out = Vec::new();
    for (tp, pp, vpp) in [(8, 4, 5), (8, 8, 1), (4, 8, 2), (2, 16, 1)] {
        for recompute in [Recompute::None, Recompute::Selective, Recompute::Full] {
            let mut c = common::reference();
            c.parallelism.tp = tp;
            c.parallelism.pp = pp;
            c.parallelism.vpp = vpp;
            c.parallelism.dp = 1024 / (tp * pp);
            c.parallelism.recompute = recompute;
            c.training.global_batch = 1024;
            out.push(c);
        }
    }
    out.truncate(16);
    while out.len() < 16 {
        let mut c = common::reference();
        c.parallelism.zero_stage = (out.len() % 4) as u32;
        out.push(c);
    }
    for c in out.iter_mut().skip(1).step_by(2) {
        c.training.precision = Precision::Fp8;
    }
    out
}

fn main() {
    let configs = configs();
    for c in &configs {
        evaluate(c).expect("benchmark configurations are valid");
    }
    let n = 1_000_000usize;
    let mut per_eval_ns = Vec::new();
    for _ in 0..9 {
        let start = Instant::now();
        let mut acc = 0.0;
        for i in 0..n {
            let e = evaluate(black_box(&configs[i & 15])).unwrap();
            acc += e.step_time_s;
        }
        black_box(acc);
        per_eval_ns.push(start.elapsed().as_nanos() as f64 / n as f64);
    }
    per_eval_ns.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let median = per_eval_ns[per_eval_ns.len() / 2];
    println!("evaluate: median {median:.1} ns per configuration (runs: {per_eval_ns:.1?})");
    println!(
        "{{\"bench\": \"evaluate_core\", \"ns_per_eval_median\": {median:.1}, \"evals_per_s\": {:.0}}}",
        1e9 / median
    );
}
