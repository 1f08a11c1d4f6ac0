//! Inference serving on a cluster: one model served by instances of a layout (tensor, expert, attention-data
//! and pipeline parallelism), prefill and decode co-located or disaggregated, at a batch and sequence lengths.
//! What it answers: time to first token, time per output token, throughput per GPU, cost per million tokens,
//! and the KV-cache capacity that bounds the batch.
//!
//! The physics, by phase (each formula's source is beside it):
//! - a step of the engine (`step`) processes some decode tokens (one per running sequence) and some prefill
//!   tokens; its GEMMs are timed by the core's roofline (`step::compute::Throughput::gemm_time_s`: weights read
//!   once per step, so small decode batches are bound by HBM), attention by its KV-cache bytes over HBM or its
//!   FLOPs (decode) or the fused kernel's measured rate (prefill), the collectives by the NCCL protocol model
//!   (`network::collectives`: latency-bound at decode sizes), the MoE dispatch and combine by `step::moe`;
//! - the schedule (`schedule`) composes steps into the two phases: co-located continuous batching with chunked
//!   prefill (Sarathi-Serve, Agrawal et al., OSDI 2024), or disaggregated prefill and decode instances with the
//!   KV cache moved between them (DistServe, Zhong et al., OSDI 2024; Splitwise, Patel et al., ISCA 2024);
//! - memory (`memory`) bounds the batch: weights in the chosen format, a paged KV cache filling the HBM that is
//!   left (vLLM, Kwon et al., SOSP 2023).
//!
//! Evaluation is staged like training's: `ServingCluster` holds what the cluster fixes (network, prices, kernel
//! rates), `evaluate_layout` one layout on it; a sweep (`sweep`) reuses the cluster over many layouts.

mod cluster;
mod comm;
mod job;
mod layout;
mod memory;
mod schedule;
mod step;
pub mod sweep;

use crate::error::ConfigError;
use crate::hardware::{FabricSpec, GpuSpec, ScaleUpSpec, TopologySpec};
use crate::prices::Prices;
use crate::step::workload::TransformerSpec;

pub use cluster::ServingCluster;
pub use job::Job;
pub use layout::ServingLayout;
pub use memory::{kv_bytes_per_token, weight_bytes, ServingMemory};
pub use schedule::evaluate_layout;

crate::named_enum! {
    /// How prefill and decode share the GPUs.
    pub enum ServingMode {
        /// Every instance runs both phases: continuous batching with chunked prefill (prefill tokens ride in the
        /// decode steps).
        Colocated = "colocated",
        /// Prefill instances and decode instances apart, in a P:D ratio; the KV cache moves from one to the
        /// other over NVLink or the scale-out fabric.
        Disaggregated = "disaggregated",
    }
}

crate::named_enum! {
    /// The format of the weights and of the GEMMs that read them.
    pub enum Quantization {
        /// BF16 weights and GEMMs.
        Bf16 = "bf16",
        /// FP8 (E4M3) weights and activations: Hopper and newer.
        Fp8 = "fp8",
        /// NVFP4 weights and activations (4.5 bits per element with its block scales): Blackwell.
        Fp4 = "fp4",
    }
}

crate::named_enum! {
    /// The format of the attention projections' weights and GEMMs where a checkpoint keeps them apart from the
    /// rest: NVIDIA's NVFP4 checkpoints of MoE models quantize the experts and leave attention in BF16
    /// (nvidia/DeepSeek-R1-FP4, ModelOpt's exclude_modules "*self_attn*"; its v2 quantizes only attention's output
    /// projection more), as the TensorRT-LLM DeepSeek-R1 blog's precision table runs them ("64x Attention Modules
    /// | bf16", the MoE and dense FFN layers NVFP4).
    pub enum AttentionQuantization {
        /// As `quantization`: one format for every weight.
        Same = "same",
        /// BF16 attention projections.
        Bf16 = "bf16",
        /// FP8 attention projections (DeepSeek-V3's own checkpoint is FP8 throughout).
        Fp8 = "fp8",
        /// NVFP4 attention projections.
        Fp4 = "fp4",
    }
}

crate::named_enum! {
    /// How the scheduler admits a sequence against the KV cache.
    pub enum KvAdmission {
        /// Pages allocated as tokens arrive: a sequence holds its prompt and what it has generated (vLLM, SGLang,
        /// TensorRT-LLM's MAX_UTILIZATION), on average prompt + output / 2.
        OnDemand = "on-demand",
        /// Prompt plus the whole output reserved at admission, so that no sequence is ever paused (TensorRT-LLM's
        /// default capacity policy, GUARANTEED_NO_EVICT).
        Reserve = "reserve",
    }
}

