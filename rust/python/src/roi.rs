//! ROI bindings: the comparison (designs as choices into each workload's sweep space, options) and its uncertain
//! inputs from dicts (derived conversions); the typical-value comparison with the tornado, the Monte Carlo's
//! outcome columns and summaries back as the core's records; progress and cancellation through a handle Python
//! polls. No ROI arithmetic here.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use pyo3::prelude::*;
use scalefront_core::decision::montecarlo::{
    self, typical_report, McProgress, McReport, McSummary, OutcomeColumns, Override, Plan, Session, TypicalReport,
    Uncertainty,
};
use scalefront_core::decision::roi::{Design, RoiOptions, RoiProblem, ServingSpeed};
use scalefront_core::sweep::{Choice, SweepSpace};

use crate::error::{extract, no_panic, panicked, BindingsError, Result};

/// Progress and cancellation of one Monte Carlo run.
#[pyclass(frozen, module = "scalefront._core")]
pub struct RoiHandle {
    progress: Arc<McProgress>,
}

#[pymethods]
impl RoiHandle {
    #[new]
    fn new() -> Self {
        RoiHandle { progress: Arc::new(McProgress::default()) }
    }
    /// Samples done so far.
    fn done(&self) -> u64 {
        self.progress.done.load(Ordering::Relaxed)
    }
    /// Ask the run to stop; it returns within a task (milliseconds) with `cancelled` set.
    fn cancel(&self) {
        self.progress.cancel.store(true, Ordering::SeqCst);
    }
    fn cancelled(&self) -> bool {
        self.progress.cancel.load(Ordering::Relaxed)
    }
}

/// A candidate as the Python layer names it: one sweep row's axis indices (degrees for tp, pp, dp, cp, ep).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct ChoiceRequest {
    gpu: u32,
    scale_up: u32,
    gpus: u32,
    fabric: u32,
    topology: u32,
    framework: u32,
    precision: u32,
    tp: u32,
    pp: u32,
    dp: u32,
    cp: u32,
    ep: u32,
    vpp: u32,
    micro_batch: u32,
    sequence_parallel: u32,
    recompute: u32,
    zero: u32,
    overlap: u32,
}

impl From<&ChoiceRequest> for Choice {
    fn from(c: &ChoiceRequest) -> Choice {
        Choice {
            gpu: c.gpu,
            scale_up: c.scale_up,
            gpus: c.gpus,
            fabric: c.fabric,
            topology: c.topology,
            framework: c.framework,
            precision: c.precision,
            tp: c.tp,
            pp: c.pp,
            dp: c.dp,
            cp: c.cp,
            ep: c.ep,
            vpp: c.vpp,
            micro_batch: c.micro_batch,
            sequence_parallel: c.sequence_parallel,
            recompute: c.recompute,
            zero: c.zero,
            overlap: c.overlap,
        }
    }
}

#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct DesignRequest {
    side: u32,
    gpus: u32,
    topology: String,
    /// Per workload of the mix, the candidates as choices of that workload's sweep space.
    candidates: Vec<Vec<ChoiceRequest>>,
    /// What it serves in a lifecycle's serving months (absent without a lifecycle).
    #[pyo3(default)]
    serving: Option<ServingSpeed>,
}

/// The comparison as the Python layer sends it: each workload's sweep space, the shares, the designs (as
/// choices into those spaces) and the options. Converted to the core's `RoiProblem` with `SweepSpace::config`.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct ProblemRequest {
    spaces: Vec<SweepSpace>,
    shares: Vec<f64>,
    designs: Vec<DesignRequest>,
    options: RoiOptions,
}

fn problem(problem: &Bound<'_, PyAny>, uncertainty: &Bound<'_, PyAny>) -> Result<(RoiProblem, Uncertainty)> {
    let req: ProblemRequest = extract(problem, "ProblemRequest")?;
    for space in &req.spaces {
        space.validate()?;
    }
    let mut designs = Vec::with_capacity(req.designs.len());
    for d in req.designs {
        if d.candidates.len() != req.spaces.len() {
            return Err(BindingsError::Contract(
                "ProblemRequest.designs: one candidate list per workload space".into(),
            ));
        }
        let candidates = d
            .candidates
            .iter()
            .zip(&req.spaces)
            .map(|(cands, space)| cands.iter().map(|c| space.config(&c.into())).collect())
            .collect();
        designs.push(Design { side: d.side, gpus: d.gpus, topology: d.topology, candidates, serving: d.serving });
    }
    let problem = RoiProblem { shares: req.shares, designs, options: req.options };
    Ok((problem, extract(uncertainty, "Uncertainty")?))
}

/// The fabric comparison at typical values per GPU count (`scalefront_core::roi::RoiProblem` and
/// `montecarlo::Uncertainty` as dicts), with the tornado of every uncertain input (GIL released).
#[pyfunction]
pub fn roi_compare(
    py: Python<'_>,
    problem: &Bound<'_, PyAny>,
    uncertainty: &Bound<'_, PyAny>,
) -> Result<TypicalReport> {
    let (problem, uncertainty) = no_panic(|| self::problem(problem, uncertainty))?;
    let outcome = py.detach(|| catch_unwind(AssertUnwindSafe(|| typical_report(&Plan::new(&problem, &uncertainty)?))));
    Ok(outcome.map_err(|payload| panicked("the scalefront ROI comparison panicked", payload))??)
}

