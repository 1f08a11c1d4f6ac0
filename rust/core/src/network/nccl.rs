//! NCCL's cost model: protocols (LL, LL128, Simple), their per-step latency and bandwidth, channels by message
//! size and chunk loops, for rings and trees.
//!
//! Every constant is NCCL's own, read at NVIDIA/nccl commit 5067397c (NCCL 2.30.7, 2026-06-11); file:line at that
//! commit. The figures NCCL only estimates and a system must be measured for (each protocol's time per step on a
//! link, the channels a domain opens) are catalog inputs (`ScaleUpSpec`, `FabricSpec`), calibrated per scale-up
//! domain and per fabric on named nccl-tests curves (tests/validation/collectives.toml).
//!
//! A ring collective of `steps` steps over `n` ranks and `k` channels moves, per step and channel, a chunk of
//! c = S / (n k) bytes (enqueue.cc:2343-2364: nchunksPerLoop = nRanks); the steps depend on each other, so
//!
//!   T = base + steps x (alpha + c / b + (L - 1) x max(0, alpha - C / b)),   L = ceil(c / C),
//!
//! with alpha the protocol's time per step, b its bandwidth per channel and C its chunk: a message larger than one
//! chunk per channel loops, and a later loop's fixed cost hides behind its predecessor's transfer (two chunks in
//! flight per connection: NCCL_STEPS / CHUNKSTEPS = 8 / 4, device.h:26, collectives.h:19-34) unless that transfer
//! is shorter. Summed over the steps the bandwidth term is passes x (n-1)/n x S / (k b): the bus bandwidth.
//! Small messages open fewer channels (enqueue.cc:2092-2105), so their chunks stay larger than S / (n k).

/// A protocol: how NCCL packs data and flags into its buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// 8-byte stores of 4 B data + 4 B flag: lowest latency, half the bandwidth.
    Ll,
    /// 128-byte lines of 120 B data + 8 B flag.
    Ll128,
    /// Plain copies with a handshake per step: full bandwidth, the highest latency.
    Simple,
}

pub const PROTOCOLS: [Protocol; 3] = [Protocol::Ll, Protocol::Ll128, Protocol::Simple];

/// NCCL's base latency of one collective, Ring {LL, LL128, Simple} (us): tuning.cc:149-155 baseLatencies.
const RING_BASE_LATENCY_S: [f64; 3] = [6.6e-6, 14.0e-6, 8.4e-6];
/// NCCL's base latency, Tree {LL, LL128, Simple} (us): tuning.cc:149-155.
const TREE_BASE_LATENCY_S: [f64; 3] = [6.8e-6, 14.0e-6, 8.4e-6];

/// Share of a channel's bus bandwidth a ring protocol carries: LL 0.5 (4 B of flag per 4 B of data), LL128 0.92
/// ("120.0/128.0"), Simple 1 (tuning.cc:327-329).
const RING_PROTOCOL_FRACTION: [f64; 3] = [0.5, 0.92, 1.0];
/// The same for a tree all-reduce: Simple 0.92 (tuning.cc:330), LL 0.92 / 3.8 (tuning.cc:331), LL128 0.92 x
/// 120/128 between nodes (tuning.cc:332).
const TREE_PROTOCOL_FRACTION: [f64; 3] = [0.92 / 3.8, 0.92 * 120.0 / 128.0, 0.92];

/// Data bytes per channel and loop (the ring chunk) with the default buffers: Simple 4 MiB / 8 steps x 4 chunk
/// steps = 2,097,152 B; LL 524,288 / 8 / 2 = 32,768 B; LL128 4,915,200 / 8 x 15/16 = 576,000 B (init.cc:810-813,
/// enqueue.cc:2222-2227, device.h:110-112).
const CHUNK_BYTES: [f64; 3] = [32_768.0, 576_000.0, 2_097_152.0];
const INV_CHUNK_BYTES: [f64; 3] = [1.0 / CHUNK_BYTES[0], 1.0 / CHUNK_BYTES[1], 1.0 / CHUNK_BYTES[2]];

