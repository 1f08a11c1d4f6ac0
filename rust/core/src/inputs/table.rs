//! The parameter table and the list of named enums (see the module doc of `inputs`). Rows are in the order of the
//! result's input columns; the parameters that are not columns sit beside their kin. A row: its name, kind, group
//! and one-line meaning, then what a missing value means (`default`, TOML, or `means`), its bounds, the surfaces
//! that take it, where it lands in the core (`core`) and where it sits in a scenario file.

use super::surface::{API, AXIS, BOM, COLUMN, FLAG, ROI, SERVE};
use super::Choices::{Axes, Objectives};
use super::Form::{Counts, Degrees, Topologies};
use super::Group::{Cluster, Cost, Parallelism, Serving, Software, Sweep, Workload};
use super::Missing::{Default, Required};
use super::ParamKind::{Count, Enum, Flag, Float, Id, Level, Model, Overlap, Prices, Ratio, Tokens};
use super::{input, set, Bounds, Choices, Core, Form, Group, Param, Table};
use crate::names::EnumInfo;
use crate::prices::CostMode;
use crate::serve::{AttentionQuantization, KvAdmission, KvCacheDtype, Quantization, ServingMode};
use crate::step::modules::RecomputeModule;
use crate::step::parallelism::{AttentionKernel, Dispatcher, GradDtype, Precision, Recompute};

pub use crate::bounds::MAX_COUNT;

/// A count: 1 to `MAX_COUNT`.
const POSITIVE_COUNT: Bounds = Bounds { ge: Some(1.0), le: Some(MAX_COUNT), ..Bounds::NONE };
/// A count that may be 0.
const SIZE: Bounds = Bounds { ge: Some(0.0), le: Some(MAX_COUNT), ..Bounds::NONE };
const POSITIVE: Bounds = Bounds { gt: Some(0.0), ..Bounds::NONE };
const AT_LEAST_ONE: Bounds = Bounds { ge: Some(1.0), ..Bounds::NONE };
const LEVEL: Bounds = Bounds { gt: Some(0.0), lt: Some(1.0), ..Bounds::NONE };
const SHARE: Bounds = Bounds { ge: Some(0.0), le: Some(1.0), ..Bounds::NONE };
const ZERO_STAGE: Bounds = Bounds { ge: Some(0.0), le: Some(3.0), ..Bounds::NONE };
/// A coefficient of variation of a length.
const LENGTH_CV: Bounds = Bounds { ge: Some(0.0), le: Some(10.0), ..Bounds::NONE };

/// A keyword of `scalefront.evaluate` and an option of `scalefront eval`.
const EVAL: u8 = API | FLAG;
const LIST: Form = Form::List { min: 1, max: 0 };

const fn count(name: &'static str, group: Group, doc: &'static str) -> Param {
    input(name, Count, group, doc).bounds(POSITIVE_COUNT)
}

const fn size(name: &'static str, group: Group, doc: &'static str) -> Param {
    input(name, Count, group, doc).bounds(SIZE)
}

const fn flag(name: &'static str, group: Group, doc: &'static str) -> Param {
    input(name, Flag, group, doc)
}

const fn choice(name: &'static str, group: Group, names: EnumInfo, doc: &'static str) -> Param {
    Param { choices: Choices::Enum(names), ..input(name, Enum, group, doc) }
}

const fn id(name: &'static str, group: Group, catalog: &'static str, doc: &'static str) -> Param {
    Param { catalog, ..input(name, Id, group, doc) }
}

const fn names(name: &'static str, choices: Choices, doc: &'static str) -> Param {
    Param { choices, ..input(name, Enum, Sweep, doc) }
}

const fn par(field: &'static str) -> Core {
    Core::Parallelism(field)
}

const fn training(field: &'static str) -> Core {
    Core::Training(field)
}

