//! What a training framework adds to the kernels' time (data/frameworks.toml), in SI units: named terms, each
//! either measured (eager PyTorch's token permutation, the loop of per-expert GEMMs) or fitted per framework
//! family on named calibration rows of that family (`scalefront validate --calibrate`), never per GPU.

use crate::error::ConfigError;
use crate::hardware::{non_negative, not_below_one};

/// The Adam update's traffic per parameter it updates: read the FP32 gradient, master, m and v (16), write master,
/// m and v (12) [derived; formulas.md 2.4 gives 28-32]. A framework's own passes around it (norm, clipping, the
/// 16-bit weight copy) are its `optimizer_bytes_per_param`; this is the figure without them (`kernels_only`).
pub const ADAM_BYTES_PER_PARAM: f64 = 28.0;

/// A training framework family's software terms.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct FrameworkSpec {
    /// Time a layer spends beyond its kernels, as a fraction of the layer's forward and backward compute at BF16
    /// rates: copies and casts around the kernels, element-wise work the model counts once but the framework runs
    /// in several kernels, launch gaps (set by the layer's shapes, so FP8 GEMMs leave it as it is).
    pub layer_overhead: f64,
    /// Fixed time per micro-batch on each pipeline stage: the schedule's bookkeeping, point-to-point launches and
    /// waits, data loading.
    pub microbatch_overhead_s: f64,
    /// Fixed time per optimizer step beyond the optimizer's memory traffic: gradient-norm and clipping launches,
    /// the optimizer's launches, logging.
    pub step_overhead_s: f64,
    /// Bytes the optimizer step moves through HBM per parameter it updates (the local shard under ZeRO 1-3): the
    /// Adam update (FP32 gradient, master, m and v read, master, m and v written: 28) and the framework's passes
    /// around it: the gradient norm's read, clipping's scale, the copy into the 16-bit weights
    /// (Megatron-Core 4 + 28 + 6 = 38; torch's `clip_grad_norm_` with FSDP2 4 + 8 + 28 = 40).
    pub optimizer_bytes_per_param: f64,
    /// Every step starts by zeroing the whole main-gradient buffer, the local gradients in their reduction format
    /// (Megatron-Core's `zero_grad_buffer`: `grad_data.zero_()`, unsharded under the distributed optimizer);
    /// false: gradients set to None, or zeroed inside the optimizer's own pass.
    pub zeroes_grad_buffer: bool,
    /// Share of the communication time hidden behind compute that the compute loses to it: collective kernels
    /// take SMs and HBM bandwidth from the GEMMs they overlap.
    pub overlap_interference: f64,
    /// Share of the backward pass's tensor-parallel collectives that hide behind the weight-gradient GEMMs even
    /// without TP overlap: Megatron-LM launches the input gradient's all-reduce (reduce-scatter with sequence
    /// parallelism) asynchronously and computes the weight gradient meanwhile (tensor_parallel/layers.py
    /// LinearWithGradAccumulationAndAsyncCommunication.backward); 0 where the framework waits for it.
    pub tp_backward_overlap: f64,
    /// Bytes moved per element to quantise a GEMM's activation input to FP8: read BF16 and write FP8 (3), plus a
    /// read for a dynamic scale computed from the tensor itself (torchao's tensorwise recipe: 5).
    pub fp8_cast_bytes: f64,
    /// Token permutation and un-permutation around the experts, over their bytes at HBM speed: 1 for fused
    /// kernels, several times that for PyTorch's sort, gather and index_add.
    pub moe_permute_factor: f64,
    /// Fixed time of the router per MoE layer and pass beside its GEMM (softmax, top-k, load-balancing loss).
    pub moe_router_s: f64,
    /// Host time per op the framework issues from Python: each kernel a MoE layer launches (PyTorch's dispatch in
    /// eager mode), and each rank's slice and copy of a ZeRO-3 collective issued by tensor through the list API
    /// (`zero3_gather_per_tensor`; evaluate::zero3 `zero3_list_host_s`). A dropless MoE layer copies its token
    /// counts to the host (the dispatch's split sizes), so the host cannot run ahead of the GPU past it; where its
    /// launches take longer than the layer's GPU work, the GPU waits. 0: the host keeps ahead (CUDA graphs, fused
    /// kernels), or not measured for the framework.
    pub host_s_per_kernel: f64,
    /// Kernels a MoE layer launches forward and backward beside the per-expert ones: router, top-k, permutation,
    /// the grouped experts, un-permutation, and their gradients.
    pub moe_host_kernels: f64,
    /// More kernels per local expert where the experts launch one by one (a loop, or cuBLAS GEMMs per expert;
    /// not `torch._grouped_mm`, one kernel for all): each expert's GEMMs, activation and their gradients.
    pub moe_host_kernels_per_expert: f64,
    /// The routed experts run as one grouped GEMM per projection; false: a loop of per-expert GEMMs.
    pub grouped_gemm: bool,
    /// The grouped GEMMs are PyTorch's `torch._grouped_mm` kernel, at the GPU's `grouped_mm_efficiency`; false:
    /// cuBLAS GEMMs per expert (Transformer Engine's GroupedLinear on several streams, MegaBlocks), at the dense
    /// layer-GEMM rate.
    pub torch_grouped_mm: bool,
    /// ZeRO-3 gathers the weights and reduce-scatters the gradients one parameter tensor per collective, each a
    /// ring over the whole data-parallel group with its own (n - 1) steps of latency (DeepSpeed before 2022-01:
    /// partition_parameters.py `_allgather_param`, `_reduce_scatter_gradient`); false: one collective per flat
    /// bucket or unit (PyTorch FSDP and FSDP2, Megatron's distributed optimizer, DeepSpeed since #1453).
    pub zero3_gather_per_tensor: bool,
    /// ZeRO-3's weight gathers run ahead of the compute that needs them and hide behind it as the data-parallel
    /// overlap allows; false: each gather blocks until done (DeepSpeed before 2022-01 synchronises the device
    /// before every gather and after every fetch), so the gathers are exposed.
    pub zero3_prefetch: bool,
    /// ZeRO-2 and ZeRO-3 reduce-scatter the gradients after every micro-batch's backward and accumulate their
    /// shards (DeepSpeed, whose `no_sync` refuses stages 2 and 3; FSDP without `no_sync`); false: once a step, the
    /// full gradients kept until the last micro-batch (FSDP2's `set_requires_gradient_sync(False)` before it).
    pub zero_reduce_per_micro_batch: bool,
    /// Under pipeline parallelism the schedule holds ZeRO-2/3's reduction back to the step's last backward,
    /// keeping the stage's full gradients meanwhile (torch.distributed.pipelining sets FSDP2's
    /// `set_requires_gradient_sync(False)` for every backward and reduces after the last).
    pub pp_defers_zero_reduce: bool,
    /// Under pipeline parallelism the schedule keeps ZeRO-3's gathered weights after each backward
    /// (torch.distributed.pipelining sets FSDP2's `set_reshard_after_backward(False)` until the last backward):
    /// without resharding after the forward, the weights are gathered once a step, not once a micro-batch; with
    /// it, m + 1 times, not 2m (`weight_gathers_per_step`).
    pub pp_keeps_weights_gathered: bool,
    /// Selective recomputation saves every other matrix multiplication's output of a block and the attention
    /// kernel's, recomputing the rest, GEMMs included, of what the backward reads (torchtitan's per-operator
    /// policy under torch.compile: `step::recompute`); false: Korthikanti et al.'s, which reruns the norms and
    /// activation (or the unfused core attention) only.
    pub selective_recomputes_alternate_mms: bool,
    /// Under FP8 a GEMM keeps the quantised copy of its activation input for the backward, one byte an element,
    /// not the BF16 one (Transformer Engine's Linear, GroupedLinear, LayerNormLinear and LayerNormMLP; torchao's
    /// tensorwise Float8Linear): the norm outputs and the MLP's activation output are kept at half the bytes, the
    /// attention output once more for the output projection (`step::memory`).
    pub fp8_keeps_quantized_inputs: bool,
}

