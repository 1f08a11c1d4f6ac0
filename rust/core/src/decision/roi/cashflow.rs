//! The premium as an investment: choosing A over B costs `upfront` at month 0 (A's extra capex and the capacity
//! its later delivery loses), returns `monthly` at the end of each month of the life (the value of its extra
//! capacity less its extra running cost), and its extra resale at the end. Its NPV, a yearly cash-flow table a
//! CFO reads (the monthly flows summed by year and discounted monthly, so that the table adds up to the NPV), and
//! its internal rate of return (the monthly rate at which the flows' NPV is zero, compounded to a year;
//! Brealey, Myers & Allen, Principles of Corporate Finance, ch. 5: an IRR exists and is unique for an outlay
//! followed by returns, and is not defined when the flows never change sign).

use crate::cost::economics::Discounting;

use super::{Comparison, Payback};

/// The premium's cash flows (USD).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Flows {
    /// At month 0: A's extra capex and the value of the capacity its later delivery loses.
    pub upfront_usd: f64,
    /// At the end of each month: the value of A's extra capacity less its extra running cost.
    pub monthly_usd: f64,
    /// At the end of the life: A's extra resale value.
    pub residual_usd: f64,
    /// The life, in months (fractional for a fractional life).
    pub months: f64,
    /// A lifecycle: `monthly_usd` is the benefit of its first `training_months` (the whole life without one),
    /// `serving_monthly_usd` that of every later month.
    pub training_months: f64,
    pub serving_monthly_usd: f64,
}

crate::record! {
    /// One year of the premium's cash flows (year 0: the upfront outlay), in USD of that year and discounted.
    #[derive(Clone, Debug, PartialEq)]
    pub struct CashFlowYear {
        pub year: u32,
        /// A's extra capex and the delay's lost capacity (year 0 only; a cost, so negative).
        pub upfront_usd: f64,
        /// The months' benefits of the year: extra capacity valued, less extra running cost.
        pub benefit_usd: f64,
        /// A's extra resale (the last year only).
        pub residual_usd: f64,
        pub net_usd: f64,
        /// The year's flows, each discounted from its month.
        pub discounted_usd: f64,
        /// The discounted flows so far: at the last year, the NPV.
        pub cumulative_discounted_usd: f64,
    }
}

impl Flows {
    /// Flows with one benefit every month of the life.
    pub fn level(upfront_usd: f64, monthly_usd: f64, residual_usd: f64, months: f64) -> Self {
        Flows { upfront_usd, monthly_usd, residual_usd, months, training_months: months, serving_monthly_usd: 0.0 }
    }

    /// The flows of a comparison.
    pub fn of(c: &Comparison) -> Self {
        Flows {
            upfront_usd: c.extra_capex_usd + c.delay_usd,
            monthly_usd: (c.extra_capacity_usd_per_year - c.extra_opex_usd_per_year) / 12.0,
            residual_usd: c.extra_residual_usd,
            months: c.life_months,
            training_months: c.training_months,
            serving_monthly_usd: (c.serving_extra_capacity_usd_per_year - c.extra_opex_usd_per_year) / 12.0,
        }
    }

    /// Does a second phase (serving months) follow the first?
    fn phased(&self) -> bool {
        self.training_months < self.months
    }

    /// NPV: -upfront + monthly x annuity(life) + residual discounted from the end of the life; with a lifecycle
    /// each phase's benefit over its discounted months, a(T) and a(M) - a(T).
    pub fn npv(&self, d: &Discounting) -> f64 {
        if !self.phased() {
            return -self.upfront_usd + self.monthly_usd * d.annuity(self.months) + self.residual_usd * d.end_factor();
        }
        let (first, life) = (d.annuity(self.training_months), d.annuity(self.months));
        -self.upfront_usd
            + self.monthly_usd * first
            + self.serving_monthly_usd * (life - first)
            + self.residual_usd * d.end_factor()
    }

