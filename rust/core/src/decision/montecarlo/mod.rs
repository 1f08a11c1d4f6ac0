//! How sure is the ROI verdict? A Monte Carlo over every uncertain input (the price book's low-typical-high
//! ranges, the fabric figures with ranges, and the model's own validation error), and a tornado that moves each
//! input alone over its range and finds, by bisection, the value at which the verdict flips.
//!
//! - Price and figure ranges are triangular distributions (low, mode = typical, high), the usual choice for
//!   three-point cost estimates (Vose, Risk Analysis: A Quantitative Guide, 3rd ed., 2008, Sec. 9.1.7). A whole
//!   number (queue pairs) takes the triangle's probability on each integer; a policy input takes listed values
//!   with their weights (a discrete distribution).
//! - Prices that move together (one vendor's discount level across its GPUs, NICs, switches and optics; one
//!   optics market; merchant switch silicon; power and facility) load on shared groups: each input's normal score
//!   is `sum_g l_g z_g + sqrt(1 - sum_g l_g^2) z_own` with one standard normal z_g per group and sample, mapped
//!   back through the normal distribution function to the input's own distribution (a Gaussian copula with a
//!   one-level factor structure: Nelsen, An Introduction to Copulas, 2nd ed., 2006, Sec. 2.3; Vose 2008,
//!   Sec. 13.4). The marginals stay as the catalog states them; the loadings are stated assumptions.
//! - Model error: the common step-time error (training-run residuals, ln(measured / predicted step time))
//!   multiplies every design's step time; the collective model's error multiplies exposed communication only, as
//!   a term common to every fabric (one draw for all) and a fabric-specific term (one draw per fabric). Residuals
//!   are resampled as they are (bootstrap; Efron & Tibshirani, An Introduction to the Bootstrap, 1993, ch. 6).
//!   Each sample is also compared without model error, from the same evaluations, so that the verdict's
//!   probability is reported with and without it.
//! - Each sample re-optimises the layout among the candidates the typical-value sweep kept (no re-sweep); the
//!   designs (topologies) chosen at typical values stay fixed.
//! - Random numbers are a counter-based hash of (seed, sample, input) (Salmon et al., "Parallel random numbers:
//!   as easy as 1, 2, 3", SC11), the SplitMix64 finaliser (Steele, Lea & Flood, OOPSLA 2014): a sample's draws do
//!   not depend on the thread that computes it, so the same seed gives the same bytes, and the first n samples of
//!   a longer run are the n samples of a shorter one.
//!
//! Modules: the uncertain inputs and their sampling (here), the plan of the comparison with its designs chosen at
//! typical values (`plan`), the Monte Carlo run and its summaries (`run`), the tornado (`tornado`), and what the
//! comparison reports (`report`).

use std::sync::atomic::{AtomicBool, AtomicU64};

use crate::cost::uncertainty::inverse_normal_cdf;
pub use crate::cost::uncertainty::normal_cdf;
use crate::evaluate::Config;
use crate::figures;
use crate::named_enum;

mod plan;
mod report;
mod run;
mod session;
mod step_error;
mod tornado;

pub use plan::{CountPlan, Outcome, Plan};
pub use report::{typical_report, typical_report_with, CountReport, McCount, McReport, OutcomeColumns, TypicalReport};
pub use run::{deciles, run, summarise, McResult, McSummary};
pub use session::Session;
pub use tornado::{find_flip, tornado, TornadoBar};

/// The stream of the correlated groups' draws, apart from the inputs' own (input i draws stream i).
const GROUP_STREAM: u64 = 1 << 40;

named_enum! {
    /// Which part of a configuration an uncertain input sets.
    pub enum Section {
        /// A figure of the fabric (`FabricSpec`, SI units) of one side.
        Fabric = "fabric",
        /// A network price of one side (`NetworkPrices`).
        Network = "network",
        /// A GPU price (`GpuPrices`), both sides.
        Gpu = "gpu",
        /// An NVLink switch tray price (`ScaleUpPrices`), both sides.
        ScaleUp = "scale_up",
        /// An economic assumption (`Economics`), both sides.
        Economics = "economics",
        /// The model's error, a log factor: `common` (whole step, both sides) or `collective` (one side's exposed
        /// communication).
        ModelError = "model_error",
        /// How the job lands on the cluster (`Training::placement`, field `placement`), both sides.
        Placement = "placement",
        /// A software term of the training framework (`FrameworkSpec`, its overlap interference), both sides.
        Framework = "framework",
    }
}

/// Where an uncertain input's value goes.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct Target {
    pub section: Section,
    /// 0 = A, 1 = B; None = both (GPU, tray and economics figures are the cluster's, shared by both fabrics).
    pub side: Option<u32>,
    pub field: String,
}

