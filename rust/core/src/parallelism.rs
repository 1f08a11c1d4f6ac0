//! How the training job is split over the GPUs: the parallel degrees, their validity, and where each
//! communication group lands in the cluster.

use crate::error::ConfigError;
use crate::workload::TransformerSpec;

crate::named_enum! {
    /// What the backward pass recomputes instead of keeping in memory.
    pub enum Recompute {
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
        Bf16 = "bf16",
        /// FP8 matrix multiplications (Transformer Engine); attention and element-wise work stay in BF16.
        Fp8 = "fp8",
    }
}

#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct Parallelism {
    pub tp: u32,
    pub pp: u32,
    pub dp: u32,
    pub cp: u32,
    /// Expert parallelism. With Megatron-Core's MoE parallel folding the expert layers regroup the tp x dp x cp
    /// ranks of a pipeline stage as etp x ep x expert-dp, so ep x etp must divide tp x dp x cp (not dp x cp).
    pub ep: u32,
    /// Expert tensor parallelism (Megatron --expert-tensor-parallel-size); 0 = the attention's tp.
    #[cfg_attr(feature = "python", pyo3(default))]
    pub etp: u32,
    /// Virtual pipeline stages per GPU (interleaved 1F1B); 1 = plain 1F1B.
    pub vpp: u32,
    pub micro_batch: u32,
    /// 0 = plain data parallel, 1 = optimizer states sharded, 2 = + gradients, 3 = + parameters (FSDP).
    pub zero_stage: u32,
    pub recompute: Recompute,
    /// Megatron sequence parallelism inside the TP group (activations of norms and dropout split by tp).
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
        }
    }
}

impl Training {
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_tokens(self.tokens, self.seq_len)?;
        if !(self.moe_imbalance.is_finite() && self.moe_imbalance >= 1.0) {
            return Err(ConfigError::InvalidFigure {
                field: "moe_imbalance",
                value: self.moe_imbalance,
                expected: "a finite number >= 1 (busiest expert rank's tokens / mean)",
            });
        }
        Ok(())
    }
}

