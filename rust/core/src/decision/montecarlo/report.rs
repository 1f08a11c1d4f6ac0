//! What the comparison reports: per GPU count, the comparison at typical values with both sides and the tornado;
//! and the Monte Carlo's outcomes as columns with their summary.

use crate::decision::roi::{Comparison, Payback, SideReport};
use crate::error::ConfigError;
use crate::records::Column;

use super::{tornado, McResult, McSummary, Outcome, Plan, TornadoBar};
use crate::decision::roi::{CashFlowYear, Flows};

crate::record! {
    /// One (GPU count, B) pair at typical values: the comparison's figures, the two designs' topologies, both
    /// sides, the tornado of every uncertain input that moves the NPV, and the premium's yearly cash flows.
    #[derive(Clone, Debug, PartialEq)]
    pub struct CountReport {
        pub comparison: Comparison => flatten,
        /// Which B (1, 2, ...).
        pub side_b: u32,
        pub topology_a: String,
        pub topology_b: String,
        pub a: SideReport,
        pub b: SideReport,
        pub tornado: Vec<TornadoBar>,
        pub cash_flows: Vec<CashFlowYear>,
        /// The yearly internal rate of return of choosing A (its premium against its benefits); NaN when the flows
        /// never change sign or are not an outlay followed by returns (`Flows::irr`).
        pub irr: f64,
    }
}

crate::record! {
    /// The comparison at typical values, per (GPU count, B) pair.
    #[derive(Clone, Debug, PartialEq)]
    pub struct TypicalReport {
        pub counts: Vec<CountReport>,
    }
}

/// The comparison at typical values of every pair of the plan, with its tornado.
pub fn typical_report(plan: &Plan) -> Result<TypicalReport, ConfigError> {
    typical_report_with(plan, true)
}

/// The comparison at typical values of every pair of the plan; the tornado (the slow part: each input moved over
/// its range, flips found by bisection) only when `with_tornado`.
pub fn typical_report_with(plan: &Plan, with_tornado: bool) -> Result<TypicalReport, ConfigError> {
    let designs = &plan.problem.designs;
    let mut counts = Vec::with_capacity(plan.counts.len());
    for count in &plan.counts {
        let [a, b] = plan.sides(count, plan.typical_values())?;
        let comparison = plan.compare(count, plan.typical_values())?;
        let flows = Flows::of(&comparison);
        let discounting = a.cost.tco.discounting;
        counts.push(CountReport {
            side_b: count.side_b,
            topology_a: designs[count.a].topology.clone(),
            topology_b: designs[count.b].topology.clone(),
            a: SideReport::new(&a, comparison.premium_scale),
            b: SideReport::new(&b, 1.0),
            tornado: if with_tornado { tornado(plan, count)? } else { Vec::new() },
            cash_flows: flows.yearly(&discounting),
            irr: flows.irr(),
            comparison,
        });
    }
    Ok(TypicalReport { counts })
}

crate::record! {
    /// Every sample's outcome at one GPU count, one column per figure; `payback` as the index of its kind in
    /// `McReport::payback_kinds`.
    #[derive(Clone, Debug, PartialEq)]
    #[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
    pub struct OutcomeColumns {
        pub premium: Column<f64>,
        pub break_even_premium: Column<f64>,
        pub savings_usd: Column<f64>,
        pub npv_usd: Column<f64>,
        pub npv_no_error_usd: Column<f64>,
        pub extra_capex_usd: Column<f64>,
        pub extra_tco_usd: Column<f64>,
        pub extra_tco_share: Column<f64>,
        pub payback_months: Column<f64>,
        pub speed_ratio: Column<f64>,
        pub irr: Column<f64>,
        pub payback: Column<u32>,
    }
}

impl OutcomeColumns {
    pub fn new(outcomes: &[Outcome]) -> Self {
        let col = |f: fn(&Outcome) -> f64| Column(outcomes.iter().map(f).collect());
        OutcomeColumns {
            premium: col(|o| o.premium),
            break_even_premium: col(|o| o.break_even_premium),
            savings_usd: col(|o| o.savings_usd),
            npv_usd: col(|o| o.npv_usd),
            npv_no_error_usd: col(|o| o.npv_no_error_usd),
            extra_capex_usd: col(|o| o.extra_capex_usd),
            extra_tco_usd: col(|o| o.extra_tco_usd),
            extra_tco_share: col(|o| o.extra_tco_share),
            payback_months: col(|o| o.payback_months),
            speed_ratio: col(|o| o.speed_ratio),
            irr: col(|o| o.irr),
            payback: Column(
                outcomes
                    .iter()
                    .map(|o| Payback::ALL.iter().position(|p| *p == o.payback).unwrap_or(0) as u32)
                    .collect(),
            ),
        }
    }

