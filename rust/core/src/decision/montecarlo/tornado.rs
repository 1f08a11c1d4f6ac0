//! The tornado: each uncertain input moved alone over its range, and the value at which the verdict flips.

use rayon::prelude::*;

use crate::decision::roi::Comparison;
use crate::error::ConfigError;

use super::{CountPlan, Plan, UncertainInput};

crate::record! {
    /// One input's bar of the tornado at one GPU count.
    #[derive(Clone, Debug, PartialEq)]
    pub struct TornadoBar {
        /// Index into the inputs.
        pub input: usize,
        pub low: f64,
        pub typical: f64,
        pub high: f64,
        /// Savings of choosing A (rho PV(TCO_B) - PV(TCO_A)) with the input at low and at high, the others typical.
        pub savings_low_usd: f64,
        pub savings_high_usd: f64,
        pub break_even_low: f64,
        pub break_even_high: f64,
        /// The value (nearest the typical one) at which the savings change sign; NaN when none in [low, high].
        pub flip: f64,
    }
}

impl TornadoBar {
    /// How far the verdict moves: |savings(high) - savings(low)|.
    pub fn swing_usd(&self) -> f64 {
        (self.savings_high_usd - self.savings_low_usd).abs()
    }
}

/// Grid steps from the typical value to each end, before bisecting the first sign change.
const FLIP_GRID: usize = 8;
/// Bisection stops when the bracket is this share of the range.
const FLIP_TOLERANCE: f64 = 1e-7;

/// The tornado at one count: one bar per input with a range, sorted by swing (largest first; ties by input).
pub fn tornado(plan: &Plan, count: &CountPlan) -> Result<Vec<TornadoBar>, ConfigError> {
    let typical = plan.typical_values().to_vec();
    let savings_at = |i: usize, x: f64| -> Result<Comparison, ConfigError> {
        let mut v = typical.clone();
        v[i] = x;
        plan.compare(count, &v)
    };
    let base = plan.compare(count, &typical)?.savings_usd;
    let mut bars: Vec<TornadoBar> = (0..plan.inputs.len())
        .into_par_iter()
        .filter(|&i| plan.inputs[i].high > plan.inputs[i].low)
        .map(|i| {
            let input = &plan.inputs[i];
            let (lo, hi) = (savings_at(i, input.low)?, savings_at(i, input.high)?);
            let flip = find_flip(&|x| Ok(savings_at(i, x)?.savings_usd), input, base)?;
            Ok(TornadoBar {
                input: i,
                low: input.low,
                typical: input.typical,
                high: input.high,
                savings_low_usd: lo.savings_usd,
                savings_high_usd: hi.savings_usd,
                break_even_low: lo.break_even_premium,
                break_even_high: hi.break_even_premium,
                flip,
            })
        })
        .collect::<Result<_, ConfigError>>()?;
    bars.sort_by(|a, b| b.swing_usd().total_cmp(&a.swing_usd()).then(a.input.cmp(&b.input)));
    Ok(bars)
}

/// The value nearest `input.typical` in [low, high] where `savings(x)` changes sign from its sign at typical
/// (`base`): walk a grid outward on both sides, then bisect the first bracket found. NaN when there is none.
pub fn find_flip(
    savings: &dyn Fn(f64) -> Result<f64, ConfigError>,
    input: &UncertainInput,
    base: f64,
) -> Result<f64, ConfigError> {
    let positive = base > 0.0;
    let flipped = |s: f64| (s > 0.0) != positive;
    let mut best: Option<(f64, f64, f64)> = None; // (distance from typical, inside, outside)
    for end in [input.low, input.high] {
        let mut prev = input.typical;
        for step in 1..=FLIP_GRID {
            let x = input.typical + (end - input.typical) * step as f64 / FLIP_GRID as f64;
            if flipped(savings(x)?) {
                let d = (x - input.typical).abs();
                if best.is_none_or(|b| d < b.0) {
                    best = Some((d, prev, x));
                }
                break;
            }
            prev = x;
        }
    }
    let Some((_, mut inside, mut outside)) = best else {
        return Ok(f64::NAN);
    };
    let tolerance = FLIP_TOLERANCE * (input.high - input.low);
    while (outside - inside).abs() > tolerance {
        let mid = 0.5 * (inside + outside);
        if flipped(savings(mid)?) {
            outside = mid;
        } else {
            inside = mid;
        }
    }
    // The first value past the flip: fed back, it gives the other verdict.
    Ok(outside)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flips_are_found_by_bisection() {
        let input =
            UncertainInput { name: "x".into(), targets: vec![], low: 0.0, typical: 5.0, high: 10.0, empirical: vec![] };
        // savings = 2 - x / 1.5: positive at 5? 2 - 3.33 < 0; flips (to positive) below x = 3.
        let f = |x: f64| Ok(2.0 - x / 1.5);
        let flip = find_flip(&f, &input, f(5.0).unwrap()).unwrap();
        assert!((flip - 3.0).abs() < 1e-5 && f(flip).unwrap() >= 0.0, "{flip}");
        assert!(find_flip(&|_| Ok(1.0), &input, 1.0).unwrap().is_nan());
    }
}
