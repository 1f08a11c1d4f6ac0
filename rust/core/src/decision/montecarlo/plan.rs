//! The comparison planned: every design evaluated at typical values, each (GPU count, design B) pair's designs
//! chosen, and the outcome of A against each B at any values of the uncertain inputs. A sample evaluates each
//! design it needs once (A's design serves every B it is compared with), with and without the model's error.

use crate::decision::roi::{
    compare, shares_cluster, side_cost, side_cost_and_speeds, side_cost_and_speeds_in, side_cost_in, side_speeds,
    Comparison, DesignRule, DesignScratch, Flows, Payback, RoiProblem, ServingRate, Side, SideSpeed, StepError,
};
use crate::error::ConfigError;
use crate::evaluate::Config;

use super::step_error::{error_terms, step_error_of, ErrorTerms};
use super::{accessor, group_draws, Override, Section, UncertainInput, Uncertainty};
use crate::figures::Sample;

/// A figure an input sets, resolved once: the input, the side (None: every design) and the figure's accessor.
#[derive(Clone, Copy, Debug)]
struct Setter {
    input: usize,
    side: Option<u32>,
    at: Sample,
}

/// Every figure the inputs set (model errors aside).
fn setters(inputs: &[UncertainInput]) -> Vec<Setter> {
    let mut out = Vec::new();
    for (input, i) in inputs.iter().enumerate() {
        for t in &i.targets {
            if let Some(at) = accessor(t.section, &t.field) {
                out.push(Setter { input, side: t.side, at });
            }
        }
    }
    out
}

/// One GPU count and one design B, with the designs chosen at typical values.
#[derive(Clone, Debug)]
pub struct CountPlan {
    pub gpus: u32,
    /// Which B (1, 2, ...: `Design::side`).
    pub side_b: u32,
    /// Indices into `RoiProblem::designs` of A's and B's design.
    pub a: usize,
    pub b: usize,
    /// Reference throughput per workload (the best design of A or this B at this count, typical values): one unit
    /// of work. Comparing A with several B gives each pair the numbers it has alone.
    pub refs: Vec<f64>,
}

/// The problem with its designs chosen and its typical outcome.
#[derive(Clone, Debug)]
pub struct Plan<'a> {
    pub problem: &'a RoiProblem,
    pub inputs: &'a [UncertainInput],
    /// The number of correlated groups.
    pub groups: usize,
    pub counts: Vec<CountPlan>,
    typical: Vec<f64>,
    /// Every design's speed at typical values (reused while no timing input moves); None for designs no pair uses.
    typical_speed: Vec<Option<SideSpeed>>,
    setters: Vec<Setter>,
    /// The what-ifs, set after the inputs: (side, accessor, value).
    overrides: Vec<(Option<u32>, Sample, f64)>,
    /// Per design: do its candidates share one cluster (one cluster stage per sample serves them all)?
    shared: Vec<bool>,
    /// The model-error targets (`error_terms`), read once.
    error_terms: ErrorTerms,
}

/// The outcome of one sample (or of typical values) for one (GPU count, B) pair.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub premium: f64,
    pub break_even_premium: f64,
    pub savings_usd: f64,
    pub npv_usd: f64,
    /// The NPV with the model's error left out (the same draws of everything else).
    pub npv_no_error_usd: f64,
    pub extra_capex_usd: f64,
    pub extra_tco_usd: f64,
    /// PV(TCO_A) / PV(TCO_B) - 1.
    pub extra_tco_share: f64,
    pub payback: Payback,
    pub payback_months: f64,
    pub speed_ratio: f64,
    /// The yearly IRR of the premium's cash flows, at its bound where none exists (`Flows::irr_ranked`).
    pub irr: f64,
}