crate::named_enum! {
    /// The format of the KV cache.
    pub enum KvCacheDtype {
        /// Two bytes per element.
        Bf16 = "bf16",
        /// One byte per element: GPUs with FP8 (Hopper and newer).
        Fp8 = "fp8",
    }
}

/// The serving layout and workload of one evaluation (SI units; lengths in tokens).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct Serving {
    /// Tensor parallelism of attention (and of the dense MLPs and shared experts) inside one attention replica.
    pub tp: u32,
    /// Pipeline stages of one instance.
    pub pp: u32,
    /// Expert parallelism of the routed experts over a stage's tp x dp_attention GPUs (1 for a dense model).
    pub ep: u32,
    /// Attention data parallelism: replicas of attention (each tp GPUs, its own sequences) in one stage.
    pub dp_attention: u32,
    pub mode: ServingMode,
    /// P:D ratio of a disaggregated deployment: prefill instances per `decode_instances` decode instances. A 0
    /// makes the cluster one phase's pool, the other phase served elsewhere (as published phase benchmarks run).
    pub prefill_instances: u32,
    pub decode_instances: u32,
    /// The prefill instances' layout when disaggregated; 0 = the decode instances' value.
    pub prefill_tp: u32,
    pub prefill_ep: u32,
    pub prefill_dp_attention: u32,
    /// Concurrent sequences per (decode) instance; 0 = as many as the KV cache holds.
    pub batch: u32,
    /// Tokens one step processes at most (prefill chunk plus decode tokens), per attention replica.
    pub max_num_tokens: u32,
    /// Mean prompt and output lengths, and their coefficients of variation (log-normal spread).
    pub input_tokens: f64,
    pub output_tokens: f64,
    pub input_tokens_cv: f64,
    pub output_tokens_cv: f64,
    pub quantization: Quantization,
    /// The attention projections' format where it differs from `quantization`.
    pub attention_quantization: AttentionQuantization,
    pub kv_cache_dtype: KvCacheDtype,
    /// Share of the HBM left after weights and activations that the KV cache takes.
    pub kv_cache_fraction: f64,
    /// Tokens per KV-cache page.
    pub kv_block_tokens: u32,
    pub kv_admission: KvAdmission,
    /// Busiest expert rank's routed tokens / mean.
    pub moe_imbalance: f64,
    /// Extra replicas of the busiest experts spread over the expert-parallel ranks (DeepSeek's EPLB): the ranks
    /// hold experts + redundant_experts experts.
    pub redundant_experts: u32,
    /// Two micro-batches per step, one's all-to-all hidden behind the other's compute (DeepSeek, SGLang).
    pub two_batch_overlap: bool,
    /// Requests of a finite job submitted at once (`job`); 0 = the steady state only.
    pub requests: u32,
    /// The engine's cap on a request's output tokens (its max_tokens), bounding the job's drain; 0 = none.
    pub max_output_tokens: u32,
}

impl Serving {
    /// The format of the attention projections' weights and GEMMs.
    pub fn attention_format(&self) -> Quantization {
        match self.attention_quantization {
            AttentionQuantization::Same => self.quantization,
            AttentionQuantization::Bf16 => Quantization::Bf16,
            AttentionQuantization::Fp8 => Quantization::Fp8,
            AttentionQuantization::Fp4 => Quantization::Fp4,
        }
    }

    /// Reject lengths and shares the formulas cannot use (the layout is checked by `ServingLayout::new`).
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |field: &'static str, value: f64, expected: &'static str| {
            Err(ConfigError::InvalidFigure { field, value, expected })
        };
        for (field, v) in [("input_tokens", self.input_tokens), ("output_tokens", self.output_tokens)] {
            if !(v.is_finite() && v >= 1.0) {
                return bad(field, v, "a number of tokens >= 1");
            }
        }
        for (field, v) in [("input_tokens_cv", self.input_tokens_cv), ("output_tokens_cv", self.output_tokens_cv)] {
            if !(v.is_finite() && (0.0..=10.0).contains(&v)) {
                return bad(field, v, "a coefficient of variation from 0 to 10");
            }
        }
        if !(self.kv_cache_fraction > 0.0 && self.kv_cache_fraction <= 1.0) {
            return bad("kv_cache_fraction", self.kv_cache_fraction, "a fraction in (0, 1]");
        }
        if !(self.moe_imbalance.is_finite() && self.moe_imbalance >= 1.0) {
            return bad("moe_imbalance", self.moe_imbalance, "a ratio >= 1");
        }
        for (field, v) in [
            ("tp", self.tp),
            ("pp", self.pp),
            ("ep", self.ep),
            ("dp_attention", self.dp_attention),
            ("max_num_tokens", self.max_num_tokens),
            ("kv_block_tokens", self.kv_block_tokens),
        ] {
            if v == 0 {
                return Err(ConfigError::ZeroDegree { field });
            }
        }
        let cap = self.max_output_tokens as f64;
        if cap > 0.0 && cap < self.output_tokens {
            return bad("max_output_tokens", cap, "0 (no cap) or at least output_tokens");
        }
        if self.prefill_instances == 0 && self.decode_instances == 0 {
            return Err(ConfigError::ZeroDegree { field: "decode_instances" });
        }
        Ok(())
    }
}

