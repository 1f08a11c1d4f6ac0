//! What the core defines once, for Python to derive its own from: the output schema (inputs and metrics), the
//! input parameters and every named enum, the error categories, the result records' keys and types (for the
//! stubs' TypedDicts), and the embedded catalogs.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use scalefront_core::decision::montecarlo::{
    CountReport, McCount, McReport, McSummary, OutcomeColumns, TornadoBar, TypicalReport,
};
use scalefront_core::decision::roi::{CashFlowYear, Comparison, SideReport, SideSpeed};
use scalefront_core::figures::{figures, FigureDoc};
use scalefront_core::inputs::{columns, ChoiceDoc, EnumDoc, ParamDoc, ScenarioKeyDoc, ENUMS, PARAMS};
use scalefront_core::metrics::{Metric, METRICS, SERVING_METRICS, UNIT_SUFFIXES};
use scalefront_core::network::bom::BomSheet;
use scalefront_core::records::{FieldDoc, Record, RecordDoc};

use crate::error::{no_panic, Result};

include!(concat!(env!("OUT_DIR"), "/data_files.rs"));

/// The output schema: {"inputs": [{name, kind, doc}], "metrics": [{name, unit, kind, group, doc, direction}],
/// "serving_metrics": [the same, of a serving evaluation], "unit_suffixes": {unit: suffix}}, in column order. Everything Python shows or exports is laid out by it.
#[pyfunction]
pub fn schema<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    let inputs = PyList::empty(py);
    for i in columns() {
        let d = PyDict::new(py);
        d.set_item("name", i.name)?;
        d.set_item("kind", i.kind.column_kind().name())?;
        d.set_item("doc", i.doc)?;
        inputs.append(d)?;
    }
    let out = PyDict::new(py);
    out.set_item("inputs", inputs)?;
    out.set_item("metrics", metric_list(py, METRICS)?)?;
    out.set_item("serving_metrics", metric_list(py, SERVING_METRICS)?)?;
    let suffixes = PyDict::new(py);
    for (unit, suffix) in UNIT_SUFFIXES {
        suffixes.set_item(unit, suffix)?;
    }
    out.set_item("unit_suffixes", suffixes)?;
    Ok(out)
}

/// A list of metrics as {name, unit, kind, group, doc, direction} dicts.
fn metric_list<'py, E>(py: Python<'py>, list: &[Metric<E>]) -> PyResult<Bound<'py, PyList>> {
    let metrics = PyList::empty(py);
    for m in list {
        let d = PyDict::new(py);
        d.set_item("name", m.name)?;
        d.set_item("unit", m.unit)?;
        d.set_item("kind", m.kind.name())?;
        d.set_item("group", m.group.name())?;
        d.set_item("doc", m.doc)?;
        d.set_item("direction", m.direction.map(|d| d.name()))?;
        metrics.append(d)?;
    }
    Ok(metrics)
}

/// Every input parameter of one evaluation and of a sweep space, in the order of the result's input columns
/// (`scalefront_core::inputs::PARAMS`).
#[pyfunction]
pub fn parameters() -> Vec<ParamDoc> {
    PARAMS.iter().map(|p| p.describe()).collect()
}

/// Every named enum of the core: its names and docs, in declaration order.
#[pyfunction]
pub fn enums() -> Vec<EnumDoc> {
    ENUMS.iter().map(EnumDoc::of).collect()
}

/// The categories a ConfigurationError can carry, in the engine's fixed order.
#[pyfunction]
pub fn error_categories() -> Vec<&'static str> {
    scalefront_core::error::CATEGORIES.to_vec()
}

/// Every result record the bindings return, each before the records that use it, with its keys and their stub
/// annotations. `python -m scalefront.dev.schema --write` writes them into `_core.pyi` as TypedDicts.
#[pyfunction]
pub fn result_records() -> Vec<RecordDoc> {
    vec![
        FieldDoc::describe(),
        RecordDoc::describe(),
        BomSheet::describe(),
        SideSpeed::describe(),
        SideReport::describe(),
        Comparison::describe(),
        TornadoBar::describe(),
        CashFlowYear::describe(),
        CountReport::describe(),
        TypicalReport::describe(),
        McSummary::describe(),
        OutcomeColumns::describe(),
        McCount::describe(),
        McReport::describe(),
        ChoiceDoc::describe(),
        ScenarioKeyDoc::describe(),
        ParamDoc::describe(),
        EnumDoc::describe(),
        FigureDoc::describe(),
    ]
}

/// Every field of every catalog, section by section in the entries' field order (`scalefront_core::figures`).
#[pyfunction]
pub fn catalog_figures() -> Vec<FigureDoc> {
    figures().map(|f| f.to_doc()).collect()
}

/// The catalog files embedded at build time: {path under data/: text}.
#[pyfunction]
pub fn data_files<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (path, text) in DATA_FILES {
        d.set_item(*path, *text)?;
    }
    Ok(d)
}

/// Panic inside the core on purpose, to test that a panic reaches Python as InternalError.
#[pyfunction]
pub fn _panic_for_test() -> Result<()> {
    no_panic(|| panic!("deliberate test panic"))
}
