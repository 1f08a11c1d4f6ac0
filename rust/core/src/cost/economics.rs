//! What a cluster costs to buy and to run, and what a training run costs: renting GPU-hours, or owning the
//! cluster. Owning is priced as a total cost of ownership over the cluster's life: capex (servers, network,
//! spares, installation, management network), opex per year (energy x PUE, facility, support and licences), a
//! residual value at the end, every cash flow discounted monthly; a busy hour carries the levelised cost (the
//! present value of the costs over the present value of the busy hours, as a levelised cost of energy does: NREL,
//! "Simple Levelized Cost of Energy (LCOE) Calculator Documentation"; Short, Packey & Holt, NREL/TP-462-5173, 1995).

use crate::hardware::GpuSpec;
use crate::network::bom::{self, Bom, NetworkCapex, NetworkParts};
use crate::prices::{CostMode, Economics, FacilityMode, Prices};

pub const SECONDS_PER_HOUR: f64 = 3600.0;
pub const SECONDS_PER_YEAR: f64 = 365.25 * 24.0 * 3600.0;
pub const SECONDS_PER_MONTH: f64 = SECONDS_PER_YEAR / 12.0;
pub const HOURS_PER_YEAR: f64 = 365.25 * 24.0;
pub const SECONDS_PER_DAY: f64 = 86400.0;
pub const JOULES_PER_KWH: f64 = 3.6e6;
pub const JOULES_PER_MWH: f64 = 3.6e9;
/// The price lines of a fabric's hardware, in `ClusterCost::hardware_lines_usd` order.
pub const HARDWARE_LINES: [&str; 6] =
    ["nic_usd", "switch_usd", "nic_optic_usd", "switch_optic_usd", "dac_usd", "fibre_usd"];
pub const DAYS_PER_WEEK: f64 = 7.0;
pub const DAYS_PER_MONTH: f64 = 365.25 / 12.0;

/// Network operations staff a year: (a fixed team + a team per 1,000 switches) x the market rate x (1 + the
/// fabric's skill premium). A staffing model in the form of the operators' own (Hedgehog's 1,024-GPU DIY team of 12,
/// $2.6M a year for 8 of them, hedgehog.cloud "The Operations Math", 2025-26; BLS network architects' median
/// $129,840, May 2023): the figures are the price book's, with their sources.
fn staff_usd_per_year(parts: &NetworkParts, prices: &Prices) -> f64 {
    let net = &prices.network;
    let fte = net.ops_staff_fte + net.ops_staff_fte_per_1000_switches * parts.switches / 1000.0;
    fte * prices.economics.usd_per_fte_year * (1.0 + net.ops_wage_premium_fraction)
}

/// Failed parts replaced a year: each kind's count x its annualised failure rate x (its price + the labour of a
/// swap). Constant hazard: an MTBF of M hours fails 8,766 / M of the parts a year (so 0.5-1M-hour pluggable
/// optics replace 0.9-1.7% a year; Meta/Broadcom, ECOC 2025, via the price book's sources).
fn replacement_usd_per_year(parts: &NetworkParts, prices: &Prices) -> f64 {
    let (net, e) = (&prices.network, &prices.economics);
    let labour = e.replacement_labour_usd;
    let optics =
        parts.nic_optics * (net.nic_optic_usd + labour) + parts.switch_optics * (net.switch_optic_usd + labour);
    optics * e.optic_replacement_fraction_per_year
        + parts.switches * (net.switch_usd + labour) * e.switch_replacement_fraction_per_year
        + parts.nics * (net.nic_usd + labour) * e.nic_replacement_fraction_per_year
}