/// How one input moves with a correlated group: the correlation of its normal score with the group's.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct Loading {
    /// Index into `Uncertainty::groups`.
    pub group: u32,
    pub loading: f64,
}

/// One uncertain input: a name, where it goes, and its distribution. An input with several targets is one draw
/// applied to all of them (the same part bought for several fabrics has one market price).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct UncertainInput {
    pub name: String,
    pub targets: Vec<Target>,
    pub low: f64,
    pub typical: f64,
    pub high: f64,
    /// Values to resample (an empirical distribution, or a discrete one with `weights`); empty: the triangle
    /// (low, typical, high).
    pub empirical: Vec<f64>,
    /// Probability weight of each value of `empirical` (empty: equally likely).
    pub weights: Vec<f64>,
    /// A whole number: the triangle's probability mass on each integer from low to high (the triangle widened by
    /// half a unit at each end, rounded); the tornado moves it from integer to integer.
    pub integer: bool,
    /// The correlated groups it moves with; empty: independent of every other input.
    pub loadings: Vec<Loading>,
}

/// A figure set to a certain value on one side (None: every design), after the uncertain inputs: a what-if ("A's
/// switches at $30K", "a 4-year life") that no sample moves.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct Override {
    pub section: Section,
    pub side: Option<u32>,
    pub field: String,
    pub value: f64,
}

/// The uncertain inputs, their correlated groups, how many samples, and the seed.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct Uncertainty {
    pub inputs: Vec<UncertainInput>,
    /// The correlated groups' names (`Loading::group` indexes them).
    pub groups: Vec<String>,
    pub samples: u64,
    pub seed: u64,
}

/// The accessor of an f64 figure of a configuration by section and core field name (None: no such figure, or one
/// the Monte Carlo does not sample): the catalog figure's own (`crate::figures`).
pub(super) fn accessor(section: Section, field: &str) -> Option<figures::Sample> {
    let catalog = match section {
        Section::Fabric => figures::CatalogSection::Fabrics,
        Section::Network => figures::CatalogSection::FabricPrices,
        Section::Gpu => figures::CatalogSection::GpuPrices,
        Section::ScaleUp => figures::CatalogSection::ScaleUpPrices,
        Section::Economics => figures::CatalogSection::Economics,
        Section::Framework => figures::CatalogSection::Frameworks,
        Section::ModelError => return None,
        Section::Placement => return (field == "placement").then_some(placement as figures::Sample),
    };
    figures::by_core_field(catalog, field)?.core.sample
}

impl Section {
    /// Does a figure of this section change step times (fabric figures, the model's error, placement, framework
    /// terms), not only costs?
    pub(super) fn moves_time(self) -> bool {
        matches!(self, Section::Fabric | Section::ModelError | Section::Placement | Section::Framework)
    }
}

/// The job's placement (how fragmented its GPUs are across leaves), a training input the comparison samples.
fn placement(cfg: &mut Config) -> &mut f64 {
    &mut cfg.training.placement
}

impl UncertainInput {
    /// Does the input change step times (and so need the candidates re-evaluated)?
    pub(super) fn moves_time(&self) -> bool {
        self.targets.iter().any(|t| t.section.moves_time())
    }

    /// The value at uniform quantile `u` in [0, 1).
    pub fn quantile(&self, u: f64) -> f64 {
        if !self.empirical.is_empty() {
            return self.empirical[self.pick(u)];
        }
        if self.integer {
            // The triangle over [low - 0.5, high + 0.5], rounded: integer k takes the mass of (k - 0.5, k + 0.5].
            let x = triangular(self.low - 0.5, self.typical, self.high + 0.5, u);
            return (x + 0.5).floor().clamp(self.low.ceil(), self.high.floor());
        }
        triangular(self.low, self.typical, self.high, u)
    }

    /// The index of the empirical value at quantile `u`: equally likely values, or by their weights.
    fn pick(&self, u: f64) -> usize {
        let n = self.empirical.len();
        if self.weights.is_empty() {
            return ((u * n as f64) as usize).min(n - 1);
        }
        let total: f64 = self.weights.iter().sum();
        let mut cumulative = 0.0;
        for (i, w) in self.weights.iter().enumerate() {
            cumulative += w;
            if u * total < cumulative {
                return i;
            }
        }
        n - 1
    }

    /// The values the tornado tries between `from` and `to` (excluded, `to` included): whole numbers for an
    /// integer input (every one, or an even spread of `grid` when there are more), else `grid` even steps.
    pub(super) fn steps(&self, from: f64, to: f64, grid: usize) -> Vec<f64> {
        if self.integer {
            let n = (to - from).abs().round() as usize;
            let sign = if to >= from { 1.0 } else { -1.0 };
            let per = n.div_ceil(grid.max(1)).max(1);
            let mut out: Vec<f64> = (1..=n).step_by(per).map(|k| from + sign * k as f64).collect();
            if out.last() != Some(&to) && n > 0 {
                out.push(to);
            }
            return out;
        }
        (1..=grid).map(|k| from + (to - from) * k as f64 / grid as f64).collect()
    }

