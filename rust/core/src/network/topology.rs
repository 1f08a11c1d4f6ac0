//! Topology math: how many switch tiers a cluster needs, how many switches a message crosses and how much of a
//! NIC's bandwidth a communication group keeps when its traffic leaves a leaf. The parts the network is built
//! from are counted in `crate::network::bom` (`bom::parts(&network, ...)`).

use crate::hardware::{FabricSpec, LoadBalancing, RailPlanes, TopologyKind, TopologySpec};
use crate::network::loadbalance::{crossing_slowdown, Paths};
use crate::network::placement::GroupPlacement;

/// The traffic a collective puts on the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Traffic {
    /// Each member talks to its ring/tree neighbours (all-reduce, reduce-scatter, all-gather) or to the next
    /// pipeline stage: a message crosses a leaf boundary only where the group does.
    Neighbour,
    /// Each member talks to every other member (expert all-to-all).
    AllToAll,
}

/// A built network: the topology applied to a cluster of `gpus` GPUs on a fabric.
#[derive(Clone, Debug, PartialEq)]
pub struct Network {
    pub(crate) kind: TopologyKind,
    oversubscription: f64,
    load_balancing: LoadBalancing,
    load_balance_efficiency: f64,
    /// Sub-flows per NIC port that ECMP hashes separately (channels x queue pairs).
    flows_per_port: f64,
    /// Leaf uplink port speed / NIC port speed.
    uplink_speedup: f64,
    /// Share of each collective's leaf-local traffic that a fragmented placement pushes across leaves (0: one job
    /// placed contiguously by the scheduler).
    fragmentation: f64,
    /// Each NIC port split over two leaves (dual-ToR).
    pub(crate) dual_tor: bool,
    /// Switch time per hop (port-to-port, plus a packet's serialisation when store-and-forward).
    hop_latency_s: f64,
    tail_latency_factor: f64,
    in_network_groups_per_leaf: u32,
    pub(crate) radix: f64,
    /// Switch ports at each leaf that face servers: k r / (r + 1) for oversubscription r.
    pub(crate) leaf_down_ports: f64,
    pub tiers: u32,
    /// Consecutive GPUs whose same-rail traffic stays inside one leaf (or dragonfly group).
    leaf_span_gpus: f64,
    /// GPUs under one 2-tier block (leaf-spine pod) of a 3-tier tree.
    pod_span_gpus: f64,
    pub(crate) endpoints: f64,
    /// Independent trees: one per rail (GPU index x NIC port) for a per-rail-plane fat-tree, else one.
    pub(crate) planes: f64,
    links_per_gpu: f64,
    pub(crate) server_gpus: f64,
}

/// Independent trees of the network. A per-rail-plane fat-tree is one fabric per rail: NIC port j of GPU i of every
/// server joins plane (i, j); cross-rail traffic first moves over NVLink to the GPU on the right rail (NCCL PXN).
/// A shared rail-optimized tree has rail-aligned leaves under one set of spines (DGX SuperPOD RA): one tree.
fn planes(topology: &TopologySpec, server_ports: f64, endpoints: f64) -> f64 {
    if topology.kind == TopologyKind::RailFatTree && topology.rail_planes == RailPlanes::PerRail {
        server_ports.min(endpoints).max(1.0)
    } else {
        1.0
    }
}

/// Tiers of a folded Clos of radix k holding `endpoints` ports: one switch holds k endpoints; a leaf-spine holds
/// k leaves x k_down; each further tier multiplies by k/2 (Al-Fares et al. SIGCOMM 2008, Sec. 2.2: k^2/2 for 2
/// tiers, k^3/4 for 3, non-blocking).
fn clos_tiers(endpoints: f64, k: f64, leaf_down_ports: f64) -> u32 {
    let mut tiers = 1;
    if endpoints > k {
        tiers = 2;
        let mut capacity = leaf_down_ports * k;
        while endpoints > capacity {
            tiers += 1;
            capacity *= k / 2.0;
        }
    }
    tiers
}

