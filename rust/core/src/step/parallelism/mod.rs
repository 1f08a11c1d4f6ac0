//! How the training job is split over the GPUs: the parallel degrees and the training run (here), how the layers
//! split over the pipeline stages (`stages`), and the checks and group placement a configuration's degrees imply
//! (`layout`).

use crate::error::ConfigError;
use crate::step::modules::RecomputeModules;

mod layout;
mod stages;

pub use layout::{check_moe_settings, layout, placement, Layout};
pub use stages::{check_schedule, check_stage_split, layers_per_gpu, stage_split, StageSplit};

crate::named_enum! {
    /// What the backward pass recomputes instead of keeping in memory.
    pub enum Recompute {
        /// Keep every activation the backward pass needs.
        None = "none",
        /// Recompute the cheap, memory-heavy element-wise parts (norms and the MLP activation) in the backward pass,
        /// as Megatron-Core's `--recompute-modules layernorm,mlp-activation` and DeepSeek-V3 (Sec. 3.2.3) do.
        /// With flash attention the attention matrix is never stored, so recomputing the core attention saves nothing.
        Selective = "selective",
        /// Store only each layer's input; rerun the whole forward pass in the backward pass.
        Full = "full",
    }
}

crate::named_enum! {
    /// Number format in which gradients are accumulated and reduced over the data-parallel ranks.
    pub enum GradDtype {
        /// FP32 main gradients, reduced in FP32: Megatron-LM's default for BF16 training (arguments.py sets
        /// accumulate_allreduce_grads_in_fp32 with --bf16; DDP grad_reduce_in_fp32) and Llama 3's (Sec. 3.3.4:
        /// "we accumulate gradients ... and reduce-scatter in FP32").
        Fp32 = "fp32",
        /// BF16 gradients reduced in BF16 (Megatron grad_reduce_in_fp32 = False; torchtitan reduce_dtype bf16).
        Bf16 = "bf16",
    }
}

impl GradDtype {
    /// Bytes of one gradient element as stored and reduced.
    pub fn bytes(self) -> f64 {
        match self {
            GradDtype::Fp32 => 4.0,
            GradDtype::Bf16 => 2.0,
        }
    }
}

crate::named_enum! {
    /// How MoE tokens reach their experts (Megatron-LM --moe-token-dispatcher-type).
    pub enum Dispatcher {
        /// NCCL all-to-all of every routed copy: a token bound for k experts on one remote node crosses the
        /// network k times.
        AllToAll = "alltoall",
        /// DeepEP / HybridEP ("flex" dispatcher): one network copy per destination node, sent by RDMA to the
        /// same-rail GPU of that node, then forwarded over NVLink (DeepSeek-V3 report Sec. 3.2.2; DeepEP).
        Flex = "flex",
        /// All-gather of the tokens over the expert-parallel group, each rank keeping its experts' tokens
        /// (Megatron's allgather dispatcher).
        AllGather = "allgather",
    }
}

crate::named_enum! {
    /// Which fused attention kernel runs (when `flash_attention`).
    pub enum AttentionKernel {
        /// The best the GPU has (FlashAttention-3 or cuDNN fused attention on Hopper and Blackwell, FlashAttention-2
        /// on Ampere): the catalog's `attention_efficiency`.
        Best = "best",
        /// FlashAttention-2-class kernels (PyTorch SDPA's flash backend): the catalog's `attention_efficiency_fa2`.
        Fa2 = "fa2",
    }
}

crate::named_enum! {
    /// Number format of the transformer layers' matrix multiplications.
    pub enum Precision {
        /// BF16 matrix multiplications.
        Bf16 = "bf16",
        /// FP8 matrix multiplications (Transformer Engine); attention and element-wise work stay in BF16.
        Fp8 = "fp8",
    }
}

