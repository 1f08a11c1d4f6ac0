//! Symmetric fabric physics, as properties over random collectives, sizes, node counts, trees and loads (issue 19;
//! roi-review-2 E3 and E5): what one fabric has that another lacks may make it faster, never slower.
//!
//! - Adaptive routing, dynamic load balancing and spraying can always keep ECMP's placement, so at any load and
//!   any efficiency of their own they are never slower than ECMP.
//! - At equal link rate, hops and operating mode (the same load balancing, queue pairs, NIC and NCCL transport),
//!   InfiniBand is never slower than RoCE for any collective and size: RoCEv2 carries 82 header bytes per 4 KiB
//!   packet against InfiniBand's 26, its switches store and forward across port speeds and under PFC, and its
//!   tail is never shorter.
//! - More bandwidth, less oversubscription, wider uplinks and more queue pairs are never slower; a fragmented
//!   placement is never faster.

use proptest::prelude::*;
use scalefront_core::examples::*;
use scalefront_core::network::collectives::{Collective, Interconnect};
use scalefront_core::network::placement::GroupPlacement;
use scalefront_core::network::topology::Network;
use scalefront_core::*;

/// A fabric's transport on a shared NIC and mode: InfiniBand's framing and forwarding, or RoCEv2's.
fn transport(base: &FabricSpec, roce: bool, tail: f64, extra_hop_s: f64) -> FabricSpec {
    let mut f = base.clone();
    f.in_network_reduction_efficiency = 0.0;
    if roce {
        f.header_bytes = 82.0;
        f.forwarding = Forwarding::StoreAndForward;
        f.switch_hop_latency_s += extra_hop_s;
        f.tail_latency_factor = tail;
    } else {
        f.header_bytes = 26.0;
        f.forwarding = Forwarding::CutThrough;
        f.tail_latency_factor = 1.0;
    }
    f
}

/// A shared mode: the load balancing, its efficiency, the queue pairs.
fn mode() -> impl Strategy<Value = (LoadBalancing, f64, f64)> {
    (
        prop::sample::select(vec![
            LoadBalancing::Ecmp,
            LoadBalancing::Dlb,
            LoadBalancing::Adaptive,
            LoadBalancing::Spraying,
        ]),
        0.5f64..1.0,
        prop::sample::select(vec![1.0, 2.0, 4.0, 16.0]),
    )
}

fn tree() -> impl Strategy<Value = TopologySpec> {
    (
        prop::sample::select(vec![
            TopologyKind::FatTree,
            TopologyKind::RailFatTree,
            TopologyKind::Dragonfly,
            TopologyKind::Torus3d,
        ]),
        1.0f64..4.0,
    )
        .prop_map(|(kind, r)| TopologySpec { kind, oversubscription: r, ..rail_fat_tree() })
}

fn op() -> impl Strategy<Value = Collective> {
    prop::sample::select(vec![
        Collective::AllReduce,
        Collective::AllGather,
        Collective::ReduceScatter,
        Collective::AllToAll,
    ])
}

/// Time of `op` on `bytes` over a group of `size` members `stride` GPUs apart on `gpus` 8-GPU H100 servers.
fn collective_s(
    fabric: &FabricSpec,
    topology: &TopologySpec,
    gpus: u32,
    group: (u32, u32),
    op: Collective,
    bytes: f64,
    fragmentation: f64,
) -> f64 {
    let network = Network::new(fabric, topology, gpus, 8).placed(fragmentation);
    let scale_up = nvlink4();
    let ic = Interconnect { scale_up: &scale_up, fabric, network: &network };
    ic.collective_time_s(op, bytes, &GroupPlacement::in_cluster(group.0, group.1, 8, gpus))
}

