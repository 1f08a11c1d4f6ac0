//! The Monte Carlo run: every sample's outcome at every GPU count, on all cores, and the summaries.

use std::sync::atomic::Ordering;

use rayon::prelude::*;

use crate::decision::roi::{DesignScratch, Payback};
use crate::error::ConfigError;

use super::{McProgress, Outcome, Plan};

crate::record! {
    /// The Monte Carlo result of one (GPU count, B) pair. P is the share of the samples: each sample draws every
    /// price, fabric figure and model error from its distribution, so P measures how sure the verdict is given
    /// what is uncertain about the inputs and the model, not a spread between buyers or jobs.
    #[derive(Clone, Debug, PartialEq)]
    pub struct McSummary {
        pub gpus: u32,
        /// Which B (1, 2, ...).
        pub side_b: u32,
        pub samples: u64,
        /// P(A is cheaper per delivered work): P(savings > 0).
        pub p_a_cheaper: f64,
        /// P(choosing A pays: NPV > 0), the headline probability (equal to `p_a_cheaper` when no value per
        /// GPU-hour is given).
        pub p_npv_positive: f64,
        /// The same with the model's error left out of every sample.
        pub p_npv_positive_no_error: f64,
        /// P(A's extra capex pays back within the life, or nothing to pay back).
        pub p_payback_within_life: f64,
        /// P10, P50, P90 of each outcome.
        pub premium: [f64; 3],
        pub break_even_premium: [f64; 3],
        pub savings_usd: [f64; 3],
        pub npv_usd: [f64; 3],
        pub npv_no_error_usd: [f64; 3],
        pub extra_capex_usd: [f64; 3],
        pub extra_tco_usd: [f64; 3],
        pub extra_tco_share: [f64; 3],
        pub payback_months: [f64; 3],
        pub speed_ratio: [f64; 3],
        /// The IRR's P10, P50, P90 over the samples (those without one at their bounds, `Flows::irr_ranked`;
        /// samples that are not an investment left out).
        pub irr: [f64; 3],
    }
}

/// Every sample's outcome per count, and the summaries.
#[derive(Clone, Debug, PartialEq)]
pub struct McResult {
    /// outcomes[pair][sample], the pairs in `Plan::counts` order.
    pub outcomes: Vec<Vec<Outcome>>,
    pub summaries: Vec<McSummary>,
    pub cancelled: bool,
}

/// The P10, P50 and P90 of `values` (nearest rank on the sorted values; infinities sort last).
pub fn deciles(values: &mut [f64]) -> [f64; 3] {
    if values.is_empty() {
        return [f64::NAN; 3];
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    [0.1, 0.5, 0.9].map(|q| values[((q * n as f64).ceil() as usize).clamp(1, n) - 1])
}

/// The summary of one pair's outcomes (any run or the merged shards of one).
pub fn summarise(gpus: u32, side_b: u32, outcomes: &[Outcome]) -> McSummary {
    let n = outcomes.len() as f64;
    let pick = |f: &dyn Fn(&Outcome) -> f64| deciles(&mut outcomes.iter().map(f).collect::<Vec<_>>());
    let share = |f: &dyn Fn(&Outcome) -> bool| outcomes.iter().filter(|o| f(o)).count() as f64 / n;
    McSummary {
        gpus,
        side_b,
        samples: outcomes.len() as u64,
        p_a_cheaper: share(&|o| o.savings_usd > 0.0),
        p_npv_positive: share(&|o| o.npv_usd > 0.0),
        p_npv_positive_no_error: share(&|o| o.npv_no_error_usd > 0.0),
        p_payback_within_life: share(&|o| matches!(o.payback, Payback::Months | Payback::Dominant)),
        premium: pick(&|o| o.premium),
        break_even_premium: pick(&|o| o.break_even_premium),
        savings_usd: pick(&|o| o.savings_usd),
        npv_usd: pick(&|o| o.npv_usd),
        npv_no_error_usd: pick(&|o| o.npv_no_error_usd),
        extra_capex_usd: pick(&|o| o.extra_capex_usd),
        extra_tco_usd: pick(&|o| o.extra_tco_usd),
        extra_tco_share: pick(&|o| o.extra_tco_share),
        payback_months: pick(&|o| o.payback_months),
        speed_ratio: pick(&|o| o.speed_ratio),
        irr: deciles(&mut outcomes.iter().map(|o| o.irr).filter(|x| !x.is_nan()).collect::<Vec<_>>()),
    }
}

/// Samples per task: a task checks for cancellation and reports progress once, and keeps its configurations.
const SAMPLES_PER_TASK: u64 = 64;

/// Run `samples` samples on the current rayon pool, starting at sample `first` (a shard of a longer run gives the
/// same outcomes as that run). Stops early, with `cancelled`, when `progress.cancel` is set.
pub fn run(plan: &Plan, seed: u64, first: u64, samples: u64, progress: &McProgress) -> Result<McResult, ConfigError> {
    let tasks = samples.div_ceil(SAMPLES_PER_TASK);
    let per_task: Vec<Option<Vec<Vec<Outcome>>>> = (0..tasks)
        .into_par_iter()
        .map(|t| {
            if progress.cancel.load(Ordering::Relaxed) {
                return Ok(None);
            }
            let start = first + t * SAMPLES_PER_TASK;
            let end = (start + SAMPLES_PER_TASK).min(first + samples);
            let mut rows = Vec::with_capacity((end - start) as usize);
            let mut scratch = vec![DesignScratch::default(); plan.problem.designs.len()];
            for s in start..end {
                rows.push(plan.outcomes_in(&plan.draw(seed, s), &mut scratch)?);
            }
            progress.done.fetch_add(end - start, Ordering::Relaxed);
            Ok(Some(rows))
        })
        .collect::<Result<_, ConfigError>>()?;
    let cancelled = per_task.iter().any(Option::is_none);
    let mut outcomes: Vec<Vec<Outcome>> = vec![Vec::with_capacity(samples as usize); plan.counts.len()];
    for rows in per_task.into_iter().flatten() {
        for row in rows {
            for (c, o) in row.into_iter().enumerate() {
                outcomes[c].push(o);
            }
        }
    }
    let summaries = plan.counts.iter().zip(&outcomes).map(|(c, o)| summarise(c.gpus, c.side_b, o)).collect();
    Ok(McResult { outcomes, summaries, cancelled })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deciles_by_nearest_rank() {
        let mut v: Vec<f64> = (1..=10).map(f64::from).rev().collect();
        assert_eq!(deciles(&mut v), [1.0, 5.0, 9.0]);
        let mut w = vec![f64::INFINITY, 1.0, 2.0];
        assert_eq!(deciles(&mut w), [1.0, 2.0, f64::INFINITY]);
    }
}
