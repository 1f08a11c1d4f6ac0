//! The compute model's unit tests, worked by hand.

use super::*;
use crate::examples::h100;

fn tput(precision: Precision) -> Throughput {
    Throughput::new(&h100(), precision, AttentionKernel::Best, &FrameworkSpec::kernels_only())
}

#[test]
fn large_gemm_is_compute_bound_small_one_memory_bound() {
    let t = tput(Precision::Bf16);
    // 8192^3 GEMM: 1.1 TFLOP at the sustained 0.70 x 989 = 692 TF/s = 1.59 ms; its 402 MB move in 0.13 ms.
    let big = t.gemm_time_s(8192.0, 8192.0, 8192.0);
    assert!((big - 2.0 * 8192f64.powi(3) / (989e12 * 0.70)).abs() < 1e-12);
    // A 4096-token GEMM against a 128-wide slice (TP=64): 8.6 GFLOP, a small GEMM (under 50 GFLOP) at
    // 0.66 x 989: 13.2 us; reading the 4096 x 8192 BF16 input alone takes 67 MB / (3.35 TB/s x 0.90) = 22.3 us.
    let thin = t.gemm_time_s(4096.0, 128.0, 8192.0);
    let bytes = 2.0 * (4096.0 * 8192.0 + 8192.0 * 128.0 + 4096.0 * 128.0);
    assert!((thin - bytes / (3.35e12 * 0.90)).abs() < 1e-15);
    assert!(thin > 2.0 * 4096.0 * 128.0 * 8192.0 / (989e12 * 0.66));
}

#[test]
fn gemms_under_50_gflop_run_at_the_small_gemm_rate() {
    let t = tput(Precision::Bf16);
    // 4096 x 512 x 4096 (Llama 3 8B's TP 8 output projection): 17.2 GFLOP at 0.66 x 989 TF/s = 26.3 us; its
    // 41.9 MB take 13.9 us at 3.02 TB/s. Twice the width, 4096 x 1024 x 8192: 68.7 GFLOP at 0.70 x 989.
    let small = t.gemm_time_s(4096.0, 4096.0, 512.0);
    assert!((small - 2.0 * 4096.0 * 4096.0 * 512.0 / (989e12 * 0.66)).abs() < 1e-15, "{small}");
    let large = t.gemm_time_s(4096.0, 8192.0, 1024.0);
    assert!((large - 2.0 * 4096.0 * 8192.0 * 1024.0 / (989e12 * 0.70)).abs() < 1e-15, "{large}");
}

#[test]
fn fp8_gemm_runs_at_the_fp8_rate_plus_its_input_cast() {
    // 8192^3: BF16 at 0.70 x 989 = 692 TF/s: 1.588 ms. FP8 at 0.63 x 1979 = 1247 TF/s: 0.882 ms, plus the
    // cast of the 8192 x 8192 input: 3 bytes x 67.1M / (3.35 TB/s x 0.90) = 66.8 us. Speed-up 1.67x, not 2x.
    let bf16 = tput(Precision::Bf16).gemm_time_s(8192.0, 8192.0, 8192.0);
    let fp8 = tput(Precision::Fp8).gemm_time_s(8192.0, 8192.0, 8192.0);
    let flops = 2.0 * 8192f64.powi(3);
    let expected = flops / (1979e12 * 0.63) + 3.0 * 8192.0 * 8192.0 / (3.35e12 * 0.90);
    assert!((fp8 - expected).abs() < 1e-12, "{fp8} vs {expected}");
    assert!((bf16 / fp8 - 1.67).abs() < 0.01, "{}", bf16 / fp8);
}

#[test]
fn a_partial_last_wave_of_a_grouped_gemm_costs_a_whole_one() {
    let t = tput(Precision::Bf16);
    // Qwen3-30B-A3B's down projection, 4 local experts x 512 tokens, 768 -> 2048: 4 x 4 x 8 = 128 tiles of
    // 128 x 256 on 132 SMs: 0.97 waves, one whole wave: roofline x 1 / 0.97. Its 6.4 GFLOP are a small GEMM
    // at 0.66 x 989 TF/s: 9.9 us; the bytes, 4 x 2 x (512 x 768 + 768 x 2048 + 512 x 2048) = 24.1 MB, 8.0 us.
    let grouped = t.experts_gemm_time_s(4.0, 512.0, 2048.0, 768.0, ExpertGemms::Grouped);
    let roofline = 4.0 * 2.0 * 512.0 * 2048.0 * 768.0 / (989e12 * 0.66);
    assert!((grouped - roofline * 132.0 / 128.0).abs() < 1e-15, "{grouped}");
    // 8 experts: 256 tiles, 1.94 waves -> 2: x 2 / 1.94 of twice the roofline.
    let eight = t.experts_gemm_time_s(8.0, 512.0, 2048.0, 768.0, ExpertGemms::Grouped);
    assert!((eight - 2.0 * roofline * 2.0 / (256.0 / 132.0)).abs() < 1e-15);
    // As a loop each expert's GEMM takes at least the 14 us floor: 4 x 14 us.
    assert!(
        (t.experts_gemm_time_s(4.0, 512.0, 2048.0, 768.0, ExpertGemms::Loop) - 4.0 * EXPERT_LOOP_FLOOR_S).abs() < 1e-15
    );
}

#[test]
fn torch_grouped_mm_runs_the_experts_at_its_own_measured_rate() {
    // A GPU whose torch._grouped_mm sustains half its dense rate (the B200 of torchao's benchmark: 0.36 against
    // 0.70). Llama 4 Scout's expert up-projection, 4 local experts x 16,384 tokens, 5,120 -> 16,384: 11.0 TFLOP
    // at 0.35 x 989 TF/s = 31.8 ms; 4 x 128 x 64 = 32,768 tiles on 132 SMs = 248.2 waves, 249 run.
    let gpu = GpuSpec { grouped_mm_efficiency: 0.35, ..h100() };
    let t = Throughput::new(&gpu, Precision::Bf16, AttentionKernel::Best, &FrameworkSpec::kernels_only());
    let flops = 4.0 * 2.0 * 16384.0 * 16384.0 * 5120.0;
    let waves = 4.0 * 128.0 * 64.0 / 132.0;
    let torch = t.experts_gemm_time_s(4.0, 16384.0, 16384.0, 5120.0, ExpertGemms::TorchGroupedMm);
    assert!((torch - flops / (0.35 * 989e12) * 249.0 / waves).abs() < 1e-12, "{torch}");
    assert!((torch - 31.9e-3).abs() < 0.1e-3, "{torch}");
    // Transformer Engine's grouped experts (cuBLAS per expert) keep the dense 0.70: half the time.
    let te = t.experts_gemm_time_s(4.0, 16384.0, 16384.0, 5120.0, ExpertGemms::Grouped);
    assert!((torch / te - 2.0).abs() < 1e-9, "{te}");
    // The framework's two flags choose the kernel.
    let titan = FrameworkSpec { torch_grouped_mm: true, ..FrameworkSpec::kernels_only() };
    assert_eq!(ExpertGemms::of(&titan), ExpertGemms::TorchGroupedMm);
    assert_eq!(ExpertGemms::of(&FrameworkSpec { grouped_gemm: false, ..titan }), ExpertGemms::Loop);
}