/// Equal when every figure is; two samples without an IRR (NaN: flows that are not an investment) are equal in it.
impl PartialEq for Outcome {
    fn eq(&self, o: &Self) -> bool {
        let figures = |x: &Self| {
            [
                x.premium,
                x.break_even_premium,
                x.savings_usd,
                x.npv_usd,
                x.npv_no_error_usd,
                x.extra_capex_usd,
                x.extra_tco_usd,
                x.extra_tco_share,
                x.payback_months,
                x.speed_ratio,
            ]
        };
        figures(self) == figures(o) && self.payback == o.payback && self.irr.total_cmp(&o.irr).is_eq()
    }
}

impl Outcome {
    /// The outcome of `c`, with `no_error` the same comparison without the model's error.
    pub fn new(c: &Comparison, no_error: &Comparison) -> Self {
        Outcome {
            premium: c.premium,
            break_even_premium: c.break_even_premium,
            savings_usd: c.savings_usd,
            npv_usd: c.npv_usd,
            npv_no_error_usd: no_error.npv_usd,
            extra_capex_usd: c.extra_capex_usd,
            extra_tco_usd: c.extra_tco_usd,
            extra_tco_share: c.extra_tco_usd / c.tco_b_usd,
            payback: c.payback,
            payback_months: c.payback_months,
            speed_ratio: c.speed_ratio,
            irr: Flows::of(c).irr_ranked(),
        }
    }
}

/// A design evaluated: with the model's error drawn, and without it.
struct Evaluated {
    with_error: Side,
    no_error: Side,
}

impl<'a> Plan<'a> {
    /// Check the inputs, evaluate every design at typical values and choose each pair's designs.
    pub fn new(problem: &'a RoiProblem, uncertainty: &'a Uncertainty) -> Result<Self, ConfigError> {
        Self::with_overrides(problem, uncertainty, &[])
    }

    /// The plan with what-ifs: figures set to certain values after the uncertain inputs (the designs are chosen
    /// with them).
    pub fn with_overrides(
        problem: &'a RoiProblem,
        uncertainty: &'a Uncertainty,
        overrides: &[Override],
    ) -> Result<Self, ConfigError> {
        problem.validate()?;
        let inputs = &uncertainty.inputs[..];
        for input in inputs {
            check_input(problem, input, uncertainty.groups.len())?;
        }
        let typical: Vec<f64> = inputs.iter().map(|i| i.typical).collect();
        let setters = setters(inputs);
        let overrides = resolve(overrides)?;
        let error_terms = error_terms(inputs);
        let mut typical_speed = vec![None; problem.designs.len()];
        let mut counts = Vec::new();
        for (gpus, side_b) in problem.pairs() {
            let mut sides: Vec<(usize, Side)> = Vec::new();
            let here = |d: &crate::decision::roi::Design| d.gpus == gpus && (d.side == 0 || d.side == side_b);
            for (i, d) in problem.designs.iter().enumerate().filter(|(_, d)| here(d)) {
                let edit = |cfg: &mut Config| apply(&setters, &overrides, &typical, d.side, cfg);
                let error = step_error_of(&error_terms, &typical, d.side);
                let mut side = evaluate_side(error, &d.candidates, &edit)?;
                side.serving = d.serving.as_ref().map(|s| s.typical().delivered(error));
                sides.push((i, side));
            }
            let refs: Vec<f64> = (0..problem.shares.len())
                .map(|w| sides.iter().map(|(_, s)| s.speed.tokens_per_s[w]).fold(0.0, f64::max))
                .collect();
            let (a, b) = choose_designs(problem, &sides, &refs, side_b);
            for (i, s) in sides.into_iter().filter(|(i, _)| *i == a || *i == b) {
                typical_speed[i] = Some(s.speed);
            }
            counts.push(CountPlan { gpus, side_b, a, b, refs });
        }
        let shared = problem.designs.iter().map(|d| shares_cluster(&d.candidates)).collect();
        let groups = uncertainty.groups.len();
        Ok(Plan { problem, inputs, groups, counts, typical, typical_speed, setters, overrides, shared, error_terms })
    }

    /// The model error factors of side `side` at `values`.
    pub(super) fn step_error(&self, values: &[f64], side: u32) -> StepError {
        step_error_of(&self.error_terms, values, side)
    }

