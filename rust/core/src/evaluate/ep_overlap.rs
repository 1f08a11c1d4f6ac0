//! Expert-parallel all-to-alls hidden by pairing one micro-batch's forward with another's backward, layer by
//! layer. Megatron-Core's combined 1F1B (`--overlap-moe-expert-parallel-comm`) runs a MoE layer's forward and
//! another micro-batch's backward of a layer together, the all-to-alls on a communication stream and the compute
//! on another, in this order (megatron/core/models/common/model_chunk_schedule_plan.py
//! `TransformerLayerSchedulePlan.run`, NVIDIA/Megatron-LM d98e8a64dd):
//!
//! ```text
//! comm stream: combine_bwd       | dispatch_fwd -> dispatch_bwd       | combine_fwd
//! comp stream: pre_dispatch_fwd  | mlp_bwd -> mlp_bwd_dw -> mlp_fwd   | pre_dispatch_bwd
//! ```
//!
//! Each all-to-all waits for the compute that produces its input and hides only behind the compute the schedule
//! runs beside it, so a layer hides less than its whole compute when the pieces are uneven (DeepSeek-V3's DualPipe
//! pairs a forward and a backward chunk's attention, dispatch, MLP and combine the same way: arXiv 2412.19437,
//! Fig. 4). The pipeline's warm-up forwards and cool-down backwards have no partner and hide nothing
//! (megatron/core/pipeline_parallel/schedules.py `get_pp_rank_microbatches`: one more warm-up micro-batch with the
//! overlap on).

/// One MoE layer's pieces in the paired schedule, forward time of one micro-batch on one GPU.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairedLayer {
    /// Before the dispatch: attention, norms, router, shared experts.
    pub pre_dispatch_s: f64,
    /// Between the dispatch and the combine: the routed experts and the token permutation.
    pub experts_s: f64,
    /// Backward time of what runs before the dispatch (data and weight gradients).
    pub pre_dispatch_backward_s: f64,
    /// One dispatch (the combine moves the same volume back).
    pub all_to_all_s: f64,
}

impl PairedLayer {
    /// Time one forward and one backward of the layer take run as a pair, from the two streams' order and the
    /// data each piece waits for. The experts' backward is two GEMMs per forward GEMM, a data gradient then a
    /// weight gradient, each as long as the forward.
    pub fn paired_s(&self) -> f64 {
        let (a, x, d) = (self.pre_dispatch_s, self.experts_s, self.all_to_all_s);
        let combine_bwd = d;
        let mlp_bwd = a.max(combine_bwd) + x;
        let dispatch_fwd = combine_bwd.max(a) + d;
        let mlp_bwd_dw = mlp_bwd + x;
        let dispatch_bwd = dispatch_fwd.max(mlp_bwd) + d;
        let mlp_fwd = mlp_bwd_dw.max(dispatch_fwd) + x;
        let combine_fwd = dispatch_bwd.max(mlp_fwd) + d;
        let pre_dispatch_bwd = mlp_fwd.max(dispatch_bwd) + self.pre_dispatch_backward_s;
        combine_fwd.max(pre_dispatch_bwd)
    }

    /// The pair's compute alone: what the all-to-alls would add nothing to if they hid completely.
    pub fn compute_s(&self) -> f64 {
        self.pre_dispatch_s + 3.0 * self.experts_s + self.pre_dispatch_backward_s
    }

    /// Of the pair's four all-to-alls, the time they hide behind its compute.
    pub fn hidden_s(&self) -> f64 {
        let exposed = (self.paired_s() - self.compute_s()).max(0.0);
        (4.0 * self.all_to_all_s - exposed).max(0.0)
    }
}

