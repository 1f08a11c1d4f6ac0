//! NCCL's CollNet: the network's switches reduce (SHARP).

use super::{Call, Collective, Interconnect, COLLECTIVE_BASE_LATENCY_S};

impl Interconnect<'_> {
    /// In-network reduction (SHARP), all-reduce only: reduce-scatter and all-gather move (n-1)/n of the message
    /// per NIC on a ring already, the least they can. The switches reduce, bus bandwidth sharp x line rate, one
    /// stream per group up each leaf (NCCL CollNet, src/graph/tuning.cc @5067397c). None without SHARP, inside one
    /// domain, or when the leaf cannot reduce for this group alongside the others (`Network::in_network_bandwidth_factor`).
    pub fn collnet_s(&self, c: &Call) -> Option<f64> {
        let sharp = self.fabric.in_network_reduction_efficiency;
        if c.op != Collective::AllReduce || sharp <= 0.0 {
            return None;
        }
        let x = c.across.as_ref()?;
        let factor = self.network.in_network_bandwidth_factor(c.group)?;
        let sharp_bytes_per_s =
            x.per_domain * self.fabric.link_bytes_per_s * self.fabric.ports_per_gpu() * sharp * factor;
        Some(
            COLLECTIVE_BASE_LATENCY_S
                + 2.0 * ((x.per_domain - 1.0) * self.scale_up.step_latency_s + x.network_latency_s)
                + 2.0 * c.message_bytes * x.intra_s_per_byte.max((x.domains - 1.0) / (x.domains * sharp_bytes_per_s)),
        )
    }
}
