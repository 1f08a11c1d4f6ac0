//! Time of one collective over a communication group, with the algorithm a collective library would pick.
//!
//! Latency-bandwidth (alpha-beta) costs from Thakur, Rabenseifner & Gropp, IJHPCA 2005; bus-bandwidth
//! conventions from nccl-tests doc/PERFORMANCE.md (all-reduce moves 2(n-1)/n of the message per rank,
//! reduce-scatter and all-gather (n-1)/n); algorithm choice as NCCL's tuning model does it
//! (src/graph/tuning.cc: the minimum over ring, tree and in-network reduction of latency + size / bandwidth).
//! A ring that spans scale-up domains runs through every member at the pace of its slowest level: each NIC
//! carries (n-1)/n of the message per pass and each step lasts a network step; trees and in-network reduction
//! run hierarchically, S x max over levels of (D - 1) / (D W) (scaling book, "How to Think About GPUs").
//!
//! One file per NCCL algorithm, each an `Interconnect` method that returns the algorithm's time or None where
//! NCCL would not offer it: `ring`, `tree` (double binary tree across domains), `nvls` (NVLink SHARP inside a
//! domain, and NVLSTree across domains), `collnet` (in-network reduction, SHARP). `collective_time_s` takes the
//! minimum of those that apply, or, where the fabric's software stack ships a tuner plugin that picks instead of
//! NCCL's cost model (`tuner`: aws-ofi-nccl on EFA), the algorithm and protocol the plugin picks.

use crate::hardware::{CollectiveTuner, FabricSpec, ScaleUpSpec, NCCL_CHANNELS_PER_NIC};
use crate::network::nccl::{self, StepLatency};
use crate::network::placement::GroupPlacement;
use crate::network::topology::{Network, Traffic};

mod collnet;
mod nvls;
mod ring;
mod tree;
pub mod tuner;

pub use nvls::{NVLS_LATENCY_S, NVLS_TREE_NET_LATENCY_S, TREE_BANDWIDTH_FRACTION};

/// Fixed cost of launching one collective: NCCL's base latency for the low-latency protocol
/// (NVIDIA/nccl src/graph/tuning.cc, baseLat, LL: 6.6-6.8 us).
pub const COLLECTIVE_BASE_LATENCY_S: f64 = 6.8e-6;

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

/// One collective to time, with what its algorithms share.
#[derive(Clone, Copy, Debug)]
pub struct Call<'g> {
    pub op: Collective,
    /// The whole array, as nccl-tests counts it.
    pub message_bytes: f64,
    pub group: &'g GroupPlacement,
    /// Ring passes over the data: 2 for an all-reduce, 1 for a reduce-scatter or an all-gather.
    pub passes: f64,
    /// One ring step inside the domain, per protocol.
    pub scale_up_step: StepLatency,
    /// The hierarchy, when the group spans several scale-up domains; None inside one domain.
    pub across: Option<Across>,
}

/// The two levels of a group that spans scale-up domains.
#[derive(Clone, Copy, Debug)]
pub struct Across {
    /// Members in one domain (the fewest, for a straddling group).
    pub per_domain: f64,
    pub domains: f64,
    /// Seconds per byte of the chain inside a domain (0 with one member there).
    pub intra_s_per_byte: f64,
    /// Network bandwidth of one domain's members (their NICs).
    pub domain_bytes_per_s: f64,
    /// One network message (Simple's ring step).
    pub network_latency_s: f64,
    /// One network ring step, per protocol.
    pub network_step: StepLatency,
    /// Channels of a ring that leaves the domain.
    pub channels: f64,
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

    /// One network ring step per protocol: Simple's is the network latency; LL and LL128 save the NIC's calibrated
    /// per-step figures from the NIC and host part of it (NCCL's protocols change how the NIC and the GPU hand data
    /// over, not the switches or their tail: one NET latency table for InfiniBand and RoCE, NVIDIA/nccl
    /// src/graph/tuning.cc @5067397c), so the same NIC saves the same time on every fabric.
    fn network_step(&self, g: &GroupPlacement, traffic: Traffic) -> StepLatency {
        let f = self.fabric;
        let switching = self.network.switching_latency_s(g, traffic);
        let tail = self.network.tail_latency_factor();
        let step = |saving: f64| ((f.nic_latency_s - saving).max(0.0) + switching) * tail;
        StepLatency { by_protocol: [step(f.ll_step_saving_s), step(f.ll128_step_saving_s), step(0.0)] }
    }

