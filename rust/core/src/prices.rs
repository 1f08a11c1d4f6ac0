//! What the parts of a cluster cost and draw, and the economic assumptions a cluster is costed with, grouped by
//! what they price. One nested structure serves `evaluate`, sweeps and the ROI comparison alike; the catalogs
//! (data/prices.toml) hold the same figures with their sources, each a typical value with a low-high range.

use crate::error::ConfigError;
use crate::hardware::{fraction, non_negative, positive};
use crate::named_enum;

named_enum! {
    /// Which cost `cost_to_train_usd` reports.
    pub enum CostMode {
        /// GPU-hours at a rental price.
        Rent = "rent",
        /// The cluster owned: its total cost of ownership (capex, opex, residual value, discounting) per busy hour.
        Own = "own",
    }
}

named_enum! {
    /// Where the cluster's racks live, and so what the building costs a month.
    pub enum FacilityMode {
        /// Wholesale colocation, billed per kW of critical IT load per month (power billed separately).
        Colocation = "colocation",
        /// A hall built for the cluster: construction cost per kW, recovered over the facility's life.
        Build = "build",
    }
}

/// One GPU type: its rental price, the price of a server of `GpuSpec::server_gpus` GPUs (without scale-out
/// NICs, which the fabric prices) and how many of its GPUs fill a rack.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct GpuPrices {
    pub rent_usd_per_gpu_hour: f64,
    pub server_usd: f64,
    /// GPUs per compute rack (racks carry the out-of-band management network).
    pub gpus_per_rack: f64,
}

/// Parts of the scale-out network: price and power of one of each, and what a quote adds per year.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct NetworkPrices {
    /// One NIC port.
    pub nic_usd: f64,
    /// One switch of the fabric's radix (hardware; a NOS licence billed yearly is `nos_usd_per_switch_year`).
    pub switch_usd: f64,
    /// One single-port optical module at a NIC.
    pub nic_optic_usd: f64,
    /// One optical module in a switch cage (a twin-port 800G OSFP serves two 400G ports).
    pub switch_optic_usd: f64,
    /// Switch ports one switch-side module (or one splitter DAC) serves: 2 for twin-port cages.
    pub switch_ports_per_optic: f64,
    /// One passive copper cable from a switch cage to `switch_ports_per_optic` NICs.
    pub dac_usd: f64,
    /// Longest passive copper link at the fabric's lane rate (0: none offered).
    pub dac_reach_m: f64,
    /// One active copper cable (ACC, a redriver in the plug) from a switch cage to `switch_ports_per_optic` NICs:
    /// host links beyond the passive reach but within `acc_reach_m` (a leaf's neighbouring rack).
    pub acc_usd: f64,
    /// Longest active copper link at the fabric's lane rate (0: none offered).
    pub acc_reach_m: f64,
    /// One fibre (MPO trunk) per optical link.
    pub fibre_usd: f64,
    /// Support and software subscription per year, as a fraction of the network's hardware price.
    pub support_fraction_per_year: f64,
    /// Network operating system licence per switch per year (SONiC, Cumulus; 0 for IB's on-switch manager).
    pub nos_usd_per_switch_year: f64,
    /// Extra price of each switch above the leaf tier (spine and core) over `switch_usd`: deep-buffer chassis
    /// spines in an operating mode that needs them (0: the same switch everywhere).
    pub spine_switch_premium_usd: f64,
    /// The fabric's management hosts and licences, once per cluster (the SHARP aggregation manager's dedicated
    /// server and UFM subscription when in-network reduction is on; 0: none beyond the switches).
    pub fabric_manager_usd: f64,
    pub nic_w: f64,
    pub switch_w: f64,
    pub nic_optic_w: f64,
    pub switch_optic_w: f64,
    /// Fabric manager licence per NIC endpoint per year (InfiniBand's UFM; 0 where the switches' own software or
    /// free OpenSM manages the fabric).
    pub fabric_manager_usd_per_endpoint_year: f64,
    /// Network operations staff the fabric needs at any size, full-time equivalents (its skills included).
    pub ops_staff_fte: f64,
    /// Further staff per 1,000 switches.
    pub ops_staff_fte_per_1000_switches: f64,
    /// The fabric's skills' wage premium over the market rate of a network engineer (`usd_per_fte_year`).
    pub ops_wage_premium_fraction: f64,
    /// Weeks from order to a working fabric (delivery, cabling, burn-in).
    pub lead_time_weeks: f64,
    /// Fabric-specific incidents a year that stall the whole job (PFC pause storms, subnet-manager failover).
    pub incidents_per_year: f64,
    /// Busy time a job loses per incident: detection and restart.
    pub incident_stall_s: f64,
}

