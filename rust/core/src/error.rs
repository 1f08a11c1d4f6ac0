//! Why a configuration cannot be evaluated. One enum for the whole engine; the bindings map it to Python
//! exceptions and sweeps count rejected configurations by `ConfigError::category`.

use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub enum ConfigError {
    /// A hardware, price or workload figure out of its range (negative, NaN, zero where it divides).
    InvalidFigure {
        field: &'static str,
        value: f64,
        expected: &'static str,
    },
    /// A parallel degree, batch size or stage count below 1.
    ZeroDegree {
        field: &'static str,
    },
    GpuCountMismatch {
        tp: u32,
        pp: u32,
        dp: u32,
        cp: u32,
        product: u64,
        gpus: u32,
    },
    TpDoesNotDivideHeads {
        tp: u32,
        heads: u32,
        kv_heads: u32,
    },
    PipelineDeeperThanLayers {
        stages: u32,
        layers: u32,
    },
    InterleavingNeedsPipeline {
        vpp: u32,
    },
    /// The interleaved schedule needs the layers to split evenly over pp x vpp virtual stages.
    LayersNotSplitOverStages {
        layers: u32,
        pp: u32,
        vpp: u32,
    },
    InterleavingMicroBatches {
        micro_batches: u32,
        pp: u32,
    },
    GlobalBatchNotDivisible {
        global_batch: u32,
        dp: u32,
        micro_batch: u32,
    },
    CpDoesNotDivideSequence {
        cp: u32,
        seq_len: u32,
    },
    ExpertParallelOnDenseModel {
        ep: u32,
    },
    EpDoesNotDivideExperts {
        ep: u32,
        experts: u32,
    },
    EpDoesNotDivideDataParallel {
        ep: u32,
        etp: u32,
        stage_ranks: u32,
    },
    ZeroStageOutOfRange {
        stage: u32,
    },
    Fp8NotSupported,
    /// Uneven first/last pipeline stages that Megatron-Core cannot build.
    UnevenStages {
        reason: &'static str,
    },
    /// A GPU count that is not a whole number of servers (servers are bought whole).
    PartialServer {
        gpus: u32,
        server_gpus: u32,
    },
    /// Sequence parallelism splits each sequence over the tp ranks (of each cp chunk): Megatron-LM requires the
    /// sequence length to be a multiple of tp x cp.
    SequenceParallelSplit {
        seq_len: u32,
        tp: u32,
        cp: u32,
    },
    /// An expert setting (expert TP, dispatcher, imbalance) on a dense model, which has no experts to apply it to.
    MoeSettingOnDenseModel {
        field: &'static str,
    },
    /// A fabric feature the topology cannot carry (in-network reduction on leaves that are not rail-aligned,
    /// dual top-of-rack leaves on a switchless torus).
    FabricTopology {
        feature: &'static str,
        needs: &'static str,
    },
    /// Serving: the GPUs do not split into whole model instances.
    InstanceDoesNotDivideGpus {
        instance_gpus: u32,
        gpus: u32,
    },
    /// Serving, disaggregated: a group of P prefill and D decode instances does not divide the GPUs.
    PdRatioDoesNotDivideGpus {
        group_gpus: u64,
        prefill_instances: u32,
        decode_instances: u32,
        gpus: u32,
    },
    /// Serving: the weights leave no room for one sequence's KV cache (`field` tp), or the batch needs more KV
    /// cache than is free (`field` batch).
    KvCacheDoesNotFit {
        field: &'static str,
        batch: u32,
        max_batch: u32,
        free_gb: f64,
        needed_gb: f64,
    },
    /// A number format the GPU has no tensor cores (or no kernels) for.
    FormatNotSupported {
        field: &'static str,
        format: &'static str,
    },
    /// Serving: the expert-parallel group must tile a pipeline stage's tp x dp_attention GPUs.
    EpDoesNotDivideWidth {
        ep: u32,
        width: u32,
    },
    /// A segment of servers kept in one NVLink domain (`nvlink_segment_nodes`) that the domain cannot hold
    /// (`domain_servers`: 1 when the NVLink domain ends at the server) or that does not divide the job's servers.
    NvlinkSegment {
        segment_nodes: u32,
        domain_servers: u32,
        job_servers: u32,
    },
}