/// Capital cost, yearly quote lines and power of a cluster.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ClusterCost {
    pub servers: f64,
    /// Servers at the server price (spares separate).
    pub server_capex_usd: f64,
    /// Network hardware: NICs, switches, optics, copper, fibre, NVLink switch trays (spares separate).
    pub network_capex_usd: f64,
    /// The scale-out fabric's hardware alone (without NVLink trays).
    pub fabric_capex_usd: f64,
    pub server_spares_usd: f64,
    pub network_spares_usd: f64,
    /// Cabling, installation and testing of the network.
    pub installation_usd: f64,
    /// Out-of-band management network, per compute rack.
    pub oob_usd: f64,
    /// Network support and software subscription, per year.
    pub support_usd_per_year: f64,
    /// NOS and fabric manager licences, per year.
    pub licences_usd_per_year: f64,
    /// The fabric manager's share of the licences, per year.
    pub fabric_manager_usd_per_year: f64,
    /// The fabric's hardware by the price line that prices it (`HARDWARE_LINES`), before spares.
    pub hardware_lines_usd: [f64; 6],
    /// Network operations staff, per year.
    pub staff_usd_per_year: f64,
    /// Failed optics, switches and NICs replaced, parts and labour, per year.
    pub replacement_usd_per_year: f64,
    /// Months the fabric delays the cluster: its lead time beyond the GPUs'.
    pub delay_months: f64,
    /// Share of the busy time fabric-specific incidents stall the whole job.
    pub stall_fraction: f64,
    /// IT power while training: GPUs at their average draw, the rest of each server, the network.
    pub it_power_w: f64,
    pub network_power_w: f64,
}

impl ClusterCost {
    /// `switch_trays`: NVLink switch trays of the scale-up domains (none for HGX servers).
    pub fn new(gpus: u32, gpu: &GpuSpec, prices: &Prices, parts: &NetworkParts, switch_trays: f64) -> Self {
        let servers = (gpus as f64 / gpu.server_gpus as f64).ceil();
        let econ = &prices.economics;
        let net = &prices.network;
        let capex = NetworkCapex::new(parts, switch_trays, prices);
        let network_capex_usd = capex.total();
        let racks = (gpus as f64 / prices.gpu.gpus_per_rack).ceil();
        let network_power_w = bom::network_power_w(parts, switch_trays, prices);
        let gpu_w = gpu.tdp_w * econ.gpu_power_fraction + gpu.host_power_w;
        let server_capex_usd = servers * prices.gpu.server_usd;
        let busy_s_per_year = econ.utilisation * SECONDS_PER_YEAR;
        ClusterCost {
            servers,
            server_capex_usd,
            network_capex_usd,
            fabric_capex_usd: capex.fabric(),
            server_spares_usd: server_capex_usd * econ.server_spares_fraction,
            network_spares_usd: network_capex_usd * econ.network_spares_fraction,
            installation_usd: network_capex_usd * econ.installation_fraction,
            oob_usd: racks * econ.oob_usd_per_rack,
            support_usd_per_year: capex.fabric() * net.support_fraction_per_year,
            licences_usd_per_year: parts.switches * net.nos_usd_per_switch_year
                + parts.nics * net.fabric_manager_usd_per_endpoint_year,
            fabric_manager_usd_per_year: parts.nics * net.fabric_manager_usd_per_endpoint_year,
            hardware_lines_usd: [
                parts.nics * net.nic_usd,
                parts.switches * net.switch_usd,
                parts.nic_optics * net.nic_optic_usd,
                parts.switch_optics * net.switch_optic_usd,
                parts.dac_cables * net.dac_usd,
                parts.fibres * net.fibre_usd,
            ],
            staff_usd_per_year: staff_usd_per_year(parts, prices),
            replacement_usd_per_year: replacement_usd_per_year(parts, prices),
            delay_months: (net.lead_time_weeks - econ.gpu_lead_time_weeks).max(0.0) * DAYS_PER_WEEK / DAYS_PER_MONTH,
            stall_fraction: (net.incidents_per_year * net.incident_stall_s / busy_s_per_year).min(1.0),
            it_power_w: gpus as f64 * gpu_w + network_power_w,
            network_power_w,
        }
    }

    /// The same cluster from a priced bill of materials.
    pub fn from_bom(gpus: u32, gpu: &GpuSpec, prices: &Prices, bom: &Bom) -> Self {
        Self::new(gpus, gpu, prices, &bom.parts, bom.nvlink_switch_trays)
    }

    /// Every capital line: servers and their spares, network hardware and its spares, installation, management.
    pub fn capex_usd(&self) -> f64 {
        self.server_capex_usd
            + self.server_spares_usd
            + self.network_capex_usd
            + self.network_spares_usd
            + self.installation_usd
            + self.oob_usd
    }