    /// The uniform quantile of this input in sample `sample`: its own stream, correlated with its groups'
    /// standard normal draws `groups` when it loads on any.
    pub(super) fn uniform_in(&self, seed: u64, sample: u64, input: u64, groups: &[f64]) -> f64 {
        let u = uniform(seed, sample, input);
        if self.loadings.is_empty() {
            return u;
        }
        let shared: f64 = self.loadings.iter().map(|l| l.loading * groups[l.group as usize]).sum();
        let own = (1.0 - self.loadings.iter().map(|l| l.loading * l.loading).sum::<f64>()).max(0.0).sqrt();
        normal_cdf(shared + own * normal_quantile(u))
    }
}

/// The standard normal quantile of a uniform draw (`cost::uncertainty::inverse_normal_cdf`), with u kept inside
/// (0, 1) so that no draw is infinite.
pub fn normal_quantile(u: f64) -> f64 {
    inverse_normal_cdf(u.clamp(1e-15, 1.0 - 1e-15))
}

/// The standard normal draws of the correlated groups in sample `sample`.
pub fn group_draws(seed: u64, sample: u64, groups: usize) -> Vec<f64> {
    (0..groups as u64).map(|g| normal_quantile(uniform(seed, sample, GROUP_STREAM + g))).collect()
}

/// Inverse CDF of the triangular distribution (a, c, b) at `u`.
pub fn triangular(a: f64, c: f64, b: f64, u: f64) -> f64 {
    if b <= a {
        return a;
    }
    let fc = (c - a) / (b - a);
    if u < fc {
        a + (u * (b - a) * (c - a)).sqrt()
    } else {
        b - ((1.0 - u) * (b - a) * (b - c)).sqrt()
    }
}

