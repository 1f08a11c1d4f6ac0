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

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rayon::prelude::*;

use crate::cost::roi::{compare, side_cost, side_speed, Comparison, DesignRule, Payback, RoiProblem, Side, StepError};
use crate::error::ConfigError;
use crate::named_enum;
use crate::step::evaluate::Config;

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

/// A mutable f64 figure of a configuration by section and field name (None: no such figure).
fn figure_mut<'a>(cfg: &'a mut Config, section: Section, field: &str) -> Option<&'a mut f64> {
    let f = &mut cfg.fabric;
    let n = &mut cfg.prices.network;
    let g = &mut cfg.prices.gpu;
    let s = &mut cfg.prices.scale_up;
    let e = &mut cfg.prices.economics;
    Some(match (section, field) {
        (Section::Fabric, "link_bytes_per_s") => &mut f.link_bytes_per_s,
        (Section::Fabric, "efficiency") => &mut f.efficiency,
        (Section::Fabric, "load_balance_efficiency") => &mut f.load_balance_efficiency,
        (Section::Fabric, "qps_per_connection") => &mut f.qps_per_connection,
        (Section::Fabric, "tail_latency_factor") => &mut f.tail_latency_factor,
        (Section::Fabric, "mtu_bytes") => &mut f.mtu_bytes,
        (Section::Fabric, "nic_latency_s") => &mut f.nic_latency_s,
        (Section::Fabric, "switch_hop_latency_s") => &mut f.switch_hop_latency_s,
        (Section::Fabric, "in_network_reduction_efficiency") => &mut f.in_network_reduction_efficiency,
        (Section::Network, "nic_usd") => &mut n.nic_usd,
        (Section::Network, "switch_usd") => &mut n.switch_usd,
        (Section::Network, "nic_optic_usd") => &mut n.nic_optic_usd,
        (Section::Network, "switch_optic_usd") => &mut n.switch_optic_usd,
        (Section::Network, "dac_usd") => &mut n.dac_usd,
        (Section::Network, "fibre_usd") => &mut n.fibre_usd,
        (Section::Network, "support_fraction_per_year") => &mut n.support_fraction_per_year,
        (Section::Network, "nos_usd_per_switch_year") => &mut n.nos_usd_per_switch_year,
        (Section::Network, "nic_w") => &mut n.nic_w,
        (Section::Network, "switch_w") => &mut n.switch_w,
        (Section::Network, "nic_optic_w") => &mut n.nic_optic_w,
        (Section::Network, "switch_optic_w") => &mut n.switch_optic_w,
        (Section::Gpu, "rent_usd_per_gpu_hour") => &mut g.rent_usd_per_gpu_hour,
        (Section::Gpu, "server_usd") => &mut g.server_usd,
        (Section::ScaleUp, "switch_tray_usd") => &mut s.switch_tray_usd,
        (Section::ScaleUp, "switch_tray_w") => &mut s.switch_tray_w,
        (Section::Economics, "pue") => &mut e.pue,
        (Section::Economics, "usd_per_kwh") => &mut e.usd_per_kwh,
        (Section::Economics, "gpu_power_fraction") => &mut e.gpu_power_fraction,
        (Section::Economics, "discount_rate") => &mut e.discount_rate,
        (Section::Economics, "residual_fraction") => &mut e.residual_fraction,
        (Section::Economics, "utilisation") => &mut e.utilisation,
        (Section::Economics, "idle_power_fraction") => &mut e.idle_power_fraction,
        (Section::Economics, "colocation_usd_per_kw_month") => &mut e.colocation_usd_per_kw_month,
        (Section::Economics, "facility_build_usd_per_kw") => &mut e.facility_build_usd_per_kw,
        (Section::Economics, "facility_life_years") => &mut e.facility_life_years,
        (Section::Economics, "server_spares_fraction") => &mut e.server_spares_fraction,
        (Section::Economics, "network_spares_fraction") => &mut e.network_spares_fraction,
        (Section::Economics, "installation_fraction") => &mut e.installation_fraction,
        (Section::Economics, "oob_usd_per_rack") => &mut e.oob_usd_per_rack,
        _ => return None,
    })
}

