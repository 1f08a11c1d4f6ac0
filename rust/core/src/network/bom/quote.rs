//! The network's bill of materials priced as a quote lists it: capex lines, power, spares, installation,
//! out-of-band management, and support and licences per year.

use crate::error::ConfigError;
use crate::hardware::{FabricSpec, GpuSpec, ScaleUpSpec, TopologySpec};
use crate::network::topology::Network;
use crate::prices::Prices;

use super::{parts, tiers, Cabling, NetworkParts};

/// Capital cost of the network, line by line, as a quote lists it (USD).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct NetworkCapex {
    pub nics: f64,
    pub switches: f64,
    pub optics: f64,
    pub copper: f64,
    pub active_copper: f64,
    pub fibre: f64,
    /// The fabric's management hosts and licences (SHARP's aggregation manager, UFM), once.
    pub fabric_manager: f64,
    /// NVLink switch trays of the scale-up domains.
    pub nvlink_trays: f64,
}

impl NetworkCapex {
    pub fn new(parts: &NetworkParts, switch_trays: f64, prices: &Prices) -> Self {
        let net = &prices.network;
        NetworkCapex {
            nics: parts.nics * net.nic_usd,
            switches: parts.switches * net.switch_usd + parts.upper_switches() * net.spine_switch_premium_usd,
            optics: parts.nic_optics * net.nic_optic_usd + parts.switch_optics * net.switch_optic_usd,
            copper: parts.dac_cables * net.dac_usd,
            active_copper: parts.acc_cables * net.acc_usd,
            fibre: parts.fibres * net.fibre_usd,
            fabric_manager: net.fabric_manager_usd,
            nvlink_trays: switch_trays * prices.scale_up.switch_tray_usd,
        }
    }

    /// The hardware: every line.
    pub fn total(&self) -> f64 {
        self.nics
            + self.switches
            + self.optics
            + self.copper
            + self.active_copper
            + self.fibre
            + self.fabric_manager
            + self.nvlink_trays
    }

    /// The scale-out fabric's share (without NVLink trays): what a fabric premium scales.
    pub fn fabric(&self) -> f64 {
        self.total() - self.nvlink_trays
    }
}

/// Network power: NICs, switches, modules and NVLink trays (passive copper draws < 0.1 W, counted as 0).
pub fn network_power_w(parts: &NetworkParts, switch_trays: f64, prices: &Prices) -> f64 {
    let net = &prices.network;
    parts.nics * net.nic_w
        + parts.switches * net.switch_w
        + parts.nic_optics * net.nic_optic_w
        + parts.switch_optics * net.switch_optic_w
        + switch_trays * prices.scale_up.switch_tray_w
}

/// The network's bill of materials for a cluster: parts, NVLink switch trays, the quote's lines, capex and power.
#[derive(Clone, Debug, PartialEq)]
pub struct Bom {
    /// Switch tiers as built (0 for a torus, 1 for a dragonfly's routers).
    pub tiers: u32,
    pub parts: NetworkParts,
    pub nvlink_switch_trays: f64,
    pub capex: NetworkCapex,
    /// Network hardware: every line of `capex`.
    pub network_capex_usd: f64,
    /// Spare network parts (a fraction of the hardware).
    pub spares_usd: f64,
    /// Cabling, installation and testing (a fraction of the hardware).
    pub installation_usd: f64,
    /// Compute racks, each with an out-of-band management switch.
    pub racks: f64,
    pub oob_usd: f64,
    /// Support and software subscription per year (a fraction of the fabric's hardware).
    pub support_usd_per_year: f64,
    /// NOS licences per year.
    pub licences_usd_per_year: f64,
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
    fabric.check_topology(topology)?;
    let network = Network::new(fabric, topology, gpus, gpu.server_gpus);
    let parts = parts(&network, &Cabling::new(&network, topology, prices));
    let trays = scale_up.switch_trays(gpus);
    Ok(Bom::priced(&network, parts, trays, gpus, prices))
}

