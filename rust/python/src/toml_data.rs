//! The built-in catalog files parsed here rather than by Python's tomllib: the same documents (a test holds every
//! embedded file to tomllib's parse, key order included), several times faster, which `scalefront roi` and every
//! other command pay at start-up. User files keep tomllib and its error messages.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use toml::{Table, Value};

/// `text` (a built-in catalog file) as the dict tomllib gives; ValueError for what tomllib would read otherwise
/// (invalid TOML, a date or time: the caller falls back to tomllib).
#[pyfunction]
pub fn parse_builtin_toml<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyDict>> {
    let table: Table = text.parse().map_err(|e: toml::de::Error| PyValueError::new_err(e.to_string()))?;
    table_to_dict(py, &table)
}

fn table_to_dict<'py>(py: Python<'py>, table: &Table) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (key, value) in table {
        dict.set_item(key, value_to_py(py, value)?)?;
    }
    Ok(dict)
}

fn value_to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::String(s) => s.into_pyobject(py)?.into_any(),
        Value::Integer(i) => i.into_pyobject(py)?.into_any(),
        Value::Float(f) => f.into_pyobject(py)?.into_any(),
        Value::Boolean(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(value_to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Table(table) => table_to_dict(py, table)?.into_any(),
        Value::Datetime(_) => return Err(PyValueError::new_err("a date or time: read by tomllib")),
    })
}
