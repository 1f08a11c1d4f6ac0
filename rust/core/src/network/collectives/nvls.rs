//! NVLink SHARP: the NVSwitches reduce. NVLS inside one domain; NVLSTree across domains (NVLS inside each, a
//! tree between them).

use crate::network::nccl;

use super::{Call, Collective, Interconnect, COLLECTIVE_BASE_LATENCY_S};

/// Tree all-reduce reaches at most 92% of the bus bandwidth (NVIDIA/nccl src/graph/tuning.cc, Tree: 0.92 x busBw).
pub const TREE_BANDWIDTH_FRACTION: f64 = 0.92;
/// Latency NCCL charges an NVLS (NVLink SHARP) collective per NVLink hop (src/graph/tuning.cc, hwLat NVLS: 25 us).
pub const NVLS_LATENCY_S: f64 = 25e-6;
/// Latency NCCL charges an NVLSTree collective per network level (src/graph/tuning.cc, hwLat NET NVLSTree Simple:
/// 20.9 us @5067397c; 14 us at v2.28.7).
pub const NVLS_TREE_NET_LATENCY_S: f64 = 20.9e-6;

impl Interconnect<'_> {
    /// All-reduce bus bandwidth / line rate with NVLink SHARP over `members` GPUs of one domain: no gain at 2-4
    /// GPUs, rising about linearly to the full figure at 8 (8 x H100: ring 370 GB/s; NVLS 370, 420, 440, 460, 480
    /// GB/s at 4-8 GPUs, NVIDIA/nccl #1455, 2024-09); the ring's figure where NVLS is absent.
    fn nvls_efficiency(&self, members: f64) -> f64 {
        let full = self.scale_up.in_switch_allreduce_efficiency;
        let ring = self.scale_up.ring_efficiency;
        if full <= ring {
            return full;
        }
        ring + (full - ring) * ((members - 4.0) / 4.0).clamp(0.0, 1.0)
    }

    /// NVLS all-reduce inside one domain: the switch reduces; bus bandwidth nvls x line rate, NCCL's NVLS latency.
    /// None for another operation, across domains, or where NVLS would not beat the ring's bandwidth.
    pub fn nvls_s(&self, c: &Call) -> Option<f64> {
        if c.op != Collective::AllReduce || c.across.is_some() {
            return None;
        }
        let n = c.group.size as f64;
        let nvls = self.nvls_efficiency(n);
        if nvls <= self.scale_up.ring_efficiency {
            return None;
        }
        Some(
            COLLECTIVE_BASE_LATENCY_S
                + NVLS_LATENCY_S
                + 2.0 * (n - 1.0) / n * c.message_bytes / (self.scale_up.bytes_per_s * nvls),
        )
    }

    /// NVLSTree all-reduce: NVLink SHARP inside each domain, a tree across domains (tuning.cc: base + intra +
    /// 2 log2(nNodes) x inter latency). NCCL offers it wherever the domain has NVLink SHARP, whatever the members
    /// per domain (its gain inside the domain is what shrinks with few members); None inside one domain, with
    /// one member per domain, or without NVLink SHARP.
    pub fn nvls_tree_s(&self, c: &Call) -> Option<f64> {
        if c.op != Collective::AllReduce {
            return None;
        }
        let x = c.across.as_ref()?;
        if !(self.scale_up.in_switch_allreduce_efficiency > 0.0 && x.per_domain > 1.0) {
            return None;
        }
        let nvls = self.nvls_efficiency(x.per_domain);
        let intra_nvls = (x.per_domain - 1.0) / (x.per_domain * self.scale_up.bytes_per_s * nvls);
        let latency_s = x.network_latency_s.max(NVLS_TREE_NET_LATENCY_S * self.network.tail_latency_factor());
        // Two domains exchange their halves directly: NCCL credits NVLSTree twice the network bandwidth there
        // ("Handle 2 node case of NVLSTree", tuning.cc @5067397c; 2 x 8 H100 reach 465-469 GB/s busbw on
        // 8 x 400G, NVIDIA/nccl-tests #309).
        let bytes_per_s = if c.group.domains == 2 { 2.0 * x.domain_bytes_per_s } else { x.domain_bytes_per_s };
        let levels = x.domains.log2().ceil();
        let tree_s_per_byte = 1.0 / (TREE_BANDWIDTH_FRACTION * bytes_per_s);
        // Pipeline fill, as for NCCL's tree (nccl::Tree): one chunk per NVLS channel crosses each of the
        // 2 x levels network hops before the pipeline streams.
        let fill = 2.0
            * levels
            * nccl::nvls_tree_fill_bytes(c.message_bytes, c.group.domains, self.scale_up.compute_capability)
            * tree_s_per_byte;
        Some(
            COLLECTIVE_BASE_LATENCY_S
                + NVLS_LATENCY_S
                + 2.0 * levels * latency_s
                + fill
                + 2.0 * c.message_bytes * intra_nvls.max(tree_s_per_byte),
        )
    }
}
