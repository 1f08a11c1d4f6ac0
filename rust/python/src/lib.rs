//! `scalefront._core`: the PyO3 face of scalefront-core. It converts Python dicts to the engine's types and
//! back, maps `ConfigError` to Python exceptions and keeps panics from crossing into Python. No model logic.

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use scalefront_core as core;
use std::panic::{catch_unwind, AssertUnwindSafe};

mod sweep;

include!(concat!(env!("OUT_DIR"), "/data_files.rs"));

pyo3::create_exception!(_core, ScalefrontError, PyException, "Base class of every scalefront error.");
pyo3::create_exception!(
    _core,
    ConfigurationError,
    ScalefrontError,
    "A configuration the model cannot evaluate: args = (message, category, field or None)."
);

pub(crate) fn config_error(message: impl Into<String>, category: &str, field: Option<&str>) -> PyErr {
    ConfigurationError::new_err((message.into(), category.to_string(), field.map(str::to_string)))
}

/// The one mapping of the engine's error to Python: ConfigurationError(message, category, field).
pub(crate) fn from_core(e: core::ConfigError) -> PyErr {
    let field = match &e {
        core::ConfigError::InvalidFigure { field, .. } | core::ConfigError::ZeroDegree { field } => Some(*field),
        _ => None,
    };
    config_error(e.to_string(), e.category(), field)
}

/// One section of the configuration dict, read field by field with errors naming the path.
pub(crate) struct Section<'py> {
    dict: Bound<'py, PyDict>,
    path: String,
}

impl<'py> Section<'py> {
    fn item(&self, key: &str) -> PyResult<Bound<'py, PyAny>> {
        self.dict
            .get_item(key)?
            .ok_or_else(|| config_error(format!("{}.{key}: missing", self.path), "missing_field", Some(key)))
    }
    fn typed<T>(&self, key: &str, kind: &str) -> PyResult<T>
    where
        T: for<'a> FromPyObject<'a, 'py>,
    {
        self.item(key)?
            .extract::<T>()
            .map_err(|_| config_error(format!("{}.{key}: expected {kind}", self.path), "wrong_type", Some(key)))
    }
    fn f64(&self, key: &str) -> PyResult<f64> {
        self.typed(key, "a number")
    }
    fn u32(&self, key: &str) -> PyResult<u32> {
        self.typed(key, "a non-negative integer")
    }
    fn bool(&self, key: &str) -> PyResult<bool> {
        self.typed(key, "true or false")
    }
    fn string(&self, key: &str) -> PyResult<String> {
        self.typed(key, "a string")
    }
    fn section(&self, key: &str) -> PyResult<Section<'py>> {
        let dict = self
            .item(key)?
            .cast_into::<PyDict>()
            .map_err(|_| config_error(format!("{}.{key}: expected a table", self.path), "wrong_type", Some(key)))?;
        Ok(Section { dict, path: format!("{}.{key}", self.path) })
    }
    /// The items of a list field.
    fn list(&self, key: &str) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let item = self.item(key)?;
        let list = item
            .cast_into::<pyo3::types::PyList>()
            .map_err(|_| config_error(format!("{}.{key}: expected a list", self.path), "wrong_type", Some(key)))?;
        Ok(list.iter().collect())
    }
    /// A list of tables, each read as a section.
    fn sections(&self, key: &str) -> PyResult<Vec<Section<'py>>> {
        self.list(key)?
            .into_iter()
            .enumerate()
            .map(|(i, v)| {
                let dict = v.cast_into::<PyDict>().map_err(|_| {
                    config_error(format!("{}.{key}[{i}]: expected a table", self.path), "wrong_type", Some(key))
                })?;
                Ok(Section { dict, path: format!("{}.{key}[{i}]", self.path) })
            })
            .collect()
    }
    fn typed_list<T>(&self, key: &str, kind: &str) -> PyResult<Vec<T>>
    where
        T: for<'a> FromPyObject<'a, 'py>,
    {
        self.list(key)?
            .into_iter()
            .enumerate()
            .map(|(i, v)| {
                v.extract::<T>().map_err(|_| {
                    config_error(format!("{}.{key}[{i}]: expected {kind}", self.path), "wrong_type", Some(key))
                })
            })
            .collect()
    }
    fn has(&self, key: &str) -> PyResult<bool> {
        Ok(self.dict.get_item(key)?.is_some_and(|v| !v.is_none()))
    }
    fn choice<T: Copy>(&self, key: &str, options: &[(&str, T)]) -> PyResult<T> {
        let value = self.string(key)?;
        options.iter().find(|(name, _)| *name == value).map(|(_, v)| *v).ok_or_else(|| {
            let names: Vec<_> = options.iter().map(|(n, _)| *n).collect();
            config_error(
                format!("{}.{key}: {value:?} is not one of {}", self.path, names.join(", ")),
                "unknown_choice",
                Some(key),
            )
        })
    }
}

