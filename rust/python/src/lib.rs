//! `scalefront._core`: the PyO3 face of scalefront-core, one module per concept (`evaluate`, `network`, `roi`,
//! `sweep`, and `schema` for what the core defines once), one error mapping (`error`). The engine's types are read
//! from the dicts the Python layer builds and its results go back as dicts, both by derived conversions (the
//! core's `python` feature: `FromPyObject` on its specs, `record!` on its results), and as numpy columns laid out by
//! the core's schema (`scalefront_core::metrics`). No model logic here; this file only registers.

mod error;
mod evaluate;
mod network;
mod roi;
mod schema;
mod serve;
mod sweep;
mod toml_data;

#[pyo3::pymodule]
mod _core {
    use pyo3::prelude::*;

    #[pymodule_export]
    use super::evaluate::{evaluate, model_params};
    #[pymodule_export]
    use super::network::{collective_times, fabric_topology_problem, network_bom};
    #[pymodule_export]
    use super::roi::{roi_analyse, roi_compare, roi_monte_carlo, roi_summarise, RoiHandle, RoiSession};
    #[pymodule_export]
    use super::schema::{
        _panic_for_test, catalog_figures, data_files, enums, error_categories, parameters, result_records, schema,
    };
    #[pymodule_export]
    use super::serve::{serve, serve_axes, serve_sweep};
    #[pymodule_export]
    use super::sweep::{cell_costs, cell_sizes, run_sweep, shard_ranges, space_size, SweepHandle};
    #[pymodule_export]
    use super::toml_data::parse_builtin_toml;

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("__version__", env!("CARGO_PKG_VERSION"))?;
        // The kernel classes of the compute model, for `scalefront measure`'s fit (defined once in the core).
        m.add("SMALL_GEMM_FLOPS", scalefront_core::step::compute::SMALL_GEMM_FLOPS)?;
        m.add("ATTENTION_HEADS", scalefront_core::hardware::ATTENTION_HEADS.to_vec())?;
        m.add("ATTENTION_SEQS", scalefront_core::hardware::ATTENTION_SEQS.to_vec())
    }
}
