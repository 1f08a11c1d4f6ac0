//! Behaviour of the whole model on worked examples.

mod common;

use common::eval;
use scalefront_core::examples::*;
use scalefront_core::*;

#[test]
fn the_reference_run_fits_and_takes_a_finite_step() {
    // The breakdown adds up to the step time by definition (`summarise` sets step_time_s to breakdown.total_s());
    // the API pins it once: tests/test_evaluate.py::test_accounting_identities.
    let e = eval(&reference());
    assert!(e.feasible, "{:?}", e.memory);
    assert!(e.step_time_s > 0.0 && e.step_time_s.is_finite());
}

#[test]
fn pipeline_bubble_is_p_minus_1_over_v_m_of_the_micro_batch_work() {
    // Narayanan et al. SC21, Sec. 2.2: bubble fraction (p - 1) / m for 1F1B, (p - 1) / (v m) interleaved.
    for (pp, vpp, dp) in [(4, 1, 32), (4, 5, 32), (8, 1, 16), (8, 2, 16)] {
        let mut cfg = reference();
        cfg.parallelism.pp = pp;
        cfg.parallelism.vpp = vpp;
        cfg.parallelism.dp = dp;
        let e = eval(&cfg);
        let b = &e.breakdown;
        let micro_batch_work = b.compute_s + b.recompute_s + b.tp_comm_s + b.cp_comm_s + b.ep_comm_s;
        let m = e.micro_batches as f64;
        let expected = (pp as f64 - 1.0) / (vpp as f64 * m);
        assert!((b.bubble_s / micro_batch_work - expected).abs() < 1e-12, "pp={pp} vpp={vpp}");
    }
}

#[test]
fn time_and_cost_to_train_follow_from_the_step_time() {
    let e = eval(&reference());
    // 15T tokens / (1024 x 8192 tokens per step) = 1,788,139.3 -> 1,788,140 steps.
    assert_eq!(e.steps, 1_788_140.0);
    assert!((e.time_to_train_s - e.steps * e.step_time_s).abs() < 1e-6 * e.time_to_train_s);
    let gpu_hours = 1024.0 * e.time_to_train_s / 3600.0;
    assert!((e.cost_rent_usd - 2.99 * gpu_hours).abs() < 1e-6 * e.cost_rent_usd);
    assert!((e.tokens_per_s - 1024.0 * 8192.0 / e.step_time_s).abs() < 1e-9 * e.tokens_per_s);
}

#[test]
fn mfu_stays_under_the_efficiency_ceiling_and_matches_tflops() {
    let e = eval(&reference());
    assert!(e.mfu > 0.0 && e.mfu <= 0.80);
    assert!((e.tflops_per_gpu * 1e12 / 989e12 - e.mfu).abs() < 1e-12);
    // Without recomputation of GEMMs, hardware and model FLOPs agree.
    assert_eq!(e.hfu, e.mfu);
    let mut full = reference();
    full.parallelism.recompute = Recompute::Full;
    let f = eval(&full);
    assert!(f.hfu > f.mfu && f.step_time_s > e.step_time_s);
}

#[test]
fn very_large_tensor_parallelism_is_not_free() {
    // TP = 8 inside the server against TP = 64 across 8 servers, same GPUs and batch.
    let mut wide = reference();
    wide.parallelism.tp = 64;
    wide.parallelism.dp = 4;
    wide.parallelism.pp = 4;
    wide.parallelism.vpp = 1;
    wide.model.heads = 64;
    wide.model.kv_heads = 64; // MHA so that tp = 64 divides the KV heads
    let mut narrow = wide.clone();
    narrow.parallelism.tp = 8;
    narrow.parallelism.dp = 32;
    let w = eval(&wide);
    let n = eval(&narrow);
    assert!(w.step_time_s > 1.5 * n.step_time_s, "tp64 {} vs tp8 {}", w.step_time_s, n.step_time_s);
    // Each GPU now runs 8x the micro-batches (dp 4 instead of 32) with 8x thinner GEMMs: the same compute, but
    // TP traffic per GPU per micro-batch does not shrink with tp, and half of it crosses InfiniBand.
    assert!(w.breakdown.tp_comm_s > 8.0 * n.breakdown.tp_comm_s, "{:#?}\n{:#?}", w.breakdown, n.breakdown);
}