/// Consecutive GPUs whose same-rail traffic stays inside one leaf (or dragonfly group), by topology kind.
fn leaf_span_gpus(topology: &TopologySpec, k: f64, leaf_down_ports: f64, links_per_gpu: f64, server_gpus: f64) -> f64 {
    match topology.kind {
        // All NICs of a server on the same leaf: whole servers per leaf (at least one).
        TopologyKind::FatTree => (leaf_down_ports / links_per_gpu / server_gpus).floor().max(1.0) * server_gpus,
        // One leaf per rail: rail i of up to rail_group_nodes servers.
        TopologyKind::RailFatTree => (topology.rail_group_nodes as f64).min(leaf_down_ports).max(1.0) * server_gpus,
        // Balanced dragonfly of radix k: p = k/4 terminals, a = k/2 routers per group (Kim et al. 2008, Sec. 3).
        TopologyKind::Dragonfly => (k / 4.0 * k / 2.0 / links_per_gpu).max(server_gpus),
        TopologyKind::Torus3d => server_gpus,
    }
}

impl Network {
    pub fn new(fabric: &FabricSpec, topology: &TopologySpec, gpus: u32, server_gpus: u32) -> Self {
        let k = fabric.switch_radix as f64;
        let r = topology.oversubscription;
        let leaf_down_ports = (k * r / (r + 1.0)).floor().max(1.0);
        let links_per_gpu = fabric.ports_per_gpu();
        let endpoints = gpus as f64 * links_per_gpu;
        let server_gpus_f = server_gpus as f64;
        let planes = planes(topology, server_gpus_f * links_per_gpu, endpoints);
        let tiers = clos_tiers((endpoints / planes).ceil(), k, leaf_down_ports);
        let leaf_span_gpus = if tiers == 1 {
            f64::INFINITY
        } else {
            leaf_span_gpus(topology, k, leaf_down_ports, links_per_gpu, server_gpus_f)
        };
        Network {
            kind: topology.kind,
            oversubscription: r,
            load_balancing: fabric.load_balancing,
            load_balance_efficiency: fabric.load_balance_efficiency,
            flows_per_port: fabric.flows_per_port(),
            uplink_speedup: fabric.uplink_speedup,
            fragmentation: 0.0,
            dual_tor: fabric.dual_tor,
            hop_latency_s: fabric.hop_latency_s(),
            tail_latency_factor: fabric.tail_latency_factor,
            in_network_groups_per_leaf: fabric.in_network_groups_per_leaf,
            radix: k,
            leaf_down_ports,
            tiers,
            leaf_span_gpus,
            pod_span_gpus: leaf_down_ports * k / links_per_gpu * planes,
            endpoints,
            planes,
            links_per_gpu,
            server_gpus: server_gpus_f,
        }
    }

    /// The network with a job placed so that a share `fragmentation` of each collective's leaf-local traffic
    /// crosses leaves (`Training::placement`: 0 = contiguous).
    pub fn placed(mut self, fragmentation: f64) -> Self {
        self.fragmentation = fragmentation.clamp(0.0, 1.0);
        self
    }

    /// Share of a member's traffic that leaves its leaf: `crossing` with the job placed contiguously, plus the
    /// fragmented share of the rest (a multi-tenant placement scatters the job's ranks over leaves that other jobs
    /// share, so neighbours the scheduler would have kept on one leaf sit on another).
    fn crossing_share(&self, crossing: f64) -> f64 {
        crossing + self.fragmentation * (1.0 - crossing)
    }

    /// Servers one leaf serves (a dragonfly router's terminals; one for a torus): all NICs of whole servers on a
    /// fat-tree leaf, one port of each server of its rail group on a rail leaf.
    pub fn servers_per_leaf(&self, topology: &TopologySpec) -> f64 {
        let ports_per_server = self.links_per_gpu * self.server_gpus;
        match self.kind {
            TopologyKind::FatTree => (self.leaf_down_ports / ports_per_server).floor().max(1.0),
            TopologyKind::RailFatTree => (topology.rail_group_nodes as f64).min(self.leaf_down_ports).max(1.0),
            TopologyKind::Dragonfly => (self.radix / 4.0 / ports_per_server).max(1.0),
            TopologyKind::Torus3d => 1.0,
        }
    }

