//! Serving: one configuration's metrics (`scalefront_core::serve`), every metric of the core's serving schema back
//! by name; and a serving sweep's frontier.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use scalefront_core::metrics::{serving_metric, Direction, Metric, SERVING_METRICS};
use scalefront_core::serve::sweep::{sweep, Objective, ServingSpace, Slo, AXES};
use scalefront_core::serve::{Serving, ServingCluster, ServingConfig, ServingEvaluation};

use crate::error::{extract, no_panic, panicked, BindingsError, Result};
use crate::evaluate::metric_value;

/// Every serving metric of an evaluation, by name.
pub(crate) fn serving_dict<'py>(py: Python<'py>, e: &ServingEvaluation) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for m in SERVING_METRICS {
        d.set_item(m.name, metric_value(py, m.kind, (m.value)(e))?)?;
    }
    Ok(d)
}

/// Evaluate one serving configuration (a dict of SI figures laid out as `scalefront_core::serve::ServingConfig`)
/// and return its metrics by name. Raises ConfigurationError for an invalid figure or an impossible layout.
#[pyfunction]
pub fn serve<'py>(py: Python<'py>, config: &Bound<'py, PyAny>) -> Result<Bound<'py, PyDict>> {
    no_panic(|| {
        let cfg: ServingConfig = extract(config, "ServingConfig")?;
        cfg.validate_figures()?;
        Ok(serving_dict(py, &scalefront_core::serve::serve(&cfg)?)?)
    })
}

/// A list of one axis's values (`extract`ed as `T`), named in a contract error.
fn axis<'py, T>(axes: &Bound<'py, PyDict>, name: &str, out: &mut Vec<T>) -> Result<()>
where
    T: for<'a> FromPyObject<'a, 'py, Error = PyErr>,
{
    if let Some(v) = axes.get_item(name)? {
        *out = extract(&v, &format!("serving axis {name}"))?;
    }
    Ok(())
}

/// The space: the config's serving spec with each axis of `axes` (name -> list of values) swept.
fn space(base: Serving, axes: &Bound<'_, PyDict>) -> Result<ServingSpace> {
    for key in axes.keys() {
        let name: String = key.extract()?;
        if !AXES.contains(&name.as_str()) {
            return Err(BindingsError::Usage(format!("{name}: not a serving axis (axes: {})", AXES.join(", "))));
        }
    }
    let mut s = ServingSpace::of(base);
    axis(axes, "tp", &mut s.tp)?;
    axis(axes, "pp", &mut s.pp)?;
    axis(axes, "ep", &mut s.ep)?;
    axis(axes, "dp_attention", &mut s.dp_attention)?;
    axis(axes, "mode", &mut s.mode)?;
    axis(axes, "prefill_instances", &mut s.prefill_instances)?;
    axis(axes, "decode_instances", &mut s.decode_instances)?;
    axis(axes, "batch", &mut s.batch)?;
    axis(axes, "max_num_tokens", &mut s.max_num_tokens)?;
    axis(axes, "quantization", &mut s.quantization)?;
    axis(axes, "kv_cache_dtype", &mut s.kv_cache_dtype)?;
    Ok(s)
}

fn metric(name: &str) -> Result<&'static Metric<ServingEvaluation>> {
    serving_metric(name).ok_or_else(|| BindingsError::Usage(format!("{name}: not a serving metric")))
}

/// Sweep the layouts of one cluster design: the config's serving spec with `axes` swept (name -> values; the
/// names are `scalefront_core::serve::sweep::AXES`), each layout evaluated, the Pareto frontier of `objectives`
/// (serving metric names, each minimised or maximised by its direction) among those meeting every SLO (metric,
/// "<=" or ">=", limit). Returns {"points": [{axis values..., metric values...}], "index": [...], "size",
/// "evaluated", "rejected", "over_slo"}. Blocking, GIL released, on all cores.
#[pyfunction]
pub fn serve_sweep<'py>(
    py: Python<'py>,
    config: &Bound<'py, PyAny>,
    axes: &Bound<'py, PyDict>,
    objectives: Vec<String>,
    slos: Vec<(String, String, f64)>,
) -> Result<Bound<'py, PyDict>> {
    let (cfg, space, objectives, slos) = no_panic(|| {
        let cfg: ServingConfig = extract(config, "ServingConfig")?;
        cfg.validate_figures()?;
        let space = space(cfg.serving.clone(), axes)?;
        Ok((cfg, space, objectives_of(&objectives)?, slos_of(&slos)?))
    })?;
    let outcome = py.detach(|| {
        catch_unwind(AssertUnwindSafe(|| {
            let cluster = ServingCluster::new(&cfg)?;
            Ok::<_, scalefront_core::ConfigError>(sweep(&cluster, &space, &objectives, &slos))
        }))
    });
    let frontier = outcome.map_err(|payload| panicked("the scalefront serving sweep panicked", payload))??;
    let points = PyList::empty(py);
    let index = PyList::empty(py);
    for (i, _, e) in &frontier.points {
        let layout = space.layout(*i);
        let d = serving_dict(py, e)?;
        let values = layout_values(py, &layout)?;
        values.update(d.as_mapping())?;
        points.append(values)?;
        index.append(*i)?;
    }
    let out = PyDict::new(py);
    out.set_item("points", points)?;
    out.set_item("index", index)?;
    out.set_item("size", space.size())?;
    out.set_item("evaluated", frontier.evaluated)?;
    out.set_item("rejected", frontier.rejected)?;
    out.set_item("over_slo", frontier.over_slo)?;
    Ok(out)
}

/// The serving sweep's objectives (one to three serving metric names), each minimised or maximised by its
/// direction.
fn objectives_of(names: &[String]) -> Result<Vec<Objective>> {
    if names.is_empty() || names.len() > 3 {
        return Err(BindingsError::Usage("a serving sweep takes one to three objectives".into()));
    }
    names
        .iter()
        .map(|n| {
            let m = metric(n)?;
            let maximise = m.direction == Some(Direction::Maximise);
            Ok(Objective { value: m.value, maximise })
        })
        .collect()
}

/// The SLOs, (metric, "<=" or ">=", limit) each.
fn slos_of(slos: &[(String, String, f64)]) -> Result<Vec<Slo>> {
    slos.iter()
        .map(|(n, op, limit)| {
            let upper = match op.as_str() {
                "<=" => true,
                ">=" => false,
                _ => return Err(BindingsError::Usage(format!("{n}{op}{limit}: an SLO is <= or >="))),
            };
            Ok(Slo { value: metric(n)?.value, limit: *limit, upper })
        })
        .collect()
}

/// A layout's swept values, by axis name.
fn layout_values<'py>(py: Python<'py>, s: &Serving) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("tp", s.tp)?;
    d.set_item("pp", s.pp)?;
    d.set_item("ep", s.ep)?;
    d.set_item("dp_attention", s.dp_attention)?;
    d.set_item("mode", s.mode)?;
    d.set_item("prefill_instances", s.prefill_instances)?;
    d.set_item("decode_instances", s.decode_instances)?;
    d.set_item("batch", s.batch)?;
    d.set_item("max_num_tokens", s.max_num_tokens)?;
    d.set_item("quantization", s.quantization)?;
    d.set_item("kv_cache_dtype", s.kv_cache_dtype)?;
    Ok(d)
}

/// The names of a serving sweep's axes, in the order a layout's index decodes them.
#[pyfunction]
pub fn serve_axes() -> Vec<&'static str> {
    AXES.to_vec()
}