/// Samples `first .. first + samples` of the comparison's Monte Carlo (blocking, GIL released; progress and
/// cancellation through `handle`): per GPU count, the outcome columns and their summary.
#[pyfunction]
pub fn roi_monte_carlo(
    py: Python<'_>,
    problem: &Bound<'_, PyAny>,
    uncertainty: &Bound<'_, PyAny>,
    handle: &Bound<'_, RoiHandle>,
    first: u64,
    samples: u64,
) -> Result<McReport> {
    let (problem, uncertainty) = no_panic(|| self::problem(problem, uncertainty))?;
    let progress = handle.get().progress.clone();
    let outcome = py.detach(|| {
        catch_unwind(AssertUnwindSafe(|| {
            let plan = Plan::new(&problem, &uncertainty)?;
            montecarlo::run(&plan, uncertainty.seed, first, samples, &progress).map(|r| McReport::new(&plan, r))
        }))
    });
    Ok(outcome.map_err(|payload| panicked("the scalefront Monte Carlo panicked", payload))??)
}

/// The summary (P(A cheaper), P10/P50/P90) of one (GPU count, B) pair's Monte Carlo outcome columns (shards of
/// one run joined in sample order).
#[pyfunction]
pub fn roi_summarise(gpus: u32, side_b: u32, columns: &Bound<'_, PyAny>) -> Result<McSummary> {
    no_panic(|| {
        let c: OutcomeColumns = extract(columns, "OutcomeColumns")?;
        Ok(montecarlo::summarise(gpus, side_b, &c.outcomes()))
    })
}

/// The comparison at typical values with its tornado and its Monte Carlo, from one plan (the designs evaluated at
/// typical values once): what `roi_compare` and `roi_monte_carlo` return, in one call (GIL released).
#[pyfunction]
pub fn roi_analyse(
    py: Python<'_>,
    problem: &Bound<'_, PyAny>,
    uncertainty: &Bound<'_, PyAny>,
    handle: &Bound<'_, RoiHandle>,
) -> Result<(TypicalReport, McReport)> {
    let (problem, uncertainty) = no_panic(|| self::problem(problem, uncertainty))?;
    let progress = handle.get().progress.clone();
    let outcome = py.detach(|| {
        catch_unwind(AssertUnwindSafe(|| {
            let plan = Plan::new(&problem, &uncertainty)?;
            let mc = montecarlo::run(&plan, uncertainty.seed, 0, uncertainty.samples, &progress)?;
            Ok::<_, scalefront_core::error::ConfigError>((typical_report(&plan)?, McReport::new(&plan, mc)))
        }))
    });
    Ok(outcome.map_err(|payload| panicked("the scalefront ROI comparison panicked", payload))??)
}

/// A comparison kept for what-ifs of price (`scalefront_core::decision::montecarlo::Session`): every sample's
/// speeds evaluated once; `reprice` recomputes the costs and the comparison with the what-ifs.
#[pyclass(frozen, module = "scalefront._core")]
pub struct RoiSession {
    inner: Arc<Session>,
}

#[pymethods]
impl RoiSession {
    #[new]
    fn new(py: Python<'_>, problem: &Bound<'_, PyAny>, uncertainty: &Bound<'_, PyAny>) -> Result<Self> {
        let (problem, uncertainty) = no_panic(|| self::problem(problem, uncertainty))?;
        let outcome = py.detach(|| catch_unwind(AssertUnwindSafe(|| Session::new(problem, uncertainty))));
        let inner = outcome.map_err(|payload| panicked("the scalefront ROI session panicked", payload))??;
        Ok(RoiSession { inner: Arc::new(inner) })
    }

    /// The comparison with `overrides` ([{section, side, field, value}]): at typical values (the tornado when
    /// `tornado`) and the Monte Carlo, as `roi_compare` and `roi_monte_carlo` return them.
    fn reprice(
        &self,
        py: Python<'_>,
        overrides: &Bound<'_, PyAny>,
        tornado: bool,
    ) -> Result<(TypicalReport, McReport)> {
        let overrides: Vec<Override> = no_panic(|| extract(overrides, "list[Override]"))?;
        let inner = self.inner.clone();
        let outcome = py.detach(|| catch_unwind(AssertUnwindSafe(|| inner.reprice(&overrides, tornado))));
        Ok(outcome.map_err(|payload| panicked("the scalefront ROI what-if panicked", payload))??)
    }

    /// The comparison `problem` under `uncertainty` (dicts as `roi_compare` takes them): the kept one with other
    /// prices, economics, options or price ranges, from the kept speeds (the tornado when `tornado`), as
    /// `roi_compare` and `roi_monte_carlo` would return it; None when the kept speeds cannot serve it (another
    /// design, fabric figure, timing input, seed or sample count: compare afresh).
    fn reprice_as(
        &self,
        py: Python<'_>,
        problem: &Bound<'_, PyAny>,
        uncertainty: &Bound<'_, PyAny>,
        tornado: bool,
    ) -> Result<Option<(TypicalReport, McReport)>> {
        let (problem, uncertainty) = no_panic(|| self::problem(problem, uncertainty))?;
        let inner = self.inner.clone();
        let outcome = py.detach(|| {
            catch_unwind(AssertUnwindSafe(|| {
                if !inner.reuses(&problem, &uncertainty) {
                    return Ok(None);
                }
                inner.reprice_as(&problem, &uncertainty, &[], tornado).map(Some)
            }))
        });
        Ok(outcome.map_err(|payload| panicked("the scalefront ROI what-if panicked", payload))??)
    }
}