    fn leaves_spanned(&self, g: &GroupPlacement) -> f64 {
        (g.span_gpus() / self.leaf_span_gpus).ceil().max(1.0)
    }

    /// Side of the sub-torus (servers per dimension) a group spans.
    fn torus_side(&self, g: &GroupPlacement) -> f64 {
        (g.stride as f64 * g.size as f64 / self.server_gpus).max(1.0).cbrt()
    }

    /// Switches a message between two members of the group crosses (0 when the group is inside one domain).
    pub fn hops(&self, g: &GroupPlacement, traffic: Traffic) -> f64 {
        if g.domains <= 1 {
            return 0.0;
        }
        match self.kind {
            TopologyKind::FatTree | TopologyKind::RailFatTree => {
                if self.leaves_spanned(g) <= 1.0 && self.fragmentation == 0.0 {
                    1.0
                } else if g.span_gpus() <= self.pod_span_gpus || self.tiers <= 2 {
                    3.0
                } else {
                    2.0 * self.tiers as f64 - 1.0
                }
            }
            // Minimal route local-global-local: 3 routers across groups, 2 inside one (Kim et al. 2008, Sec. 3).
            TopologyKind::Dragonfly => {
                if self.leaves_spanned(g) <= 1.0 && self.fragmentation == 0.0 {
                    2.0
                } else {
                    3.0
                }
            }
            // Mean minimal hops of a k-ary 3-cube: 3k/4 (Dally & Towles 2004, Ch. 5); neighbours are 1 hop.
            TopologyKind::Torus3d => match traffic {
                Traffic::Neighbour => 1.0,
                Traffic::AllToAll => (0.75 * 3.0 * self.torus_side(g)).max(1.0),
            },
        }
    }

    /// Fraction of its NICs' achieved bandwidth a member of the group keeps on the network.
    ///
    /// Leaf-based topologies [derived, see README "Topology"]: every leaf runs the same collective for all the
    /// groups under it, and a fraction f of each group's traffic leaves the leaf (a ring crosses a leaf boundary
    /// on `leaves` of its `domains` hops); so f x (down ports) NIC-rate flows share the leaf's uplinks, (down
    /// ports) / r of them for oversubscription r, as the fabric's load-balance mechanism spreads them
    /// (`crate::network::loadbalance`). A ring runs at its slowest hop, so one crossing hop slows it all; all-to-all traffic
    /// pays per byte. Torus: rings use neighbour links (three edge-disjoint rings cover all six links);
    /// all-to-all is bound by the bisection, 4N/k channels of B/6 against N B / 2 of demand: 4 / (3 k)
    /// (Dally & Towles 2004, Ch. 5, bisection of a k-ary n-cube).
    pub fn bandwidth_factor(&self, g: &GroupPlacement, traffic: Traffic) -> f64 {
        if g.domains <= 1 {
            return 1.0;
        }
        if self.kind == TopologyKind::Torus3d {
            return match traffic {
                Traffic::Neighbour => 1.0,
                Traffic::AllToAll => (4.0 / (3.0 * self.torus_side(g))).min(1.0),
            };
        }
        let leaves = self.leaves_spanned(g);
        if leaves <= 1.0 && self.fragmentation == 0.0 {
            return 1.0;
        }
        let size = g.size as f64;
        match traffic {
            Traffic::Neighbour => {
                let contiguous = if leaves > 1.0 { (leaves / g.domains as f64).min(1.0) } else { 0.0 };
                let crossing = self.crossing_share(contiguous);
                1.0 / self.crossing_slowdown(g, crossing, self.flows_per_port)
            }
            Traffic::AllToAll => {
                let per_leaf = size / leaves;
                let contiguous = if leaves > 1.0 { 1.0 - (per_leaf - 1.0) / (size - 1.0) } else { 0.0 };
                let crossing = self.crossing_share(contiguous);
                // Every member sends to each peer off its leaf at once: that many more flows for ECMP to spread.
                let peers_off_leaf = (crossing * (size - 1.0)).max(1.0);
                let slowdown = self.crossing_slowdown(g, crossing, self.flows_per_port * peers_off_leaf);
                1.0 / ((1.0 - crossing) + crossing * slowdown)
            }
        }
    }

