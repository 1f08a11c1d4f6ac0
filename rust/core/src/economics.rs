//! What a cluster costs to buy and to run, and what a training run costs: renting GPU-hours, or owning the
//! cluster (capex amortised over its life, plus facility energy).

use crate::error::ConfigError;
use crate::hardware::GpuSpec;
use crate::hardware::{FabricSpec, ScaleUpSpec, TopologySpec};
use crate::prices::{CostMode, Economics, Prices};
use crate::topology::{Network, NetworkParts};

pub const SECONDS_PER_HOUR: f64 = 3600.0;
pub const SECONDS_PER_YEAR: f64 = 365.25 * 24.0 * 3600.0;
pub const SECONDS_PER_DAY: f64 = 86400.0;
pub const JOULES_PER_KWH: f64 = 3.6e6;
pub const JOULES_PER_MWH: f64 = 3.6e9;

/// Capital cost and power of a cluster.
#[derive(Clone, Debug, PartialEq)]
pub struct ClusterCost {
    pub servers: f64,
    pub server_capex_usd: f64,
    pub network_capex_usd: f64,
    /// IT power while training: GPUs at their average draw, the rest of each server, the network.
    pub it_power_w: f64,
    pub network_power_w: f64,
}

impl ClusterCost {
    /// `switch_trays`: NVLink switch trays of the scale-up domains (none for HGX servers).
    pub fn new(gpus: u32, gpu: &GpuSpec, prices: &Prices, parts: &NetworkParts, switch_trays: f64) -> Self {
        let servers = (gpus as f64 / gpu.server_gpus as f64).ceil();
        let (net, trays) = (&prices.network, &prices.scale_up);
        let network_capex_usd = parts.nics * net.nic_usd
            + parts.switches * net.switch_usd
            + parts.transceivers * net.transceiver_usd
            + parts.cables * net.cable_usd
            + switch_trays * trays.switch_tray_usd;
        let network_power_w = parts.nics * net.nic_w
            + parts.switches * net.switch_w
            + parts.transceivers * net.transceiver_w
            + switch_trays * trays.switch_tray_w;
        let gpu_w = gpu.tdp_w * prices.economics.gpu_power_fraction + gpu.host_power_w;
        let it_power_w = gpus as f64 * gpu_w + network_power_w;
        ClusterCost {
            servers,
            server_capex_usd: servers * prices.gpu.server_usd,
            network_capex_usd,
            it_power_w,
            network_power_w,
        }
    }

    pub fn capex_usd(&self) -> f64 {
        self.server_capex_usd + self.network_capex_usd
    }
}

/// The network's bill of materials for a cluster: parts, NVLink switch trays, capex and power.
#[derive(Clone, Debug, PartialEq)]
pub struct Bom {
    pub tiers: u32,
    pub parts: NetworkParts,
    pub nvlink_switch_trays: f64,
    pub network_capex_usd: f64,
    pub network_power_w: f64,
}

/// The bill of materials of the scale-out network (and scale-up switch trays) for `gpus` GPUs. Checks every figure.
pub fn bill_of_materials(
    gpus: u32,
    gpu: &GpuSpec,
    scale_up: &ScaleUpSpec,
    fabric: &FabricSpec,
    topology: &TopologySpec,
    prices: &Prices,
) -> Result<Bom, ConfigError> {
    if gpus == 0 {
        return Err(ConfigError::ZeroDegree { field: "gpus" });
    }
    gpu.validate()?;
    scale_up.validate()?;
    fabric.validate()?;
    topology.validate()?;
    prices.validate()?;
    let network = Network::new(fabric, topology, gpus, gpu.server_gpus);
    let parts = network.parts();
    let nvlink_switch_trays = scale_up.switch_trays(gpus);
    let cost = ClusterCost::new(gpus, gpu, prices, &parts, nvlink_switch_trays);
    Ok(Bom {
        tiers: network.tiers,
        parts,
        nvlink_switch_trays,
        network_capex_usd: cost.network_capex_usd,
        network_power_w: cost.network_power_w,
    })
}