    /// The outcomes back from their columns (shards of one run joined in sample order).
    pub fn outcomes(&self) -> Vec<Outcome> {
        (0..self.premium.0.len())
            .map(|i| Outcome {
                premium: self.premium.0[i],
                break_even_premium: self.break_even_premium.0[i],
                savings_usd: self.savings_usd.0[i],
                npv_usd: self.npv_usd.0[i],
                npv_no_error_usd: self.npv_no_error_usd.0[i],
                extra_capex_usd: self.extra_capex_usd.0[i],
                extra_tco_usd: self.extra_tco_usd.0[i],
                extra_tco_share: self.extra_tco_share.0[i],
                payback: Payback::ALL[self.payback.0[i] as usize % Payback::ALL.len()],
                payback_months: self.payback_months.0[i],
                speed_ratio: self.speed_ratio.0[i],
                irr: self.irr.0[i],
            })
            .collect()
    }
}

crate::record! {
    /// The Monte Carlo of one (GPU count, B) pair: its outcomes and their summary.
    #[derive(Clone, Debug, PartialEq)]
    pub struct McCount {
        pub gpus: u32,
        pub side_b: u32,
        pub outcomes: OutcomeColumns,
        pub summary: McSummary,
    }
}

crate::record! {
    /// A Monte Carlo run (or a shard of one): per GPU count, its outcomes and summary.
    #[derive(Clone, Debug, PartialEq)]
    pub struct McReport {
        pub counts: Vec<McCount>,
        /// Stopped early by a cancel: the outcomes are those done.
        pub cancelled: bool,
        /// The payback kinds, in the order `OutcomeColumns::payback` indexes them.
        pub payback_kinds: Vec<&'static str>,
    }
}

impl McReport {
    /// The report of a run of `plan`.
    pub fn new(plan: &Plan, result: McResult) -> Self {
        let counts = plan
            .counts
            .iter()
            .zip(&result.outcomes)
            .zip(result.summaries)
            .map(|((c, outcomes), summary)| McCount {
                gpus: c.gpus,
                side_b: c.side_b,
                outcomes: OutcomeColumns::new(outcomes),
                summary,
            })
            .collect();
        McReport { counts, cancelled: result.cancelled, payback_kinds: Payback::ALL.iter().map(|p| p.name()).collect() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{Record, RecordDoc};

    fn keys(r: RecordDoc) -> Vec<&'static str> {
        r.fields.iter().map(|f| f.key).collect()
    }

    #[test]
    fn outcome_columns_give_back_the_outcomes_they_were_made_of() {
        // The cluster Monte Carlo joins shards' columns and summarises them again: the round trip must be exact.
        let outcome = |i: f64, payback| Outcome {
            premium: 1.0 + i,
            break_even_premium: 1.5 * i,
            savings_usd: -2e6 * i,
            npv_usd: 3e6,
            npv_no_error_usd: 2e6,
            extra_capex_usd: 1e6,
            extra_tco_usd: 2e6,
            extra_tco_share: 0.02,
            payback,
            payback_months: f64::INFINITY,
            speed_ratio: 1.1,
            irr: 0.1 * i - 0.2,
        };
        let outcomes: Vec<Outcome> = Payback::ALL.iter().enumerate().map(|(i, p)| outcome(i as f64, *p)).collect();
        let columns = OutcomeColumns::new(&outcomes);
        assert_eq!(columns.payback.0, (0..Payback::ALL.len() as u32).collect::<Vec<_>>());
        assert_eq!(columns.outcomes(), outcomes);
    }

    #[test]
    fn a_count_carries_the_keys_scalefront_roi_reads() {
        // scalefront.roi reads the comparison's figures, both sides and the tornado from one flat dict per count.
        let count = CountReport::describe();
        assert_eq!(count.bases, ["_Comparison"]);
        assert_eq!(keys(count), ["side_b", "topology_a", "topology_b", "a", "b", "tornado", "cash_flows", "irr"]);
        let comparison = keys(Comparison::describe());
        for key in ["gpus", "speed_ratio", "premium", "break_even_premium", "savings_usd", "payback", "life_months"] {
            assert!(comparison.contains(&key), "{key}");
        }
        let side = SideReport::describe();
        assert_eq!(side.bases, ["_SideSpeed"]);
        assert!(keys(side).contains(&"breakdown_usd"));
        let outcomes = keys(OutcomeColumns::describe());
        assert_eq!(outcomes.last(), Some(&"payback"));
    }
}
