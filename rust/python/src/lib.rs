//! `scalefront._core`: the PyO3 face of scalefront-core. The engine's types are read from the dicts the Python
//! layer builds by derived conversions (the core's `python` feature); results go back as dicts and numpy columns
//! laid out by the core's schema (`scalefront_core::metrics`). A `ConfigError` becomes
//! `scalefront.errors.ConfigurationError`; a panic becomes `scalefront.errors.InternalError` with its message,
//! never bad input. No model logic here.

use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use scalefront_core as core;
use scalefront_core::metrics::{Kind, INPUTS, METRICS};
use std::panic::{catch_unwind, AssertUnwindSafe};

mod roi;
mod sweep;

include!(concat!(env!("OUT_DIR"), "/data_files.rs"));

/// An instance of `scalefront.errors.<class>(message)`.
fn python_error(py: Python<'_>, class: &str, message: String) -> PyErr {
    match py.import("scalefront.errors").and_then(|m| m.getattr(class)).and_then(|c| c.call1((message,))) {
        Ok(err) => PyErr::from_value(err),
        Err(e) => e,
    }
}

/// The one mapping of the engine's error to Python: ConfigurationError(message, category, field).
pub(crate) fn from_core(py: Python<'_>, e: core::ConfigError) -> PyErr {
    match py
        .import("scalefront.errors")
        .and_then(|m| m.getattr("ConfigurationError"))
        .and_then(|c| c.call1((e.to_string(), e.category(), e.field())))
    {
        Ok(err) => PyErr::from_value(err),
        Err(err) => err,
    }
}

/// The message of a panic payload.
fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// An internal error (a bug, not bad input) carrying a panic's message.
pub(crate) fn internal_error(py: Python<'_>, what: &str, payload: Box<dyn std::any::Any + Send>) -> PyErr {
    python_error(py, "InternalError", format!("{what}: {}", panic_message(payload)))
}

/// Run `f`, turning a panic into `InternalError` instead of letting it reach Python.
pub(crate) fn no_panic<'py, T>(py: Python<'py>, f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f))
        .unwrap_or_else(|payload| Err(internal_error(py, "the scalefront core panicked", payload)))
}

/// A metric's value as Python gets it: int for counts, bool for flags, float otherwise.
fn metric_value<'py>(py: Python<'py>, kind: Kind, value: f64) -> PyResult<Bound<'py, PyAny>> {
    Ok(match kind {
        Kind::Count => (value as i64).into_pyobject(py)?.into_any(),
        Kind::Flag => (value != 0.0).into_pyobject(py)?.to_owned().into_any(),
        Kind::Float | Kind::Text => value.into_pyobject(py)?.into_any(),
    })
}

/// Every metric of an evaluation, by name.
pub(crate) fn evaluation_dict<'py>(py: Python<'py>, e: &core::Evaluation) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for m in METRICS {
        d.set_item(m.name, metric_value(py, m.kind, (m.value)(e))?)?;
    }
    Ok(d)
}

/// A request for collective times, as `scalefront.validation` sends it.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct CollectiveRequest {
    scale_up: core::ScaleUpSpec,
    fabric: core::FabricSpec,
    topology: core::TopologySpec,
    gpus: u32,
    server_gpus: u32,
    op: core::network::collectives::Collective,
    sizes_bytes: Vec<f64>,
}

/// A bill-of-materials request, as `scalefront.network.bom` sends it.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct BomRequest {
    gpu: core::GpuSpec,
    scale_up: core::ScaleUpSpec,
    fabric: core::FabricSpec,
    topology: core::TopologySpec,
    prices: core::Prices,
    gpus: u32,
}