    /// The typical values of the inputs.
    pub fn typical_values(&self) -> &[f64] {
        &self.typical
    }

    fn timing_moved(&self, values: &[f64]) -> bool {
        self.inputs.iter().zip(values).zip(&self.typical).any(|((i, v), t)| i.moves_time() && v != t)
    }

    /// One design with the inputs at `values`, with and without the model's error; `scratch`: what this design
    /// keeps between calls (`DesignScratch`).
    fn evaluate(
        &self,
        index: usize,
        values: &[f64],
        moved: bool,
        scratch: &mut DesignScratch,
    ) -> Result<Evaluated, ConfigError> {
        let design = &self.problem.designs[index];
        let edit = |cfg: &mut Config| self.edit(values, design.side, cfg);
        let gpus = design.gpus;
        let errors = [self.step_error(values, design.side), StepError::NONE];
        let rate = self.serving_rate(index, values, moved)?;
        let serving = |e: StepError| rate.map(|r| r.delivered(e));
        let (cost, [with_error, no_error]) = match (&self.typical_speed[index], moved) {
            (Some(speed), false) => {
                (side_cost_in(scratch, &design.candidates, &edit)?, [scratch.copy_of(speed), scratch.copy_of(speed)])
            }
            _ if self.shared[index] => {
                let (cost, mut speeds) = side_cost_and_speeds_in(scratch, &design.candidates, &errors, &edit)?;
                (cost, [speeds.remove(0), speeds.remove(0)])
            }
            _ => {
                let mut speeds = side_speeds(&design.candidates, &errors, &edit)?;
                (side_cost(&design.candidates, &edit)?, [speeds.remove(0), speeds.remove(0)])
            }
        };
        Ok(Evaluated {
            with_error: Side { speed: with_error, cost: cost.clone(), gpus, serving: serving(errors[0]) },
            no_error: Side { speed: no_error, cost, gpus, serving: serving(errors[1]) },
        })
    }

    /// Design `index`'s serving rate (None without a lifecycle) with the inputs at `values`: its layout evaluated
    /// again on the sampled fabric when a timing input moved, else the typical rate.
    pub(super) fn serving_rate(
        &self,
        index: usize,
        values: &[f64],
        moved: bool,
    ) -> Result<Option<ServingRate>, ConfigError> {
        let design = &self.problem.designs[index];
        let Some(speed) = &design.serving else {
            return Ok(None);
        };
        if !moved {
            return Ok(Some(speed.typical()));
        }
        let mut cfg = design.candidates[0][0].clone();
        self.edit(values, design.side, &mut cfg)?;
        speed.on(&cfg.fabric).map(Some)
    }

    /// Design `index`'s speeds with the inputs at `values`, with and without the model's error.
    pub(super) fn speeds(&self, index: usize, values: &[f64]) -> Result<[SideSpeed; 2], ConfigError> {
        let design = &self.problem.designs[index];
        let edit = |cfg: &mut Config| self.edit(values, design.side, cfg);
        let errors = [self.step_error(values, design.side), StepError::NONE];
        let mut speeds = if self.shared[index] {
            side_cost_and_speeds(&design.candidates, &errors, &edit)?.1
        } else {
            side_speeds(&design.candidates, &errors, &edit)?
        };
        Ok([speeds.remove(0), speeds.remove(0)])
    }

    /// A's and B's sides of one pair with the inputs at `values` (the model's error drawn).
    pub fn sides(&self, count: &CountPlan, values: &[f64]) -> Result<[Side; 2], ConfigError> {
        self.sides_in(count, values, &mut Default::default())
    }

    /// `sides`, with `scratch` what A's and B's designs keep between calls (`DesignScratch`).
    fn sides_in(
        &self,
        count: &CountPlan,
        values: &[f64],
        scratch: &mut [DesignScratch; 2],
    ) -> Result<[Side; 2], ConfigError> {
        let moved = self.timing_moved(values);
        let [kept_a, kept_b] = scratch;
        let a = self.evaluate(count.a, values, moved, kept_a)?;
        let b = self.evaluate(count.b, values, moved, kept_b)?;
        kept_a.recycle(a.no_error.speed);
        kept_b.recycle(b.no_error.speed);
        Ok([a.with_error, b.with_error])
    }

