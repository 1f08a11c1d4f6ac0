//! Evaluating one configuration: the config dict to `scalefront_core::Config` (derived conversion), every metric
//! of the core's schema back by name.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use scalefront_core::metrics::{Kind, METRICS};
use scalefront_core::{Config, Evaluation, TransformerSpec};

use crate::error::{extract, no_panic, Result};

/// A metric's value as Python gets it: int for counts, bool for flags, float otherwise.
pub(crate) fn metric_value<'py>(py: Python<'py>, kind: Kind, value: f64) -> PyResult<Bound<'py, PyAny>> {
    Ok(match kind {
        Kind::Count => (value as i64).into_pyobject(py)?.into_any(),
        Kind::Flag => (value != 0.0).into_pyobject(py)?.to_owned().into_any(),
        Kind::Float | Kind::Text => value.into_pyobject(py)?.into_any(),
    })
}

/// Every metric of an evaluation, by name.
fn evaluation_dict<'py>(py: Python<'py>, e: &Evaluation) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for m in METRICS {
        d.set_item(m.name, metric_value(py, m.kind, (m.value)(e))?)?;
    }
    Ok(d)
}

/// Evaluate one configuration (a dict of SI figures laid out as `scalefront_core::Config`, see
/// scalefront.model) and return its metrics by name. Raises ConfigurationError for an invalid figure or an
/// impossible parallelism.
#[pyfunction]
pub fn evaluate<'py>(py: Python<'py>, config: &Bound<'py, PyAny>) -> Result<Bound<'py, PyDict>> {
    no_panic(|| {
        let cfg: Config = extract(config, "Config")?;
        cfg.validate_figures()?;
        Ok(evaluation_dict(py, &scalefront_core::evaluate(&cfg)?)?)
    })
}

/// Total parameters of a model (a dict laid out as `scalefront_core::TransformerSpec`).
#[pyfunction]
pub fn model_params(model: &Bound<'_, PyAny>) -> Result<f64> {
    no_panic(|| {
        let m: TransformerSpec = extract(model, "TransformerSpec")?;
        m.validate()?;
        Ok(m.params_total())
    })
}