/// A group that fits the cluster: `size` members at `stride` on `gpus` GPUs.
fn group() -> impl Strategy<Value = (u32, (u32, u32))> {
    (prop::sample::select(vec![64u32, 512, 4096, 16384]), 2u32..256, prop::sample::select(vec![1u32, 2, 8, 16, 64]))
        .prop_map(|(gpus, size, stride)| {
            let size = size.min(gpus / stride.min(gpus)).max(2);
            (gpus, (size, stride))
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// Adaptive routing, DLB and spraying, at any efficiency of their own, are never slower than ECMP with the
    /// same queue pairs: for any collective, size, group, tree and placement.
    #[test]
    fn adaptive_dlb_and_spraying_are_never_slower_than_ecmp(
        (lb, eff, qps) in mode(), topology in tree(), (gpus, g) in group(), op in op(), bytes in 8f64..1e10,
        fragmentation in 0.0f64..1.0,
    ) {
        let ecmp = FabricSpec {
            load_balancing: LoadBalancing::Ecmp,
            load_balance_efficiency: 1.0,
            qps_per_connection: qps,
            ..roce_400g()
        };
        let other = FabricSpec { load_balancing: lb, load_balance_efficiency: eff, ..ecmp.clone() };
        let t = |f: &FabricSpec| collective_s(f, &topology, gpus, g, op, bytes, fragmentation);
        prop_assert!(t(&other) <= t(&ecmp) * (1.0 + 1e-12), "{lb:?} {eff}: {} > {}", t(&other), t(&ecmp));
    }

    /// At equal link rate, hops and mode, InfiniBand is never slower than RoCE for any collective and size.
    #[test]
    fn infiniband_is_never_slower_than_roce_at_equal_rate_hops_and_mode(
        (lb, eff, qps) in mode(), topology in tree(), (gpus, g) in group(), op in op(), bytes in 8f64..1e10,
        tail in 1.0f64..4.0, extra_hop_us in 0.0f64..0.5, fragmentation in 0.0f64..1.0,
    ) {
        let base = FabricSpec { load_balancing: lb, load_balance_efficiency: eff, qps_per_connection: qps, ..ib_ndr() };
        let ib = transport(&base, false, 1.0, 0.0);
        let roce = transport(&base, true, tail, extra_hop_us * 1e-6);
        let t = |f: &FabricSpec| collective_s(f, &topology, gpus, g, op, bytes, fragmentation);
        prop_assert!(t(&ib) <= t(&roce) * (1.0 + 1e-12), "{} > {}", t(&ib), t(&roce));
    }

    /// More bandwidth, less oversubscription, wider uplinks and more queue pairs are never slower; a fragmented
    /// placement is never faster than a less fragmented one.
    #[test]
    fn more_network_is_never_slower_and_fragmentation_never_faster(
        (lb, eff, qps) in mode(), topology in tree(), (gpus, g) in group(), op in op(), bytes in 8f64..1e10,
        more in 1.0f64..4.0, fragmentation in 0.0f64..1.0, worse in 0.0f64..1.0,
    ) {
        let base =
            FabricSpec { load_balancing: lb, load_balance_efficiency: eff, qps_per_connection: qps, ..roce_400g() };
        let t = |f: &FabricSpec, topo: &TopologySpec, frag: f64| collective_s(f, topo, gpus, g, op, bytes, frag);
        let t0 = t(&base, &topology, fragmentation);
        let faster = [
            FabricSpec { link_bytes_per_s: base.link_bytes_per_s * more, ..base.clone() },
            FabricSpec { qps_per_connection: qps * more, ..base.clone() },
            FabricSpec { uplink_speedup: more, ..base.clone() },
        ];
        for f in &faster {
            prop_assert!(t(f, &topology, fragmentation) <= t0 * (1.0 + 1e-12));
        }
        // Less oversubscription at the same leaf: the same down ports, more uplinks (a switch of larger radix). At
        // a fixed radix a flatter taper also shrinks the leaf, which can split a group a larger leaf held.
        let (r, k) = (topology.oversubscription, base.switch_radix as f64);
        let flatter = TopologySpec { oversubscription: 1.0 + (r - 1.0) / more, ..topology.clone() };
        let down = (k * r / (r + 1.0)).floor();
        let wider = (down * (flatter.oversubscription + 1.0) / flatter.oversubscription).ceil() as u32;
        let bigger = FabricSpec { switch_radix: wider.max(base.switch_radix), ..base.clone() };
        prop_assert!(t(&bigger, &flatter, fragmentation) <= t0 * (1.0 + 1e-12));
        let scattered = fragmentation + (1.0 - fragmentation) * worse;
        prop_assert!(t(&base, &topology, scattered) >= t0 * (1.0 - 1e-12));
    }
}

/// A random valid dense configuration of Llama 3 70B (as `properties.rs`), on a random tree.
fn config() -> impl Strategy<Value = Config> {
    (
        prop::sample::select(vec![1u32, 2, 4, 8]),
        prop::sample::select(vec![1u32, 2, 4, 8]),
        prop::sample::select(vec![2u32, 8, 32, 128, 512]),
        tree(),
        0.0f64..1.0,
    )
        .prop_map(|(tp, pp, dp, topology, placement)| {
            let mut c = reference();
            c.gpus = tp * pp * dp;
            c.parallelism = Parallelism { tp, pp, dp, vpp: 1, ..c.parallelism.clone() };
            c.training.global_batch = dp * 16;
            c.training.placement = placement;
            c.topology = topology;
            c
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// The same holds for a whole training step: InfiniBand never slower than RoCE at equal rate, hops and mode;
    /// adaptive routing never slower than ECMP.
    #[test]
    fn a_training_step_keeps_the_same_order(c in config(), (lb, eff, qps) in mode(), tail in 1.0f64..4.0) {
        let base = FabricSpec { load_balancing: lb, load_balance_efficiency: eff, qps_per_connection: qps, ..ib_ndr() };
        let step = |f: FabricSpec| evaluate(&Config { fabric: f, ..c.clone() }).unwrap().step_time_s;
        let (ib, roce) = (step(transport(&base, false, 1.0, 0.0)), step(transport(&base, true, tail, 0.2e-6)));
        prop_assert!(ib <= roce * (1.0 + 1e-12), "{ib} > {roce}");
        let ecmp = FabricSpec { load_balancing: LoadBalancing::Ecmp, load_balance_efficiency: 1.0, ..base.clone() };
        prop_assert!(step(base.clone()) <= step(ecmp) * (1.0 + 1e-12));
    }
}