impl FrameworkSpec {
    /// No software cost beyond the kernels: fused permutation, grouped experts, Megatron's asynchronous TP
    /// backward, Transformer Engine's cast, ZeRO-3 gathers by flat bucket ahead of the compute (the core's own
    /// tests, and what a framework adds is measured from).
    pub fn kernels_only() -> Self {
        FrameworkSpec {
            layer_overhead: 0.0,
            microbatch_overhead_s: 0.0,
            step_overhead_s: 0.0,
            optimizer_bytes_per_param: ADAM_BYTES_PER_PARAM,
            zeroes_grad_buffer: false,
            overlap_interference: 0.0,
            tp_backward_overlap: 0.0,
            fp8_cast_bytes: 3.0,
            moe_permute_factor: 1.0,
            moe_router_s: 0.0,
            host_s_per_kernel: 0.0,
            moe_host_kernels: 0.0,
            moe_host_kernels_per_expert: 0.0,
            grouped_gemm: true,
            torch_grouped_mm: false,
            zero3_gather_per_tensor: false,
            zero3_prefetch: true,
            zero_reduce_per_micro_batch: true,
            pp_defers_zero_reduce: false,
            pp_keeps_weights_gathered: false,
            selective_recomputes_alternate_mms: false,
            fp8_keeps_quantized_inputs: true,
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        non_negative("layer_overhead", self.layer_overhead)?;
        non_negative("microbatch_overhead_s", self.microbatch_overhead_s)?;
        non_negative("step_overhead_s", self.step_overhead_s)?;
        non_negative("optimizer_bytes_per_param", self.optimizer_bytes_per_param)?;
        non_negative("overlap_interference", self.overlap_interference)?;
        if !(0.0..=1.0).contains(&self.tp_backward_overlap) {
            return Err(ConfigError::InvalidFigure {
                field: "tp_backward_overlap",
                value: self.tp_backward_overlap,
                expected: "a fraction in [0, 1]",
            });
        }
        non_negative("fp8_cast_bytes", self.fp8_cast_bytes)?;
        not_below_one("moe_permute_factor", self.moe_permute_factor)?;
        non_negative("moe_router_s", self.moe_router_s)?;
        non_negative("host_s_per_kernel", self.host_s_per_kernel)?;
        non_negative("moe_host_kernels", self.moe_host_kernels)?;
        non_negative("moe_host_kernels_per_expert", self.moe_host_kernels_per_expert)
    }

    /// How many times a step reduce-scatters the gradients ZeRO stage `zero_stage` shards (2 and 3; once for the
    /// others) under `pp` pipeline stages with `micro_batches` micro-batches: after each micro-batch, or once.
    pub fn sharded_grad_reductions(&self, zero_stage: u32, pp: u32, micro_batches: u32) -> u32 {
        let deferred = !self.zero_reduce_per_micro_batch || (pp > 1 && self.pp_defers_zero_reduce);
        if zero_stage >= 2 && !deferred {
            micro_batches
        } else {
            1
        }
    }

    /// ZeRO-3 weight gathers in a step of `micro_batches`, each micro-batch gathering `per_micro_batch` times (its
    /// forward's, and its backward's where the weights are resharded after the forward: `zero3_gathers`). Where
    /// the pipeline schedule keeps the stage's weights gathered after each backward to the last
    /// (torch.distributed.pipelining sets FSDP2's `set_reshard_after_backward(False)`, stage.py, pytorch
    /// 0138610331c) and FSDP2's unshard is a no-op on gathered weights (`FSDPParamGroup.unshard`): without
    /// resharding after the forward, once a step; with it, every forward reshards and the backward after it
    /// gathers again, but a forward after a backward finds them gathered: in 1F1B (and GPipe) the warm-up forwards
    /// and the first steady forward gather, then each steady backward, m + 1 in all, not 2m.
    pub fn weight_gathers_per_step(
        &self,
        pp: u32,
        reshard_after_forward: bool,
        micro_batches: u32,
        per_micro_batch: f64,
    ) -> f64 {
        let m = micro_batches as f64;
        match (pp > 1 && self.pp_keeps_weights_gathered, reshard_after_forward) {
            (true, false) => 1.0,
            (true, true) => (m + 1.0).min(m * per_micro_batch),
            (false, _) => m * per_micro_batch,
        }
    }

    /// Whether ZeRO-2/3's gradients stay whole through the step's micro-batches (reduced once, after the last):
    /// they take a full stage's gradient memory, not a shard's.
    pub fn keeps_full_gradients(&self, zero_stage: u32, pp: u32, micro_batches: u32) -> bool {
        zero_stage >= 2 && micro_batches > 1 && self.sharded_grad_reductions(zero_stage, pp, micro_batches) == 1
    }

    /// Host time of one MoE layer's launches, forward and backward, with `local_experts` experts on the rank.
    pub fn moe_host_s(&self, local_experts: f64) -> f64 {
        let one_kernel = self.grouped_gemm && self.torch_grouped_mm;
        let per_expert = if one_kernel { 0.0 } else { self.moe_host_kernels_per_expert * local_experts };
        self.host_s_per_kernel * (self.moe_host_kernels + per_expert)
    }
}

#[cfg(test)]
mod tests {
    use super::FrameworkSpec;