impl UncertainInput {
    /// Does the input change step times (and so need the candidates re-evaluated)?
    fn moves_time(&self) -> bool {
        self.targets.iter().any(|t| matches!(t.section, Section::Fabric | Section::ModelError))
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

/// One GPU count, with the designs chosen at typical values.
#[derive(Clone, Debug)]
pub struct CountPlan {
    pub gpus: u32,
    /// Indices into `RoiProblem::designs` of A's and B's design.
    pub a: usize,
    pub b: usize,
    /// Reference throughput per workload (the best design at this count, typical values): one unit of work.
    pub refs: Vec<f64>,
    /// A and B at typical values (speeds reused while no timing input moves).
    typical: [Side; 2],
}

/// The problem with its designs chosen and its typical outcome.
#[derive(Clone, Debug)]
pub struct Plan<'a> {
    pub problem: &'a RoiProblem,
    pub inputs: &'a [UncertainInput],
    pub counts: Vec<CountPlan>,
    typical: Vec<f64>,
}

/// The outcome of one sample (or of typical values) at one GPU count.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub premium: f64,
    pub break_even_premium: f64,
    pub savings_usd: f64,
    pub npv_usd: f64,
    pub payback: Payback,
    pub payback_months: f64,
    pub speed_ratio: f64,
}

impl From<&Comparison> for Outcome {
    fn from(c: &Comparison) -> Self {
        Outcome {
            premium: c.premium,
            break_even_premium: c.break_even_premium,
            savings_usd: c.savings_usd,
            npv_usd: c.npv_usd,
            payback: c.payback,
            payback_months: c.payback_months,
            speed_ratio: c.speed_ratio,
        }
    }
}

impl<'a> Plan<'a> {
    /// Check the inputs, evaluate every design at typical values and choose each count's designs.
    pub fn new(problem: &'a RoiProblem, inputs: &'a [UncertainInput]) -> Result<Self, ConfigError> {
        problem.validate()?;
        for input in inputs {
            check_input(problem, input)?;
        }
        let typical: Vec<f64> = inputs.iter().map(|i| i.typical).collect();
        let mut counts = Vec::new();
        for gpus in problem.gpu_counts() {
            let mut sides: Vec<(usize, Side)> = Vec::new();
            for (i, d) in problem.designs.iter().enumerate().filter(|(_, d)| d.gpus == gpus) {
                let side = evaluate_side(inputs, &typical, d.side, &d.candidates, None)?;
                sides.push((i, side));
            }
            let workloads = problem.shares.len();
            let refs: Vec<f64> = (0..workloads)
                .map(|w| sides.iter().map(|(_, s)| s.speed.tokens_per_s[w]).fold(0.0, f64::max))
                .collect();
            let (a, b) = choose_designs(problem, &sides, &refs);
            let side_of = |i: usize| sides.iter().find(|(j, _)| *j == i).map(|(_, s)| s.clone()).unwrap();
            counts.push(CountPlan { gpus, a, b, refs, typical: [side_of(a), side_of(b)] });
        }
        Ok(Plan { problem, inputs, counts, typical })
    }

    /// The typical values of the inputs.
    pub fn typical_values(&self) -> &[f64] {
        &self.typical
    }

    /// A's and B's outcome at one count with the inputs at `values`.
    pub fn sides(&self, count: &CountPlan, values: &[f64]) -> Result<[Side; 2], ConfigError> {
        let timing_moved =
            self.inputs.iter().zip(values).zip(&self.typical).any(|((i, v), t)| i.moves_time() && v != t);
        let mut out = Vec::with_capacity(2);
        for (side, index) in [(0u32, count.a), (1u32, count.b)] {
            let cached = if timing_moved { None } else { Some(&count.typical[side as usize].speed) };
            let design = &self.problem.designs[index];
            out.push(evaluate_side(self.inputs, values, side, &design.candidates, cached)?);
        }
        Ok([out.remove(0), out.remove(0)])
    }