impl Bom {
    /// Price `parts` (of `network`, with `trays` NVLink switch trays) for `gpus` GPUs.
    pub fn priced(network: &Network, parts: NetworkParts, trays: f64, gpus: u32, prices: &Prices) -> Bom {
        let econ = &prices.economics;
        let capex = NetworkCapex::new(&parts, trays, prices);
        let hardware = capex.total();
        let racks = (gpus as f64 / prices.gpu.gpus_per_rack).ceil();
        Bom {
            tiers: tiers(network),
            nvlink_switch_trays: trays,
            network_capex_usd: hardware,
            spares_usd: hardware * econ.network_spares_fraction,
            installation_usd: hardware * econ.installation_fraction,
            racks,
            oob_usd: racks * econ.oob_usd_per_rack,
            support_usd_per_year: capex.fabric() * prices.network.support_fraction_per_year,
            licences_usd_per_year: parts.switches * prices.network.nos_usd_per_switch_year,
            network_power_w: network_power_w(&parts, trays, prices),
            capex,
            parts,
        }
    }
}

crate::record! {
    /// The bill of materials as `scalefront bom` lists it: counts as whole numbers, then the capex lines, the
    /// yearly lines and power (USD, W).
    #[derive(Clone, Debug, PartialEq)]
    pub struct BomSheet {
        pub gpus: u32,
        /// Switch tiers as built (0 for a torus, 1 for a dragonfly's routers).
        pub tiers: u32,
        /// Switches per tier, leaf first.
        pub switches_by_tier: Vec<i64>,
        pub nics: i64,
        pub switches: i64 => "switches_total",
        pub nvlink_switch_trays: i64,
        pub cables: i64,
        pub host_links: i64,
        pub switch_links: i64,
        pub copper_links: i64,
        pub dac_cables: i64,
        pub active_copper_links: i64,
        pub acc_cables: i64,
        pub fibres: i64,
        /// Optical modules: NIC-side plus switch-side.
        pub transceivers: i64,
        pub nic_optics: i64,
        pub switch_optics: i64,
        pub optical_port_ends: i64,
        pub racks: i64,
        pub nics_usd: f64,
        pub switches_usd: f64,
        pub optics_usd: f64,
        pub copper_usd: f64,
        pub active_copper_usd: f64,
        pub fibre_usd: f64,
        pub fabric_manager_usd: f64,
        pub nvlink_trays_usd: f64,
        /// Network hardware: every capex line above.
        pub network_capex_usd: f64,
        pub spares_usd: f64,
        pub installation_usd: f64,
        pub oob_usd: f64,
        pub support_usd_per_year: f64,
        pub licences_usd_per_year: f64,
        pub network_power_w: f64,
    }
}

