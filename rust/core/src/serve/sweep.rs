//! A serving sweep: every layout of a space on one cluster design, on all cores, folded into the Pareto frontier
//! of chosen objectives (throughput per GPU, cost per million tokens, TTFT, TPOT, ...) among the layouts that
//! meet every service-level objective. The space is the product of its axes' values; a layout is decoded from its
//! index (mixed radix, the last axis fastest), so the order of the work does not change the answer.

use rayon::prelude::*;

use super::{evaluate_layout, KvCacheDtype, Quantization, Serving, ServingCluster, ServingEvaluation, ServingMode};

/// The values each swept field takes; the base spec holds every other field.
#[derive(Clone, Debug, PartialEq)]
pub struct ServingSpace {
    pub base: Serving,
    pub tp: Vec<u32>,
    pub pp: Vec<u32>,
    pub ep: Vec<u32>,
    pub dp_attention: Vec<u32>,
    pub mode: Vec<ServingMode>,
    pub prefill_instances: Vec<u32>,
    pub decode_instances: Vec<u32>,
    pub batch: Vec<u32>,
    pub max_num_tokens: Vec<u32>,
    pub quantization: Vec<Quantization>,
    pub kv_cache_dtype: Vec<KvCacheDtype>,
}

/// The names of the swept fields, in the order a layout's index is decoded (the last fastest).
pub const AXES: [&str; 11] = [
    "tp",
    "pp",
    "ep",
    "dp_attention",
    "mode",
    "prefill_instances",
    "decode_instances",
    "batch",
    "max_num_tokens",
    "quantization",
    "kv_cache_dtype",
];

impl ServingSpace {
    /// Every axis with the base spec's one value.
    pub fn of(base: Serving) -> Self {
        ServingSpace {
            tp: vec![base.tp],
            pp: vec![base.pp],
            ep: vec![base.ep],
            dp_attention: vec![base.dp_attention],
            mode: vec![base.mode],
            prefill_instances: vec![base.prefill_instances],
            decode_instances: vec![base.decode_instances],
            batch: vec![base.batch],
            max_num_tokens: vec![base.max_num_tokens],
            quantization: vec![base.quantization],
            kv_cache_dtype: vec![base.kv_cache_dtype],
            base,
        }
    }

    fn lengths(&self) -> [u64; 11] {
        [
            self.tp.len(),
            self.pp.len(),
            self.ep.len(),
            self.dp_attention.len(),
            self.mode.len(),
            self.prefill_instances.len(),
            self.decode_instances.len(),
            self.batch.len(),
            self.max_num_tokens.len(),
            self.quantization.len(),
            self.kv_cache_dtype.len(),
        ]
        .map(|n| n as u64)
    }

    /// Layouts in the space (0 when an axis is empty).
    pub fn size(&self) -> u64 {
        self.lengths().iter().try_fold(1u64, |acc, &n| acc.checked_mul(n)).unwrap_or(u64::MAX)
    }

    /// The layout at `index` (< `size()`).
    pub fn layout(&self, index: u64) -> Serving {
        let mut digits = [0usize; 11];
        let mut rest = index;
        for (digit, n) in digits.iter_mut().zip(self.lengths()).rev() {
            *digit = (rest % n) as usize;
            rest /= n;
        }
        let [tp, pp, ep, dpa, mode, pi, di, batch, tokens, q, kv] = digits;
        Serving {
            tp: self.tp[tp],
            pp: self.pp[pp],
            ep: self.ep[ep],
            dp_attention: self.dp_attention[dpa],
            mode: self.mode[mode],
            prefill_instances: self.prefill_instances[pi],
            decode_instances: self.decode_instances[di],
            batch: self.batch[batch],
            max_num_tokens: self.max_num_tokens[tokens],
            quantization: self.quantization[q],
            kv_cache_dtype: self.kv_cache_dtype[kv],
            ..self.base.clone()
        }
    }
}

/// A metric of a serving evaluation (`crate::metrics::SERVING_METRICS` names them for the bindings).
pub type Accessor = fn(&ServingEvaluation) -> f64;

/// One objective of the frontier, and which way is better.
#[derive(Clone, Copy, Debug)]
pub struct Objective {
    pub value: Accessor,
    pub maximise: bool,
}