    /// Hardware that can be sold at the end of the life (servers, network, their spares).
    pub fn resaleable_usd(&self) -> f64 {
        self.server_capex_usd + self.server_spares_usd + self.network_capex_usd + self.network_spares_usd
    }
}

/// Money over time: monthly discounting of a yearly rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Discounting {
    /// Discount factor of one month: (1 + r)^(-1/12).
    monthly_factor: f64,
    /// Months of the life (12 x years; may be fractional).
    months: f64,
    /// monthly_factor ^ months, the end-of-life factor, computed once (`life_annuity` and `end_factor` read it).
    life_factor: f64,
}

impl Discounting {
    pub fn new(yearly_rate: f64, years: f64) -> Self {
        let (monthly_factor, months) = ((1.0 + yearly_rate).powf(-1.0 / 12.0), 12.0 * years);
        Discounting { monthly_factor, months, life_factor: monthly_factor.powf(months) }
    }

    /// Discount factor of one month: (1 + r)^(-1/12).
    pub fn monthly_factor(&self) -> f64 {
        self.monthly_factor
    }

    /// Months of the life (12 x years; may be fractional).
    pub fn months(&self) -> f64 {
        self.months
    }

    /// v (1 - v^m) / (1 - v) with v^m given; m at no discounting.
    fn annuity_of(&self, months: f64, factor: f64) -> f64 {
        let v = self.monthly_factor;
        if (1.0 - v).abs() < 1e-15 {
            months
        } else {
            v * (1.0 - factor) / (1.0 - v)
        }
    }

    /// Present value of 1 paid at the end of each of the first `months` months: v (1 - v^m) / (1 - v); m at no
    /// discounting (the ordinary annuity-immediate, e.g. Brealey, Myers & Allen, Principles of Corporate Finance,
    /// ch. 2).
    pub fn annuity(&self, months: f64) -> f64 {
        self.annuity_of(months, self.monthly_factor.powf(months))
    }

    /// The annuity over the whole life.
    pub fn life_annuity(&self) -> f64 {
        self.annuity_of(self.months, self.life_factor)
    }

    /// Present value of 1 paid at the end of the life.
    pub fn end_factor(&self) -> f64 {
        self.life_factor
    }
}

/// The total cost of owning a cluster over its life, line by line.
#[derive(Clone, Debug, PartialEq)]
pub struct Tco {
    pub capex_usd: f64,
    /// Facility energy: IT power x PUE over busy hours, and x the idle fraction over idle hours.
    pub energy_usd_per_year: f64,
    /// Colocation, or the built facility's cost recovered over its life.
    pub facility_usd_per_year: f64,
    /// Network support, software subscriptions, NOS and fabric manager licences.
    pub support_usd_per_year: f64,
    /// Network operations: staff, and replacing failed parts.
    pub operations_usd_per_year: f64,
    /// Hardware resale at the end of the life (undiscounted).
    pub residual_usd: f64,
    pub discounting: Discounting,
    /// Busy seconds a month: utilisation x seconds a month.
    pub busy_s_per_month: f64,
}

impl Tco {
    pub fn new(cost: &ClusterCost, econ: &Economics) -> Self {
        let discounting = Discounting::new(econ.discount_rate, econ.amortization_years);
        let it_kw = cost.it_power_w / 1e3;
        let u = econ.utilisation;
        let load = u + (1.0 - u) * econ.idle_power_fraction;
        let energy_usd_per_year = it_kw * econ.pue * HOURS_PER_YEAR * load * econ.usd_per_kwh;
        let facility_usd_per_year = match econ.facility {
            FacilityMode::Colocation => it_kw * econ.colocation_usd_per_kw_month * 12.0,
            FacilityMode::Build => {
                // The construction cost as a level monthly payment over the facility's life at the same rate.
                let facility = Discounting::new(econ.discount_rate, econ.facility_life_years);
                it_kw * econ.facility_build_usd_per_kw / facility.life_annuity() * 12.0
            }
        };
        Tco {
            capex_usd: cost.capex_usd(),
            energy_usd_per_year,
            facility_usd_per_year,
            support_usd_per_year: cost.support_usd_per_year + cost.licences_usd_per_year,
            operations_usd_per_year: cost.staff_usd_per_year + cost.replacement_usd_per_year,
            residual_usd: cost.resaleable_usd() * econ.residual_fraction,
            discounting,
            busy_s_per_month: u * SECONDS_PER_MONTH,
        }
    }

