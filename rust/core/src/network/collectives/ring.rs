//! NCCL's ring: every member in one ring per channel, each step moving a chunk on every edge at once.

use crate::network::nccl;

use super::{Call, Collective, Interconnect};

impl Interconnect<'_> {
    /// Ring all-reduce, reduce-scatter or all-gather at its fastest protocol; None for an all-to-all. Inside a
    /// domain the ring runs at the domain's bus bandwidth; across domains it runs through every member, one ring
    /// per NIC: each NIC carries (n-1)/n of the message per pass whatever the number of domains (bus bandwidth =
    /// the domain's NICs: 2 x 8 H100 with NCCL_ALGO=Ring reach 392 GB/s on 8 x 400G, NVIDIA/nccl-tests #309), and
    /// every one of its steps moves a chunk on every edge at once, so each step lasts as long as the slower of a
    /// network and a domain step (the same curve takes ~157 us from 1 to 8 MiB: 30 steps of ~5.2 us; EFA
    /// all-gathers of whole nodes take 11.3 us a step at 64 GPUs and 10.6 at 256, though 7 steps in 8 stay inside a
    /// node; charging the network only on a chunk's chain of inter-node edges, as NCCL's tuner does, halves that:
    /// docs/design/fidelity-v3.md Sec. 16).
    pub fn ring_s(&self, c: &Call) -> Option<f64> {
        Some(self.ring(c)?.best_time_s(c.message_bytes))
    }

    /// The ring NCCL would run for the call (`ring_s`), to time at any protocol; None for an all-to-all.
    #[inline(always)]
    pub fn ring(&self, c: &Call) -> Option<nccl::Ring> {
        if c.op == Collective::AllToAll {
            return None;
        }
        let n = c.group.size as f64;
        let ring = match &c.across {
            None => nccl::Ring {
                ranks: n,
                steps: c.passes * (n - 1.0),
                channels: self.scale_up.nccl_channels as f64,
                s_per_bus_byte: 1.0 / self.scale_up_bytes_per_s(),
                step: c.scale_up_step,
                compute_capability: self.scale_up.compute_capability,
                nodes: 1,
            },
            Some(x) => {
                let ring_inter = (n - 1.0) / (n * x.domain_bytes_per_s);
                nccl::Ring {
                    ranks: n,
                    steps: c.passes * (n - 1.0),
                    channels: x.channels,
                    s_per_bus_byte: x.intra_s_per_byte.max(ring_inter) * n / (n - 1.0),
                    step: x.network_step.max(&c.scale_up_step),
                    compute_capability: self.scale_up.compute_capability,
                    nodes: c.group.domains,
                }
            }
        };
        Some(ring)
    }
}
