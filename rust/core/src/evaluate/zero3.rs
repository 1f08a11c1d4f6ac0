//! ZeRO-3 as a framework issues it: how many times a micro-batch gathers the weights, and the host time of
//! collectives issued one tensor at a time through `torch.distributed`'s list API.

use crate::step::parallelism::{Parallelism, Recompute};
use crate::step::workload::TransformerSpec;

use super::stages::{ClusterStage, LayoutStage};

/// DeepSpeed's `stage3_max_reuse_distance` default: a gathered parameter is kept, not released, when the
/// parameters fetched before its next use number fewer than this many elements (deepspeed/runtime/zero/constants.py
/// and stage3.py `_keep_for_later`, v0.3.13).
pub const DEEPSPEED_MAX_REUSE_ELEMENTS: f64 = 1e9;

/// A micro-batch's ZeRO-3 weight all-gathers, as whole passes over the weights: weighted by the tensors' bytes (what
/// the collectives move) and by their count (the collectives issued).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Gathers {
    pub bytes: f64,
    pub count: f64,
}

/// The forward's gather, and the backward's where the weights are resharded after the forward (FSDP
/// reshard_after_forward; ZeRO paper Sec. 7); and, under full recomputation where the framework gathers by tensor
/// from hooks on every submodule, the recomputed forward's: DeepSpeed v0.3.13 stage3.py fetches in each submodule's
/// pre-forward and pre-backward hook and releases after each (l. 1072-1177), so the recomputed forward, which calls
/// the submodules again, gathers again, and the backward does not gather what the recomputation kept
/// (`recompute_regathered`). FSDP unshards a unit before its backward, with the recomputation inside: no more.
pub(super) fn zero3_gathers(c: &ClusterStage, par: &Parallelism) -> Gathers {
    if !par.reshard_after_forward {
        return Gathers { bytes: 1.0, count: 1.0 };
    }
    if !(c.framework.zero3_gather_per_tensor && par.recompute == Recompute::Full) {
        return Gathers { bytes: 2.0, count: 2.0 };
    }
    let again = recompute_regathered(c.model, par.tp as f64);
    Gathers { bytes: 2.0 + again.bytes, count: 2.0 + again.count }
}

/// The share of a layer's weight tensors (by bytes, by count) that a recomputed forward gathers and the backward
/// gathers again: a layer recomputes its fused QKV, output projection, fc1 and fc2 in turn, then runs their backward
/// in reverse, so between tensor k's recomputation and its backward the tensors after it are fetched twice; DeepSpeed
/// keeps tensor k gathered (and the backward skips its gather) when those fetches number fewer elements than
/// `DEEPSPEED_MAX_REUSE_ELEMENTS` (fc2 always: nothing comes between). A MoE model's layers are taken as dense.
fn recompute_regathered(model: &TransformerSpec, tp: f64) -> Gathers {
    let (h, ffn) = (model.hidden as f64, model.ffn_hidden as f64);
    let tensors = [
        h * (model.q_dim() + 2.0 * model.kv_dim()),
        model.q_dim() * h,
        (model.mlp_matrices() - 1.0) * h * ffn,
        ffn * h,
    ]
    .map(|elements| elements / tp);
    let total: f64 = tensors.iter().sum();
    let (mut bytes, mut count, mut later) = (0.0, 0.0, 0.0);
    for elements in tensors.iter().rev() {
        if 2.0 * later >= DEEPSPEED_MAX_REUSE_ELEMENTS {
            bytes += elements / total;
            count += 1.0 / tensors.len() as f64;
        }
        later += elements;
    }
    Gathers { bytes, count }
}

/// Host time of ZeRO-3 collectives issued one tensor at a time through `torch.distributed`'s list API, which the
/// GPU waits for: per tensor and collective, the framework slices the flat buffer once per data-parallel rank in
/// Python and PyTorch copies each rank's slice out of (gather) or into (reduce-scatter) its flat buffer with its own
/// copy (DeepSpeed v0.3.13 partition_parameters.py `_allgather_param`, `_reduce_scatter_gradient`; PyTorch 1.8
/// ProcessGroupNCCL.cpp `allgather`, `reduce_scatter`), about one launched op's host time each. Each gathering
/// micro-batch gathers the weights `gathers` times (`zero3_gathers`, by count) and the gradients are reduce-scattered
/// as the framework does (`FrameworkSpec::weight_gathers_per_step`, `sharded_grad_reductions`); the gathers block and
/// the device is synchronised before each, so the host's time is the GPU's wait.
/// 0 where the framework gathers by flat bucket (`_all_gather_base`, FSDP) or its host time is not known.
pub(super) fn zero3_list_host_s(c: &ClusterStage, s: &LayoutStage, par: &Parallelism, gathers: f64) -> f64 {
    let f = c.framework;
    if par.zero_stage < 3 || !f.zero3_gather_per_tensor {
        return 0.0;
    }
    let (local, lay) = (&s.local, &s.layout);
    let m = lay.micro_batches;
    let collectives = f.weight_gathers_per_step(par.pp, par.reshard_after_forward, m, gathers)
        + f.sharded_grad_reductions(par.zero_stage, par.pp, m) as f64;
    let slices = local.dense_tensors * lay.dp.size as f64 + local.expert_tensors * lay.expert_dp.size as f64;
    f.host_s_per_kernel * collectives * slices
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::examples::{gpt3_175b, llama3_70b};

    #[test]
    fn deepspeed_keeps_what_the_backward_reuses_soon_and_gathers_the_rest_again() {
        // GPT-3 175B, TP 1 (h 12,288, ffn 49,152): QKV 453M, output 151M, fc1 604M, fc2 604M elements. fc2: nothing
        // between, kept; fc1: 2 x 604M = 1.21B after it, gathered again; the output projection and QKV too. By
        // bytes (453 + 151 + 604) / 1,812 = 2/3; by count 3 of 4.
        let g = recompute_regathered(&gpt3_175b(), 1.0);
        assert!((g.bytes - 2.0 / 3.0).abs() < 1e-12 && g.count == 0.75, "{g:?}");
        // Llama 3 70B (QKV 8,192 x 10,240 = 83.9M, output 67.1M, fc1 with gate and up fused 469.8M, fc2 234.9M):
        // fc2 and fc1 (2 x 234.9M = 0.47B after it) kept; the output projection (2 x 704.6M after it) and QKV
        // gathered again: by bytes 151.0M / 855.6M = 3/17, by count 2 of 4.
        let g = recompute_regathered(&llama3_70b(), 1.0);
        assert!((g.bytes - 3.0 / 17.0).abs() < 1e-12 && g.count == 0.5, "{g:?}");
        // At TP 8 the 175B layer's local tensors are an eighth: 2 x (fc1 + fc2) / 8 = 0.30B, all kept.
        assert_eq!(recompute_regathered(&gpt3_175b(), 8.0), Gathers { bytes: 0.0, count: 0.0 });
    }
}
