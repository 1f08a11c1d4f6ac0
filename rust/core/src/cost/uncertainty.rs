//! Prediction intervals from the model's own validation residuals (split-conformal prediction, Vovk et al.,
//! "Algorithmic Learning in a Random World", 2005; Lei et al., "Distribution-Free Predictive Inference for
//! Regression", JASA 2018, Sec. 2.2; by regime as in Mondrian conformal prediction, Vovk et al. Ch. 4.5).
//!
//! The residuals are ln(measured / predicted) step times of held-out published runs, fitted by
//! `scalefront validate --calibrate-errors` and stored in data/model_error.toml: they are inputs, not
//! constants. For a level 1 - a and n residuals sorted ascending, the interval is
//! [predicted x exp(r_(lo)), predicted x exp(r_(hi))] with lo = floor((n + 1) a / 2) and
//! hi = ceil((n + 1)(1 - a / 2)) (1-based order statistics), taken in the first matching regime with at least
//! `min_residuals` residuals (whatever the level, so that a higher level never narrows an interval); a level
//! beyond what n supports (lo < 1 or hi > n) takes the extreme residuals. Time and cost to train scale with the
//! step time, so they take the same factors.
//!
//! Also the normal distribution's order statistics the straggler model needs (`expected_max_of_normals`).

use crate::error::ConfigError;
use crate::hardware::Generation;

/// The residuals of one regime: runs of a GPU generation, dense or MoE, in a range of GPU counts.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct ErrorRegime {
    /// None = any generation.
    pub generation: Option<Generation>,
    /// None = dense and MoE alike.
    pub moe: Option<bool>,
    pub min_gpus: u32,
    pub max_gpus: u32,
    /// ln(measured / predicted step time), sorted ascending.
    pub log_residuals: Vec<f64>,
}

impl ErrorRegime {
    fn matches(&self, generation: Generation, moe: bool, gpus: u32) -> bool {
        self.generation.is_none_or(|g| g == generation)
            && self.moe.is_none_or(|m| m == moe)
            && (self.min_gpus..=self.max_gpus).contains(&gpus)
    }

    /// (low, high) factors on the prediction at `level` (the extreme residuals when the level asks for more
    /// than the regime's n supports); None without residuals.
    pub fn factors(&self, level: f64) -> Option<(f64, f64)> {
        let n = self.log_residuals.len();
        if n == 0 {
            return None;
        }
        let alpha = 1.0 - level;
        // A hair of tolerance so that 20 x 0.95 is 19, not 19.000000000000004.
        let k_lo = ((n as f64 + 1.0) * alpha / 2.0 + 1e-9).floor() as usize;
        let k_hi = ((n as f64 + 1.0) * (1.0 - alpha / 2.0) - 1e-9).ceil() as usize;
        let (k_lo, k_hi) = (k_lo.clamp(1, n), k_hi.clamp(1, n));
        Some((self.log_residuals[k_lo - 1].exp(), self.log_residuals[k_hi - 1].exp()))
    }

    /// Whether the regime's residuals support two-sided bounds at `level` without clamping.
    pub fn supports(&self, level: f64) -> bool {
        let n = self.log_residuals.len() as f64;
        (n + 1.0) * (1.0 - level) / 2.0 + 1e-9 >= 1.0
    }
}

/// Fitted residuals by regime, most specific first, and the level of the intervals to report.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct ErrorModel {
    /// Nominal coverage of the intervals (0.9 = 90%).
    pub level: f64,
    /// Residuals a regime needs to be used (fewer: the next matching regime).
    pub min_residuals: u32,
    pub regimes: Vec<ErrorRegime>,
}

impl ErrorModel {
    /// No error model: intervals collapse onto the prediction.
    pub fn none() -> Self {
        ErrorModel { level: 0.9, min_residuals: 1, regimes: Vec::new() }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(self.level.is_finite() && self.level > 0.0 && self.level < 1.0) {
            return Err(ConfigError::InvalidFigure {
                field: "interval",
                value: self.level,
                expected: "a coverage level strictly between 0 and 1",
            });
        }
        for r in &self.regimes {
            if r.log_residuals.iter().any(|x| !x.is_finite()) || !r.log_residuals.is_sorted() {
                return Err(ConfigError::InvalidFigure {
                    field: "log_residuals",
                    value: f64::NAN,
                    expected: "finite residuals sorted ascending",
                });
            }
        }
        Ok(())
    }

    /// (low, high) factors on a predicted step time for this regime: the first matching regime with at least
    /// `min_residuals` residuals, else the last matching one; (1, 1) without any residuals.
    pub fn factors(&self, generation: Generation, moe: bool, gpus: u32) -> (f64, f64) {
        let mut matching = self.regimes.iter().filter(|r| r.matches(generation, moe, gpus));
        let enough = |r: &&ErrorRegime| r.log_residuals.len() >= self.min_residuals as usize;
        let chosen = matching.clone().find(enough).or_else(|| matching.next_back());
        chosen.and_then(|r| r.factors(self.level)).unwrap_or((1.0, 1.0))
    }
}

