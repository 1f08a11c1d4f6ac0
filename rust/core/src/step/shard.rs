//! The shape of one GPU's share of a layer's work: the tokens of one micro-batch it processes and how the layer
//! is split over the parallel degrees (`Shard`), what `compute` and the step's collectives are timed on.

use crate::step::parallelism::{Parallelism, Training};

/// Shape of the work on one GPU: tokens of one micro-batch it processes and the TP split.
#[derive(Clone, Copy, Debug)]
pub struct Shard {
    /// Tokens of one micro-batch on this GPU: micro_batch x seq_len / cp.
    pub tokens: f64,
    pub seq_len: f64,
    /// Sequences per micro-batch.
    pub micro_batch: f64,
    pub cp: f64,
    pub tp: f64,
    pub ep: f64,
    /// Expert tensor parallelism (the routed experts' GEMMs split over etp ranks).
    pub etp: f64,
    /// Busiest expert rank's routed tokens over the mean.
    pub imbalance: f64,
    /// Norms and residuals split over TP ranks (sequence parallelism) rather than replicated.
    pub sequence_parallel: bool,
    pub flash_attention: bool,
}

impl Shard {
    pub fn new(par: &Parallelism, training: &Training) -> Self {
        Shard {
            tokens: par.micro_batch as f64 * training.seq_len as f64 / par.cp as f64,
            seq_len: training.seq_len as f64,
            micro_batch: par.micro_batch as f64,
            cp: par.cp as f64,
            tp: par.tp as f64,
            ep: par.ep as f64,
            etp: par.expert_tp() as f64,
            imbalance: training.moe_imbalance,
            sequence_parallel: par.sequence_parallel && par.tp > 1,
            flash_attention: training.flash_attention,
        }
    }
    /// One sequence of `seq_len` tokens, `tokens` of them in the micro-batch, split `tp` ways, with fused attention
    /// and no context, expert or sequence parallelism and an even expert load: the serving engine's step and the
    /// core's own tests, which override what differs (`Shard { cp: 2.0, ..Shard::plain(...) }`).
    pub fn plain(tokens: f64, seq_len: f64, tp: f64) -> Self {
        Shard {
            tokens,
            seq_len,
            micro_batch: 1.0,
            cp: 1.0,
            tp,
            ep: 1.0,
            etp: 1.0,
            imbalance: 1.0,
            sequence_parallel: false,
            flash_attention: true,
        }
    }
    /// The sequence length one fused attention call sees: the whole sequence, or with context parallelism one
    /// rank's s / cp tokens, which each step of the ring attends to one chunk of keys with (Megatron-LM / Transformer
    /// Engine's and PyTorch's load-balanced ring attention: every step's call is (s / cp)^2 / 2 causal work).
    pub fn attention_seq(&self) -> f64 {
        self.seq_len / self.cp
    }
    /// Heads one attention call runs on this GPU, times the sequences it batches: what fills the GPU's SMs.
    pub fn attention_heads(&self, heads: f64) -> f64 {
        heads / self.tp * self.micro_batch
    }
    /// Divisor of the hidden-size element-wise work: tp with sequence parallelism, else 1 (replicated).
    pub fn hidden_split(&self) -> f64 {
        if self.sequence_parallel {
            self.tp
        } else {
            1.0
        }
    }
}