    /// The benefit a month that, every month of the life, has the benefits' present value.
    pub fn level_monthly_usd(&self, d: &Discounting) -> f64 {
        if !self.phased() {
            return self.monthly_usd;
        }
        let (first, life) = (d.annuity(self.training_months), d.annuity(self.months));
        (self.monthly_usd * first + self.serving_monthly_usd * (life - first)) / life
    }

    /// The month (fractional) at which the discounted benefits recover the upfront outlay (infinite if they never
    /// do): within the first phase as `payback_months` has it; else the rest, carried to the phase's end, recovered
    /// by the second phase's benefit, m = T + payback(rest / v^T).
    pub fn payback_months(&self, d: &Discounting) -> f64 {
        let first = payback_months(self.upfront_usd, self.monthly_usd, d);
        if !self.phased() || first <= self.training_months {
            return first;
        }
        let t = self.training_months;
        let rest = self.upfront_usd - self.monthly_usd * d.annuity(t);
        t + payback_months(rest / d.monthly_factor().powf(t), self.serving_monthly_usd, d)
    }

    /// The benefit at the end of month `m` (1 ..): the first phase's up to its last month, then the second's.
    fn benefit(&self, m: usize) -> f64 {
        if (m as f64) <= self.training_months.round() {
            self.monthly_usd
        } else {
            self.serving_monthly_usd
        }
    }

    /// The flows of months 0 ..= M (M the life rounded to whole months).
    pub fn by_month(&self) -> Vec<f64> {
        let m = self.months.round().max(1.0) as usize;
        let mut flows = vec![self.monthly_usd; m + 1];
        if self.phased() {
            flows.iter_mut().enumerate().for_each(|(i, f)| *f = self.benefit(i));
        }
        flows[0] = -self.upfront_usd;
        flows[m] += self.residual_usd;
        flows
    }

    /// The yearly table: year 0 the outlay, then the months of each year summed (a last, shorter year when the
    /// life is not whole years), each month discounted by v^m.
    pub fn yearly(&self, d: &Discounting) -> Vec<CashFlowYear> {
        let flows = self.by_month();
        let last = flows.len() - 1;
        let mut years = vec![year_row(0, -self.upfront_usd, 0.0, 0.0, -self.upfront_usd, 0.0)];
        for (y, months) in (1..=last).collect::<Vec<_>>().chunks(12).enumerate() {
            let residual = if months.contains(&last) { self.residual_usd } else { 0.0 };
            let benefit = if self.phased() {
                months.iter().map(|&m| self.benefit(m)).sum()
            } else {
                self.monthly_usd * months.len() as f64
            };
            let discounted: f64 = months.iter().map(|&m| flows[m] * d.monthly_factor().powi(m as i32)).sum();
            let before = years.last().map_or(0.0, |r| r.cumulative_discounted_usd);
            years.push(year_row(y as u32 + 1, 0.0, benefit, residual, discounted, before));
        }
        years
    }

    /// The yearly IRR, (1 + r)^12 - 1 for the monthly rate r at which the monthly flows' NPV is zero; NaN unless
    /// the flows are an outlay followed by returns (one change of sign, from negative to positive).
    pub fn irr(&self) -> f64 {
        if outlay_then_returns(&self.runs()) {
            self.irr_of_outlay()
        } else {
            f64::NAN
        }
    }

    /// The IRR where it exists, and where it does not the bound a ranking of samples puts it at: -inf when an
    /// outlay is never recovered (no positive flow, or too little at any rate above -99.99% a month), +inf when
    /// there is nothing to recover (no negative flow); NaN for flows that are not an investment (a saving upfront
    /// paid for later, or two changes of sign). The Monte Carlo's IRR per sample, so that its P50 sits beside the
    /// P50 NPV and payback.
    pub fn irr_ranked(&self) -> f64 {
        let runs = self.runs();
        if !runs.iter().any(|f| *f < 0.0) {
            return f64::INFINITY;
        }
        if !runs.iter().any(|f| *f > 0.0) {
            return f64::NEG_INFINITY;
        }
        if !outlay_then_returns(&runs) {
            return f64::NAN;
        }
        let irr = self.irr_of_outlay();
        if irr.is_nan() {
            f64::NEG_INFINITY
        } else {
            irr
        }
    }

