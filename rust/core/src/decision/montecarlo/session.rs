//! A comparison kept for what-ifs of price (the UI's what-if form): no price moves a design's speed or its bill of
//! materials' parts, so a `Session` evaluates every sample's speeds once, keeps them with each design's parts, and
//! a what-if (`Override`s of prices and economics) recomputes only the costs and the comparison, sample by sample,
//! with the same draws: the same numbers as a fresh run with those prices, in a fraction of its time.

use rayon::prelude::*;

use crate::cost::economics::ClusterCost;
use crate::decision::roi::{compare, Side, SideCost, SideSpeed, StepError};
use crate::error::ConfigError;
use crate::evaluate::Config;
use crate::network::bom::{self, Cabling, NetworkParts};
use crate::network::topology::Network;

use super::{summarise, typical_report_with, McReport, McResult, Outcome, Override, Plan, TypicalReport, Uncertainty};
use crate::decision::roi::RoiProblem;

/// Samples per task of a re-pricing: each task clones its designs' configurations once.
const SAMPLES_PER_TASK: u64 = 64;

/// A comparison with every sample's speeds kept (see the module doc).
pub struct Session {
    problem: RoiProblem,
    uncertainty: Uncertainty,
    /// speeds[sample][design]: with and without the model's error; None for designs the first plan did not use.
    speeds: Vec<Vec<Option<[SideSpeed; 2]>>>,
    /// Per design: its bill of materials' parts and NVLink trays.
    parts: Vec<(NetworkParts, f64)>,
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
        let parts = problem.designs.iter().map(|d| parts_of(&d.candidates[0][0])).collect();
        drop(plan);
        Ok(Session { problem, uncertainty, speeds, parts })
    }

    /// The comparison with the what-ifs `overrides`: at typical values (with the tornado when asked) and over every
    /// sample, from the kept speeds.
    pub fn reprice(
        &self,
        overrides: &[Override],
        with_tornado: bool,
    ) -> Result<(TypicalReport, McReport), ConfigError> {
        let plan = Plan::with_overrides(&self.problem, &self.uncertainty, overrides)?;
        let typical = typical_report_with(&plan, with_tornado)?;
        let (seed, samples) = (self.uncertainty.seed, self.uncertainty.samples);
        let tasks = samples.div_ceil(SAMPLES_PER_TASK);
        let per_task: Vec<Vec<Vec<Outcome>>> = (0..tasks)
            .into_par_iter()
            .map(|t| {
                let mut scratch: Vec<Option<Config>> = vec![None; self.problem.designs.len()];
                let end = ((t + 1) * SAMPLES_PER_TASK).min(samples);
                (t * SAMPLES_PER_TASK..end)
                    .map(|s| self.outcomes(&plan, seed, s, &mut scratch))
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
    /// now), the costs recomputed.
    fn outcomes(
        &self,
        plan: &Plan,
        seed: u64,
        s: u64,
        scratch: &mut [Option<Config>],
    ) -> Result<Vec<Outcome>, ConfigError> {
        let values = plan.draw(seed, s);
        let mut sides: Vec<Option<[Side; 2]>> = vec![None; self.problem.designs.len()];
        for c in &plan.counts {
            for i in [c.a, c.b] {
                if sides[i].is_some() {
                    continue;
                }
                let design = &self.problem.designs[i];
                let cfg = scratch[i].get_or_insert_with(|| design.candidates[0][0].clone());
                plan.edit(&values, design.side, cfg)?;
                let (parts, trays) = &self.parts[i];
                let cost = SideCost::new(
                    ClusterCost::new(cfg.gpus, &cfg.gpu, &cfg.prices, parts, *trays),
                    &cfg.prices.economics,
                );
                let [with, without] = match &self.speeds[s as usize][i] {
                    Some(kept) => kept.clone(),
                    None => plan.speeds(i, &values)?,
                };
                let gpus = design.gpus;
                let rate = match &design.serving {
                    Some(speed) => Some(speed.on(&cfg.fabric)?),
                    None => None,
                };
                let serving = |e: StepError| rate.map(|r| r.delivered(e));
                let error = super::plan::step_error(plan.inputs, &values, design.side);
                sides[i] = Some([
                    Side { speed: with, cost: cost.clone(), gpus, serving: serving(error) },
                    Side { speed: without, cost, gpus, serving: serving(StepError::NONE) },
                ]);
            }
        }
        let (shares, options) = (&self.problem.shares, &self.problem.options);
        Ok(plan
            .counts
            .iter()
            .map(|c| {
                let (a, b) = (sides[c.a].as_ref().unwrap(), sides[c.b].as_ref().unwrap());
                let with = compare(&a[0], &b[0], shares, &c.refs, options);
                let without = compare(&a[1], &b[1], shares, &c.refs, options);
                Outcome::new(&with, &without)
            })
            .collect())
    }
}
