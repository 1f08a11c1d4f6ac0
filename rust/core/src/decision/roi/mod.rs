//! Is fabric A (say InfiniBand) worth its premium over fabric B (say RoCE)? Both fabrics own the same number of
//! GPUs for the cluster's life and run a mix of workloads, each for a share of the busy hours. Every number here
//! is in own mode: the total cost of ownership of `crate::cost::economics::Tco`.
//!
//! Definitions (docs/roi.md works each through by hand):
//! - delivered throughput of workload w on fabric X: tau = tokens/s x goodput, at the best layout among the
//!   candidates (the configurations the typical-value sweep kept);
//! - work index W_X = sum_w share_w tau_wX / ref_w, ref_w the best tau_w of any design at that GPU count (one
//!   busy hour of the reference design = one unit of work); speed ratio rho = W_A / W_B;
//! - cost per delivered token of w on X = PV(TCO_X) / PV(tokens_w); A is cheaper per delivered work when
//!   rho PV(TCO_B) > PV(TCO_A); the **savings** of choosing A = rho PV(TCO_B) - PV(TCO_A);
//! - fabric cost N_X: the present value of every line that scales with the fabric's price (hardware, its spares
//!   and installation, support and licences, less its residual value); the **premium** is N_A / N_B and the
//!   **break-even premium** is N_A* / N_B, N_A* = rho PV(TCO_B) - (PV(TCO_A) - N_A) (equal cost per work);
//! - A's extra capacity, (rho - 1) x GPUs x busy hours, is valued at v $/GPU-hour (default: B's levelised cost of
//!   a busy GPU-hour, the cost-avoidance view, under which NPV = savings); **NPV** of choosing A = -dCapex -
//!   PV(dOpex) + PV(dResidual) + PV(extra capacity x v); **payback** = the month the discounted cumulative
//!   benefit (the resale difference counted at the end of the life) recovers dCapex, flagged `dominant` (A
//!   cheaper upfront and no worse after), `trade-off` (A cheaper upfront, worse after), `never` (dearer and no
//!   better), `beyond life`; with the default valuation, paid back within the life exactly when NPV >= 0;
//! - a lifecycle (`lifecycle`, `RoiOptions::training_months`): training months, then serving; rho is each phase's
//!   ratio weighted by its discounted months, and the value of speed splits between the phases.

//!
//! `side` prices and times one fabric's design (`SideCost`, `SideSpeed`); `compare` compares two of them; this
//! module holds the problem (designs, workloads, options).

use crate::error::ConfigError;
use crate::evaluate::Config;
use crate::named_enum;

mod cashflow;
mod compare;
mod lifecycle;
mod side;

pub use cashflow::{payback_months, CashFlowYear, Flows};
pub use compare::{compare, Comparison};
pub use lifecycle::{Phases, ServingRate, ServingSpeed};
pub use side::{
    shares_cluster, side_cost, side_cost_and_speeds, side_cost_and_speeds_in, side_cost_in, side_speed, side_speeds,
    DesignScratch, Lines, Side, SideCost, SideReport, SideSpeed, StepError,
};

named_enum! {
    /// How each fabric's cluster design (topology) is chosen per GPU count.
    pub enum DesignRule {
        /// The same topology for both: the one with the lowest sum of the two costs per delivered work.
        Same = "same",
        /// Each fabric on its own cheapest design per delivered work (the topologies may differ).
        Cheapest = "cheapest",
    }
}

named_enum! {
    /// What the payback period says.
    pub enum Payback {
        /// A's extra cost upfront is recovered within the life, after `payback_months`.
        Months = "months",
        /// Recovered, but only after the life ends.
        BeyondLife = "beyond life",
        /// A costs no more upfront and is no worse afterwards: nothing to pay back.
        Dominant = "dominant",
        /// A costs less upfront but more afterwards (slower, or dearer to run): B's premium would pay back.
        TradeOff = "trade-off",
        /// A costs more upfront and is no better afterwards.
        Never = "never",
    }
}