#[test]
fn memory_reports_a_margin_and_rejects_what_does_not_fit() {
    // Llama 3 70B on 8 GPUs with TP = 8 only: 70.6B params x 18 bytes (2 weight, 4 FP32 main gradient, 12 Adam:
    // Megatron-LM theoretical_memory_usage.py) / 8 = 158.7 GB per GPU > 80 GB.
    let mut cfg = reference();
    cfg.gpus = 8;
    cfg.parallelism = Parallelism { tp: 8, pp: 1, dp: 1, vpp: 1, zero_stage: 0, ..cfg.parallelism.clone() };
    cfg.training.global_batch = 8;
    let e = eval(&cfg);
    assert!(!e.feasible);
    assert!(e.memory.margin_bytes < -60e9, "{:?}", e.memory);
    let states = e.memory.weights_bytes + e.memory.gradients_bytes + e.memory.optimizer_bytes;
    assert!((states / 1e9 - 18.0 * 70.55 / 8.0).abs() < 0.2, "{}", states / 1e9);
    // More HBM turns it feasible with the same margin shift.
    cfg.gpu.hbm_bytes = 400e9;
    let big = eval(&cfg);
    assert!(big.feasible);
    assert!((big.memory.margin_bytes - e.memory.margin_bytes - 320e9).abs() < 1.0);
}

#[test]
fn ib_beats_100g_tcp_for_data_parallel_heavy_layouts() {
    let mut cfg = reference();
    cfg.parallelism.pp = 1;
    cfg.parallelism.vpp = 1;
    cfg.parallelism.dp = 128;
    cfg.parallelism.zero_stage = 3;
    cfg.overlap.dp = 0.0;
    let ib = eval(&cfg);
    let mut tcp = cfg.clone();
    tcp.fabric.link_bytes_per_s = 12.5e9;
    tcp.fabric.efficiency = 0.5;
    tcp.fabric.in_network_reduction_efficiency = 0.0;
    tcp.fabric.nic_latency_s = 25e-6;
    let t = eval(&tcp);
    assert!(t.breakdown.dp_comm_s > 5.0 * ib.breakdown.dp_comm_s);
    assert!(t.time_to_train_s > ib.time_to_train_s);
}

#[test]
fn moe_model_with_expert_parallelism() {
    let mut cfg = reference();
    cfg.model = mixtral_8x7b();
    cfg.model.kv_heads = 8;
    cfg.gpus = 64;
    cfg.parallelism = Parallelism { tp: 2, pp: 1, dp: 32, ep: 8, vpp: 1, zero_stage: 1, ..cfg.parallelism.clone() };
    cfg.training.global_batch = 256;
    cfg.training.seq_len = 4096;
    let e = eval(&cfg);
    assert!(e.breakdown.ep_comm_s > 0.0);
    assert!((e.params_total / 1e9 - 46.7).abs() < 0.05);
    // 8 experts over ep = 8: one expert's weights per GPU, split by tp = 2.
    let mut dense_ep = cfg.clone();
    dense_ep.parallelism.ep = 1;
    let d = eval(&dense_ep);
    assert!(d.memory.weights_bytes > 3.0 * e.memory.weights_bytes);
}

#[test]
fn impossible_parallelism_is_an_error_not_a_result() {
    let mut cfg = reference();
    cfg.parallelism.dp = 31;
    let err = evaluate(&cfg).unwrap_err();
    assert_eq!(err.category(), "gpu_count_mismatch");
    let mut cfg = reference();
    cfg.training.precision = Precision::Fp8;
    cfg.gpu.peak_fp8_flops = 0.0;
    assert_eq!(evaluate(&cfg).unwrap_err(), ConfigError::Fp8NotSupported);
}

#[test]
fn bad_figures_are_named() {
    let mut cfg = reference();
    cfg.fabric.efficiency = -0.5;
    let err = cfg.validate_figures().unwrap_err();
    assert!(err.to_string().starts_with("efficiency = -0.5 is invalid"), "{err}");
    let mut cfg = reference();
    cfg.prices.economics.pue = 0.9;
    assert!(cfg.validate_figures().unwrap_err().to_string().contains("pue"));
    let mut cfg = reference();
    cfg.training.tokens = f64::NAN;
    assert!(cfg.validate_figures().is_err());
}