/// An NVLink switch tray of the scale-up domain (zero where the switches sit on the server's baseboard).
#[derive(Clone, Debug, PartialEq, Default)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct ScaleUpPrices {
    pub switch_tray_usd: f64,
    pub switch_tray_w: f64,
}

/// Assumptions every cost of an owned cluster depends on: its life and the money (discount rate, residual value),
/// how busy it is, the facility and power, and the lines a quote adds to the hardware (spares, installation,
/// management network).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct Economics {
    /// The cluster's life: depreciation period and the horizon of its total cost of ownership.
    pub amortization_years: f64,
    /// Facility power / IT power.
    pub pue: f64,
    pub usd_per_kwh: f64,
    /// Average GPU draw while training / TDP.
    pub gpu_power_fraction: f64,
    /// Which cost `cost_to_train_usd` reports.
    pub cost_mode: CostMode,
    /// Nominal yearly rate future cash flows are discounted at (WACC or hurdle rate).
    pub discount_rate: f64,
    /// Share of the hardware's price it sells for at the end of its life.
    pub residual_fraction: f64,
    /// Share of the hours the cluster has work to run (a faster fabric turns only these into more work).
    pub utilisation: f64,
    /// IT power of an idle hour / IT power while training.
    pub idle_power_fraction: f64,
    pub facility: FacilityMode,
    /// Colocation price per kW of critical IT load per month.
    pub colocation_usd_per_kw_month: f64,
    /// Construction cost per kW of critical IT load, for `facility = build`.
    pub facility_build_usd_per_kw: f64,
    /// Years a built facility's cost is recovered over.
    pub facility_life_years: f64,
    /// Servers bought as spares, as a fraction of the servers.
    pub server_spares_fraction: f64,
    /// Network parts bought as spares, as a fraction of the network's hardware price.
    pub network_spares_fraction: f64,
    /// Cabling, installation and testing, as a fraction of the network's hardware price.
    pub installation_fraction: f64,
    /// Out-of-band management network per compute rack (1G switch and copper).
    pub oob_usd_per_rack: f64,
    /// Loaded cost of one network engineer a year (salary, benefits, overhead).
    pub usd_per_fte_year: f64,
    /// Weeks from order to the GPU servers' delivery: a fabric ready sooner than the GPUs gains nothing.
    pub gpu_lead_time_weeks: f64,
    /// Share of the optical modules replaced a year (annualised failure rate).
    pub optic_replacement_fraction_per_year: f64,
    /// Share of the switches replaced a year.
    pub switch_replacement_fraction_per_year: f64,
    /// Share of the NICs replaced a year.
    pub nic_replacement_fraction_per_year: f64,
    /// Labour of one replacement (swap, clean, re-test).
    pub replacement_labour_usd: f64,
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
        non_negative("server_usd", self.server_usd)?;
        positive("gpus_per_rack", self.gpus_per_rack)
    }
}

