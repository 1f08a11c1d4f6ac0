//! The communication of one serving layer and what of it the layer's compute hides: the TP all-reduces, the MoE
//! dispatch and combine over the expert-parallel group (DeepEP's normal mode, hierarchical over NVLink and RDMA,
//! in prefill steps; its low-latency mode, one RDMA message per routed copy, in decode steps; deepseek-ai/DeepEP
//! README), and two-batch overlap, which pairs each micro-batch's communication with the other's compute.

use crate::network::collectives::{Collective, Interconnect, COLLECTIVE_BASE_LATENCY_S};
use crate::network::placement::GroupPlacement;
use crate::network::topology::Traffic;
use crate::step::compute::ACTIVATION_BYTES;
use crate::step::moe::{dispatch_time_s, Dispatch};
use crate::step::parallelism::Dispatcher;

use super::layout::PhaseLayout;
use super::memory::weight_bytes;
use super::step::{LayerCompute, StepWork};
use super::{Quantization, Serving, ServingCluster};

/// SMs DeepEP's high-throughput (normal-mode) kernels occupy while they run: `Buffer.num_sms = 20`
/// (deepseek-ai/DeepEP deep_ep/buffer.py @04b06f7; Megatron-Core's `moe_deepep_num_sms` default is also 20;
/// SGLang's `DeepEPConfig.num_sms` is `Buffer.num_sms` unless a DeepEP config file sets it).
const DEEPEP_NORMAL_SMS: f64 = 20.0;

/// Share of a decode (low-latency) dispatch or combine during which its kernels hold every SM: sending and
/// receiving. In between, while the RDMA messages are in flight, the SMs are free ("after RDMA messages are issued,
/// all GPU SMs are freed", deepseek-ai/profile-data README, Decoding); the SGLang blog of 2025-05-05 saw decode
/// communication kernels "either fully utilize SMs (during send/receive) or none (during inflight waiting)", and
/// "dispatch times of ~0.17ms per layer" in SGLang's and DeepSeek's decode profiles, where "unit tests with
/// DeepEP reveal a potential of 0.06ms occupying SMs": 0.06 / 0.17 = 0.35 of a dispatch's time. EST: the same share
/// for combine (the blog gives none) and for NVLink-only groups (no figure found).
const DEEPEP_LOW_LATENCY_SM_SHARE: f64 = 0.06 / 0.17;

/// Bytes of one token's hidden state in the dispatch: FP8 with one FP32 scale per 128 elements and 16 bytes of
/// routing data (DeepEP tests/test_low_latency.py: hidden + hidden / 128 x 4 + 16), NVFP4 (the TensorRT-LLM
/// one-sided all-to-all blog's 4,032 B for hidden 7,168: 0.5625 B an element), or BF16; combine sends BF16 back.
fn dispatch_bytes(q: Quantization, h: f64) -> f64 {
    match q {
        Quantization::Bf16 => 2.0 * h,
        Quantization::Fp8 => h + h / 128.0 * 4.0 + 16.0,
        Quantization::Fp4 => h * weight_bytes(Quantization::Fp4),
    }
}

/// One low-latency (decode) dispatch or combine: one message per routed copy. When the expert-parallel group spans
/// scale-up domains every copy goes through the GPU's NIC, those for GPUs of its own domain included: DeepEP's
/// low-latency kernels are "pure RDMA" (deepseek-ai/DeepEP README @23ded3b, 2025-04, "Low-latency kernels with
/// pure RDMA": 128 tokens, top-8, at 39-46 GB/s "RDMA bandwidth" counted over every selected expert,
/// tests/test_low_latency.py `num_fp8_bytes * num_selections`); NVLink for them came on 2025-05-23 as an option
/// that is off unless asked for (`allow_nvlink_for_low_latency_mode: bool = False`, deep_ep/buffer.py @92405dd).
/// Inside one domain (an NVL72 rack) the copies ride NVLink (`Dispatcher::AllToAll`).
fn low_latency_dispatch_s(links: &Interconnect, d: &Dispatch, g: &GroupPlacement) -> f64 {
    if g.domains <= 1 || g.size <= 1 || d.tokens_per_rank <= 0.0 {
        return dispatch_time_s(links, d, g, Dispatcher::AllToAll);
    }
    let copies_bytes = d.tokens_per_rank * d.top_k * d.token_bytes * d.imbalance;
    COLLECTIVE_BASE_LATENCY_S
        + links.network_latency_s(g, Traffic::AllToAll)
        + copies_bytes / links.network_bytes_per_s(g, Traffic::AllToAll)
}