/// Every `ConfigError::category`, in a fixed order (sweeps count rejections by it; the Python layer documents and
/// tests each).
pub const CATEGORIES: [&str; 26] = [
    "invalid_figure",
    "zero_degree",
    "gpu_count_mismatch",
    "tp_heads",
    "pp_layers",
    "vpp_without_pp",
    "pp_vpp_layers",
    "vpp_micro_batches",
    "global_batch",
    "cp_seq_len",
    "ep_dense",
    "ep_experts",
    "ep_dp",
    "zero_stage",
    "fp8_unsupported",
    "uneven_stages",
    "partial_server",
    "sp_seq_len",
    "moe_dense",
    "fabric_topology",
    "serving_gpus",
    "pd_ratio",
    "kv_cache",
    "format_unsupported",
    "ep_width",
    "nvlink_segment",
];

impl ConfigError {
    /// The input field the failure is about, as the Python API and the command line name it.
    pub fn field(&self) -> &'static str {
        match self {
            ConfigError::InvalidFigure { field, .. } | ConfigError::ZeroDegree { field } => field,
            ConfigError::GpuCountMismatch { .. } => "gpus",
            ConfigError::TpDoesNotDivideHeads { .. } => "tp",
            ConfigError::PipelineDeeperThanLayers { .. } => "pp",
            ConfigError::InterleavingNeedsPipeline { .. }
            | ConfigError::LayersNotSplitOverStages { .. }
            | ConfigError::InterleavingMicroBatches { .. } => "vpp",
            ConfigError::GlobalBatchNotDivisible { .. } => "global_batch",
            ConfigError::CpDoesNotDivideSequence { .. } => "cp",
            ConfigError::ExpertParallelOnDenseModel { .. }
            | ConfigError::EpDoesNotDivideExperts { .. }
            | ConfigError::EpDoesNotDivideDataParallel { .. } => "ep",
            ConfigError::ZeroStageOutOfRange { .. } => "zero",
            ConfigError::Fp8NotSupported => "precision",
            ConfigError::UnevenStages { .. } => "first_stage_layers",
            ConfigError::PartialServer { .. } => "gpus",
            ConfigError::SequenceParallelSplit { .. } => "sequence_parallel",
            ConfigError::MoeSettingOnDenseModel { field } => field,
            ConfigError::FabricTopology { .. } => "topology",
            ConfigError::InstanceDoesNotDivideGpus { .. } => "gpus",
            ConfigError::PdRatioDoesNotDivideGpus { .. } => "decode_instances",
            ConfigError::KvCacheDoesNotFit { field, .. } | ConfigError::FormatNotSupported { field, .. } => field,
            ConfigError::EpDoesNotDivideWidth { .. } => "ep",
            ConfigError::NvlinkSegment { .. } => "nvlink_segment_nodes",
        }
    }

    /// A short stable name of the failure, to count rejected configurations by reason.
    pub fn category(&self) -> &'static str {
        CATEGORIES[self.category_index()]
    }

    /// The position of `category()` in `CATEGORIES` (sweeps count rejections by it, once per rejected
    /// configuration: an index, not a string search).
    pub fn category_index(&self) -> usize {
        match self {
            ConfigError::InvalidFigure { .. } => 0,                // invalid_figure
            ConfigError::ZeroDegree { .. } => 1,                   // zero_degree
            ConfigError::GpuCountMismatch { .. } => 2,             // gpu_count_mismatch
            ConfigError::TpDoesNotDivideHeads { .. } => 3,         // tp_heads
            ConfigError::PipelineDeeperThanLayers { .. } => 4,     // pp_layers
            ConfigError::InterleavingNeedsPipeline { .. } => 5,    // vpp_without_pp
            ConfigError::LayersNotSplitOverStages { .. } => 6,     // pp_vpp_layers
            ConfigError::InterleavingMicroBatches { .. } => 7,     // vpp_micro_batches
            ConfigError::GlobalBatchNotDivisible { .. } => 8,      // global_batch
            ConfigError::CpDoesNotDivideSequence { .. } => 9,      // cp_seq_len
            ConfigError::ExpertParallelOnDenseModel { .. } => 10,  // ep_dense
            ConfigError::EpDoesNotDivideExperts { .. } => 11,      // ep_experts
            ConfigError::EpDoesNotDivideDataParallel { .. } => 12, // ep_dp
            ConfigError::ZeroStageOutOfRange { .. } => 13,         // zero_stage
            ConfigError::Fp8NotSupported => 14,                    // fp8_unsupported
            ConfigError::UnevenStages { .. } => 15,                // uneven_stages
            ConfigError::PartialServer { .. } => 16,               // partial_server
            ConfigError::SequenceParallelSplit { .. } => 17,       // sp_seq_len
            ConfigError::MoeSettingOnDenseModel { .. } => 18,      // moe_dense
            ConfigError::FabricTopology { .. } => 19,              // fabric_topology
            ConfigError::InstanceDoesNotDivideGpus { .. } => 20,   // serving_gpus
            ConfigError::PdRatioDoesNotDivideGpus { .. } => 21,    // pd_ratio
            ConfigError::KvCacheDoesNotFit { .. } => 22,           // kv_cache
            ConfigError::FormatNotSupported { .. } => 23,          // format_unsupported
            ConfigError::EpDoesNotDivideWidth { .. } => 24,        // ep_width
            ConfigError::NvlinkSegment { .. } => 25,               // nvlink_segment
        }
    }
}