#[test]
fn tensor_parallelism_moves_four_all_reduces_per_layer_per_micro_batch() {
    // Megatron TP (Shoeybi et al. 2019 Sec. 3; Narayanan et al. SC21 Sec. 3.2): two all-reduces of the b s h
    // activations forward and two backward per layer. One server, tp = 8, one micro-batch of 8192 tokens,
    // no overlap, no SP: S = 8192 x 8192 x 2 bytes = 134 MB per all-reduce; the cheaper of ring (82% of
    // 450 GB/s, 2 x 7 steps of 3.4 us) and NVLS (106%, NCCL's 25 us NVLS latency) plus NCCL's 6.8 us launch.
    let mut cfg = reference();
    cfg.gpus = 8;
    cfg.training.global_batch = 1;
    cfg.parallelism = Parallelism {
        tp: 8,
        pp: 1,
        dp: 1,
        vpp: 1,
        zero_stage: 0,
        recompute: Recompute::None,
        sequence_parallel: false,
        ..cfg.parallelism.clone()
    };
    cfg.overlap = Overlap { dp: 0.0, tp: 0.0, pp: 0.0, ep: 0.0 };
    let e = eval(&cfg);
    let s: f64 = 8192.0 * 8192.0 * 2.0;
    let ring = 6.8e-6 + 2.0 * 7.0 * 3.4e-6 + 2.0 * 7.0 / 8.0 * s / (450e9 * 0.82);
    let nvls = 6.8e-6 + 25e-6 + 2.0 * 7.0 / 8.0 * s / (450e9 * 1.06);
    let expected = 80.0 * 4.0 * ring.min(nvls);
    assert!((e.breakdown.tp_comm_s - expected).abs() < 1e-9 * expected, "{} vs {expected}", e.breakdown.tp_comm_s);
    // Full recomputation repeats the forward pass's two.
    cfg.parallelism.recompute = Recompute::Full;
    let f = eval(&cfg);
    assert!((f.breakdown.tp_comm_s - 1.5 * expected).abs() < 1e-9 * expected);
}

#[test]
fn fused_attention_backward_costs_two_and_a_half_forwards() {
    // One H100, Llama 3 70B layer shapes, one 8192-token micro-batch, tp = 8: 8 heads per GPU, which the Hopper
    // attention table (examples::HOPPER_ATTENTION, row 8 heads, column 8,192 tokens) runs at 0.454 of 989 TF/s.
    // Forward causal attention: 8192 tokens x 2 x 8192 x 8192 (q_dim) / 8 FLOPs = 137.4 GFLOP at 449.0 TF/s =
    // 306.1 us; the step charges it 1 + 2.5 = 3.5 times (FlashAttention-2 benchmarks count bwd = 2.5 x fwd).
    let mut cfg = reference();
    cfg.gpus = 8;
    cfg.training.global_batch = 1;
    cfg.parallelism =
        Parallelism { tp: 8, pp: 1, dp: 1, vpp: 1, recompute: Recompute::None, ..cfg.parallelism.clone() };
    let flash = eval(&cfg);
    assert_eq!(HOPPER_ATTENTION[2][3], 0.454);
    let forward: f64 = 8192.0 * 2.0 * 8192.0 * 8192.0 / 8.0 / (989e12 * 0.454);
    assert!((forward - 306.1e-6).abs() < 0.1e-6, "{forward}");
    // At an attention efficiency of 1 in every cell the attention takes 0.454 of the time: 80 layers x 3.5 x
    // 0.546 x forward = 46.8 ms less compute.
    let mut fast = cfg.clone();
    fast.gpu.attention_efficiency = [[1.0; 6]; 7];
    let f = eval(&fast);
    let saved = 80.0 * 3.5 * forward * (1.0 - 0.454);
    assert!((saved - 46.80e-3).abs() < 0.01e-3, "{saved}");
    assert!((flash.breakdown.compute_s - f.breakdown.compute_s - saved).abs() < 1e-9, "{saved}");
}

