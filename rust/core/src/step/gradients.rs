//! Gradient accumulation outside the weight-gradient GEMMs.

use super::compute::Throughput;
use super::memory::WEIGHT_BYTES;
use super::parallelism::{Parallelism, Training};

/// Time one micro-batch's unfused gradient accumulation takes on a GPU holding `params` parameters whose main
/// gradient has `main_grad_bytes` per element (4 in FP32, 2 in BF16): without gradient accumulation fusion each
/// weight-gradient GEMM writes its gradient apart in BF16 (Megatron-LM core/tensor_parallel/layers.py,
/// `LinearWithGradAccumulationAndAsyncCommunication.backward`: `grad_weight = grad_output.t().matmul(total_input)`
/// when `gradient_accumulation_fusion` is off) and the gradient hook adds it to the main gradient
/// (core/distributed/distributed_data_parallel.py: `param.main_grad.add_(param.grad.data)`): the gradient written
/// and read (2 + 2 bytes), the main gradient read and written (2 x its bytes), at HBM speed. With fusion the GEMM's
/// epilogue accumulates in place (`wgrad_gemm_accum_fp32`), inside a compute-bound kernel [derived].
pub fn unfused_accumulation_s(params: f64, main_grad_bytes: f64, tput: &Throughput) -> f64 {
    params * (2.0 * WEIGHT_BYTES + 2.0 * main_grad_bytes) / tput.hbm_bytes_per_s
}

/// What each micro-batch's gradient accumulation costs outside the GEMMs on a GPU holding `params` parameters:
/// nothing where the run fuses it, nor under ZeRO-2/3, which reduce-scatter each micro-batch's gradients and
/// accumulate only the rank's 1/dp shard.
pub fn accumulation_s(training: &Training, par: &Parallelism, params: f64, tput: &Throughput) -> f64 {
    if training.gradient_accumulation_fusion || par.zero_stage >= 2 {
        return 0.0;
    }
    unfused_accumulation_s(params, training.grad_reduce_dtype.bytes(), tput)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::examples::h100;
    use crate::software::FrameworkSpec;
    use crate::step::parallelism::{AttentionKernel, Precision};

    #[test]
    fn a_7b_replica_moves_twelve_bytes_a_parameter() {
        // GPT-7B at TP 1 (FP8-LM Table 5): 6.7e9 parameters x (2 + 2 + 4 + 4) bytes = 80.4 GB; H100 SXM streams
        // 3.35 TB/s x its measured fraction.
        let tput = Throughput::new(&h100(), Precision::Bf16, AttentionKernel::Best, &FrameworkSpec::kernels_only());
        let t = unfused_accumulation_s(6.7e9, 4.0, &tput);
        assert!((t - 80.4e9 / tput.hbm_bytes_per_s).abs() < 1e-12);
        assert!(t > 0.024 && t < 0.030, "{t}");
        // A BF16 main gradient halves the main gradient's traffic: 8 bytes a parameter.
        assert!((unfused_accumulation_s(6.7e9, 2.0, &tput) / t - 8.0 / 12.0).abs() < 1e-12);
    }
}
