//! How sure is the ROI verdict? A Monte Carlo over every uncertain input (the price book's low-typical-high
//! ranges, the fabric figures with ranges, and the model's own validation error), and a tornado that moves each
//! input alone over its range and finds, by bisection, the value at which the verdict flips.
//!
//! - Price and figure ranges are triangular distributions (low, mode = typical, high), the usual choice for
//!   three-point cost estimates (Vose, Risk Analysis: A Quantitative Guide, 3rd ed., 2008, Sec. 9.1.7).
//! - Model error: most of the validated step-time error is common to both fabrics (the compute calibration), so
//!   one draw of the training-run residuals, ln(measured / predicted step time), multiplies both fabrics' step
//!   time; the collective model's error (nccl-tests residuals) is drawn separately for each fabric and multiplies
//!   its exposed communication only. Residuals are resampled as they are (bootstrap; Efron & Tibshirani, An
//!   Introduction to the Bootstrap, 1993, ch. 6).
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

use crate::evaluate::Config;
use crate::figures;
use crate::named_enum;

mod plan;
mod report;
mod run;
mod tornado;

pub use plan::{CountPlan, Outcome, Plan};
pub use report::{typical_report, CountReport, McCount, McReport, OutcomeColumns, TypicalReport};
pub use run::{deciles, run, summarise, McResult, McSummary};
pub use tornado::{find_flip, tornado, TornadoBar};

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

/// One uncertain input: a name, where it goes, and its range. An input with several targets is one draw applied
/// to all of them (the same part bought for both fabrics has one market price).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct UncertainInput {
    pub name: String,
    pub targets: Vec<Target>,
    pub low: f64,
    pub typical: f64,
    pub high: f64,
    /// Values to resample (an empirical distribution); empty: the triangle (low, typical, high).
    pub empirical: Vec<f64>,
}

/// How many samples, and the seed.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct Uncertainty {
    pub inputs: Vec<UncertainInput>,
    pub samples: u64,
    pub seed: u64,
}

/// A mutable f64 figure of a configuration by section and core field name (None: no such figure, or one the
/// Monte Carlo does not sample): the catalog figure's own accessor (`crate::figures`).
pub(super) fn figure_mut<'a>(cfg: &'a mut Config, section: Section, field: &str) -> Option<&'a mut f64> {
    let catalog = match section {
        Section::Fabric => figures::CatalogSection::Fabrics,
        Section::Network => figures::CatalogSection::FabricPrices,
        Section::Gpu => figures::CatalogSection::GpuPrices,
        Section::ScaleUp => figures::CatalogSection::ScaleUpPrices,
        Section::Economics => figures::CatalogSection::Economics,
        Section::ModelError => return None,
        Section::Placement => return (field == "placement").then_some(&mut cfg.training.placement),
    };
    let at = figures::by_core_field(catalog, field)?.core.sample?;
    Some(at(cfg))
}

impl UncertainInput {
    /// Does the input change step times (and so need the candidates re-evaluated)?
    pub(super) fn moves_time(&self) -> bool {
        self.targets.iter().any(|t| matches!(t.section, Section::Fabric | Section::ModelError | Section::Placement))
    }

    /// The value at uniform quantile `u` in [0, 1).
    pub fn quantile(&self, u: f64) -> f64 {
        if !self.empirical.is_empty() {
            let i = ((u * self.empirical.len() as f64) as usize).min(self.empirical.len() - 1);
            return self.empirical[i];
        }
        triangular(self.low, self.typical, self.high, u)
    }
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
}
