//! The network's bill of materials, as a quote lists it: NIC ports, switches per tier, optical modules (NIC-side
//! single-port and switch-side twin-port modules, counted as modules, not port ends), copper DACs where a host
//! link is short enough, fibres, NVLink switch trays, and the lines a quote adds to the hardware (spares,
//! installation, out-of-band management, support and licences per year).
//!
//! Counting rules [derived; each checked by hand in the tests against NVIDIA's DGX SuperPOD reference tables]:
//! - fat-trees: leaves = ceil(endpoints / k_down), every tier above the leaf non-blocking (k/2 down, k/2 up), the
//!   top tier k down (Al-Fares et al. SIGCOMM 2008, Sec. 2.2); a third tier is the super-spine (core) that the
//!   SuperPOD references add beyond two tiers' reach;
//! - rail planes that fit one switch share it: floor(k / plane ports) planes per switch;
//! - a host link is passive copper when its length (the leaf's rack, the racks beside it, farther racks:
//!   `cabling`) is within the fabric's DAC reach, active copper within its ACC reach (one splitter cable per switch
//!   cage serves `switch_ports_per_optic` NICs), else optical (a module at each end, one fibre); every
//!   switch-to-switch link is optical;
//! - dragonfly: p = k/4 terminals, a = k/2 routers per group, h = k/4 global ports per router (Kim et al. ISCA
//!   2008, Sec. 3), local links inside each group, global links only between groups;
//! - 3-D torus: servers wired to their neighbours, no switches.
//!
//! The counts are here; `quote` prices them (capex lines, power, the lines a quote adds) for a cluster.

use crate::hardware::TopologyKind;
use crate::network::topology::Network;

mod cabling;
mod quote;

pub use cabling::{Cabling, ADJACENT_RACK_LINK_M, FAR_RACK_LINK_M};

pub use quote::{bill_of_materials, network_power_w, Bom, BomSheet, NetworkCapex};

/// The scale-out network's parts.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct NetworkParts {
    /// NIC ports (one per GPU per link).
    pub nics: f64,
    /// Switches per tier, leaf first (the third tier is the super-spine / core); routers for a dragonfly; none
    /// for a torus.
    pub switches_by_tier: Vec<f64>,
    pub switches: f64,
    /// Links: host links (NIC to leaf, router or neighbour) plus switch-to-switch links.
    pub cables: f64,
    /// Optical modules: `nic_optics + switch_optics`.
    pub transceivers: f64,
    /// NIC to leaf (router, or neighbour for a torus) links.
    pub host_links: f64,
    /// Switch-to-switch (router-to-router) links.
    pub switch_links: f64,
    /// Host links on passive copper.
    pub copper_links: f64,
    /// Copper cables (a splitter serves `switch_ports_per_optic` NICs).
    pub dac_cables: f64,
    /// Host links on active copper (ACC).
    pub active_copper_links: f64,
    /// Active copper cables (a splitter serves `switch_ports_per_optic` NICs).
    pub acc_cables: f64,
    /// Optical links, one fibre each.
    pub fibres: f64,
    /// Single-port modules at NICs.
    pub nic_optics: f64,
    /// Modules in switch cages.
    pub switch_optics: f64,
    /// Switch ports on optical links (two per twin-port module).
    pub optical_port_ends: f64,
}

/// Switch tiers of the topology as built: fat-tree tiers; 1 for a dragonfly's routers; 0 for a torus.
pub fn tiers(network: &Network) -> u32 {
    match network.kind {
        TopologyKind::FatTree | TopologyKind::RailFatTree => network.tiers,
        TopologyKind::Dragonfly => 1,
        TopologyKind::Torus3d => 0,
    }
}

/// Switches per tier and switch-to-switch links of one folded-Clos tree of `endpoints` ports with `tiers` tiers:
/// leaves use their down ports fully, each tier above is non-blocking, the top tier uses all k ports downward.
fn clos(network: &Network, endpoints: f64, tiers: u32) -> (Vec<f64>, f64) {
    let k = network.radix;
    if tiers <= 1 {
        return (vec![(endpoints / k).ceil()], 0.0);
    }
    let leaves = (endpoints / network.leaf_down_ports).ceil();
    let mut ports_up = leaves * (k - network.leaf_down_ports);
    let mut by_tier = vec![leaves];
    let mut links = ports_up;
    for tier in 2..=tiers {
        let top = tier == tiers;
        let count = (ports_up / if top { k } else { k / 2.0 }).ceil();
        by_tier.push(count);
        if !top {
            ports_up = count * k / 2.0;
            links += ports_up;
        }
    }
    (by_tier, links)
}