/// Bytes per channel below which NCCL opens fewer channels: threads x threshold, LL 512 x 8 (x ranks, tuning.cc:593),
/// LL128 640 x 8, Simple 512 x 64 (enqueue.cc:2092-2105, comm.h:49-51, device.h:95-97,114).
const CHANNEL_THRESHOLD_BYTES: [f64; 3] = [4096.0, 5120.0, 32_768.0];
const INV_CHANNEL_THRESHOLD: [f64; 3] =
    [1.0 / CHANNEL_THRESHOLD_BYTES[0], 1.0 / CHANNEL_THRESHOLD_BYTES[1], 1.0 / CHANNEL_THRESHOLD_BYTES[2]];

/// Bytes per channel a tree moves per step: Simple one 512 KiB step (chunkSteps 1 off the ring), LL 32 KiB,
/// LL128 576,000 B (enqueue.cc:2222-2227).
const TREE_CHUNK_BYTES: [f64; 3] = [32_768.0, 576_000.0, 524_288.0];

/// NVLS channels: NVLS_NCHANNELS_SM90 16, NVLS_NCHANNELS_SM100 32 (src/transport/nvls.cc:155-157).
const NVLS_CHANNELS: [f64; 4] = [16.0, 16.0, 16.0, 32.0];
/// NVLSTree's largest chunk per channel: 262,144 B, at most 65,536 B from 4 nodes (enqueue.cc:2280-2285,
/// nvls.cc:228-229).
const NVLS_TREE_CHUNK_BYTES: f64 = 262_144.0;
const NVLS_TREE_CHUNK_BYTES_4_NODES: f64 = 65_536.0;

/// Bytes NVLSTree has in flight on its channels while its pipeline fills (one chunk per channel, or the whole
/// message when smaller): each network hop of the tree carries them before the pipeline streams.
pub fn nvls_tree_fill_bytes(message_bytes: f64, nodes: u32, compute_capability: u32) -> f64 {
    let channels = NVLS_CHANNELS[arch_row(compute_capability)];
    let chunk = if nodes >= 4 { NVLS_TREE_CHUNK_BYTES_4_NODES } else { NVLS_TREE_CHUNK_BYTES };
    message_bytes.min(chunk * channels)
}

/// Most channels a communicator opens (MAXCHANNELS, device.h:91).
pub const MAX_CHANNELS: f64 = 64.0;

/// NCCL's cap on LL bus bandwidth between nodes (GB/s), llMaxBws rows indexed by CPU vendor when nNodes > 1:
/// Intel {39.0 at 2 nodes, 20.4 at 3 or more} (tuning.cc:178-183, 269-271). Hosts taken to be Intel x86 (the
/// AMD row is 22.5 / 19.0).
const LL_MAX_BUS_BYTES_PER_S_2_NODES: f64 = 39.0e9;
const LL_MAX_BUS_BYTES_PER_S_MANY_NODES: f64 = 20.4e9;

/// Architecture rows of NCCL's tables: compute capability major 7 Volta, 8 Ampere, 9 Hopper, 10+ Blackwell
/// (tuning.cc:263-276).
fn arch_row(compute_capability: u32) -> usize {
    match compute_capability {
        0..=7 => 0,
        8 => 1,
        9 => 2,
        _ => 3,
    }
}

/// Column of NCCL's per-channel tables: 1 node, 2 nodes, 3 or more (tuning.cc:272).
fn nodes_column(nodes: u32) -> usize {
    (nodes.max(1) as usize - 1).min(2)
}