    #[test]
    fn a_moe_layers_host_time_counts_its_launches() {
        // Eager PyTorch on the lent H100 (data/measurements/h100-host-probe.json): 33.4 us a kernel, 80 kernels
        // beside the experts and 16.4 more per local expert looped. Qwen3-30B-A3B at EP 8 (16 local experts):
        // 33.4 us x (80 + 16.4 x 16) = 33.4 us x 342.4 = 11.436 ms; grouped, 80 x 33.4 us = 2.672 ms.
        let eager = FrameworkSpec {
            host_s_per_kernel: 33.4e-6,
            moe_host_kernels: 80.0,
            moe_host_kernels_per_expert: 16.4,
            grouped_gemm: false,
            ..FrameworkSpec::kernels_only()
        };
        assert!((eager.moe_host_s(16.0) - 11.43616e-3).abs() < 1e-12);
        let grouped = FrameworkSpec { grouped_gemm: true, torch_grouped_mm: true, ..eager };
        assert!((grouped.moe_host_s(16.0) - 2.672e-3).abs() < 1e-12);
        // Transformer Engine's GroupedLinear launches a cuBLAS GEMM per expert: each expert's kernels count.
        let per_expert_cublas = FrameworkSpec { grouped_gemm: true, torch_grouped_mm: false, ..eager };
        assert_eq!(per_expert_cublas.moe_host_s(16.0), eager.moe_host_s(16.0));
        assert_eq!(FrameworkSpec::kernels_only().moe_host_s(16.0), 0.0);
    }