    /// Slowdown of the traffic that leaves a leaf when a fraction `crossing` of every NIC's traffic does, each
    /// NIC's share split into `sub_flows` separately routed flows.
    fn crossing_slowdown(&self, g: &GroupPlacement, crossing: f64, sub_flows: f64) -> f64 {
        let paths = Paths {
            flows: crossing * self.leaf_down_ports,
            uplinks: self.leaf_down_ports / self.oversubscription,
            sub_flows,
            stages: self.hashing_stages(g),
            speedup: self.uplink_speedup,
        };
        crossing_slowdown(self.load_balancing, self.load_balance_efficiency, &paths)
    }

    /// Links in series on which a leaf-crossing flow's path is chosen: up from the leaf and down into the
    /// destination leaf in a leaf-spine; twice that across the pods of a 3-tier tree; local and global links of a
    /// dragonfly.
    fn hashing_stages(&self, g: &GroupPlacement) -> f64 {
        if self.tiers > 2 && g.span_gpus() > self.pod_span_gpus {
            4.0
        } else {
            2.0
        }
    }

    /// One network message's latency beyond the NICs: the switches it crosses.
    pub fn switching_latency_s(&self, g: &GroupPlacement, traffic: Traffic) -> f64 {
        self.hops(g, traffic) * self.hop_latency_s
    }

    /// Latency-bound network time under load / unloaded (the fabric's tail: PFC pauses, incast, congestion
    /// control); 1 on a lossless credit-based fabric.
    pub fn tail_latency_factor(&self) -> f64 {
        self.tail_latency_factor
    }

    /// Communication groups whose members share one leaf, all running the same collective at once: the leaf's
    /// GPUs over the group's members on it (a rail leaf serves one rail: the group's members on that rail).
    pub fn groups_per_leaf(&self, g: &GroupPlacement) -> f64 {
        let leaves = self.leaves_spanned(g);
        let members_on_span = g.size as f64 / leaves;
        let span = self.leaf_span_gpus.min(self.endpoints / self.links_per_gpu);
        let groups = match self.kind {
            TopologyKind::RailFatTree => {
                let rails = (g.per_domain as f64).min(self.server_gpus).max(1.0);
                (span / self.server_gpus) / (members_on_span / rails)
            }
            _ => span / members_on_span,
        };
        groups.max(1.0)
    }