    /// The monthly flows as runs of equal values, one value a run, in order (`by_month`'s signs without its
    /// vector): month 0, the first phase's months before the last, the second's, and the last month with the
    /// resale; runs of no month are 0 (a zero flow has no sign).
    fn runs(&self) -> [f64; 4] {
        let m = self.months.round().max(1.0) as usize;
        let t = if self.phased() { (self.training_months.round().max(0.0) as usize).min(m) } else { m };
        let first = if t.min(m - 1) >= 1 { self.monthly_usd } else { 0.0 };
        let second = if m - 1 > t { self.serving_monthly_usd } else { 0.0 };
        let last = if m <= t { self.monthly_usd } else { self.serving_monthly_usd } + self.residual_usd;
        [-self.upfront_usd, first, second, last]
    }

    /// The IRR of flows known to be an outlay followed by returns. NPV as a function of x = 1 / (1 + r) a month
    /// (each phase's months summed in closed form) rises from -outlay at x = 0: one root, bracketed by doubling
    /// and found by regula falsi with the Illinois step (Dowell & Jarratt 1971), superlinear where bisection
    /// would take ~50 halvings. NaN when the returns are too small to recover the outlay at any rate above
    /// -99.99% a month.
    fn irr_of_outlay(&self) -> f64 {
        let npv = |x: f64| self.npv_at(x);
        // At x = 0 only month 0 counts: -upfront, or 0 when the outlay starts later (then just above 0).
        let lo0 = if self.upfront_usd > 0.0 { 0.0 } else { 1e-6 };
        let (mut lo, mut hi) = (lo0, 1.0);
        let (mut f_lo, mut f_hi) = (npv(lo), npv(hi));
        while f_hi < 0.0 {
            if hi > 1e4 {
                return f64::NAN;
            }
            (lo, f_lo) = (hi, f_hi);
            hi *= 2.0;
            f_hi = npv(hi);
        }
        let scale = self.upfront_usd.abs() + self.runs().iter().map(|f| f.abs()).sum::<f64>() * self.months;
        let mut side = 0i8;
        for _ in 0..100 {
            let x = (lo * f_hi - hi * f_lo) / (f_hi - f_lo);
            let f = npv(x);
            if f < 0.0 {
                (lo, f_lo) = (x, f);
                f_hi *= if side == -1 { 0.5 } else { 1.0 };
                side = -1;
            } else {
                (hi, f_hi) = (x, f);
                f_lo *= if side == 1 { 0.5 } else { 1.0 };
                side = 1;
            }
            if hi - lo <= 1e-13 * hi || f.abs() <= 1e-12 * scale {
                break;
            }
        }
        let x = if f_hi.abs() < f_lo.abs() { hi } else { lo };
        (1.0 / x).powi(12) - 1.0
    }

    /// NPV of the flows as `by_month` lays them out, at the monthly discount factor x: -upfront, each phase's
    /// benefit over its months (sum of x^k from a to b = x^a (1 - x^(b - a + 1)) / (1 - x)), the resale at x^M.
    fn npv_at(&self, x: f64) -> f64 {
        let m = self.months.round().max(1.0) as i32;
        let t = if self.phased() { (self.training_months.round() as i32).clamp(0, m) } else { m };
        -self.upfront_usd
            + self.monthly_usd * geometric_sum(x, 1, t)
            + self.serving_monthly_usd * geometric_sum(x, t + 1, m)
            + self.residual_usd * x.powi(m)
    }
}

/// Are the flows an outlay followed by returns: the first non-zero one negative, one change of sign?
fn outlay_then_returns(flows: &[f64]) -> bool {
    let mut signs = flows.iter().filter(|f| **f != 0.0).map(|f| *f > 0.0);
    if signs.next() != Some(false) {
        return false;
    }
    let (mut previous, mut changes) = (false, 0);
    for positive in signs {
        changes += usize::from(positive != previous);
        previous = positive;
    }
    changes == 1
}

