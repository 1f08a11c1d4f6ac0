//! The comparison planned: every design evaluated at typical values, each GPU count's designs chosen, and the
//! outcome of A against B at any values of the uncertain inputs.

use crate::decision::roi::{
    compare, side_cost, side_speed, Comparison, DesignRule, Payback, RoiProblem, Side, SideSpeed, StepError,
};
use crate::error::ConfigError;
use crate::evaluate::Config;

use super::{figure_mut, uniform, Section, UncertainInput};

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
    cfg.training.validate()?;
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
    cached_speed: Option<&SideSpeed>,
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