/// One cluster design of one fabric at one GPU count, with the candidate layouts of every workload of the mix.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct Design {
    /// 0 = fabric A; 1, 2, ... = the designs B it is compared with (fabrics, or operating modes of one).
    pub side: u32,
    pub gpus: u32,
    /// A label for the topology (the sweep's name and oversubscription).
    pub topology: String,
    /// Per workload of the mix (in order), the candidate configurations on this cluster.
    pub candidates: Vec<Vec<Config>>,
    /// What it serves in a lifecycle's serving months (None without a lifecycle).
    #[cfg_attr(feature = "python", pyo3(default))]
    pub serving: Option<ServingSpeed>,
}

/// The comparison's options.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct RoiOptions {
    pub design: DesignRule,
    /// A's fabric cost as a multiple of B's (`--premium`); None: each fabric at its catalog prices.
    pub premium: Option<f64>,
    /// What one extra busy GPU-hour of A is worth; None: B's levelised cost of a busy GPU-hour.
    pub value_usd_per_gpu_hour: Option<f64>,
    /// A lifecycle (`lifecycle`): the months the cluster trains before it serves the rest of its life with every
    /// design's `serving`; None: it trains for its whole life.
    #[cfg_attr(feature = "python", pyo3(default))]
    pub training_months: Option<f64>,
}

/// The comparison of A with one or more B: the mix, the designs, the options.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct RoiProblem {
    /// Share of the busy hours of each workload of the mix (sum 1).
    pub shares: Vec<f64>,
    pub designs: Vec<Design>,
    pub options: RoiOptions,
}