/// LL bus bandwidth cap inside one node by architecture (GB/s): llMaxBws N1 column, Volta 39.0, Ampere 87.7,
/// Hopper 141.0, Blackwell 282.0 (tuning.cc:178-183).
const LL_MAX_ONE_NODE: [f64; 4] = [39.0e9, 87.7e9, 141.0e9, 282.0e9];
/// Ring LL128 bandwidth per (graph) channel, GB/s: perChMaxRingLL128Bws (tuning.cc:185-190).
const RING_LL128_PER_CHANNEL: [f64; 4] = [20.0e9, 20.0e9, 36.7e9, 40.0e9];
/// Tree Simple bandwidth per (graph) channel by nodes column: perChMaxTreeBws (tuning.cc:199-204).
const TREE_PER_CHANNEL: [[f64; 3]; 4] =
    [[26.5e9, 18.5e9, 10.0e9], [24.0e9, 23.6e9, 17.8e9], [38.7e9, 41.4e9, 36.0e9], [70.0e9, 42.8e9, 24.0e9]];
/// Tree LL128 bandwidth per (graph) channel by nodes column: perChMaxTreeLL128Bws (tuning.cc:192-197).
const TREE_LL128_PER_CHANNEL: [[f64; 3]; 4] =
    [[20.0e9, 20.0e9, 20.0e9], [20.0e9, 20.0e9, 20.0e9], [36.7e9, 36.7e9, 29.0e9], [55.6e9, 31.67e9, 20.0e9]];

/// NCCL's static correction of the tree's bandwidth by message size, {LL, LL128, Simple}, powers of two from 64 B
/// ("Trees are not perfectly sticking to the model for medium sizes", treeCorrectionFactor, tuning.cc:620-655).
const TREE_CORRECTION: [[f64; 24]; 3] = [
    [
        1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.7, 0.7, 0.7, 0.7, 0.6, 0.5, 0.4, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.0, 1.0,
        1.0, 1.0,
    ],
    [
        1.0, 1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.8, 0.8, 0.7, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.8, 0.9, 0.9, 0.9, 0.9, 1.0,
        1.0, 1.0,
    ],
    [
        0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.7, 0.6, 0.6, 0.5, 0.5, 0.5, 0.5, 0.6, 0.7, 0.8, 0.7, 0.7, 0.8, 0.9,
        0.9, 0.9,
    ],
];

/// The tree's bandwidth correction for a message of `message_bytes` and protocol `p`: NCCL's table (applied for
/// index floor(log2(bytes / 64)) < 23, tuning.cc:640) at each power of two, interpolated in log2(size) between them
/// (so a larger message never takes less time), 1 beyond the table.
pub fn tree_correction(p: Protocol, message_bytes: f64) -> f64 {
    TreeIndex::of(message_bytes).correction(p)
}

/// Where a message size falls in NCCL's tree correction table, computed once for all protocols.
#[derive(Clone, Copy)]
struct TreeIndex {
    i: usize,
    frac: f64,
    beyond: bool,
}

impl TreeIndex {
    fn of(message_bytes: f64) -> TreeIndex {
        let x = (message_bytes / 64.0).log2();
        if x.is_nan() || x < 0.0 {
            return TreeIndex { i: 0, frac: 0.0, beyond: true };
        }
        let i = x.floor();
        TreeIndex { i: i as usize, frac: x - i, beyond: false }
    }

    fn correction(self, p: Protocol) -> f64 {
        if self.beyond {
            return 1.0;
        }
        let table = &TREE_CORRECTION[p as usize];
        let at = |i: usize| if i < 23 { table[i] } else { 1.0 };
        at(self.i) * (1.0 - self.frac) + at(self.i + 1) * self.frac
    }
}

/// One protocol's time per step on each level (s).
#[derive(Clone, Copy, Debug)]
pub struct StepLatency {
    pub by_protocol: [f64; 3],
}

