//! NCCL's tree all-reduce across domains: a chain inside each domain, a double binary tree between them.

use crate::network::nccl;

use super::{Call, Collective, Interconnect};

impl Interconnect<'_> {
    /// Tree all-reduce, each protocol at NCCL's bandwidth and latency (`nccl::Tree`); None for another
    /// operation or a group inside one domain (NCCL's tree needs more than one node).
    pub fn tree_s(&self, c: &Call) -> Option<f64> {
        Some(self.tree(c)?.best_time_s(c.message_bytes))
    }

    /// The tree NCCL would run for the call (`tree_s`), to time at any protocol.
    #[inline(always)]
    pub fn tree(&self, c: &Call) -> Option<nccl::Tree> {
        if c.op != Collective::AllReduce {
            return None;
        }
        let x = c.across.as_ref()?;
        let tree = nccl::Tree {
            per_domain: x.per_domain,
            domains: x.domains,
            intra_s_per_byte: x.intra_s_per_byte,
            domain_bytes_per_s: x.domain_bytes_per_s,
            channels: x.channels,
            intra_step: c.scale_up_step,
            net_step: x.network_step,
            compute_capability: self.scale_up.compute_capability,
        };
        Some(tree)
    }
}