    /// Fraction of its NICs' bandwidth a member keeps when the switches reduce (SHARP), or None when the group
    /// cannot reduce in the network alongside the other groups on its leaves. Each leaf sends one stream per group
    /// up its aggregation tree, on paths the aggregation manager sets (no hashing). Quantum (HDR) runs one
    /// streaming aggregation tree per switch, Quantum-2 one per port (NVIDIA SHARP 3.13.0 docs, "General
    /// Information"); a synchronous step waits for the groups that fell back to a ring.
    pub fn in_network_bandwidth_factor(&self, g: &GroupPlacement) -> Option<f64> {
        let groups = self.groups_per_leaf(g);
        if self.in_network_groups_per_leaf != 0 && groups > self.in_network_groups_per_leaf as f64 {
            return None;
        }
        if g.domains <= 1 || (self.leaves_spanned(g) <= 1.0 && self.fragmentation == 0.0) {
            return Some(1.0);
        }
        let uplinks = self.leaf_down_ports / self.oversubscription;
        Some(1.0 / (groups / uplinks).max(1.0))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn fabric(radix: u32) -> FabricSpec {
        FabricSpec {
            efficiency: 0.9,
            nic_latency_s: 2e-6,
            switch_radix: radix,
            in_network_reduction_efficiency: 0.0,
            load_balance_efficiency: 0.8,
            ..crate::examples::ib_ndr()
        }
    }
    pub(crate) fn topo(kind: TopologyKind, r: f64) -> TopologySpec {
        TopologySpec {
            kind,
            oversubscription: r,
            rail_group_nodes: 32,
            rail_planes: RailPlanes::Shared,
            host_link_m: 2.0,
        }
    }

    #[test]
    fn tiers_follow_the_folded_clos_capacity() {
        // Radix 64, non-blocking: 2 tiers hold k^2/2 = 2,048 hosts, 3 tiers k^3/4 = 65,536 (Al-Fares et al. 2008).
        let tiers = |n| Network::new(&fabric(64), &topo(TopologyKind::FatTree, 1.0), n, 8).tiers;
        assert_eq!((tiers(64), tiers(65), tiers(2048), tiers(2049), tiers(65536)), (1, 2, 2, 3, 3));
        // A rail-optimized tree with shared spines is one tree over every NIC (DGX SuperPOD H100/B200 RA: a core
        // tier from 4,096 GPUs); eight per-rail planes of 2,048 stay at 2 tiers up to 16,384 GPUs.
        let shared = Network::new(&fabric(64), &topo(TopologyKind::RailFatTree, 1.0), 16384, 8);
        assert_eq!(shared.tiers, 3);
        let planes = TopologySpec { rail_planes: RailPlanes::PerRail, ..topo(TopologyKind::RailFatTree, 1.0) };
        assert_eq!(Network::new(&fabric(64), &planes, 16384, 8).tiers, 2);
    }

    #[test]
    fn ring_inside_one_leaf_keeps_full_bandwidth_and_pays_oversubscription_across() {
        let net = Network::new(&fabric(64), &topo(TopologyKind::FatTree, 2.0), 4096, 8);
        // 42 down ports -> 5 servers (40 GPUs) per leaf. A DP group of 4 servers at stride 8: one leaf.
        let inside = GroupPlacement::new(4, 8, 8);
        assert_eq!(net.bandwidth_factor(&inside, Traffic::Neighbour), 1.0);
        assert_eq!(net.hops(&inside, Traffic::Neighbour), 1.0);
        // One member per leaf (stride 64 > 40): every hop crosses, uplinks at 1/2 -> 0.8 / 2.
        let spread = GroupPlacement::new(16, 64, 8);
        assert!((net.bandwidth_factor(&spread, Traffic::Neighbour) - 0.4).abs() < 1e-12);
        assert_eq!(net.hops(&spread, Traffic::Neighbour), 3.0);
    }

    #[test]
    fn rail_optimized_keeps_same_rail_traffic_in_one_leaf() {
        // 32 servers per rail group: a DP group at stride 8 over 32 servers stays on its rail leaf.
        let net = Network::new(&fabric(64), &topo(TopologyKind::RailFatTree, 1.0), 4096, 8);
        let g = GroupPlacement::new(32, 8, 8);
        assert_eq!(net.hops(&g, Traffic::Neighbour), 1.0);
        assert_eq!(net.bandwidth_factor(&g, Traffic::Neighbour), 1.0);
        let plain = Network::new(&fabric(64), &topo(TopologyKind::FatTree, 1.0), 4096, 8);
        assert_eq!(plain.hops(&g, Traffic::Neighbour), 3.0);
    }

    #[test]
    fn torus_all_to_all_is_bisection_bound() {
        // 512 servers = 8 x 8 x 8: 4 / (3 * 8) = 1/6.
        let net = Network::new(&fabric(64), &topo(TopologyKind::Torus3d, 1.0), 4096, 8);
        let g = GroupPlacement::new(512, 8, 8);
        assert!((net.bandwidth_factor(&g, Traffic::AllToAll) - 1.0 / 6.0).abs() < 1e-9);
        assert_eq!(net.bandwidth_factor(&g, Traffic::Neighbour), 1.0);
    }
}