#[test]
fn sequence_parallel_backward_regathers_and_hides_it_behind_its_gradient_gemms() {
    // tp = 8 with SP on one NVLink server: per layer, 2 AG + 2 RS forward and backward (8 collectives of the
    // 134 MB activations), plus 2 all-gathers again in the backward for the weight gradients. On NVLink the
    // re-gather (2 x 81 us) hides behind the QKV and FC1 data-gradient GEMMs; with no TP overlap the other
    // eight stay exposed. Each is NCCL's ring Simple (8.4 us base, 7 steps of 3.4 us; 24 channels, a chunk of
    // 134 MB / (8 x 24) = 699 kB fits one loop).
    let mut cfg = reference();
    cfg.gpus = 8;
    cfg.training.global_batch = 1;
    cfg.parallelism =
        Parallelism { tp: 8, pp: 1, dp: 1, vpp: 1, recompute: Recompute::None, ..cfg.parallelism.clone() };
    cfg.overlap = Overlap { dp: 0.0, tp: 0.0, pp: 0.0, ep: 0.0 };
    let e = eval(&cfg);
    let s: f64 = 8192.0 * 8192.0 * 2.0;
    let one = 8.4e-6 + 7.0 * 3.4e-6 + 7.0 / 8.0 * s / (450e9 * 0.82);
    assert!((e.breakdown.tp_comm_s - 80.0 * 8.0 * one).abs() < 1e-9, "{}", e.breakdown.tp_comm_s);
    assert!((e.hidden.tp_comm_s - 80.0 * 2.0 * one).abs() < 1e-9, "{}", e.hidden.tp_comm_s);
    // Without SP there is nothing to re-gather.
    cfg.parallelism.sequence_parallel = false;
    assert_eq!(eval(&cfg).hidden.tp_comm_s, 0.0);
}

#[test]
fn the_slowest_of_n_gpus_sets_the_pace() {
    // E[max of n standard normals] (Harter 1961): 10 -> 1.539, 100 -> 2.508, 1000 -> 3.241; Blom's
    // approximation is within 0.02.
    for (n, exact) in [(10.0, 1.5388), (100.0, 2.5076), (1000.0, 3.2414)] {
        assert!((cost::uncertainty::expected_max_of_normals(n) - exact).abs() < 0.02, "{n}");
    }
    assert_eq!(cost::uncertainty::expected_max_of_normals(1.0), 0.0);
    // 1,024 GPUs with a 1.2% speed spread: the step waits z(1024) x 1.2% = 3.9% of its GPU-bound time, plus two
    // 4-byte all-reduces over every GPU.
    let mut cfg = reference();
    cfg.gpu.speed_cv = 0.012;
    let e = eval(&cfg);
    let b = &e.breakdown;
    let z = cost::uncertainty::expected_max_of_normals(1024.0);
    let straggle = z * 0.012 * (b.compute_s + b.recompute_s + b.bubble_s);
    assert!(b.overhead_s > straggle && b.overhead_s < straggle + 1e-3, "{} vs {straggle}", b.overhead_s);
    cfg.gpu.speed_cv = 0.0;
    assert!(eval(&cfg).breakdown.overhead_s < 1e-3);
}

#[test]
fn gradients_reduce_in_fp32_unless_told_bf16() {
    // Megatron's FP32 main gradients double the reduce-scatter's bytes and the gradient memory against BF16.
    let mut cfg = reference();
    cfg.overlap = Overlap { dp: 0.0, tp: 0.0, pp: 0.0, ep: 0.0 };
    cfg.parallelism.zero_stage = 0;
    let fp32 = eval(&cfg);
    cfg.training.grad_reduce_dtype = GradDtype::Bf16;
    let bf16 = eval(&cfg);
    assert!((fp32.memory.gradients_bytes / bf16.memory.gradients_bytes - 2.0).abs() < 1e-12);
    let ratio = fp32.breakdown.dp_comm_s / bf16.breakdown.dp_comm_s;
    assert!(ratio > 1.9 && ratio <= 2.0, "{ratio}");
}

