//! Which host links are copper: rack geometry and cable reach.
//!
//! A leaf that sits in its servers' racks (a top-of-rack fat-tree, a dragonfly's routers) serves
//! `servers_per_leaf` servers from racks of `servers_per_rack`: its own rack's servers are the topology's
//! `host_link_m` away, those of the racks on either side about 5 m, farther racks about 10 m (Oracle multi-rack
//! cabling guides: leaf to spine "within Rack 1 ... 3m", to adjacent racks "5m", racks 4-8 "10m"; "Only optical
//! cables (with additional transceivers) are supported for lengths greater than 5 meters"). A link within the
//! fabric's passive copper reach is a DAC, within its active copper reach an ACC, else optical. A leaf away from
//! its servers (rail leaves in network racks: `host_link_m` beyond copper) is cabled optically throughout; a torus
//! wires every server to its neighbours at `host_link_m`.

use crate::hardware::{TopologyKind, TopologySpec};
use crate::network::topology::Network;
use crate::prices::Prices;

/// A host link to a server in a rack beside the leaf's (Oracle: "5m" to adjacent racks).
pub const ADJACENT_RACK_LINK_M: f64 = 5.0;
/// A host link to a server two or more racks from the leaf's (Oracle: "10m" to racks 4-8).
pub const FAR_RACK_LINK_M: f64 = 10.0;

/// How links are cabled: which share of the host links is copper, and how many switch ports one switch-side
/// module serves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cabling {
    /// Switch ports one switch-side module (or splitter cable) serves: 2 for a twin-port OSFP cage.
    pub switch_ports_per_optic: f64,
    /// Share of the host links on passive copper (DAC).
    pub passive_share: f64,
    /// Share of the host links on active copper (ACC); the rest are optical.
    pub active_share: f64,
    /// Host links per NIC port: 2 when each port is split over two leaves (dual-ToR), each at half the rate (so a
    /// switch cage serves twice as many).
    pub links_per_port: f64,
}

/// What a cable of `length_m` is at the fabric's lane rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Medium {
    Passive,
    Active,
    Optical,
}

fn medium(length_m: f64, prices: &Prices) -> Medium {
    let net = &prices.network;
    if net.dac_reach_m > 0.0 && length_m <= net.dac_reach_m {
        Medium::Passive
    } else if net.acc_reach_m > 0.0 && length_m <= net.acc_reach_m {
        Medium::Active
    } else {
        Medium::Optical
    }
}

impl Cabling {
    /// Every link optical, one module per port end: the plain count the closed forms give.
    pub const ALL_OPTICAL: Cabling =
        Cabling { switch_ports_per_optic: 1.0, passive_share: 0.0, active_share: 0.0, links_per_port: 1.0 };

    /// The cabling a topology, its racks and a fabric's parts imply.
    pub fn new(network: &Network, topology: &TopologySpec, prices: &Prices) -> Cabling {
        let mut shares = [0.0; 3];
        for (servers, length) in host_link_lengths(network, topology, prices) {
            shares[medium(length, prices) as usize] += servers;
        }
        let total: f64 = shares.iter().sum();
        Cabling {
            switch_ports_per_optic: prices.network.switch_ports_per_optic.max(1.0),
            passive_share: shares[Medium::Passive as usize] / total,
            active_share: shares[Medium::Active as usize] / total,
            links_per_port: if network.dual_tor { 2.0 } else { 1.0 },
        }
    }

    /// Every host link on passive copper (tests and closed forms).
    pub fn all_copper(switch_ports_per_optic: f64) -> Cabling {
        Cabling { switch_ports_per_optic, passive_share: 1.0, active_share: 0.0, links_per_port: 1.0 }
    }
}

