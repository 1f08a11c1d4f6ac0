//! Sweep bindings: the space dict to `SweepSpace`, a handle Python polls for progress (atomics, no callbacks
//! from worker threads) and cancels through, and results as numpy columns that own the Rust vectors.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use numpy::IntoPyArray;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use scalefront_core::sweep::{
    run, Axis, Choice, CostMode, DegreeAxis, Economics, FabricOption, GpuOption, Objective, Progress, RowChunk,
    SweepSpace, REASONS,
};
use scalefront_core::Evaluation;

use crate::{
    config_error, fabric_spec, gpu_spec, model, overlap_spec, reliability_spec, scale_up_spec, topology_spec,
    ScalefrontError, Section, PRECISION, RECOMPUTE,
};

/// Progress and cancellation of one sweep, shared between the thread running it and the one watching it.
#[pyclass(frozen, module = "scalefront._core")]
pub struct SweepHandle {
    progress: Arc<Progress>,
    rows: Mutex<Option<Receiver<RowChunk>>>,
}

#[pymethods]
impl SweepHandle {
    #[new]
    fn new() -> Self {
        SweepHandle { progress: Arc::new(Progress::default()), rows: Mutex::new(None) }
    }
    /// Configurations evaluated or rejected so far.
    fn done(&self) -> u64 {
        self.progress.done.load(Ordering::Relaxed)
    }
    /// Feasible configurations found so far.
    fn feasible(&self) -> u64 {
        self.progress.feasible.load(Ordering::Relaxed)
    }
    /// Configurations rejected so far, by reason (only reasons seen so far).
    fn rejected<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (name, counter) in REASONS.iter().zip(&self.progress.rejected) {
            let n = counter.load(Ordering::Relaxed);
            if n > 0 {
                d.set_item(*name, n)?;
            }
        }
        Ok(d)
    }
    /// Ask the sweep to stop; it returns within a task (milliseconds) with `cancelled` set.
    fn cancel(&self) {
        self.progress.cancel.store(true, Ordering::Relaxed);
    }
    fn cancelled(&self) -> bool {
        self.progress.cancel.load(Ordering::Relaxed)
    }
    /// The next chunk of streamed feasible rows as numpy columns, waiting up to `timeout_s` (GIL released);
    /// None when nothing came in time, or when the sweep is over and every chunk was taken.
    fn next_rows<'py>(&self, py: Python<'py>, timeout_s: f64) -> PyResult<Option<Bound<'py, PyDict>>> {
        let chunk = py.detach(|| {
            let guard = self.rows.lock().unwrap_or_else(|p| p.into_inner());
            match guard.as_ref() {
                None => None,
                // Nothing in time, or the sweep is over and every chunk was taken.
                Some(rx) => rx.recv_timeout(Duration::from_secs_f64(timeout_s.max(0.0))).ok(),
            }
        });
        chunk.map(|c| columns(py, &c.choices, &c.evaluations, None)).transpose()
    }
}

fn degree_axis(s: &Section, key: &str) -> PyResult<DegreeAxis> {
    let item = s.item(key)?;
    if let Ok(d) = item.cast::<PyDict>() {
        let sec = Section { dict: d.clone(), path: format!("{}.{key}", s.path) };
        return Ok(DegreeAxis::Search { max: sec.u32("search")? });
    }
    Ok(DegreeAxis::List(s.typed_list(key, "a list of positive integers")?))
}

fn names<T: Copy>(s: &Section, key: &str, options: &[(&str, T)]) -> PyResult<Vec<T>> {
    let values: Vec<String> = s.typed_list(key, "a list of names")?;
    values
        .iter()
        .map(|v| {
            options.iter().find(|(n, _)| n == v).map(|(_, t)| *t).ok_or_else(|| {
                let known: Vec<_> = options.iter().map(|(n, _)| *n).collect();
                config_error(
                    format!("{}.{key}: {v:?} is not one of {}", s.path, known.join(", ")),
                    "unknown_choice",
                    Some(key),
                )
            })
        })
        .collect()
}

const OBJECTIVES: [(&str, Objective); 6] = [
    ("time_to_train_days", Objective::TimeToTrain),
    ("cost_to_train_usd", Objective::CostToTrain),
    ("mfu", Objective::Mfu),
    ("usd_per_million_tokens", Objective::UsdPerMillionTokens),
    ("energy_mwh", Objective::Energy),
    ("network_capex_usd", Objective::NetworkCapex),
];

const AXES: [(&str, Axis); 17] = [
    ("gpu", Axis::Gpu),
    ("scale_up", Axis::ScaleUp),
    ("gpus", Axis::Gpus),
    ("fabric", Axis::Fabric),
    ("topology", Axis::Topology),
    ("precision", Axis::Precision),
    ("tp", Axis::Tp),
    ("pp", Axis::Pp),
    ("dp", Axis::Dp),
    ("cp", Axis::Cp),
    ("ep", Axis::Ep),
    ("vpp", Axis::Vpp),
    ("micro_batch", Axis::MicroBatch),
    ("sequence_parallel", Axis::SequenceParallel),
    ("recompute", Axis::Recompute),
    ("zero", Axis::Zero),
    ("overlap", Axis::Overlap),
];