/// x^a + ... + x^b (0 when b < a).
fn geometric_sum(x: f64, a: i32, b: i32) -> f64 {
    if b < a {
        return 0.0;
    }
    let n = b - a + 1;
    if (1.0 - x).abs() < 1e-9 {
        return x.powi(a) * n as f64;
    }
    x.powi(a) * (1.0 - x.powi(n)) / (1.0 - x)
}

/// Month (fractional) at which `monthly` a month, discounted, recovers `upfront`; infinite if it never does.
pub fn payback_months(upfront: f64, monthly: f64, d: &Discounting) -> f64 {
    if upfront <= 0.0 {
        return 0.0;
    }
    if monthly <= 0.0 {
        return f64::INFINITY;
    }
    let v = d.monthly_factor();
    let x = upfront / monthly; // annuity(m) = x
    if (1.0 - v).abs() < 1e-15 {
        return x;
    }
    // v (1 - v^m) / (1 - v) = x  =>  v^m = 1 - x (1 - v) / v.
    let rest = 1.0 - x * (1.0 - v) / v;
    if rest <= 0.0 {
        f64::INFINITY
    } else {
        rest.ln() / v.ln()
    }
}

/// What the payback says, and when: A's extra capex (and delay) against the monthly benefit of each phase. The
/// resale difference arrives at the end of the life: when the monthly benefit alone falls short but with it the
/// premium is recovered (NPV >= 0), it pays back at the end of the life. The flags read the benefit over the life:
/// its level equivalent (the benefit's PV over a(M)) when the phases differ.
pub(super) fn payback(flows: &Flows, npv: f64, d: &Discounting) -> (Payback, f64) {
    let d_capex = flows.upfront_usd;
    let monthly = flows.level_monthly_usd(d);
    let mut months = flows.payback_months(d);
    if months > d.months() && monthly > 0.0 && npv >= 0.0 {
        months = d.months();
    }
    let payback = if d_capex <= 0.0 {
        if monthly >= 0.0 {
            Payback::Dominant
        } else {
            Payback::TradeOff
        }
    } else if monthly <= 0.0 {
        Payback::Never
    } else if months > d.months() {
        Payback::BeyondLife
    } else {
        Payback::Months
    };
    (payback, months)
}