impl StepLatency {
    pub fn of(&self, p: Protocol) -> f64 {
        self.by_protocol[p as usize]
    }
    /// The slower of two levels, protocol by protocol (a ring's step waits for its slowest edge).
    pub fn max(&self, other: &StepLatency) -> StepLatency {
        let [a, b, c] = self.by_protocol;
        let [x, y, z] = other.by_protocol;
        StepLatency { by_protocol: [a.max(x), b.max(y), c.max(z)] }
    }
}

/// A ring as NCCL runs it: `ranks` members, `steps` steps, `channels` channels at most, seconds per byte of the
/// ring's Simple bus bandwidth (its slowest level's), NCCL's architecture and node count (for its per-channel caps).
/// (Seconds per byte rather than bytes per second: the evaluation multiplies where it would divide.)
#[derive(Clone, Copy, Debug)]
pub struct Ring {
    pub ranks: f64,
    pub steps: f64,
    pub channels: f64,
    pub s_per_bus_byte: f64,
    pub step: StepLatency,
    pub compute_capability: u32,
    pub nodes: u32,
}

impl Ring {
    /// Bus bandwidth protocol `p` reaches with every channel open: its share of the link, capped by NCCL's
    /// per-protocol ceilings (LL: llMaxBw; LL128: channels x perChMaxRingLL128Bw, graph channels being half the
    /// communicator's, connect.cc:460).
    pub fn bus_bytes_per_s(&self, p: Protocol) -> f64 {
        1.0 / self.s_per_byte(p)
    }

    /// Seconds per bus byte of protocol `p` (the inverse of `bus_bytes_per_s`).
    fn s_per_byte(&self, p: Protocol) -> f64 {
        let share = self.s_per_bus_byte / RING_PROTOCOL_FRACTION[p as usize];
        let arch = arch_row(self.compute_capability);
        match p {
            Protocol::Ll => share.max(1.0 / ll_max_bus_bytes_per_s(arch, self.nodes)),
            Protocol::Ll128 => share.max(1.0 / (self.channels / 2.0 * RING_LL128_PER_CHANNEL[arch])),
            Protocol::Simple => share,
        }
    }

    /// Time of `message_bytes` (the nccl-tests size) with protocol `p`: NCCL's base latency, then every step pays
    /// its fixed cost and moves one chunk per channel (module doc).
    pub fn time_s(&self, p: Protocol, message_bytes: f64) -> f64 {
        let i = p as usize;
        let alpha = self.step.of(p);
        // Seconds per byte of one channel.
        let channel_s_per_byte = self.s_per_byte(p) * self.channels;
        let per_threshold =
            if p == Protocol::Ll { INV_CHANNEL_THRESHOLD[i] / self.ranks } else { INV_CHANNEL_THRESHOLD[i] };
        let open = (message_bytes * per_threshold).clamp(1.0, self.channels);
        let chunk = message_bytes / (self.ranks * open);
        let mut step = alpha + chunk * channel_s_per_byte;
        if chunk > CHUNK_BYTES[i] {
            let loops = (chunk * INV_CHUNK_BYTES[i]).ceil();
            step += (loops - 1.0) * (alpha - CHUNK_BYTES[i] * channel_s_per_byte).max(0.0);
        }
        RING_BASE_LATENCY_S[i] + self.steps * step
    }

    /// The fastest protocol's time, as NCCL's tuner picks the minimum (enqueue.cc:2035-2044). Simple first; LL128
    /// and LL only when their lower bound (base latency + the message at their full-channel bandwidth, at most 0.92
    /// and 0.5 of Simple's) could beat it: the same minimum, without their arithmetic for large messages.
    pub fn best_time_s(&self, message_bytes: f64) -> f64 {
        let mut best = self.time_s(Protocol::Simple, message_bytes);
        let simple_bandwidth_s = self.steps / self.ranks * message_bytes * self.s_per_bus_byte;
        for p in [Protocol::Ll128, Protocol::Ll] {
            let i = p as usize;
            if RING_BASE_LATENCY_S[i] + simple_bandwidth_s / RING_PROTOCOL_FRACTION[i] < best {
                best = best.min(self.time_s(p, message_bytes));
            }
        }
        best
    }
}