/// Fat-tree switches per tier and switch-to-switch links. One-tier rail planes that fit several to a switch share
/// it; deeper trees use ports fully across planes (a leaf or spine may serve two planes' ports).
fn fat_tree(network: &Network) -> (Vec<f64>, f64) {
    let n = network.endpoints;
    if network.tiers == 1 {
        let per_plane = (n / network.planes).ceil();
        let planes_per_switch = (network.radix / per_plane).floor().max(1.0);
        return (vec![(network.planes / planes_per_switch).ceil()], 0.0);
    }
    clos(network, n, network.tiers)
}

/// Dragonfly routers and router-to-router links: local links fully connect each group of up to a = k/2 routers,
/// every router's h = k/4 global ports are cabled only when there is more than one group.
fn dragonfly(network: &Network) -> (Vec<f64>, f64) {
    let k = network.radix;
    let routers = (network.endpoints / (k / 4.0)).ceil();
    let per_group = (k / 2.0).min(routers);
    let groups = (routers / per_group).ceil();
    // Routers spread evenly over the groups; a full group of a routers has a (a - 1) / 2 local links.
    let local = routers * ((routers / groups).ceil() - 1.0) / 2.0;
    let global = if groups > 1.0 { (routers * (k / 4.0) / 2.0).floor() } else { 0.0 };
    (vec![routers], (local + global).ceil())
}

/// The network's parts under the given cabling.
pub fn parts(network: &Network, cabling: &Cabling) -> NetworkParts {
    let n = network.endpoints;
    let per_module = cabling.switch_ports_per_optic.max(1.0);
    let (switches_by_tier, switch_links, host_links, host_on_switch) = match network.kind {
        TopologyKind::FatTree | TopologyKind::RailFatTree => {
            let (tiers, links) = fat_tree(network);
            (tiers, links, n * cabling.links_per_port, true)
        }
        TopologyKind::Dragonfly => {
            let (routers, links) = dragonfly(network);
            (routers, links, n * cabling.links_per_port, true)
        }
        // Servers wired directly to their neighbours: each cable joins two NIC ports.
        TopologyKind::Torus3d => (vec![], 0.0, (n / 2.0).floor(), false),
    };
    let copper_links = (host_links * cabling.passive_share).round();
    let active_copper_links = (host_links * cabling.active_share).round().min(host_links - copper_links);
    let optical_host_links = host_links - copper_links - active_copper_links;
    // A switch cage serves `per_module` NIC-rate ports, twice as many half-rate (dual-ToR) host links.
    let host_per_module = per_module * cabling.links_per_port;
    let cables = |links: f64| if host_on_switch { (links / host_per_module).ceil() } else { links };
    // NIC ends of optical host links: one per switch-facing NIC port, two per torus cable.
    let nic_optics = if host_on_switch { optical_host_links } else { 2.0 * optical_host_links };
    let host_port_ends = if host_on_switch { optical_host_links / cabling.links_per_port } else { 0.0 };
    let optical_port_ends = host_port_ends + 2.0 * switch_links;
    let switch_optics = (optical_port_ends / per_module).ceil();
    NetworkParts {
        nics: n,
        // + 0.0: an empty sum of f64 is -0.0, which printed as "switches -0" for a torus.
        switches: switches_by_tier.iter().sum::<f64>() + 0.0,
        switches_by_tier,
        cables: host_links + switch_links,
        transceivers: nic_optics + switch_optics,
        host_links,
        switch_links,
        copper_links,
        dac_cables: cables(copper_links),
        active_copper_links,
        acc_cables: cables(active_copper_links),
        fibres: optical_host_links + switch_links,
        nic_optics,
        switch_optics,
        optical_port_ends,
    }
}

impl NetworkParts {
    /// Switches above the leaf tier (spines and core): none for a dragonfly's routers or a torus.
    pub fn upper_switches(&self) -> f64 {
        self.switches_by_tier.iter().skip(1).sum::<f64>() + 0.0
    }

