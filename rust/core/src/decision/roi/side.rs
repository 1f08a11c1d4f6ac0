//! One fabric's side of the comparison: what its cluster costs, split into the lines that scale with the
//! fabric's price and the rest (`SideCost`), and what it delivers per workload at its best candidate layout
//! (`SideSpeed`).

use crate::cost::economics::{ClusterCost, Discounting, Tco, HARDWARE_LINES, SECONDS_PER_DAY, SECONDS_PER_HOUR};
use crate::error::ConfigError;
use crate::evaluate::{
    cluster_cost, evaluate, finish, ClusterParts, ClusterStage, Config, Evaluation, LayoutStage, ModelTerms,
};
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
    /// Fabric hardware, its spares and installation, support and licences, operations (staff, replacements), its
    /// residual value.
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
            opex_usd_per_year: tco.support_usd_per_year + tco.operations_usd_per_year,
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

    /// What each quotable price line amounts to: the hardware lines' capex, the present value of the yearly lines
    /// over the life, the servers' capex.
    pub fn quote_lines(&self) -> Vec<(&'static str, f64)> {
        let (c, years) = (&self.cost, self.tco.discounting.life_annuity() / 12.0);
        let mut lines: Vec<(&'static str, f64)> = HARDWARE_LINES.iter().copied().zip(c.hardware_lines_usd).collect();
        lines.push(("support_fraction_per_year", c.support_usd_per_year * years));
        lines.push(("nos_usd_per_switch_year", (c.licences_usd_per_year - c.fabric_manager_usd_per_year) * years));
        lines.push(("fabric_manager_usd_per_endpoint_year", c.fabric_manager_usd_per_year * years));
        lines.push(("server_usd", c.server_capex_usd));
        lines
    }

    /// Every line with the fabric's lines multiplied by `k` (a premium applied to the fabric's price).
    pub fn total(&self, k: f64) -> Lines {
        self.rest.plus(&self.fabric.scaled(k))
    }

    /// Present value of the components (USD), for the cost breakdown: servers (with spares), network hardware
    /// (with spares), installation, management network, energy, facility, support and licences, less the
    /// residual value; the fabric's lines multiplied by `k`.
    pub fn breakdown(&self, k: f64) -> [(&'static str, f64); 9] {
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
            ("support and licences", t.support_usd_per_year * k * years),
            ("operations", t.operations_usd_per_year * k * years),
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

impl SideSpeed {
    /// Become a copy of `other`, in this one's buffers (no allocation once they are large enough).
    pub fn assign(&mut self, other: &SideSpeed) {
        self.chosen.clone_from(&other.chosen);
        self.tokens_per_s.clone_from(&other.tokens_per_s);
        self.days.clone_from(&other.days);
        self.goodput.clone_from(&other.goodput);
        self.rent_usd.clone_from(&other.rent_usd);
        self.comm_share.clone_from(&other.comm_share);
    }

    /// Empty, its buffers kept.
    fn clear(&mut self) {
        self.chosen.clear();
        self.tokens_per_s.clear();
        self.days.clear();
        self.goodput.clear();
        self.rent_usd.clear();
        self.comm_share.clear();
    }

    /// One workload's first candidate at `tau` tokens/s, a day, full goodput, no rent, no communication (the
    /// unit tests' side).
    #[cfg(test)]
    pub(crate) fn one_workload(tau: f64) -> Self {
        SideSpeed {
            chosen: vec![0],
            tokens_per_s: vec![tau],
            days: vec![1.0],
            goodput: vec![1.0],
            rent_usd: vec![0.0],
            comm_share: vec![0.0],
        }
    }

    fn empty() -> Self {
        SideSpeed {
            chosen: vec![],
            tokens_per_s: vec![],
            days: vec![],
            goodput: vec![],
            rent_usd: vec![],
            comm_share: vec![],
        }
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
        /// What each quotable price line amounts to (USD, by the price line's name): the hardware lines' capex,
        /// the present value of the yearly lines (support, NOS and fabric manager licences), the servers.
        pub lines_usd: NamedValues,
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
            lines_usd: NamedValues(side.cost.quote_lines()),
        }
    }
}

/// Multiplicative model error on a step: `common` applies to the whole step time, `collective` to its exposed
/// communication, `serving` to the whole time per output token of a lifecycle's serving months (all factors, 1 =
/// the model's prediction).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepError {
    pub common: f64,
    pub collective: f64,
    pub serving: f64,
}

impl StepError {
    pub const NONE: StepError = StepError { common: 1.0, collective: 1.0, serving: 1.0 };
}

/// The best candidate of each workload on a design, with `edit` applied to each candidate's configuration first.
pub fn side_speed(
    candidates: &[Vec<Config>],
    error: StepError,
    edit: &dyn Fn(&mut Config) -> Result<(), ConfigError>,
) -> Result<SideSpeed, ConfigError> {
    Ok(side_speeds(candidates, &[error], edit)?.remove(0))
}

/// The best candidate of each workload under each of `errors`, every candidate evaluated once (the model error
/// only rescales a step's parts, so one evaluation serves every error).
pub fn side_speeds(
    candidates: &[Vec<Config>],
    errors: &[StepError],
    edit: &dyn Fn(&mut Config) -> Result<(), ConfigError>,
) -> Result<Vec<SideSpeed>, ConfigError> {
    let mut picks = BestSpeeds::new(errors, &mut Vec::new());
    for configs in candidates {
        for (i, base) in configs.iter().enumerate() {
            let mut cfg = base.clone();
            edit(&mut cfg)?;
            if let Ok(e) = evaluate(&cfg) {
                picks.offer(i, &e);
            }
        }
        picks.end_workload(configs.len())?;
    }
    Ok(picks.out)
}

/// Whether every candidate of each workload is the first candidate's cluster with another layout (parallelism and
/// overlap only), as a sweep's candidates of one design are: then one cluster stage serves them all.
pub fn shares_cluster(candidates: &[Vec<Config>]) -> bool {
    let first = &candidates[0][0];
    candidates.iter().flatten().all(|c| {
        let mut same = c.clone();
        (same.parallelism, same.overlap) = (first.parallelism.clone(), first.overlap.clone());
        same == *first
    })
}

/// A design's cluster cost and its candidates' speeds under each of `errors`, its cluster stage built once (the
/// candidates must share the cluster: `shares_cluster`).
pub fn side_cost_and_speeds(
    candidates: &[Vec<Config>],
    errors: &[StepError],
    edit: &dyn Fn(&mut Config) -> Result<(), ConfigError>,
) -> Result<(SideCost, Vec<SideSpeed>), ConfigError> {
    side_cost_and_speeds_in(&mut DesignScratch::default(), candidates, errors, edit)
}

/// What a Monte Carlo task keeps of one design between its samples: the design's configuration, which `edit` sets
/// again in every sample (it sets the same figures each time), and its candidates' layout stages without their
/// collective times (`LayoutStage::unlinked`: no sampled input moves the model, GPU, training run or GPU count,
/// only the fabric's figures and the placement, which `LayoutStage::link` applies per sample). The same numbers as
/// building each from scratch, without redoing the layouts' compute in every sample.
#[derive(Clone, Debug, Default)]
pub struct DesignScratch {
    cfg: Option<Config>,
    /// stages[workload][candidate]: None until first built; Some(None) for a layout that cannot be placed.
    stages: Vec<Vec<Option<Option<LayoutStage>>>>,
    /// Speeds of an earlier sample, handed back (`recycle`) for the next one to fill: their buffers, not values.
    spare: Vec<SideSpeed>,
    /// The cluster stage's terms of the model, GPU, framework, training run and GPU count (`ModelTerms`).
    model: Option<ModelTerms>,
}

impl DesignScratch {
    /// Hand back a speed this design's `side_cost_and_speeds_in` (or `copy_of`) returned, once read: the next call
    /// fills its buffers instead of allocating (a sample makes a dozen small vectors per design otherwise).
    pub fn recycle(&mut self, speed: SideSpeed) {
        if self.spare.len() < SPARE_SPEEDS {
            self.spare.push(speed);
        }
    }

    /// A copy of `speed` in a handed-back speed's buffers.
    pub fn copy_of(&mut self, speed: &SideSpeed) -> SideSpeed {
        let mut copy = self.spare.pop().unwrap_or_else(SideSpeed::empty);
        copy.assign(speed);
        copy
    }
}

/// `side_cost`, on the design's configuration kept in `scratch` (as `side_cost_and_speeds_in` keeps it).
pub fn side_cost_in(
    scratch: &mut DesignScratch,
    candidates: &[Vec<Config>],
    edit: &dyn Fn(&mut Config) -> Result<(), ConfigError>,
) -> Result<SideCost, ConfigError> {
    let cfg = scratch.cfg.get_or_insert_with(|| candidates[0][0].clone());
    edit(cfg)?;
    cfg.prices.validate()?;
    Ok(SideCost::new(cluster_cost(cfg)?, &cfg.prices.economics))
}

/// Speeds a design keeps for reuse: one per error a sample evaluates (with and without the model's error).
const SPARE_SPEEDS: usize = 2;

/// `side_cost_and_speeds`, keeping the design's configuration and layout stages in `scratch` between calls with
/// the same candidates and `edit` setting the same figures.
pub fn side_cost_and_speeds_in(
    scratch: &mut DesignScratch,
    candidates: &[Vec<Config>],
    errors: &[StepError],
    edit: &dyn Fn(&mut Config) -> Result<(), ConfigError>,
) -> Result<(SideCost, Vec<SideSpeed>), ConfigError> {
    let cfg = scratch.cfg.get_or_insert_with(|| candidates[0][0].clone());
    edit(cfg)?;
    cfg.prices.validate()?;
    let parts = ClusterParts::of(cfg);
    let cluster = ClusterStage::from_parts_with(parts, scratch.model.get_or_insert_with(|| ModelTerms::of(&parts)))?;
    scratch.stages.resize_with(candidates.len(), Vec::new);
    let mut picks = BestSpeeds::new(errors, &mut scratch.spare);
    for (configs, stages) in candidates.iter().zip(&mut scratch.stages) {
        stages.resize(configs.len(), None);
        for (i, (c, kept)) in configs.iter().zip(stages.iter_mut()).enumerate() {
            let Some(stage) = kept.get_or_insert_with(|| LayoutStage::unlinked(&cluster, &c.parallelism).ok()) else {
                continue;
            };
            stage.link_schedule(&cluster, &c.parallelism);
            if let Ok(e) = finish(&cluster, stage, &c.parallelism, &c.overlap) {
                picks.offer(i, &e);
            }
        }
        picks.end_workload(configs.len())?;
    }
    let cost = SideCost::new(cluster.cost().clone(), &cfg.prices.economics);
    Ok((cost, picks.out))
}

/// A workload's fastest candidate so far: (its index, delivered tokens/s, days, goodput, rent, exposed
/// communication's share of the step).
type Best = (usize, f64, f64, f64, f64, f64);

/// The fastest feasible candidate of each workload under each of `errors`, offered one evaluation at a time (a
/// layout the sampled figures make impossible is not a candidate).
struct BestSpeeds<'e> {
    errors: &'e [StepError],
    /// The workloads done so far, one `SideSpeed` per error.
    out: Vec<SideSpeed>,
    /// The current workload's fastest so far, per error.
    best: Vec<Option<Best>>,
}

