//! What the parts of a cluster cost and draw, and the economic assumptions a run is costed with, grouped by
//! what they price. One nested structure serves `evaluate` and sweeps alike; the catalogs (data/prices.toml)
//! hold the same figures with their sources.

use crate::error::ConfigError;
use crate::hardware::{fraction, non_negative, positive};
use crate::named_enum;

named_enum! {
    /// Which cost `cost_to_train_usd` reports.
    pub enum CostMode {
        /// GPU-hours at a rental price.
        Rent = "rent",
        /// The cluster owned: capex amortised over its life, plus facility energy.
        Own = "own",
    }
}

/// One GPU type's rental price and the price of a server of `GpuSpec::server_gpus` GPUs (without scale-out NICs).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct GpuPrices {
    pub rent_usd_per_gpu_hour: f64,
    pub server_usd: f64,
}

/// Parts of the scale-out network: prices and power of one of each.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct NetworkPrices {
    /// One NIC port.
    pub nic_usd: f64,
    /// One switch of the fabric's radix.
    pub switch_usd: f64,
    /// One optical port end.
    pub transceiver_usd: f64,
    /// One link's cable.
    pub cable_usd: f64,
    pub nic_w: f64,
    pub switch_w: f64,
    pub transceiver_w: f64,
}

/// An NVLink switch tray of the scale-up domain (zero where the switches sit on the server's baseboard).
#[derive(Clone, Debug, PartialEq, Default)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct ScaleUpPrices {
    pub switch_tray_usd: f64,
    pub switch_tray_w: f64,
}

/// Assumptions every cost of a run depends on.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct Economics {
    pub amortization_years: f64,
    /// Facility power / IT power.
    pub pue: f64,
    pub usd_per_kwh: f64,
    /// Average GPU draw while training / TDP.
    pub gpu_power_fraction: f64,
    /// Which cost `cost_to_train_usd` reports.
    pub cost_mode: CostMode,
}

/// Every price a configuration is costed with.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct Prices {
    pub gpu: GpuPrices,
    pub network: NetworkPrices,
    pub scale_up: ScaleUpPrices,
    pub economics: Economics,
}

impl GpuPrices {
    pub fn validate(&self) -> Result<(), ConfigError> {
        non_negative("rent_usd_per_gpu_hour", self.rent_usd_per_gpu_hour)?;
        non_negative("server_usd", self.server_usd)
    }
}

impl NetworkPrices {
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (field, value) in [
            ("nic_usd", self.nic_usd),
            ("switch_usd", self.switch_usd),
            ("transceiver_usd", self.transceiver_usd),
            ("cable_usd", self.cable_usd),
            ("nic_w", self.nic_w),
            ("switch_w", self.switch_w),
            ("transceiver_w", self.transceiver_w),
        ] {
            non_negative(field, value)?;
        }
        Ok(())
    }
}

impl ScaleUpPrices {
    pub fn validate(&self) -> Result<(), ConfigError> {
        non_negative("switch_tray_usd", self.switch_tray_usd)?;
        non_negative("switch_tray_w", self.switch_tray_w)
    }
}

impl Economics {
    pub fn validate(&self) -> Result<(), ConfigError> {
        positive("amortization_years", self.amortization_years)?;
        if !(self.pue.is_finite() && self.pue >= 1.0) {
            return Err(ConfigError::InvalidFigure { field: "pue", value: self.pue, expected: "a finite number >= 1" });
        }
        non_negative("usd_per_kwh", self.usd_per_kwh)?;
        fraction("gpu_power_fraction", self.gpu_power_fraction, 1.0)
    }
}

impl Prices {
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.gpu.validate()?;
        self.network.validate()?;
        self.scale_up.validate()?;
        self.economics.validate()
    }
}
