//! ROI bindings: the comparison (designs, candidates, options) and its uncertain inputs from dicts (derived
//! conversions), the typical-value comparison and the tornado as dicts, the Monte Carlo outcomes as numpy columns,
//! progress and cancellation through a handle Python polls. No ROI arithmetic here.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use scalefront_core::cost::montecarlo::{self, McProgress, Outcome, Plan, Uncertainty};
use scalefront_core::cost::roi::{Comparison, Design, Payback, RoiOptions, RoiProblem, Side};
use scalefront_core::sweep::{Choice, SweepSpace};

use crate::{from_core, internal_error, no_panic};

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

#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct DesignRequest {
    side: u32,
    gpus: u32,
    topology: String,
    /// Per workload of the mix, the candidates as choices of that workload's sweep space.
    candidates: Vec<Vec<ChoiceRequest>>,
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

fn choice(c: &ChoiceRequest) -> Choice {
    Choice {
        gpu: c.gpu,
        scale_up: c.scale_up,
        gpus: c.gpus,
        fabric: c.fabric,
        topology: c.topology,
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

fn extract(
    py: Python<'_>,
    problem: &Bound<'_, PyAny>,
    uncertainty: &Bound<'_, PyAny>,
) -> PyResult<(RoiProblem, Uncertainty)> {
    let req: ProblemRequest = problem.extract()?;
    for space in &req.spaces {
        space.validate().map_err(|e| from_core(py, e))?;
    }
    let mut designs = Vec::with_capacity(req.designs.len());
    for d in req.designs {
        if d.candidates.len() != req.spaces.len() {
            return Err(pyo3::exceptions::PyValueError::new_err("one candidate list per workload space"));
        }
        let candidates = d
            .candidates
            .iter()
            .zip(&req.spaces)
            .map(|(cands, space)| cands.iter().map(|c| space.config(&choice(c))).collect())
            .collect();
        designs.push(Design { side: d.side, gpus: d.gpus, topology: d.topology, candidates });
    }
    let problem = RoiProblem { shares: req.shares, designs, options: req.options };
    Ok((problem, uncertainty.extract()?))
}

fn side_dict<'py>(py: Python<'py>, side: &Side, k: f64) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("chosen", side.speed.chosen.clone())?;
    d.set_item("tokens_per_s", side.speed.tokens_per_s.clone())?;
    d.set_item("days", side.speed.days.clone())?;
    d.set_item("goodput", side.speed.goodput.clone())?;
    d.set_item("rent_usd", side.speed.rent_usd.clone())?;
    let c = &side.cost.cost;
    d.set_item("server_capex_usd", c.server_capex_usd)?;
    d.set_item("network_capex_usd", c.network_capex_usd)?;
    d.set_item("fabric_capex_usd", c.fabric_capex_usd)?;
    d.set_item("it_power_w", c.it_power_w)?;
    let breakdown = PyDict::new(py);
    for (name, usd) in side.cost.breakdown(k) {
        breakdown.set_item(name, usd)?;
    }
    d.set_item("breakdown_usd", breakdown)?;
    Ok(d)
}

fn comparison_dict<'py>(py: Python<'py>, c: &Comparison) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in [
        ("speed_ratio", c.speed_ratio),
        ("premium_scale", c.premium_scale),
        ("tco_a_usd", c.tco_a_usd),
        ("tco_b_usd", c.tco_b_usd),
        ("capex_a_usd", c.capex_a_usd),
        ("capex_b_usd", c.capex_b_usd),
        ("opex_a_usd_per_year", c.opex_a_usd_per_year),
        ("opex_b_usd_per_year", c.opex_b_usd_per_year),
        ("fabric_a_usd", c.fabric_a_usd),
        ("fabric_b_usd", c.fabric_b_usd),
        ("premium", c.premium),
        ("break_even_premium", c.break_even_premium),
        ("savings_usd", c.savings_usd),
        ("value_usd_per_gpu_hour", c.value_usd_per_gpu_hour),
        ("npv_usd", c.npv_usd),
        ("speed_value_usd", c.speed_value_usd),
        ("payback_months", c.payback_months),
        ("life_months", c.life_months),
        ("usd_per_useful_gpu_hour_a", c.usd_per_useful_gpu_hour_a),
        ("usd_per_useful_gpu_hour_b", c.usd_per_useful_gpu_hour_b),
    ] {
        d.set_item(k, v)?;
    }
    d.set_item("gpus", c.gpus)?;
    d.set_item("payback", c.payback.name())?;
    d.set_item("usd_per_mtoken_a", c.usd_per_mtoken_a.clone())?;
    d.set_item("usd_per_mtoken_b", c.usd_per_mtoken_b.clone())?;
    Ok(d)
}