/// Everything one serving evaluation reads.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct ServingConfig {
    pub model: TransformerSpec,
    pub gpu: GpuSpec,
    pub scale_up: ScaleUpSpec,
    pub fabric: FabricSpec,
    pub topology: TopologySpec,
    pub prices: Prices,
    pub gpus: u32,
    pub serving: Serving,
}

impl ServingConfig {
    /// Check every figure once.
    pub fn validate_figures(&self) -> Result<(), ConfigError> {
        self.model.validate()?;
        self.gpu.validate()?;
        self.scale_up.validate()?;
        self.fabric.validate()?;
        self.topology.validate()?;
        self.prices.validate()?;
        self.serving.validate()
    }
}

/// One phase's step, by kind of work (seconds, on the busiest GPU of a stage, all its layers).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepTime {
    /// Weight GEMMs (projections, MLPs, experts, router, logits): the roofline of each.
    pub gemm_s: f64,
    /// Core attention: KV-cache reads (decode) or the fused kernel (prefill).
    pub attention_s: f64,
    /// Norms, residuals, rotary, activations, token permutation.
    pub elementwise_s: f64,
    /// Exposed communication: TP all-reduces, MoE dispatch and combine.
    pub comm_s: f64,
    /// What the step's kernels cost beyond their rooflines: launch, first-wave ramp, last-wave tail
    /// (`step::KERNEL_OVERHEAD_S` a kernel).
    pub overhead_s: f64,
}

impl StepTime {
    pub fn total_s(&self) -> f64 {
        self.gemm_s + self.attention_s + self.elementwise_s + self.comm_s + self.overhead_s
    }
}

/// The model's answer for one serving configuration (see `crate::metrics::SERVING_METRICS` for each metric).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServingEvaluation {
    /// GPUs of one instance (decode instance when disaggregated) and instances in the cluster.
    pub instance_gpus: u32,
    pub instances: u32,
    pub prefill_instance_gpus: u32,
    pub prefill_instances: u32,
    /// Concurrent sequences per decode instance, and the most the KV cache holds.
    pub batch: f64,
    pub max_batch: f64,
    pub memory: ServingMemory,
    pub ttft_s: f64,
    pub ttft_p99_s: f64,
    pub tpot_s: f64,
    pub request_latency_s: f64,
    pub request_latency_p99_s: f64,
    /// Prefill of one mean prompt, and the KV transfer that follows it when disaggregated.
    pub prefill_s: f64,
    pub kv_transfer_s: f64,
    /// The decode step (co-located: with its share of prefill tokens), by kind of work.
    pub decode_step: StepTime,
    /// The step that prefills a mean prompt's chunk (disaggregated: `max_num_tokens` prompt tokens; co-located:
    /// the chunk with the running sequences' decode tokens), by kind of work.
    pub prefill_step: StepTime,
    pub output_tokens_per_s: f64,
    pub output_tokens_per_s_per_gpu: f64,
    pub input_tokens_per_s_per_gpu: f64,
    /// Per GPU of the phase's own instances: input tokens a prefill GPU and output tokens a decode GPU serve.
    pub prefill_tokens_per_s_per_gpu: f64,
    pub decode_tokens_per_s_per_gpu: f64,
    pub output_tokens_per_s_per_user: f64,
    pub requests_per_s: f64,
    pub cost_usd_per_hour: f64,
    pub cost_usd_per_million_tokens: f64,
    pub it_power_w: f64,
    pub capex_usd: f64,
    /// A finite job of `Serving::requests` (all zero without one).
    pub job: Job,
}

/// Evaluate one serving configuration. Figures are checked; an impossible layout is the error. Never panics.
pub fn serve(cfg: &ServingConfig) -> Result<ServingEvaluation, ConfigError> {
    let cluster = ServingCluster::new(cfg)?;
    evaluate_layout(&cluster, &cfg.serving)
}