    /// The comparison of one pair with the inputs at `values`.
    pub fn compare(&self, count: &CountPlan, values: &[f64]) -> Result<Comparison, ConfigError> {
        self.compare_in(count, values, &mut Default::default())
    }

    /// `compare`, with `scratch` what the pair's two designs keep between calls (`DesignScratch`).
    pub fn compare_in(
        &self,
        count: &CountPlan,
        values: &[f64],
        scratch: &mut [DesignScratch; 2],
    ) -> Result<Comparison, ConfigError> {
        let [a, b] = self.sides_in(count, values, scratch)?;
        let comparison = compare(&a, &b, &self.problem.shares, &count.refs, &self.problem.options);
        let [kept_a, kept_b] = scratch;
        kept_a.recycle(a.speed);
        kept_b.recycle(b.speed);
        Ok(comparison)
    }

    /// Every pair's outcome with the inputs at `values`, each design evaluated once.
    pub fn outcomes(&self, values: &[f64]) -> Result<Vec<Outcome>, ConfigError> {
        self.outcomes_in(values, &mut vec![DesignScratch::default(); self.problem.designs.len()])
    }

    /// `outcomes`, with `scratch` (one per design) what the designs keep between the samples of a task.
    pub fn outcomes_in(&self, values: &[f64], scratch: &mut [DesignScratch]) -> Result<Vec<Outcome>, ConfigError> {
        let moved = self.timing_moved(values);
        let mut done: Vec<Option<Evaluated>> = (0..self.problem.designs.len()).map(|_| None).collect();
        for c in &self.counts {
            for i in [c.a, c.b] {
                if done[i].is_none() {
                    done[i] = Some(self.evaluate(i, values, moved, &mut scratch[i])?);
                }
            }
        }
        let (shares, options) = (&self.problem.shares, &self.problem.options);
        let outcomes = self
            .counts
            .iter()
            .map(|c| {
                let (a, b) = (done[c.a].as_ref().unwrap(), done[c.b].as_ref().unwrap());
                let with = compare(&a.with_error, &b.with_error, shares, &c.refs, options);
                let without = compare(&a.no_error, &b.no_error, shares, &c.refs, options);
                Outcome::new(&with, &without)
            })
            .collect();
        for (evaluated, kept) in done.into_iter().zip(scratch) {
            if let Some(e) = evaluated {
                kept.recycle(e.with_error.speed);
                kept.recycle(e.no_error.speed);
            }
        }
        Ok(outcomes)
    }

    /// Set the inputs at `values` and the what-ifs on `cfg`, for side `side`.
    pub(super) fn edit(&self, values: &[f64], side: u32, cfg: &mut Config) -> Result<(), ConfigError> {
        apply(&self.setters, &self.overrides, values, side, cfg)
    }

    /// The values of sample `sample` under `seed`.
    pub fn draw(&self, seed: u64, sample: u64) -> Vec<f64> {
        let groups = group_draws(seed, sample, self.groups);
        self.inputs
            .iter()
            .enumerate()
            .map(|(i, input)| input.quantile(input.uniform_in(seed, sample, i as u64, &groups)))
            .collect()
    }
}

