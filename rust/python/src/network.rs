//! The network: a cluster's bill of materials (`BomSheet`, a derived conversion), and the time of a collective
//! over consecutive ranks, for validating the collective model against nccl-tests.

use pyo3::prelude::*;
use scalefront_core::network::bom::{bill_of_materials, BomSheet};
use scalefront_core::network::collectives::{Collective, Interconnect};
use scalefront_core::network::placement::GroupPlacement;
use scalefront_core::network::topology::Network;
use scalefront_core::{FabricSpec, GpuSpec, Prices, ScaleUpSpec, TopologySpec};

use crate::error::{extract, no_panic, Result};

/// A request for collective times, as `scalefront.validation` sends it.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct CollectiveRequest {
    scale_up: ScaleUpSpec,
    fabric: FabricSpec,
    topology: TopologySpec,
    gpus: u32,
    server_gpus: u32,
    op: Collective,
    sizes_bytes: Vec<f64>,
}

/// A bill-of-materials request, as `scalefront.network.bom` sends it.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct BomRequest {
    gpu: GpuSpec,
    scale_up: ScaleUpSpec,
    fabric: FabricSpec,
    topology: TopologySpec,
    prices: Prices,
    gpus: u32,
}

/// Why the topology cannot carry the fabric's features (SHARP off rail-aligned leaves, dual-ToR without leaves), or
/// None: the core's `FabricSpec::check_topology`, for messages that name the fabric and topology.
#[pyfunction]
pub fn fabric_topology_problem(fabric: &Bound<'_, PyAny>, topology: &Bound<'_, PyAny>) -> Result<Option<String>> {
    no_panic(|| {
        let fabric: FabricSpec = extract(fabric, "FabricSpec")?;
        let topology: TopologySpec = extract(topology, "TopologySpec")?;
        Ok(fabric.check_topology(&topology).err().map(|e| e.to_string()))
    })
}

/// Times (s) of one collective over `gpus` consecutive ranks, `server_gpus` per server, for each message size
/// (the whole array, as nccl-tests counts it). For validating the collective model against nccl-tests.
#[pyfunction]
pub fn collective_times(request: &Bound<'_, PyAny>) -> Result<Vec<f64>> {
    no_panic(|| {
        let r: CollectiveRequest = extract(request, "CollectiveRequest")?;
        r.scale_up.validate()?;
        r.fabric.validate()?;
        r.topology.validate()?;
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
pub fn network_bom(request: &Bound<'_, PyAny>) -> Result<BomSheet> {
    no_panic(|| {
        let r: BomRequest = extract(request, "BomRequest")?;
        let bom = bill_of_materials(r.gpus, &r.gpu, &r.scale_up, &r.fabric, &r.topology, &r.prices)?;
        Ok(BomSheet::new(r.gpus, &bom))
    })
}