/// Share of a stage's forward and backward passes that run unpaired: the warm-up forwards and the cool-down
/// backwards of the first pipeline stage, the one with the most, over its `micro_batches` x `vpp` passes of each
/// kind. Interleaved: 2 (pp - 1) + (vpp - 1) pp + 1 warm-up passes (schedules.py, group size pp); one pipeline
/// chunk: pp - 1 + 1; no pipeline: the first forward and the last backward.
pub fn unpaired_share(pp: u32, vpp: u32, micro_batches: u32) -> f64 {
    let (pp, vpp) = (pp as f64, vpp as f64);
    let warmup = if vpp > 1.0 { 2.0 * (pp - 1.0) + (vpp - 1.0) * pp + 1.0 } else { pp };
    (warmup / (micro_batches as f64 * vpp).max(1.0)).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_to_alls_shorter_than_the_compute_beside_them_hide_completely() {
        // Attention 2 ms, experts 1 ms, attention backward 4 ms, all-to-alls of 0.5 ms: each waits for nothing
        // and is shorter than its partner. The pair takes its compute, 2 + 3 + 4 = 9 ms, and hides all 2 ms.
        let l =
            PairedLayer { pre_dispatch_s: 2e-3, experts_s: 1e-3, pre_dispatch_backward_s: 4e-3, all_to_all_s: 0.5e-3 };
        assert!((l.paired_s() - 9e-3).abs() < 1e-15);
        assert!((l.hidden_s() - 2e-3).abs() < 1e-15);
    }

    #[test]
    fn a_long_all_to_all_shows_where_its_partner_is_short() {
        // Attention 0.8 ms, experts 1 ms, attention backward 2 ms, all-to-alls 1.1 ms (worked by hand):
        // combine_bwd ends 1.1; mlp_bwd 1.1-2.1; dispatch_fwd 1.1-2.2; mlp_bwd_dw 2.1-3.1; dispatch_bwd 2.2-3.3;
        // mlp_fwd 3.1-4.1; combine_fwd 4.1-5.2; attention backward 4.1-6.1. The pair takes 6.1 ms against 5.8 of
        // compute: 0.3 ms of the 4.4 show (the combine's backward outlasts the attention's forward beside it).
        let l = PairedLayer {
            pre_dispatch_s: 0.8e-3,
            experts_s: 1e-3,
            pre_dispatch_backward_s: 2e-3,
            all_to_all_s: 1.1e-3,
        };
        assert!((l.paired_s() - 6.1e-3).abs() < 1e-15, "{}", l.paired_s());
        assert!((l.hidden_s() - 4.1e-3).abs() < 1e-15);
        // All-to-alls of 5 ms outlast everything: combine_bwd 0-5, dispatch_fwd 5-10, dispatch_bwd 10-15,
        // combine_fwd 15-20 (the attention backward ends at 17): the pair takes the four all-to-alls, 20 ms, and
        // hides exactly its 5.8 ms of compute behind them.
        let slow = PairedLayer { all_to_all_s: 5e-3, ..l };
        assert!((slow.paired_s() - 20e-3).abs() < 1e-15);
        assert!((slow.hidden_s() - 5.8e-3).abs() < 1e-15);
    }

    #[test]
    fn hiding_never_exceeds_the_traffic_or_grows_with_slower_links() {
        let base =
            PairedLayer { pre_dispatch_s: 1e-3, experts_s: 0.7e-3, pre_dispatch_backward_s: 2.5e-3, all_to_all_s: 0.0 };
        let mut last_exposed = 0.0;
        for i in 0..200 {
            let l = PairedLayer { all_to_all_s: i as f64 * 0.05e-3, ..base };
            assert!(l.hidden_s() <= 4.0 * l.all_to_all_s + 1e-15);
            let exposed = l.paired_s() - l.compute_s();
            assert!(exposed >= last_exposed - 1e-15, "exposed time fell as the all-to-all grew");
            last_exposed = exposed;
        }
    }

    #[test]
    fn warm_up_and_cool_down_passes_run_unpaired() {
        // PP 8, VPP 4, 128 micro-batches: 14 + 24 + 1 = 39 of 512 passes.
        assert!((unpaired_share(8, 4, 128) - 39.0 / 512.0).abs() < 1e-15);
        // No pipeline: the first forward of 64.
        assert!((unpaired_share(1, 1, 64) - 1.0 / 64.0).abs() < 1e-15);
        // More warm-up than passes: nothing pairs.
        assert_eq!(unpaired_share(8, 4, 4), 1.0);
    }
}
