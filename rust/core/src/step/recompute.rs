//! Per-operator selective activation checkpointing, as torchtitan runs it (`selective_ac_option = "op"`): the
//! block's matrix multiplications are counted in call order, every second one is recomputed in the backward
//! pass and the others saved, with the attention kernel's output; everything else (norms, rotary, activation) is
//! recomputed [pytorch/torchtitan parallelisms/parallelize_llama.py `_save_list` and `_custom_policy` at 9dec370
//! (2024-12), unchanged in torchtitan/distributed/activation_checkpoint.py at b5bcd76c6 (2026): "Save all
//! compute/comm ops, except every second mm/linear"; under torch.compile PREFER_RECOMPUTE is a recompute too
//! (torch/_functorch/partitioners.py `must_recompute`)]. Korthikanti et al.'s selective recomputation, which
//! reruns no GEMM, is `compute::LayerForward::selective_recompute_s` and `memory`'s default.

use crate::step::compute::{Shard, Throughput};
use crate::step::workload::TransformerSpec;

/// The most matrix multiplications one block calls here (MLA's five, then a gated MLP's three).
const MAX_BLOCK_MMS: usize = 8;

/// The block's forward matrix multiplications in the order a PyTorch block calls them, per GPU and token as
/// (outputs, inputs): the attention's wq, wk, wv, wo (MLA: wq_a and wq_b, or wq, then wkv_a, wkv_b, wo), then in
/// a dense layer the MLP's w1, w3, w2 (a plain MLP's two) [torchtitan models/llama3/model.py: `self.wq(x),
/// self.wk(x), self.wv(x)` ... `self.wo(output)`, `self.w2(F.silu(self.w1(x)) * self.w3(x))`; deepseek_v3/model.py
/// Attention.forward]. Column-parallel GEMMs split their outputs over TP, row-parallel ones their inputs, MLA's
/// down-projections stay whole. A MoE layer's router and experts are left out: whether torchtitan saves its
/// grouped GEMMs and all-to-alls changed across its versions, so a MoE layer's MLP keeps Korthikanti's rule.
fn block_mms(model: &TransformerSpec, tp: f64, dense_mlp: bool) -> ([(f64, f64); MAX_BLOCK_MMS], usize) {
    let h = model.hidden as f64;
    let mut mms = [(0.0, 0.0); MAX_BLOCK_MMS];
    let mut n = 0;
    let mut push = |outputs: f64, inputs: f64| {
        mms[n] = (outputs, inputs);
        n += 1;
    };
    match &model.mla {
        None => {
            push(model.q_dim() / tp, h);
            push(model.kv_dim() / tp, h);
            push(model.kv_dim() / tp, h);
        }
        Some(_) => {
            let a = model.attention_shapes();
            let [(_, q_lora), (_, kv_down)] = a.replicated;
            let [(q_in, q_out), (kv_in, kv_out), _] = a.split_out;
            if q_lora > 0.0 {
                push(q_lora, h);
            }
            push(q_out / tp, q_in);
            push(kv_down, h);
            push(kv_out / tp, kv_in);
        }
    }
    push(h, model.attention_shapes().out_in / tp);
    if dense_mlp {
        let f = model.ffn_hidden as f64 / tp;
        for _ in 1..model.mlp_matrices() as usize {
            push(f, h);
        }
        push(h, f);
    }
    (mms, n)
}

/// GEMM time the backward pass spends recomputing one micro-batch's even-numbered matrix multiplications of a
/// block (a dense layer's, or a MoE layer's attention).
pub fn recomputed_mm_s(model: &TransformerSpec, shard: &Shard, tput: &Throughput, dense_mlp: bool) -> f64 {
    let (mms, n) = block_mms(model, shard.tp, dense_mlp);
    mms[..n].iter().skip(1).step_by(2).map(|&(outputs, inputs)| tput.gemm_time_s(shard.tokens, outputs, inputs)).sum()
}

/// Elements per token a block keeps for its backward pass: its input, the odd-numbered matrix multiplications'
/// outputs, the attention kernel's output and, with sequence parallelism, the reduce-scatters' outputs after the
/// row-parallel GEMMs (in torchtitan's save list too). A MoE layer's MLP part is not included (`block_mms`).
pub fn saved_elements_per_token(model: &TransformerSpec, shard: &Shard, dense_mlp: bool) -> f64 {
    let h = model.hidden as f64;
    let (mms, n) = block_mms(model, shard.tp, dense_mlp);
    let saved: f64 = mms[..n].iter().step_by(2).map(|&(outputs, _)| outputs).sum();
    let attention_output = model.attention_shapes().out_in / shard.tp;
    let reduce_scatters =
        if shard.sequence_parallel { (1.0 + f64::from(u8::from(dense_mlp))) * h / shard.tp } else { 0.0 };
    h / shard.hidden_split() + saved + attention_output + reduce_scatters
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

    /// Llama 3 8B's block calls wq, wk, wv, wo, w1, w3, w2; the second, fourth and sixth, wk (4,096 -> 1,024), wo (4,096 -> 4,096) and w3 (4,096 -> 14,336), are recomputed.
    #[test]
    fn llama3_8b_recomputes_wk_wo_and_w3() {
        let tput = Throughput::new(&h100(), Precision::Bf16, AttentionKernel::Best, &FrameworkSpec::kernels_only());
        let s = shard(1.0, false);
        let t = s.tokens;
        let by_hand = tput.gemm_time_s(t, 1024.0, 4096.0)
            + tput.gemm_time_s(t, 4096.0, 4096.0)
            + tput.gemm_time_s(t, 14336.0, 4096.0);
        assert!((recomputed_mm_s(&llama3_8b(), &s, &tput, true) - by_hand).abs() < 1e-12);
        // 80 M of the block's 218 M weights: 36.6% of its forward GEMM FLOPs rerun.
        let (mms, n) = block_mms(&llama3_8b(), 1.0, true);
        let all: f64 = mms[..n].iter().map(|(o, i)| o * i).sum();
        let rerun: f64 = mms[..n].iter().skip(1).step_by(2).map(|(o, i)| o * i).sum();
        assert_eq!((n, all, rerun), (7, 218_103_808.0, 79_691_776.0));
    }

    /// Saved per token: the input 4,096, wq's 4,096, wv's 1,024, w1's 14,336, w2's 4,096 and the attention's
    /// output 4,096 = 31,744 elements (Korthikanti's rule keeps 47,104 here: `memory`).
    #[test]
    fn llama3_8b_keeps_the_odd_outputs_and_the_attention_output() {
        assert_eq!(saved_elements_per_token(&llama3_8b(), &shard(1.0, false), true), 31_744.0);
        // TP 8 with sequence parallelism: the input and the two reduce-scatters' outputs 512 each, the split
        // projections / 8, the row-parallel GEMMs' outputs whole: 512 + 512 + 128 + 1,792 + 4,096 + 512 + 1,024.
        assert_eq!(saved_elements_per_token(&llama3_8b(), &shard(8.0, true), true), 8_576.0);
    }

    /// DeepSeek-V3's MLA block: wq_a, wq_b, wkv_a, wkv_b, wo; a MoE layer counts its attention only, so wq_b and
    /// wkv_b rerun.
    #[test]
    fn mla_attention_recomputes_the_up_projections() {
        let (mms, n) = block_mms(&deepseek_v3(), 1.0, false);
        assert_eq!(n, 5);
        assert_eq!(mms[1], (128.0 * 192.0, 1536.0));
        assert_eq!(mms[3], (128.0 * 256.0, 512.0));
    }
}
