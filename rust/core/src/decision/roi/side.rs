//! One fabric's side of the comparison: what its cluster costs, split into the lines that scale with the
//! fabric's price and the rest (`SideCost`), and what it delivers per workload at its best candidate layout
//! (`SideSpeed`).

use crate::cost::economics::{ClusterCost, Discounting, Tco, SECONDS_PER_DAY, SECONDS_PER_HOUR};
use crate::error::ConfigError;
use crate::evaluate::{evaluate, ClusterStage, Config};
use crate::prices::Economics;
use crate::records::NamedValues;

/// Capital, yearly and residual amounts of a group of cost lines (USD).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Lines {
    pub capex_usd: f64,
    pub opex_usd_per_year: f64,
    pub residual_usd: f64,
}

impl Lines {
    pub fn pv(&self, d: &Discounting) -> f64 {
        self.capex_usd + self.opex_usd_per_year / 12.0 * d.life_annuity() - self.residual_usd * d.end_factor()
    }
    pub fn scaled(&self, k: f64) -> Lines {
        Lines {
            capex_usd: k * self.capex_usd,
            opex_usd_per_year: k * self.opex_usd_per_year,
            residual_usd: k * self.residual_usd,
        }
    }
    pub fn plus(&self, o: &Lines) -> Lines {
        Lines {
            capex_usd: self.capex_usd + o.capex_usd,
            opex_usd_per_year: self.opex_usd_per_year + o.opex_usd_per_year,
            residual_usd: self.residual_usd + o.residual_usd,
        }
    }
}

/// The cost of one fabric's cluster, split into what scales with the fabric's price and the rest, with the
/// present value of each component for a breakdown chart.
#[derive(Clone, Debug, PartialEq)]
pub struct SideCost {
    pub cost: ClusterCost,
    pub tco: Tco,
    /// Fabric hardware, its spares and installation, support and licences, its residual value.
    pub fabric: Lines,
    /// Servers, NVLink trays, management network, energy, facility, their residual value.
    pub rest: Lines,
}

impl SideCost {
    pub fn new(cost: ClusterCost, econ: &Economics) -> Self {
        let tco = Tco::new(&cost, econ);
        let hw = cost.fabric_capex_usd;
        let trays = cost.network_capex_usd - hw;
        let net_extra = econ.network_spares_fraction + econ.installation_fraction;
        let fabric = Lines {
            capex_usd: hw * (1.0 + net_extra),
            opex_usd_per_year: tco.support_usd_per_year,
            residual_usd: econ.residual_fraction * hw * (1.0 + econ.network_spares_fraction),
        };
        let total = Lines {
            capex_usd: tco.capex_usd,
            opex_usd_per_year: tco.opex_usd_per_year(),
            residual_usd: tco.residual_usd,
        };
        let rest = Lines {
            capex_usd: total.capex_usd - fabric.capex_usd,
            opex_usd_per_year: total.opex_usd_per_year - fabric.opex_usd_per_year,
            residual_usd: total.residual_usd - fabric.residual_usd,
        };
        debug_assert!(trays >= -1e-6);
        SideCost { cost, tco, fabric, rest }
    }

    /// Every line with the fabric's lines multiplied by `k` (a premium applied to the fabric's price).
    pub fn total(&self, k: f64) -> Lines {
        self.rest.plus(&self.fabric.scaled(k))
    }

    /// Present value of the components (USD), for the cost breakdown: servers (with spares), network hardware
    /// (with spares), installation, management network, energy, facility, support and licences, less the
    /// residual value; the fabric's lines multiplied by `k`.
    pub fn breakdown(&self, k: f64) -> [(&'static str, f64); 8] {
        let (c, t, d) = (&self.cost, &self.tco, &self.tco.discounting);
        let years = d.life_annuity() / 12.0;
        let fabric_share = if c.network_capex_usd > 0.0 { c.fabric_capex_usd / c.network_capex_usd } else { 0.0 };
        let scale_net = 1.0 + (k - 1.0) * fabric_share;
        [
            ("servers", c.server_capex_usd + c.server_spares_usd),
            ("network", (c.network_capex_usd + c.network_spares_usd) * scale_net),
            ("installation", c.installation_usd * scale_net),
            ("management", c.oob_usd),
            ("energy", t.energy_usd_per_year * years),
            ("facility", t.facility_usd_per_year * years),
            ("support", t.support_usd_per_year * k * years),
            ("residual", -self.total(k).residual_usd * d.end_factor()),
        ]
    }
}

crate::record! {
    /// What one fabric delivers on one design: per workload, the chosen candidate and its delivered throughput.
    #[derive(Clone, Debug, PartialEq)]
    pub struct SideSpeed {
        /// Index of the chosen candidate per workload.
        pub chosen: Vec<usize>,
        /// Delivered tokens/s per workload: tokens/s x goodput, model error applied.
        pub tokens_per_s: Vec<f64>,
        /// Days to train each workload's tokens at the chosen layout (time to train, model error applied).
        pub days: Vec<f64>,
        pub goodput: Vec<f64>,
        /// What training each workload's tokens would cost renting the GPUs instead (rent mode, for comparison).
        pub rent_usd: Vec<f64>,
        /// Share of each workload's step that is exposed communication (the part the collective model's error
        /// scales): how much of a speed difference the collective model's error can move.
        pub comm_share: Vec<f64>,
    }
}

crate::record! {
    /// One fabric's side at one GPU count as the comparison reports it: what it delivers, and what its cluster
    /// costs to buy (USD), draws (W) and costs over its life by component.
    #[derive(Clone, Debug, PartialEq)]
    pub struct SideReport {
        pub speed: SideSpeed => flatten,
        pub server_capex_usd: f64,
        pub network_capex_usd: f64,
        pub fabric_capex_usd: f64,
        pub it_power_w: f64,
        /// Present value of each component (`SideCost::breakdown`), the fabric's lines at the premium applied.
        pub breakdown_usd: NamedValues,
    }
}

impl SideReport {
    /// The report of `side` with its fabric's lines multiplied by `k`.
    pub fn new(side: &Side, k: f64) -> Self {
        let c = &side.cost.cost;
        SideReport {
            speed: side.speed.clone(),
            server_capex_usd: c.server_capex_usd,
            network_capex_usd: c.network_capex_usd,
            fabric_capex_usd: c.fabric_capex_usd,
            it_power_w: c.it_power_w,
            breakdown_usd: NamedValues(side.cost.breakdown(k).to_vec()),
        }
    }
}

/// Multiplicative model error on a step: `common` applies to the whole step time, `collective` to its exposed
/// communication (both as factors, 1 = the model's prediction).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepError {
    pub common: f64,
    pub collective: f64,
}