#[test]
fn zero3_without_resharding_gathers_once_per_micro_batch_and_keeps_the_weights() {
    // FSDP reshard_after_forward = False (Llama 3): one all-gather per micro-batch instead of two, and every
    // layer's gathered BF16 weights resident: 70.55B / tp 8 x 2 bytes = 17.6 GB more than two layers.
    let mut cfg = reference();
    cfg.parallelism = Parallelism { pp: 1, vpp: 1, dp: 128, zero_stage: 3, ..cfg.parallelism.clone() };
    cfg.overlap = Overlap { dp: 0.0, tp: 0.0, pp: 0.0, ep: 0.0 };
    let reshard = eval(&cfg);
    cfg.parallelism.reshard_after_forward = false;
    let keep = eval(&cfg);
    assert!(keep.breakdown.dp_comm_s < reshard.breakdown.dp_comm_s);
    let extra = (keep.memory.weights_bytes - reshard.memory.weights_bytes) / 1e9;
    assert!(extra > 15.0 && extra < 17.7, "{extra}");
}

#[test]
fn deepseek_v3_runs_with_mla_folded_experts_and_deepep() {
    // DeepSeek-V3 on 256 GPUs: tp 2, pp 8, dp 16, ep 32 with expert TP 1 (MoE parallel folding), DeepEP.
    let mut cfg = reference();
    cfg.model = deepseek_v3();
    cfg.gpus = 256;
    cfg.training.seq_len = 4096;
    cfg.training.global_batch = 1024;
    cfg.training.moe_dispatcher = Dispatcher::Flex;
    cfg.parallelism = Parallelism { tp: 2, pp: 8, dp: 16, ep: 32, etp: 1, vpp: 1, ..cfg.parallelism.clone() };
    cfg.parallelism.first_stage_layers = Some(5);
    cfg.parallelism.last_stage_layers = Some(8);
    let e = eval(&cfg);
    assert!(e.breakdown.ep_comm_s + e.hidden.ep_comm_s > 0.0);
    // NCCL all-to-all sends every remote copy; DeepEP one per node (at most 4): slower.
    cfg.training.moe_dispatcher = Dispatcher::AllToAll;
    let nccl = eval(&cfg);
    assert!(nccl.breakdown.ep_comm_s + nccl.hidden.ep_comm_s > 1.5 * (e.breakdown.ep_comm_s + e.hidden.ep_comm_s));
    // Imbalanced routing slows the expert GEMMs of the busiest rank.
    cfg.training.moe_imbalance = 1.3;
    assert!(eval(&cfg).breakdown.compute_s > nccl.breakdown.compute_s);
}

#[test]
fn unfused_gradient_accumulation_costs_each_micro_batch_its_parameters_bytes() {
    // Llama 3 70B at TP 8, PP 4: each micro-batch adds the busiest stage's parameters x (2 + 2 + 2 x 4) bytes at
    // the GPU's HBM rate (step::gradients); 1024 / 32 = 32 micro-batches, and the bubble scales with the
    // micro-batch's compute, so compare the compute alone.
    let fused = eval(&reference());
    let mut cfg = reference();
    cfg.training.gradient_accumulation_fusion = false;
    let unfused = eval(&cfg);
    let added_s = unfused.breakdown.compute_s - fused.breakdown.compute_s;
    let hbm = cfg.gpu.hbm_bytes_per_s * cfg.gpu.hbm_efficiency;
    let per_micro_batch_s = added_s / fused.micro_batches as f64;
    let params = per_micro_batch_s * hbm / 12.0;
    // 70.6B / (8 x 4) = 2.2B a GPU, a little more on the stage holding the output layer.
    assert!(params > 2.2e9 && params < 2.6e9, "{params}");
    assert!(unfused.step_time_s > fused.step_time_s);
    // ZeRO-3 accumulates only the rank's shard: the setting changes nothing.
    let mut z3 = reference();
    z3.parallelism.zero_stage = 3;
    let before = eval(&z3).step_time_s;
    z3.training.gradient_accumulation_fusion = false;
    assert_eq!(eval(&z3).step_time_s, before);
}