/// A service-level objective: `value <= limit` (or `>=` when `upper` is false).
#[derive(Clone, Copy, Debug)]
pub struct Slo {
    pub value: Accessor,
    pub limit: f64,
    pub upper: bool,
}

impl Slo {
    pub fn met(&self, e: &ServingEvaluation) -> bool {
        let v = (self.value)(e);
        if self.upper {
            v <= self.limit
        } else {
            v >= self.limit
        }
    }
}

/// Non-dominated layouts by index; ties on every objective keep the smaller index.
#[derive(Clone, Debug, Default)]
pub struct Frontier {
    pub points: Vec<(u64, [f64; 3], ServingEvaluation)>,
    /// Layouts evaluated, rejected as impossible (bad degrees, KV cache full), and evaluated but over an SLO.
    pub evaluated: u64,
    pub rejected: u64,
    pub over_slo: u64,
}

fn dominates(a: &[f64; 3], b: &[f64; 3]) -> bool {
    a.iter().zip(b).all(|(x, y)| x <= y) && a != b
}

impl Frontier {
    fn insert(&mut self, index: u64, key: [f64; 3], e: ServingEvaluation) {
        let beaten = self.points.iter().any(|(i, k, _)| dominates(k, &key) || (*k == key && *i < index));
        if beaten {
            return;
        }
        self.points.retain(|(_, k, _)| !(dominates(&key, k) || *k == key));
        self.points.push((index, key, e));
    }

    fn merge(mut self, other: Frontier) -> Frontier {
        self.evaluated += other.evaluated;
        self.rejected += other.rejected;
        self.over_slo += other.over_slo;
        for (i, k, e) in other.points {
            self.insert(i, k, e);
        }
        self
    }
}

/// Evaluate every layout of `space` on the cluster and keep the frontier of `objectives` (one to three) among the
/// layouts that meet every SLO, sorted by index. An SLO nothing meets leaves the frontier empty.
pub fn sweep(cluster: &ServingCluster, space: &ServingSpace, objectives: &[Objective], slos: &[Slo]) -> Frontier {
    let key = |e: &ServingEvaluation| {
        let mut k = [0.0; 3];
        for (slot, o) in k.iter_mut().zip(objectives) {
            let v = (o.value)(e);
            *slot = if o.maximise { -v } else { v };
        }
        k
    };
    let mut out = (0..space.size())
        .into_par_iter()
        .fold(Frontier::default, |mut f, index| {
            match evaluate_layout(cluster, &space.layout(index)) {
                Err(_) => f.rejected += 1,
                Ok(e) if !slos.iter().all(|s| s.met(&e)) => {
                    f.evaluated += 1;
                    f.over_slo += 1;
                }
                Ok(e) => {
                    f.evaluated += 1;
                    let k = key(&e);
                    f.insert(index, k, e);
                }
            }
            f
        })
        .reduce(Frontier::default, Frontier::merge);
    out.points.sort_by_key(|(i, _, _)| *i);
    out
}

fn output_per_gpu(e: &ServingEvaluation) -> f64 {
    e.output_tokens_per_s_per_gpu
}

