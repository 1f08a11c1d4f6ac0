//! How the layers split over the pipeline stages, as Megatron-Core splits them, and the checks that depend on the
//! schedule (vpp) and the optimizer sharding (ZeRO stage).

use crate::error::ConfigError;
use crate::step::workload::TransformerSpec;

use super::Parallelism;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::examples::{llama3_70b, mixtral_8x7b};

    fn par(tp: u32, pp: u32, dp: u32) -> Parallelism {
        Parallelism { tp, pp, dp, ..Parallelism::default() }
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
}