#[test]
fn a_run_without_the_asynchronous_tp_all_reduce_waits_as_a_framework_without_it() {
    // Megatron-LM before 2021-09 waits for the input gradient's all-reduce: a framework that overlaps the TP
    // backward by itself (tp_backward_overlap 1) with the run's tp_async_allreduce off is the same framework with
    // the term at 0, and slower than with it (Llama 3 70B at TP 8, PP 4; no overlap setting, no sequence
    // parallelism, so the TP collectives hide only by the framework's own overlap).
    let mut cfg = reference();
    cfg.overlap.tp = 0.0;
    cfg.parallelism.sequence_parallel = false;
    cfg.framework.tp_backward_overlap = 1.0;
    let overlapped = eval(&cfg);
    assert!(overlapped.hidden.tp_comm_s > 0.0);
    cfg.training.tp_async_allreduce = false;
    let waits = eval(&cfg);
    assert_eq!(waits.hidden.tp_comm_s, 0.0);
    assert!(waits.step_time_s > overlapped.step_time_s);
    cfg.training.tp_async_allreduce = true;
    cfg.framework.tp_backward_overlap = 0.0;
    assert_eq!(eval(&cfg).step_time_s, waits.step_time_s);
}

/// A framework adding 20% of the layers' compute at BF16 rates, with `mtp_layers` multi-token-prediction modules:
/// the same framework seconds whether the GEMMs run in BF16 or FP8 (the norms, casts and launch gaps it stands for
/// do not change format), 20% of the BF16 run's compute and recomputation. No interference, so nothing else enters
/// the framework's time. Returns the (BF16, FP8) evaluations.
fn overhead_in_both_formats(mtp_layers: u32) -> (Evaluation, Evaluation) {
    let mut cfg = reference();
    cfg.framework.layer_overhead = 0.2;
    cfg.training.mtp_layers = mtp_layers;
    let bf16 = eval(&cfg);
    cfg.training.precision = Precision::Fp8;
    let fp8 = eval(&cfg);
    assert!((fp8.breakdown.framework_s / bf16.breakdown.framework_s - 1.0).abs() < 1e-9);
    let base = bf16.breakdown.compute_s + bf16.breakdown.recompute_s;
    assert!((bf16.breakdown.framework_s / base - 0.2).abs() < 1e-9, "{}", bf16.breakdown.framework_s / base);
    (bf16, fp8)
}

#[test]
fn the_framework_layer_overhead_does_not_shrink_with_fp8_gemms() {
    // The FP8 step is faster by its kernels only.
    let (bf16, fp8) = overhead_in_both_formats(0);
    assert!(fp8.breakdown.compute_s < 0.8 * bf16.breakdown.compute_s);
}

#[test]
fn the_layer_overhead_of_the_mtp_modules_does_not_shrink_with_fp8_gemms() {
    // A multi-token-prediction module's layer enters the overhead's base at BF16 rates like the others, and adds
    // to it.
    let (without, _) = overhead_in_both_formats(0);
    let (bf16, _) = overhead_in_both_formats(1);
    assert!(bf16.breakdown.framework_s > without.breakdown.framework_s);
}

#[test]
fn a_dropless_moe_layer_waits_for_a_host_slower_than_its_gpu_work() {
    // Mixtral 8x7B over EP 8 (one expert a rank), 32 layers, pp 1, 8 micro-batches of 4,096 tokens a rank. A host
    // that launches each of a layer's 100 kernels (80 beside the experts, 20 for the looped one) in 1 ms takes
    // 0.1 s a layer, far beyond its GPU work: the GPU waits the difference. At 2 ms a kernel it waits 0.1 s more
    // a layer, whatever the GPU's time: 32 layers x 8 micro-batches x 0.1 s = 25.6 s more waiting a step.
    let mut cfg = reference();
    cfg.model = mixtral_8x7b();
    cfg.gpus = 64;
    cfg.parallelism = Parallelism { tp: 1, pp: 1, dp: 64, ep: 8, vpp: 1, zero_stage: 1, ..cfg.parallelism.clone() };
    cfg.training.seq_len = 4096;
    cfg.training.global_batch = 512;
    let keeps_ahead = eval(&cfg);
    cfg.framework.grouped_gemm = false;
    cfg.framework.moe_host_kernels = 80.0;
    cfg.framework.moe_host_kernels_per_expert = 20.0;
    assert_eq!(eval(&cfg).breakdown.host_wait_s, 0.0, "no host time: no wait");
    assert_eq!(keeps_ahead.breakdown.host_wait_s, 0.0);
    cfg.framework.host_s_per_kernel = 1e-3;
    let slow = eval(&cfg);
    cfg.framework.host_s_per_kernel = 2e-3;
    let slower = eval(&cfg);
    assert_eq!(slow.micro_batches, 8);
    let extra_s = slower.breakdown.host_wait_s - slow.breakdown.host_wait_s;
    assert!((extra_s - 32.0 * 8.0 * 0.1).abs() < 1e-9, "{extra_s}");
    assert!(slow.breakdown.host_wait_s > 32.0 * 8.0 * 0.05);
    // The wait is its own part of the step: the framework's other time does not move.
    assert_eq!(slow.breakdown.framework_s, slower.breakdown.framework_s);
    assert!((slow.step_time_s - slow.breakdown.total_s()).abs() < 1e-9 * slow.step_time_s);
    // Experts grouped into one torch._grouped_mm launch no kernel per expert: the same host waits 80 kernels'
    // worth, not 100.
    cfg.framework.grouped_gemm = true;
    cfg.framework.torch_grouped_mm = true;
    let grouped = eval(&cfg);
    let saved_s = slower.breakdown.host_wait_s - grouped.breakdown.host_wait_s;
    assert!((saved_s - 32.0 * 8.0 * 20.0 * 2e-3).abs() < 0.05 * saved_s, "{saved_s}");
}