    pub fn opex_usd_per_year(&self) -> f64 {
        self.energy_usd_per_year + self.facility_usd_per_year + self.support_usd_per_year + self.operations_usd_per_year
    }

    /// Present value of every cost over the life: capex + opex as monthly payments - the discounted residual.
    pub fn pv_usd(&self) -> f64 {
        let d = &self.discounting;
        self.capex_usd + self.opex_usd_per_year() / 12.0 * d.life_annuity() - self.residual_usd * d.end_factor()
    }

    /// Present value of the busy seconds over the life (busy seconds a month as a monthly annuity).
    pub fn pv_busy_s(&self) -> f64 {
        self.busy_s_per_month * self.discounting.life_annuity()
    }

    /// The levelised cost of one busy second: PV of the costs / PV of the busy seconds.
    pub fn usd_per_busy_s(&self) -> f64 {
        self.pv_usd() / self.pv_busy_s()
    }
}

/// Cost of running for `seconds`.
#[derive(Clone, Debug, PartialEq)]
pub struct RunCost {
    /// Facility energy: IT power x PUE x time.
    pub energy_j: f64,
    pub rent_usd: f64,
    /// The run's busy seconds at the cluster's levelised total cost of ownership.
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
    run_cost_at(seconds, gpus, cluster, prices, Tco::new(cluster, &prices.economics).usd_per_busy_s())
}