/// Communication of one layer beyond what overlaps its compute: the TP all-reduces (after attention and after the
/// MLP or the experts) and, in a MoE layer whose experts span attention replicas, dispatch and combine over the
/// expert-parallel group. With one attention replica (`dp_attention` 1) the expert-parallel group lies inside the
/// TP group, whose all-reduce after attention has left every token on every GPU: each GPU runs its experts on them
/// and the all-reduce after the experts sums the outputs, with no all-to-all (TensorRT-LLM tech blog 1, 2025-05:
/// the sparse-experts flow "dispatches input tokens to their designated experts, then applies indexed local
/// reduction on each expert's outputs before a global allreduce"; its permute and un-permute are kernels of
/// `layer_kernels`). With two-batch overlap, what the SMs the communication takes cost the compute counts here.
pub(super) fn layer_comm_s(
    c: &ServingCluster,
    p: &PhaseLayout,
    s: &Serving,
    w: &StepWork,
    moe: bool,
    l: &LayerCompute,
) -> f64 {
    let links = c.links();
    let (t, h) = (w.tokens(), c.model.hidden as f64);
    let tp_s = 2.0 * links.collective_time_s(Collective::AllReduce, t * h * ACTIVATION_BYTES, &p.tp_group);
    let Some(m) = c.model.moe.as_ref().filter(|_| moe && p.ep > 1 && p.dp_attention > 1) else {
        return tp_s;
    };
    let decode = w.decode_seqs > 0.0;
    let batches = if s.two_batch_overlap { 2.0 } else { 1.0 };
    let d = |token_bytes| Dispatch {
        tokens_per_rank: t / p.tp as f64 / batches,
        top_k: m.top_k as f64,
        token_bytes,
        node_limit: m.node_limit,
        imbalance: s.moe_imbalance,
    };
    let one = |token_bytes| {
        if decode {
            low_latency_dispatch_s(&links, &d(token_bytes), &p.ep_group)
        } else {
            dispatch_time_s(&links, &d(token_bytes), &p.ep_group, Dispatcher::Flex)
        }
    };
    // Both micro-batches' dispatches, and their combines (one each without two-batch overlap).
    let dispatch_s = batches * one(dispatch_bytes(s.quantization, h));
    let combine_s = batches * one(2.0 * h);
    if !s.two_batch_overlap {
        return tp_s + dispatch_s + combine_s;
    }
    if decode {
        return tp_s + decode_two_batch_exposed_s(l, dispatch_s, combine_s, DEEPEP_LOW_LATENCY_SM_SHARE);
    }
    let comm_sms = (DEEPEP_NORMAL_SMS / c.gpu.sm_count as f64).min(0.5);
    let attention_s = l.attention_block_s.min(l.total_s());
    tp_s + two_batch_exposed_s(attention_s, l.total_s() - attention_s, dispatch_s, combine_s, comm_sms)
}

/// Two-batch overlap of one MoE layer in a decode step, as DeepSeek's decode profile lays it out
/// (deepseek-ai/profile-data assets/decode.jpg, 2025-02) and SGLang's decode strategy runs it (operations_strategy.py
/// `_compute_moe_deepseek_blog_decode`, yields after the attention preparation, the core attention, the dispatch
/// send and the experts, micro-batches two stages apart; 2025-05): one micro-batch's dispatch is in flight beside
/// its own shared experts and the other's projections before attention (ATTN-0), its combine beside the other's
/// core attention, output projection and gate (ATTN-1), and its routed experts (MLP) wait for its dispatch with no
/// communication beside them. Per micro-batch (half the work): max(d, shared + pre) + experts + max(c, post), the
/// compute slowed by the share of the communication's time its kernels hold the SMs. Returns the time beyond the
/// layer's compute.
fn decode_two_batch_exposed_s(l: &LayerCompute, dispatch_s: f64, combine_s: f64, sm_share: f64) -> f64 {
    let total = l.total_s();
    let before_dispatch = (l.shared_experts_s + l.pre_attention_s).min(total);
    let beside_combine = l.post_attention_s.min(total - before_dispatch);
    let experts = total - before_dispatch - beside_combine;
    let stage = |compute: f64, comm: f64| comm.max(compute + sm_share * comm);
    stage(before_dispatch, dispatch_s) + experts + stage(beside_combine, combine_s) - total
}