#[test]
fn one_evaluation_equals_the_staged_sweep_path_for_every_zero_stage() {
    // `evaluate` links only the collectives its ZeRO stage reads (`LayoutStage::link_schedule`); a sweep links all
    // of them once and finishes each ZeRO stage from the same stage. Both must give the same evaluation, to the bit,
    // for dense and MoE layouts, across and within scale-up domains, in BF16 and FP8.
    let mut moe = reference();
    moe.model = mixtral_8x7b();
    moe.gpus = 64;
    moe.parallelism = Parallelism { tp: 2, pp: 1, dp: 32, ep: 8, vpp: 1, ..moe.parallelism.clone() };
    moe.training.global_batch = 256;
    let mut small = reference();
    small.gpus = 8;
    small.parallelism = Parallelism { tp: 8, pp: 1, dp: 1, vpp: 1, ..small.parallelism.clone() };
    let mut checked = 0;
    for base in [reference(), moe, small] {
        for zero in 0..4 {
            for fp8 in [false, true] {
                let mut cfg = base.clone();
                cfg.parallelism.zero_stage = zero;
                if fp8 {
                    cfg.training.precision = Precision::Fp8;
                }
                let cluster = evaluate::ClusterStage::new(&cfg).unwrap();
                let stage = evaluate::LayoutStage::new(&cluster, &cfg.parallelism).unwrap();
                let staged = evaluate::finish(&cluster, &stage, &cfg.parallelism, &cfg.overlap).unwrap();
                assert_eq!(evaluate(&cfg).unwrap(), staged, "zero {zero}, fp8 {fp8}, {} GPUs", cfg.gpus);
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 24);
}

/// Overlapped pipeline sends hide behind the next chunk's compute, but the fill's and drain's p - 1 each stay
/// exposed: an idle stage in the bubble waits for them. The reference layout (pp 4, vpp 5, 1,024 sequences over
/// dp 32: m = 32) sends 2 (v m + p - 1) = 326 activations a step; overlapped, 2 (p - 1) = 6 of them stay
/// exposed and 2 v m = 320 hide.
#[test]
fn overlapped_pipeline_sends_leave_the_fill_and_drain_exposed() {
    let mut cfg = reference();
    cfg.overlap.pp = 0.0;
    let serial = eval(&cfg);
    cfg.overlap.pp = 1.0;
    let overlapped = eval(&cfg);
    let sends = serial.breakdown.pp_comm_s;
    assert!(sends > 0.0 && serial.hidden.pp_comm_s == 0.0);
    assert!((overlapped.breakdown.pp_comm_s / sends - 6.0 / 326.0).abs() < 1e-9, "{:?}", overlapped.breakdown);
    assert!((overlapped.hidden.pp_comm_s / sends - 320.0 / 326.0).abs() < 1e-9, "{:?}", overlapped.hidden);
}