pub(crate) fn model(s: &Section) -> PyResult<core::TransformerSpec> {
    let moe = if s.has("moe")? {
        let m = s.section("moe")?;
        Some(core::MoeSpec {
            experts: m.u32("experts")?,
            top_k: m.u32("top_k")?,
            ffn_hidden: m.u32("ffn_hidden")?,
            shared_experts: m.u32("shared_experts")?,
            first_dense_layers: m.u32("first_dense_layers")?,
        })
    } else {
        None
    };
    Ok(core::TransformerSpec {
        layers: s.u32("layers")?,
        hidden: s.u32("hidden")?,
        heads: s.u32("heads")?,
        kv_heads: s.u32("kv_heads")?,
        head_dim: s.u32("head_dim")?,
        ffn_hidden: s.u32("ffn_hidden")?,
        gated_mlp: s.bool("gated_mlp")?,
        vocab: s.u32("vocab")?,
        tied_embeddings: s.bool("tied_embeddings")?,
        moe,
    })
}

pub(crate) fn gpu_spec(gpu: &Section) -> PyResult<core::GpuSpec> {
    Ok(core::GpuSpec {
        peak_bf16_flops: gpu.f64("peak_bf16_flops")?,
        peak_fp8_flops: gpu.f64("peak_fp8_flops")?,
        hbm_bytes: gpu.f64("hbm_bytes")?,
        hbm_bytes_per_s: gpu.f64("hbm_bytes_per_s")?,
        tdp_w: gpu.f64("tdp_w")?,
        gemm_efficiency: gpu.f64("gemm_efficiency")?,
        gemm_efficiency_fp8: gpu.f64("gemm_efficiency_fp8")?,
        attention_efficiency: gpu.f64("attention_efficiency")?,
        hbm_efficiency: gpu.f64("hbm_efficiency")?,
        sustained_efficiency: gpu.f64("sustained_efficiency")?,
        runtime_reserve_bytes: gpu.f64("runtime_reserve_bytes")?,
        server_gpus: gpu.u32("server_gpus")?,
        host_power_w: gpu.f64("host_power_w")?,
    })
}

pub(crate) fn scale_up_spec(su: &Section) -> PyResult<core::ScaleUpSpec> {
    Ok(core::ScaleUpSpec {
        bytes_per_s: su.f64("bytes_per_s")?,
        domain_gpus: su.u32("domain_gpus")?,
        step_latency_s: su.f64("step_latency_s")?,
        ring_efficiency: su.f64("ring_efficiency")?,
        in_switch_allreduce_efficiency: su.f64("in_switch_allreduce_efficiency")?,
        switch_trays_per_domain: su.f64("switch_trays_per_domain")?,
    })
}

pub(crate) fn fabric_spec(fab: &Section) -> PyResult<core::FabricSpec> {
    Ok(core::FabricSpec {
        link_bytes_per_s: fab.f64("link_bytes_per_s")?,
        links_per_gpu: fab.u32("links_per_gpu")?,
        efficiency: fab.f64("efficiency")?,
        congestion_efficiency: fab.f64("congestion_efficiency")?,
        nic_latency_s: fab.f64("nic_latency_s")?,
        switch_hop_latency_s: fab.f64("switch_hop_latency_s")?,
        switch_radix: fab.u32("switch_radix")?,
        in_network_reduction_efficiency: fab.f64("in_network_reduction_efficiency")?,
    })
}

pub(crate) fn topology_spec(topo: &Section) -> PyResult<core::TopologySpec> {
    Ok(core::TopologySpec {
        kind: topo.choice(
            "kind",
            &[
                ("fat-tree", core::TopologyKind::FatTree),
                ("rail-fat-tree", core::TopologyKind::RailFatTree),
                ("dragonfly", core::TopologyKind::Dragonfly),
                ("torus-3d", core::TopologyKind::Torus3d),
            ],
        )?,
        oversubscription: topo.f64("oversubscription")?,
        rail_group_nodes: topo.u32("rail_group_nodes")?,
    })
}

