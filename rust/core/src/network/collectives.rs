//! Time of one collective over a communication group, with the algorithm a collective library would pick.
//!
//! Latency-bandwidth (alpha-beta) costs from Thakur, Rabenseifner & Gropp, IJHPCA 2005; bus-bandwidth
//! conventions from nccl-tests doc/PERFORMANCE.md (all-reduce moves 2(n-1)/n of the message per rank,
//! reduce-scatter and all-gather (n-1)/n); algorithm choice as NCCL's tuning model does it
//! (src/graph/tuning.cc: the minimum over ring, tree and in-network reduction of latency + size / bandwidth).
//! A ring that spans scale-up domains runs through every member at the pace of its slowest level: each NIC
//! carries (n-1)/n of the message per pass and each step lasts a network step; trees and in-network reduction
//! run hierarchically, S x max over levels of (D - 1) / (D W) (scaling book, "How to Think About GPUs").

use crate::hardware::{FabricSpec, ScaleUpSpec, NCCL_CHANNELS_PER_NIC};
use crate::network::nccl::{self, StepLatency};
use crate::network::placement::GroupPlacement;
use crate::network::topology::{Network, Traffic};

/// Fixed cost of launching one collective: NCCL's base latency for the low-latency protocol
/// (NVIDIA/nccl src/graph/tuning.cc, baseLat, LL: 6.6-6.8 us).
pub const COLLECTIVE_BASE_LATENCY_S: f64 = 6.8e-6;
/// Tree all-reduce reaches at most 92% of the bus bandwidth (NVIDIA/nccl src/graph/tuning.cc, Tree: 0.92 x busBw).
pub const TREE_BANDWIDTH_FRACTION: f64 = 0.92;
/// Latency NCCL charges an NVLS (NVLink SHARP) collective per NVLink hop (src/graph/tuning.cc, hwLat NVLS: 25 us).
pub const NVLS_LATENCY_S: f64 = 25e-6;
/// Latency NCCL charges an NVLSTree collective per network level (src/graph/tuning.cc, hwLat NET NVLSTree Simple:
/// 20.9 us @5067397c; 14 us at v2.28.7).
pub const NVLS_TREE_NET_LATENCY_S: f64 = 20.9e-6;

crate::named_enum! {
    /// A collective operation, named as nccl-tests names its benchmarks (all_reduce_perf, ..., alltoall_perf).
    pub enum Collective {
        AllReduce = "all_reduce",
        ReduceScatter = "reduce_scatter",
        AllGather = "all_gather",
        /// Every member sends the message, spread evenly over the group (nccl-tests alltoall_perf: its size is
        /// the bytes each rank sends in total).
        AllToAll = "all_to_all",
    }
}

/// The links a configuration communicates over: the scale-up domain and the scale-out network.
#[derive(Clone, Debug)]
pub struct Interconnect<'a> {
    pub scale_up: &'a ScaleUpSpec,
    pub fabric: &'a FabricSpec,
    pub network: &'a Network,
}