/// (servers, cable length) of one leaf's host links: its own rack, the racks beside it, the racks beyond.
fn host_link_lengths(network: &Network, topology: &TopologySpec, prices: &Prices) -> Vec<(f64, f64)> {
    let own = topology.host_link_m;
    let in_rack = network.kind != TopologyKind::Torus3d && medium(own, prices) != Medium::Optical;
    if !in_rack {
        return vec![(1.0, own)];
    }
    let per_rack = (prices.gpu.gpus_per_rack / network.server_gpus).floor().max(1.0);
    let per_leaf = network.servers_per_leaf(topology);
    let here = per_leaf.min(per_rack);
    let beside = (per_leaf - here).min(2.0 * per_rack);
    let beyond = per_leaf - here - beside;
    vec![(here, own), (beside, own.max(ADJACENT_RACK_LINK_M)), (beyond, own.max(FAR_RACK_LINK_M))]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::examples::{fat_tree, ib_ndr, prices, rail_fat_tree, roce_400g};
    use crate::hardware::FabricSpec;

    fn cabling(fabric: &FabricSpec, topology: &TopologySpec, gpus_per_rack: f64) -> Cabling {
        let mut p = prices();
        p.gpu.gpus_per_rack = gpus_per_rack;
        (p.network.dac_reach_m, p.network.acc_reach_m) = (3.0, 5.0);
        Cabling::new(&Network::new(fabric, topology, 16384, 8), topology, &p)
    }

    #[test]
    fn a_leaf_wider_than_its_rack_reaches_the_next_racks_over_active_copper() {
        // The review's E10: RoCE 2:1 leaves of 85 down ports hold 10 eight-GPU servers, racks of 32 GPUs hold 4:
        // 4 in the leaf's rack on 2 m DAC, 6 in the racks beside it at 5 m (beyond the 3 m passive reach, within
        // the 5 m active reach): 40% passive, 60% active, none optical.
        let c = cabling(&roce_400g(), &fat_tree(2.0), 32.0);
        assert!((c.passive_share - 0.4).abs() < 1e-12 && (c.active_share - 0.6).abs() < 1e-12, "{c:?}");
        // InfiniBand 2:1 leaves of 42 ports: 5 servers, 4 in the rack and 1 beside it.
        let c = cabling(&ib_ndr(), &fat_tree(2.0), 32.0);
        assert!((c.passive_share - 0.8).abs() < 1e-12 && (c.active_share - 0.2).abs() < 1e-12, "{c:?}");
        // Meta's RoCE racks: two 8-GPU hosts and their leaf in one rack (16 GPUs per rack): a 16-port leaf
        // (radix 32 at 1:1) is all passive copper.
        let meta = FabricSpec { switch_radix: 32, ..roce_400g() };
        let c = cabling(&meta, &fat_tree(1.0), 16.0);
        assert_eq!((c.passive_share, c.active_share), (1.0, 0.0));
        // A non-blocking 128-port leaf (64 down = 8 servers) at 4 servers a rack: 4 passive, 4 active.
        let c = cabling(&roce_400g(), &fat_tree(1.0), 32.0);
        assert_eq!((c.passive_share, c.active_share), (0.5, 0.5));
    }

    #[test]
    fn leaves_in_network_racks_and_lanes_without_copper_are_optical() {
        // Rail leaves in network racks, 20 m away: optical throughout.
        let c = cabling(&ib_ndr(), &rail_fat_tree(), 32.0);
        assert_eq!((c.passive_share, c.active_share), (0.0, 0.0));
        // 800G on 200G-PAM4 lanes offers no passive or active copper here: every host link optical.
        let mut p = prices();
        (p.network.dac_reach_m, p.network.acc_reach_m) = (0.0, 0.0);
        let topology = fat_tree(2.0);
        let c = Cabling::new(&Network::new(&roce_400g(), &topology, 16384, 8), &topology, &p);
        assert_eq!((c.passive_share, c.active_share), (0.0, 0.0));
    }

    #[test]
    fn racks_farther_than_the_next_ones_need_optics() {
        // A 64-port leaf at 1:1 holds 4 servers; racks of one 8-GPU server: 1 here, 2 beside, 1 beyond (10 m).
        let c = cabling(&ib_ndr(), &fat_tree(1.0), 8.0);
        assert!((c.passive_share - 0.25).abs() < 1e-12 && (c.active_share - 0.5).abs() < 1e-12, "{c:?}");
    }
}
