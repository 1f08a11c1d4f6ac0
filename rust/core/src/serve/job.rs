//! A finite job: `requests` requests submitted at once (offline batch inference; MLPerf Inference's Offline
//! scenario issues its whole query so), served until the last one ends. The steady state holds while the queue
//! lasts; once it is empty the running sequences drain and the batch shrinks, down to the longest output's last
//! tokens at a batch of one, so the job's throughput falls below the steady state's by how long its outputs' tail
//! is. With long-tailed outputs (a reasoning model's) the drain is a large part of a job.
//!
//! When the queue empties, the sequences in flight are at an equilibrium point of their outputs: each one's
//! remaining output R has P(R > k) = E[(L - k)+] / E[L] (the residual life of renewal theory; Kleinrock, Queueing
//! Systems Vol. 1, 1975, Sec. 5.2), L the output length, log-normal with the given mean and coefficient of
//! variation and capped at `max_output_tokens`. A job no larger than the batch starts fresh: P(R > k) = P(L > k).
//! The drain's k-th step runs the survivors (at least one a replica while any runs), their context grown by k.

use crate::cost::uncertainty::normal_cdf;

use super::layout::{PhaseLayout, ServingLayout};
use super::schedule::{instance_step_s, lognormal_s2, running_context};
use super::step::{step_time, StepWork};
use super::{Serving, ServingCluster, ServingEvaluation, ServingMode};

/// The drain's quadrature takes this many nodes evenly in steps and as many evenly in the running share (where
/// the batch falls fastest, and at a fixed length's cliff).
const DRAIN_NODES: usize = 32;

/// The output length: log-normal (mean, cv), capped at `cap` (0 = none), with what every evaluation of its
/// tail needs worked out once.
#[derive(Clone, Copy, Debug)]
struct Length {
    mean: f64,
    cv: f64,
    cap: f64,
    /// The log-normal's s^2 = ln(1 + cv^2) and s.
    s2: f64,
    s: f64,
    /// E[(X - cap)+]: the uncapped mean beyond the cap (0 without one).
    beyond_cap: f64,
    /// E[L] = E[min(X, cap)].
    capped_mean: f64,
}

impl Length {
    fn new(mean: f64, cv: f64, cap: f64) -> Self {
        let s2 = lognormal_s2(cv);
        let mut l = Length { mean, cv, cap, s2, s: s2.sqrt(), beyond_cap: 0.0, capped_mean: 0.0 };
        if cap > 0.0 {
            l.beyond_cap = l.excess_uncapped(cap);
        }
        l.capped_mean = l.excess(0.0);
        l
    }

    fn of(s: &Serving) -> Self {
        Length::new(s.output_tokens, s.output_tokens_cv, s.max_output_tokens as f64)
    }

    fn capped(&self, k: f64) -> bool {
        self.cap > 0.0 && k >= self.cap
    }

    /// E[(X - k)+] of the uncapped log-normal X: mean Phi(d1) - k Phi(d1 - s), d1 = (ln(mean / k) + s^2 / 2) / s.
    fn excess_uncapped(&self, k: f64) -> f64 {
        if self.cv <= 0.0 || k <= 0.0 {
            return (self.mean - k).max(0.0);
        }
        let s = self.s;
        let d1 = ((self.mean / k).ln() + s * s / 2.0) / s;
        (self.mean * normal_cdf(d1) - k * normal_cdf(d1 - s)).max(0.0)
    }

    /// E[(L - k)+] of the capped length L = min(X, cap).
    fn excess(&self, k: f64) -> f64 {
        if self.capped(k) {
            return 0.0;
        }
        (self.excess_uncapped(k) - self.beyond_cap).max(0.0)
    }

    /// P(L > k).
    fn survival(&self, k: f64) -> f64 {
        if self.capped(k) {
            return 0.0;
        }
        if self.cv <= 0.0 || k <= 0.0 {
            return if k < self.mean { 1.0 } else { 0.0 };
        }
        normal_cdf(-((k / self.mean).ln() + self.s2 / 2.0) / self.s)
    }
}