impl RoiProblem {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.shares.is_empty() || self.shares.iter().any(|s| !(s.is_finite() && *s > 0.0)) {
            return Err(ConfigError::InvalidFigure { field: "shares", value: 0.0, expected: "shares > 0" });
        }
        let total: f64 = self.shares.iter().sum();
        if (total - 1.0).abs() > 1e-6 {
            return Err(ConfigError::InvalidFigure { field: "shares", value: total, expected: "shares summing to 1" });
        }
        if let Some(p) = self.options.premium {
            crate::hardware::positive("premium", p)?;
        }
        if let Some(v) = self.options.value_usd_per_gpu_hour {
            crate::hardware::non_negative("value_usd_per_gpu_hour", v)?;
        }
        if let Some(t) = self.options.training_months {
            crate::hardware::non_negative("training_months", t)?;
            let serves = |s: &ServingSpeed| {
                s.tokens_per_s_per_gpu.is_finite()
                    && s.tokens_per_s_per_gpu > 0.0
                    && (0.0..=1.0).contains(&s.comm_share)
            };
            if self.designs.iter().any(|d| !d.serving.as_ref().is_some_and(serves)) {
                return Err(ConfigError::InvalidFigure {
                    field: "serving",
                    value: t,
                    expected: "every design's serving speed (tokens/s per GPU > 0, comm share 0-1) with a lifecycle",
                });
            }
        }
        for d in &self.designs {
            if d.candidates.len() != self.shares.len() || d.candidates.iter().any(Vec::is_empty) {
                return Err(ConfigError::InvalidFigure {
                    field: "designs",
                    value: d.side as f64,
                    expected: "at least one candidate per workload",
                });
            }
            for c in d.candidates.iter().flatten() {
                c.validate_figures()?;
            }
        }
        Ok(())
    }

    /// The sides B (1, 2, ...) with a design, ascending.
    pub fn sides_b(&self) -> Vec<u32> {
        let mut sides: Vec<u32> = self.designs.iter().map(|d| d.side).filter(|&s| s > 0).collect();
        sides.sort_unstable();
        sides.dedup();
        sides
    }

    /// The (GPU count, side B) pairs with a design on A and on that B, by count then side.
    pub fn pairs(&self) -> Vec<(u32, u32)> {
        let mut counts: Vec<u32> = self.designs.iter().map(|d| d.gpus).collect();
        counts.sort_unstable();
        counts.dedup();
        let has = |n: u32, side: u32| self.designs.iter().any(|d| d.gpus == n && d.side == side);
        let sides = self.sides_b();
        counts
            .iter()
            .flat_map(|&n| sides.iter().filter(move |&&b| has(n, 0) && has(n, b)).map(move |&b| (n, b)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::economics::{ClusterCost, Discounting, SECONDS_PER_MONTH};
    use crate::examples;
    use crate::prices::Economics;

    fn side(gpus: u32, tau: f64, cost: ClusterCost, econ: &Economics) -> Side {
        Side { speed: SideSpeed::one_workload(tau), cost: SideCost::new(cost, econ), gpus, serving: None }
    }

    /// No discounting, no residual, always busy, no facility, energy free: the arithmetic is plain.
    fn plain() -> Economics {
        let mut e = examples::prices().economics;
        (e.discount_rate, e.residual_fraction, e.utilisation, e.usd_per_kwh) = (0.0, 0.0, 1.0, 0.0);
        (e.colocation_usd_per_kw_month, e.network_spares_fraction, e.installation_fraction) = (0.0, 0.0, 0.0);
        (e.amortization_years, e.server_spares_fraction) = (5.0, 0.0);
        e
    }

    fn cluster(servers: f64, fabric: f64) -> ClusterCost {
        ClusterCost {
            server_capex_usd: servers,
            network_capex_usd: fabric,
            fabric_capex_usd: fabric,
            ..ClusterCost::default()
        }
    }

    fn options() -> RoiOptions {
        RoiOptions { design: DesignRule::Same, premium: None, value_usd_per_gpu_hour: None, training_months: None }
    }

    #[test]
    fn break_even_premium_and_savings_by_hand() {
        // 1,000 GPUs, servers $100M on both; A's fabric $12M, B's $10M; A delivers 2% more tokens/s. TCO_A =
        // $112M, TCO_B = $110M (undiscounted, nothing else). Savings = 1.02 x 110 - 112 = +$0.2M: A is cheaper
        // per delivered token. Break-even N_A* = 1.02 x 110 - 100 = $12.2M -> 1.22x B's $10M; actual 1.2x.
        let e = plain();
        let a = side(1000, 1.02, cluster(100e6, 12e6), &e);
        let b = side(1000, 1.0, cluster(100e6, 10e6), &e);
        let c = compare(&a, &b, &[1.0], &[1.02], &options());
        assert!((c.speed_ratio - 1.02).abs() < 1e-12);
        assert!((c.savings_usd - 0.2e6).abs() < 1e-3, "{}", c.savings_usd);
        assert!((c.break_even_premium - 1.22).abs() < 1e-12 && (c.premium - 1.2).abs() < 1e-12);
        // Cost-avoidance valuation: NPV = savings. B's busy GPU-hour costs 110M / (1,000 x 43,830 h) = $2.5097.
        assert!((c.npv_usd - c.savings_usd).abs() < 1e-3);
        assert!((c.value_usd_per_gpu_hour - 110e6 / (1000.0 * 5.0 * 8766.0)).abs() < 1e-9);
        // Payback: $2M upfront against 0.02 x 1,000 GPUs x 730.5 h x $2.5097 = $36,667 a month = 54.5 months,
        // within the 60-month life.
        assert_eq!(c.payback, Payback::Months);
        assert!((c.payback_months - 2e6 / (0.02 * 1000.0 * 730.5 * c.value_usd_per_gpu_hour)).abs() < 1e-6);
        assert!((c.payback_months - 54.545).abs() < 1e-3, "{}", c.payback_months);
        // --premium 1.3: A's fabric = 1.3 x $10M = $13M > break-even $12.2M: savings 1.02 x 110 - 113 = -0.8M.
        let p = compare(&a, &b, &[1.0], &[1.02], &RoiOptions { premium: Some(1.3), ..options() });
        assert!((p.savings_usd + 0.8e6).abs() < 1e-3 && (p.premium - 1.3).abs() < 1e-12);
        assert_eq!(p.payback, Payback::BeyondLife); // 3M / 36,667 = 81.8 months > 60
                                                    // Rented out at $3/GPU-h instead: the extra 14,610 GPU-h a month earn $43,830; NPV = -2M + 60 x 43,830.
        let v = compare(&a, &b, &[1.0], &[1.02], &RoiOptions { value_usd_per_gpu_hour: Some(3.0), ..options() });
        assert!((v.npv_usd - (-2e6 + 60.0 * 0.02 * 1000.0 * 730.5 * 3.0)).abs() < 1e-3, "{}", v.npv_usd);
    }

    #[test]
    fn resale_at_the_end_of_the_life_can_complete_the_payback() {
        // A's $2M extra fabric resells for 50%: $1M more at the end. Everything resells for 50%, so B's TCO is
        // 110M - 55M = $55M and its busy GPU-hour $55M / 43.83M h = $1.2548. At 2% faster, A's extra capacity is
        // worth 0.02 x 1,000 x 730.5 h x $1.2548 = $18,333 a month: $1.1M over the 60 months, short of the $2M
        // (109 months); with the resale difference NPV = -2M + 1.1M + 1M = +$0.1M: paid back at the end of life.
        let mut e = plain();
        e.residual_fraction = 0.5;
        let a = side(1000, 1.02, cluster(100e6, 12e6), &e);
        let b = side(1000, 1.0, cluster(100e6, 10e6), &e);
        let c = compare(&a, &b, &[1.0], &[1.02], &options());
        assert!((c.npv_usd - 0.1e6).abs() < 1e-3, "{}", c.npv_usd);
        assert_eq!((c.payback, c.payback_months), (Payback::Months, 60.0));
        // Without the resale (the same value of an hour) it does not: 109 months.
        e.residual_fraction = 0.0;
        let a = side(1000, 1.02, cluster(100e6, 12e6), &e);
        let b = side(1000, 1.0, cluster(100e6, 10e6), &e);
        let valued = RoiOptions { value_usd_per_gpu_hour: Some(c.value_usd_per_gpu_hour), ..options() };
        let c = compare(&a, &b, &[1.0], &[1.02], &valued);
        assert!(c.npv_usd < 0.0 && c.payback == Payback::BeyondLife);
        assert!((c.payback_months - 2e6 / (0.02 * 730_500.0 * c.value_usd_per_gpu_hour)).abs() < 1e-6);
    }

    #[test]
    fn payback_flags() {
        let e = plain();
        let b = side(1000, 1.0, cluster(100e6, 10e6), &e);
        // Cheaper and faster: dominant. Cheaper and slower: a trade-off. Dearer and slower: never.
        let cheap_fast = compare(&side(1000, 1.01, cluster(100e6, 9e6), &e), &b, &[1.0], &[1.01], &options());
        assert_eq!((cheap_fast.payback, cheap_fast.payback_months), (Payback::Dominant, 0.0));
        let cheap_slow = compare(&side(1000, 0.99, cluster(100e6, 9e6), &e), &b, &[1.0], &[1.0], &options());
        assert_eq!(cheap_slow.payback, Payback::TradeOff);
        let dear_slow = compare(&side(1000, 0.99, cluster(100e6, 11e6), &e), &b, &[1.0], &[1.0], &options());
        assert_eq!(dear_slow.payback, Payback::Never);
        assert!(dear_slow.payback_months.is_infinite());
    }

    #[test]
    fn discounted_payback_by_hand() {
        // $1,000 recovered by $100 a month at 12% a year: annuity(m) = 10 with v = 1.12^(-1/12):
        // v^m = 1 - 10 (1 - v) / v = 0.905111 -> m = ln(0.905111) / ln(v) = 10.557 months (10 undiscounted).
        let d = Discounting::new(0.12, 5.0);
        let m = payback_months(1000.0, 100.0, &d);
        assert!((d.annuity(m) - 10.0).abs() < 1e-9 && (m - 10.557).abs() < 0.001, "{m}");
        assert_eq!(payback_months(1000.0, 100.0, &Discounting::new(0.0, 5.0)), 10.0);
        // A perpetuity worth less than the upfront cost never pays back: $5 a month at 12% is worth ~$530.
        assert!(payback_months(1000.0, 5.0, &d).is_infinite());
    }

    #[test]
    fn cost_per_delivered_token_and_useful_gpu_hour() {
        // TCO $110M over 5 years, undiscounted, always busy: 60 months x 2,629,800 s. 1M tokens/s -> 1.578e14
        // tokens -> $0.6971 per million. Useful GPU-hours at goodput 0.9: 1,000 x 43,830 x 0.9.
        let e = plain();
        let mut b = side(1000, 1e6, cluster(100e6, 10e6), &e);
        b.speed.goodput = vec![0.9];
        let c = compare(&side(1000, 1e6, cluster(100e6, 10e6), &e), &b, &[1.0], &[1e6], &options());
        let tokens = 1e6 * 60.0 * SECONDS_PER_MONTH;
        assert!((c.usd_per_mtoken_b[0] - 110e6 / tokens * 1e6).abs() < 1e-12);
        assert!((c.usd_per_mtoken_b[0] - 0.6971).abs() < 1e-4);
        assert!((c.usd_per_useful_gpu_hour_b - 110e6 / (1000.0 * 43830.0 * 0.9)).abs() < 1e-9);
    }

    #[test]
    fn a_mix_weighs_each_workload_by_its_share() {
        // 70% on a workload A runs 4% faster, 30% on one it runs 2% slower: rho = 0.7 x 1.04 + 0.3 x 0.98.
        let e = plain();
        let mut a = side(1000, 0.0, cluster(100e6, 10e6), &e);
        a.speed.tokens_per_s = vec![1.04, 0.98];
        a.speed.goodput = vec![1.0, 1.0];
        let mut b = a.clone();
        b.speed.tokens_per_s = vec![1.0, 1.0];
        let c = compare(&a, &b, &[0.7, 0.3], &[1.04, 1.0], &options());
        let w_a = 0.7 * 1.04 / 1.04 + 0.3 * 0.98;
        let w_b = 0.7 * 1.0 / 1.04 + 0.3;
        assert!((c.speed_ratio - w_a / w_b).abs() < 1e-12);
    }

    #[test]
    fn the_cost_lines_add_up_to_the_tco() {
        let prices = examples::prices();
        let net = crate::network::topology::Network::new(&examples::ib_ndr(), &examples::rail_fat_tree(), 1024, 8);
        let parts = crate::network::bom::parts(
            &net,
            &crate::network::bom::Cabling::new(&net, &examples::rail_fat_tree(), &prices),
        );
        let cost = ClusterCost::new(1024, &examples::h100(), &prices, &parts, 0.0);
        let s = SideCost::new(cost, &prices.economics);
        let d = s.tco.discounting;
        assert!((s.total(1.0).pv(&d) - s.tco.pv_usd()).abs() < 1e-3);
        let sum: f64 = s.breakdown(1.0).iter().map(|(_, v)| v).sum();
        // The breakdown counts opex undiscounted-over-months as annuity/12 years: it adds up to the PV too.
        assert!((sum - s.tco.pv_usd()).abs() / s.tco.pv_usd() < 1e-9, "{sum} vs {}", s.tco.pv_usd());
        let sum2: f64 = s.breakdown(1.5).iter().map(|(_, v)| v).sum();
        assert!((sum2 - s.total(1.5).pv(&d)).abs() / sum2 < 1e-9);
    }
}