#[pymodule]
mod _core {
    use super::*;

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("__version__", env!("CARGO_PKG_VERSION"))
    }

    /// The output schema: {"inputs": [{name, kind, doc}], "metrics": [{name, unit, kind, group, doc}]}, in
    /// column order. Everything Python shows or exports is laid out by it.
    #[pyfunction]
    fn schema<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let inputs = PyList::empty(py);
        for i in INPUTS {
            let d = PyDict::new(py);
            d.set_item("name", i.name)?;
            d.set_item("kind", i.kind.name())?;
            d.set_item("doc", i.doc)?;
            inputs.append(d)?;
        }
        let metrics = PyList::empty(py);
        for m in METRICS {
            let d = PyDict::new(py);
            d.set_item("name", m.name)?;
            d.set_item("unit", m.unit)?;
            d.set_item("kind", m.kind.name())?;
            d.set_item("group", m.group.name())?;
            d.set_item("doc", m.doc)?;
            metrics.append(d)?;
        }
        let out = PyDict::new(py);
        out.set_item("inputs", inputs)?;
        out.set_item("metrics", metrics)?;
        Ok(out)
    }

    /// The categories a ConfigurationError can carry, in the engine's fixed order.
    #[pyfunction]
    fn error_categories() -> Vec<&'static str> {
        core::error::CATEGORIES.to_vec()
    }

    /// Evaluate one configuration (a dict of SI figures laid out as `scalefront_core::Config`, see
    /// scalefront.model) and return its metrics by name. Raises ConfigurationError for an invalid figure or an
    /// impossible parallelism.
    #[pyfunction]
    fn evaluate<'py>(py: Python<'py>, config: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
        no_panic(py, || {
            let cfg: core::Config = config.extract()?;
            cfg.validate_figures().map_err(|e| from_core(py, e))?;
            let e = core::evaluate(&cfg).map_err(|e| from_core(py, e))?;
            evaluation_dict(py, &e)
        })
    }

    /// Total parameters of a model (a dict laid out as `scalefront_core::TransformerSpec`).
    #[pyfunction]
    fn model_params(py: Python<'_>, model: &Bound<'_, PyAny>) -> PyResult<f64> {
        no_panic(py, || {
            let m: core::TransformerSpec = model.extract()?;
            m.validate().map_err(|e| from_core(py, e))?;
            Ok(m.params_total())
        })
    }

    #[pymodule_export]
    use super::sweep::SweepHandle;

    /// Configurations in a sweep space (a dict laid out as `scalefront_core::sweep::SweepSpace`), counted without
    /// evaluating any.
    #[pyfunction]
    fn space_size(py: Python<'_>, space: &Bound<'_, PyAny>) -> PyResult<u64> {
        no_panic(py, || Ok(core::sweep::space_size(&super::sweep::space(py, space)?)))
    }

    /// Configurations of every cell (cluster design) of a space, in cell-index order, counted exactly.
    #[pyfunction]
    fn cell_sizes<'py>(py: Python<'py>, space: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray1<u64>>> {
        no_panic(py, || Ok(core::sweep::cell_sizes(&super::sweep::space(py, space)?).into_pyarray(py)))
    }

    /// Estimated cost of every cell, in the work units the sweep handle's `work()` counts.
    #[pyfunction]
    fn cell_costs<'py>(py: Python<'py>, space: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray1<u64>>> {
        no_panic(py, || Ok(core::sweep::cell_costs(&super::sweep::space(py, space)?).into_pyarray(py)))
    }

    /// Split cells with these costs into `shards` contiguous (start, stop) ranges of about equal cost.
    #[pyfunction]
    fn shard_ranges(py: Python<'_>, costs: Vec<u64>, shards: usize) -> PyResult<Vec<(usize, usize)>> {
        no_panic(py, || Ok(core::sweep::shard_ranges(&costs, shards).into_iter().map(|r| (r.start, r.end)).collect()))
    }

    /// Run a sweep (blocking, GIL released); progress, cancellation and streamed rows go through `handle`.
    /// `cells` (ascending cell indices) restricts it to a shard; `threads` runs it on a pool of that many threads
    /// (default: the global pool, all cores).
    #[pyfunction]
    #[pyo3(signature = (space, handle, stream_rows=false, cells=None, threads=None))]
    fn run_sweep<'py>(
        py: Python<'py>,
        space: &Bound<'py, PyAny>,
        handle: &Bound<'py, SweepHandle>,
        stream_rows: bool,
        cells: Option<Vec<u32>>,
        threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyDict>> {
        super::sweep::run_sweep(py, space, handle.get(), stream_rows, cells, threads)
    }

    /// Times (s) of one collective over `gpus` consecutive ranks, `server_gpus` per server, for each message size
    /// (the whole array, as nccl-tests counts it). For validating the collective model against nccl-tests.
    #[pyfunction]
    fn collective_times(py: Python<'_>, request: &Bound<'_, PyAny>) -> PyResult<Vec<f64>> {
        use scalefront_core::network::collectives::Interconnect;
        use scalefront_core::network::placement::GroupPlacement;
        use scalefront_core::network::topology::Network;
        no_panic(py, || {
            let r: CollectiveRequest = request.extract()?;
            for check in [r.scale_up.validate(), r.fabric.validate(), r.topology.validate()] {
                check.map_err(|e| from_core(py, e))?;
            }
            let (gpus, server_gpus) = (r.gpus.max(1), r.server_gpus.max(1));
            let network = Network::new(&r.fabric, &r.topology, gpus, server_gpus);
            let links = Interconnect { scale_up: &r.scale_up, fabric: &r.fabric, network: &network };
            let group = GroupPlacement::new(gpus, 1, r.scale_up.domain_gpus);
            Ok(r.sizes_bytes.iter().map(|&s| links.collective_time_s(r.op, s, &group)).collect())
        })
    }

    /// The network's bill of materials for `gpus` GPUs: parts by tier (modules, copper, fibre), NVLink switch
    /// trays, the capex lines of a quote, yearly support and licences, and power.
    #[pyfunction]
    fn network_bom<'py>(py: Python<'py>, request: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
        no_panic(py, || {
            let r: BomRequest = request.extract()?;
            let b =
                core::network::bom::bill_of_materials(r.gpus, &r.gpu, &r.scale_up, &r.fabric, &r.topology, &r.prices)
                    .map_err(|e| from_core(py, e))?;
            let d = PyDict::new(py);
            let p = &b.parts;
            d.set_item("gpus", r.gpus)?;
            d.set_item("tiers", b.tiers)?;
            d.set_item("switches_by_tier", p.switches_by_tier.iter().map(|&n| n as i64).collect::<Vec<_>>())?;
            for (key, value) in [
                ("nics", p.nics),
                ("switches_total", p.switches),
                ("nvlink_switch_trays", b.nvlink_switch_trays),
                ("cables", p.cables),
                ("host_links", p.host_links),
                ("switch_links", p.switch_links),
                ("copper_links", p.copper_links),
                ("dac_cables", p.dac_cables),
                ("fibres", p.fibres),
                ("transceivers", p.transceivers),
                ("nic_optics", p.nic_optics),
                ("switch_optics", p.switch_optics),
                ("optical_port_ends", p.optical_port_ends),
                ("racks", b.racks),
            ] {
                d.set_item(key, value as i64)?;
            }
            let c = &b.capex;
            for (key, value) in [
                ("nics_usd", c.nics),
                ("switches_usd", c.switches),
                ("optics_usd", c.optics),
                ("copper_usd", c.copper),
                ("fibre_usd", c.fibre),
                ("nvlink_trays_usd", c.nvlink_trays),
                ("network_capex_usd", b.network_capex_usd),
                ("spares_usd", b.spares_usd),
                ("installation_usd", b.installation_usd),
                ("oob_usd", b.oob_usd),
                ("support_usd_per_year", b.support_usd_per_year),
                ("licences_usd_per_year", b.licences_usd_per_year),
                ("network_power_w", b.network_power_w),
            ] {
                d.set_item(key, value)?;
            }
            Ok(d)
        })
    }

    #[pymodule_export]
    use super::roi::RoiHandle;

    /// Compare two fabrics (a dict laid out as `scalefront_core::cost::roi::RoiProblem`, and its uncertain inputs as
    /// `montecarlo::Uncertainty`) at typical values, per GPU count, with the tornado of every uncertain input.
    #[pyfunction]
    fn roi_compare<'py>(
        py: Python<'py>,
        problem: &Bound<'py, PyAny>,
        uncertainty: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        super::roi::compare(py, problem, uncertainty)
    }

    /// Samples `first .. first + samples` of the comparison's Monte Carlo (blocking, GIL released; progress and
    /// cancellation through `handle`).
    #[pyfunction]
    fn roi_monte_carlo<'py>(
        py: Python<'py>,
        problem: &Bound<'py, PyAny>,
        uncertainty: &Bound<'py, PyAny>,
        handle: &Bound<'py, RoiHandle>,
        first: u64,
        samples: u64,
    ) -> PyResult<Bound<'py, PyDict>> {
        super::roi::monte_carlo(py, problem, uncertainty, handle.get(), first, samples)
    }

    /// The summary (P(A cheaper), P10/P50/P90) of one count's Monte Carlo outcome columns.
    #[pyfunction]
    fn roi_summarise<'py>(py: Python<'py>, gpus: u32, columns: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
        super::roi::summarise(py, gpus, columns)
    }

    /// The catalog files embedded at build time: {path under data/: text}.
    #[pyfunction]
    fn data_files<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (path, text) in DATA_FILES {
            d.set_item(*path, *text)?;
        }
        Ok(d)
    }

    /// Panic inside the core on purpose, to test that a panic reaches Python as InternalError.
    #[pyfunction]
    fn _panic_for_test(py: Python<'_>) -> PyResult<()> {
        no_panic(py, || panic!("deliberate test panic"))
    }
}
