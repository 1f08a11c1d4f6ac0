//! Sweep bindings: the space dict to `SweepSpace` (derived conversion), a handle Python polls for progress
//! (atomics, no callbacks from worker threads) and cancels through, and results as numpy columns that own the
//! Rust vectors, one per input axis and per metric of the core's schema.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use scalefront_core::metrics::{Kind, METRICS};
use scalefront_core::sweep::{
    self as core_sweep, cluster_cells, run_cells, Axis, Choice, Progress, RowChunk, SweepSpace, REASONS,
};
use scalefront_core::Evaluation;

use crate::error::{extract, no_panic, panicked, BindingsError, Result};

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
        self.progress.cancel();
    }
    /// Hold the workers at their next task boundary until `resume()` (or `cancel()`). For UIs and for tests that
    /// must act while a sweep is running, gated on events rather than on timing.
    fn pause(&self) {
        self.progress.pause();
    }
    fn resume(&self) {
        self.progress.resume();
    }
    fn paused(&self) -> bool {
        self.progress.is_paused()
    }
    /// Workers currently held by `pause()`: once this is > 0, the sweep is running and waiting on you.
    fn held(&self) -> u64 {
        self.progress.held()
    }
    /// Estimated work done so far, in the units of `cell_costs` (for ETAs: most configurations cost nothing).
    fn work(&self) -> u64 {
        self.progress.work.load(Ordering::Relaxed)
    }
    /// The run's whole estimated work in the same units, once the engine has planned it (None before).
    fn work_total(&self) -> Option<u64> {
        self.progress.work_total()
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

/// Read and check a space dict.
fn space(d: &Bound<'_, PyAny>) -> Result<SweepSpace> {
    let space: SweepSpace = extract(d, "SweepSpace")?;
    space.validate()?;
    Ok(space)
}

/// Configurations in a sweep space (a dict laid out as `scalefront_core::sweep::SweepSpace`), counted without
/// evaluating any.
#[pyfunction]
pub fn space_size(py: Python<'_>, space: &Bound<'_, PyAny>) -> Result<u64> {
    let space = no_panic(|| self::space(space))?;
    py.detach(|| no_panic(|| Ok(core_sweep::space_size(&space))))
}

/// Configurations of every cell (cluster design) of a space, in cell-index order, counted exactly.
#[pyfunction]
pub fn cell_sizes<'py>(py: Python<'py>, space: &Bound<'py, PyAny>) -> Result<Bound<'py, PyArray1<u64>>> {
    let space = no_panic(|| self::space(space))?;
    Ok(py.detach(|| no_panic(|| Ok(core_sweep::cell_sizes(&space))))?.into_pyarray(py))
}

/// Estimated cost of every cell, in the work units the sweep handle's `work()` counts.
#[pyfunction]
pub fn cell_costs<'py>(py: Python<'py>, space: &Bound<'py, PyAny>) -> Result<Bound<'py, PyArray1<u64>>> {
    let space = no_panic(|| self::space(space))?;
    Ok(py.detach(|| no_panic(|| Ok(core_sweep::cell_costs(&space))))?.into_pyarray(py))
}

/// Split cells with these costs into `shards` contiguous (start, stop) ranges of about equal cost.
#[pyfunction]
pub fn shard_ranges(costs: Vec<u64>, shards: usize) -> Result<Vec<(usize, usize)>> {
    no_panic(|| Ok(core_sweep::shard_ranges(&costs, shards).into_iter().map(|r| (r.start, r.end)).collect()))
}

/// Columns of configurations: each axis (an index into the space's list, or the degree itself for tp, pp,
/// dp, cp, ep) as uint32, each metric of the schema as float64 / int64 / bool by its kind, `objective_<i>` when
/// given. Every column is a numpy array that owns its Rust vector.
fn columns<'py>(
    py: Python<'py>,
    choices: &[Choice],
    evals: &[Evaluation],
    objectives: Option<&[[f64; 3]]>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for &axis in Axis::ALL {
        let v: Vec<u32> = choices.iter().map(|c| c.axis(axis)).collect();
        d.set_item(axis.name(), v.into_pyarray(py))?;
    }
    for m in METRICS {
        let values = evals.iter().map(|e| (m.value)(e));
        match m.kind {
            Kind::Count => d.set_item(m.name, values.map(|v| v as i64).collect::<Vec<_>>().into_pyarray(py))?,
            Kind::Flag => d.set_item(m.name, values.map(|v| v != 0.0).collect::<Vec<_>>().into_pyarray(py))?,
            Kind::Float | Kind::Text => d.set_item(m.name, values.collect::<Vec<_>>().into_pyarray(py))?,
        }
    }
    if let Some(objs) = objectives {
        for i in 0..3 {
            let v: Vec<f64> = objs.iter().map(|o| o[i]).collect();
            d.set_item(format!("objective_{i}"), v.into_pyarray(py))?;
        }
    }
    Ok(d)
}

/// The cells to sweep: all of them, or the given ones after checking they are ascending cell indices.
fn selected_cells(space: &SweepSpace, cells: Option<Vec<u32>>) -> Result<Vec<u32>> {
    let n = cluster_cells(space).len() as u32;
    match cells {
        None => Ok((0..n).collect()),
        Some(c) if c.windows(2).all(|w| w[0] < w[1]) && c.last().is_none_or(|&l| l < n) => Ok(c),
        Some(_) => Err(BindingsError::Usage(format!("cells must be ascending cell indices below {n}"))),
    }
}

/// A pool of `threads` threads, or None for the global pool (all cores).
fn pool(threads: Option<usize>) -> Result<Option<rayon::ThreadPool>> {
    threads
        .map(|n| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(n.max(1))
                .build()
                .map_err(|e| BindingsError::Usage(format!("cannot start {n} sweep threads: {e}")))
        })
        .transpose()
}

/// Run a sweep (blocking, GIL released); progress, cancellation and streamed rows go through `handle`.
/// `cells` (ascending cell indices) restricts it to a shard; `threads` runs it on a pool of that many threads
/// (default: the global pool, all cores).
#[pyfunction]
#[pyo3(signature = (space, handle, stream_rows=false, cells=None, threads=None))]
pub fn run_sweep<'py>(
    py: Python<'py>,
    space: &Bound<'py, PyAny>,
    handle: &Bound<'py, SweepHandle>,
    stream_rows: bool,
    cells: Option<Vec<u32>>,
    threads: Option<usize>,
) -> Result<Bound<'py, PyDict>> {
    let handle = handle.get();
    let space = no_panic(|| self::space(space))?;
    let cells = selected_cells(&space, cells)?;
    let pool = pool(threads)?;
    let (tx, rx) = if stream_rows {
        let (tx, rx) = sync_channel::<RowChunk>(4);
        (Some(tx), Some(rx))
    } else {
        (None, None)
    };
    *handle.rows.lock().unwrap_or_else(|p| p.into_inner()) = rx;
    let progress = handle.progress.clone();
    let outcome = py.detach(move || {
        let sweep = || run_cells(&space, &cells, &progress, tx.as_ref());
        let result = catch_unwind(AssertUnwindSafe(|| match &pool {
            Some(p) => p.install(sweep),
            None => sweep(),
        }));
        drop(tx); // closes the stream: the reader sees the end once the buffered chunks are taken
        result
    });
    let result = outcome.map_err(|payload| panicked("the scalefront sweep panicked", payload))?;
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
