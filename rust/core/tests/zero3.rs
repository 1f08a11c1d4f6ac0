//! ZeRO-3 as frameworks issue it: by flat bucket or by tensor, prefetched or blocking, and the host's share of a
//! collective issued by tensor through the list API (worked examples).

mod common;

use common::eval;
use scalefront_core::examples::*;
use scalefront_core::*;

/// Llama 3 70B (the reference) with ZeRO-3 over one 8-GPU NVLink domain, `pp` pipeline stages x 8 / pp data-parallel
/// ranks, nothing overlapped.
fn zero3_on_one_domain(pp: u32) -> Config {
    let mut cfg = reference();
    cfg.gpus = 8;
    cfg.parallelism = Parallelism { tp: 1, pp, dp: 8 / pp, vpp: 1, zero_stage: 3, ..cfg.parallelism.clone() };
    cfg.overlap = Overlap { dp: 0.0, tp: 0.0, pp: 0.0, ep: 0.0 };
    cfg
}

/// `cfg` at `global_batch`, evaluated with the framework doing it every micro-batch and once a step (`every`
/// sets the framework's flag for the first), in that order.
fn every_and_once(
    cfg: &mut Config,
    global_batch: u32,
    every: fn(&mut FrameworkSpec, bool),
) -> (Evaluation, Evaluation) {
    cfg.training.global_batch = global_batch;
    every(&mut cfg.framework, true);
    let each = eval(cfg);
    every(&mut cfg.framework, false);
    (each, eval(cfg))
}

#[test]
fn zero3_by_tensor_pays_one_ring_latency_per_weight_tensor_and_without_prefetch_hides_no_gather() {
    // Llama 3 70B, ZeRO-3 over the 8 GPUs of one NVLink domain, 4 micro-batches, nothing overlapped: per step
    // 4 gradient reduce-scatters (one after each micro-batch, ZeRO's rule) and 2 x 4 weight all-gathers (reshard
    // after forward). By tensor (DeepSpeed 2021), each of the 80 x 4 + 2 = 322 weight tensors (fused QKV, output
    // projection, fc1, fc2 per layer; two embedding tables) is its own ring, so each collective pays 321 more NCCL
    // base latencies (Simple, 8.4 us, tuning.cc) and 321 x 7 more ring steps (1 us each here); the bytes are the
    // same, at the bandwidth of large messages: 321 x (8.4 + 7 x 1) us = 4.943 ms per collective, 12 x that per
    // step = 59.32 ms.
    let mut cfg = zero3_on_one_domain(1);
    cfg.training.global_batch = 32;
    cfg.scale_up.step_latency_s = 1e-6;
    let flat = eval(&cfg);
    assert_eq!(flat.micro_batches, 4);
    cfg.framework.zero3_gather_per_tensor = true;
    let by_tensor = eval(&cfg);
    let extra_s = by_tensor.breakdown.dp_comm_s - flat.breakdown.dp_comm_s;
    let expected_s = 12.0 * 321.0 * (8.4e-6 + 7.0 * 1e-6);
    assert!((extra_s / expected_s - 1.0).abs() < 1e-6, "{extra_s} vs {expected_s}");
    // The 8 gathers alone: one gather per micro-batch fewer without resharding after the forward is 4 of them.
    cfg.parallelism.reshard_after_forward = false;
    let gathers_s = 2.0 * (by_tensor.breakdown.dp_comm_s - eval(&cfg).breakdown.dp_comm_s);
    cfg.parallelism.reshard_after_forward = true;
    // Free to hide, they hide behind the compute where the framework prefetches, and stay exposed where it
    // blocks on each gather (only the reduce-scatter hides).
    cfg.overlap.dp = 1.0;
    let prefetching = eval(&cfg);
    cfg.framework.zero3_prefetch = false;
    let blocking = eval(&cfg);
    assert!(prefetching.breakdown.dp_comm_s < 0.5 * gathers_s, "{:?}", prefetching.breakdown);
    assert!(blocking.breakdown.dp_comm_s >= gathers_s * (1.0 - 1e-9), "{:?}", blocking.breakdown);
    let total = |e: &Evaluation| e.breakdown.dp_comm_s + e.hidden.dp_comm_s;
    assert!((total(&blocking) / total(&by_tensor) - 1.0).abs() < 1e-9);
}