/// Two-batch overlap of one MoE layer in a prefill step: "two micro-batches to overlap computation and all-to-all
/// communication" (deepseek-ai/profile-data README, Prefilling); SGLang runs each micro-batch as attention, yield,
/// dispatch, experts, yield, combine (lm-sys blog 2025-05-05, "Two-batch Overlap"), so the two take turns and a
/// layer is four stages of half the work each: B's attention beside A's dispatch, A's experts beside B's dispatch,
/// B's experts beside A's combine, A's next attention beside B's combine (DeepSeek's prefill profile,
/// assets/prefill.jpg, the same pairs). The computation runs on the SMs DeepEP's normal kernels leave it, this
/// share `comm_sms` of them taken, for the whole overlapped layer: "Computation 108 SMs / Communication 24 SMs" in
/// DeepSeek's prefill profile, and SGLang launches its DeepGEMM GEMMs on `total_num_sms - DeepEPConfig.num_sms` SMs
/// around the whole two-batch forward (sglang operations_strategy.py `_compute_moe_deepseek_blog_prefill`,
/// two_batch_overlap.py `configure_deep_gemm_num_sms`, 2025-05). A stage takes max(comm, compute / (1 - share)).
/// Returns the time the layer takes beyond its compute `attention_s` + `experts_s`.
fn two_batch_exposed_s(attention_s: f64, experts_s: f64, dispatch_s: f64, combine_s: f64, comm_sms: f64) -> f64 {
    let stage = |compute: f64, comm: f64| comm.max(compute / (1.0 - comm_sms));
    let (a, e, d, c) = (attention_s / 2.0, experts_s / 2.0, dispatch_s / 2.0, combine_s / 2.0);
    stage(a, d) + stage(e, d) + stage(e, c) + stage(a, c) - (attention_s + experts_s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_batch_overlap_pairs_each_communication_with_the_other_batch_compute() {
        // Attention 2, experts 4, dispatch 2, combine 4 (both micro-batches), halves 1/2/1/2. With the SMs free:
        // stages max(1,1) + max(2,1) + max(2,2) + max(1,2) = 7 against 6 of compute: 1 exposed (B's combine
        // outlasts A's next attention), where hiding the sum behind the sum would say 0.
        assert!((two_batch_exposed_s(2.0, 4.0, 2.0, 4.0, 0.0) - 1.0).abs() < 1e-12);
        // Communication shorter than the compute beside it, no SMs taken: all hidden.
        assert_eq!(two_batch_exposed_s(2.0, 4.0, 1.0, 1.0, 0.0), 0.0);
    }

    #[test]
    fn prefill_compute_runs_on_the_sms_the_communication_leaves() {
        // The same layer with a fifth of the SMs given to communication for the whole layer: compute halves
        // 1 and 2 take 1.25 and 2.5; stages max(1, 1.25) + max(1, 2.5) + max(2, 2.5) + max(2, 1.25) = 8.25, 2.25
        // beyond the 6 of compute.
        assert!((two_batch_exposed_s(2.0, 4.0, 2.0, 4.0, 0.2) - 2.25).abs() < 1e-12);
        // Short communication still costs the SMs it holds: 6 / 0.8 - 6 = 1.5.
        assert!((two_batch_exposed_s(2.0, 4.0, 1.0, 1.0, 0.2) - 1.5).abs() < 1e-12);
    }

    #[test]
    fn decode_experts_hide_no_communication() {
        // Projections 1, attention + output projection + gate 2, shared experts 1, routed experts and the rest 4;
        // dispatch 4, combine 2 (both micro-batches). Each micro-batch: max(2, 0.5 + 0.5) + 2 + max(1, 1) = 5; the
        // layer 10 against 8 of compute: 2 exposed. The prefill layout would hide dispatch behind the experts too:
        // attention 3, experts 5: max(1.5, 2) + max(2.5, 2) + max(2.5, 1) + max(1.5, 1) - 8 = 0.5.
        let l = LayerCompute {
            gemm_s: 6.0,
            attention_s: 1.5,
            elementwise_s: 0.5,
            attention_block_s: 3.0,
            pre_attention_s: 1.0,
            post_attention_s: 2.0,
            shared_experts_s: 1.0,
        };
        assert!((decode_two_batch_exposed_s(&l, 4.0, 2.0, 0.0) - 2.0).abs() < 1e-12);
        let prefill_layout = two_batch_exposed_s(3.0, 5.0, 4.0, 2.0, 0.0);
        assert!((prefill_layout - 0.5).abs() < 1e-12, "{prefill_layout}");
        // With a third of the communication's time on the SMs: dispatch stage max(2, 1 + 2/3) = 2, combine stage
        // max(1, 1 + 1/3) = 4/3 per micro-batch: 2 x (2 + 2 + 4/3) - 8 = 2 2/3.
        assert!((decode_two_batch_exposed_s(&l, 4.0, 2.0, 1.0 / 3.0) - 8.0 / 3.0).abs() < 1e-12);
        // No communication: nothing exposed.
        assert_eq!(decode_two_batch_exposed_s(&l, 0.0, 0.0, 0.35), 0.0);
    }

    #[test]
    fn two_batch_overlap_costs_at_most_the_sms_it_takes_beyond_running_one_after_the_other() {
        // Each stage is at most its communication plus its compute on the SMs left: exposed <= d + c + (a + e) x
        // share / (1 - share); with no SMs taken, never more than running the two one after the other.
        for &(a, e, d, c) in &[(1.0, 3.0, 5.0, 0.5), (0.2, 0.1, 3.0, 4.0), (3.0, 3.0, 3.0, 3.0), (0.0, 2.0, 1.0, 1.0)] {
            for &share in &[0.0, 0.15, 0.5] {
                let exposed = two_batch_exposed_s(a, e, d, c, share);
                let bound = d + c + (a + e) * share / (1.0 - share);
                assert!(exposed >= -1e-12 && exposed <= bound + 1e-12, "{a} {e} {d} {c} {share}: {exposed}");
            }
        }
    }

    #[test]
    fn dispatch_bytes_match_deepep_and_trtllm() {
        // DeepEP low-latency test: 7,168 + 7,168 / 128 x 4 + 16 = 7,408 B per FP8 token; TensorRT-LLM's NVFP4
        // dispatch 4,032 B (blog 18's table); BF16 14,336 B.
        assert_eq!(dispatch_bytes(Quantization::Fp8, 7168.0), 7408.0);
        assert_eq!(dispatch_bytes(Quantization::Fp4, 7168.0), 4032.0);
        assert_eq!(dispatch_bytes(Quantization::Bf16, 7168.0), 14336.0);
    }

    #[test]
    fn low_latency_kernels_send_every_copy_over_rdma_across_servers() {
        use crate::examples::{fat_tree, ib_ndr, nvlink4};
        use crate::network::topology::Network;
        // 64 ranks on 8 servers of 8, 128 tokens of 7,408 B, top-8: 1,024 copies = 7,585,792 B through each
        // GPU's NIC, its own server's copies included (DeepEP's pure-RDMA low-latency kernels).
        let (su, f, topo) = (nvlink4(), ib_ndr(), fat_tree(1.0));
        let net = Network::new(&f, &topo, 64, 8);
        let links = Interconnect { scale_up: &su, fabric: &f, network: &net };
        let g = GroupPlacement::new(64, 1, 8);
        let d = Dispatch { tokens_per_rank: 128.0, top_k: 8.0, token_bytes: 7408.0, node_limit: 0, imbalance: 1.0 };
        let t = low_latency_dispatch_s(&links, &d, &g);
        let wire = 7_585_792.0 / links.network_bytes_per_s(&g, Traffic::AllToAll);
        let latency = COLLECTIVE_BASE_LATENCY_S + links.network_latency_s(&g, Traffic::AllToAll);
        assert!((t - latency - wire).abs() < 1e-12, "{t}");
        // DeepEP's README measured 186 us for this dispatch on H800 with 400 Gb/s CX7 NICs (EP 64): within 10%.
        assert!((t / 186e-6 - 1.0).abs() < 0.10, "{t}");
        // NVLink would carry 1/8 of the copies: the NCCL-style all-to-all is faster.
        assert!(dispatch_time_s(&links, &d, &g, Dispatcher::AllToAll) < t);
        // Inside one server, the NVLink all-to-all.
        let one = GroupPlacement::new(8, 1, 8);
        assert_eq!(low_latency_dispatch_s(&links, &d, &one), dispatch_time_s(&links, &d, &one, Dispatcher::AllToAll));
    }
}
