//! The tornado: each uncertain input moved alone over its range, and the value at which the verdict flips.

use std::cell::RefCell;

use rayon::prelude::*;

use crate::decision::roi::{Comparison, DesignScratch};
use crate::error::ConfigError;

use super::{CountPlan, Plan, UncertainInput};

crate::record! {
    /// One input's bar of the tornado of one (GPU count, B) pair, on the headline metric: the NPV of choosing A
    /// (equal to the savings per delivered work when no value per GPU-hour is given).
    #[derive(Clone, Debug, PartialEq)]
    pub struct TornadoBar {
        /// Index into the inputs.
        pub input: usize,
        pub low: f64,
        pub typical: f64,
        pub high: f64,
        /// NPV of choosing A with the input at low and at high, the others typical.
        pub npv_low_usd: f64,
        pub npv_high_usd: f64,
        pub break_even_low: f64,
        pub break_even_high: f64,
        /// The value (nearest the typical one) at which the NPV changes sign: the first value past the flip (a
        /// whole number for a whole-number input); NaN when none in [low, high].
        pub flip: f64,
        /// Where the line through (low, NPV at low) and (high, NPV at high) crosses zero, in or beyond the range:
        /// the exact flip of an input the NPV is linear in (a unit price: what quote would flip the verdict);
        /// NaN when the two ends are equal.
        pub linear_flip: f64,
    }
}

impl TornadoBar {
    /// How far the verdict moves: |NPV(high) - NPV(low)|.
    pub fn swing_usd(&self) -> f64 {
        (self.npv_high_usd - self.npv_low_usd).abs()
    }
}

/// Grid steps from the typical value to each end, before bisecting the first sign change.
const FLIP_GRID: usize = 8;
/// Bisection stops when the bracket is this share of the range.
const FLIP_TOLERANCE: f64 = 1e-7;
/// A bar whose swing is below this share of B's cost of ownership moves nothing: it is left out (an input the
/// design does not use, such as a built facility's cost under colocation, or an error that cancels in the ratio).
const INERT: f64 = 1e-9;

/// The tornado of one pair: one bar per input with a range that moves the NPV, sorted by swing (largest first;
/// ties by input).
pub fn tornado(plan: &Plan, count: &CountPlan) -> Result<Vec<TornadoBar>, ConfigError> {
    let typical = plan.typical_values().to_vec();
    let base = plan.compare(count, &typical)?;
    let inert = INERT * base.tco_b_usd.abs().max(1.0);
    let bars: Vec<Option<TornadoBar>> = (0..plan.inputs.len())
        .into_par_iter()
        .filter(|&i| plan.inputs[i].high > plan.inputs[i].low)
        .map(|i| {
            // The pair's designs keep their configurations and layouts while this input moves (`DesignScratch`).
            let scratch: RefCell<[DesignScratch; 2]> = RefCell::default();
            let at = |i: usize, x: f64| -> Result<Comparison, ConfigError> {
                let mut v = typical.clone();
                v[i] = x;
                plan.compare_in(count, &v, &mut scratch.borrow_mut())
            };
            let input = &plan.inputs[i];
            let (lo, hi) = (at(i, input.low)?, at(i, input.high)?);
            if (hi.npv_usd - lo.npv_usd).abs() <= inert {
                return Ok(None);
            }
            let flip = find_flip(&|x| Ok(at(i, x)?.npv_usd), input, base.npv_usd)?;
            let slope = (hi.npv_usd - lo.npv_usd) / (input.high - input.low);
            Ok(Some(TornadoBar {
                input: i,
                low: input.low,
                typical: input.typical,
                high: input.high,
                npv_low_usd: lo.npv_usd,
                npv_high_usd: hi.npv_usd,
                break_even_low: lo.break_even_premium,
                break_even_high: hi.break_even_premium,
                flip,
                linear_flip: input.low - lo.npv_usd / slope,
            }))
        })
        .collect::<Result<_, ConfigError>>()?;
    let mut bars: Vec<TornadoBar> = bars.into_iter().flatten().collect();
    bars.sort_by(|a, b| b.swing_usd().total_cmp(&a.swing_usd()).then(a.input.cmp(&b.input)));
    Ok(bars)
}

/// The value nearest `input.typical` in [low, high] where `npv(x)` changes sign from its sign at typical
/// (`base`): walk a grid outward on both sides (every whole number of a whole-number input), then bisect the first
/// bracket found (not for whole numbers: their flip is the first integer past it). NaN when there is none.
pub fn find_flip(
    npv: &dyn Fn(f64) -> Result<f64, ConfigError>,
    input: &UncertainInput,
    base: f64,
) -> Result<f64, ConfigError> {
    let positive = base > 0.0;
    let flipped = |s: f64| (s > 0.0) != positive;
    let mut best: Option<(f64, f64, f64)> = None; // (distance from typical, inside, outside)
    for end in [input.low, input.high] {
        let mut prev = input.typical;
        for x in input.steps(input.typical, end, FLIP_GRID) {
            if flipped(npv(x)?) {
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
    if input.integer {
        // The first whole number past the flip, between the last unflipped one and the first flipped one.
        let step = if outside > inside { 1.0 } else { -1.0 };
        let mut x = inside + step;
        while x != outside && !flipped(npv(x)?) {
            x += step;
        }
        return Ok(x);
    }
    let tolerance = FLIP_TOLERANCE * (input.high - input.low);
    while (outside - inside).abs() > tolerance {
        let mid = 0.5 * (inside + outside);
        if flipped(npv(mid)?) {
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
        let input = UncertainInput {
            name: "x".into(),
            targets: vec![],
            low: 0.0,
            typical: 5.0,
            high: 10.0,
            empirical: vec![],
            weights: vec![],
            integer: false,
            loadings: vec![],
        };
        // npv = 2 - x / 1.5: negative at 5 (2 - 3.33); positive below x = 3.
        let f = |x: f64| Ok(2.0 - x / 1.5);
        let flip = find_flip(&f, &input, f(5.0).unwrap()).unwrap();
        assert!((flip - 3.0).abs() < 1e-5 && f(flip).unwrap() >= 0.0, "{flip}");
        assert!(find_flip(&|_| Ok(1.0), &input, 1.0).unwrap().is_nan());
        // A whole number flips at a whole number: npv = x - 1.2 over queue pairs 1..16 (typical 2) is positive
        // at 2 and negative at 1, so the flip is 1 (not 1.2, where no queue pair count exists).
        let qps = UncertainInput { low: 1.0, typical: 2.0, high: 16.0, integer: true, ..input };
        let g = |x: f64| Ok(x - 1.2);
        assert_eq!(find_flip(&g, &qps, g(2.0).unwrap()).unwrap(), 1.0);
        // Flipping at 7.5 from a typical 2: the first whole number past it is 8, found between grid steps.
        let h = |x: f64| Ok(7.5 - x);
        assert_eq!(find_flip(&h, &qps, h(2.0).unwrap()).unwrap(), 8.0);
    }
}