pub(crate) const RECOMPUTE: [(&str, core::Recompute); 3] =
    [("none", core::Recompute::None), ("selective", core::Recompute::Selective), ("full", core::Recompute::Full)];
pub(crate) const PRECISION: [(&str, core::Precision); 2] =
    [("bf16", core::Precision::Bf16), ("fp8", core::Precision::Fp8)];

/// Prices of one GPU type, fabric and scale-up domain with the economic assumptions (catalog units already SI).
pub(crate) fn price_spec(pr: &Section) -> PyResult<core::PriceSpec> {
    Ok(core::PriceSpec {
        rent_usd_per_gpu_hour: pr.f64("rent_usd_per_gpu_hour")?,
        server_usd: pr.f64("server_usd")?,
        nic_usd: pr.f64("nic_usd")?,
        switch_usd: pr.f64("switch_usd")?,
        transceiver_usd: pr.f64("transceiver_usd")?,
        cable_usd: pr.f64("cable_usd")?,
        nic_w: pr.f64("nic_w")?,
        switch_w: pr.f64("switch_w")?,
        transceiver_w: pr.f64("transceiver_w")?,
        switch_tray_usd: pr.f64("switch_tray_usd")?,
        switch_tray_w: pr.f64("switch_tray_w")?,
        amortization_years: pr.f64("amortization_years")?,
        pue: pr.f64("pue")?,
        usd_per_kwh: pr.f64("usd_per_kwh")?,
        gpu_power_fraction: pr.f64("gpu_power_fraction")?,
    })
}

pub(crate) fn reliability_spec(r: &Section) -> PyResult<core::ReliabilitySpec> {
    Ok(core::ReliabilitySpec {
        gpu_failures_per_hour: r.f64("gpu_failures_per_hour")?,
        server_failures_per_hour: r.f64("server_failures_per_hour")?,
        nic_failures_per_hour: r.f64("nic_failures_per_hour")?,
        switch_failures_per_hour: r.f64("switch_failures_per_hour")?,
        link_failures_per_hour: r.f64("link_failures_per_hour")?,
        checkpoint_bytes_per_s: r.f64("checkpoint_bytes_per_s")?,
        checkpoint_bytes_per_param: r.f64("checkpoint_bytes_per_param")?,
        restart_s: r.f64("restart_s")?,
    })
}

pub(crate) fn overlap_spec(ov: &Section) -> PyResult<core::Overlap> {
    Ok(core::Overlap { dp: ov.f64("dp")?, tp: ov.f64("tp")?, pp: ov.f64("pp")?, ep: ov.f64("ep")? })
}

fn config(d: &Bound<'_, PyDict>) -> PyResult<core::Config> {
    let root = Section { dict: d.clone(), path: "config".into() };
    let pr = root.section("prices")?;
    let par = root.section("parallelism")?;
    let tr = root.section("training")?;
    Ok(core::Config {
        model: model(&root.section("model")?)?,
        gpu: gpu_spec(&root.section("gpu")?)?,
        scale_up: scale_up_spec(&root.section("scale_up")?)?,
        fabric: fabric_spec(&root.section("fabric")?)?,
        topology: topology_spec(&root.section("topology")?)?,
        prices: price_spec(&pr)?,
        gpus: root.u32("gpus")?,
        parallelism: core::Parallelism {
            tp: par.u32("tp")?,
            pp: par.u32("pp")?,
            dp: par.u32("dp")?,
            cp: par.u32("cp")?,
            ep: par.u32("ep")?,
            vpp: par.u32("vpp")?,
            micro_batch: par.u32("micro_batch")?,
            zero_stage: par.u32("zero_stage")?,
            recompute: par.choice("recompute", &RECOMPUTE)?,
            sequence_parallel: par.bool("sequence_parallel")?,
        },
        training: core::Training {
            global_batch: tr.u32("global_batch")?,
            seq_len: tr.u32("seq_len")?,
            tokens: tr.f64("tokens")?,
            precision: tr.choice("precision", &PRECISION)?,
            flash_attention: tr.bool("flash_attention")?,
        },
        overlap: overlap_spec(&root.section("overlap")?)?,
        reliability: reliability_spec(&root.section("reliability")?)?,
    })
}