impl Interconnect<'_> {
    pub fn scale_up_bytes_per_s(&self) -> f64 {
        self.scale_up.bytes_per_s * self.scale_up.ring_efficiency
    }

    /// Achieved network bandwidth of one member of the group (its own NIC ports).
    pub fn network_bytes_per_s(&self, g: &GroupPlacement, traffic: Traffic) -> f64 {
        self.fabric.gpu_bytes_per_s() * self.network.bandwidth_factor(g, traffic)
    }

    /// One network message: both NICs and the host stack, plus each switch crossed, stretched by the fabric's
    /// tail under load (a synchronous step waits for its slowest message).
    pub fn network_latency_s(&self, g: &GroupPlacement, traffic: Traffic) -> f64 {
        (self.fabric.nic_latency_s + self.network.switching_latency_s(g, traffic)) * self.network.tail_latency_factor()
    }

    /// One ring step inside the domain, per protocol (NCCL's LL, LL128, Simple).
    fn scale_up_step(&self) -> StepLatency {
        let su = self.scale_up;
        StepLatency { by_protocol: [su.ll_step_latency_s, su.ll128_step_latency_s, su.step_latency_s] }
    }

    /// One network ring step per protocol: the network latency `a_net` is Simple's step; LL and LL128 save the
    /// fabric's calibrated per-step figures.
    fn network_step(&self, a_net: f64) -> StepLatency {
        let f = self.fabric;
        StepLatency {
            by_protocol: [(a_net - f.ll_step_saving_s).max(0.0), (a_net - f.ll128_step_saving_s).max(0.0), a_net],
        }
    }

    /// Channels of a ring that leaves the domain: NCCL opens 2 per NIC (1 graph channel per NIC, doubled,
    /// search.cc:736, connect.cc:460), at most MAXCHANNELS (device.h:91) [NVIDIA/nccl @5067397c].
    fn network_channels(&self, per_domain: f64) -> f64 {
        (NCCL_CHANNELS_PER_NIC * self.fabric.links_per_gpu as f64 * per_domain).clamp(1.0, nccl::MAX_CHANNELS)
    }

    /// All-reduce bus bandwidth / line rate with NVLink SHARP over `members` GPUs of one domain: no gain at 2-4
    /// GPUs, rising about linearly to the full figure at 8 (8 x H100: ring 370 GB/s; NVLS 370, 420, 440, 460, 480
    /// GB/s at 4-8 GPUs, NVIDIA/nccl #1455, 2024-09); the ring's figure where NVLS is absent.
    fn nvls_efficiency(&self, members: f64) -> f64 {
        let full = self.scale_up.in_switch_allreduce_efficiency;
        let ring = self.scale_up.ring_efficiency;
        if full <= ring {
            return full;
        }
        ring + (full - ring) * ((members - 4.0) / 4.0).clamp(0.0, 1.0)
    }

    /// Time of an all-reduce, reduce-scatter or all-gather of `message_bytes` (the whole array, as nccl-tests
    /// counts it) over the group; an all-to-all of `message_bytes` per rank.
    pub fn collective_time_s(&self, op: Collective, message_bytes: f64, g: &GroupPlacement) -> f64 {
        if g.size <= 1 || message_bytes <= 0.0 {
            return 0.0;
        }
        if op == Collective::AllToAll {
            return self.all_to_all_time_s(message_bytes, g);
        }
        let n = g.size as f64;
        // All-reduce = reduce-scatter + all-gather: twice the traffic and twice the ring steps.
        let passes = if op == Collective::AllReduce { 2.0 } else { 1.0 };
        let a_su = self.scale_up.step_latency_s;
        let su_step = self.scale_up_step();
        let cc = self.scale_up.compute_capability;
        if g.domains <= 1 {
            let ring = nccl::Ring {
                ranks: n,
                steps: passes * (n - 1.0),
                channels: self.scale_up.nccl_channels as f64,
                s_per_bus_byte: 1.0 / self.scale_up_bytes_per_s(),
                step: su_step,
                compute_capability: cc,
                nodes: 1,
            }
            .best_time_s(message_bytes);
            let nvls = self.nvls_efficiency(n);
            if op == Collective::AllReduce && nvls > self.scale_up.ring_efficiency {
                // NVLink SHARP: the switch reduces; bus bandwidth nvls x line rate, NCCL's NVLS latency.
                let in_switch = COLLECTIVE_BASE_LATENCY_S
                    + NVLS_LATENCY_S
                    + 2.0 * (n - 1.0) / n * message_bytes / (self.scale_up.bytes_per_s * nvls);
                return ring.min(in_switch);
            }
            return ring;
        }
        let per_domain = g.per_domain as f64;
        let domains = g.domains as f64;
        // Seconds per byte at each level of the hierarchy (the pipelined collective runs at the slower one).
        let intra =
            if per_domain > 1.0 { (per_domain - 1.0) / (per_domain * self.scale_up_bytes_per_s()) } else { 0.0 };
        let domain_bytes_per_s = per_domain * self.network_bytes_per_s(g, Traffic::Neighbour);
        let a_net = self.network_latency_s(g, Traffic::Neighbour);
        let net_step = self.network_step(a_net);
        let channels = self.network_channels(per_domain);
        // NCCL's ring runs through every member, one ring per NIC: each NIC carries (n-1)/n of the message per
        // pass whatever the number of domains (bus bandwidth = the domain's NICs: 2 x 8 H100 with NCCL_ALGO=Ring
        // reach 392 GB/s on 8 x 400G, NVIDIA/nccl-tests #309), and every one of its steps moves a chunk on every
        // edge at once, so each step lasts as long as the slower of a network and a domain step (the same curve
        // takes ~157 us from 1 to 8 MiB: 30 steps of ~5.2 us).
        let ring_inter = (n - 1.0) / (n * domain_bytes_per_s);
        let ring = nccl::Ring {
            ranks: n,
            steps: passes * (n - 1.0),
            channels,
            s_per_bus_byte: intra.max(ring_inter) * n / (n - 1.0),
            step: net_step.max(&su_step),
            compute_capability: cc,
            nodes: g.domains,
        }
        .best_time_s(message_bytes);
        if op != Collective::AllReduce {
            return ring;
        }
        // Double binary tree across domains, chain inside, each protocol at NCCL's bandwidth and latency.
        let tree = nccl::Tree {
            per_domain,
            domains,
            intra_s_per_byte: intra,
            domain_bytes_per_s,
            channels,
            intra_step: su_step,
            net_step,
            compute_capability: cc,
        }
        .best_time_s(message_bytes);
        let sharp = self.fabric.in_network_reduction_efficiency;
        let mut best = ring.min(tree);
        let nvls = self.nvls_efficiency(per_domain);
        // NCCL offers NVLSTree wherever the domain has NVLink SHARP, whatever the members per domain (its gain inside
        // the domain is what shrinks with few members).
        if self.scale_up.in_switch_allreduce_efficiency > 0.0 && per_domain > 1.0 {
            // NVLSTree: NVLink SHARP inside the domain, a tree across domains (tuning.cc: base + intra +
            // 2 log2(nNodes) x inter latency).
            let intra_nvls = (per_domain - 1.0) / (per_domain * self.scale_up.bytes_per_s * nvls);
            let a_nvls_tree = a_net.max(NVLS_TREE_NET_LATENCY_S * self.network.tail_latency_factor());
            // Two domains exchange their halves directly: NCCL credits NVLSTree twice the network bandwidth there
            // ("Handle 2 node case of NVLSTree", tuning.cc @5067397c; 2 x 8 H100 reach 465-469 GB/s busbw on
            // 8 x 400G, NVIDIA/nccl-tests #309).
            let nvls_tree_bytes_per_s = if g.domains == 2 { 2.0 * domain_bytes_per_s } else { domain_bytes_per_s };
            let levels = domains.log2().ceil();
            let tree_s_per_byte = 1.0 / (TREE_BANDWIDTH_FRACTION * nvls_tree_bytes_per_s);
            // Pipeline fill, as for NCCL's tree (nccl::Tree): one chunk per NVLS channel crosses each of the
            // 2 x levels network hops before the pipeline streams.
            let fill = 2.0 * levels * nccl::nvls_tree_fill_bytes(message_bytes, g.domains, cc) * tree_s_per_byte;
            let nvls_tree = COLLECTIVE_BASE_LATENCY_S
                + NVLS_LATENCY_S
                + 2.0 * levels * a_nvls_tree
                + fill
                + 2.0 * message_bytes * intra_nvls.max(tree_s_per_byte);
            best = best.min(nvls_tree);
        }
        let in_network_factor = if sharp > 0.0 { self.network.in_network_bandwidth_factor(g) } else { None };
        if let Some(factor) = in_network_factor {
            // In-network reduction (SHARP, all-reduce only: reduce-scatter and all-gather move (n-1)/n of the
            // message per NIC on a ring already, the least they can): the switches reduce, bus bandwidth sharp x
            // line rate, one stream per group up each leaf (NCCL CollNet, src/graph/tuning.cc @5067397c).
            let sharp_bytes_per_s =
                per_domain * self.fabric.link_bytes_per_s * self.fabric.links_per_gpu as f64 * sharp * factor;
            let in_network = COLLECTIVE_BASE_LATENCY_S
                + 2.0 * ((per_domain - 1.0) * a_su + a_net)
                + 2.0 * message_bytes * intra.max((domains - 1.0) / (domains * sharp_bytes_per_s));
            best = best.min(in_network);
        }
        best
    }

    /// Time of an all-to-all in which every member sends `bytes_per_rank` in total, spread evenly over the
    /// group (its own share stays local). Peers in the same domain are reached over NVLink, the others over the
    /// member's own NICs; all sends are posted at once (NCCL grouped send/recv), so the latency is paid once.
    pub fn all_to_all_time_s(&self, bytes_per_rank: f64, g: &GroupPlacement) -> f64 {
        if g.size <= 1 || bytes_per_rank <= 0.0 {
            return 0.0;
        }
        let n = g.size as f64;
        let per_domain = g.per_domain as f64;
        let intra = bytes_per_rank * (per_domain - 1.0) / n / self.scale_up_bytes_per_s();
        let mut latency = COLLECTIVE_BASE_LATENCY_S + self.scale_up.step_latency_s;
        let mut inter = 0.0;
        if g.domains > 1 {
            inter = bytes_per_rank * (n - per_domain) / n / self.network_bytes_per_s(g, Traffic::AllToAll);
            latency += self.network_latency_s(g, Traffic::AllToAll);
        }
        latency + intra.max(inter)
    }

    /// Time to send `message_bytes` to the next member of the group (pipeline stages).
    pub fn send_time_s(&self, message_bytes: f64, g: &GroupPlacement) -> f64 {
        if g.size <= 1 || message_bytes <= 0.0 {
            return 0.0;
        }
        if g.per_domain > 1 {
            self.scale_up.step_latency_s + message_bytes / self.scale_up_bytes_per_s()
        } else {
            self.network_latency_s(g, Traffic::Neighbour)
                + message_bytes / self.network_bytes_per_s(g, Traffic::Neighbour)
        }
    }
}