/// The parallel layout and schedule of one configuration. A sweep space holds one as the template every
/// configuration starts from (`SweepSpace::parallelism`) and sets the swept fields per configuration; from Python
/// those fields may be left out of a template (they default to one GPU, no recomputation, ZeRO 0), and
/// `scalefront.evaluate` gives every field (a test holds the parameter table to cover them all).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct Parallelism {
    #[cfg_attr(feature = "python", pyo3(default = 1))]
    pub tp: u32,
    #[cfg_attr(feature = "python", pyo3(default = 1))]
    pub pp: u32,
    #[cfg_attr(feature = "python", pyo3(default = 1))]
    pub dp: u32,
    #[cfg_attr(feature = "python", pyo3(default = 1))]
    pub cp: u32,
    /// Expert parallelism. With Megatron-Core's MoE parallel folding the expert layers regroup the tp x dp x cp
    /// ranks of a pipeline stage as etp x ep x expert-dp, so ep x etp must divide tp x dp x cp (not dp x cp).
    #[cfg_attr(feature = "python", pyo3(default = 1))]
    pub ep: u32,
    /// Expert tensor parallelism (Megatron --expert-tensor-parallel-size); 0 = the attention's tp.
    pub etp: u32,
    /// Virtual pipeline stages per GPU (interleaved 1F1B); 1 = plain 1F1B.
    #[cfg_attr(feature = "python", pyo3(default = 1))]
    pub vpp: u32,
    #[cfg_attr(feature = "python", pyo3(default = 1))]
    pub micro_batch: u32,
    /// 0 = plain data parallel, 1 = optimizer states sharded, 2 = + gradients, 3 = + parameters (FSDP).
    #[cfg_attr(feature = "python", pyo3(default))]
    pub zero_stage: u32,
    #[cfg_attr(feature = "python", pyo3(default = Recompute::None))]
    pub recompute: Recompute,
    /// Megatron sequence parallelism inside the TP group (activations of norms and dropout split by tp).
    #[cfg_attr(feature = "python", pyo3(default = true))]
    pub sequence_parallel: bool,
    /// Accept layers that do not split evenly over pp x vpp virtual stages (published runs use asymmetric
    /// first/last stages); the busiest stage then holds the rounded-up count. Off by default: see
    /// `check_stage_split`.
    #[cfg_attr(feature = "python", pyo3(default))]
    pub uneven_stages: bool,
    /// Transformer layers on the first / last pipeline stage when they differ from the others (Megatron
    /// --decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers); None = even split.
    #[cfg_attr(feature = "python", pyo3(default))]
    pub first_stage_layers: Option<u32>,
    #[cfg_attr(feature = "python", pyo3(default))]
    pub last_stage_layers: Option<u32>,
    /// Count the input embedding / the loss as one layer of the split (Megatron
    /// account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split): the first / last stage
    /// builds one transformer layer fewer.
    #[cfg_attr(feature = "python", pyo3(default))]
    pub embedding_in_split: bool,
    #[cfg_attr(feature = "python", pyo3(default))]
    pub loss_in_split: bool,
    /// ZeRO-3 only: free the gathered parameters after each forward pass and gather them again for the backward
    /// pass (FSDP reshard_after_forward = True). False keeps them until the backward pass, as Llama 3 did
    /// (Sec. 3.3.2: "we do not reshard after forward"): one all-gather per micro-batch instead of two, but every
    /// layer's full parameters resident.
    #[cfg_attr(feature = "python", pyo3(default = true))]
    pub reshard_after_forward: bool,
}

impl Default for Parallelism {
    /// One GPU, no parallelism, Megatron's usual defaults elsewhere.
    fn default() -> Self {
        Parallelism {
            tp: 1,
            pp: 1,
            dp: 1,
            cp: 1,
            ep: 1,
            etp: 0,
            vpp: 1,
            micro_batch: 1,
            zero_stage: 1,
            recompute: Recompute::None,
            sequence_parallel: true,
            uneven_stages: false,
            first_stage_layers: None,
            last_stage_layers: None,
            embedding_in_split: false,
            loss_in_split: false,
            reshard_after_forward: true,
        }
    }
}