impl NetworkPrices {
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (field, value) in [
            ("nic_usd", self.nic_usd),
            ("switch_usd", self.switch_usd),
            ("nic_optic_usd", self.nic_optic_usd),
            ("switch_optic_usd", self.switch_optic_usd),
            ("dac_usd", self.dac_usd),
            ("dac_reach_m", self.dac_reach_m),
            ("acc_usd", self.acc_usd),
            ("acc_reach_m", self.acc_reach_m),
            ("spine_switch_premium_usd", self.spine_switch_premium_usd),
            ("fabric_manager_usd", self.fabric_manager_usd),
            ("fibre_usd", self.fibre_usd),
            ("support_fraction_per_year", self.support_fraction_per_year),
            ("nos_usd_per_switch_year", self.nos_usd_per_switch_year),
            ("nic_w", self.nic_w),
            ("switch_w", self.switch_w),
            ("nic_optic_w", self.nic_optic_w),
            ("switch_optic_w", self.switch_optic_w),
            ("fabric_manager_usd_per_endpoint_year", self.fabric_manager_usd_per_endpoint_year),
            ("ops_staff_fte", self.ops_staff_fte),
            ("ops_staff_fte_per_1000_switches", self.ops_staff_fte_per_1000_switches),
            ("ops_wage_premium_fraction", self.ops_wage_premium_fraction),
            ("lead_time_weeks", self.lead_time_weeks),
            ("incidents_per_year", self.incidents_per_year),
            ("incident_stall_s", self.incident_stall_s),
        ] {
            non_negative(field, value)?;
        }
        if !(self.switch_ports_per_optic.is_finite() && self.switch_ports_per_optic >= 1.0) {
            return Err(ConfigError::InvalidFigure {
                field: "switch_ports_per_optic",
                value: self.switch_ports_per_optic,
                expected: "a number >= 1",
            });
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

/// A share in [0, 1].
fn share(field: &'static str, value: f64) -> Result<(), ConfigError> {
    if value.is_finite() && (0.0..=1.0).contains(&value) {
        Ok(())
    } else {
        Err(ConfigError::InvalidFigure { field, value, expected: "a fraction in [0, 1]" })
    }
}

impl Economics {
    pub fn validate(&self) -> Result<(), ConfigError> {
        positive("amortization_years", self.amortization_years)?;
        if !(self.pue.is_finite() && self.pue >= 1.0) {
            return Err(ConfigError::InvalidFigure { field: "pue", value: self.pue, expected: "a finite number >= 1" });
        }
        non_negative("usd_per_kwh", self.usd_per_kwh)?;
        fraction("gpu_power_fraction", self.gpu_power_fraction, 1.0)?;
        if !(self.discount_rate.is_finite() && self.discount_rate > -1.0 && self.discount_rate <= 1.0) {
            return Err(ConfigError::InvalidFigure {
                field: "discount_rate",
                value: self.discount_rate,
                expected: "a yearly rate in (-1, 1]",
            });
        }
        share("residual_fraction", self.residual_fraction)?;
        fraction("utilisation", self.utilisation, 1.0)?;
        share("idle_power_fraction", self.idle_power_fraction)?;
        non_negative("colocation_usd_per_kw_month", self.colocation_usd_per_kw_month)?;
        non_negative("facility_build_usd_per_kw", self.facility_build_usd_per_kw)?;
        positive("facility_life_years", self.facility_life_years)?;
        non_negative("server_spares_fraction", self.server_spares_fraction)?;
        non_negative("network_spares_fraction", self.network_spares_fraction)?;
        non_negative("installation_fraction", self.installation_fraction)?;
        non_negative("oob_usd_per_rack", self.oob_usd_per_rack)?;
        non_negative("usd_per_fte_year", self.usd_per_fte_year)?;
        non_negative("gpu_lead_time_weeks", self.gpu_lead_time_weeks)?;
        share("optic_replacement_fraction_per_year", self.optic_replacement_fraction_per_year)?;
        share("switch_replacement_fraction_per_year", self.switch_replacement_fraction_per_year)?;
        share("nic_replacement_fraction_per_year", self.nic_replacement_fraction_per_year)?;
        non_negative("replacement_labour_usd", self.replacement_labour_usd)
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
