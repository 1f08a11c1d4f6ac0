//! The optimizer step's time: the framework's bytes per updated parameter and its zeroed gradient buffer
//! (docs/design/fidelity-v3.md Sec. 36).

mod common;

use common::eval;
use scalefront_core::examples::*;

#[test]
fn the_optimizer_step_moves_the_frameworks_bytes_and_its_zeroed_gradient_buffer() {
    // Llama 3 70B at TP 8, PP 4, DP 32 without ZeRO: each GPU updates its stage's ~2.2B parameters at Adam's 28
    // bytes (kernels only). Megatron-Core's 38 (norm 4 + Adam 28 + the 16-bit copy 6) is 38 / 28 of that; its
    // zeroing of the FP32 main-gradient buffer adds the gradient bytes the memory model holds, at HBM speed.
    let mut cfg = reference();
    cfg.parallelism.zero_stage = 0;
    let adam = eval(&cfg);
    let hbm = cfg.gpu.hbm_bytes_per_s * cfg.gpu.hbm_efficiency;
    let params = adam.breakdown.optimizer_s * hbm / 28.0;
    assert!(params > 2.2e9 && params < 2.6e9, "{params}");
    cfg.framework.optimizer_bytes_per_param = 38.0;
    let megatron = eval(&cfg);
    assert!((megatron.breakdown.optimizer_s / adam.breakdown.optimizer_s - 38.0 / 28.0).abs() < 1e-12);
    cfg.framework.zeroes_grad_buffer = true;
    let zeroed = eval(&cfg);
    let added_s = zeroed.breakdown.optimizer_s - megatron.breakdown.optimizer_s;
    assert!((added_s * hbm / (params * 4.0) - 1.0).abs() < 1e-9, "{added_s}");
    assert!((zeroed.memory.gradients_bytes / (params * 4.0) - 1.0).abs() < 1e-9);
    // ZeRO-1 shards the update over the 32 replicas, not the buffer (Megatron's distributed optimizer); ZeRO-2
    // shards both.
    cfg.parallelism.zero_stage = 1;
    let z1 = eval(&cfg).breakdown.optimizer_s;
    assert!((z1 * hbm - (params / 32.0 * 38.0 + params * 4.0)).abs() / (z1 * hbm) < 1e-9);
    cfg.parallelism.zero_stage = 2;
    let z2 = eval(&cfg).breakdown.optimizer_s;
    assert!((z2 * hbm - params / 32.0 * 42.0).abs() / (z2 * hbm) < 1e-9);
}