/// Split communication time into what stays exposed and what hides behind compute: at most `overlap` of it
/// can hide, and no more than the compute `window` available to hide it. Returns (exposed, hidden).
pub fn exposed_and_hidden(comm_s: f64, overlap: f64, window_s: f64) -> (f64, f64) {
    let hidden = (overlap * comm_s).min(window_s.max(0.0));
    (comm_s - hidden, hidden)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::hardware::TopologySpec;

    pub fn nvlink4() -> ScaleUpSpec {
        ScaleUpSpec {
            bytes_per_s: 450e9,
            domain_gpus: 8,
            step_latency_s: 1e-6,
            ring_efficiency: 0.82,
            in_switch_allreduce_efficiency: 0.0,
            switch_trays_per_domain: 0.0,
            ll_step_latency_s: 0.6e-6,
            ll128_step_latency_s: 1.9e-6,
            nccl_channels: 24,
            compute_capability: 9,
        }
    }
    /// A 100 Gb/s NIC per GPU, ideal efficiency, for hand-worked examples.
    pub fn ethernet_100g() -> FabricSpec {
        FabricSpec {
            link_bytes_per_s: 12.5e9,
            links_per_gpu: 1,
            efficiency: 1.0,
            nic_latency_s: 0.0,
            switch_hop_latency_s: 0.0,
            switch_radix: 64,
            in_network_reduction_efficiency: 0.0,
            load_balancing: crate::hardware::LoadBalancing::Adaptive,
            load_balance_efficiency: 1.0,
            qps_per_connection: 1.0,
            tail_latency_factor: 1.0,
            forwarding: crate::hardware::Forwarding::CutThrough,
            mtu_bytes: 4096.0,
            in_network_groups_per_leaf: 0,
            ll_step_saving_s: 1.5e-6,
            ll128_step_saving_s: 1.0e-6,
        }
    }
    fn non_blocking() -> TopologySpec {
        crate::examples::fat_tree(1.0)
    }

    #[test]
    fn moving_140_gb_over_100_gbps_takes_about_11_s() {
        // A send of 140 GB over 100 Gb/s = 12.5 GB/s: 140 / 12.5 = 11.2 s.
        let su = nvlink4();
        let f = ethernet_100g();
        let net = Network::new(&f, &non_blocking(), 16, 8);
        let ic = Interconnect { scale_up: &su, fabric: &f, network: &net };
        let pair = GroupPlacement::new(2, 8, 8);
        let t = ic.send_time_s(140e9, &pair);
        assert!((t - 11.2).abs() < 1e-9, "{t}");
        // An all-reduce of the same 140 GB between the two servers moves 2 (n-1)/n = 1 x S per rank: ~11.2 s.
        let t = ic.collective_time_s(Collective::AllReduce, 140e9, &pair);
        assert!((t - 11.2).abs() < 1e-3, "{t}");
    }

    #[test]
    fn all_to_all_as_nccl_tests_sizes_it() {
        // alltoall_perf's size is what each rank sends: 16 GB over 16 GPUs on 2 servers, half of it to the other
        // server over 12.5 GB/s: 8 / 12.5 = 0.64 s (+ 7.8 us of latency; NVLink's 7/16 x 16 GB at 369 GB/s hides).
        let su = nvlink4();
        let f = ethernet_100g();
        let net = Network::new(&f, &non_blocking(), 16, 8);
        let ic = Interconnect { scale_up: &su, fabric: &f, network: &net };
        let g = GroupPlacement::new(16, 1, 8);
        let t = ic.collective_time_s(Collective::AllToAll, 16e9, &g);
        assert!((t - 0.64).abs() < 1e-4, "{t}");
        assert_eq!(t, ic.all_to_all_time_s(16e9, &g));
    }

    #[test]
    fn ring_all_reduce_inside_a_server_uses_bus_bandwidth() {
        // 8 GPUs on NVLink4 at 82%: busbw 369 GB/s; 1 GB all-reduce, Simple (24 channels, 3 chunk loops hidden
        // behind 136 us transfers): 8.4 us + 14 steps x 1 us + 2 x 7/8 x 1e9 / 369e9 = 4.7425 ms. LL128 (92% of the
        // bandwidth) and LL (141 GB/s cap) are slower at this size.
        let su = nvlink4();
        let f = ethernet_100g();
        let net = Network::new(&f, &non_blocking(), 8, 8);
        let ic = Interconnect { scale_up: &su, fabric: &f, network: &net };
        let t = ic.collective_time_s(Collective::AllReduce, 1e9, &GroupPlacement::new(8, 1, 8));
        let expected = 2.0 * 7.0 / 8.0 * 1e9 / (450e9 * 0.82) + 8.4e-6 + 14e-6;
        assert!((t - expected).abs() < 1e-12, "{t} vs {expected}");
        // NVLS at busbw 1.07 x 450 GB/s wins for large messages.
        let mut nvls = nvlink4();
        nvls.in_switch_allreduce_efficiency = 1.07;
        let ic = Interconnect { scale_up: &nvls, fabric: &f, network: &net };
        assert!(ic.collective_time_s(Collective::AllReduce, 1e9, &GroupPlacement::new(8, 1, 8)) < t);
    }

    #[test]
    fn ring_across_servers_is_bound_by_the_node_nics_and_paced_by_every_step() {
        // 4 servers x 8 GPUs, a 32-rank ring on 16 channels (2 per NIC): each server's 8 NICs carry 2 x 31/32 of S:
        // 2 x 31/32 x 1 GB / (8 x 12.5 GB/s) = 19.375 ms; its 62 steps each last the slowest step (here NVLink's
        // 1 us Simple step, the NIC's being 0 in this example): + 62 us, + NCCL's Simple base 8.4 us. The chunk,
        // 1e9 / (32 x 16) = 1.95 MB, fits one loop. (A double binary tree would take 2 x 1 GB / (0.92 x 100 GB/s).)
        let su = nvlink4();
        let f = ethernet_100g();
        let net = Network::new(&f, &non_blocking(), 32, 8);
        let ic = Interconnect { scale_up: &su, fabric: &f, network: &net };
        let t = ic.collective_time_s(Collective::AllReduce, 1e9, &GroupPlacement::new(32, 1, 8));
        let expected = 2.0 * 31.0 / 32.0 * 1e9 / (8.0 * 12.5e9) + 62.0 * 1e-6 + 8.4e-6;
        assert!((t - expected).abs() < 1e-9, "{t} vs {expected}");
    }

    #[test]
    fn a_two_node_all_gather_pays_a_network_step_on_every_step() {
        // 2 x 8 GPUs, 8 x 400G at 93%, 5 us NIC + one 0.2 us leaf hop = 5.2 us per network step, no LL/LL128
        // saving: all_gather of 1 MiB, 15 steps, 16 channels, chunk 4,096 B. Simple: 8.4 + 15 x (5.2 + 4096 /
        // 23.25 GB/s) = 89.04 us (LL128 95.35, LL 109.8: the nccl::tests arithmetic with 15 steps).
        let su = nvlink4();
        let f = FabricSpec {
            link_bytes_per_s: 50e9,
            efficiency: 0.93,
            nic_latency_s: 5e-6,
            switch_hop_latency_s: 0.2e-6,
            ll_step_saving_s: 0.0,
            ll128_step_saving_s: 0.0,
            ..ethernet_100g()
        };
        let net = Network::new(&f, &non_blocking(), 16, 8);
        let ic = Interconnect { scale_up: &su, fabric: &f, network: &net };
        let t = ic.collective_time_s(Collective::AllGather, 1048576.0, &GroupPlacement::new(16, 1, 8));
        let expected = 8.4e-6 + 15.0 * (5.2e-6 + 4096.0 / 23.25e9);
        assert!((t - expected).abs() < 1e-10, "{t} vs {expected}");
    }

    #[test]
    fn tree_beats_ring_for_small_messages_at_scale() {
        let su = nvlink4();
        let mut f = ethernet_100g();
        f.nic_latency_s = 5e-6;
        let net = Network::new(&f, &non_blocking(), 8192, 8);
        let ic = Interconnect { scale_up: &su, fabric: &f, network: &net };
        let g = GroupPlacement::new(1024, 8, 8);
        let t = ic.collective_time_s(Collective::AllReduce, 8e3, &g);
        // Ring latency alone would be 2 x 1023 x 5 us = 10 ms; the tree needs 2 x 10 x 5 us.
        assert!(t < 2e-3, "{t}");
    }

    #[test]
    fn overlap_hides_at_most_the_window() {
        assert_eq!(exposed_and_hidden(10.0, 0.5, 100.0), (5.0, 5.0));
        assert_eq!(exposed_and_hidden(10.0, 1.0, 3.0), (7.0, 3.0));
        assert_eq!(exposed_and_hidden(10.0, 0.0, 3.0), (10.0, 0.0));
    }
}