/// The sequences running when the drain starts and the share of them still running k steps later.
struct Drain {
    length: Length,
    /// In flight when the queue empties (equilibrium residuals), or a fresh start (the job fits the batch).
    fresh: bool,
    /// Sequences of the whole cluster at the start of the drain, and per replica.
    sequences: f64,
    per_replica: f64,
}

impl Drain {
    fn running(&self, k: f64) -> f64 {
        if self.fresh {
            self.length.survival(k)
        } else {
            self.length.excess(k) / self.length.capped_mean
        }
    }

    /// The steps just before and at the first at which at most `share` of the sequences run, within [lo, hi]
    /// (bisection: the share decreases).
    fn step_at(&self, share: f64, mut lo: f64, mut hi: f64) -> (f64, f64) {
        for _ in 0..50 {
            let mid = 0.5 * (lo + hi);
            if self.running(mid) > share {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        (lo, hi)
    }

    /// Steps until fewer than half a sequence is expected to run (the cap bounds them).
    fn steps(&self) -> f64 {
        let last = 0.5 / self.sequences;
        let mut hi = if self.length.cap > 0.0 { self.length.cap } else { self.length.mean.max(1.0) };
        while self.length.cap <= 0.0 && self.running(hi) > last && hi < 1e12 {
            hi *= 2.0;
        }
        self.step_at(last, 0.0, hi).1
    }

    /// The quadrature's nodes: evenly in steps and evenly in the running share, in order.
    fn nodes(&self) -> Vec<f64> {
        let steps = self.steps();
        let end = self.running(steps);
        let n = DRAIN_NODES as f64;
        let mut k: Vec<f64> = (0..=DRAIN_NODES).map(|j| steps * j as f64 / n).collect();
        for j in 1..DRAIN_NODES {
            let (before, at) = self.step_at(1.0 - (1.0 - end) * j as f64 / n, 0.0, steps);
            k.extend([before, at]);
        }
        k.sort_by(f64::total_cmp);
        k.dedup();
        k
    }
}

/// The job's figures: its whole time, the drain's part of it, and its output tokens per second.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Job {
    pub time_s: f64,
    pub drain_s: f64,
    pub output_tokens_per_s: f64,
}

/// One decode step of the instance with `seqs` sequences a replica at `context` tokens, nothing prefilled.
fn decode_step_s(c: &ServingCluster, p: &PhaseLayout, s: &Serving, seqs: f64, context: f64) -> f64 {
    let w = StepWork { decode_seqs: seqs, context, prefill_tokens: 0.0, prompt: s.input_tokens };
    instance_step_s(c, p, &step_time(c, p, s, &w), seqs)
}

/// Time and output tokens of the drain: the trapezoid rule over its nodes.
fn drain(c: &ServingCluster, p: &PhaseLayout, s: &Serving, d: &Drain) -> (f64, f64) {
    let base = if d.fresh { s.input_tokens } else { running_context(s) };
    let (mut time_s, mut tokens, mut last) = (0.0, 0.0, None::<(f64, f64, f64)>);
    for k in d.nodes() {
        let share = d.running(k);
        let step = decode_step_s(c, p, s, (d.per_replica * share).max(1.0), base + k);
        if let Some((k0, step0, share0)) = last {
            time_s += 0.5 * (k - k0) * (step + step0);
            tokens += 0.5 * (k - k0) * (share + share0) * d.sequences;
        }
        last = Some((k, step, share));
    }
    (time_s, tokens)
}

/// Prefill of `prompts` prompts a replica with nothing decoding: steps of `max_num_tokens` prompt tokens.
fn prefill_alone_s(c: &ServingCluster, p: &PhaseLayout, s: &Serving, prompts: f64) -> f64 {
    let chunk = s.max_num_tokens as f64;
    let w = StepWork { decode_seqs: 0.0, context: 0.0, prefill_tokens: chunk, prompt: s.input_tokens };
    prompts * s.input_tokens / chunk * instance_step_s(c, p, &step_time(c, p, s, &w), chunk)
}

/// Prefill of the job's first prompts, those the steady state does not cover: on the instances themselves when
/// co-located, on the prefill instances when disaggregated (none: served elsewhere, nothing to wait for).
fn start_s(c: &ServingCluster, l: &ServingLayout, s: &Serving, prompts: f64) -> f64 {
    let (pool, instances) = match l.mode {
        ServingMode::Colocated => (&l.decode, l.instances),
        ServingMode::Disaggregated => (&l.prefill, l.prefill_instances),
    };
    if instances == 0 || prompts <= 0.0 {
        return 0.0;
    }
    let replicas = (pool.dp_attention * pool.pp * instances) as f64;
    prefill_alone_s(c, pool, s, prompts / replicas)
}

/// The job of `s.requests` requests on the evaluated deployment `e` (its `batch` per decode instance): the first
/// prompts, the steady state while the queue lasts, then the drain. The steady state prefills a prompt for every
/// `output_tokens` it generates; the prompts it leaves (the job's less those) are prefilled alone at the start.
pub(super) fn job(c: &ServingCluster, l: &ServingLayout, s: &Serving, e: &ServingEvaluation) -> Job {
    let p = &l.decode;
    if l.instances == 0 {
        return Job::default(); // a prefill pool alone: no output to time
    }
    let requests = s.requests as f64;
    let slots = e.batch * l.instances as f64;
    let replicas = (p.dp_attention * p.pp) as f64;
    let fresh = requests <= slots;
    let sequences = requests.min(slots);
    let d = Drain { length: Length::of(s), fresh, sequences, per_replica: sequences / l.instances as f64 / replicas };
    let (drain_s, drain_tokens) = drain(c, p, s, &d);
    let total_tokens = requests * s.output_tokens;
    let steady_tokens = if fresh { 0.0 } else { (total_tokens - drain_tokens).max(0.0) };
    let steady_s = if e.output_tokens_per_s > 0.0 { steady_tokens / e.output_tokens_per_s } else { 0.0 };
    let start = start_s(c, l, s, (requests - steady_tokens / s.output_tokens).max(0.0));
    let time_s = start + steady_s + drain_s;
    Job { time_s, drain_s, output_tokens_per_s: total_tokens / time_s }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn length(mean: f64, cv: f64, cap: f64) -> Length {
        Length::new(mean, cv, cap)
    }

    #[test]
    fn the_excess_over_a_length_is_the_log_normals_partial_expectation() {
        // cv 1: s = sqrt(ln 2) = 0.8326, d1 = (ln 1 + 0.3466) / 0.8326 = 0.4163: E[(X - 1,000)+] = 1,000 (Phi(0.4163)
        // - Phi(-0.4163)) = 1,000 (0.66140 - 0.33860) = 322.79. Over every k it integrates to E[X^2] / 2 = 1,000^2
        // (1 + 1) / 2 = 10^6, the numerator of the residual's mean E[X^2] / (2 E[X]) = 1,000.
        let l = length(1_000.0, 1.0, 0.0);
        assert!((l.excess(1_000.0) - 322.793).abs() < 1e-3, "{}", l.excess(1_000.0));
        assert_eq!(l.excess(0.0), 1_000.0);
        let dk = 1.0;
        let integral: f64 = (0..2_000_000).map(|i| l.excess((i as f64 + 0.5) * dk) * dk).sum();
        assert!((integral / 1e6 - 1.0).abs() < 1e-3, "{integral}");
        // Fixed lengths: 1,000 - k; none beyond.
        assert_eq!(length(1_000.0, 0.0, 0.0).excess(250.0), 750.0);
        assert_eq!(length(1_000.0, 0.0, 0.0).excess(1_500.0), 0.0);
    }

    #[test]
    fn a_cap_cuts_the_tail_and_the_median_splits_the_survivors() {
        // The log-normal's median is mean exp(-s^2 / 2): half the lengths run past it.
        let l = length(1_000.0, 1.0, 0.0);
        assert!((l.survival(1_000.0 / 2f64.sqrt()) - 0.5).abs() < 1e-12);
        // Capped at 5,000: nothing runs past the cap, and the capped mean is the mean less E[(X - 5,000)+].
        let capped = length(1_000.0, 1.0, 5_000.0);
        assert_eq!((capped.survival(5_000.0), capped.excess(5_000.0)), (0.0, 0.0));
        assert!((capped.excess(0.0) - (1_000.0 - l.excess(5_000.0))).abs() < 1e-9);
        assert!(capped.excess(2_000.0) < l.excess(2_000.0));
    }
}
