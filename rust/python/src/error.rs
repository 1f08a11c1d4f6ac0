//! The one mapping of errors to Python, as polars-python's error.rs does it: every fallible step of a binding
//! returns `Result<T>` (`?` turns the core's `ConfigError` and PyO3's `PyErr` into a `BindingsError`), and
//! `From<BindingsError> for PyErr` raises the `scalefront.errors` class the caller expects:
//!
//! - the core's `ConfigError` (bad input): `ConfigurationError(message, category, field)`;
//! - a request dict the core's types cannot be read from, a breach of the contract between the Python layer and
//!   the bindings: `InternalError("bindings contract: Config.fabric.mtu_bytes is missing")`, naming the field;
//! - a panic inside the core: `InternalError` with the panic's message (a bug, never bad input);
//! - a bad argument the caller can fix (sweep cells, threads): `UsageError`;
//! - any other Python error as it is.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use scalefront_core::ConfigError;

/// Why a binding failed.
#[derive(Debug)]
pub enum BindingsError {
    Config(ConfigError),
    /// The field path and what is wrong with it.
    Contract(String),
    Internal(String),
    Usage(String),
    Python(PyErr),
}

pub type Result<T> = std::result::Result<T, BindingsError>;

impl From<ConfigError> for BindingsError {
    fn from(e: ConfigError) -> Self {
        BindingsError::Config(e)
    }
}

impl From<PyErr> for BindingsError {
    fn from(e: PyErr) -> Self {
        BindingsError::Python(e)
    }
}

impl From<BindingsError> for PyErr {
    fn from(e: BindingsError) -> PyErr {
        Python::attach(|py| match e {
            BindingsError::Config(e) => {
                scalefront_error(py, "ConfigurationError", (e.to_string(), e.category(), e.field()))
            }
            BindingsError::Contract(m) => scalefront_error(py, "InternalError", (format!("bindings contract: {m}"),)),
            BindingsError::Internal(m) => scalefront_error(py, "InternalError", (m,)),
            BindingsError::Usage(m) => scalefront_error(py, "UsageError", (m,)),
            BindingsError::Python(e) => e,
        })
    }
}

/// An instance of `scalefront.errors.<class>(*args)`.
fn scalefront_error<'py>(py: Python<'py>, class: &str, args: impl pyo3::call::PyCallArgs<'py>) -> PyErr {
    match py.import("scalefront.errors").and_then(|m| m.getattr(class)).and_then(|c| c.call1(args)) {
        Ok(err) => PyErr::from_value(err),
        Err(e) => e,
    }
}

/// Read a request dict as the core's `T` (named `what` in messages), or a contract error naming the field that
/// could not be read. PyO3 reports a nested failure as a chain: "failed to extract field Config.fabric" caused by
/// "failed to extract field FabricSpec.mtu_bytes" caused by the error itself (a KeyError for a missing key).
pub fn extract<'py, T>(obj: &Bound<'py, PyAny>, what: &str) -> Result<T>
where
    T: for<'a> FromPyObject<'a, 'py, Error = PyErr>,
{
    obj.extract::<T>().map_err(|err| contract(obj.py(), err, what))
}

fn contract(py: Python<'_>, err: PyErr, what: &str) -> BindingsError {
    let mut path = what.to_string();
    let mut problem = String::new();
    let mut next = Some(err);
    while let Some(e) = next {
        let message = e.value(py).to_string();
        if let Some(field) = message.strip_prefix("failed to extract field ") {
            path.push('.');
            path.push_str(field.rsplit_once('.').map_or(field, |(_, name)| name));
        } else if e.is_instance_of::<PyKeyError>(py) {
            path.push('.');
            path.push_str(message.trim_matches(['\'', '"']));
            problem = "is missing".into();
        } else {
            problem = format!(": {message}");
        }
        next = e.cause(py);
    }
    let sep = if problem.starts_with(':') { "" } else { " " };
    BindingsError::Contract(format!("{path}{sep}{problem}"))
}

/// The message of a panic payload.
fn panic_message(payload: Box<dyn Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// A panic caught while `what` ran, as an internal error carrying its message.
pub fn panicked(what: &str, payload: Box<dyn Any + Send>) -> BindingsError {
    BindingsError::Internal(format!("{what}: {}", panic_message(payload)))
}

/// Run `f`, turning a panic into an internal error instead of letting it reach Python.
pub fn no_panic<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| Err(panicked("the scalefront core panicked", payload)))
}
