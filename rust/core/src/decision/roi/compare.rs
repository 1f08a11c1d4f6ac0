//! A and B compared at one GPU count: the definitions of `super` (docs/roi.md) as one `Comparison`.

use super::cashflow::{self, Flows};
use super::lifecycle::Phases;
use super::side::{Lines, Side};
use super::{Payback, RoiOptions};

crate::record! {
    /// The comparison of A and B at one GPU count.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Comparison {
        pub gpus: u32,
        /// rho = W_A / W_B.
        pub speed_ratio: f64,
        /// Multiplier applied to A's fabric lines (1 without `--premium`).
        pub premium_scale: f64,
        pub tco_a_usd: f64,
        pub tco_b_usd: f64,
        pub capex_a_usd: f64,
        pub capex_b_usd: f64,
        pub opex_a_usd_per_year: f64,
        pub opex_b_usd_per_year: f64,
        /// Fabric cost (PV of the lines that scale with its price) of A and B.
        pub fabric_a_usd: f64,
        pub fabric_b_usd: f64,
        /// N_A / N_B.
        pub premium: f64,
        /// N_A* / N_B: the premium at which both cost the same per delivered work.
        pub break_even_premium: f64,
        /// rho PV(TCO_B) - PV(TCO_A): positive when A is cheaper per delivered work.
        pub savings_usd: f64,
        /// The value of one busy GPU-hour used for NPV and payback.
        pub value_usd_per_gpu_hour: f64,
        /// NPV of choosing A: -(extra capex + delay) + PV(monthly benefit) + PV(extra resale).
        pub npv_usd: f64,
        /// A's extra capex over B's (negative: A is cheaper upfront).
        pub extra_capex_usd: f64,
        /// PV(TCO_A) - PV(TCO_B): what A costs more over the life, before valuing any speed difference.
        pub extra_tco_usd: f64,
        /// A's extra running cost a year (energy, support, licences, staff, replacements).
        pub extra_opex_usd_per_year: f64,
        /// The value of A's extra capacity a year (negative when A is slower).
        pub extra_capacity_usd_per_year: f64,
        /// A's extra resale at the end of the life (undiscounted).
        pub extra_residual_usd: f64,
        /// The capacity A's later delivery loses (its lead time beyond B's), valued as extra capacity is; at month 0.
        pub delay_usd: f64,
        /// PV of A's extra capacity over the life at the valuation.
        pub speed_value_usd: f64,
        /// A lifecycle's split (`lifecycle`): months of training (the whole life without one), each phase's speed
        /// ratio, the value of A's extra capacity a year while serving, and the PV of speed in each phase (they
        /// add up to `speed_value_usd`).
        pub training_months: f64,
        pub training_speed_ratio: f64,
        pub serving_speed_ratio: f64,
        pub serving_extra_capacity_usd_per_year: f64,
        pub speed_value_training_usd: f64,
        pub speed_value_serving_usd: f64,
        pub payback: Payback,
        /// Months to pay back A's extra capex (infinite when never; 0 when dominant).
        pub payback_months: f64,
        pub life_months: f64,
        /// Cost per delivered million tokens, per workload, on A and B.
        pub usd_per_mtoken_a: Vec<f64>,
        pub usd_per_mtoken_b: Vec<f64>,
        /// Levelised cost of a useful GPU-hour (busy and advancing training: goodput).
        pub usd_per_useful_gpu_hour_a: f64,
        pub usd_per_useful_gpu_hour_b: f64,
    }
}

/// What the comparison prices before it sums: A's premium scale, both sides' cost lines and TCOs, the value of a
/// GPU-hour, the delay, and the cash flows of A over B.
struct Valuation {
    phases: Phases,
    premium_scale: f64,
    fabric_a_usd: f64,
    fabric_b_usd: f64,
    lines_a: Lines,
    lines_b: Lines,
    tco_a_usd: f64,
    tco_b_usd: f64,
    annuity: f64,
    value_usd_per_gpu_hour: f64,
    delay_usd: f64,
    break_even_usd: f64,
    extra_per_month_usd: f64,
    serving_per_month_usd: f64,
    flows: Flows,
}

