//! Per-operator selective activation checkpointing, as torchtitan runs it (`selective_ac_option = "op"`): the
//! block's matrix multiplications are counted in call order, every second one is recomputed in the backward
//! pass and the others saved, with the attention kernel's and the reduce-scatters' outputs; everything else
//! (norms, rotary, activation) is recomputed [pytorch/torchtitan parallelisms/parallelize_llama.py `_save_list` and
//! `_custom_policy` at 9dec370 (2024-12), unchanged in torchtitan/distributed/activation_checkpoint.py at b5bcd76c6
//! (2026): "Save all compute/comm ops, except every second mm/linear"]. As torch.compile runs it (torchtitan's
//! runs compile their blocks): PREFER_RECOMPUTE is a recompute (torch/_functorch/partitioners.py `must_recompute`),
//! and the partitioner keeps, and reruns, only what the backward needs, so an output nothing reads back (the MLP's
//! down projection, whose sum is the next block's saved input) is neither kept nor rerun. Korthikanti et al.'s
//! selective recomputation, which reruns no GEMM, is `compute::LayerForward::selective_recompute_s` and `memory`'s
//! default.

use crate::step::compute::{Shard, Throughput};
use crate::step::workload::TransformerSpec;

/// The most matrix multiplications one block calls here (MLA's five, then a gated MLP's three).
const MAX_BLOCK_MMS: usize = 8;

/// One matrix multiplication of a block, per GPU and token.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Mm {
    outputs: f64,
    inputs: f64,
    /// The backward reads its output back (directly, or through what is recomputed from it).
    needed: bool,
}

/// The block's forward matrix multiplications in the order a PyTorch block calls them: the attention's wq, wk,
/// wv, wo (MLA: wq_a and wq_b, or wq, then wkv_a, wkv_b, wo), then in a dense layer the MLP's w1, w3, w2 (a plain
/// MLP's two) [torchtitan models/llama3/model.py: `self.wq(x), self.wk(x), self.wv(x)` ... `self.wo(output)`,
/// `self.w2(F.silu(self.w1(x)) * self.w3(x))`; deepseek_v3/model.py Attention.forward]. Column-parallel GEMMs
/// split their outputs over TP, row-parallel ones their inputs, MLA's down-projections stay whole. The backward
/// needs every projection's output but two: wo's where sequence parallelism's saved reduce-scatter output stands in
/// for it (the residual the MLP's norm reads is rebuilt from that), and the MLP's down projection's. A MoE layer's
/// router and experts are left out: whether torchtitan saves its grouped GEMMs and all-to-alls changed across its
/// versions, so a MoE layer's MLP keeps Korthikanti's rule.
fn block_mms(model: &TransformerSpec, shard: &Shard, dense_mlp: bool) -> ([Mm; MAX_BLOCK_MMS], usize) {
    let (h, tp) = (model.hidden as f64, shard.tp);
    let mut mms = [Mm::default(); MAX_BLOCK_MMS];
    let mut n = 0;
    let mut push = |outputs: f64, inputs: f64, needed: bool| {
        mms[n] = Mm { outputs, inputs, needed };
        n += 1;
    };
    let a = model.attention_shapes();
    match &model.mla {
        None => {
            push(model.q_dim() / tp, h, true);
            push(model.kv_dim() / tp, h, true);
            push(model.kv_dim() / tp, h, true);
        }
        Some(_) => {
            let [(_, q_lora), (_, kv_down)] = a.replicated;
            let [(q_in, q_out), (kv_in, kv_out), _] = a.split_out;
            if q_lora > 0.0 {
                push(q_lora, h, true);
            }
            push(q_out / tp, q_in, true);
            push(kv_down, h, true);
            push(kv_out / tp, kv_in, true);
        }
    }
    push(h, a.out_in / tp, !shard.sequence_parallel);
    if dense_mlp {
        let f = model.ffn_hidden as f64 / tp;
        for _ in 1..model.mlp_matrices() as usize {
            push(f, h, true);
        }
        push(h, f, false);
    }
    (mms, n)
}

/// GEMM time the backward pass spends recomputing one micro-batch's even-numbered matrix multiplications of a
/// block (a dense layer's, or a MoE layer's attention) whose outputs it needs.
pub fn recomputed_mm_s(model: &TransformerSpec, shard: &Shard, tput: &Throughput, dense_mlp: bool) -> f64 {
    let (mms, n) = block_mms(model, shard, dense_mlp);
    let rerun = mms[..n].iter().skip(1).step_by(2).filter(|mm| mm.needed);
    rerun.map(|mm| tput.gemm_time_s(shard.tokens, mm.outputs, mm.inputs)).sum()
}