/// `run_cost` with the cluster's levelised cost of a busy second (`Tco::usd_per_busy_s`) already computed: the
/// same numbers, for the many runs of one cluster an evaluation stage prices.
pub fn run_cost_at(seconds: f64, gpus: u32, cluster: &ClusterCost, prices: &Prices, usd_per_busy_s: f64) -> RunCost {
    let econ: &Economics = &prices.economics;
    let energy_j = cluster.it_power_w * econ.pue * seconds;
    let rent_usd = gpus as f64 * prices.gpu.rent_usd_per_gpu_hour * seconds / SECONDS_PER_HOUR;
    let own_usd = seconds * usd_per_busy_s;
    RunCost { energy_j, rent_usd, own_usd }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::examples;

    /// Economics with nothing but what a test sets.
    fn bare() -> Prices {
        let mut p = examples::prices();
        p.economics = Economics {
            amortization_years: 4.0,
            pue: 1.0,
            usd_per_kwh: 0.0,
            gpu_power_fraction: 1.0,
            cost_mode: CostMode::Rent,
            discount_rate: 0.0,
            residual_fraction: 0.0,
            utilisation: 1.0,
            idle_power_fraction: 0.0,
            facility: FacilityMode::Colocation,
            colocation_usd_per_kw_month: 0.0,
            facility_build_usd_per_kw: 0.0,
            facility_life_years: 20.0,
            server_spares_fraction: 0.0,
            network_spares_fraction: 0.0,
            installation_fraction: 0.0,
            oob_usd_per_rack: 0.0,
            usd_per_fte_year: 0.0,
            gpu_lead_time_weeks: 0.0,
            optic_replacement_fraction_per_year: 0.0,
            switch_replacement_fraction_per_year: 0.0,
            nic_replacement_fraction_per_year: 0.0,
            replacement_labour_usd: 0.0,
        };
        p
    }

    #[test]
    fn idle_gpu_cost_from_first_principles() {
        // 1% of 16,384 GPUs is 163.84 GPUs; a day of them at $3/GPU-hour costs 163.84 x 24 x 3 = $11,796,
        // not the "$47K a day" sometimes quoted for this example.
        let mut prices = bare();
        prices.gpu.rent_usd_per_gpu_hour = 3.0;
        let whole = run_cost(SECONDS_PER_DAY, 16384, &ClusterCost::default(), &prices).rent_usd;
        assert!((0.01 * whole - 11796.48).abs() < 1e-6, "{}", 0.01 * whole);
    }

    #[test]
    fn undiscounted_ownership_is_straight_line_amortisation_plus_energy() {
        // $4M over 4 years, run for 1 year at 1 MW IT, busy all the time, no discounting:
        // $1M + 1 MW x 1.25 x 8,766 h x $0.1/kWh = $1M + $1.09575M.
        let mut prices = bare();
        (prices.economics.pue, prices.economics.usd_per_kwh) = (1.25, 0.1);
        let cluster = ClusterCost { servers: 1.0, server_capex_usd: 4e6, it_power_w: 1e6, ..ClusterCost::default() };
        let cost = run_cost(SECONDS_PER_YEAR, 1, &cluster, &prices);
        assert!((cost.own_usd - (1e6 + 1e3 * 1.25 * 8766.0 * 0.1)).abs() < 1e-3, "{}", cost.own_usd);
    }

    #[test]
    fn a_small_tco_by_hand() {
        // A 1-year life, 12% a year: v = 1.12^(-1/12) = 0.990600; annuity of 12 months = v (1 - v^12) / (1 - v)
        // = 0.9906004 x (1 - 1/1.12) / 0.0093996 = 11.2915. Capex: servers $1,000,000 + 10% spares + network
        // $200,000 + 5% spares + 5% installation + 2 racks x $5,000 = 1,100,000 + 210,000 + 10,000 + 10,000
        // = $1,330,000. Opex a year: 100 kW x PUE 1.2 x 8,766 h x (0.8 + 0.2 x 0.5) x $0.10 = $94,672.80 energy;
        // colocation 100 kW x $150 x 12 = $180,000; support 10% of $200,000 = $20,000; $294,672.80 in all, $24,556.07
        // a month. Residual 20% of (1,100,000 + 210,000) = $262,000, discounted by 1/1.12 = $233,928.57.
        // PV = 1,330,000 + 24,556.07 x 11.2915 - 233,928.57 = $1,373,347.
        let mut prices = bare();
        let e = &mut prices.economics;
        (e.amortization_years, e.discount_rate, e.pue, e.usd_per_kwh) = (1.0, 0.12, 1.2, 0.10);
        (e.utilisation, e.idle_power_fraction, e.colocation_usd_per_kw_month) = (0.8, 0.5, 150.0);
        (e.residual_fraction, e.server_spares_fraction) = (0.2, 0.1);
        let cluster = ClusterCost {
            server_capex_usd: 1e6,
            server_spares_usd: 1e5,
            network_capex_usd: 2e5,
            fabric_capex_usd: 2e5,
            network_spares_usd: 1e4,
            installation_usd: 1e4,
            oob_usd: 1e4,
            support_usd_per_year: 2e4,
            it_power_w: 1e5,
            ..ClusterCost::default()
        };
        let tco = Tco::new(&cluster, &prices.economics);
        let v: f64 = 1.12f64.powf(-1.0 / 12.0);
        let annuity = v * (1.0 - v.powi(12)) / (1.0 - v);
        assert!((annuity - 11.2915).abs() < 1e-4, "{annuity}");
        assert_eq!(tco.capex_usd, 1_330_000.0);
        assert!((tco.energy_usd_per_year - 94_672.8).abs() < 1e-6);
        assert!((tco.opex_usd_per_year() - 294_672.8).abs() < 1e-6);
        assert!((tco.residual_usd - 262_000.0).abs() < 1e-6);
        let pv = 1_330_000.0 + 294_672.8 / 12.0 * annuity - 262_000.0 / 1.12;
        assert!((tco.pv_usd() - pv).abs() < 1e-6 && (pv - 1_373_347.0).abs() < 1.0, "{}", tco.pv_usd());
        // A busy second costs the PV over the PV of the busy seconds: 0.8 x 2,629,800 s a month as an annuity.
        let busy = 0.8 * SECONDS_PER_MONTH * annuity;
        assert!((tco.usd_per_busy_s() - pv / busy).abs() < 1e-12);
    }

    #[test]
    fn a_built_facility_is_recovered_over_its_life() {
        // $10,000/kW over 20 years at 0% = $500/kW-year: 100 kW -> $50,000 a year.
        let mut prices = bare();
        let e = &mut prices.economics;
        (e.facility, e.facility_build_usd_per_kw, e.facility_life_years) = (FacilityMode::Build, 10_000.0, 20.0);
        let cluster = ClusterCost { it_power_w: 1e5, ..ClusterCost::default() };
        assert!((Tco::new(&cluster, &prices.economics).facility_usd_per_year - 50_000.0).abs() < 1e-6);
    }

    #[test]
    fn operations_licences_delay_and_stalls_by_hand() {
        // 1,024 GPUs on 8-GPU servers; parts: 1,024 NICs, 40 switches, 1,024 NIC optics, 1,000 switch optics.
        // Staff: (4 + 5 x 40 / 1,000) FTE x $260,000 x 1.1 = 4.2 x 286,000 = $1,201,200 a year.
        // Replacement: optics 1% of (1,024 x ($650 + $250) + 1,000 x ($1,250 + $250)) = 0.01 x 2,421,600
        // = $24,216; switches 3% of 40 x $36,250 = $43,500; NICs 0.5% of 1,024 x $2,450 = $12,544; $80,260 in all.
        // UFM: 1,024 endpoints x $150 = $153,600 a year on top of the NOS licences (none here).
        // Delay: 16 weeks against GPUs in 10: 6 weeks = 42 days = 1.3799 months. Stalls: 2 incidents x 1,200 s
        // over 0.8 x 31,557,600 busy s = 9.507e-5 of the busy time.
        let mut prices = bare();
        let (n, e) = (&mut prices.network, &mut prices.economics);
        (n.nic_usd, n.switch_usd, n.nic_optic_usd, n.switch_optic_usd, n.nos_usd_per_switch_year) =
            (2200.0, 36000.0, 650.0, 1250.0, 0.0);
        (n.ops_staff_fte, n.ops_staff_fte_per_1000_switches, n.ops_wage_premium_fraction) = (4.0, 5.0, 0.1);
        (n.fabric_manager_usd_per_endpoint_year, n.lead_time_weeks) = (150.0, 16.0);
        (n.incidents_per_year, n.incident_stall_s) = (2.0, 1200.0);
        (e.usd_per_fte_year, e.replacement_labour_usd, e.gpu_lead_time_weeks, e.utilisation) =
            (260_000.0, 250.0, 10.0, 0.8);
        (e.optic_replacement_fraction_per_year, e.switch_replacement_fraction_per_year) = (0.01, 0.03);
        e.nic_replacement_fraction_per_year = 0.005;
        let parts = NetworkParts {
            nics: 1024.0,
            switches: 40.0,
            nic_optics: 1024.0,
            switch_optics: 1000.0,
            ..NetworkParts::default()
        };
        let c = ClusterCost::new(1024, &examples::h100(), &prices, &parts, 0.0);
        assert!((c.staff_usd_per_year - 1_201_200.0).abs() < 1e-6, "{}", c.staff_usd_per_year);
        assert!((c.replacement_usd_per_year - 80_260.0).abs() < 1e-6, "{}", c.replacement_usd_per_year);
        assert!((c.licences_usd_per_year - 153_600.0).abs() < 1e-9);
        assert!((c.delay_months - 42.0 / (365.25 / 12.0)).abs() < 1e-12 && (c.delay_months - 1.3799).abs() < 1e-4);
        assert!((c.stall_fraction - 2400.0 / (0.8 * SECONDS_PER_YEAR)).abs() < 1e-15);
        // A fabric ready before the GPUs delays nothing.
        prices.network.lead_time_weeks = 8.0;
        assert_eq!(ClusterCost::new(1024, &examples::h100(), &prices, &parts, 0.0).delay_months, 0.0);
        // Staff and replacements are opex of the total cost of ownership.
        let tco = Tco::new(&c, &prices.economics);
        assert!((tco.operations_usd_per_year - 1_281_460.0).abs() < 1e-6);
        assert!(
            (tco.opex_usd_per_year()
                - tco.operations_usd_per_year
                - tco.support_usd_per_year
                - tco.energy_usd_per_year
                - tco.facility_usd_per_year)
                .abs()
                < 1e-9
        );
    }
}