impl Valuation {
    fn new(a: &Side, b: &Side, shares: &[f64], refs: &[f64], options: &RoiOptions) -> Valuation {
        let d = a.cost.tco.discounting;
        let phases = Phases::new(options.training_months, &d, a, b, a.work(shares, refs) / b.work(shares, refs));
        let rho = phases.ratio();
        let (fa, fb) = (a.cost.fabric.pv(&d), b.cost.fabric.pv(&d));
        let k = match options.premium {
            Some(p) if fa > 0.0 => p * fb / fa,
            _ => 1.0,
        };
        let (la, lb) = (a.cost.total(k), b.cost.total(1.0));
        let (tco_a, tco_b) = (la.pv(&d), lb.pv(&d));
        let annuity = d.life_annuity();
        let b_hours = b.gpu_hours_per_month();
        let value = options.value_usd_per_gpu_hour.unwrap_or(tco_b / (b_hours * annuity));
        // A month of delay loses a month of the cluster's capacity, valued as extra capacity is, at the start.
        let delay_usd = (a.cost.cost.delay_months - b.cost.cost.delay_months) * b_hours * value;
        let extra_per_month = (phases.training_ratio - 1.0) * b_hours * value;
        let serving_per_month = (phases.serving_ratio - 1.0) * b_hours * value;
        let d_opex_per_month = (la.opex_usd_per_year - lb.opex_usd_per_year) / 12.0;
        let flows = Flows {
            upfront_usd: la.capex_usd - lb.capex_usd + delay_usd,
            monthly_usd: extra_per_month - d_opex_per_month,
            residual_usd: la.residual_usd - lb.residual_usd,
            months: d.months(),
            training_months: phases.training_months,
            serving_monthly_usd: serving_per_month - d_opex_per_month,
        };
        Valuation {
            premium_scale: k,
            fabric_a_usd: fa,
            fabric_b_usd: fb,
            tco_a_usd: tco_a,
            tco_b_usd: tco_b,
            annuity,
            value_usd_per_gpu_hour: value,
            delay_usd,
            break_even_usd: rho * tco_b - a.cost.rest.pv(&d) - delay_usd,
            extra_per_month_usd: extra_per_month,
            serving_per_month_usd: serving_per_month,
            flows,
            phases,
            lines_a: la,
            lines_b: lb,
        }
    }
}

/// Compare A and B on their designs at one GPU count.
pub fn compare(a: &Side, b: &Side, shares: &[f64], refs: &[f64], options: &RoiOptions) -> Comparison {
    let v = Valuation::new(a, b, shares, refs, options);
    let d = a.cost.tco.discounting;
    let (phases, k, la, lb) = (&v.phases, v.premium_scale, &v.lines_a, &v.lines_b);
    let (tco_a, tco_b, annuity) = (v.tco_a_usd, v.tco_b_usd, v.annuity);
    let (extra_per_month, serving_per_month) = (v.extra_per_month_usd, v.serving_per_month_usd);
    let (speed_training, speed_serving) =
        (extra_per_month * phases.training_annuity, serving_per_month * phases.serving_annuity);
    let npv = v.flows.npv(&d);
    let (payback, months) = cashflow::payback(&v.flows, npv, &d);
    let rho = phases.ratio();
    Comparison {
        gpus: a.gpus,
        speed_ratio: rho,
        premium_scale: k,
        tco_a_usd: tco_a,
        tco_b_usd: tco_b,
        capex_a_usd: la.capex_usd,
        capex_b_usd: lb.capex_usd,
        opex_a_usd_per_year: la.opex_usd_per_year,
        opex_b_usd_per_year: lb.opex_usd_per_year,
        fabric_a_usd: k * v.fabric_a_usd,
        fabric_b_usd: v.fabric_b_usd,
        premium: k * v.fabric_a_usd / v.fabric_b_usd,
        break_even_premium: v.break_even_usd / v.fabric_b_usd,
        savings_usd: rho * tco_b - tco_a - v.delay_usd,
        value_usd_per_gpu_hour: v.value_usd_per_gpu_hour,
        npv_usd: npv,
        extra_capex_usd: la.capex_usd - lb.capex_usd,
        extra_tco_usd: tco_a - tco_b,
        extra_opex_usd_per_year: la.opex_usd_per_year - lb.opex_usd_per_year,
        extra_capacity_usd_per_year: 12.0 * extra_per_month,
        extra_residual_usd: v.flows.residual_usd,
        delay_usd: v.delay_usd,
        speed_value_usd: if phases.serving_annuity == 0.0 {
            extra_per_month * annuity
        } else {
            speed_training + speed_serving
        },
        training_months: phases.training_months,
        training_speed_ratio: phases.training_ratio,
        serving_speed_ratio: phases.serving_ratio,
        serving_extra_capacity_usd_per_year: 12.0 * serving_per_month,
        speed_value_training_usd: speed_training,
        speed_value_serving_usd: speed_serving,
        payback,
        payback_months: months,
        life_months: d.months(),
        usd_per_mtoken_a: usd_per_mtoken(a, tco_a, annuity),
        usd_per_mtoken_b: usd_per_mtoken(b, tco_b, annuity),
        usd_per_useful_gpu_hour_a: usd_per_useful_gpu_hour(a, shares, tco_a, annuity),
        usd_per_useful_gpu_hour_b: usd_per_useful_gpu_hour(b, shares, tco_b, annuity),
    }
}

/// Cost per delivered million tokens of each workload on one side, at its TCO `tco`.
fn usd_per_mtoken(side: &Side, tco: f64, annuity: f64) -> Vec<f64> {
    side.speed.tokens_per_s.iter().map(|t| tco / (t * side.cost.tco.busy_s_per_month * annuity) * 1e6).collect()
}

/// Levelised cost of a useful GPU-hour on one side: busy and advancing training (the mix's goodput).
fn usd_per_useful_gpu_hour(side: &Side, shares: &[f64], tco: f64, annuity: f64) -> f64 {
    let goodput: f64 = shares.iter().zip(&side.speed.goodput).map(|(s, g)| s * g).sum();
    tco / (side.gpu_hours_per_month() * annuity * goodput)
}
