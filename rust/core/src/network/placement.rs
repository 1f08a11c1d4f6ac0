//! Where a communication group's members sit on the cluster: how many scale-up domains it spans and how many of
//! its members share one. The network's bandwidth and latency for the group follow from it.

use crate::error::ConfigError;

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

/// The scale-up domain a training job's ranks are laid out over: the whole domain, filled in rank order, or, with
/// `segment_nodes` servers kept together in one domain (Slurm topology/block's `--segment`), a segment at a time
/// (NVIDIA's llmb-run sets the greatest divisor of the job's nodes up to the NVL72's 18: 16 for a power of two,
/// NVIDIA/dgxc-benchmarking cli/llmb-run job_launcher.py `_compute_segment_size`, 2026-02; NVIDIA's GB200
/// scheduling guide recommends 16 for jobs of 128 GPUs or more). A segment must fit one domain and divide the job.
pub fn job_domain_gpus(gpus: u32, domain_gpus: u32, server_gpus: u32, segment_nodes: u32) -> Result<u32, ConfigError> {
    if segment_nodes == 0 {
        return Ok(domain_gpus);
    }
    let server = server_gpus.max(1);
    let (domain_servers, job_servers) = (domain_gpus / server, gpus / server);
    if domain_servers <= 1 || segment_nodes > domain_servers || !job_servers.is_multiple_of(segment_nodes) {
        return Err(ConfigError::NvlinkSegment { segment_nodes, domain_servers: domain_servers.max(1), job_servers });
    }
    Ok(segment_nodes * server)
}

/// The GPUs of a scale-up domain an instance of `instance_gpus` is placed in: an instance that fits one domain runs
/// inside one, as many whole instances to a domain as it holds and the rest of the domain left to other work (a
/// Slurm topology/block job of up to one domain's servers stays in one block, NVIDIA's GB200 NVL72 scheduling
/// guide; SGLang's and TensorRT-LLM's GB200 decode instances run inside one NVL72); a larger one spans domains in
/// rank order.
pub fn instance_domain_gpus(instance_gpus: u32, domain_gpus: u32) -> u32 {
    if instance_gpus == 0 || instance_gpus > domain_gpus {
        return domain_gpus;
    }
    domain_gpus / instance_gpus * instance_gpus
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

#[cfg(test)]
mod tests {
    use super::*;

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