/// The tokens of a run are a count: a whole number, and at least one sequence (fewer cannot be trained; a
/// fraction of a token means nothing). Fewer tokens than one optimizer step are allowed: the run is then one step
/// (`steps` rounds up), which is what training that many tokens costs.
pub fn check_tokens(tokens: f64, seq_len: u32) -> Result<(), ConfigError> {
    if tokens.is_finite() && tokens >= seq_len.max(1) as f64 && tokens.fract() == 0.0 {
        return Ok(());
    }
    Err(ConfigError::InvalidFigure {
        field: "tokens",
        value: tokens,
        expected: "a whole number of tokens, at least one sequence (seq_len tokens)",
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
    /// Pipeline sends and receives overlapped with the next micro-batch.
    pub pp: f64,
    /// Expert all-to-all overlapped with compute of another micro-batch (DeepSeek-V3 DualPipe).
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

/// Where one communication group's ranks sit. Ranks are numbered with TP innermost, then CP, DP and PP
/// (Megatron-LM's default order tp-cp-ep-dp-pp); a group of `size` ranks is every `stride`-th rank of a block
/// of `size x stride` consecutive ranks, and the scale-up domains are consecutive blocks of `domain_gpus` GPUs.
/// Groups are alike when they tile the domains; when they do not (a 64-GPU group on 72-GPU NVL72 racks, a
/// stride of 16 on 72), some groups straddle two or more domains, and the worst of them sets the pace of a
/// synchronous step: `per_domain` is the fewest members it has in one domain (that part's NICs carry the
/// group's cross-domain traffic) and `domains` the domains it spans.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroupPlacement {
    pub size: u32,
    pub stride: u32,
    /// Ranks of the group inside one scale-up (NVLink) domain (the fewest, for a straddling group).
    pub per_domain: u32,
    /// Scale-up domains the group spans.
    pub domains: u32,
}

impl GroupPlacement {
    /// Placement of a group kind in a cluster large enough to hold every offset the groups can take.
    pub fn new(size: u32, stride: u32, domain_gpus: u32) -> Self {
        Self::in_cluster(size, stride, domain_gpus, u32::MAX)
    }

    /// Placement of a group kind in a cluster of `gpus` GPUs (only groups that exist can straddle).
    pub fn in_cluster(size: u32, stride: u32, domain_gpus: u32, gpus: u32) -> Self {
        let (n, s, d) = (size.max(1), stride.max(1), domain_gpus.max(1));
        let placed = |per_domain: u32, domains: u32| GroupPlacement { size, stride, per_domain, domains };
        if n == 1 {
            return placed(1, 1);
        }
        if s >= d {
            // Consecutive members are at least a domain apart.
            return placed(1, n);
        }
        let block = s as u64 * n as u64;
        let d64 = d as u64;
        if block <= d64 && d64.is_multiple_of(block) {
            return placed(n, 1);
        }
        if block.is_multiple_of(d64) && d.is_multiple_of(s) {
            // Aligned tiling: every domain holds d / s members of each group it meets.
            return placed(d / s, n / (d / s));
        }
        Self::worst_straddling(n, s, d, block, (gpus as u64 / block).max(1))
    }

    /// The worst group when groups do not tile the domains. Group (k, inner) starts at k x block + inner
    /// (inner < s), at offset q = that mod d in its domain; the offsets repeat after d / gcd(block, d) blocks.
    /// For each offset, count the members in the first, the interior and the last domain the group meets.
    fn worst_straddling(n: u32, s: u32, d: u32, block: u64, blocks: u64) -> Self {
        let period = d as u64 / gcd(block, d as u64);
        let mut worst = GroupPlacement { size: n, stride: s, per_domain: n, domains: 1 };
        for k in 0..blocks.min(period) {
            let base = (k * block % d as u64) as u32;
            for inner in 0..s {
                let q = (base + inner) % d;
                let first = (d - q).div_ceil(s);
                let (fewest, domains) = if first >= n {
                    (n, 1)
                } else {
                    let last_position = q as u64 + s as u64 * (n as u64 - 1);
                    let domains = (last_position / d as u64 + 1) as u32;
                    let last = ((last_position % d as u64) / s as u64 + 1) as u32;
                    let interior = if domains > 2 { d / s } else { n };
                    (first.min(last).min(interior), domains)
                };
                if fewest < worst.per_domain || (fewest == worst.per_domain && domains > worst.domains) {
                    worst.per_domain = fewest;
                    worst.domains = domains;
                }
            }
        }
        worst
    }

    /// Consecutive GPU indices the group covers, first to last member.
    pub fn span_gpus(&self) -> f64 {
        self.stride as f64 * (self.size as f64 - 1.0) + 1.0
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Transformer layers per pipeline stage (all its virtual chunks) for the first stage, a middle stage (the
/// last middle one, which holds the fewest of the model's leading dense layers) and the last stage, with how
/// many of them are dense (non-MoE) layers. With one stage all three are that stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StageSplit {
    pub layers: [u32; 3],
    pub dense: [u32; 3],
}

impl StageSplit {
    pub const FIRST: usize = 0;
    pub const MIDDLE: usize = 1;
    pub const LAST: usize = 2;

    /// Layers on the most loaded stage.
    pub fn busiest(&self) -> u32 {
        self.layers.iter().copied().max().unwrap_or(0)
    }
}

/// Split the layers over the pipeline stages as Megatron-Core does (transformer_layer.py
/// get_transformer_layer_offset and transformer_block.py get_num_layers_to_build, read as find_string ids
/// 414702042 and 66486515857):
/// - explicit first/last stage layers: the rest split evenly over the other stages (with vpp, each stage's
///   layers over its virtual chunks, or as a --pipeline-model-parallel-layout places them);
/// - embedding/loss in the split: layers + 1 (+ 1) split evenly over pp x vpp chunks, the first (last) chunk
///   builds one transformer layer fewer;
/// - otherwise an even split; a count that does not divide is the busiest stage's real count, ceil(L / pp).
pub fn stage_split(model: &TransformerSpec, par: &Parallelism) -> Result<StageSplit, ConfigError> {
    let (l, p, v) = (model.layers, par.pp.max(1), par.vpp.max(1));
    let explicit = par.first_stage_layers.is_some() || par.last_stage_layers.is_some();
    let uneven = |reason: &'static str| Err(ConfigError::UnevenStages { reason });
    if p == 1 {
        if explicit || par.embedding_in_split || par.loss_in_split {
            return uneven("uneven first/last stages need pp > 1");
        }
        return Ok(split_with_dense(model, [l, l, l], 1, 1));
    }
    let layers = if explicit {
        if par.embedding_in_split || par.loss_in_split {
            return uneven("explicit first/last stage layers exclude embedding_in_split and loss_in_split");
        }
        let (f, la) = (par.first_stage_layers.unwrap_or(0), par.last_stage_layers.unwrap_or(0));
        let Some(rest) = l.checked_sub(f).and_then(|r| r.checked_sub(la)) else {
            return uneven("first + last stage layers exceed the model's layers");
        };
        let middle_stages = p - par.first_stage_layers.is_some() as u32 - par.last_stage_layers.is_some() as u32;
        let middle = match middle_stages {
            0 if rest == 0 => 0,
            0 => return uneven("first + last stage layers must equal the layers when pp = 2"),
            m if rest.is_multiple_of(m) => rest / m,
            _ => return uneven("the layers left after the first and last stages do not split evenly"),
        };
        // Per-stage totals are what the step time needs; how a stage's layers fall into its virtual chunks
        // (Megatron-Core's even split, or a --pipeline-model-parallel-layout) does not change them.
        [par.first_stage_layers.unwrap_or(middle), middle, par.last_stage_layers.unwrap_or(middle)]
    } else if par.embedding_in_split || par.loss_in_split {
        let units = l + par.embedding_in_split as u32 + par.loss_in_split as u32;
        if !units.is_multiple_of(p * v) {
            return uneven("layers + embedding + loss do not split evenly over pp x vpp chunks");
        }
        let per_stage = units / (p * v) * v;
        [per_stage - par.embedding_in_split as u32, per_stage, per_stage - par.loss_in_split as u32]
    } else {
        let busiest = l.div_ceil(p);
        [busiest, busiest, busiest]
    };
    Ok(split_with_dense(model, layers, p, v))
}

/// Count the model's leading dense layers on each of the three stages: layers fill the chunks in order
/// (chunk j of stage i holds layers after chunks 0..j of every stage and chunk j of stages 0..i).
fn split_with_dense(model: &TransformerSpec, layers: [u32; 3], p: u32, v: u32) -> StageSplit {
    let lead = model.dense_layers().min(model.layers);
    let mut dense = [0u32; 3];
    if model.moe.is_none() {
        return StageSplit { layers, dense: layers };
    }
    let middle_stage = if p >= 3 { p - 2 } else { 0 };
    let stage_layers = |stage: u32| {
        if stage == 0 {
            layers[StageSplit::FIRST]
        } else if stage == p - 1 {
            layers[StageSplit::LAST]
        } else {
            layers[StageSplit::MIDDLE]
        }
    };
    let mut offset = 0u32;
    'chunks: for _chunk in 0..v {
        for stage in 0..p {
            if offset >= lead {
                break 'chunks;
            }
            let size = stage_layers(stage) / v;
            let here = (offset + size).min(lead) - offset;
            if stage == 0 {
                dense[StageSplit::FIRST] += here;
            }
            if stage == p - 1 {
                dense[StageSplit::LAST] += here;
            }
            if stage == middle_stage && p >= 3 {
                dense[StageSplit::MIDDLE] += here;
            }
            offset += size;
        }
    }
    if p == 1 {
        dense = [lead; 3];
    } else if p == 2 {
        dense[StageSplit::MIDDLE] = dense[StageSplit::FIRST];
    }
    StageSplit { layers, dense }
}

/// What the parallel degrees imply for one configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    pub micro_batches: u32,
    /// Layers held by one GPU (all its virtual stages), on the most loaded pipeline stage.
    pub layers_per_gpu: u32,
    /// Layers of the first, a middle and the last stage.
    pub stages: StageSplit,
    pub tp: GroupPlacement,
    pub cp: GroupPlacement,
    /// Data-parallel replicas of the non-expert weights: dp x cp ranks (CP ranks hold replicas too).
    pub dp: GroupPlacement,
    pub ep: GroupPlacement,
    /// Data-parallel replicas of an expert's weights: tp x dp x cp / (etp x ep) ranks.
    pub expert_dp: GroupPlacement,
    /// Neighbouring pipeline stages.
    pub pp: GroupPlacement,
}

/// Check a configuration's parallelism against the model and the cluster; return its layout or the reason
/// it is impossible. Cheap and allocation-free: sweeps call it for every candidate.
pub fn layout(
    model: &TransformerSpec,
    par: &Parallelism,
    training: &Training,
    gpus: u32,
    domain_gpus: u32,
) -> Result<Layout, ConfigError> {
    let layout = placement(model, par, training, gpus, domain_gpus)?;
    check_schedule(model, par, layout.micro_batches)?;
    Ok(layout)
}

/// Layers one GPU holds (all its virtual stages) on the busiest stage (see `stage_split`; an impossible uneven
/// split counts as an even one here, `placement` rejects it).
pub fn layers_per_gpu(model: &TransformerSpec, par: &Parallelism) -> u32 {
    stage_split(model, par).map_or(model.layers.div_ceil(par.pp.max(1)), |s| s.busiest())
}

/// The checks that depend on the pipeline schedule and optimizer sharding only (vpp, ZeRO stage), given the
/// micro-batch count the other degrees imply.
pub fn check_schedule(model: &TransformerSpec, par: &Parallelism, micro_batches: u32) -> Result<(), ConfigError> {
    if par.vpp == 0 {
        return Err(ConfigError::ZeroDegree { field: "vpp" });
    }
    let stages = par.pp as u64 * par.vpp as u64;
    // The embedding and the loss count as layers of the split when asked to (Megatron-Core).
    let units = model.layers as u64 + par.embedding_in_split as u64 + par.loss_in_split as u64;
    if stages > units && par.first_stage_layers.is_none() && par.last_stage_layers.is_none() {
        return Err(ConfigError::PipelineDeeperThanLayers {
            stages: (stages.min(u32::MAX as u64)) as u32,
            layers: model.layers,
        });
    }
    if par.vpp > 1 && par.pp == 1 {
        return Err(ConfigError::InterleavingNeedsPipeline { vpp: par.vpp });
    }
    check_stage_split(model, par)?;
    if par.vpp > 1 && !micro_batches.is_multiple_of(par.pp) {
        return Err(ConfigError::InterleavingMicroBatches { micro_batches, pp: par.pp });
    }
    if par.zero_stage > 3 {
        return Err(ConfigError::ZeroStageOutOfRange { stage: par.zero_stage });
    }
    Ok(())
}

/// The interleaved schedule gives every GPU `vpp` model chunks of the same number of layers, so the layers must
/// split evenly over pp x vpp virtual stages: Megatron-LM refuses anything else ("Number of layers per pipeline
/// stage must be divisible by number of layers per virtual pipeline stage", megatron/training/arguments.py
/// `validate_args`, NVIDIA/Megatron-LM; search-tool read_file id 44870655626). Megatron-Core's uneven first/last
/// stages (`first_stage_layers`, `last_stage_layers`) and the embedding/loss counted in the split
/// (`embedding_in_split`, `loss_in_split`) are the published ways around it and are checked by `stage_split`.
/// A plain 1F1B pipeline (vpp = 1) keeps the busiest stage's real count (ceil(layers / pp)), and so does
/// `uneven_stages`, for a run known to use uneven stages whose exact split the source does not give.
pub fn check_stage_split(model: &TransformerSpec, par: &Parallelism) -> Result<(), ConfigError> {
    let stages = par.pp.saturating_mul(par.vpp);
    let explicit = par.first_stage_layers.is_some()
        || par.last_stage_layers.is_some()
        || par.embedding_in_split
        || par.loss_in_split;
    if par.vpp > 1 && !par.uneven_stages && !explicit && !model.layers.is_multiple_of(stages) {
        return Err(ConfigError::LayersNotSplitOverStages { layers: model.layers, pp: par.pp, vpp: par.vpp });
    }
    Ok(())
}

/// The checks and group placement that depend on the parallel degrees and micro-batch size (not on vpp or the
/// ZeRO stage); `layers_per_gpu` uses the given vpp.
pub fn placement(
    model: &TransformerSpec,
    par: &Parallelism,
    training: &Training,
    gpus: u32,
    domain_gpus: u32,
) -> Result<Layout, ConfigError> {
    for (field, v) in [
        ("tp", par.tp),
        ("pp", par.pp),
        ("dp", par.dp),
        ("cp", par.cp),
        ("ep", par.ep),
        ("micro_batch", par.micro_batch),
        ("global_batch", training.global_batch),
        ("seq_len", training.seq_len),
        ("gpus", gpus),
    ] {
        if v == 0 {
            return Err(ConfigError::ZeroDegree { field });
        }
    }
    let product = par.tp as u64 * par.pp as u64 * par.dp as u64 * par.cp as u64;
    if product != gpus as u64 {
        return Err(ConfigError::GpuCountMismatch { tp: par.tp, pp: par.pp, dp: par.dp, cp: par.cp, product, gpus });
    }
    if !model.heads.is_multiple_of(par.tp) || !model.kv_heads.is_multiple_of(par.tp) {
        return Err(ConfigError::TpDoesNotDivideHeads { tp: par.tp, heads: model.heads, kv_heads: model.kv_heads });
    }
    let per_step = par.dp as u64 * par.micro_batch as u64;
    if !(training.global_batch as u64).is_multiple_of(per_step) {
        return Err(ConfigError::GlobalBatchNotDivisible {
            global_batch: training.global_batch,
            dp: par.dp,
            micro_batch: par.micro_batch,
        });
    }
    let micro_batches = (training.global_batch as u64 / per_step) as u32;
    if par.cp > 1 && !(training.seq_len as u64).is_multiple_of(2 * par.cp as u64) {
        return Err(ConfigError::CpDoesNotDivideSequence { cp: par.cp, seq_len: training.seq_len });
    }
    match &model.moe {
        None if par.ep > 1 => return Err(ConfigError::ExpertParallelOnDenseModel { ep: par.ep }),
        Some(moe) if moe.experts % par.ep != 0 => {
            return Err(ConfigError::EpDoesNotDivideExperts { ep: par.ep, experts: moe.experts })
        }
        _ => {}
    }
    // MoE parallel folding (Megatron-Core parallel_state, expert rank generator "tp-ep-dp-pp" with the expert
    // TP): the expert layers regroup the stage's tp x dp x cp ranks as etp x ep x expert-dp.
    let etp = par.expert_tp();
    let stage_ranks = par.tp * par.dp * par.cp;
    if etp == 0 || !stage_ranks.is_multiple_of(par.ep * etp) {
        return Err(ConfigError::EpDoesNotDivideDataParallel { ep: par.ep, etp, stage_ranks });
    }
    let stages = stage_split(model, par)?;
    let d = domain_gpus.max(1);
    Ok(Layout {
        micro_batches,
        layers_per_gpu: stages.busiest(),
        stages,
        tp: GroupPlacement::in_cluster(par.tp, 1, d, gpus),
        cp: GroupPlacement::in_cluster(par.cp, par.tp, d, gpus),
        dp: GroupPlacement::in_cluster(par.dp * par.cp, par.tp, d, gpus),
        ep: GroupPlacement::in_cluster(par.ep, etp, d, gpus),
        expert_dp: GroupPlacement::in_cluster(stage_ranks / (par.ep * etp), etp * par.ep, d, gpus),
        pp: GroupPlacement::in_cluster(par.pp, stage_ranks, d, gpus),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::examples::{llama3_70b, mixtral_8x7b};

    fn par(tp: u32, pp: u32, dp: u32) -> Parallelism {
        Parallelism { tp, pp, dp, ..Parallelism::default() }
    }
    fn training(global_batch: u32) -> Training {
        Training { global_batch, seq_len: 8192, ..Training::default() }
    }

    #[test]
    fn placement_on_eight_gpu_servers() {
        // tp=8 fills a server; the DP group (stride 8) then has one rank per server.
        let l = layout(&llama3_70b(), &par(8, 4, 32), &training(1024), 1024, 8).unwrap();
        assert_eq!((l.tp.per_domain, l.tp.domains), (8, 1));
        assert_eq!((l.dp.per_domain, l.dp.domains), (1, 32));
        assert_eq!(l.micro_batches, 32);
        assert_eq!(l.layers_per_gpu, 20);
        // tp=2: four DP ranks per server.
        let l = layout(&llama3_70b(), &par(2, 1, 64), &training(1024), 128, 8).unwrap();
        assert_eq!((l.dp.per_domain, l.dp.domains), (4, 16));
        // An NVL72 domain holds nine tp=8 groups.
        let l = layout(&llama3_70b(), &par(8, 1, 72), &training(576), 576, 72).unwrap();
        assert_eq!((l.dp.per_domain, l.dp.domains), (9, 8));
    }

    #[test]
    fn impossible_parallelism_is_rejected_with_its_reason() {
        let m = llama3_70b();
        let e = layout(&m, &par(8, 4, 32), &training(1024), 512, 8).unwrap_err();
        assert_eq!(e.category(), "gpu_count_mismatch");
        assert!(e.to_string().contains("must equal the GPU count 512"), "{e}");
        // 64 heads and 8 KV heads: tp=16 does not divide the KV heads.
        let e = layout(&m, &par(16, 1, 8), &training(1024), 128, 8).unwrap_err();
        assert_eq!(e.category(), "tp_heads");
        let e = layout(&m, &par(8, 1, 3), &training(1024), 24, 8).unwrap_err();
        assert_eq!(e.category(), "global_batch");
        let e = layout(&m, &par(1, 81, 1), &training(1024), 81, 8).unwrap_err();
        assert_eq!(e.category(), "pp_layers");
        let mut p = par(8, 1, 4);
        p.ep = 2;
        assert_eq!(layout(&m, &p, &training(1024), 32, 8).unwrap_err().category(), "ep_dense");
        let mut p = par(8, 4, 4);
        p.vpp = 2;
        // 1024 / 4 = 256 micro-batches, a multiple of pp = 4: fine; 36 sequences / 4 = 9 are not.
        assert!(layout(&m, &p, &training(1024), 128, 8).is_ok());
        assert_eq!(layout(&m, &p, &training(36), 128, 8).unwrap_err().category(), "vpp_micro_batches");
        let mut p = par(8, 1, 4);
        p.cp = 3;
        p.dp = 1;
        p.tp = 8;
        assert_eq!(layout(&m, &p, &training(12), 24, 8).unwrap_err().category(), "cp_seq_len");
    }

    #[test]
    fn interleaved_stages_must_split_the_layers_evenly() {
        // Llama 3 70B has 80 layers. pp 4 x vpp 3 = 12 virtual stages: 80 / 12 = 6.67 layers each, refused;
        // pp 4 x vpp 5 = 20 stages of 4 layers, fine; plain pp 3 (vpp 1) keeps the uneven model (27 + 27 + 26).
        let m = llama3_70b();
        let mut p = par(8, 4, 32);
        p.vpp = 3;
        let e = layout(&m, &p, &training(1024), 1024, 8).unwrap_err();
        assert_eq!((e.category(), e.field()), ("pp_vpp_layers", "vpp"));
        assert!(e.to_string().contains("80 layers do not split evenly over pp x vpp = 4 x 3 = 12"), "{e}");
        p.vpp = 5;
        assert!(layout(&m, &p, &training(1024), 1024, 8).is_ok());
        assert!(layout(&m, &par(8, 3, 1), &training(3), 24, 8).is_ok());
        // Asked for explicitly, an uneven split is modelled with the busiest stage's real count: 80 layers over 4
        // stages are 20 each, whatever the interleaving (rounding per virtual chunk would say ceil(80 / 12) x 3 =
        // 21).
        p.vpp = 3;
        p.uneven_stages = true;
        assert_eq!(layout(&m, &p, &training(1024), 1024, 8).unwrap().layers_per_gpu, 20);
    }

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

    #[test]
    fn expert_parallelism_reuses_data_parallel_ranks() {
        let m = mixtral_8x7b();
        let mut p = par(2, 1, 16);
        p.ep = 8;
        let l = layout(&m, &p, &training(256), 32, 8).unwrap();
        assert_eq!((l.ep.size, l.ep.stride, l.expert_dp.size), (8, 2, 2));
        p.ep = 16;
        assert_eq!(layout(&m, &p, &training(256), 32, 8).unwrap_err().category(), "ep_experts");
    }

    #[test]
    fn layers_per_gpu_is_the_busiest_stages_real_count() {
        // 126 layers on 16 stages: 14 stages of 8 and 2 of 7, whatever the interleaving (not 9, 12, 14 from
        // rounding up per virtual chunk).
        let mut m = llama3_70b();
        m.layers = 126;
        for vpp in [1, 3, 6, 7] {
            let p = Parallelism { pp: 16, vpp, ..par(8, 16, 1) };
            assert_eq!(layers_per_gpu(&m, &p), 8, "vpp {vpp}");
        }
    }

    #[test]
    fn embedding_and_loss_in_the_split_let_126_layers_run_on_pp16_vpp8() {
        // (126 + 1 + 1) / (16 x 8) = 1 unit per chunk: the first stage builds 8 - 1 = 7 transformer layers (its
        // first chunk is the embedding), the last 7 (its last chunk is the loss), the others 8.
        let mut m = llama3_70b();
        m.layers = 126;
        let mut p = Parallelism { vpp: 8, ..par(8, 16, 8) };
        assert_eq!(check_schedule(&m, &p, 16).unwrap_err().category(), "pp_layers");
        p.embedding_in_split = true;
        p.loss_in_split = true;
        let split = stage_split(&m, &p).unwrap();
        assert_eq!(split.layers, [7, 8, 7]);
        assert!(check_schedule(&m, &p, 16).is_ok());
        let l = layout(&m, &p, &training(128), 1024, 8).unwrap();
        assert_eq!(l.layers_per_gpu, 8);
        // 127 units do not split over 128 chunks.
        p.loss_in_split = false;
        assert_eq!(stage_split(&m, &p).unwrap_err().category(), "uneven_stages");
    }

    #[test]
    fn explicit_first_and_last_stages_split_the_rest_evenly() {
        // DeepSeek-V3's 61 layers on pp 8, vpp 2 as Megatron-Bridge lays them out ('Et*4|(t*4|)*14tmL'): the
        // first stage 4 + 4 = 8, the last 4 + 1 = 5, the six middle stages (61 - 8 - 5) / 6 = 8.
        let mut m = mixtral_8x7b();
        m.layers = 61;
        if let Some(moe) = m.moe.as_mut() {
            moe.first_dense_layers = 3;
        }
        let p = Parallelism { vpp: 2, first_stage_layers: Some(8), last_stage_layers: Some(5), ..par(1, 8, 1) };
        let split = stage_split(&m, &p).unwrap();
        assert_eq!(split.layers, [8, 8, 5]);
        // The 3 leading dense layers all sit in the first stage's first chunk (4 layers).
        assert_eq!(split.dense, [3, 0, 0]);
        // 61 - 7 - 6 = 48 over 6 middle stages = 8.
        let p = Parallelism { last_stage_layers: Some(6), first_stage_layers: Some(7), vpp: 1, ..p };
        assert_eq!(stage_split(&m, &p).unwrap().layers, [7, 8, 6]);
        let bad = Parallelism { first_stage_layers: Some(40), last_stage_layers: Some(30), ..p.clone() };
        assert_eq!(stage_split(&m, &bad).unwrap_err().category(), "uneven_stages");
        // 61 - 6 - 6 = 49 does not split over 6 middle stages.
        let odd = Parallelism { first_stage_layers: Some(6), ..p };
        assert_eq!(stage_split(&m, &odd).unwrap_err().category(), "uneven_stages");
    }

    #[test]
    fn moe_parallel_folding_accepts_ep_beyond_dp() {
        // Megatron-Core MoE parallel folding: TP 2 x DP 16 = 32 ranks regrouped as ETP 1 x EP 32.
        let mut m = mixtral_8x7b();
        if let Some(moe) = m.moe.as_mut() {
            moe.experts = 64;
        }
        let mut p = Parallelism { ep: 32, etp: 1, ..par(2, 1, 16) };
        let l = layout(&m, &p, &training(256), 32, 8).unwrap();
        assert_eq!((l.ep.size, l.ep.stride, l.ep.per_domain, l.ep.domains), (32, 1, 8, 4));
        assert_eq!(l.expert_dp.size, 1);
        // With the expert TP equal to the attention's (the default), 32 x 2 = 64 ranks do not fit in 32.
        p.etp = 0;
        assert_eq!(layout(&m, &p, &training(256), 32, 8).unwrap_err().category(), "ep_dp");
    }

    #[test]
    fn groups_that_do_not_tile_a_rack_straddle_it() {
        // EP 64 of consecutive ranks on NVL72 racks: group 2 is ranks 64..127, 8 on rack 1 and 56 on rack 2;
        // its 8 ranks carry the cross-rack traffic.
        let g = GroupPlacement::in_cluster(64, 1, 72, 256);
        assert_eq!((g.per_domain, g.domains), (8, 2));
        // With only 64 GPUs the one group sits in one rack.
        assert_eq!(GroupPlacement::in_cluster(64, 1, 72, 64).domains, 1);
        // DP 32 at stride 8 (tp 8) on 256 GPUs: members at 8 i + inner, 9 per rack, the 4th rack gets 5.
        let g = GroupPlacement::in_cluster(32, 8, 72, 256);
        assert_eq!((g.per_domain, g.domains), (5, 4));
        // Groups that tile the rack are unchanged: nine TP-8 groups per rack, DP 72 at stride 8 is 9 per rack.
        assert_eq!(GroupPlacement::in_cluster(8, 1, 72, 576).domains, 1);
        let g = GroupPlacement::in_cluster(72, 8, 72, 576);
        assert_eq!((g.per_domain, g.domains), (9, 8));
    }
}