#[test]
fn zero3_list_collectives_cost_the_host_one_op_per_rank_tensor_and_collective() {
    // Llama 3 70B, ZeRO-3 over 64 GPUs (dp 64), global batch 256: 4 micro-batches. By tensor through the list API
    // (DeepSpeed 2021 on PyTorch 1.8), each of the 322 weight tensors' collectives slices and copies once per rank:
    // per micro-batch 2 gathers (reshard after forward) and 1 reduce-scatter, so 4 x 3 x 322 x 64 = 247,296 ops,
    // at 10 us each 2.47296 s of host time, which the blocking gathers leave the GPU waiting for.
    let mut cfg = reference();
    cfg.gpus = 64;
    cfg.parallelism = Parallelism { tp: 1, pp: 1, dp: 64, vpp: 1, zero_stage: 3, ..cfg.parallelism.clone() };
    cfg.training.global_batch = 256;
    cfg.framework.zero3_gather_per_tensor = true;
    cfg.framework.zero3_prefetch = false;
    let quiet = eval(&cfg);
    assert_eq!(quiet.micro_batches, 4);
    cfg.framework.host_s_per_kernel = 10e-6;
    let waiting = eval(&cfg);
    let wait_s = waiting.breakdown.host_wait_s - quiet.breakdown.host_wait_s;
    assert!((wait_s / 2.47296 - 1.0).abs() < 1e-9, "{wait_s}");
    assert!((waiting.step_time_s - quiet.step_time_s - wait_s).abs() < 1e-9 * waiting.step_time_s);
    // By flat bucket (`_all_gather_base`, FSDP), or without ZeRO-3, no such ops.
    cfg.framework.zero3_gather_per_tensor = false;
    assert_eq!(eval(&cfg).breakdown.host_wait_s, quiet.breakdown.host_wait_s);
    cfg.framework.zero3_gather_per_tensor = true;
    cfg.parallelism.zero_stage = 1;
    assert_eq!(eval(&cfg).breakdown.host_wait_s, 0.0);
}

#[test]
fn sharded_gradients_cost_a_reduce_scatter_per_micro_batch_or_a_whole_stage_of_memory() {
    // Llama 3 70B, ZeRO-3 over 8 GPUs, nothing overlapped. Reducing after every micro-batch (DeepSpeed, FSDP
    // without no_sync, Megatron FSDP) costs m reduce-scatters a step; holding the gradients back to the last
    // backward (FSDP2's set_requires_gradient_sync(False), NeMo AutoModel) costs one, with the stage's whole
    // gradients in memory meanwhile: 8 x the shard. Each reduce-scatter takes the same time, so the difference
    // is (m - 1) of them: 3 at 4 micro-batches, 1 at 2.
    let mut cfg = zero3_on_one_domain(1);
    let extra = |cfg: &mut Config, global_batch: u32| {
        let (each, once) = every_and_once(cfg, global_batch, |f, every| f.zero_reduce_per_micro_batch = every);
        assert!((once.memory.gradients_bytes / each.memory.gradients_bytes - 8.0).abs() < 1e-9);
        each.breakdown.dp_comm_s - once.breakdown.dp_comm_s
    };
    let (four, two) = (extra(&mut cfg, 32), extra(&mut cfg, 16));
    assert!(two > 0.0 && (four / two - 3.0).abs() < 1e-9, "{four} vs {two}");
    // torch.distributed.pipelining holds FSDP2's reduction back under PP only: at pp 2 the framework that
    // reduces as it goes and defers under PP costs what the deferring one does.
    cfg.parallelism = Parallelism { pp: 2, dp: 4, ..cfg.parallelism.clone() };
    cfg.training.global_batch = 16;
    let deferring = eval(&cfg);
    cfg.framework.zero_reduce_per_micro_batch = true;
    cfg.framework.pp_defers_zero_reduce = true;
    let pipelined = eval(&cfg);
    assert_eq!(pipelined.breakdown.dp_comm_s, deferring.breakdown.dp_comm_s);
    assert_eq!(pipelined.memory.gradients_bytes, deferring.memory.gradients_bytes);
    cfg.framework.pp_defers_zero_reduce = false;
    assert!(eval(&cfg).breakdown.dp_comm_s > deferring.breakdown.dp_comm_s);
}

#[test]
fn a_pipeline_that_keeps_unresharded_weights_gathered_gathers_them_once_a_step() {
    // Llama 3 70B, ZeRO-3 without resharding after the forward, PP 2 x DP 4, nothing overlapped. A micro-batch
    // gathers the stage's weights for its forward; torch.distributed.pipelining keeps them gathered to the last
    // backward (torchtitan: "do not reshard after forward to avoid per-microbatch all-gathers"), so a step gathers
    // once, and the difference is (m - 1) gathers: 3 at 4 micro-batches, 1 at 2.
    let mut cfg = zero3_on_one_domain(2);
    cfg.parallelism.reshard_after_forward = false;
    let saved = |cfg: &mut Config, global_batch: u32| {
        let (each, once) = every_and_once(cfg, global_batch, |f, every| f.pp_keeps_weights_gathered = !every);
        assert_eq!(once.memory.weights_bytes, each.memory.weights_bytes);
        each.breakdown.dp_comm_s - once.breakdown.dp_comm_s
    };
    let (four, two) = (saved(&mut cfg, 16), saved(&mut cfg, 8));
    assert!(two > 0.0 && (four / two - 3.0).abs() < 1e-9, "{four} vs {two}");
    // Resharding after each forward, every backward gathers again, but a forward after a backward finds the
    // weights gathered (FSDP2's unshard is a no-op then): m + 1 gathers, not 2m, the same m - 1 = 3 saved.
    cfg.parallelism.reshard_after_forward = true;
    let resharded = saved(&mut cfg, 16);
    assert!((resharded / four - 1.0).abs() < 1e-9, "{resharded} vs {four}");
}