    /// The comparison at one count with the inputs at `values`.
    pub fn compare(&self, count: &CountPlan, values: &[f64]) -> Result<Comparison, ConfigError> {
        let [a, b] = self.sides(count, values)?;
        Ok(compare(&a, &b, &self.problem.shares, &count.refs, &self.problem.options))
    }

    /// The values of sample `sample` under `seed`.
    pub fn draw(&self, seed: u64, sample: u64) -> Vec<f64> {
        self.inputs.iter().enumerate().map(|(i, input)| input.quantile(uniform(seed, sample, i as u64))).collect()
    }
}

fn check_input(problem: &RoiProblem, input: &UncertainInput) -> Result<(), ConfigError> {
    let bad = |expected| ConfigError::InvalidFigure { field: "uncertain input", value: input.typical, expected };
    let ordered = input.low <= input.typical && input.typical <= input.high;
    if !(ordered && input.low.is_finite() && input.high.is_finite()) {
        return Err(bad("low <= typical <= high, all finite"));
    }
    if input.targets.is_empty() || input.empirical.iter().any(|v| !v.is_finite()) {
        return Err(bad("at least one target and finite empirical values"));
    }
    let Some(sample) = problem.designs.first().and_then(|d| d.candidates.first()).and_then(|c| c.first()) else {
        return Ok(());
    };
    for t in &input.targets {
        let known = match t.section {
            Section::ModelError => matches!(t.field.as_str(), "common" | "collective"),
            section => figure_mut(&mut sample.clone(), section, &t.field).is_some(),
        };
        if !known || t.side.is_some_and(|s| s > 1) {
            return Err(bad("a known section, field and side (0 or 1)"));
        }
    }
    Ok(())
}

/// Apply every non-error target of `inputs` at `values` to `cfg`, for side `side`.
fn apply(inputs: &[UncertainInput], values: &[f64], side: u32, cfg: &mut Config) -> Result<(), ConfigError> {
    for (input, &value) in inputs.iter().zip(values) {
        for t in &input.targets {
            if t.section == Section::ModelError || t.side.is_some_and(|s| s != side) {
                continue;
            }
            if let Some(slot) = figure_mut(cfg, t.section, &t.field) {
                *slot = value;
            }
        }
    }
    cfg.fabric.validate()?;
    cfg.prices.validate()
}

/// The model error factors of side `side` at `values`.
fn step_error(inputs: &[UncertainInput], values: &[f64], side: u32) -> StepError {
    let mut e = StepError::NONE;
    for (input, &value) in inputs.iter().zip(values) {
        for t in input.targets.iter().filter(|t| t.section == Section::ModelError) {
            match (t.field.as_str(), t.side) {
                ("common", _) => e.common *= value.exp(),
                ("collective", Some(s)) if s == side => e.collective *= value.exp(),
                ("collective", None) => e.collective *= value.exp(),
                _ => {}
            }
        }
    }
    e
}

fn evaluate_side(
    inputs: &[UncertainInput],
    values: &[f64],
    side: u32,
    candidates: &[Vec<Config>],
    cached_speed: Option<&crate::cost::roi::SideSpeed>,
) -> Result<Side, ConfigError> {
    let edit = |cfg: &mut Config| apply(inputs, values, side, cfg);
    let speed = match cached_speed {
        Some(s) => s.clone(),
        None => side_speed(candidates, step_error(inputs, values, side), &edit)?,
    };
    let cost = side_cost(candidates, &edit)?;
    Ok(Side { speed, cost, gpus: candidates[0][0].gpus })
}