/// Cost of running for `seconds`.
#[derive(Clone, Debug, PartialEq)]
pub struct RunCost {
    /// Facility energy: IT power x PUE x time.
    pub energy_j: f64,
    pub rent_usd: f64,
    /// Straight-line amortisation of the capex over its life, for the run's duration, plus energy.
    pub own_usd: f64,
}

impl RunCost {
    /// The cost the economics' `cost_mode` reports.
    pub fn in_mode(&self, mode: CostMode) -> f64 {
        match mode {
            CostMode::Rent => self.rent_usd,
            CostMode::Own => self.own_usd,
        }
    }
}

pub fn run_cost(seconds: f64, gpus: u32, cluster: &ClusterCost, prices: &Prices) -> RunCost {
    let econ: &Economics = &prices.economics;
    let energy_j = cluster.it_power_w * econ.pue * seconds;
    let rent_usd = gpus as f64 * prices.gpu.rent_usd_per_gpu_hour * seconds / SECONDS_PER_HOUR;
    let amortised = cluster.capex_usd() * seconds / (econ.amortization_years * SECONDS_PER_YEAR);
    let own_usd = amortised + energy_j / JOULES_PER_KWH * econ.usd_per_kwh;
    RunCost { energy_j, rent_usd, own_usd }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prices::{GpuPrices, NetworkPrices, ScaleUpPrices};

    #[test]
    fn idle_gpu_cost_from_first_principles() {
        // 1% of 16,384 GPUs is 163.84 GPUs; a day of them at $3/GPU-hour costs 163.84 x 24 x 3 = $11,796,
        // not the "$47K a day" sometimes quoted for this example.
        let prices = Prices {
            gpu: GpuPrices { rent_usd_per_gpu_hour: 3.0, server_usd: 0.0 },
            network: NetworkPrices {
                nic_usd: 0.0,
                switch_usd: 0.0,
                transceiver_usd: 0.0,
                cable_usd: 0.0,
                nic_w: 0.0,
                switch_w: 0.0,
                transceiver_w: 0.0,
            },
            scale_up: ScaleUpPrices::default(),
            economics: Economics {
                amortization_years: 4.0,
                pue: 1.0,
                usd_per_kwh: 0.0,
                gpu_power_fraction: 1.0,
                cost_mode: CostMode::Rent,
            },
        };
        let cluster = ClusterCost {
            servers: 0.0,
            server_capex_usd: 0.0,
            network_capex_usd: 0.0,
            it_power_w: 0.0,
            network_power_w: 0.0,
        };
        let day = 86400.0;
        let whole = run_cost(day, 16384, &cluster, &prices).rent_usd;
        assert!((0.01 * whole - 11796.48).abs() < 1e-6, "{}", 0.01 * whole);
    }

    #[test]
    fn owning_amortises_capex_and_pays_energy() {
        let prices = Prices {
            gpu: GpuPrices { rent_usd_per_gpu_hour: 2.0, server_usd: 0.0 },
            network: NetworkPrices {
                nic_usd: 0.0,
                switch_usd: 0.0,
                transceiver_usd: 0.0,
                cable_usd: 0.0,
                nic_w: 0.0,
                switch_w: 0.0,
                transceiver_w: 0.0,
            },
            scale_up: ScaleUpPrices::default(),
            economics: Economics {
                amortization_years: 4.0,
                pue: 1.25,
                usd_per_kwh: 0.1,
                gpu_power_fraction: 1.0,
                cost_mode: CostMode::Rent,
            },
        };
        // $4M over 4 years, run for 1 year at 1 MW IT: $1M + 1 MW x 1.25 x 8766 h x $0.1/kWh = $1M + $1.0958M.
        let cluster = ClusterCost {
            servers: 1.0,
            server_capex_usd: 4e6,
            network_capex_usd: 0.0,
            it_power_w: 1e6,
            network_power_w: 0.0,
        };
        let cost = run_cost(SECONDS_PER_YEAR, 1, &cluster, &prices);
        assert!((cost.own_usd - (1e6 + 1e3 * 1.25 * 8766.0 * 0.1)).abs() < 1.0, "{}", cost.own_usd);
    }
}
