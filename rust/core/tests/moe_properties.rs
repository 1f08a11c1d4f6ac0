//! Invariants the model must keep for any MoE configuration with expert parallelism (proptest).

use proptest::prelude::*;
use scalefront_core::examples::*;
use scalefront_core::*;

/// A random valid configuration of Mixtral 8x7B on 8..1024 H100s with expert parallelism, its all-to-alls
/// overlapped or not, interleaved pipelines included (the EP overlap pairs passes within them).
fn moe_config() -> impl Strategy<Value = Config> {
    (
        prop::sample::select(vec![1u32, 2]),      // tp
        prop::sample::select(vec![1u32, 2, 4]),   // pp
        prop::sample::select(vec![1u32, 2]),      // vpp
        prop::sample::select(vec![8u32, 16, 64]), // dp
        prop::sample::select(vec![2u32, 4, 8]),   // ep
        prop::sample::select(vec![4u32, 8, 32]),  // micro-batches (whole multiples of pp, as interleaving needs)
        prop::sample::select(vec![Dispatcher::AllToAll, Dispatcher::Flex]),
        0.0f64..=1.0, // overlap.ep
    )
        .prop_map(|(tp, pp, vpp, dp, ep, m, dispatcher, overlap)| {
            let mut c = reference();
            c.model = mixtral_8x7b();
            c.gpus = tp * pp * dp;
            let vpp = if pp > 1 { vpp } else { 1 };
            c.parallelism = Parallelism { tp, pp, dp, ep, etp: 1, vpp, micro_batch: 1, ..c.parallelism };
            c.training.global_batch = dp * m;
            c.training.moe_dispatcher = dispatcher;
            c.overlap.ep = overlap;
            c
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn moe_steps_keep_the_bandwidth_and_overlap_invariants(
        c in moe_config(),
        factor in 1.0f64..8.0,
        more in 0.0f64..=1.0,
    ) {
        let base = evaluate(&c).unwrap();
        let network = |c: &mut Config, f: f64| c.fabric.link_bytes_per_s *= f;
        let nvlink = |c: &mut Config, f: f64| c.scale_up.bytes_per_s *= f;
        for faster in [network, nvlink] {
            let mut fast = c.clone();
            faster(&mut fast, factor);
            prop_assert!(evaluate(&fast).unwrap().step_time_s <= base.step_time_s * (1.0 + 1e-12));
        }
        // More of the all-to-alls overlapped is never slower, and moves them between exposed and hidden only.
        let mut overlapped = c.clone();
        overlapped.overlap.ep = c.overlap.ep + (1.0 - c.overlap.ep) * more;
        let o = evaluate(&overlapped).unwrap();
        prop_assert!(o.step_time_s <= base.step_time_s * (1.0 + 1e-12));
        let ep = |e: &Evaluation| e.breakdown.ep_comm_s + e.hidden.ep_comm_s;
        prop_assert!((ep(&o) - ep(&base)).abs() <= 1e-9 * ep(&base).max(1e-30));
        prop_assert!(base.breakdown.ep_comm_s >= 0.0 && base.hidden.ep_comm_s >= 0.0);
    }
}
