//! A comparison kept for what-ifs of price (the UI's what-if form): no price moves a design's speed or its bill of
//! materials' parts, so a `Session` evaluates every sample's speeds once, keeps them with each design's parts, and
//! a what-if (`Override`s of prices and economics, or the comparison itself with other prices, economics, options
//! or price ranges: `reprice_as`) recomputes only the costs and the comparison, sample by sample, with the same
//! draws: the same numbers as a fresh run with those prices, in a fraction of its time. What a speed depends on
//! (the designs' physics, the timing inputs, the seed and the samples) must be the kept one (`reuses`); the parts
//! are recomputed per sample when an input moves them (a rack's GPUs, a cable's reach).

use rayon::prelude::*;

use crate::cost::economics::ClusterCost;
use crate::decision::roi::{compare, Side, SideCost, SideSpeed, StepError};
use crate::error::ConfigError;
use crate::evaluate::Config;
use crate::network::bom::{self, Cabling, NetworkParts};
use crate::network::topology::Network;

use super::{summarise, typical_report_with, McReport, McResult, Outcome, Override, Plan, TypicalReport, Uncertainty};
use crate::decision::roi::{Design, RoiProblem};

use super::UncertainInput;

/// Are two configurations the same but for their prices and economics (which no step time reads)?
fn same_but_prices(a: &Config, b: &Config) -> bool {
    // Every field named, so that a new field of `Config` must be placed on one side or the other.
    let Config {
        model,
        gpu,
        scale_up,
        fabric,
        topology,
        framework,
        prices: _,
        gpus,
        parallelism,
        training,
        overlap,
        reliability,
        errors,
    } = a;
    (model, gpu, scale_up, fabric, topology, gpus) == (&b.model, &b.gpu, &b.scale_up, &b.fabric, &b.topology, &b.gpus)
        && (framework, parallelism, training, overlap, reliability, errors)
            == (&b.framework, &b.parallelism, &b.training, &b.overlap, &b.reliability, &b.errors)
}

/// Does some input, at either end of its range (the others typical), change design `index`'s parts?
fn moves_parts(plan: &Plan, index: usize) -> bool {
    let design = &plan.problem.designs[index];
    let at = |values: &[f64]| {
        let mut cfg = design.candidates[0][0].clone();
        plan.edit(values, design.side, &mut cfg).ok().map(|_| parts_of(&cfg))
    };
    let typical = at(plan.typical_values());
    (0..plan.inputs.len()).any(|i| {
        [plan.inputs[i].low, plan.inputs[i].high].into_iter().any(|x| {
            let mut values = plan.typical_values().to_vec();
            values[i] = x;
            at(&values) != typical
        })
    })
}

/// Samples per task of a re-pricing: each task clones its designs' configurations once.
const SAMPLES_PER_TASK: u64 = 64;

/// A comparison with every sample's speeds kept (see the module doc).
pub struct Session {
    problem: RoiProblem,
    uncertainty: Uncertainty,
    /// speeds[sample][design]: with and without the model's error; None for designs the first plan did not use.
    speeds: Vec<Vec<Option<[SideSpeed; 2]>>>,
    /// Does some input move a design's parts (then each sample counts them from its own figures)?
    parts_move: bool,
}

/// The parts of a design's cluster: as the cluster stage counts them (`ClusterStage::from_parts`).
fn parts_of(cfg: &Config) -> (NetworkParts, f64) {
    let network =
        Network::new(&cfg.fabric, &cfg.topology, cfg.gpus, cfg.gpu.server_gpus).placed(cfg.training.placement);
    let parts = bom::parts(&network, &Cabling::new(&network, &cfg.topology, &cfg.prices));
    (parts, cfg.scale_up.switch_trays(cfg.gpus))
}