impl StepError {
    pub const NONE: StepError = StepError { common: 1.0, collective: 1.0 };
}

/// The best candidate of each workload on a design, with `edit` applied to each candidate's configuration first.
pub fn side_speed(
    candidates: &[Vec<Config>],
    error: StepError,
    edit: &dyn Fn(&mut Config) -> Result<(), ConfigError>,
) -> Result<SideSpeed, ConfigError> {
    let mut out = SideSpeed {
        chosen: vec![],
        tokens_per_s: vec![],
        days: vec![],
        goodput: vec![],
        rent_usd: vec![],
        comm_share: vec![],
    };
    for configs in candidates {
        let mut best: Option<(usize, f64, f64, f64, f64, f64)> = None;
        for (i, base) in configs.iter().enumerate() {
            let mut cfg = base.clone();
            edit(&mut cfg)?;
            let e = match evaluate(&cfg) {
                Ok(e) if e.feasible => e,
                _ => continue, // a layout the sampled figures make impossible is not a candidate
            };
            let b = &e.breakdown;
            let comm = b.tp_comm_s + b.pp_comm_s + b.dp_comm_s + b.cp_comm_s + b.ep_comm_s;
            let step = error.common * (e.step_time_s - comm + error.collective * comm);
            let stretch = step / e.step_time_s;
            let tau = e.tokens_per_s / stretch * e.goodput;
            let days = e.time_to_train_s * stretch / SECONDS_PER_DAY;
            if best.is_none_or(|(_, t, _, _, _, _)| tau > t) {
                best = Some((
                    i,
                    tau,
                    days,
                    e.goodput,
                    e.cost_rent_usd * stretch,
                    error.common * error.collective * comm / step,
                ));
            }
        }
        let (i, tau, days, goodput, rent, comm_share) = best.ok_or(ConfigError::InvalidFigure {
            field: "candidates",
            value: configs.len() as f64,
            expected: "at least one candidate that can be evaluated",
        })?;
        out.chosen.push(i);
        out.tokens_per_s.push(tau);
        out.days.push(days);
        out.goodput.push(goodput);
        out.rent_usd.push(rent);
        out.comm_share.push(comm_share);
    }
    Ok(out)
}

/// The cluster cost of a design, from its first candidate's configuration with `edit` applied (every candidate
/// of a design shares the cluster: GPUs, topology, fabric, prices).
pub fn side_cost(
    candidates: &[Vec<Config>],
    edit: &dyn Fn(&mut Config) -> Result<(), ConfigError>,
) -> Result<SideCost, ConfigError> {
    let mut cfg = candidates[0][0].clone();
    edit(&mut cfg)?;
    cfg.prices.validate()?;
    let stage = ClusterStage::new(&cfg)?;
    Ok(SideCost::new(stage.cost().clone(), &cfg.prices.economics))
}

/// One fabric's outcome on one design.
#[derive(Clone, Debug, PartialEq)]
pub struct Side {
    pub speed: SideSpeed,
    pub cost: SideCost,
    pub gpus: u32,
}

impl Side {
    /// Work index: sum_w share_w tau_w / ref_w.
    pub fn work(&self, shares: &[f64], refs: &[f64]) -> f64 {
        shares.iter().zip(refs).zip(&self.speed.tokens_per_s).map(|((s, r), t)| s * t / r).sum()
    }

    /// Busy GPU-hours a month.
    pub(super) fn gpu_hours_per_month(&self) -> f64 {
        self.gpus as f64 * self.cost.tco.busy_s_per_month / SECONDS_PER_HOUR
    }
}