/// What a cluster design serves at a service level: the layout of `space` with the most output tokens per second
/// per GPU among those that meet every SLO, its index and its evaluation (cost per million tokens among its
/// metrics); None when no layout meets them. The ROI's serving workload ("serve this model at this SLO") reads
/// this, one call per cluster design; ties keep the smaller index, so the answer does not depend on the threads.
pub fn best_at_slo(cluster: &ServingCluster, space: &ServingSpace, slos: &[Slo]) -> Option<(u64, ServingEvaluation)> {
    let objectives = [Objective { value: output_per_gpu, maximise: true }];
    sweep(cluster, space, &objectives, slos).points.into_iter().next().map(|(i, _, e)| (i, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::examples::serving_config;

    fn tpot(e: &ServingEvaluation) -> f64 {
        e.tpot_s
    }
    fn per_gpu(e: &ServingEvaluation) -> f64 {
        e.output_tokens_per_s_per_gpu
    }

    fn space() -> ServingSpace {
        let mut s = ServingSpace::of(serving_config().serving);
        s.tp = vec![1, 2, 4, 8];
        s.batch = vec![1, 8, 64, 256, 1024];
        s
    }

    #[test]
    fn the_index_decodes_every_layout_once() {
        let s = space();
        assert_eq!(s.size(), 20);
        let layouts: Vec<(u32, u32)> = (0..s.size()).map(|i| (s.layout(i).tp, s.layout(i).batch)).collect();
        assert_eq!(layouts[0], (1, 1));
        assert_eq!(layouts[1], (1, 8)); // the last axis runs fastest
        assert_eq!(layouts[19], (8, 1024));
        let mut unique = layouts.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), 20);
    }

    #[test]
    fn the_frontier_trades_throughput_for_latency_and_respects_the_slo() {
        let cfg = serving_config();
        let c = ServingCluster::new(&cfg).unwrap();
        let objectives = [Objective { value: per_gpu, maximise: true }, Objective { value: tpot, maximise: false }];
        let all = sweep(&c, &space(), &objectives, &[]);
        assert_eq!(all.evaluated + all.rejected, 20);
        // Llama 3 70B in FP8 does not fit one 80 GB H100 with room for a KV cache: tp 1 is rejected.
        assert!(all.rejected >= 5, "{all:?}");
        // Along the frontier, more throughput per GPU costs a longer TPOT.
        let mut pts: Vec<(f64, f64)> = all.points.iter().map(|(_, _, e)| (e.tpot_s, per_gpu(e))).collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        assert!(pts.windows(2).all(|w| w[1].1 > w[0].1), "{pts:?}");
        // Brute force: no evaluated layout dominates a frontier point.
        for i in 0..space().size() {
            if let Ok(e) = evaluate_layout(&c, &space().layout(i)) {
                assert!(!all.points.iter().any(|(_, _, p)| per_gpu(&e) > per_gpu(p) && e.tpot_s < p.tpot_s));
            }
        }
        // An SLO no layout meets is an empty frontier, not an error.
        let none = sweep(&c, &space(), &objectives, &[Slo { value: tpot, limit: 1e-6, upper: true }]);
        assert!(none.points.is_empty() && none.over_slo == none.evaluated && none.evaluated > 0);
        // A 50 ms TPOT bound keeps only layouts within it.
        let slo = [Slo { value: tpot, limit: 0.05, upper: true }];
        let bounded = sweep(&c, &space(), &objectives, &slo);
        assert!(!bounded.points.is_empty() && bounded.points.iter().all(|(_, _, e)| e.tpot_s <= 0.05));
    }

    #[test]
    fn the_best_layout_at_an_slo_is_the_fastest_per_gpu_that_meets_it() {
        let cfg = serving_config();
        let c = ServingCluster::new(&cfg).unwrap();
        let slo = [Slo { value: tpot, limit: 0.05, upper: true }];
        let (index, best) = best_at_slo(&c, &space(), &slo).unwrap();
        // Brute force over the 20 layouts: no layout within 50 ms per token serves more per GPU.
        let within: Vec<(u64, ServingEvaluation)> = (0..space().size())
            .filter_map(|i| evaluate_layout(&c, &space().layout(i)).ok().map(|e| (i, e)))
            .filter(|(_, e)| e.tpot_s <= 0.05)
            .collect();
        let top = within.iter().map(|(_, e)| per_gpu(e)).fold(0.0, f64::max);
        assert_eq!(per_gpu(&best), top);
        assert!(within.iter().any(|(i, _)| *i == index) && best.tpot_s <= 0.05);
        // Its cost per million tokens is the cluster's hour over its tokens.
        let per_million = best.cost_usd_per_hour / (best.output_tokens_per_s * 3_600.0) * 1e6;
        assert!((best.cost_usd_per_million_tokens - per_million).abs() <= 1e-9 * per_million);
        // A looser SLO never serves less; one nothing meets serves nothing.
        let loose = [Slo { value: tpot, limit: 0.5, upper: true }];
        assert!(per_gpu(&best_at_slo(&c, &space(), &loose).unwrap().1) >= per_gpu(&best));
        assert!(best_at_slo(&c, &space(), &[Slo { value: tpot, limit: 1e-6, upper: true }]).is_none());
    }
}