impl Session {
    /// Plan the comparison at catalog prices and evaluate every sample's speeds (`uncertainty.samples` of them).
    pub fn new(problem: RoiProblem, uncertainty: Uncertainty) -> Result<Self, ConfigError> {
        let plan = Plan::new(&problem, &uncertainty)?;
        let mut used: Vec<usize> = plan.counts.iter().flat_map(|c| [c.a, c.b]).collect();
        used.sort_unstable();
        used.dedup();
        let designs = problem.designs.len();
        let speeds = (0..uncertainty.samples)
            .into_par_iter()
            .map(|s| {
                let values = plan.draw(uncertainty.seed, s);
                let mut row: Vec<Option<[SideSpeed; 2]>> = vec![None; designs];
                for &i in &used {
                    row[i] = Some(plan.speeds(i, &values)?);
                }
                Ok(row)
            })
            .collect::<Result<_, ConfigError>>()?;
        let parts_move = used.iter().any(|&i| moves_parts(&plan, i));
        drop(plan);
        Ok(Session { problem, uncertainty, speeds, parts_move })
    }

    /// Can the kept speeds serve `problem` under `uncertainty`: the same designs with the same physics (every
    /// candidate's configuration equal but for its prices and economics, and the same parts), the same mix, the same
    /// inputs moving step times with the same distributions, the same seed and samples? Prices, economics, the
    /// options and the other inputs' distributions may differ; so may a lifecycle's serving layouts (each sample
    /// evaluates them from `problem`, not from what is kept).
    pub fn reuses(&self, problem: &RoiProblem, uncertainty: &Uncertainty) -> bool {
        let (kept, u) = (&self.problem, &self.uncertainty);
        let same_design = |a: &Design, b: &Design| {
            (a.side, a.gpus, &a.topology) == (b.side, b.gpus, &b.topology)
                && a.candidates.len() == b.candidates.len()
                && a.candidates
                    .iter()
                    .zip(&b.candidates)
                    .all(|(x, y)| x.len() == y.len() && x.iter().zip(y).all(|(k, n)| same_but_prices(k, n)))
                && parts_of(&a.candidates[0][0]) == parts_of(&b.candidates[0][0])
        };
        let same_input = |a: &UncertainInput, b: &UncertainInput| {
            a.targets == b.targets && (!(a.moves_time() || self.parts_move) || a == b)
        };
        kept.shares == problem.shares
            && kept.designs.len() == problem.designs.len()
            && kept.designs.iter().zip(&problem.designs).all(|(a, b)| same_design(a, b))
            && (u.seed, u.samples, &u.groups) == (uncertainty.seed, uncertainty.samples, &uncertainty.groups)
            && u.inputs.len() == uncertainty.inputs.len()
            && u.inputs.iter().zip(&uncertainty.inputs).all(|(a, b)| same_input(a, b))
    }

    /// The comparison with the what-ifs `overrides`: at typical values (with the tornado when asked) and over every
    /// sample, from the kept speeds.
    pub fn reprice(
        &self,
        overrides: &[Override],
        with_tornado: bool,
    ) -> Result<(TypicalReport, McReport), ConfigError> {
        self.reprice_as(&self.problem, &self.uncertainty, overrides, with_tornado)
    }

    /// The comparison of `problem` under `uncertainty` with the what-ifs `overrides`, from the kept speeds: what a
    /// fresh run of them gives. Refused when the kept speeds cannot serve them (`reuses`: compare afresh).
    pub fn reprice_as(
        &self,
        problem: &RoiProblem,
        uncertainty: &Uncertainty,
        overrides: &[Override],
        with_tornado: bool,
    ) -> Result<(TypicalReport, McReport), ConfigError> {
        if !self.reuses(problem, uncertainty) || overrides.iter().any(|o| o.section.moves_time()) {
            return Err(ConfigError::InvalidFigure {
                field: "what-if",
                value: f64::NAN,
                expected: "prices, economics, options or price ranges only (compare afresh)",
            });
        }
        let plan = Plan::with_overrides(problem, uncertainty, overrides)?;
        let parts: Vec<(NetworkParts, f64)> = problem.designs.iter().map(|d| parts_of(&d.candidates[0][0])).collect();
        let typical = typical_report_with(&plan, with_tornado)?;
        let (seed, samples) = (self.uncertainty.seed, self.uncertainty.samples);
        let tasks = samples.div_ceil(SAMPLES_PER_TASK);
        let per_task: Vec<Vec<Vec<Outcome>>> = (0..tasks)
            .into_par_iter()
            .map(|t| {
                let mut scratch: Vec<(Option<Config>, Option<[Side; 2]>)> = vec![(None, None); problem.designs.len()];
                let end = ((t + 1) * SAMPLES_PER_TASK).min(samples);
                (t * SAMPLES_PER_TASK..end)
                    .map(|s| self.outcomes(&plan, &parts, (seed, s), &mut scratch))
                    .collect::<Result<_, _>>()
            })
            .collect::<Result<Vec<_>, ConfigError>>()?;
        let mut outcomes: Vec<Vec<Outcome>> = vec![Vec::with_capacity(samples as usize); plan.counts.len()];
        for row in per_task.into_iter().flatten() {
            for (c, o) in row.into_iter().enumerate() {
                outcomes[c].push(o);
            }
        }
        let summaries = plan.counts.iter().zip(&outcomes).map(|(c, o)| summarise(c.gpus, c.side_b, o)).collect();
        Ok((typical, McReport::new(&plan, McResult { outcomes, summaries, cancelled: false })))
    }