/// Every scalar output of an evaluation, by its Python name: the one mapping that `evaluate` (a dict) and sweeps
/// (numpy columns) both use.
pub(crate) type Metric = (&'static str, fn(&core::Evaluation) -> f64);
pub(crate) const METRICS: [Metric; 45] = [
    ("step_time_s", |e| e.step_time_s),
    ("tokens_per_s", |e| e.tokens_per_s),
    ("mfu", |e| e.mfu),
    ("hfu", |e| e.hfu),
    ("tflops_per_gpu", |e| e.tflops_per_gpu),
    ("scaling_efficiency", |e| e.scaling_efficiency),
    ("compute_s", |e| e.breakdown.compute_s),
    ("recompute_s", |e| e.breakdown.recompute_s),
    ("tp_comm_s", |e| e.breakdown.tp_comm_s),
    ("pp_comm_s", |e| e.breakdown.pp_comm_s),
    ("dp_comm_s", |e| e.breakdown.dp_comm_s),
    ("cp_comm_s", |e| e.breakdown.cp_comm_s),
    ("ep_comm_s", |e| e.breakdown.ep_comm_s),
    ("bubble_s", |e| e.breakdown.bubble_s),
    ("optimizer_s", |e| e.breakdown.optimizer_s),
    ("tp_comm_hidden_s", |e| e.hidden.tp_comm_s),
    ("pp_comm_hidden_s", |e| e.hidden.pp_comm_s),
    ("dp_comm_hidden_s", |e| e.hidden.dp_comm_s),
    ("cp_comm_hidden_s", |e| e.hidden.cp_comm_s),
    ("ep_comm_hidden_s", |e| e.hidden.ep_comm_s),
    ("weights_bytes", |e| e.memory.weights_bytes),
    ("gradients_bytes", |e| e.memory.gradients_bytes),
    ("optimizer_bytes", |e| e.memory.optimizer_bytes),
    ("activations_bytes", |e| e.memory.activations_bytes),
    ("reserve_bytes", |e| e.memory.reserve_bytes),
    ("memory_per_gpu_bytes", |e| e.memory.total_bytes),
    ("hbm_bytes", |e| e.memory.hbm_bytes),
    ("memory_margin_bytes", |e| e.memory.margin_bytes),
    ("micro_batches", |e| e.micro_batches as f64),
    ("params_total", |e| e.params_total),
    ("params_active", |e| e.params_active),
    ("model_flops_per_token", |e| e.model_flops_per_token),
    ("steps", |e| e.steps),
    ("time_to_train_s", |e| e.time_to_train_s),
    ("energy_j", |e| e.energy_j),
    ("cost_rent_usd", |e| e.cost_rent_usd),
    ("cost_own_usd", |e| e.cost_own_usd),
    ("capex_usd", |e| e.capex_usd),
    ("network_capex_usd", |e| e.network_capex_usd),
    ("it_power_w", |e| e.it_power_w),
    ("network_tiers", |e| e.network_tiers as f64),
    ("network_switches", |e| e.network_switches),
    ("interruptions_per_day", |e| e.interruptions_per_day),
    ("checkpoint_interval_s", |e| e.checkpoint_interval_s),
    ("goodput", |e| e.goodput),
];

pub(crate) fn evaluation_dict<'py>(py: Python<'py>, e: &core::Evaluation) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, f) in METRICS {
        d.set_item(name, f(e))?;
    }
    d.set_item("feasible", e.feasible)?;
    d.set_item("micro_batches", e.micro_batches)?;
    d.set_item("network_tiers", e.network_tiers)?;
    Ok(d)
}

/// Run `f`, turning a panic into a ScalefrontError instead of letting it reach Python.
pub(crate) fn no_panic<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        Err(ScalefrontError::new_err(format!("internal error in the scalefront core: {what}")))
    })
}

#[pymodule]
mod _core {
    use super::*;