/// Read and check a space dict.
pub(crate) fn space(d: &Bound<'_, PyDict>) -> PyResult<SweepSpace> {
    let root = Section { dict: d.clone(), path: "space".into() };
    let econ = root.section("economics")?;
    let space = SweepSpace {
        model: model(&root.section("model")?)?,
        global_batch: root.u32("global_batch")?,
        seq_len: root.u32("seq_len")?,
        tokens: root.f64("tokens")?,
        flash_attention: root.bool("flash_attention")?,
        gpus: root
            .sections("gpus")?
            .iter()
            .map(|g| {
                Ok(GpuOption {
                    spec: gpu_spec(&g.section("spec")?)?,
                    rent_usd_per_gpu_hour: g.f64("rent_usd_per_gpu_hour")?,
                    server_usd: g.f64("server_usd")?,
                    scale_ups: g.typed_list("scale_ups", "a list of indices")?,
                })
            })
            .collect::<PyResult<_>>()?,
        scale_ups: root.sections("scale_ups")?.iter().map(scale_up_spec).collect::<PyResult<_>>()?,
        scale_up_trays: root
            .sections("scale_up_trays")?
            .iter()
            .map(|t| Ok((t.f64("switch_tray_usd")?, t.f64("switch_tray_w")?)))
            .collect::<PyResult<_>>()?,
        reliability: reliability_spec(&root.section("reliability")?)?,
        gpu_counts: root.typed_list("gpu_counts", "a list of positive integers")?,
        fabrics: root
            .sections("fabrics")?
            .iter()
            .map(|f| {
                Ok(FabricOption {
                    spec: fabric_spec(&f.section("spec")?)?,
                    nic_usd: f.f64("nic_usd")?,
                    switch_usd: f.f64("switch_usd")?,
                    transceiver_usd: f.f64("transceiver_usd")?,
                    cable_usd: f.f64("cable_usd")?,
                    nic_w: f.f64("nic_w")?,
                    switch_w: f.f64("switch_w")?,
                    transceiver_w: f.f64("transceiver_w")?,
                })
            })
            .collect::<PyResult<_>>()?,
        topologies: root.sections("topologies")?.iter().map(topology_spec).collect::<PyResult<_>>()?,
        precisions: names(&root, "precisions", &PRECISION)?,
        tp: degree_axis(&root, "tp")?,
        pp: degree_axis(&root, "pp")?,
        cp: degree_axis(&root, "cp")?,
        dp: degree_axis(&root, "dp")?,
        ep: degree_axis(&root, "ep")?,
        vpp: root.typed_list("vpp", "a list of positive integers")?,
        micro_batch: root.typed_list("micro_batch", "a list of positive integers")?,
        sequence_parallel: root.typed_list("sequence_parallel", "a list of true/false")?,
        recompute: names(&root, "recompute", &RECOMPUTE)?,
        zero: root.typed_list("zero", "a list of ZeRO stages")?,
        overlap: root.sections("overlap")?.iter().map(overlap_spec).collect::<PyResult<_>>()?,
        economics: Economics {
            amortization_years: econ.f64("amortization_years")?,
            pue: econ.f64("pue")?,
            usd_per_kwh: econ.f64("usd_per_kwh")?,
            gpu_power_fraction: econ.f64("gpu_power_fraction")?,
        },
        cost_mode: root.choice("cost_mode", &[("rent", CostMode::Rent), ("own", CostMode::Own)])?,
        objectives: names(&root, "objectives", &OBJECTIVES)?,
        group_by: names(&root, "group_by", &AXES)?,
    };
    space.validate().map_err(crate::from_core)?;
    Ok(space)
}

/// Columns of configurations: each axis (an index into the space's list, or the degree itself for tp, pp,
/// dp, cp, ep) as uint32, each metric as float64, `objectives` when given. Every column is a numpy array that
/// owns its Rust vector.
fn columns<'py>(
    py: Python<'py>,
    choices: &[Choice],
    evals: &[Evaluation],
    objectives: Option<&[[f64; 3]]>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, axis) in AXES {
        let v: Vec<u32> = choices.iter().map(|c| c.axis(axis)).collect();
        d.set_item(name, v.into_pyarray(py))?;
    }
    for (name, f) in crate::METRICS {
        let v: Vec<f64> = evals.iter().map(f).collect();
        d.set_item(name, v.into_pyarray(py))?;
    }
    if let Some(objs) = objectives {
        for i in 0..3 {
            let v: Vec<f64> = objs.iter().map(|o| o[i]).collect();
            d.set_item(format!("objective_{i}"), v.into_pyarray(py))?;
        }
    }
    Ok(d)
}

pub(crate) fn run_sweep<'py>(
    py: Python<'py>,
    space_dict: &Bound<'py, PyDict>,
    handle: &SweepHandle,
    stream_rows: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let space = space(space_dict)?;
    let (tx, rx) = if stream_rows {
        let (tx, rx) = sync_channel::<RowChunk>(4);
        (Some(tx), Some(rx))
    } else {
        (None, None)
    };
    *handle.rows.lock().unwrap_or_else(|p| p.into_inner()) = rx;
    let progress = handle.progress.clone();
    let outcome = py.detach(move || {
        let result = catch_unwind(AssertUnwindSafe(|| run(&space, &progress, tx.as_ref())));
        drop(tx); // closes the stream: the reader sees the end once the buffered chunks are taken
        result
    });
    let result = outcome.map_err(|_| ScalefrontError::new_err("internal error in the scalefront sweep"))?;
    let choices: Vec<Choice> = result.kept.iter().map(|k| k.choice).collect();
    let evals: Vec<Evaluation> = result.kept.iter().map(|k| k.evaluation.clone()).collect();
    let objectives: Vec<[f64; 3]> = result.kept.iter().map(|k| k.objectives).collect();
    let out = PyDict::new(py);
    out.set_item("frontier", columns(py, &choices, &evals, Some(&objectives))?)?;
    out.set_item("evaluated", result.evaluated)?;
    out.set_item("feasible", result.feasible)?;
    let rejected = PyDict::new(py);
    for (name, count) in REASONS.iter().zip(result.rejected) {
        rejected.set_item(*name, count)?;
    }
    out.set_item("rejected", rejected)?;
    out.set_item("cancelled", result.cancelled)?;
    Ok(out)
}