fn year_row(year: u32, upfront: f64, benefit: f64, residual: f64, discounted: f64, before: f64) -> CashFlowYear {
    CashFlowYear {
        year,
        upfront_usd: upfront,
        benefit_usd: benefit,
        residual_usd: residual,
        net_usd: upfront + benefit + residual,
        discounted_usd: discounted,
        cumulative_discounted_usd: before + discounted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_yearly_table_adds_up_to_the_npv() {
        // $1M upfront, $30k a month for 60 months, $200k resale at 12% a year: the last cumulative discounted
        // flow is the NPV, -1,000,000 + 30,000 x 45.58779 + 200,000 / 1.12^5 = -1,000,000 + 1,367,634 + 113,485
        // = +$481,119.
        let d = Discounting::new(0.12, 5.0);
        let f = Flows::level(1e6, 3e4, 2e5, 60.0);
        let years = f.yearly(&d);
        assert_eq!(years.len(), 6);
        assert_eq!((years[0].net_usd, years[1].benefit_usd, years[5].residual_usd), (-1e6, 360_000.0, 2e5));
        let npv = f.npv(&d);
        assert!((npv - (-1e6 + 3e4 * d.annuity(60.0) + 2e5 / 1.12f64.powi(5))).abs() < 1e-6);
        assert!((npv - 481_119.0).abs() < 1.0, "{npv}");
        assert!((years[5].cumulative_discounted_usd - npv).abs() < 1e-6);
    }

    #[test]
    fn irr_by_hand_and_none_when_the_flows_never_change_sign() {
        // $1,000 now returns $100 a month for 12 months: sum 100 / (1 + r)^m = 1,000 at r = 2.9229% a month
        // (the 12-period annuity factor 10 at that rate), (1.029229)^12 - 1 = 41.29% a year.
        let f = Flows::level(1000.0, 100.0, 0.0, 12.0);
        let r: f64 = 0.029_229;
        assert!((100.0 * (1.0 - (1.0 + r).powi(-12)) / r - 1000.0).abs() < 0.01);
        assert!((f.irr() - (1.0 + r).powi(12) + 1.0).abs() < 1e-4, "{}", f.irr());
        // At the IRR the NPV is zero: discounting at it gives 0.
        let d = Discounting::new(f.irr(), 1.0);
        assert!(f.npv(&d).abs() < 1e-6);
        // Dearer upfront and worse every month: never pays back, no IRR. Cheaper and better: none either.
        assert!(Flows { monthly_usd: -5.0, ..f }.irr().is_nan());
        assert!(Flows { upfront_usd: -10.0, ..f }.irr().is_nan());
        // An outlay recovered only by the resale at the end still has one.
        let resale = Flows::level(1000.0, 0.0, 1100.0, 12.0);
        assert!((resale.irr() - 0.1).abs() < 1e-9, "{}", resale.irr());
    }

    #[test]
    fn irr_per_sample_ranks_the_flows_without_an_irr_at_their_bounds() {
        let f = Flows::level(1000.0, 100.0, 0.0, 12.0);
        assert_eq!(f.irr_ranked(), f.irr());
        // Never recovered: last in a ranking. Nothing to recover (A cheaper upfront and better): first.
        assert_eq!(Flows { monthly_usd: -5.0, ..f }.irr_ranked(), f64::NEG_INFINITY);
        assert_eq!(Flows { upfront_usd: -10.0, ..f }.irr_ranked(), f64::INFINITY);
        // A saving now paid for every month after is borrowing, not an investment: no rank.
        assert!(Flows { upfront_usd: -1000.0, monthly_usd: -100.0, ..f }.irr_ranked().is_nan());
        // $12 back on $1,000: an IRR still exists (x^1 + ... + x^12 = 1,000 at x = 1 / (1 + r) ~ 1.64), -99.8% a year.
        let poor = Flows::level(1000.0, 1.0, 0.0, 12.0).irr_ranked();
        assert!(poor > -1.0 && poor < -0.99, "{poor}");
        // The runs of equal months read the same signs as the month-by-month flows.
        for (u, m1, m2, r, t) in
            [(1e3, 10.0, -5.0, 0.0, 12.0), (0.0, -10.0, 20.0, 5.0, 1.0), (1e3, 0.0, 0.0, 2e3, 60.0)]
        {
            let f = Flows { training_months: t, serving_monthly_usd: m2, ..Flows::level(u, m1, r, 60.0) };
            let (runs, months) = (f.runs(), f.by_month());
            assert_eq!(outlay_then_returns(&runs), outlay_then_returns(&months));
            for sign in [-1.0, 1.0] {
                assert_eq!(runs.iter().any(|x| x * sign > 0.0), months.iter().any(|x| x * sign > 0.0));
            }
        }
    }

    #[test]
    fn irr_of_a_lifecycle_zeroes_its_npv() {
        // 12 training months at $50k, 48 serving months at $20k, on $1M: at the IRR the discounted flows sum to 0.
        let f =
            Flows { training_months: 12.0, serving_monthly_usd: 20_000.0, ..Flows::level(1e6, 50_000.0, 0.0, 60.0) };
        let irr = f.irr();
        assert!(irr.is_finite() && irr > 0.0, "{irr}");
        let d = Discounting::new(irr, 1.0);
        assert!(f.npv(&d).abs() < 1e-4, "{}", f.npv(&d));
        // The same by the month-by-month flows, the definition the table's IRR follows.
        let x = d.monthly_factor();
        let by_hand: f64 = f.by_month().iter().enumerate().map(|(m, v)| v * x.powi(m as i32)).sum();
        assert!(by_hand.abs() < 1e-4, "{by_hand}");
    }
}