/// Each count's designs: per `DesignRule`, by cost per unit of work at typical values.
fn choose_designs(problem: &RoiProblem, sides: &[(usize, Side)], refs: &[f64]) -> (usize, usize) {
    let cost_per_work = |s: &Side| s.cost.tco.pv_usd() / s.work(&problem.shares, refs);
    let designs = &problem.designs;
    let best = |side: u32, topology: Option<&str>| {
        sides
            .iter()
            .filter(|(i, _)| designs[*i].side == side && topology.is_none_or(|t| designs[*i].topology == t))
            .min_by(|x, y| cost_per_work(&x.1).total_cmp(&cost_per_work(&y.1)))
            .map(|(i, s)| (*i, cost_per_work(s)))
    };
    let cheapest = (best(0, None).unwrap().0, best(1, None).unwrap().0);
    if problem.options.design == DesignRule::Cheapest {
        return cheapest;
    }
    // Same topology on both: the shared topology with the lowest sum of the two costs per work.
    let mut pairs: Vec<(f64, usize, usize)> = sides
        .iter()
        .filter(|(i, _)| designs[*i].side == 0)
        .filter_map(|(i, _)| {
            let t = designs[*i].topology.as_str();
            let (a, ca) = best(0, Some(t))?;
            let (b, cb) = best(1, Some(t))?;
            Some((ca + cb, a, b))
        })
        .collect();
    pairs.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
    pairs.first().map_or(cheapest, |p| (p.1, p.2))
}

/// The Monte Carlo result at one GPU count.
#[derive(Clone, Debug, PartialEq)]
pub struct McSummary {
    pub gpus: u32,
    pub samples: u64,
    /// P(A is cheaper per delivered work): P(savings > 0).
    pub p_a_cheaper: f64,
    /// P(A's extra capex pays back within the life, or nothing to pay back).
    pub p_payback_within_life: f64,
    /// P10, P50, P90 of each outcome.
    pub premium: [f64; 3],
    pub break_even_premium: [f64; 3],
    pub savings_usd: [f64; 3],
    pub npv_usd: [f64; 3],
    pub payback_months: [f64; 3],
    pub speed_ratio: [f64; 3],
}

/// Every sample's outcome per count, and the summaries.
#[derive(Clone, Debug, PartialEq)]
pub struct McResult {
    /// outcomes[count][sample].
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

/// The summary of one count's outcomes (any run or the merged shards of one).
pub fn summarise(gpus: u32, outcomes: &[Outcome]) -> McSummary {
    let n = outcomes.len() as f64;
    let pick = |f: &dyn Fn(&Outcome) -> f64| deciles(&mut outcomes.iter().map(f).collect::<Vec<_>>());
    McSummary {
        gpus,
        samples: outcomes.len() as u64,
        p_a_cheaper: outcomes.iter().filter(|o| o.savings_usd > 0.0).count() as f64 / n,
        p_payback_within_life: outcomes
            .iter()
            .filter(|o| matches!(o.payback, Payback::Months | Payback::Dominant))
            .count() as f64
            / n,
        premium: pick(&|o| o.premium),
        break_even_premium: pick(&|o| o.break_even_premium),
        savings_usd: pick(&|o| o.savings_usd),
        npv_usd: pick(&|o| o.npv_usd),
        payback_months: pick(&|o| o.payback_months),
        speed_ratio: pick(&|o| o.speed_ratio),
    }
}

/// Samples per task: a task checks for cancellation and reports progress once.
const SAMPLES_PER_TASK: u64 = 16;

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
            for s in start..end {
                let values = plan.draw(seed, s);
                let row: Vec<Outcome> = plan
                    .counts
                    .iter()
                    .map(|c| plan.compare(c, &values).map(|cmp| Outcome::from(&cmp)))
                    .collect::<Result<_, _>>()?;
                rows.push(row);
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
    let summaries = plan.counts.iter().zip(&outcomes).map(|(c, o)| summarise(c.gpus, o)).collect();
    Ok(McResult { outcomes, summaries, cancelled })
}

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

    #[test]
    fn deciles_by_nearest_rank() {
        let mut v: Vec<f64> = (1..=10).map(f64::from).rev().collect();
        assert_eq!(deciles(&mut v), [1.0, 5.0, 9.0]);
        let mut w = vec![f64::INFINITY, 1.0, 2.0];
        assert_eq!(deciles(&mut w), [1.0, 2.0, f64::INFINITY]);
    }

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