fn check_input(problem: &RoiProblem, input: &UncertainInput, groups: usize) -> Result<(), ConfigError> {
    let bad = |expected| ConfigError::InvalidFigure { field: "uncertain input", value: input.typical, expected };
    let ordered = input.low <= input.typical && input.typical <= input.high;
    if !(ordered && input.low.is_finite() && input.high.is_finite()) {
        return Err(bad("low <= typical <= high, all finite"));
    }
    if input.targets.is_empty() || input.empirical.iter().any(|v| !v.is_finite()) {
        return Err(bad("at least one target and finite empirical values"));
    }
    let weights_ok = input.weights.is_empty()
        || (input.weights.len() == input.empirical.len()
            && input.weights.iter().all(|w| w.is_finite() && *w >= 0.0)
            && input.weights.iter().sum::<f64>() > 0.0);
    if !weights_ok {
        return Err(bad("one finite weight >= 0 per value, some above 0"));
    }
    let squares: f64 = input.loadings.iter().map(|l| l.loading * l.loading).sum();
    let loadings_ok = input.loadings.iter().all(|l| (l.group as usize) < groups && l.loading.is_finite());
    if !loadings_ok || squares >= 1.0 {
        return Err(bad("loadings on known groups whose squares sum below 1"));
    }
    for t in &input.targets {
        let known = match t.section {
            Section::ModelError => matches!(t.field.as_str(), "common" | "collective" | "serving"),
            section => accessor(section, &t.field).is_some(),
        };
        let sides = problem.sides_b().last().copied().unwrap_or(1);
        if !known || t.side.is_some_and(|s| s > sides) {
            return Err(bad("a known section, field and side (0 for A, 1.. for each B)"));
        }
    }
    Ok(())
}

/// The what-ifs' accessors: a field no accessor sets is refused.
fn resolve(overrides: &[Override]) -> Result<Vec<(Option<u32>, Sample, f64)>, ConfigError> {
    overrides
        .iter()
        .map(|o| {
            let at =
                accessor(o.section, &o.field).filter(|_| o.value.is_finite()).ok_or(ConfigError::InvalidFigure {
                    field: "override",
                    value: o.value,
                    expected: "a finite value of a known section and field",
                })?;
            Ok((o.side, at, o.value))
        })
        .collect()
}

/// Set every figure the inputs set at `values`, then the what-ifs, on `cfg`, for side `side`.
fn apply(
    setters: &[Setter],
    overrides: &[(Option<u32>, Sample, f64)],
    values: &[f64],
    side: u32,
    cfg: &mut Config,
) -> Result<(), ConfigError> {
    for s in setters {
        if s.side.is_none_or(|t| t == side) {
            *(s.at)(cfg) = values[s.input];
        }
    }
    for (on, at, value) in overrides {
        if on.is_none_or(|t| t == side) {
            *at(cfg) = *value;
        }
    }
    cfg.fabric.validate()?;
    cfg.training.validate()?;
    cfg.prices.validate()
}

fn evaluate_side(
    error: StepError,
    candidates: &[Vec<Config>],
    edit: &dyn Fn(&mut Config) -> Result<(), ConfigError>,
) -> Result<Side, ConfigError> {
    let speed = side_speeds(candidates, &[error], edit)?.remove(0);
    let cost = side_cost(candidates, edit)?;
    Ok(Side { speed, cost, gpus: candidates[0][0].gpus, serving: None })
}

/// Each count's designs: per `DesignRule`, by cost per unit of work at typical values.
fn choose_designs(problem: &RoiProblem, sides: &[(usize, Side)], refs: &[f64], side_b: u32) -> (usize, usize) {
    let cost_per_work = |s: &Side| s.cost.tco.pv_usd() / s.work(&problem.shares, refs);
    let designs = &problem.designs;
    let best = |side: u32, topology: Option<&str>| {
        sides
            .iter()
            .filter(|(i, _)| designs[*i].side == side && topology.is_none_or(|t| designs[*i].topology == t))
            .min_by(|x, y| cost_per_work(&x.1).total_cmp(&cost_per_work(&y.1)))
            .map(|(i, s)| (*i, cost_per_work(s)))
    };
    let cheapest = (best(0, None).unwrap().0, best(side_b, None).unwrap().0);
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
            let (b, cb) = best(side_b, Some(t))?;
            Some((ca + cb, a, b))
        })
        .collect();
    pairs.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
    pairs.first().map_or(cheapest, |p| (p.1, p.2))
}