/// Expected maximum of `n` independent standard normal variables, by Blom's approximation
/// E[Z_(n)] ~ Phi^-1((n - 0.375) / (n + 0.25)) (Blom 1958; Harter 1961 tabulates the exact values: n = 2
/// 0.564, 10 1.539, 100 2.508, 1000 3.241).
pub fn expected_max_of_normals(n: f64) -> f64 {
    if n <= 1.0 {
        return 0.0;
    }
    inverse_normal_cdf((n - 0.375) / (n + 0.25))
}

/// The standard normal distribution function: Phi(z) = erfc(-z / sqrt 2) / 2.
pub fn normal_cdf(z: f64) -> f64 {
    0.5 * statrs::function::erf::erfc(-z / std::f64::consts::SQRT_2)
}

/// Phi^-1(p) for 0 < p < 1: -sqrt 2 erfc^-1(2p) (statrs' inverse complementary error function). The one normal
/// quantile of the core: the Monte Carlo's draws (`decision::montecarlo::normal_quantile`) and the serving model's
/// log-normal percentiles use it too.
pub fn inverse_normal_cdf(p: f64) -> f64 {
    -std::f64::consts::SQRT_2 * statrs::function::erf::erfc_inv(2.0 * p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_normal_quantile_meets_the_tables() {
        // Phi^-1 by Wichura's AS 241 (accurate to about 1e-16; Python's statistics.NormalDist.inv_cdf).
        let table = [
            (1e-10, -6.361340902404056),
            (1e-6, -4.753424308822899),
            (0.01, -2.3263478740408408),
            (0.3, -0.5244005127080407),
            (0.5, 0.0),
            (0.975, 1.9599639845400536),
            (0.999, 3.090232306167813),
        ];
        for (p, z) in table {
            assert!((inverse_normal_cdf(p) - z).abs() < 1e-11, "{p}: {}", inverse_normal_cdf(p));
            assert!((normal_cdf(z) / p - 1.0).abs() < 1e-9, "{p}");
        }
    }

    fn regime(generation: Option<Generation>, moe: Option<bool>, n: usize) -> ErrorRegime {
        // Residuals -0.0n .. +0.0n in steps of 0.01 (n odd: symmetric around 0).
        let half = (n / 2) as f64;
        let log_residuals = (0..n).map(|i| (i as f64 - half) / 100.0).collect();
        ErrorRegime { generation, moe, min_gpus: 1, max_gpus: u32::MAX, log_residuals }
    }

    #[test]
    fn conformal_order_statistics_by_hand() {
        // n = 19, level 0.9: lo = floor(20 x 0.05) = 1, hi = ceil(20 x 0.95) = 19: the extreme residuals,
        // -0.09 and +0.09 -> factors exp(-0.09) = 0.9139, exp(0.09) = 1.0942.
        let r = regime(None, None, 19);
        let (lo, hi) = r.factors(0.9).unwrap();
        assert!((lo - (-0.09f64).exp()).abs() < 1e-12 && (hi - 0.09f64.exp()).abs() < 1e-12);
        // 18 residuals are too few for 90%: hi = ceil(19 x 0.95) = 19 > 18, so the extremes stand in.
        let short = regime(None, None, 17);
        assert!(!short.supports(0.9) && r.supports(0.9));
        let (lo, hi) = short.factors(0.9).unwrap();
        assert!((lo.ln() + 0.08).abs() < 1e-12 && (hi.ln() - 0.08).abs() < 1e-12);
        // Level 0.5 with 19: lo = floor(20 x 0.25) = 5 -> -0.05; hi = ceil(20 x 0.75) = 15 -> +0.05.
        let (lo, hi) = r.factors(0.5).unwrap();
        assert!((lo.ln() + 0.05).abs() < 1e-12 && (hi.ln() - 0.05).abs() < 1e-12);
    }

    #[test]
    fn the_first_matching_regime_with_enough_residuals_wins() {
        let model = ErrorModel {
            level: 0.9,
            min_residuals: 19,
            regimes: vec![
                // Too few for 90%: skipped.
                regime(Some(Generation::Hopper), Some(true), 9),
                ErrorRegime { log_residuals: vec![-0.3; 19], ..regime(None, Some(true), 19) },
                regime(None, None, 39),
            ],
        };
        assert_eq!(model.factors(Generation::Hopper, true, 64), ((-0.3f64).exp(), (-0.3f64).exp()));
        // Dense rows fall through to the pooled regime: lo = floor(40 x 0.05) = 2 -> -0.18.
        let (lo, _) = model.factors(Generation::Hopper, false, 64);
        assert!((lo.ln() + 0.18).abs() < 1e-12, "{}", lo.ln());
        assert_eq!(ErrorModel::none().factors(Generation::Ampere, false, 8), (1.0, 1.0));
    }
}