impl Parallelism {
    /// The expert tensor-parallel degree in effect.
    pub fn expert_tp(&self) -> u32 {
        if self.etp == 0 {
            self.tp
        } else {
            self.etp
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct Training {
    /// Sequences per optimizer step.
    pub global_batch: u32,
    pub seq_len: u32,
    /// Tokens of the whole run.
    pub tokens: f64,
    /// Swept in a sweep space (may be left out of its template, as `Parallelism`'s swept fields).
    #[cfg_attr(feature = "python", pyo3(default = Precision::Bf16))]
    pub precision: Precision,
    /// Fused (flash) attention that never stores the attention scores (Dao et al. 2022). Without it, the
    /// scores are materialised: scale-mask-softmax and dropout kernels stream them through HBM and they stay
    /// in memory for the backward pass (Megatron-LM before 2022).
    pub flash_attention: bool,
    #[cfg_attr(feature = "python", pyo3(default = AttentionKernel::Best))]
    pub attention_kernel: AttentionKernel,
    /// Gradient accumulation and reduction format (DP traffic and gradient memory).
    #[cfg_attr(feature = "python", pyo3(default = GradDtype::Fp32))]
    pub grad_reduce_dtype: GradDtype,
    /// Tokens of the busiest expert-parallel rank over the mean (1 = perfectly balanced routing, as in runs that
    /// force-balance the router; measured max/mean loads are inputs from the run's source).
    #[cfg_attr(feature = "python", pyo3(default = 1.0))]
    pub moe_imbalance: f64,
    #[cfg_attr(feature = "python", pyo3(default = Dispatcher::AllToAll))]
    pub moe_dispatcher: Dispatcher,
    /// Multi-token-prediction modules on the last pipeline stage (DeepSeek-V3: 1), each one more transformer
    /// layer, a 2h x h projection and another output layer (DeepSeek-V3 report Sec. 2.2).
    #[cfg_attr(feature = "python", pyo3(default))]
    pub mtp_layers: u32,
    /// How the job's ranks land on the leaves: the share of each collective's leaf-local traffic that a fragmented
    /// placement pushes across leaves (0 = contiguous: one job placed by the scheduler in rank order; a
    /// multi-tenant cluster scatters jobs over partly allocated racks, Meta SIGCOMM 2024 and Alibaba Crux SIGCOMM
    /// 2024). It applies to every collective that leaves a scale-up domain (data- and context-parallel rings,
    /// pipeline sends, expert all-to-all); tensor parallelism stays in the NVLink domain.
    #[cfg_attr(feature = "python", pyo3(default))]
    pub placement: f64,
    /// Servers the scheduler keeps together inside one multi-server NVLink domain (Slurm topology/block's
    /// `--segment`), the job laid out segment by segment in rank order; 0: the domains filled in rank order, a
    /// job of 32 four-GPU trays taking 18 of one NVL72 and 14 of the next (`network::placement::job_domain_gpus`).
    #[cfg_attr(feature = "python", pyo3(default))]
    pub nvlink_segment_nodes: u32,
    /// FP8 training all-gathers its sharded weights in FP8 (one byte per element) rather than BF16: torchao's
    /// enable_fsdp_float8_all_gather under FSDP2, Megatron-LM's --fp8-param-gather.
    #[cfg_attr(feature = "python", pyo3(default))]
    pub fp8_param_gather: bool,
    /// The weight-gradient GEMMs accumulate into the FP32 (or BF16) main gradient in their epilogue (Megatron-LM's
    /// gradient_accumulation_fusion, Transformer Engine's fuse_wgrad_accumulation; on by default where apex is
    /// installed). Off (`--no-gradient-accumulation-fusion`), each weight gradient is written apart and a separate
    /// kernel adds it to the main gradient every micro-batch (`step::gradients::unfused_accumulation_s`). It
    /// describes Megatron's gradient path (ZeRO 0/1); ZeRO-2/3 accumulate only the rank's shard.
    #[cfg_attr(feature = "python", pyo3(default = true))]
    pub gradient_accumulation_fusion: bool,
    /// The framework's own overlap of the backward pass's tensor-parallel collectives holds (`tp_backward_overlap`:
    /// Megatron-LM's asynchronous input-gradient all-reduce, on since 6e1bde1e0f, 2021-09-02). Off
    /// (`--no-async-tensor-model-parallel-allreduce`, or Megatron-LM before that commit, whose mpu waits for the
    /// all-reduce), those collectives hide only by the `overlap` setting.
    #[cfg_attr(feature = "python", pyo3(default = true))]
    pub tp_async_allreduce: bool,
    /// The submodules selective recomputation reruns, as a Megatron-Core run names them (`recompute_modules`);
    /// none: the framework's own selective rule (`step::modules`).
    #[cfg_attr(feature = "python", pyo3(default))]
    pub recompute_modules: RecomputeModules,
}

impl Default for Training {
    fn default() -> Self {
        Training {
            global_batch: 1,
            seq_len: 4096,
            tokens: 1e12,
            precision: Precision::Bf16,
            flash_attention: true,
            attention_kernel: AttentionKernel::Best,
            grad_reduce_dtype: GradDtype::Fp32,
            moe_imbalance: 1.0,
            moe_dispatcher: Dispatcher::AllToAll,
            mtp_layers: 0,
            placement: 0.0,
            nvlink_segment_nodes: 0,
            fp8_param_gather: false,
            gradient_accumulation_fusion: true,
            tp_async_allreduce: true,
            recompute_modules: RecomputeModules::NONE,
        }
    }
}

/// The longest sequence a run may train on: 2^24 tokens, beyond any model's context window (EST: the longest
/// published is 10M tokens, Llama 4 Scout, Meta AI blog "The Llama 4 herd"; 2025-04), so a longer one is a typo.
pub const MAX_SEQ_LEN: u32 = 1 << 24;
/// The most tokens a run may train on: 10^18 (EST: 10^4 x the largest published pre-training runs, 15-36T tokens;
/// Llama 3 report arXiv 2407.21783, Qwen3 report arXiv 2505.09388; 2025-05), so a larger count is a typo.
pub const MAX_TOKENS: f64 = 1e18;

impl Training {
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_tokens(self.tokens, self.seq_len)?;
        if self.seq_len > MAX_SEQ_LEN {
            return Err(ConfigError::InvalidFigure {
                field: "seq_len",
                value: self.seq_len as f64,
                expected: "at most 16,777,216 tokens (2^24, beyond any model's context window)",
            });
        }
        if !(self.moe_imbalance.is_finite() && self.moe_imbalance >= 1.0) {
            return Err(ConfigError::InvalidFigure {
                field: "moe_imbalance",
                value: self.moe_imbalance,
                expected: "a finite number >= 1 (busiest expert rank's tokens / mean)",
            });
        }
        if !(self.placement.is_finite() && (0.0..=1.0).contains(&self.placement)) {
            return Err(ConfigError::InvalidFigure {
                field: "placement",
                value: self.placement,
                expected: "a share in [0, 1] (0 = contiguous)",
            });
        }
        Ok(())
    }
}

/// The tokens of a run are a count: a whole number, and at least one sequence (fewer cannot be trained; a
/// fraction of a token means nothing). Fewer tokens than one optimizer step are allowed: the run is then one step
/// (`steps` rounds up), which is what training that many tokens costs.
pub fn check_tokens(tokens: f64, seq_len: u32) -> Result<(), ConfigError> {
    if tokens.is_finite() && tokens >= seq_len.max(1) as f64 && tokens.fract() == 0.0 && tokens <= MAX_TOKENS {
        return Ok(());
    }
    Err(ConfigError::InvalidFigure {
        field: "tokens",
        value: tokens,
        expected: "a whole number of tokens, at least one sequence (seq_len tokens) and at most 1e18",
    })
}

/// Fractions (0..1) of each kind of communication that may hide behind compute, when compute is there to hide it.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct Overlap {
    /// Gradient reduce-scatter/all-reduce during backward, parameter all-gather during forward.
    pub dp: f64,
    /// Tensor-parallel collectives overlapped with the GEMMs (Transformer Engine userbuffers).
    pub tp: f64,
    /// Pipeline sends and receives overlapped with the next chunk's compute (Megatron-LM's overlap_p2p_comm); the
    /// fill's and drain's stay exposed whatever the share (`evaluate::step::pipeline_sends`).
    pub pp: f64,
    /// Expert all-to-all overlapped with compute of another micro-batch, layer by layer (Megatron-Core's combined
    /// 1F1B, DeepSeek-V3's DualPipe: `evaluate::ep_overlap`).
    pub ep: f64,
}

impl Overlap {
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (field, v) in
            [("overlap.dp", self.dp), ("overlap.tp", self.tp), ("overlap.pp", self.pp), ("overlap.ep", self.ep)]
        {
            if !(v.is_finite() && (0.0..=1.0).contains(&v)) {
                return Err(ConfigError::InvalidFigure { field, value: v, expected: "a fraction in [0, 1]" });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_a_whole_number_of_at_least_one_sequence() {
        for ok in [8192.0, 8193.0, 15e12, 1.5e12] {
            assert!(check_tokens(ok, 8192).is_ok(), "{ok}");
        }
        for bad in [1.5, 8191.0, 8192.5, 0.0, -8192.0, f64::NAN, f64::INFINITY] {
            let e = check_tokens(bad, 8192).unwrap_err();
            assert_eq!((e.category(), e.field()), ("invalid_figure", "tokens"), "{bad}");
        }
    }
}