impl BomSheet {
    /// The sheet of `bom`, for `gpus` GPUs.
    pub fn new(gpus: u32, bom: &Bom) -> Self {
        let (p, c) = (&bom.parts, &bom.capex);
        let count = |n: f64| n as i64;
        BomSheet {
            gpus,
            tiers: bom.tiers,
            switches_by_tier: p.switches_by_tier.iter().map(|&n| count(n)).collect(),
            nics: count(p.nics),
            switches: count(p.switches),
            nvlink_switch_trays: count(bom.nvlink_switch_trays),
            cables: count(p.cables),
            host_links: count(p.host_links),
            switch_links: count(p.switch_links),
            copper_links: count(p.copper_links),
            dac_cables: count(p.dac_cables),
            active_copper_links: count(p.active_copper_links),
            acc_cables: count(p.acc_cables),
            fibres: count(p.fibres),
            transceivers: count(p.transceivers),
            nic_optics: count(p.nic_optics),
            switch_optics: count(p.switch_optics),
            optical_port_ends: count(p.optical_port_ends),
            racks: count(bom.racks),
            nics_usd: c.nics,
            switches_usd: c.switches,
            optics_usd: c.optics,
            copper_usd: c.copper,
            active_copper_usd: c.active_copper,
            fibre_usd: c.fibre,
            fabric_manager_usd: c.fabric_manager,
            nvlink_trays_usd: c.nvlink_trays,
            network_capex_usd: bom.network_capex_usd,
            spares_usd: bom.spares_usd,
            installation_usd: bom.installation_usd,
            oob_usd: bom.oob_usd,
            support_usd_per_year: bom.support_usd_per_year,
            licences_usd_per_year: bom.licences_usd_per_year,
            network_power_w: bom.network_power_w,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hardware::TopologyKind;
    use crate::network::topology::tests::topo;
    use crate::records::Record;

    #[test]
    fn a_quote_adds_spares_installation_management_and_yearly_support() {
        // 512 GPUs, radix 64, shared rail tree, all optical, twin-port modules: 16 leaves + 8 spines, 512 NICs,
        // 512 NIC modules, (512 + 2 x 512) / 2 = 768 switch modules, 1,024 fibres. Prices: NIC 2,000, switch
        // 30,000, NIC module 600, switch module 1,200, fibre 100 -> 1,024,000 + 720,000 + 307,200 + 921,600 +
        // 102,400 = 3,075,200. Spares 3% = 92,256; installation 5% = 153,760; 16 racks of 32 GPUs x 4,000 =
        // 64,000; support 10%/yr = 307,520; NOS 1,000/switch/yr = 24,000.
        let mut prices = crate::examples::prices();
        let net = &mut prices.network;
        (net.nic_usd, net.switch_usd, net.nic_optic_usd, net.switch_optic_usd, net.fibre_usd) =
            (2000.0, 30000.0, 600.0, 1200.0, 100.0);
        (net.switch_ports_per_optic, net.dac_reach_m) = (2.0, 0.0);
        (net.support_fraction_per_year, net.nos_usd_per_switch_year) = (0.10, 1000.0);
        let econ = &mut prices.economics;
        (econ.network_spares_fraction, econ.installation_fraction, econ.oob_usd_per_rack) = (0.03, 0.05, 4000.0);
        prices.gpu.gpus_per_rack = 32.0;
        let far = TopologySpec { host_link_m: 20.0, ..topo(TopologyKind::RailFatTree, 1.0) };
        let b = bill_of_materials(
            512,
            &crate::examples::h100(),
            &crate::examples::nvlink4(),
            &FabricSpec { switch_radix: 64, ..crate::examples::ib_ndr() },
            &far,
            &prices,
        )
        .unwrap();
        assert_eq!((b.parts.switches, b.parts.switch_optics, b.parts.fibres), (24.0, 768.0, 1024.0));
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6;
        assert!(close(b.network_capex_usd, 3_075_200.0), "{}", b.network_capex_usd);
        assert!(close(b.spares_usd, 92_256.0) && close(b.installation_usd, 153_760.0));
        assert!(close(b.oob_usd, 64_000.0) && close(b.support_usd_per_year, 307_520.0));
        assert!(close(b.licences_usd_per_year, 24_000.0));
        // The sheet `scalefront bom` prints counts the same parts as whole numbers.
        let sheet = BomSheet::new(512, &b);
        assert_eq!((sheet.switches, sheet.switch_optics, sheet.fibres, sheet.racks), (24, 768, 1024, 16));
        assert_eq!((sheet.switches_by_tier, sheet.network_capex_usd), (vec![16, 8], b.network_capex_usd));
    }

    #[test]
    fn the_sheet_has_the_keys_scalefront_bom_prints() {
        // `scalefront bom --json` prints these after the request's names, in this order (README, "Network bill of
        // materials"); renaming a field must not rename a key.
        let keys: Vec<&str> = BomSheet::describe().fields.iter().map(|f| f.key).collect();
        let printed = "gpus tiers switches_by_tier nics switches_total nvlink_switch_trays cables host_links \
            switch_links copper_links dac_cables active_copper_links acc_cables fibres transceivers nic_optics switch_optics \
            optical_port_ends racks nics_usd switches_usd optics_usd copper_usd active_copper_usd fibre_usd \
            fabric_manager_usd nvlink_trays_usd network_capex_usd spares_usd \
            installation_usd oob_usd support_usd_per_year licences_usd_per_year network_power_w";
        assert_eq!(keys, printed.split_whitespace().collect::<Vec<_>>());
    }
}