/// A figure as a message shows it: as written for ordinary sizes, in exponent form when very large or very small
/// (1e300 would be three hundred digits).
fn shown(value: f64) -> String {
    if value != 0.0 && value.is_finite() && !(1e-4..1e15).contains(&value.abs()) {
        format!("{value:e}")
    } else {
        format!("{value}")
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::InvalidFigure { field, value, expected } => {
                write!(f, "{field} = {} is invalid: expected {expected}", shown(*value))
            }
            ConfigError::ZeroDegree { field } => write!(f, "{field} must be at least 1"),
            ConfigError::GpuCountMismatch { tp, pp, dp, cp, product, gpus } => {
                write!(f, "tp x pp x dp x cp = {tp} x {pp} x {dp} x {cp} = {product} must equal the GPU count {gpus}")
            }
            ConfigError::TpDoesNotDivideHeads { tp, heads, kv_heads } => {
                write!(f, "tp = {tp} must divide both the attention heads ({heads}) and the KV heads ({kv_heads})")
            }
            ConfigError::PipelineDeeperThanLayers { stages, layers } => {
                write!(f, "pp x vpp = {stages} pipeline stages exceed the model's {layers} layers")
            }
            ConfigError::InterleavingNeedsPipeline { vpp } => {
                write!(f, "vpp = {vpp} (interleaved virtual stages) needs pp > 1")
            }
            ConfigError::LayersNotSplitOverStages { layers, pp, vpp } => write!(
                f,
                "vpp = {vpp}: the model's {layers} layers do not split evenly over pp x vpp = {pp} x {vpp} = {} \
                 virtual stages (the interleaved schedule gives every stage the same number of layers)",
                *pp as u64 * *vpp as u64
            ),
            ConfigError::InterleavingMicroBatches { micro_batches, pp } => write!(
                f,
                "the interleaved schedule needs the micro-batch count ({micro_batches}) to be a multiple of pp ({pp})"
            ),
            ConfigError::GlobalBatchNotDivisible { global_batch, dp, micro_batch } => {
                write!(f, "global batch {global_batch} is not a multiple of dp x micro-batch = {dp} x {micro_batch}")
            }
            ConfigError::CpDoesNotDivideSequence { cp, seq_len } => write!(
                f,
                "cp = {cp}: the sequence length {seq_len} must be a multiple of 2 x cp (load-balanced causal chunks)"
            ),
            ConfigError::ExpertParallelOnDenseModel { ep } => {
                write!(f, "ep = {ep} needs a mixture-of-experts model; this model is dense (use ep = 1)")
            }
            ConfigError::EpDoesNotDivideExperts { ep, experts } => {
                write!(f, "ep = {ep} must divide the number of experts ({experts})")
            }
            ConfigError::EpDoesNotDivideDataParallel { ep, etp, stage_ranks } => write!(
                f,
                "ep x etp = {ep} x {etp} must divide tp x dp x cp = {stage_ranks} (the expert layers regroup a \
                 pipeline stage's ranks, Megatron-Core MoE parallel folding)"
            ),
            ConfigError::ZeroStageOutOfRange { stage } => write!(f, "ZeRO stage {stage} is not one of 0, 1, 2, 3"),
            ConfigError::Fp8NotSupported => {
                write!(f, "precision fp8 needs a GPU with FP8 tensor cores; this one has none (bf16 runs on every GPU)")
            }
            ConfigError::UnevenStages { reason } => write!(f, "pipeline stages: {reason}"),
            serving_or_setting => serving_or_setting.fmt_setting(f),
        }
    }
}