impl<'e> BestSpeeds<'e> {
    /// With the speeds' buffers taken from `spare` where it has them.
    fn new(errors: &'e [StepError], spare: &mut Vec<SideSpeed>) -> Self {
        let out = (0..errors.len())
            .map(|_| match spare.pop() {
                Some(mut speed) => {
                    speed.clear();
                    speed
                }
                None => SideSpeed::empty(),
            })
            .collect();
        BestSpeeds { errors, out, best: vec![None; errors.len()] }
    }

    /// Candidate `i` of the current workload.
    fn offer(&mut self, i: usize, e: &Evaluation) {
        if !e.feasible {
            return;
        }
        let b = &e.breakdown;
        let comm = b.tp_comm_s + b.pp_comm_s + b.dp_comm_s + b.cp_comm_s + b.ep_comm_s;
        for (slot, error) in self.best.iter_mut().zip(self.errors) {
            let step = error.common * (e.step_time_s - comm + error.collective * comm);
            let stretch = step / e.step_time_s;
            let tau = e.tokens_per_s / stretch * e.goodput;
            if slot.is_none_or(|(_, t, _, _, _, _)| tau > t) {
                let days = e.time_to_train_s * stretch / SECONDS_PER_DAY;
                let comm_share = error.common * error.collective * comm / step;
                *slot = Some((i, tau, days, e.goodput, e.cost_rent_usd * stretch, comm_share));
            }
        }
    }