fn ll_max_bus_bytes_per_s(arch: usize, nodes: u32) -> f64 {
    match nodes {
        0 | 1 => LL_MAX_ONE_NODE[arch],
        2 => LL_MAX_BUS_BYTES_PER_S_2_NODES,
        _ => LL_MAX_BUS_BYTES_PER_S_MANY_NODES,
    }
}

/// NCCL's tree all-reduce across domains (a chain inside each, a double binary tree between them): per protocol,
/// base + 2 x ((per-domain members - 1) x intra step + ceil(log2 domains) x network step) + 2 S / tree bus
/// bandwidth (tuning.cc:330-336, 400-401, 640), the pace set by the slower of the chain and the tree; plus the
/// pipeline fill: before the chunks stream, one chunk per channel (or the whole message, when smaller) crosses each
/// of the 2 x ceil(log2 domains) network hops, up the tree and down, at the tree's bandwidth.
#[derive(Clone, Copy, Debug)]
pub struct Tree {
    pub per_domain: f64,
    pub domains: f64,
    /// Seconds per byte of the chain inside a domain (0 with one member).
    pub intra_s_per_byte: f64,
    /// The domain's network bandwidth (its NICs).
    pub domain_bytes_per_s: f64,
    pub channels: f64,
    pub intra_step: StepLatency,
    pub net_step: StepLatency,
    pub compute_capability: u32,
}

impl Tree {
    pub fn bus_bytes_per_s(&self, p: Protocol, message_bytes: f64) -> f64 {
        self.capped_bus_bytes_per_s(p) * tree_correction(p, message_bytes)
    }

    /// NCCL's tree bus bandwidth before its size correction.
    fn capped_bus_bytes_per_s(&self, p: Protocol) -> f64 {
        let arch = arch_row(self.compute_capability);
        let nodes = self.domains.max(1.0) as u32;
        let column = nodes_column(nodes);
        let graph_channels = self.channels / 2.0;
        let bw = TREE_PROTOCOL_FRACTION[p as usize] * self.domain_bytes_per_s;
        match p {
            Protocol::Ll => bw.min(ll_max_bus_bytes_per_s(arch, nodes)),
            Protocol::Ll128 => bw.min(graph_channels * TREE_LL128_PER_CHANNEL[arch][column]),
            Protocol::Simple => bw.min(graph_channels * TREE_PER_CHANNEL[arch][column]),
        }
    }

    pub fn time_s(&self, p: Protocol, message_bytes: f64) -> f64 {
        self.time_at(p, message_bytes, TreeIndex::of(message_bytes), self.domains.log2().ceil())
    }

    fn time_at(&self, p: Protocol, message_bytes: f64, index: TreeIndex, levels: f64) -> f64 {
        let latency = TREE_BASE_LATENCY_S[p as usize]
            + 2.0 * ((self.per_domain - 1.0) * self.intra_step.of(p) + levels * self.net_step.of(p));
        let tree_s_per_byte = 1.0 / (self.capped_bus_bytes_per_s(p) * index.correction(p));
        // Pipeline fill: a chunk per channel crosses each of the 2 x levels network hops (up the tree, then down)
        // before the pipeline streams (chunk: NCCL's tree step, or the whole message per channel when smaller).
        let fill = 2.0 * levels * message_bytes.min(TREE_CHUNK_BYTES[p as usize] * self.channels) * tree_s_per_byte;
        latency + fill + 2.0 * message_bytes * self.intra_s_per_byte.max(tree_s_per_byte)
    }