/// Elements per token a block keeps for its backward pass: its input, the odd-numbered matrix multiplications'
/// outputs it needs, the attention kernel's output and, with sequence parallelism, the attention's reduce-scatter
/// output (in torchtitan's save list). A MoE layer's MLP part is not included (`block_mms`).
pub fn saved_elements_per_token(model: &TransformerSpec, shard: &Shard, dense_mlp: bool) -> f64 {
    let h = model.hidden as f64;
    let (mms, n) = block_mms(model, shard, dense_mlp);
    let saved: f64 = mms[..n].iter().step_by(2).filter(|mm| mm.needed).map(|mm| mm.outputs).sum();
    let attention_output = model.attention_shapes().out_in / shard.tp;
    let reduce_scatter = if shard.sequence_parallel { h / shard.tp } else { 0.0 };
    h / shard.hidden_split() + saved + attention_output + reduce_scatter
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::examples::{deepseek_v3, h100, llama3_70b};
    use crate::software::FrameworkSpec;
    use crate::step::parallelism::{AttentionKernel, Precision};

    /// Llama 3 8B (Meta's model card): 32 layers, 4,096 wide, 32 heads of 128, 8 KV heads, SwiGLU 14,336.
    fn llama3_8b() -> TransformerSpec {
        TransformerSpec { layers: 32, hidden: 4096, heads: 32, ffn_hidden: 14336, ..llama3_70b() }
    }

    fn shard(tp: f64, sequence_parallel: bool) -> Shard {
        Shard { sequence_parallel, ..Shard::plain(8192.0, 8192.0, tp) }
    }

    /// Llama 3 8B's block calls wq, wk, wv, wo, w1, w3, w2; the second, fourth and sixth, wk (4,096 -> 1,024),
    /// wo (4,096 -> 4,096) and w3 (4,096 -> 14,336), are recomputed: 80M of the block's 218M weights, 36.6% of its
    /// forward GEMM FLOPs. With sequence parallelism wo is not: the saved reduce-scatter output rebuilds the
    /// residual its output fed.
    #[test]
    fn llama3_8b_recomputes_wk_wo_and_w3() {
        let tput = Throughput::new(&h100(), Precision::Bf16, AttentionKernel::Best, &FrameworkSpec::kernels_only());
        let s = shard(1.0, false);
        let t = s.tokens;
        let (wk, wo) = (tput.gemm_time_s(t, 1024.0, 4096.0), tput.gemm_time_s(t, 4096.0, 4096.0));
        let w3 = tput.gemm_time_s(t, 14336.0, 4096.0);
        assert!((recomputed_mm_s(&llama3_8b(), &s, &tput, true) - (wk + wo + w3)).abs() < 1e-12);
        let (mms, n) = block_mms(&llama3_8b(), &s, true);
        let all: f64 = mms[..n].iter().map(|mm| mm.outputs * mm.inputs).sum();
        let rerun: f64 = mms[..n].iter().skip(1).step_by(2).map(|mm| mm.outputs * mm.inputs).sum();
        assert_eq!((n, all, rerun), (7, 218_103_808.0, 79_691_776.0));
        let sp = shard(8.0, true);
        let by_hand = tput.gemm_time_s(t, 128.0, 4096.0) + tput.gemm_time_s(t, 1792.0, 4096.0);
        assert!((recomputed_mm_s(&llama3_8b(), &sp, &tput, true) - by_hand).abs() < 1e-12);
    }

    /// Kept per token: the input 4,096, wq's 4,096, wv's 1,024, w1's 14,336 and the attention's output 4,096 =
    /// 27,648 elements (w2's output, which nothing reads back, is not kept; Korthikanti's rule keeps 47,104 here).
    #[test]
    fn llama3_8b_keeps_what_its_backward_reads() {
        assert_eq!(saved_elements_per_token(&llama3_8b(), &shard(1.0, false), true), 27_648.0);
        // TP 8 with sequence parallelism, everything / 8: the input 512, wq's 512, wv's 128, w1's 1,792, the
        // attention's output 512 and its reduce-scatter's 512.
        assert_eq!(saved_elements_per_token(&llama3_8b(), &shard(8.0, true), true), 3_968.0);
    }

    /// DeepSeek-V3's MLA block: wq_a, wq_b, wkv_a, wkv_b, wo; a MoE layer counts its attention only, so wq_b and
    /// wkv_b rerun.
    #[test]
    fn mla_attention_recomputes_the_up_projections() {
        let (mms, n) = block_mms(&deepseek_v3(), &shard(1.0, false), false);
        assert_eq!(n, 5);
        assert_eq!((mms[1].outputs, mms[1].inputs), (128.0 * 192.0, 1536.0));
        assert_eq!((mms[3].outputs, mms[3].inputs), (128.0 * 256.0, 512.0));
    }
}