    /// Channels of a ring that leaves the domain: NCCL opens 2 per NIC (1 graph channel per NIC, doubled,
    /// search.cc:736, connect.cc:460), at most MAXCHANNELS (device.h:91) [NVIDIA/nccl @5067397c].
    fn network_channels(&self, per_domain: f64) -> f64 {
        (NCCL_CHANNELS_PER_NIC * self.fabric.ports_per_gpu() * per_domain).clamp(1.0, nccl::MAX_CHANNELS)
    }

    /// Time of an all-reduce, reduce-scatter or all-gather of `message_bytes` (the whole array, as nccl-tests
    /// counts it) over the group; an all-to-all of `message_bytes` per rank. As NCCL's tuner picks it: the
    /// fastest of the algorithms that apply (ring, tree, NVLS, NVLSTree, CollNet), each at its fastest protocol.
    pub fn collective_time_s(&self, op: Collective, message_bytes: f64, g: &GroupPlacement) -> f64 {
        if g.size <= 1 || message_bytes <= 0.0 {
            return 0.0;
        }
        if op == Collective::AllToAll {
            return self.all_to_all_time_s(message_bytes, g);
        }
        if g.domains > 1 && self.fabric.collective_tuner != CollectiveTuner::Nccl {
            if let Some(t) = self.tuned_s(op, message_bytes, g) {
                return t;
            }
        }
        let c = self.call(op, message_bytes, g);
        let ring = self.ring_s(&c).unwrap_or(f64::INFINITY);
        // Each algorithm says itself where it applies; the minimum is taken per case so that the compiler can
        // drop the checks that cannot pass (and share the tree's arithmetic with NVLSTree's).
        let best = |others: [Option<f64>; 3]| others.into_iter().flatten().fold(ring, f64::min);
        match (op, &c.across) {
            (Collective::AllReduce, None) => best([self.nvls_s(&c), None, None]),
            (Collective::AllReduce, Some(_)) => best([self.tree_s(&c), self.nvls_tree_s(&c), self.collnet_s(&c)]),
            _ => ring,
        }
    }

    /// The time of the algorithm and protocol aws-ofi-nccl's p5 tuner picks for the call (`tuner`), or None where it
    /// leaves the choice to NCCL (or picks an algorithm the group cannot run). The p5 tables are the Hopper
    /// instances' (p5, p5e): on another GPU generation the plugin runs other tables, which the model does not hold,
    /// so NCCL's choice stands. Kept out of line: no fabric but EFA takes it, and the common path stays as short as
    /// before.
    #[cold]
    #[inline(never)]
    fn tuned_s(&self, op: Collective, message_bytes: f64, g: &GroupPlacement) -> Option<f64> {
        if self.scale_up.compute_capability != tuner::P5_COMPUTE_CAPABILITY {
            return None;
        }
        let c = &self.call(op, message_bytes, g);
        let x = c.across.as_ref()?;
        let nvls = self.scale_up.in_switch_allreduce_efficiency > 0.0 && x.per_domain > 1.0;
        let choice = tuner::aws_ofi_p5(c.op, c.message_bytes, g.size, g.domains, nvls)?;
        match choice.algorithm {
            tuner::Algorithm::Ring => Some(self.ring(c)?.time_s(choice.protocol, c.message_bytes)),
            tuner::Algorithm::Tree => Some(self.tree(c)?.time_s(choice.protocol, c.message_bytes)),
            tuner::Algorithm::NvlsTree => self.nvls_tree_s(c),
        }
    }