    /// The fastest protocol's time; LL128 and LL only when their lower bound (base latency + 2 S at their share
    /// of the domain's bandwidth, before caps and corrections, which only lower it) could beat Simple's.
    pub fn best_time_s(&self, message_bytes: f64) -> f64 {
        let index = TreeIndex::of(message_bytes);
        let levels = self.domains.log2().ceil();
        let mut best = self.time_at(Protocol::Simple, message_bytes, index, levels);
        for p in [Protocol::Ll128, Protocol::Ll] {
            let i = p as usize;
            let bound =
                TREE_BASE_LATENCY_S[i] + 2.0 * message_bytes / (TREE_PROTOCOL_FRACTION[i] * self.domain_bytes_per_s);
            if bound < best {
                best = best.min(self.time_at(p, message_bytes, index, levels));
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(x: f64) -> f64 {
        x * 1e-6
    }

    /// 2 x 8 GPUs on 8 x 400G NICs: 16 ranks, 16 channels (2 per NIC), `bus` the ring's Simple bus bandwidth.
    fn two_node_ring(steps: f64, bus: f64, step_us: [f64; 3]) -> Ring {
        Ring {
            ranks: 16.0,
            steps,
            channels: 16.0,
            s_per_bus_byte: 1.0 / bus,
            step: StepLatency { by_protocol: step_us.map(us) },
            compute_capability: 9,
            nodes: 2,
        }
    }

    #[test]
    fn simple_regime_two_node_ring_all_reduce_at_1_mib() {
        // nccl-tests #309, 2 x 8 H100, IB NDR (372 GB/s = 8 x 50 x 0.93), NCCL_ALGO=Ring, 1 MiB: measured 156.9 us.
        // Every protocol pays the 5.2 us network step (ib-ndr saves nothing). 30 steps, 16 channels open
        // (1 MiB / 32 KiB = 32 > 16), chunk 1,048,576 / (16 x 16) = 4,096 B.
        // Simple: 23.25 GB/s per channel -> 0.1762 us; 8.4 + 30 x 5.3762 = 169.69 us.
        // LL: min(0.5 x 372, 39) = 39 GB/s -> 2.4375 per channel -> 1.6804 us; 6.6 + 30 x 6.8804 = 213.01 us.
        // LL128: min(0.92 x 372, 8 x 36.7) = 293.6 GB/s -> 18.35 per channel -> 0.2232 us; 14 + 30 x 5.4232 = 176.70.
        let ring = two_node_ring(30.0, 372e9, [5.2, 5.2, 5.2]);
        let simple = 8.4 + 30.0 * (5.2 + 4096.0 / 23.25e3);
        assert!((ring.time_s(Protocol::Simple, 1048576.0) - us(simple)).abs() < 1e-10);
        let ll = 6.6 + 30.0 * (5.2 + 4096.0 / 2.4375e3);
        assert!((ring.time_s(Protocol::Ll, 1048576.0) - us(ll)).abs() < 1e-10);
        let ll128 = 14.0 + 30.0 * (5.2 + 4096.0 / 18.35e3);
        assert!((ring.time_s(Protocol::Ll128, 1048576.0) - us(ll128)).abs() < 1e-10);
        assert_eq!(ring.best_time_s(1048576.0), ring.time_s(Protocol::Simple, 1048576.0));
        // 169.7 us against the measured 156.9: +8% in time.
        assert!((simple / 156.9 - 1.0).abs() < 0.10, "{simple}");
    }

    #[test]
    fn ll_regime_two_node_all_gather_at_64_kib() {
        // GCP A3 Ultra, 2 x 8 H200, 8 x 400G RoCE (380 GB/s = 8 x 50 x 0.95), all_gather 64 KiB: measured 59.7 us.
        // Network steps LL 2.0, LL128 4.0, Simple 7.3 us (roce-400g's 7.3 us step less its fitted savings), 15 steps.
        // LL: 39 GB/s cap -> 2.4375 per channel; LL opens a channel per 4 KiB x 16 ranks = 64 KiB: 1 channel,
        //   chunk 65,536 / 16 = 4,096 B -> 1.6804 us; 6.6 + 15 x 3.6804 = 61.81 us.
        // LL128: 293.6 GB/s -> 18.35 per channel, 65,536 / 5,120 = 12.8 channels, chunk 320 B -> 0.0174 us;
        //   14 + 15 x 4.0174 = 74.26 us.  Simple: 2 channels, chunk 2,048 B at 23.75 GB/s: 8.4 + 15 x 7.3862 = 119.2.
        let ring = two_node_ring(15.0, 380e9, [2.0, 4.0, 7.3]);
        let ll = 6.6 + 15.0 * (2.0 + 4096.0 / 2.4375e3);
        assert!((ring.best_time_s(65536.0) - us(ll)).abs() < 1e-10);
        let ll128 = 14.0 + 15.0 * (4.0 + 320.0 / 18.35e3);
        assert!((ring.time_s(Protocol::Ll128, 65536.0) - us(ll128)).abs() < 1e-10);
        let simple = 8.4 + 15.0 * (7.3 + 2048.0 / 23.75e3);
        assert!((ring.time_s(Protocol::Simple, 65536.0) - us(simple)).abs() < 1e-10);
        assert!((ll / 59.7 - 1.0).abs() < 0.05, "{ll}");
    }

    #[test]
    fn ll128_regime_two_node_all_gather_at_16_mib() {
        // The same ring at 16 MiB (measured 122.8 us): chunk 16,777,216 / 256 = 65,536 B on every protocol.
        // LL128: 65,536 / 18.35 GB/s = 3.5714 us; 14 + 15 x 7.5714 = 127.57 us (best).
        // Simple: 65,536 / 23.75 GB/s = 2.7594 us; 8.4 + 15 x 10.0594 = 159.29 us.
        // LL: 2 loops of 32 KiB; 65,536 / 2.4375 GB/s = 26.887 us, the second loop's 2 us hidden behind 13.4 us of
        //   transfer; 6.6 + 15 x 28.887 = 439.9 us.
        let ring = two_node_ring(15.0, 380e9, [2.0, 4.0, 7.3]);
        let s = 16777216.0;
        let ll128 = 14.0 + 15.0 * (4.0 + 65536.0 / 18.35e3);
        assert!((ring.best_time_s(s) - us(ll128)).abs() < 1e-10);
        let simple = 8.4 + 15.0 * (7.3 + 65536.0 / 23.75e3);
        assert!((ring.time_s(Protocol::Simple, s) - us(simple)).abs() < 1e-10);
        let ll = 6.6 + 15.0 * (2.0 + 65536.0 / 2.4375e3);
        assert!((ring.time_s(Protocol::Ll, s) - us(ll)).abs() < 1e-10);
        assert!((ll128 / 122.8 - 1.0).abs() < 0.05, "{ll128}");
    }

    #[test]
    fn tree_pays_nccls_caps_correction_and_its_pipeline_fill() {
        // 4 domains of one GPU each behind 372 GB/s, 16 channels, 5.2 us steps, Hopper; all-reduce of 64 MiB.
        // Simple: min(0.92 x 372, 8 graph channels x 36.0 (perChMaxTreeBw, 3+ nodes)) = 288 GB/s x correction
        // 0.8 (64 MiB = 64 B x 2^20) = 230.4 GB/s; latency 8.4 + 2 x 2 levels x 5.2 = 29.2 us; fill: 16 chunks of
        // 512 KiB (8 MiB) over 4 network hops = 145.64 us; 2 x 64 MiB / 230.4 GB/s = 582.54 us; 757.4 us.
        // LL128: min(0.8625 x 372, 8 x 29.0) = 232 x 0.9 = 208.8 GB/s: 14 + 20.8 + 4 x 9,216,000 / 208.8 +
        // 642.8 = 854.2 us. LL: its bound alone, 6.8 + 2 x 64 MiB / (0.242 x 372 GB/s) = 1,491 us, loses.
        let tree = Tree {
            per_domain: 1.0,
            domains: 4.0,
            intra_s_per_byte: 0.0,
            domain_bytes_per_s: 372e9,
            channels: 16.0,
            intra_step: StepLatency { by_protocol: [us(0.6), us(1.9), us(3.4)] },
            net_step: StepLatency { by_protocol: [us(5.2); 3] },
            compute_capability: 9,
        };
        let s = 67108864.0;
        let simple = 8.4 + 20.8 + (4.0 * 8388608.0 + 2.0 * s) / 230.4e3;
        assert!((tree.time_s(Protocol::Simple, s) - us(simple)).abs() < 1e-10, "{simple}");
        let ll128 = 14.0 + 20.8 + (4.0 * 9216000.0 + 2.0 * s) / 208.8e3;
        assert!((tree.time_s(Protocol::Ll128, s) - us(ll128)).abs() < 1e-10, "{ll128}");
        assert_eq!(tree.best_time_s(s), tree.time_s(Protocol::Simple, s));
        assert!((simple - 757.4).abs() < 0.1 && (ll128 - 854.2).abs() < 0.1, "{simple} {ll128}");
    }

    #[test]
    fn chunk_loops_pay_their_fixed_cost_only_when_the_transfer_is_shorter() {
        // #309 ring at 8 GiB (measured 41,015 us): chunk 8,589,934,592 / 256 = 33,554,432 B = 16 Simple chunks;
        // each 2 MiB chunk takes 90.2 us at 23.25 GB/s, longer than the 5.2 us step, so later loops cost nothing:
        // 8.4 + 30 x (5.2 + 33,554,432 / 23.25e3) = 43,460 us (busbw 1.875 x 8 GiB / 43,460 us = 370.6 GB/s, -5.6%).
        let ring = two_node_ring(30.0, 372e9, [5.2, 5.2, 5.2]);
        let t = 8.4 + 30.0 * (5.2 + 33554432.0 / 23.25e3);
        assert!((ring.time_s(Protocol::Simple, 8589934592.0) - us(t)).abs() < 1e-9);
        // A 20 us LL step against 32 KiB chunks at 2.4375 GB/s (13.443 us): each later loop adds 6.557 us.
        // 1 MiB over 16 ranks and 16 channels: 4,096 B per chunk, one loop; 16 MiB: 65,536 B, two loops:
        // 6.6 + 15 x (20 + 26.887 + 6.557) = 808.2 us.
        let slow = two_node_ring(15.0, 380e9, [20.0, 4.0, 7.3]);
        let t = 6.6 + 15.0 * (20.0 + 65536.0 / 2.4375e3 + (20.0 - 32768.0 / 2.4375e3));
        assert!((slow.time_s(Protocol::Ll, 16777216.0) - us(t)).abs() < 1e-10);
    }

    #[test]
    fn tree_correction_follows_nccls_table() {
        // Simple: 1 MiB = 64 B x 2^14 -> index 14 -> 0.5; 64 KiB -> index 10 -> 0.6; 1.5 MiB halfway (in log2) to
        // index 15's 0.6; 1 GiB -> beyond the table -> 1. LL at 256 KiB (index 12): 0.4.
        assert!((tree_correction(Protocol::Simple, 1048576.0) - 0.5).abs() < 1e-12);
        assert!((tree_correction(Protocol::Simple, 65536.0) - 0.6).abs() < 1e-12);
        let mid = tree_correction(Protocol::Simple, 1048576.0 * 2f64.sqrt());
        assert!((mid - 0.55).abs() < 1e-12, "{mid}");
        assert_eq!(tree_correction(Protocol::Simple, 1073741824.0), 1.0);
        assert_eq!(tree_correction(Protocol::Simple, 8.0), 1.0);
        assert!((tree_correction(Protocol::Ll, 262144.0) - 0.4).abs() < 1e-12);
    }
}