impl ConfigError {
    /// The messages of whole servers, sequence parallelism, dense models, the serving layout and the settings
    /// the hardware or fabric lacks (`fmt` writes the rest of the training layout's).
    fn fmt_setting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::PartialServer { gpus, server_gpus } => write!(
                f,
                "gpus = {gpus} is not a whole number of {server_gpus}-GPU servers (use a multiple of {server_gpus})"
            ),
            ConfigError::SequenceParallelSplit { seq_len, tp, cp } => write!(
                f,
                "sequence parallelism splits each sequence over tp x cp = {tp} x {cp} ranks: the sequence length \
                 {seq_len} must be a multiple of {} (or turn sequence parallelism off)",
                *tp as u64 * *cp as u64
            ),
            ConfigError::MoeSettingOnDenseModel { field } => {
                write!(f, "{field} is an expert (mixture-of-experts) setting; this model is dense, it has no experts")
            }
            ConfigError::FabricTopology { feature, needs } => write!(f, "{feature} needs {needs}"),
            ConfigError::InstanceDoesNotDivideGpus { instance_gpus, gpus } => write!(
                f,
                "gpus = {gpus} is not a multiple of one model instance's tp x dp_attention x pp = {instance_gpus} GPUs"
            ),
            ConfigError::PdRatioDoesNotDivideGpus { group_gpus, prefill_instances, decode_instances, gpus } => write!(
                f,
                "the P:D ratio prefill_instances:decode_instances = {prefill_instances}:{decode_instances} needs groups \
                 of {group_gpus} GPUs, which do not divide gpus = {gpus}"
            ),
            ConfigError::KvCacheDoesNotFit { field: "batch", batch, max_batch, .. } => write!(
                f,
                "batch = {batch} does not fit: the KV cache holds {max_batch} sequences per instance at this layout"
            ),
            ConfigError::KvCacheDoesNotFit { free_gb, needed_gb, .. } => write!(
                f,
                "the KV cache does not fit: {free_gb:.1} GB per GPU is left after the weights, one sequence needs \
                 {needed_gb:.2} GB (raise tp, pp or ep, or use a smaller weight format)"
            ),
            ConfigError::FormatNotSupported { field, format } => {
                let cores = format.to_uppercase();
                write!(f, "{field} {format} needs a GPU with {cores} tensor cores; this one has none (bf16 runs on every GPU)")
            }
            ConfigError::EpDoesNotDivideWidth { ep, width } => {
                write!(f, "ep = {ep} must divide a pipeline stage's tp x dp_attention = {width} GPUs")
            }
            ConfigError::NvlinkSegment { segment_nodes, domain_servers: 1, .. } => write!(
                f,
                "nvlink_segment_nodes = {segment_nodes}: the NVLink domain ends at the server, so there is no \
                 segment to keep together (use 0)"
            ),
            ConfigError::NvlinkSegment { segment_nodes, domain_servers, job_servers } => write!(
                f,
                "nvlink_segment_nodes = {segment_nodes} must fit one NVLink domain ({domain_servers} servers) and \
                 divide the job's {job_servers} servers"
            ),
            other => write!(f, "{other:?}"),
        }
    }
}