    /// Switches and links whose failure stops a job: all of them, but the leaves and host links when each NIC
    /// port reaches two leaves (dual-ToR: "each NIC port is connected to two separate ToR switches", Alibaba HPN,
    /// SIGCOMM 2024).
    pub fn single_points(&self, dual_tor: bool) -> (f64, f64) {
        if dual_tor {
            let leaves = self.switches_by_tier.first().copied().unwrap_or(0.0);
            (self.switches - leaves, self.switch_links)
        } else {
            (self.switches, self.cables)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hardware::{FabricSpec, RailPlanes, TopologySpec};
    use crate::network::topology::tests::topo;

    fn fabric(radix: u32) -> FabricSpec {
        FabricSpec { switch_radix: radix, ..crate::examples::ib_ndr() }
    }
    fn built(radix: u32, topology: &TopologySpec, gpus: u32) -> NetworkParts {
        parts(&Network::new(&fabric(radix), topology, gpus, 8), &Cabling::ALL_OPTICAL)
    }
    fn fat(r: f64) -> TopologySpec {
        topo(TopologyKind::FatTree, r)
    }
    fn rail() -> TopologySpec {
        topo(TopologyKind::RailFatTree, 1.0)
    }
    fn rail_planes() -> TopologySpec {
        TopologySpec { rail_planes: RailPlanes::PerRail, ..rail() }
    }

    #[test]
    fn full_fat_trees_match_closed_forms() {
        // Radix 64, non-blocking: 2 tiers hold k^2/2 = 2048 hosts with 3k/2 = 96 switches;
        // 3 tiers hold k^3/4 = 65536 hosts with 5k^2/4 = 5120 switches (Al-Fares et al. 2008).
        assert_eq!(built(64, &fat(1.0), 2048).switches, 96.0);
        assert_eq!(built(64, &fat(1.0), 65536).switches, 5120.0);
    }

    #[test]
    fn oversubscribed_two_tier_by_hand() {
        // Radix 64 at 2:1: leaves have floor(64*2/3) = 42 down, 22 up. 1024 hosts -> 25 leaves (1050 ports),
        // 550 uplinks -> ceil(550/64) = 9 spines. 34 switches, 1024 + 550 cables.
        let p = built(64, &fat(2.0), 1024);
        assert_eq!((p.switches_by_tier.clone(), p.switches, p.cables), (vec![25.0, 9.0], 34.0, 1574.0));
    }

    #[test]
    fn rail_optimized_tree_matches_the_dgx_superpod_b200_reference_table() {
        // NVIDIA DGX SuperPOD B200 RA, "DGX SuperPOD Architecture", larger SuperPOD component counts (DGX B200,
        // 8 x ConnectX-7 NDR per node, Quantum-2 radix 64): GPUs -> leaf / spine / core switches, and the cables
        // node-leaf = leaf-spine = spine-core = GPUs. By hand, one tree over every NIC: leaves = GPUs / 32;
        // two tiers reach k^2/2 = 2,048 NICs, so from 4,096 GPUs a core tier: spines = GPUs / 32 (k/2 down),
        // core = GPUs / 64 (k down).
        let table: [(u32, &[f64]); 6] = [
            (512, &[16.0, 8.0]),
            (1024, &[32.0, 16.0]),
            (2048, &[64.0, 32.0]),
            (4096, &[128.0, 128.0, 64.0]),
            (8192, &[256.0, 256.0, 128.0]),
            (16384, &[512.0, 512.0, 256.0]),
        ];
        for (gpus, tiers) in table {
            let p = built(64, &rail(), gpus);
            assert_eq!(p.switches_by_tier, tiers.to_vec(), "{gpus} GPUs");
            let n = gpus as f64;
            assert_eq!(p.cables, n * tiers.len() as f64, "{gpus} GPUs: one cable per NIC per tier boundary");
        }
        // DGX H100 SuperPOD RA, Table 4: 4 scalable units = 127 nodes, 1,016 GPUs: 32 leaf + 16 spine switches,
        // 1,016 node-leaf cables (1,020 with the UFM nodes) + 1,024 leaf-spine cables: ceil(1016/32) = 32
        // leaves, 32 x 32 = 1,024 uplinks over 16 spines.
        let p = built(64, &rail(), 1016);
        assert_eq!((p.switches_by_tier.clone(), p.cables), (vec![32.0, 16.0], 1016.0 + 1024.0));
    }

    #[test]
    fn small_rail_planes_share_a_high_radix_switch() {
        // The review's 512-GPU RoCE case: 8 rail planes of 64 NICs on 128-port switches. One tree per rail used
        // 8 half-empty switches; two planes fit a switch: 4 switches, one tier, no spine.
        let p = built(128, &rail_planes(), 512);
        assert_eq!((p.switches_by_tier.clone(), p.switch_links), (vec![4.0], 0.0));
        // At radix 64 each plane fills its switch: 8.
        assert_eq!(built(64, &rail_planes(), 512).switches_by_tier, vec![8.0]);
        // Large per-rail planes: 16,384 GPUs = 8 planes of 2,048 at radix 64, two tiers each: 8 x (64 + 32).
        assert_eq!(built(64, &rail_planes(), 16384).switches_by_tier, vec![512.0, 256.0]);
    }

    #[test]
    fn optics_are_counted_as_modules_and_short_host_links_as_copper() {
        // 16,384 GPUs, 3-tier non-blocking tree at radix 64, all optical, twin-port switch modules (the review,
        // section 1.2-b): 16,384 single-port NIC modules; switch ports on optical links = 16,384 (leaf down) +
        // 2 x 32,768 (two switch-to-switch tiers) = 81,920 -> 40,960 twin-port modules; 57,344 modules in all
        // (not 98,304 "transceivers"); 49,152 fibres.
        let net = Network::new(&fabric(64), &fat(1.0), 16384, 8);
        let optical = parts(&net, &Cabling { switch_ports_per_optic: 2.0, ..Cabling::ALL_OPTICAL });
        assert_eq!((optical.nic_optics, optical.switch_optics), (16384.0, 40960.0));
        assert_eq!((optical.transceivers, optical.fibres, optical.optical_port_ends), (57344.0, 49152.0, 81920.0));
        // With the NICs on in-rack leaves over splitter DACs: 8,192 copper cables, no NIC modules; the leaf
        // down ports need no modules: 65,536 / 2 = 32,768 switch modules; 32,768 fibres.
        let copper = parts(&net, &Cabling::all_copper(2.0));
        assert_eq!((copper.dac_cables, copper.copper_links, copper.nic_optics), (8192.0, 16384.0, 0.0));
        assert_eq!((copper.switch_optics, copper.fibres, copper.cables), (32768.0, 32768.0, 49152.0));
        // Network::parts keeps one module per optical port end.
        assert_eq!(parts(&net, &Cabling::ALL_OPTICAL).transceivers, 2.0 * parts(&net, &Cabling::ALL_OPTICAL).cables);
    }

    #[test]
    fn dual_tor_doubles_the_host_links_not_the_leaves_or_the_switch_modules() {
        // Alibaba HPN: each 400G NIC port split into 2 x 200G to two leaves; leaf bandwidth per GPU unchanged. 512
        // GPUs on a 1:1 radix-64 fat-tree, optical host links, twin-port modules: 1,024 host links (two per NIC),
        // 1,024 NIC-side modules at half the rate, the same 16 leaves and 8 spines, the same switch modules.
        let single = Network::new(&fabric(64), &fat(1.0), 512, 8);
        let dual = Network::new(&FabricSpec { dual_tor: true, ..fabric(64) }, &fat(1.0), 512, 8);
        let optical = |net: &Network| {
            let c = Cabling {
                switch_ports_per_optic: 2.0,
                links_per_port: if net.dual_tor { 2.0 } else { 1.0 },
                ..Cabling::ALL_OPTICAL
            };
            parts(net, &c)
        };
        let (s, d) = (optical(&single), optical(&dual));
        assert_eq!((s.host_links, d.host_links), (512.0, 1024.0));
        assert_eq!((s.nic_optics, d.nic_optics), (512.0, 1024.0));
        assert_eq!((s.switches_by_tier.clone(), s.switch_optics), (d.switches_by_tier.clone(), d.switch_optics));
        // A leaf failure no longer stops the job: only the 8 spines and the 512 leaf-spine links count.
        assert_eq!(d.single_points(true), (8.0, 512.0));
        assert_eq!(s.single_points(false), (24.0, 1024.0));
    }

    #[test]
    fn torus_and_dragonfly_counts_are_sensible() {
        // Torus, 4,096 GPUs: no switches, 0 tiers, 2,048 NIC-to-NIC cables, a module at each NIC end.
        let net = Network::new(&fabric(64), &topo(TopologyKind::Torus3d, 1.0), 4096, 8);
        let p = parts(&net, &Cabling { switch_ports_per_optic: 2.0, ..Cabling::ALL_OPTICAL });
        assert_eq!((tiers(&net), p.switches, p.switches_by_tier.len()), (0, 0.0, 0));
        assert_eq!((p.cables, p.nic_optics, p.switch_optics, p.fibres), (2048.0, 4096.0, 0.0, 2048.0));
        // Dragonfly at radix 64: p = 16 terminals per router -> 4,096 / 16 = 256 routers in groups of a = 32:
        // 8 groups; local 256 x 31 / 2 = 3,968 links; global 256 x 16 / 2 = 2,048; 1 tier.
        let net = Network::new(&fabric(64), &topo(TopologyKind::Dragonfly, 1.0), 4096, 8);
        let p = parts(&net, &Cabling::ALL_OPTICAL);
        assert_eq!((tiers(&net), p.switches, p.switch_links), (1, 256.0, 3968.0 + 2048.0));
        // 100 GPUs: 7 routers, one group, no global links: 7 x 6 / 2 = 21 local links.
        let p = parts(&Network::new(&fabric(64), &topo(TopologyKind::Dragonfly, 1.0), 100, 8), &Cabling::ALL_OPTICAL);
        assert_eq!((p.switches, p.switch_links), (7.0, 21.0));
        for n in [1, 7, 100, 4096, 100_000] {
            for kind in TopologyKind::ALL {
                let p = parts(&Network::new(&fabric(64), &topo(*kind, 1.0), n, 8), &Cabling::ALL_OPTICAL);
                for v in [p.switches, p.cables, p.transceivers, p.fibres] {
                    assert!(v >= 0.0 && v.fract() == 0.0 && !v.is_sign_negative(), "{kind:?} {n}: {v}");
                }
            }
        }
    }
}