/// The typical-value comparison per GPU count (designs chosen, both sides, cost breakdowns) and the tornado.
pub(crate) fn compare<'py>(
    py: Python<'py>,
    problem: &Bound<'py, PyAny>,
    uncertainty: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyDict>> {
    let (problem, uncertainty) = no_panic(py, || extract(py, problem, uncertainty))?;
    type Row = (String, String, Comparison, [Side; 2], Vec<montecarlo::TornadoBar>);
    let outcome = py.detach(|| {
        catch_unwind(AssertUnwindSafe(|| -> Result<Vec<Row>, scalefront_core::ConfigError> {
            let plan = Plan::new(&problem, &uncertainty.inputs)?;
            let mut rows = Vec::new();
            for count in &plan.counts {
                let sides = plan.sides(count, plan.typical_values())?;
                let cmp = plan.compare(count, plan.typical_values())?;
                let bars = montecarlo::tornado(&plan, count)?;
                let (a, b) = (&problem.designs[count.a].topology, &problem.designs[count.b].topology);
                rows.push((a.clone(), b.clone(), cmp, sides, bars));
            }
            Ok(rows)
        }))
    });
    let rows = outcome
        .map_err(|payload| internal_error(py, "the scalefront ROI comparison panicked", payload))?
        .map_err(|e| from_core(py, e))?;
    let out = PyList::empty(py);
    for (topo_a, topo_b, cmp, sides, bars) in rows {
        let d = comparison_dict(py, &cmp)?;
        d.set_item("topology_a", topo_a)?;
        d.set_item("topology_b", topo_b)?;
        d.set_item("a", side_dict(py, &sides[0], cmp.premium_scale)?)?;
        d.set_item("b", side_dict(py, &sides[1], 1.0)?)?;
        let tornado = PyList::empty(py);
        for bar in bars {
            let t = PyDict::new(py);
            t.set_item("input", bar.input)?;
            for (k, v) in [
                ("low", bar.low),
                ("typical", bar.typical),
                ("high", bar.high),
                ("savings_low_usd", bar.savings_low_usd),
                ("savings_high_usd", bar.savings_high_usd),
                ("break_even_low", bar.break_even_low),
                ("break_even_high", bar.break_even_high),
                ("flip", bar.flip),
            ] {
                t.set_item(k, v)?;
            }
            tornado.append(t)?;
        }
        d.set_item("tornado", tornado)?;
        out.append(d)?;
    }
    let result = PyDict::new(py);
    result.set_item("counts", out)?;
    Ok(result)
}

fn outcome_columns<'py>(py: Python<'py>, outcomes: &[Outcome]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let col = |f: fn(&Outcome) -> f64| outcomes.iter().map(f).collect::<Vec<f64>>();
    d.set_item("premium", col(|o| o.premium).into_pyarray(py))?;
    d.set_item("break_even_premium", col(|o| o.break_even_premium).into_pyarray(py))?;
    d.set_item("savings_usd", col(|o| o.savings_usd).into_pyarray(py))?;
    d.set_item("npv_usd", col(|o| o.npv_usd).into_pyarray(py))?;
    d.set_item("payback_months", col(|o| o.payback_months).into_pyarray(py))?;
    d.set_item("speed_ratio", col(|o| o.speed_ratio).into_pyarray(py))?;
    let kinds: Vec<u32> =
        outcomes.iter().map(|o| Payback::ALL.iter().position(|p| *p == o.payback).unwrap_or(0) as u32).collect();
    d.set_item("payback", kinds.into_pyarray(py))?;
    Ok(d)
}