    /// Every pair's outcome in sample `s`: the kept speeds (or, for a design the what-ifs newly chose, evaluated
    /// now), the costs recomputed. `scratch` holds each design's configuration and sides between samples (their
    /// buffers reused).
    fn outcomes(
        &self,
        plan: &Plan,
        parts: &[(NetworkParts, f64)],
        (seed, s): (u64, u64),
        scratch: &mut [(Option<Config>, Option<[Side; 2]>)],
    ) -> Result<Vec<Outcome>, ConfigError> {
        let values = plan.draw(seed, s);
        let mut done = vec![false; plan.problem.designs.len()];
        for c in &plan.counts {
            for i in [c.a, c.b] {
                if !std::mem::replace(&mut done[i], true) {
                    self.refresh(plan, &parts[i], (&values, s), i, &mut scratch[i])?;
                }
            }
        }
        let (shares, options) = (&plan.problem.shares, &plan.problem.options);
        let side = |i: usize| scratch[i].1.as_ref().expect("every design of a pair evaluated above");
        Ok(plan
            .counts
            .iter()
            .map(|c| {
                let (a, b) = (side(c.a), side(c.b));
                let with = compare(&a[0], &b[0], shares, &c.refs, options);
                let without = compare(&a[1], &b[1], shares, &c.refs, options);
                Outcome::new(&with, &without)
            })
            .collect())
    }

    /// Design `i` in this sample: its configuration edited to the drawn values, its costs recomputed, its speeds
    /// with and without model error (kept, or evaluated now) and its serving rate, into its two sides.
    fn refresh(
        &self,
        plan: &Plan,
        (parts, trays): &(NetworkParts, f64),
        (values, s): (&[f64], u64),
        i: usize,
        (cfg, slot): &mut (Option<Config>, Option<[Side; 2]>),
    ) -> Result<(), ConfigError> {
        let design = &plan.problem.designs[i];
        let cfg = cfg.get_or_insert_with(|| design.candidates[0][0].clone());
        plan.edit(values, design.side, cfg)?;
        let own;
        let (parts, trays) = if self.parts_move {
            own = parts_of(cfg);
            (&own.0, own.1)
        } else {
            (parts, *trays)
        };
        let cost =
            SideCost::new(ClusterCost::new(cfg.gpus, &cfg.gpu, &cfg.prices, parts, trays), &cfg.prices.economics);
        let evaluated;
        let [with, without] = match &self.speeds[s as usize][i] {
            Some(kept) => kept,
            None => {
                evaluated = plan.speeds(i, values)?;
                &evaluated
            }
        };
        let rate = match &design.serving {
            Some(speed) => Some(speed.on(&cfg.fabric)?),
            None => None,
        };
        let serving = |e: StepError| rate.map(|r| r.delivered(e));
        let error = plan.step_error(values, design.side);
        match slot {
            Some([a, b]) => {
                a.speed.assign(with);
                b.speed.assign(without);
                (a.cost, b.cost) = (cost.clone(), cost);
                (a.serving, b.serving) = (serving(error), serving(StepError::NONE));
            }
            None => {
                let gpus = design.gpus;
                *slot = Some([
                    Side { speed: with.clone(), cost: cost.clone(), gpus, serving: serving(error) },
                    Side { speed: without.clone(), cost, gpus, serving: serving(StepError::NONE) },
                ]);
            }
        }
        Ok(())
    }
}