    #[test]
    fn sharded_gradients_are_reduced_per_micro_batch_unless_the_framework_defers_them() {
        let zero = FrameworkSpec::kernels_only();
        // ZeRO-2/3 with 8 micro-batches: 8 reduce-scatters, gradients sharded; ZeRO-1 and DDP: one, at the end.
        assert_eq!(zero.sharded_grad_reductions(3, 1, 8), 8);
        assert_eq!(zero.sharded_grad_reductions(2, 4, 8), 8);
        assert_eq!(zero.sharded_grad_reductions(1, 1, 8), 1);
        assert_eq!(zero.sharded_grad_reductions(0, 1, 8), 1);
        assert!(!zero.keeps_full_gradients(3, 1, 8));
        // torch.distributed.pipelining defers FSDP2's reduction under PP only.
        let titan = FrameworkSpec { pp_defers_zero_reduce: true, ..zero.clone() };
        assert_eq!(titan.sharded_grad_reductions(3, 1, 8), 8);
        assert_eq!(titan.sharded_grad_reductions(3, 8, 8), 1);
        assert!(titan.keeps_full_gradients(3, 8, 8));
        // set_requires_gradient_sync(is_last): once, full gradients, except with one micro-batch.
        let deferring = FrameworkSpec { zero_reduce_per_micro_batch: false, ..zero };
        assert_eq!(deferring.sharded_grad_reductions(3, 1, 8), 1);
        assert!(deferring.keeps_full_gradients(3, 1, 8));
        assert!(!deferring.keeps_full_gradients(3, 1, 1));
        assert!(!deferring.keeps_full_gradients(1, 1, 8));
        // torch.distributed.pipelining keeps the weights gathered after each backward: unresharded, one gather a
        // step, not 8; resharded after each forward (2 a micro-batch), 8 + 1 = 9, not 16.
        let pipelined = FrameworkSpec { pp_keeps_weights_gathered: true, ..FrameworkSpec::kernels_only() };
        assert_eq!(pipelined.weight_gathers_per_step(8, false, 8, 1.0), 1.0);
        assert_eq!(pipelined.weight_gathers_per_step(8, true, 8, 2.0), 9.0);
        assert_eq!(pipelined.weight_gathers_per_step(8, true, 1, 2.0), 2.0);
        assert_eq!(pipelined.weight_gathers_per_step(1, false, 8, 1.0), 8.0);
        assert_eq!(pipelined.weight_gathers_per_step(1, true, 8, 2.0), 16.0);
        assert_eq!(FrameworkSpec::kernels_only().weight_gathers_per_step(8, true, 8, 2.0), 16.0);
    }
}