/// Every input parameter, in the order of the result's input columns.
pub const PARAMS: &[Param] = &[
    input("model", Model, Workload, "catalog model id, or a model TOML file")
        .default("\"llama3-70b\"")
        .on(SERVE | EVAL | COLUMN)
        .scenario(Table::Workload, Form::One, Required),
    id("gpu", Cluster, "gpus", "GPU id").default("\"h100-sxm\"").on(SERVE | EVAL | BOM | COLUMN | AXIS).scenario(
        Table::Cluster,
        LIST,
        Required,
    ),
    count("gpus", Cluster, "number of GPUs")
        .unit("GPUs")
        .default("1024")
        .on(SERVE | EVAL | BOM | COLUMN | AXIS | ROI)
        .scenario(Table::Cluster, Counts, Required),
    id("scale_up", Cluster, "scale_up", "scale-up (NVLink) domain id; a GPU joins only domains of its own link")
        .means("the GPU's")
        .on(SERVE | EVAL | BOM | COLUMN | AXIS)
        .scenario(Table::Cluster, LIST, Default("[\"default\"]")),
    id("fabric", Cluster, "fabrics", "scale-out fabric id: FABRIC, FABRIC@MODE, FABRIC@VARIANT or FABRIC@MODE@VARIANT")
        .default("\"ib-ndr\"")
        .on(SERVE | EVAL | BOM | COLUMN | AXIS | ROI)
        .scenario(Table::Cluster, LIST, Required),
    id(
        "compare_with",
        Cluster,
        "fabrics",
        "the designs roi compares fabric A with: fabric ids, FABRIC@MODE or FABRIC@MODE@VARIANT, each a column of its verdict",
    )
    .means("roi's --b, roce-400g")
    .on(ROI)
    .scenario(Table::Cluster, Form::List { min: 0, max: 0 }, Default("[]")),
    id("topology", Cluster, "topologies", "topology id")
        .default("\"rail-fat-tree\"")
        .on(SERVE | EVAL | BOM | COLUMN | AXIS)
        .scenario(Table::Cluster, Topologies, Required),
    input("oversubscription", Ratio, Cluster, "leaf downlink / uplink bandwidth (1 = non-blocking)")
        .bounds(AT_LEAST_ONE)
        .means("the topology's")
        .on(SERVE | EVAL | BOM | COLUMN),
    input(
        "placement",
        Float,
        Cluster,
        "share of leaf-local collective traffic a fragmented (multi-tenant) placement sends off-leaf; 0 = contiguous",
    )
    .unit("fraction")
    .bounds(SHARE)
    .default("0.0")
    .on(EVAL | COLUMN)
    .core(training("placement"))
    .shared(Table::Cluster),
    size(
        "nvlink_segment_nodes",
        Cluster,
        "servers kept together in one NVLink domain (Slurm --segment; NVL72: 16 or 18); 0 = domains filled in order",
    )
    .default("0")
    .on(EVAL | COLUMN)
    .core(training("nvlink_segment_nodes"))
    .shared(Table::Cluster),
    count("tp", Parallelism, "tensor-parallel degree")
        .default("8")
        .serving("tp")
        .on(SERVE | EVAL | COLUMN | AXIS)
        .core(par("tp"))
        .scenario(Table::Parallelism, Degrees, Default("\"search\"")),
    count("pp", Parallelism, "pipeline-parallel degree")
        .default("1")
        .serving("pp")
        .on(SERVE | EVAL | COLUMN | AXIS)
        .core(par("pp"))
        .scenario(Table::Parallelism, Degrees, Default("\"search\"")),
    count("dp", Parallelism, "data-parallel degree")
        .means("gpus / (tp x pp x cp)")
        .on(EVAL | COLUMN | AXIS)
        .core(par("dp"))
        .scenario(Table::Parallelism, Degrees, Default("\"search\"")),
    count("cp", Parallelism, "context-parallel degree").default("1").on(EVAL | COLUMN | AXIS).core(par("cp")).scenario(
        Table::Parallelism,
        Degrees,
        Default("[1]"),
    ),
    count("ep", Parallelism, "expert-parallel degree (ep x etp divides tp x dp x cp)")
        .default("1")
        .serving("ep")
        .on(SERVE | EVAL | COLUMN | AXIS)
        .core(par("ep"))
        .scenario(Table::Parallelism, Degrees, Default("[1]")),
    size("etp", Parallelism, "expert tensor-parallel degree")
        .means("tp; 0 means tp too")
        .on(EVAL | COLUMN)
        .core(par("etp"))
        .shared(Table::Parallelism),
    count("vpp", Parallelism, "virtual pipeline stages per GPU (interleaved schedule)")
        .default("1")
        .on(EVAL | COLUMN | AXIS)
        .core(par("vpp"))
        .swept(Table::Parallelism),
    count("micro_batch", Parallelism, "sequences per micro-batch")
        .unit("sequences")
        .default("1")
        .on(EVAL | COLUMN | AXIS)
        .core(par("micro_batch"))
        .swept(Table::Parallelism),
    count("global_batch", Workload, "sequences per optimizer step")
        .unit("sequences")
        .means("~4M tokens")
        .on(EVAL | COLUMN)
        .core(training("global_batch"))
        .scenario(Table::Workload, Form::One, Required),
    count("seq_len", Workload, "tokens per sequence")
        .unit("tokens")
        .means("the model's")
        .on(EVAL | COLUMN)
        .core(training("seq_len"))
        .shared(Table::Workload),
    choice("recompute", Parallelism, Recompute::INFO, "activation recomputation")
        .default("\"selective\"")
        .on(EVAL | COLUMN | AXIS)
        .core(par("recompute"))
        .swept(Table::Parallelism),
    set("recompute_modules", Parallelism, RecomputeModule::INFO, "the submodules selective recomputation reruns, by \
         Megatron-Core's names (empty: the framework's own rule)")
    .default("\"\"")
    .on(EVAL | COLUMN)
    .core(training("recompute_modules"))
    .shared(Table::Parallelism),
    input("zero", Count, Parallelism, "ZeRO stage (3 = FSDP)")
        .bounds(ZERO_STAGE)
        .default("1")
        .on(EVAL | COLUMN | AXIS)
        .core(par("zero_stage"))
        .swept(Table::Parallelism),
    flag("sequence_parallel", Parallelism, "Megatron sequence parallelism inside the TP group")
        .default("true")
        .on(EVAL | COLUMN | AXIS)
        .core(par("sequence_parallel"))
        .swept(Table::Parallelism),
    input(
        "overlap",
        Overlap,
        Parallelism,
        "which communication may hide behind compute: none, dp, full, a fraction for all, or dp=0.9,tp=0.5,pp=0,ep=0",
    )
    .default("\"dp\"")
    .on(EVAL | COLUMN | AXIS)
    .swept(Table::Parallelism),
    flag("uneven_stages", Parallelism, "accept layers that do not split evenly over pp x vpp virtual stages")
        .default("false")
        .on(API)
        .core(par("uneven_stages")),
    size("first_stage_layers", Parallelism, "transformer layers on the first pipeline stage")
        .unit("layers")
        .means("an even split")
        .on(EVAL)
        .core(par("first_stage_layers"))
        .shared(Table::Parallelism),
    size("last_stage_layers", Parallelism, "transformer layers on the last pipeline stage")
        .unit("layers")
        .means("an even split")
        .on(EVAL)
        .core(par("last_stage_layers"))
        .shared(Table::Parallelism),
    flag("embedding_in_split", Parallelism, "count the embedding as a layer of the pipeline split")
        .default("false")
        .on(EVAL)
        .core(par("embedding_in_split"))
        .shared(Table::Parallelism),
    flag("loss_in_split", Parallelism, "count the loss as a layer of the pipeline split")
        .default("false")
        .on(EVAL)
        .core(par("loss_in_split"))
        .shared(Table::Parallelism),
    flag("reshard_after_forward", Parallelism, "free gathered parameters after each forward pass (ZeRO-3; FSDP's)")
        .default("true")
        .on(EVAL)
        .core(par("reshard_after_forward"))
        .shared(Table::Parallelism),
    id("framework", Software, "frameworks", "training framework whose software terms apply (data/frameworks.toml)")
        .default("\"megatron-core\"")
        .on(EVAL | COLUMN | AXIS)
        .scenario(Table::Workload, LIST, Default("[\"megatron-core\"]")),
    choice("precision", Workload, Precision::INFO, "GEMM precision")
        .default("\"bf16\"")
        .on(EVAL | COLUMN | AXIS)
        .core(training("precision"))
        .swept(Table::Workload),
    flag("flash_attention", Workload, "fused attention that never stores the scores")
        .default("true")
        .on(EVAL | COLUMN)
        .core(training("flash_attention"))
        .shared(Table::Workload),
    choice("attention_kernel", Software, AttentionKernel::INFO, "fused attention kernel: the GPU's best or FA2")
        .default("\"best\"")
        .on(EVAL)
        .core(training("attention_kernel")),
    choice("grad_reduce_dtype", Software, GradDtype::INFO, "gradient accumulation and reduction format")
        .default("\"fp32\"")
        .on(EVAL | COLUMN)
        .core(training("grad_reduce_dtype"))
        .shared(Table::Workload),
    choice("moe_dispatcher", Software, Dispatcher::INFO, "MoE token dispatcher")
        .default("\"alltoall\"")
        .on(EVAL | COLUMN)
        .core(training("moe_dispatcher"))
        .shared(Table::Workload),
    input("moe_imbalance", Ratio, Software, "busiest expert rank's routed tokens / mean (1 = balanced)")
        .bounds(AT_LEAST_ONE)
        .default("1.0")
        .serving("moe_imbalance")
        .on(SERVE | EVAL | COLUMN)
        .core(training("moe_imbalance"))
        .shared(Table::Workload),
    flag("fp8_param_gather", Software, "FP8 training all-gathers its sharded weights in FP8 (FSDP float8 all-gather)")
        .default("false")
        .on(EVAL)
        .core(training("fp8_param_gather"))
        .shared(Table::Workload),
    flag("gradient_accumulation_fusion", Software, "GEMMs add each weight gradient into the main gradient (apex, TE)")
        .default("true")
        .on(EVAL)
        .core(training("gradient_accumulation_fusion"))
        .shared(Table::Workload),
    flag("tp_async_allreduce", Software, "the framework's asynchronous TP backward all-reduce (Megatron-LM 2021-09+)")
        .default("true")
        .on(EVAL)
        .core(training("tp_async_allreduce"))
        .shared(Table::Workload),
    size("mtp_layers", Software, "multi-token-prediction modules (DeepSeek-V3: 1)")
        .default("0")
        .on(EVAL)
        .core(training("mtp_layers"))
        .shared(Table::Workload),
    input("tokens", Tokens, Workload, "training tokens of the run, a whole number (1e12, 15T, 300B)")
        .unit("tokens")
        .bounds(POSITIVE)
        .default("1e12")
        .on(EVAL | COLUMN)
        .core(training("tokens"))
        .scenario(Table::Workload, Form::One, Required),
    choice("cost_mode", Cost, CostMode::INFO, "which cost cost_to_train_usd reports")
        .default("\"rent\"")
        .on(SERVE | EVAL | COLUMN | ROI)
        .shared(Table::Economics)
        .scenario_key("mode"),
    input("interval", Level, Software, "nominal coverage of the _lo/_hi prediction intervals")
        .unit("fraction")
        .bounds(LEVEL)
        .means("data/model_error.toml's, 0.9")
        .on(EVAL | COLUMN)
        .shared(Table::Workload),
    id("reliability", Cost, "reliability", "failure profile of data/reliability.toml (perfect: no failures)")
        .default("\"default\"")
        .on(API)
        .shared(Table::Economics),
    input(
        "prices",
        Prices,
        Cost,
        "price overrides by catalog field: rent_usd_per_gpu_hour, switch_usd, usd_per_kwh, ...",
    )
    .default("{}")
    .on(SERVE | EVAL | BOM | ROI)
    .scenario(Table::Economics, Form::Prices, Default("{}")),
    count("dp_attention", Serving, "attention data parallelism: attention replicas per pipeline stage, tp GPUs each")
        .default("1")
        .serving("dp_attention")
        .on(SERVE),
    choice("mode", Serving, ServingMode::INFO, "prefill and decode co-located or disaggregated")
        .default("\"colocated\"")
        .serving("mode")
        .on(SERVE),
    size(
        "prefill_instances",
        Serving,
        "disaggregated: prefill instances per decode_instances (P of P:D; 0: elsewhere)",
    )
    .default("1")
    .serving("prefill_instances")
    .on(SERVE),
    size("decode_instances", Serving, "disaggregated: decode instances per prefill_instances (D of P:D; 0: elsewhere)")
        .default("1")
        .serving("decode_instances")
        .on(SERVE),
    size("prefill_tp", Serving, "disaggregated: the prefill instances' tp; 0 = the decode instances'")
        .default("0")
        .serving("prefill_tp")
        .on(SERVE),
    size("prefill_ep", Serving, "disaggregated: the prefill instances' ep; 0 = the decode instances'")
        .default("0")
        .serving("prefill_ep")
        .on(SERVE),
    size("prefill_dp_attention", Serving, "disaggregated: the prefill instances' dp_attention; 0 = the decode's")
        .default("0")
        .serving("prefill_dp_attention")
        .on(SERVE),
    size("batch", Serving, "concurrent sequences per (decode) instance; 0 = as many as the KV cache holds")
        .unit("sequences")
        .default("0")
        .serving("batch")
        .on(SERVE),
    count("max_num_tokens", Serving, "tokens one step of an attention replica processes at most (prefill chunk)")
        .unit("tokens")
        .default("8192")
        .serving("max_num_tokens")
        .on(SERVE),
    input("input_tokens", Float, Serving, "mean prompt length")
        .unit("tokens")
        .bounds(AT_LEAST_ONE)
        .default("1000.0")
        .serving("input_tokens")
        .on(SERVE),
    input("output_tokens", Float, Serving, "mean output length (generated tokens)")
        .unit("tokens")
        .bounds(AT_LEAST_ONE)
        .default("1000.0")
        .serving("output_tokens")
        .on(SERVE),
    input("input_tokens_cv", Float, Serving, "prompt-length spread (cv): p99s, length-biased attention")
        .bounds(LENGTH_CV)
        .default("0.0")
        .serving("input_tokens_cv")
        .on(SERVE),
    input("output_tokens_cv", Float, Serving, "output-length spread (cv): p99s, length-biased context")
        .bounds(LENGTH_CV)
        .default("0.0")
        .serving("output_tokens_cv")
        .on(SERVE),
    choice("quantization", Serving, Quantization::INFO, "format of the weights and GEMMs (fp4: NVFP4, Blackwell)")
        .default("\"fp8\"")
        .serving("quantization")
        .on(SERVE),
    choice(
        "attention_quantization",
        Serving,
        AttentionQuantization::INFO,
        "format of the attention projections where the checkpoint keeps them apart (same: as quantization)",
    )
    .default("\"same\"")
    .serving("attention_quantization")
    .on(SERVE),
    choice("kv_cache_dtype", Serving, KvCacheDtype::INFO, "format of the KV cache")
        .default("\"fp8\"")
        .serving("kv_cache_dtype")
        .on(SERVE),
    input("kv_cache_fraction", Float, Serving, "share of the HBM left after weights and activations for the KV cache")
        .unit("fraction")
        .bounds(Bounds { gt: Some(0.0), le: Some(1.0), ..Bounds::NONE })
        .default("0.9")
        .serving("kv_cache_fraction")
        .on(SERVE),
    count("kv_block_tokens", Serving, "tokens per KV-cache page")
        .unit("tokens")
        .default("32")
        .serving("kv_block_tokens")
        .on(SERVE),
    choice("kv_admission", Serving, KvAdmission::INFO, "how sequences claim the KV cache: pages on demand or reserved")
        .default("\"on-demand\"")
        .serving("kv_admission")
        .on(SERVE),
    size("redundant_experts", Serving, "extra expert replicas for load balancing over the EP ranks (DeepSeek's EPLB)")
        .default("0")
        .serving("redundant_experts")
        .on(SERVE),
    flag("two_batch_overlap", Serving, "two micro-batches a step, one's MoE all-to-all behind the other's compute")
        .default("false")
        .serving("two_batch_overlap")
        .on(SERVE),
    size("requests", Serving, "a finite job of this many requests at once (job_* metrics); 0 = steady state only")
        .unit("requests")
        .default("0")
        .serving("requests")
        .on(SERVE),
    size("max_output_tokens", Serving, "the engine's cap on a request's output, bounding a job's drain; 0 = none")
        .unit("tokens")
        .default("0")
        .serving("max_output_tokens")
        .on(SERVE),
    size("training_months", Cost, "months of the life the cluster trains before it serves the rest (roi)")
        .unit("months")
        .default("12")
        .shared(Table::Lifecycle),
    input("tpot_slo_s", Float, Cost, "the serving months' bound on time per output token (roi's lifecycle)")
        .unit("s")
        .bounds(POSITIVE)
        .default("0.05")
        .shared(Table::Lifecycle),
    input("ttft_slo_s", Float, Cost, "the serving months' bound on time to first token (roi's lifecycle)")
        .unit("s")
        .bounds(POSITIVE)
        .means("no bound")
        .shared(Table::Lifecycle),
    names("objectives", Objectives, "what each frontier optimises: two or three objectives (mfu maximised)")
        .scenario(
            Table::Objectives,
            Form::List { min: 2, max: 3 },
            Default("[\"time_to_train_days\", \"cost_to_train_usd\"]"),
        )
        .scenario_key("minimize"),
    names("group_by", Axes, "axes to compute one frontier per value of").scenario(
        Table::Objectives,
        LIST,
        Default("[\"fabric\"]"),
    ),
];