fn summary_dict<'py>(py: Python<'py>, s: &montecarlo::McSummary) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("gpus", s.gpus)?;
    d.set_item("samples", s.samples)?;
    d.set_item("p_a_cheaper", s.p_a_cheaper)?;
    d.set_item("p_payback_within_life", s.p_payback_within_life)?;
    for (k, v) in [
        ("premium", s.premium),
        ("break_even_premium", s.break_even_premium),
        ("savings_usd", s.savings_usd),
        ("npv_usd", s.npv_usd),
        ("payback_months", s.payback_months),
        ("speed_ratio", s.speed_ratio),
    ] {
        d.set_item(k, v.to_vec())?;
    }
    Ok(d)
}

/// Samples `first .. first + samples` of the Monte Carlo (GIL released): per count, the outcomes as columns
/// (`payback` as the index of `Payback::ALL`) and their summary.
pub(crate) fn monte_carlo<'py>(
    py: Python<'py>,
    problem: &Bound<'py, PyAny>,
    uncertainty: &Bound<'py, PyAny>,
    handle: &RoiHandle,
    first: u64,
    samples: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let (problem, uncertainty) = no_panic(py, || extract(py, problem, uncertainty))?;
    let progress = handle.progress.clone();
    let outcome = py.detach(|| {
        catch_unwind(AssertUnwindSafe(|| {
            let plan = Plan::new(&problem, &uncertainty.inputs)?;
            let gpus: Vec<u32> = plan.counts.iter().map(|c| c.gpus).collect();
            montecarlo::run(&plan, uncertainty.seed, first, samples, &progress).map(|r| (gpus, r))
        }))
    });
    let (gpus, result) = outcome
        .map_err(|payload| internal_error(py, "the scalefront Monte Carlo panicked", payload))?
        .map_err(|e| from_core(py, e))?;
    let counts = PyList::empty(py);
    for ((g, outcomes), summary) in gpus.iter().zip(&result.outcomes).zip(&result.summaries) {
        let d = PyDict::new(py);
        d.set_item("gpus", g)?;
        d.set_item("outcomes", outcome_columns(py, outcomes)?)?;
        d.set_item("summary", summary_dict(py, summary)?)?;
        counts.append(d)?;
    }
    let out = PyDict::new(py);
    out.set_item("counts", counts)?;
    out.set_item("cancelled", result.cancelled)?;
    out.set_item("payback_kinds", Payback::ALL.iter().map(|p| p.name()).collect::<Vec<_>>())?;
    Ok(out)
}

/// Outcomes as `monte_carlo` returns them (columns), one count.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub(crate) struct OutcomeColumns {
    premium: Vec<f64>,
    break_even_premium: Vec<f64>,
    savings_usd: Vec<f64>,
    npv_usd: Vec<f64>,
    payback_months: Vec<f64>,
    speed_ratio: Vec<f64>,
    payback: Vec<u32>,
}

/// The summary of merged outcome columns (shards of one run joined in sample order).
pub(crate) fn summarise<'py>(py: Python<'py>, gpus: u32, columns: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
    no_panic(py, || {
        let c: OutcomeColumns = columns.extract()?;
        let outcomes: Vec<Outcome> = (0..c.premium.len())
            .map(|i| Outcome {
                premium: c.premium[i],
                break_even_premium: c.break_even_premium[i],
                savings_usd: c.savings_usd[i],
                npv_usd: c.npv_usd[i],
                payback: Payback::ALL[c.payback[i] as usize % Payback::ALL.len()],
                payback_months: c.payback_months[i],
                speed_ratio: c.speed_ratio[i],
            })
            .collect();
        summary_dict(py, &montecarlo::summarise(gpus, &outcomes))
    })
}