impl std::error::Error for ConfigError {}

#[cfg(test)]
mod tests {
    use super::*;

    /// One error of every kind (`every_category_is_listed_once` checks that none is missing).
    fn one_of_each() -> Vec<ConfigError> {
        vec![
            ConfigError::InvalidFigure { field: "x", value: 0.0, expected: "" },
            ConfigError::ZeroDegree { field: "tp" },
            ConfigError::GpuCountMismatch { tp: 1, pp: 1, dp: 1, cp: 1, product: 1, gpus: 2 },
            ConfigError::TpDoesNotDivideHeads { tp: 3, heads: 8, kv_heads: 8 },
            ConfigError::PipelineDeeperThanLayers { stages: 9, layers: 8 },
            ConfigError::InterleavingNeedsPipeline { vpp: 2 },
            ConfigError::LayersNotSplitOverStages { layers: 80, pp: 4, vpp: 3 },
            ConfigError::InterleavingMicroBatches { micro_batches: 3, pp: 2 },
            ConfigError::GlobalBatchNotDivisible { global_batch: 3, dp: 2, micro_batch: 1 },
            ConfigError::CpDoesNotDivideSequence { cp: 3, seq_len: 8 },
            ConfigError::ExpertParallelOnDenseModel { ep: 2 },
            ConfigError::EpDoesNotDivideExperts { ep: 3, experts: 8 },
            ConfigError::EpDoesNotDivideDataParallel { ep: 4, etp: 1, stage_ranks: 2 },
            ConfigError::ZeroStageOutOfRange { stage: 4 },
            ConfigError::Fp8NotSupported,
            ConfigError::UnevenStages { reason: "" },
            ConfigError::PartialServer { gpus: 12, server_gpus: 8 },
            ConfigError::SequenceParallelSplit { seq_len: 3, tp: 8, cp: 1 },
            ConfigError::MoeSettingOnDenseModel { field: "etp" },
            ConfigError::FabricTopology { feature: "", needs: "" },
            ConfigError::InstanceDoesNotDivideGpus { instance_gpus: 3, gpus: 8 },
            ConfigError::PdRatioDoesNotDivideGpus { group_gpus: 3, prefill_instances: 1, decode_instances: 2, gpus: 8 },
            ConfigError::KvCacheDoesNotFit { field: "batch", batch: 9, max_batch: 8, free_gb: 1.0, needed_gb: 2.0 },
            ConfigError::FormatNotSupported { field: "precision", format: "fp4" },
            ConfigError::EpDoesNotDivideWidth { ep: 3, width: 8 },
            ConfigError::NvlinkSegment { segment_nodes: 5, domain_servers: 18, job_servers: 32 },
        ]
    }

    #[test]
    fn every_category_is_listed_once() {
        let categories: Vec<&str> = one_of_each().iter().map(ConfigError::category).collect();
        assert_eq!(categories, CATEGORIES);
    }

    #[test]
    fn every_error_has_a_message_of_its_own() {
        // The messages are written by two functions (training layout; serving and settings): none may fall
        // through to the debug form, which names the Rust variant instead of the user's input.
        for e in one_of_each() {
            let (message, debug) = (e.to_string(), format!("{e:?}"));
            assert_ne!(message, debug, "{} has no message", e.category());
        }
        assert_eq!(
            ConfigError::EpDoesNotDivideWidth { ep: 3, width: 8 }.to_string(),
            "ep = 3 must divide a pipeline stage's tp x dp_attention = 8 GPUs"
        );
    }
}
