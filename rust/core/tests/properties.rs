//! Invariants the model must keep for any configuration (proptest).

use proptest::prelude::*;
use scalefront_core::examples::*;
use scalefront_core::network::collectives::Collective;
use scalefront_core::step::modules::{RecomputeModule, RecomputeModules};
use scalefront_core::*;

/// A random valid configuration of Llama 3 70B on 1..4096 H100s (whole 8-GPU servers beyond one; no
/// oversubscription on a switchless torus).
fn config() -> impl Strategy<Value = Config> {
    (
        prop::sample::select(vec![1u32, 2, 4, 8]), // tp (divides the 8 KV heads)
        prop::sample::select(vec![1u32, 2, 4, 8]), // pp
        prop::sample::select(vec![1u32, 2, 4, 8, 16, 32, 64]), // dp
        prop::sample::select(vec![1u32, 2]),       // cp
        prop::sample::select(vec![1u32, 2]),       // micro-batch
        0u32..4,                                   // zero stage
        prop::sample::select(vec![Recompute::None, Recompute::Selective, Recompute::Full]),
        prop::sample::select(vec![
            TopologyKind::FatTree,
            TopologyKind::RailFatTree,
            TopologyKind::Dragonfly,
            TopologyKind::Torus3d,
        ]),
        1.0f64..4.0, // oversubscription
        any::<bool>(),
    )
        .prop_map(|(tp, pp, dp, cp, mb, zero, recompute, kind, oversub, sp)| {
            let mut c = reference();
            c.gpus = tp * pp * dp * cp;
            c.parallelism = Parallelism {
                tp,
                pp,
                dp,
                cp,
                ep: 1,
                vpp: 1,
                micro_batch: mb,
                zero_stage: zero,
                recompute,
                sequence_parallel: sp,
                ..Parallelism::default()
            };
            c.training.global_batch = dp * mb * 16;
            let oversubscription = if kind == TopologyKind::Torus3d { 1.0 } else { oversub };
            c.topology = TopologySpec { kind, oversubscription, ..rail_fat_tree() };
            c
        })
        .prop_filter("whole servers", |c| c.gpus <= 8 || c.gpus.is_multiple_of(8))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn more_bandwidth_is_never_slower(c in config(), factor in 1.0f64..8.0) {
        let base = evaluate(&c).unwrap();
        let mut fast_net = c.clone();
        fast_net.fabric.link_bytes_per_s *= factor;
        prop_assert!(evaluate(&fast_net).unwrap().step_time_s <= base.step_time_s * (1.0 + 1e-12));
        let mut fast_nvlink = c.clone();
        fast_nvlink.scale_up.bytes_per_s *= factor;
        prop_assert!(evaluate(&fast_nvlink).unwrap().step_time_s <= base.step_time_s * (1.0 + 1e-12));
        let mut fast_hbm = c.clone();
        fast_hbm.gpu.hbm_bytes_per_s *= factor;
        prop_assert!(evaluate(&fast_hbm).unwrap().step_time_s <= base.step_time_s * (1.0 + 1e-12));
    }

    #[test]
    fn more_overlap_is_never_slower(c in config(), a in 0.0f64..1.0, b in 0.0f64..1.0) {
        let (lo, hi) = if a < b { (a, b) } else { (b, a) };
        let mut low = c.clone();
        low.overlap = Overlap { dp: lo, tp: lo, pp: lo, ep: lo };
        let mut high = c.clone();
        high.overlap = Overlap { dp: hi, tp: hi, pp: hi, ep: hi };
        let l = evaluate(&low).unwrap();
        let h = evaluate(&high).unwrap();
        prop_assert!(h.step_time_s <= l.step_time_s * (1.0 + 1e-12));
        // Hidden plus exposed communication is the same work either way.
        let total = |e: &Evaluation| e.breakdown.dp_comm_s + e.hidden.dp_comm_s;
        prop_assert!((total(&l) - total(&h)).abs() <= 1e-9 * total(&l).max(1e-30));
    }

    #[test]
    fn finer_grained_zero3_gathering_is_never_faster(c in config()) {
        // One collective per weight tensor pays each ring's latency once per tensor for the same bytes; a
        // framework that blocks on each gather hides none of them.
        let mut flat = c.clone();
        flat.parallelism.zero_stage = 3;
        let mut by_tensor = flat.clone();
        by_tensor.framework.zero3_gather_per_tensor = true;
        let mut blocking = by_tensor.clone();
        blocking.framework.zero3_prefetch = false;
        let [f, t, b] = [&flat, &by_tensor, &blocking].map(|cfg| evaluate(cfg).unwrap());
        prop_assert!(t.step_time_s >= f.step_time_s * (1.0 - 1e-12), "{} < {}", t.step_time_s, f.step_time_s);
        prop_assert!(b.step_time_s >= t.step_time_s * (1.0 - 1e-12), "{} < {}", b.step_time_s, t.step_time_s);
        let dp = |e: &Evaluation| e.breakdown.dp_comm_s + e.hidden.dp_comm_s;
        prop_assert!(dp(&t) >= dp(&f) * (1.0 - 1e-12));
    }

    #[test]
    fn holding_sharded_state_to_the_last_micro_batch_trades_traffic_for_memory(c in config(), keep in any::<bool>()) {
        // Reducing ZeRO-2/3's gradients once a step (or keeping unresharded weights gathered through a pipelined
        // step) never moves more data-parallel traffic than doing it every micro-batch, and never takes less
        // gradient memory. (Its step time can be longer: one reduction at the end has only the last backward to
        // hide behind, where reductions every micro-batch spread over all of them.)
        let mut each = c.clone();
        each.parallelism.reshard_after_forward = keep;
        let mut held = each.clone();
        held.framework.zero_reduce_per_micro_batch = false;
        held.framework.pp_keeps_weights_gathered = true;
        let (e, h) = (evaluate(&each).unwrap(), evaluate(&held).unwrap());
        prop_assert!(h.memory.gradients_bytes >= e.memory.gradients_bytes);
        let dp = |e: &Evaluation| e.breakdown.dp_comm_s + e.hidden.dp_comm_s;
        prop_assert!(dp(&h) <= dp(&e) * (1.0 + 1e-12));
    }

    #[test]
    fn rerunning_every_other_gemm_is_never_faster(c in config()) {
        // torchtitan's per-operator selective recomputation reruns half the block's GEMMs on top of what
        // Korthikanti et al.'s reruns (norms and activation), and never keeps more than no recomputation does.
        let mut korthikanti = c.clone();
        korthikanti.parallelism.recompute = Recompute::Selective;
        let mut alternate = korthikanti.clone();
        alternate.framework.selective_recomputes_alternate_mms = true;
        let mut none = alternate.clone();
        none.parallelism.recompute = Recompute::None;
        let [k, a, n] = [&korthikanti, &alternate, &none].map(|cfg| evaluate(cfg).unwrap());
        prop_assert!(a.step_time_s >= k.step_time_s * (1.0 - 1e-12), "{} < {}", a.step_time_s, k.step_time_s);
        prop_assert!(a.breakdown.recompute_s > k.breakdown.recompute_s);
        prop_assert!(a.memory.activations_bytes <= n.memory.activations_bytes * (1.0 + 1e-12));
    }

    #[test]
    fn more_hbm_never_hurts(c in config(), extra in 0.0f64..200e9) {
        let base = evaluate(&c).unwrap();
        let mut big = c.clone();
        big.gpu.hbm_bytes += extra;
        let b = evaluate(&big).unwrap();
        prop_assert!(b.memory.margin_bytes >= base.memory.margin_bytes);
        prop_assert!(b.feasible || !base.feasible);
        prop_assert_eq!(b.step_time_s, base.step_time_s);
    }

    #[test]
    fn results_are_finite_and_within_ceilings(c in config()) {
        let e = evaluate(&c).unwrap();
        prop_assert!(e.step_time_s.is_finite() && e.step_time_s > 0.0);
        let best_attention = c.gpu.attention_efficiency.iter().flatten().fold(0.0f64, |a, &b| a.max(b));
        prop_assert!(e.mfu > 0.0 && e.mfu <= c.gpu.gemm_efficiency.max(best_attention));
        prop_assert!(e.hfu >= e.mfu);
        prop_assert!(e.scaling_efficiency > 0.0 && e.scaling_efficiency <= 1.0);
        prop_assert!(e.cost_own_usd > 0.0 && e.cost_rent_usd > 0.0);
    }

    #[test]
    fn oversubscription_never_helps(c in config(), r in 1.0f64..4.0) {
        prop_assume!(c.topology.kind != TopologyKind::Torus3d); // a torus has no leaf to oversubscribe
        let mut lo = c.clone();
        lo.topology.oversubscription = 1.0;
        let mut hi = c.clone();
        hi.topology.oversubscription = r;
        // Compare times only: the switch count (and so the price) legitimately falls with oversubscription.
        prop_assert!(evaluate(&hi).unwrap().step_time_s >= evaluate(&lo).unwrap().step_time_s * (1.0 - 1e-12));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Wherever a group lands, its worst placement is consistent: no more members in one domain than the group
    /// or the domain holds, at least as many domains as its size needs, and a group in one domain has all its
    /// members there.
    #[test]
    fn group_placement_is_consistent(size in 1u32..300, stride in 1u32..200, domain in 1u32..600, blocks in 1u32..64) {
        let gpus = size.saturating_mul(stride).saturating_mul(blocks);
        let g = scalefront_core::network::placement::GroupPlacement::in_cluster(size, stride, domain, gpus);
        prop_assert!(g.per_domain >= 1 && g.per_domain <= size && g.per_domain <= domain);
        prop_assert!(g.domains >= size.div_ceil(domain));
        if g.domains == 1 {
            prop_assert_eq!(g.per_domain, size);
        }
    }
}

/// Time of an all-reduce of `bytes` over a DP-like group of `size` members at `stride` GPUs on `gpus` H100s.
fn all_reduce_s(fabric: &FabricSpec, topology: &TopologySpec, gpus: u32, size: u32, stride: u32, bytes: f64) -> f64 {
    use scalefront_core::network::collectives::Interconnect;
    use scalefront_core::network::placement::GroupPlacement;
    use scalefront_core::network::topology::Network;
    let network = Network::new(fabric, topology, gpus, 8);
    let scale_up = nvlink4();
    let ic = Interconnect { scale_up: &scale_up, fabric, network: &network };
    ic.collective_time_s(Collective::AllReduce, bytes, &GroupPlacement::in_cluster(size, stride, 8, gpus))
}

/// Time of `op` on `bytes` over every GPU of `nodes` 8-GPU servers on a rail-optimized fat-tree.
fn whole_cluster_s(op: Collective, fabric: &FabricSpec, scale_up: &ScaleUpSpec, nodes: u32, bytes: f64) -> f64 {
    use scalefront_core::network::collectives::Interconnect;
    use scalefront_core::network::placement::GroupPlacement;
    use scalefront_core::network::topology::Network;
    let gpus = nodes * 8;
    let network = Network::new(fabric, &rail_fat_tree(), gpus, 8);
    let ic = Interconnect { scale_up, fabric, network: &network };
    ic.collective_time_s(op, bytes, &GroupPlacement::new(gpus, 1, 8))
}

fn collective_choice() -> impl Strategy<Value = Collective> {
    prop::sample::select(vec![Collective::AllReduce, Collective::AllGather, Collective::ReduceScatter])
}

fn fabric_choice() -> impl Strategy<Value = FabricSpec> {
    prop::sample::select(vec![ib_ndr(), roce_400g()])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Oversubscription never speeds a collective up, and slows a DP group whose ring leaves every leaf.
    #[test]
    fn oversubscription_slows_traffic_that_crosses_it(
        fabric in fabric_choice(), r in 1.5f64..8.0, members in 16u32..256, bytes in 1e8f64..4e9,
    ) {
        let gpus = 8192;
        let stride = (gpus / members).max(8);
        let mut tree = fat_tree(1.0);
        let flat = all_reduce_s(&fabric, &tree, gpus, members, stride, bytes);
        tree.oversubscription = r;
        let tapered = all_reduce_s(&fabric, &tree, gpus, members, stride, bytes);
        prop_assert!(tapered > flat * 1.05, "{tapered} vs {flat}");
    }

    /// With the same efficiency of its own, adaptive routing (or spraying) is never slower than static ECMP; more
    /// queue pairs never slow ECMP down.
    #[test]
    fn adaptive_routing_is_never_slower_than_ecmp(c in config(), qps in 1.0f64..32.0, extra in 1.0f64..4.0) {
        let mut ecmp = c.clone();
        ecmp.fabric = roce_400g();
        ecmp.fabric.qps_per_connection = qps;
        let mut adaptive = ecmp.clone();
        adaptive.fabric.load_balancing = LoadBalancing::Adaptive;
        let mut spraying = ecmp.clone();
        spraying.fabric.load_balancing = LoadBalancing::Spraying;
        let mut more_qps = ecmp.clone();
        more_qps.fabric.qps_per_connection = qps * extra;
        let t = |c: &Config| evaluate(c).unwrap().step_time_s;
        prop_assert!(t(&adaptive) <= t(&ecmp) * (1.0 + 1e-12));
        prop_assert!(t(&spraying) <= t(&ecmp) * (1.0 + 1e-12));
        prop_assert!(t(&more_qps) <= t(&ecmp) * (1.0 + 1e-12));
    }

    /// In-network reduction is never slower than the ring it replaces (on the rail-aligned leaves it needs); a
    /// longer tail is never faster.
    #[test]
    fn sharp_is_never_slower_and_tails_never_help(c in config(), tail in 1.0f64..4.0, gain in 1.0f64..1.7) {
        let mut with = c.clone();
        with.topology.kind = TopologyKind::RailFatTree;
        let mut without = with.clone();
        with.fabric.in_network_reduction_efficiency = gain;
        without.fabric.in_network_reduction_efficiency = 0.0;
        let t = |c: &Config| evaluate(c).unwrap().step_time_s;
        prop_assert!(t(&with) <= t(&without) * (1.0 + 1e-12));
        let mut slow_tail = c.clone();
        slow_tail.fabric.tail_latency_factor = tail;
        prop_assert!(t(&slow_tail) >= t(&c) * (1.0 - 1e-12));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// A larger message never takes less time, and bus bandwidth never beats the wire: the NICs' line rate (x the
    /// in-network gain where the switches reduce) or the scale-up domain's.
    #[test]
    fn collectives_grow_with_size_and_stay_under_the_wire(
        fabric in fabric_choice(), nodes in 1u32..64, bytes in 1e3f64..1e10, factor in 1.0f64..4.0,
        op in collective_choice(),
    ) {
        let gpus = nodes * 8;
        let scale_up = nvlink4();
        let small = whole_cluster_s(op, &fabric, &scale_up, nodes, bytes);
        let large = whole_cluster_s(op, &fabric, &scale_up, nodes, bytes * factor);
        prop_assert!(large >= small * (1.0 - 1e-12), "{small} -> {large}");
        let n = gpus as f64;
        let per_rank = if op == Collective::AllReduce { 2.0 * (n - 1.0) / n } else { (n - 1.0) / n };
        let busbw = per_rank * bytes / small;
        // In-network reduction beats the wire by its gain; so does NVLSTree between two domains, which exchange
        // halves (NCCL credits it twice the network bandwidth; 2 x 8 H100 measure 465 GB/s on 8 x 400G).
        let nvls_two_domains = if nodes == 2 && scale_up.in_switch_allreduce_efficiency > 0.0 { 2.0 } else { 1.0 };
        let gain = fabric.in_network_reduction_efficiency.max(nvls_two_domains);
        let wire = if nodes == 1 {
            scale_up.bytes_per_s * scale_up.in_switch_allreduce_efficiency.max(1.0)
        } else {
            8.0 * fabric.link_bytes_per_s * gain
        };
        prop_assert!(busbw <= wire * (1.0 + 1e-9), "{busbw} > {wire}");
    }

    /// NCCL's protocols (LL, LL128, Simple) never beat the efficiency ceiling: a ring collective (all-gather,
    /// reduce-scatter) reaches at most line rate x efficiency of the NICs (or of the domain inside one), at every
    /// size; and more bandwidth, on either level, never makes a collective slower.
    #[test]
    fn nccl_protocols_stay_under_the_efficiency_ceiling_and_bandwidth_never_hurts(
        fabric in fabric_choice(), nodes in 1u32..64, bytes in 1e3f64..1e10, factor in 1.0f64..4.0,
        op in collective_choice(),
    ) {
        let gpus = nodes * 8;
        let scale_up = nvlink4();
        let t = whole_cluster_s(op, &fabric, &scale_up, nodes, bytes);
        if op != Collective::AllReduce {
            let n = gpus as f64;
            let busbw = (n - 1.0) / n * bytes / t;
            let ceiling = if nodes == 1 {
                scale_up.bytes_per_s * scale_up.ring_efficiency
            } else {
                8.0 * fabric.gpu_bytes_per_s()
            };
            prop_assert!(busbw <= ceiling * (1.0 + 1e-9), "{busbw} > {ceiling}");
        }
        let mut fast_fabric = fabric.clone();
        fast_fabric.link_bytes_per_s *= factor;
        let mut fast_scale_up = nvlink4();
        fast_scale_up.bytes_per_s *= factor;
        let t_fast = whole_cluster_s(op, &fast_fabric, &fast_scale_up, nodes, bytes);
        prop_assert!(t_fast <= t * (1.0 + 1e-12), "{t} -> {t_fast}");
    }
}

proptest! {
    /// Shards are contiguous, cover every cell once in order, and each is within one cell's cost of an equal share.
    #[test]
    fn shards_cover_cells_once_and_balance_cost(
        costs in prop::collection::vec(0u64..1_000_000, 0..300),
        shards in 1usize..70,
    ) {
        let ranges = scalefront_core::sweep::shard_ranges(&costs, shards);
        prop_assert_eq!(ranges.len(), shards);
        prop_assert_eq!(ranges[0].start, 0);
        prop_assert_eq!(ranges[shards - 1].end, costs.len());
        prop_assert!(ranges.windows(2).all(|w| w[0].end == w[1].start));
        let total: u64 = costs.iter().sum();
        let largest = costs.iter().copied().max().unwrap_or(0);
        for r in ranges {
            let cost: u64 = costs[r].iter().sum();
            // |cost - total / shards| <= largest, in integers: |cost x shards - total| <= largest x shards.
            prop_assert!((cost as i128 * shards as i128 - total as i128).abs() <= (largest as i128) * shards as i128);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// The ROI's Monte Carlo keeps each candidate's layout stage between samples and sets only its collective
    /// times on each sample's cluster (`LayoutStage::unlinked` + `link`): that must evaluate exactly as a stage
    /// built on that cluster, whatever the fabric's efficiency, tail latency, the job's placement.
    #[test]
    fn a_layout_stage_linked_to_another_cluster_evaluates_as_one_built_there(
        cfg in config(),
        efficiency in 0.5f64..1.0,
        tail in 1.0f64..4.0,
        placement in 0.0f64..1.0,
    ) {
        let mut sampled = cfg.clone();
        (sampled.fabric.efficiency, sampled.fabric.tail_latency_factor) = (efficiency, tail);
        sampled.training.placement = placement;
        let (Ok(first), Ok(there)) = (evaluate::ClusterStage::new(&cfg), evaluate::ClusterStage::new(&sampled)) else {
            return Ok(());
        };
        let par = &cfg.parallelism;
        if let Ok(mut kept) = evaluate::LayoutStage::unlinked(&first, par) {
            kept.link(&there, par);
            let built = evaluate::LayoutStage::new(&there, par).unwrap();
            let linked = evaluate::finish(&there, &kept, par, &cfg.overlap);
            let fresh = evaluate::finish(&there, &built, par, &cfg.overlap);
            prop_assert_eq!(format!("{linked:?}"), format!("{fresh:?}"));
        } else {
            prop_assert!(evaluate::LayoutStage::new(&there, par).is_err());
        }
    }
}

/// Mixtral 8x7B on 8-64 H100s with expert parallelism, selective recomputation, and a set of Megatron-Core
/// modules to rerun (bit i: `RecomputeModule::ALL[i]`).
fn moe_modules_config() -> impl Strategy<Value = (Config, RecomputeModules)> {
    let degrees = (prop::sample::select(vec![1u32, 2, 4, 8]), prop::sample::select(vec![8u32, 16, 64]));
    (degrees, prop::sample::select(vec![1u32, 2]), 1u16..128).prop_map(|((ep, dp), mb, mask)| {
        let mut c = reference();
        c.model = mixtral_8x7b();
        c.gpus = dp;
        c.parallelism = Parallelism {
            tp: 1,
            dp,
            ep,
            micro_batch: mb,
            zero_stage: 1,
            recompute: Recompute::Selective,
            ..Parallelism::default()
        };
        c.training.global_batch = dp * mb * 4;
        let all = RecomputeModule::ALL.iter().enumerate();
        let modules = all.filter(|(i, _)| mask & (1 << i) != 0).fold(RecomputeModules::NONE, |s, (_, m)| s.with(*m));
        (c, modules)
    })
}

proptest! {
    #[test]
    fn rerunning_modules_lies_between_no_and_full_recomputation((c, modules) in moe_modules_config()) {
        // The modules a Megatron-Core run names rerun part of each layer's forward: never less time than keeping
        // everything, never more than rerunning the whole forward; their memory likewise between the two.
        let mut named = c.clone();
        named.training.recompute_modules = modules;
        let [none, full] = [Recompute::None, Recompute::Full].map(|r| {
            let mut cfg = c.clone();
            cfg.parallelism.recompute = r;
            evaluate(&cfg).unwrap()
        });
        let n = evaluate(&named).unwrap();
        prop_assert!(n.step_time_s >= none.step_time_s * (1.0 - 1e-12), "{} < {}", n.step_time_s, none.step_time_s);
        prop_assert!(n.step_time_s <= full.step_time_s * (1.0 + 1e-12), "{} > {}", n.step_time_s, full.step_time_s);
        prop_assert!(n.memory.activations_bytes <= none.memory.activations_bytes * (1.0 + 1e-12));
        prop_assert!(n.memory.activations_bytes >= full.memory.activations_bytes * (1.0 - 1e-12));
    }
}

#[test]
fn naming_modules_without_selective_recomputation_is_refused() {
    let mut c = reference();
    c.training.recompute_modules = RecomputeModules::parse("core_attn").unwrap();
    c.parallelism.recompute = Recompute::Full;
    let e = c.validate_figures().unwrap_err();
    assert_eq!((e.category(), e.field()), ("invalid_figure", "recompute_modules"));
    assert!(e.to_string().contains("unless recompute is selective"), "{e}");
    c.parallelism.recompute = Recompute::Selective;
    assert!(c.validate_figures().is_ok());
}

#[test]
fn a_rerun_mlp_sends_its_tensor_parallel_collectives_again() {
    // Llama 3 70B at TP 8 with sequence parallelism: each layer's forward all-gathers and reduce-scatters twice,
    // once for the attention and once for the MLP. Rerunning the whole forward (full recomputation) adds one pass
    // of both; rerunning the MLP (Megatron-Core's `mlp` module) adds half a pass: exactly half the TP traffic.
    let tp_total = |recompute: Recompute, modules: &str| {
        let mut c = reference();
        c.parallelism.recompute = recompute;
        c.training.recompute_modules = RecomputeModules::parse(modules).unwrap();
        let e = evaluate(&c).unwrap();
        e.breakdown.tp_comm_s + e.hidden.tp_comm_s
    };
    let selective = tp_total(Recompute::Selective, "");
    let [mlp, full] = [tp_total(Recompute::Selective, "mlp"), tp_total(Recompute::Full, "")];
    assert!(selective > 0.0 && ((mlp - selective) / (full - selective) - 0.5).abs() < 1e-9, "{selective} {mlp} {full}");
    // The norms rerun no collective.
    assert_eq!(tp_total(Recompute::Selective, "layernorm"), selective);
}

#[test]
fn folded_experts_send_no_tensor_parallel_collectives_in_the_moe_block() {
    // Mixtral 8x7B at TP 2 with sequence parallelism, EP 8. With the experts' TP at 2 (as the attention's) a MoE
    // layer gathers and scatters its tokens over the TP pair as a dense MLP does; folded to expert TP 1 (MoE
    // Parallel Folding) the MoE block sends nothing over TP: every layer keeps only its attention's half.
    let tp_total = |etp: u32| {
        let mut c = reference();
        c.model = mixtral_8x7b();
        c.gpus = 64;
        c.parallelism = Parallelism { tp: 2, pp: 1, dp: 32, ep: 8, etp, vpp: 1, ..c.parallelism };
        let e = evaluate(&c).unwrap();
        e.breakdown.tp_comm_s + e.hidden.tp_comm_s
    };
    let (unfolded, folded) = (tp_total(2), tp_total(1));
    assert!(unfolded > 0.0 && (folded / unfolded - 0.5).abs() < 1e-9, "{folded} vs {unfolded}");
}