    /// What every algorithm needs to time one collective over the group: the figures of the scale-up domain,
    /// and, for a group that spans domains, of the hierarchy (computed once per collective).
    // Inlined (as `across`) so that the algorithms, inlined into `collective_time_s` too, share their arithmetic:
    // without, one evaluation runs ~4% more instructions (callgrind, benchmarks/evaluate_core.rs' configurations).
    #[inline(always)]
    pub fn call<'g>(&self, op: Collective, message_bytes: f64, g: &'g GroupPlacement) -> Call<'g> {
        Call {
            op,
            message_bytes,
            group: g,
            // All-reduce = reduce-scatter + all-gather: twice the traffic and twice the ring steps.
            passes: if op == Collective::AllReduce { 2.0 } else { 1.0 },
            scale_up_step: self.scale_up_step(),
            across: (g.domains > 1).then(|| self.across(g)),
        }
    }

    /// The levels of a group that spans scale-up domains.
    #[inline(always)]
    fn across(&self, g: &GroupPlacement) -> Across {
        let per_domain = g.per_domain as f64;
        // Seconds per byte inside a domain (the pipelined collective runs at the slower level).
        let intra_s_per_byte =
            if per_domain > 1.0 { (per_domain - 1.0) / (per_domain * self.scale_up_bytes_per_s()) } else { 0.0 };
        let network_latency_s = self.network_latency_s(g, Traffic::Neighbour);
        Across {
            per_domain,
            domains: g.domains as f64,
            intra_s_per_byte,
            domain_bytes_per_s: per_domain * self.network_bytes_per_s(g, Traffic::Neighbour),
            network_latency_s,
            network_step: self.network_step(g, Traffic::Neighbour),
            channels: self.network_channels(per_domain),
        }
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

    /// Time to send `message_bytes` to the next member of the group at its slowest edge, as every member sends at
    /// once (a pipeline's steady state, whose throughput is its slowest stage's, blocking sends included:
    /// Narayanan et al., PipeDream, SOSP 2019, Sec. 3.1; a ring's step): inside the scale-up domain only when the
    /// whole group is, over the network otherwise.
    pub fn send_time_s(&self, message_bytes: f64, g: &GroupPlacement) -> f64 {
        self.sends_s(message_bytes, g).0
    }

    /// The group's chain of sends in order, one after the other (a pipeline's fill, a serving pipeline's hidden
    /// states): its size - 1 hops, of which domains - 1 leave their domain (the members laid out in rank order)
    /// and the rest stay inside it.
    pub fn chain_send_time_s(&self, message_bytes: f64, g: &GroupPlacement) -> f64 {
        self.sends_s(message_bytes, g).1
    }

    /// (`send_time_s`, `chain_send_time_s`), each hop priced once.
    pub fn sends_s(&self, message_bytes: f64, g: &GroupPlacement) -> (f64, f64) {
        if g.size <= 1 || message_bytes <= 0.0 {
            return (0.0, 0.0);
        }
        let hops = (g.size - 1) as f64;
        let inside_s = self.scale_up_send_s(message_bytes);
        if g.domains <= 1 {
            return (inside_s, hops * inside_s);
        }
        let network_s = self.network_send_s(message_bytes, g);
        let crossings = (g.domains - 1) as f64;
        (network_s, crossings * network_s + (hops - crossings) * inside_s)
    }

    fn scale_up_send_s(&self, message_bytes: f64) -> f64 {
        self.scale_up.step_latency_s + message_bytes / self.scale_up_bytes_per_s()
    }

    fn network_send_s(&self, message_bytes: f64, g: &GroupPlacement) -> f64 {
        self.network_latency_s(g, Traffic::Neighbour) + message_bytes / self.network_bytes_per_s(g, Traffic::Neighbour)
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
    use crate::examples;
    use crate::hardware::TopologySpec;

    /// NVLink4 with a round 1 us Simple step and no NVLink SHARP, for examples worked by hand.
    pub(crate) fn round_nvlink4() -> ScaleUpSpec {
        ScaleUpSpec { step_latency_s: 1e-6, in_switch_allreduce_efficiency: 0.0, ..examples::nvlink4() }
    }
    /// A 100 Gb/s NIC per GPU at full efficiency, with no latency and no SHARP, for examples worked by hand.
    pub(crate) fn ethernet_100g() -> FabricSpec {
        FabricSpec {
            link_bytes_per_s: 12.5e9,
            efficiency: 1.0,
            nic_latency_s: 0.0,
            switch_hop_latency_s: 0.0,
            in_network_reduction_efficiency: 0.0,
            load_balance_efficiency: 1.0,
            ll_step_saving_s: 1.5e-6,
            ll128_step_saving_s: 1.0e-6,
            ..examples::ib_ndr()
        }
    }
    fn non_blocking() -> TopologySpec {
        examples::fat_tree(1.0)
    }

    #[test]
    fn moving_140_gb_over_100_gbps_takes_about_11_s() {
        // A send of 140 GB over 100 Gb/s = 12.5 GB/s: 140 / 12.5 = 11.2 s.
        let su = round_nvlink4();
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
    fn a_pipeline_over_two_servers_advances_at_its_network_edge_and_fills_through_one_crossing() {
        // 16 stages on two 8-GPU servers in rank order: 15 hops, one between the servers. 1.25 GB over 100 Gb/s
        // = 12.5 GB/s takes 0.1 s (no network latency in this fabric); over NVLink a fraction of that.
        let su = round_nvlink4();
        let f = ethernet_100g();
        let net = Network::new(&f, &non_blocking(), 16, 8);
        let ic = Interconnect { scale_up: &su, fabric: &f, network: &net };
        let pipeline = GroupPlacement::in_cluster(16, 1, 8, 16);
        assert_eq!((pipeline.per_domain, pipeline.domains), (8, 2));
        let server = GroupPlacement::in_cluster(8, 1, 8, 16);
        let nvlink_s = ic.send_time_s(1.25e9, &server);
        assert!(nvlink_s < 0.01, "{nvlink_s}");
        // Every stage sends at once in the steady state: the pipeline waits for the boundary's 0.1 s.
        let steady_s = ic.send_time_s(1.25e9, &pipeline);
        assert!((steady_s - 0.1).abs() < 1e-9, "{steady_s}");
        // The fill passes the 15 hops in turn: one over the network, 14 over NVLink.
        let fill_s = ic.chain_send_time_s(1.25e9, &pipeline);
        assert!((fill_s - (0.1 + 14.0 * nvlink_s)).abs() < 1e-9, "{fill_s}");
        // Inside one server, both are NVLink hops.
        assert!((ic.chain_send_time_s(1.25e9, &server) - 7.0 * nvlink_s).abs() < 1e-12);
    }

    #[test]
    fn all_to_all_as_nccl_tests_sizes_it() {
        // alltoall_perf's size is what each rank sends: 16 GB over 16 GPUs on 2 servers, half of it to the other
        // server over 12.5 GB/s: 8 / 12.5 = 0.64 s (+ 7.8 us of latency; NVLink's 7/16 x 16 GB at 369 GB/s hides).
        let su = round_nvlink4();
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
        let su = round_nvlink4();
        let f = ethernet_100g();
        let net = Network::new(&f, &non_blocking(), 8, 8);
        let ic = Interconnect { scale_up: &su, fabric: &f, network: &net };
        let t = ic.collective_time_s(Collective::AllReduce, 1e9, &GroupPlacement::new(8, 1, 8));
        let expected = 2.0 * 7.0 / 8.0 * 1e9 / (450e9 * 0.82) + 8.4e-6 + 14e-6;
        assert!((t - expected).abs() < 1e-12, "{t} vs {expected}");
        // NVLS at busbw 1.07 x 450 GB/s wins for large messages.
        let mut nvls = round_nvlink4();
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
        let su = round_nvlink4();
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
        let su = round_nvlink4();
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
        let su = round_nvlink4();
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
    fn each_algorithm_applies_where_nccl_offers_it_and_the_fastest_is_taken() {
        // NVLink4 with NVLink SHARP (examples::nvlink4) and a fabric with SHARP: inside one server only the ring
        // and NVLS run an all-reduce; across four servers the ring, the tree, NVLSTree and CollNet; any other
        // operation runs on the ring.
        let su = examples::nvlink4();
        let f = FabricSpec { in_network_reduction_efficiency: 1.0, ..ethernet_100g() };
        let net = Network::new(&f, &non_blocking(), 32, 8);
        let ic = Interconnect { scale_up: &su, fabric: &f, network: &net };
        let applies = |op, g: &GroupPlacement| {
            let c = ic.call(op, 1e9, g);
            let times = [ic.ring_s(&c), ic.tree_s(&c), ic.nvls_s(&c), ic.nvls_tree_s(&c), ic.collnet_s(&c)];
            let fastest = times.iter().flatten().copied().fold(f64::INFINITY, f64::min);
            assert_eq!(ic.collective_time_s(op, 1e9, g), fastest);
            times.map(|t| t.is_some())
        };
        let (server, cluster) = (GroupPlacement::new(8, 1, 8), GroupPlacement::new(32, 1, 8));
        assert_eq!(applies(Collective::AllReduce, &server), [true, false, true, false, false]);
        assert_eq!(applies(Collective::AllReduce, &cluster), [true, true, false, true, true]);
        for op in [Collective::ReduceScatter, Collective::AllGather] {
            assert_eq!(applies(op, &server), [true, false, false, false, false]);
            assert_eq!(applies(op, &cluster), [true, false, false, false, false]);
        }
        // Without NVLink SHARP or SHARP, only the ring and the tree remain.
        let plain = Interconnect { scale_up: &round_nvlink4(), fabric: &ethernet_100g(), network: &net };
        let c = plain.call(Collective::AllReduce, 1e9, &cluster);
        assert!(plain.nvls_tree_s(&c).is_none() && plain.collnet_s(&c).is_none() && plain.tree_s(&c).is_some());
        assert!(plain.nvls_s(&plain.call(Collective::AllReduce, 1e9, &server)).is_none());
    }

    #[test]
    fn nvls_inside_a_server_at_the_switch_bandwidth() {
        // 8 x H100 on NVLink4 with NVLS at 1.06 x 450 GB/s: a 1 GB all-reduce moves 2 x 7/8 x 1 GB at 477 GB/s =
        // 3.6688 ms, plus NCCL's base 6.8 us and NVLS latency 25 us.
        let su = examples::nvlink4();
        let f = ethernet_100g();
        let net = Network::new(&f, &non_blocking(), 8, 8);
        let ic = Interconnect { scale_up: &su, fabric: &f, network: &net };
        let t = ic.nvls_s(&ic.call(Collective::AllReduce, 1e9, &GroupPlacement::new(8, 1, 8))).unwrap();
        let expected = 6.8e-6 + 25e-6 + 2.0 * 7.0 / 8.0 * 1e9 / (450e9 * 1.06);
        assert!((t - expected).abs() < 1e-12, "{t} vs {expected}");
    }

    #[test]
    fn collnet_across_servers_moves_the_message_once_through_the_switches() {
        // 4 servers x 8 GPUs under one switch, SHARP at line rate: each server's 8 x 12.5 GB/s NICs carry
        // 2 x 3/4 x 1 GB = 15 ms (NVLink's 2 x 7/8 x 1 GB at 369 GB/s is faster); latency NCCL's base 6.8 us
        // + 2 x 7 NVLink steps of 1 us (the NICs and switch take no time in this example).
        let su = round_nvlink4();
        let f = FabricSpec { in_network_reduction_efficiency: 1.0, ..ethernet_100g() };
        let net = Network::new(&f, &non_blocking(), 32, 8);
        let ic = Interconnect { scale_up: &su, fabric: &f, network: &net };
        let t = ic.collnet_s(&ic.call(Collective::AllReduce, 1e9, &GroupPlacement::new(32, 1, 8))).unwrap();
        let expected = 6.8e-6 + 14e-6 + 2.0 * 1e9 * 3.0 / (4.0 * 100e9);
        assert!((t - expected).abs() < 1e-12, "{t} vs {expected}");
    }

    #[test]
    fn overlap_hides_at_most_the_window() {
        assert_eq!(exposed_and_hidden(10.0, 0.5, 100.0), (5.0, 5.0));
        assert_eq!(exposed_and_hidden(10.0, 1.0, 3.0), (7.0, 3.0));
        assert_eq!(exposed_and_hidden(10.0, 0.0, 3.0), (10.0, 0.0));
    }
}