/// SplitMix64's finaliser: a 64-bit mixing function (Steele, Lea & Flood, OOPSLA 2014).
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A uniform number in [0, 1) for (seed, sample, input), the same on every thread and every run.
pub fn uniform(seed: u64, sample: u64, input: u64) -> f64 {
    let h = mix(seed ^ mix(sample.wrapping_mul(0xD1B5_4A32_D192_ED03) ^ mix(input)));
    (h >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Live progress and cancellation of a Monte Carlo run.
#[derive(Debug, Default)]
pub struct McProgress {
    pub done: AtomicU64,
    pub cancel: AtomicBool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triangle_quantiles_by_hand() {
        // (0, 1, 4): F(1) = 1/4; the median solves 1 - (4 - x)^2 / 12 = 0.5 -> x = 4 - sqrt(6) = 1.5505.
        assert_eq!(triangular(0.0, 1.0, 4.0, 0.25), 1.0);
        assert!((triangular(0.0, 1.0, 4.0, 0.5) - (4.0 - 6f64.sqrt())).abs() < 1e-12);
        assert_eq!(triangular(0.0, 1.0, 4.0, 0.0), 0.0);
        assert_eq!(triangular(2.0, 2.0, 2.0, 0.7), 2.0);
    }

    #[test]
    fn uniforms_are_reproducible_and_spread() {
        assert_eq!(uniform(7, 3, 1), uniform(7, 3, 1));
        assert_ne!(uniform(7, 3, 1), uniform(7, 3, 2));
        assert_ne!(uniform(7, 3, 1), uniform(8, 3, 1));
        let n = 100_000;
        let mean: f64 = (0..n).map(|s| uniform(42, s, 0)).sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 0.005, "{mean}");
        let below: usize = (0..n).filter(|&s| uniform(42, s, 5) < 0.1).count();
        assert!((below as f64 / n as f64 - 0.1).abs() < 0.005);
    }

    fn input(low: f64, typical: f64, high: f64) -> UncertainInput {
        UncertainInput {
            name: "x".into(),
            targets: vec![],
            low,
            typical,
            high,
            empirical: vec![],
            weights: vec![],
            integer: false,
            loadings: vec![],
        }
    }

    #[test]
    fn the_normal_and_its_inverse_by_hand() {
        // Phi(0) = 0.5, Phi(1.281552) = 0.9 (the P90 of a standard normal), Phi(-1.959964) = 0.025.
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-15);
        assert!((normal_cdf(1.281_551_565_5) - 0.9).abs() < 1e-9);
        assert!((normal_cdf(-1.959_963_985) - 0.025).abs() < 1e-9);
        assert!((normal_quantile(0.9) - 1.281_551_565_5).abs() < 1e-8);
        assert!(normal_quantile(0.0).is_finite() && normal_quantile(1.0).is_finite());
    }

    #[test]
    fn a_whole_number_takes_the_triangles_mass_on_each_integer() {
        // Triangle (0.5, 2, 16.5) for QPs 1..16 with mode 2: F(x) = (x - 0.5)^2 / (16 x 1.5) below 2, so
        // P(QP = 1) = F(1.5) = 1 / 24 = 0.0417; P(QP <= 2) = F(2.5) = 1 - 14^2 / (16 x 14.5) = 0.155.
        let qps = UncertainInput { integer: true, ..input(1.0, 2.0, 16.0) };
        let n = 200_000;
        let draws: Vec<f64> = (0..n).map(|s| qps.quantile(uniform(3, s, 0))).collect();
        assert!(draws.iter().all(|v| v.fract() == 0.0 && (1.0..=16.0).contains(v)));
        let share = |k: f64| draws.iter().filter(|&&v| v <= k).count() as f64 / n as f64;
        assert!((share(1.0) - 1.0 / 24.0).abs() < 0.003, "{}", share(1.0));
        assert!((share(2.0) - (1.0 - 196.0 / 232.0)).abs() < 0.004, "{}", share(2.0));
        assert_eq!(qps.quantile(0.0), 1.0);
        assert_eq!(qps.quantile(0.999_999_9), 16.0);
        // The tornado walks it integer by integer: 2 -> 1, and 2 -> 16 in at most 8 steps ending at 16.
        assert_eq!(qps.steps(2.0, 1.0, 8), vec![1.0]);
        let up = qps.steps(2.0, 16.0, 8);
        assert!(up.len() <= 8 && up.last() == Some(&16.0) && up.iter().all(|v| v.fract() == 0.0), "{up:?}");
    }

    #[test]
    fn a_policy_input_takes_its_values_with_their_weights() {
        let policy =
            UncertainInput { empirical: vec![1.0, 4.0, 16.0], weights: vec![0.5, 0.3, 0.2], ..input(1.0, 4.0, 16.0) };
        assert_eq!(policy.quantile(0.49), 1.0);
        assert_eq!(policy.quantile(0.5), 4.0);
        assert_eq!(policy.quantile(0.79), 4.0);
        assert_eq!(policy.quantile(0.8), 16.0);
    }

    #[test]
    fn inputs_loading_on_one_group_are_rank_correlated_as_stated() {
        // Two inputs loading 0.7 on one group: their normal scores correlate 0.7 x 0.7 = 0.49; Spearman's rank
        // correlation of a bivariate normal with rho is (6 / pi) asin(rho / 2) = 0.4724 (Kruskal 1958). Their
        // marginals stay the triangle's: the median of (0, 1, 4) is 4 - sqrt 6.
        let loaded =
            |i| UncertainInput { loadings: vec![Loading { group: 0, loading: 0.7 }], ..input(0.0, 1.0, 4.0 + i) };
        let (a, b) = (loaded(0.0), loaded(0.0));
        let n = 40_000u64;
        let draw = |x: &UncertainInput, s: u64, i: u64| x.quantile(x.uniform_in(5, s, i, &group_draws(5, s, 1)));
        let xs: Vec<f64> = (0..n).map(|s| draw(&a, s, 0)).collect();
        let ys: Vec<f64> = (0..n).map(|s| draw(&b, s, 1)).collect();
        let rank = |v: &[f64]| {
            let mut idx: Vec<usize> = (0..v.len()).collect();
            idx.sort_by(|&i, &j| v[i].total_cmp(&v[j]));
            let mut r = vec![0.0; v.len()];
            for (k, i) in idx.into_iter().enumerate() {
                r[i] = k as f64;
            }
            r
        };
        let (rx, ry) = (rank(&xs), rank(&ys));
        let m = (n as f64 - 1.0) / 2.0;
        let cov: f64 = rx.iter().zip(&ry).map(|(x, y)| (x - m) * (y - m)).sum();
        let var: f64 = rx.iter().map(|x| (x - m) * (x - m)).sum();
        let spearman = cov / var;
        let expected = 6.0 / std::f64::consts::PI * (0.49f64 / 2.0).asin();
        assert!((spearman - expected).abs() < 0.015, "{spearman} vs {expected}");
        let mut sorted = xs.clone();
        sorted.sort_by(f64::total_cmp);
        assert!((sorted[n as usize / 2] - (4.0 - 6f64.sqrt())).abs() < 0.03);
        // An input without loadings draws exactly what it drew before groups existed.
        let free = input(0.0, 1.0, 4.0);
        assert_eq!(free.uniform_in(5, 9, 3, &[2.0]), uniform(5, 9, 3));
    }
}