    #[pymodule_export]
    use super::ConfigurationError;
    #[pymodule_export]
    use super::ScalefrontError;

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("__version__", env!("CARGO_PKG_VERSION"))
    }

    /// Evaluate one configuration (a dict of SI figures, see scalefront.model) and return a dict of results.
    /// Raises ConfigurationError for an invalid figure or an impossible parallelism.
    #[pyfunction]
    fn evaluate<'py>(py: Python<'py>, config: &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyDict>> {
        no_panic(|| {
            let cfg = super::config(config)?;
            cfg.validate_figures().map_err(from_core)?;
            let e = core::evaluate(&cfg).map_err(from_core)?;
            evaluation_dict(py, &e)
        })
    }

    #[pymodule_export]
    use super::sweep::SweepHandle;

    /// Configurations in a sweep space (a dict, see scalefront.sweep), counted without evaluating any.
    #[pyfunction]
    fn space_size(space: &Bound<'_, PyDict>) -> PyResult<u64> {
        no_panic(|| Ok(scalefront_core::sweep::space_size(&super::sweep::space(space)?)))
    }

    /// Run a sweep (blocking, GIL released); progress, cancellation and streamed rows go through `handle`.
    #[pyfunction]
    #[pyo3(signature = (space, handle, stream_rows=false))]
    fn run_sweep<'py>(
        py: Python<'py>,
        space: &Bound<'py, PyDict>,
        handle: &Bound<'py, SweepHandle>,
        stream_rows: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        super::sweep::run_sweep(py, space, handle.get(), stream_rows)
    }

    /// Times (s) of one collective over `gpus` consecutive ranks, `server_gpus` per server, for each message size
    /// (the whole array, as nccl-tests counts it). For validating the collective model against nccl-tests.
    #[pyfunction]
    fn collective_times(spec: &Bound<'_, PyDict>) -> PyResult<Vec<f64>> {
        use scalefront_core::collectives::{Collective, Interconnect};
        use scalefront_core::parallelism::GroupPlacement;
        use scalefront_core::topology::Network;
        no_panic(|| {
            let root = Section { dict: spec.clone(), path: "collective".into() };
            let scale_up = scale_up_spec(&root.section("scale_up")?)?;
            let fabric = fabric_spec(&root.section("fabric")?)?;
            let topology = topology_spec(&root.section("topology")?)?;
            scale_up.validate().map_err(from_core)?;
            fabric.validate().map_err(from_core)?;
            topology.validate().map_err(from_core)?;
            let gpus = root.u32("gpus")?.max(1);
            let server_gpus = root.u32("server_gpus")?.max(1);
            let op = root.choice(
                "op",
                &[
                    ("all_reduce", Collective::AllReduce),
                    ("reduce_scatter", Collective::ReduceScatter),
                    ("all_gather", Collective::AllGather),
                ],
            )?;
            let sizes: Vec<f64> = root.typed_list("sizes_bytes", "a list of sizes in bytes")?;
            let network = Network::new(&fabric, &topology, gpus, server_gpus);
            let links = Interconnect { scale_up: &scale_up, fabric: &fabric, network: &network };
            let group = GroupPlacement::new(gpus, 1, scale_up.domain_gpus);
            Ok(sizes.iter().map(|&s| links.collective_time_s(op, s, &group)).collect())
        })
    }

    /// The network's bill of materials for `gpus` GPUs: parts by tier, NVLink switch trays, capex and power.
    #[pyfunction]
    fn network_bom<'py>(py: Python<'py>, spec: &Bound<'py, PyDict>) -> PyResult<Bound<'py, PyDict>> {
        use scalefront_core::economics::ClusterCost;
        use scalefront_core::topology::Network;
        no_panic(|| {
            let root = Section { dict: spec.clone(), path: "bom".into() };
            let gpu = gpu_spec(&root.section("gpu")?)?;
            let scale_up = scale_up_spec(&root.section("scale_up")?)?;
            let fabric = fabric_spec(&root.section("fabric")?)?;
            let topology = topology_spec(&root.section("topology")?)?;
            let prices = price_spec(&root.section("prices")?)?;
            for check in
                [gpu.validate(), scale_up.validate(), fabric.validate(), topology.validate(), prices.validate()]
            {
                check.map_err(from_core)?;
            }
            let gpus = root.u32("gpus")?;
            if gpus == 0 {
                return Err(from_core(core::ConfigError::ZeroDegree { field: "gpus" }));
            }
            let network = Network::new(&fabric, &topology, gpus, gpu.server_gpus);
            let parts = network.parts();
            let trays = (gpus as f64 / scale_up.domain_gpus.max(1) as f64).ceil() * scale_up.switch_trays_per_domain;
            let cost = ClusterCost::new(gpus, &gpu, &prices, &parts, trays);
            let d = PyDict::new(py);
            d.set_item("gpus", gpus)?;
            d.set_item("tiers", network.tiers)?;
            d.set_item("nics", parts.nics)?;
            d.set_item("switches_by_tier", parts.switches_by_tier.clone())?;
            d.set_item("switches_total", parts.switches)?;
            d.set_item("nvlink_switch_trays", trays)?;
            d.set_item("cables", parts.cables)?;
            d.set_item("transceivers", parts.transceivers)?;
            d.set_item("network_capex_usd", cost.network_capex_usd)?;
            d.set_item("network_power_w", cost.network_power_w)?;
            Ok(d)
        })
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
}