    /// The current workload's `candidates` are all offered: keep its fastest, start the next.
    fn end_workload(&mut self, candidates: usize) -> Result<(), ConfigError> {
        for (speed, slot) in self.out.iter_mut().zip(&mut self.best) {
            let (i, tau, days, goodput, rent, comm_share) = slot.take().ok_or(ConfigError::InvalidFigure {
                field: "candidates",
                value: candidates as f64,
                expected: "at least one candidate that can be evaluated",
            })?;
            speed.chosen.push(i);
            speed.tokens_per_s.push(tau);
            speed.days.push(days);
            speed.goodput.push(goodput);
            speed.rent_usd.push(rent);
            speed.comm_share.push(comm_share);
        }
        Ok(())
    }
}

/// The cluster cost of a design, from its first candidate's configuration with `edit` applied (every candidate
/// of a design shares the cluster: GPUs, topology, fabric, prices).
pub fn side_cost(
    candidates: &[Vec<Config>],
    edit: &dyn Fn(&mut Config) -> Result<(), ConfigError>,
) -> Result<SideCost, ConfigError> {
    side_cost_in(&mut DesignScratch::default(), candidates, edit)
}

/// One fabric's outcome on one design.
#[derive(Clone, Debug, PartialEq)]
pub struct Side {
    pub speed: SideSpeed,
    pub cost: SideCost,
    pub gpus: u32,
    /// Output tokens per second per GPU it serves in a lifecycle's serving months, model error applied (None:
    /// the comparison has no serving months).
    pub serving: Option<f64>,
}

impl Side {
    /// Work index: sum_w share_w tau_w / ref_w, less the busy time fabric-specific incidents stall.
    pub fn work(&self, shares: &[f64], refs: &[f64]) -> f64 {
        let work: f64 = shares.iter().zip(refs).zip(&self.speed.tokens_per_s).map(|((s, r), t)| s * t / r).sum();
        work * (1.0 - self.cost.cost.stall_fraction)
    }

    /// Busy GPU-hours a month.
    pub(super) fn gpu_hours_per_month(&self) -> f64 {
        self.gpus as f64 * self.cost.tco.busy_s_per_month / SECONDS_PER_HOUR
    }
}
