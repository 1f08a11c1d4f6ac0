//! Hardware figures the model consumes, in SI units (FLOP/s, bytes, bytes/s, seconds, watts).
//! The catalogs (data/*.toml, loaded by the Python layer) hold the same figures in the units people quote,
//! each with its source; the Python layer converts them by the catalog figure table (`crate::figures`).

use crate::error::ConfigError;

crate::named_enum! {
    /// GPU architecture generation: the regimes of the prediction intervals (data/model_error.toml).
    pub enum Generation {
        Volta = "volta",
        Ampere = "ampere",
        Hopper = "hopper",
        Blackwell = "blackwell",
        Cdna2 = "cdna2",
        Cdna3 = "cdna3",
    }
}

/// Heads per GPU times sequences per micro-batch of the rows of a GPU's attention table (`AttentionTable`).
pub const ATTENTION_HEADS: [f64; 7] = [2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0];
/// Sequence lengths (tokens) of its columns.
pub const ATTENTION_SEQS: [f64; 6] = [1024.0, 2048.0, 4096.0, 8192.0, 16384.0, 32768.0];
/// Achieved fraction of the 16-bit peak of fused causal attention, forward and backward (the backward counted as
/// 2.5 times the forward's FLOPs), by heads per GPU x sequences per micro-batch (rows, `ATTENTION_HEADS`) and
/// sequence length (columns, `ATTENTION_SEQS`): a query tile's fixed costs over few keys, and few tiles to fill
/// the GPU, make short sequences and few heads slow (data/measurements/h200-measure-grid.json).
pub type AttentionTable = [[f64; 6]; 7];

/// One GPU type.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct GpuSpec {
    /// The dense 16-bit tensor peak: BF16, or FP16 on GPUs without BF16 (V100).
    pub peak_bf16_flops: f64,
    /// 0 when the GPU has no FP8 tensor cores.
    pub peak_fp8_flops: f64,
    /// Dense FP4 (NVFP4/MXFP4) tensor peak; 0 when the GPU has no FP4 tensor cores (Hopper and older).
    pub peak_fp4_flops: f64,
    pub hbm_bytes: f64,
    pub hbm_bytes_per_s: f64,
    pub tdp_w: f64,
    /// Sustained fraction of the 16-bit peak of a transformer layer's GEMMs (the median over layer shapes and the
    /// three passes, power-limited as in training; not the cool best-case burst).
    pub gemm_efficiency: f64,
    /// The same for GEMMs under `SMALL_GEMM_FLOPS` (thin TP shards of small models): fewer tiles, shorter k.
    pub small_gemm_efficiency: f64,
    /// Sustained fraction of the FP8 peak of the layer's FP8 GEMMs; 0 when the GPU has no FP8.
    pub gemm_efficiency_fp8: f64,
    /// Best achieved fraction of the FP4 peak on large FP4 GEMMs; 0 when the GPU has no FP4.
    pub gemm_efficiency_fp4: f64,
    /// Sustained fraction of the 16-bit peak of PyTorch's grouped GEMM kernel (`torch._grouped_mm`, CUTLASS) on
    /// routed experts of many tokens each, forward and backward: the experts' rate in frameworks that run it.
    pub grouped_mm_efficiency: f64,
    /// The same for its FP8 kernel (`torch._scaled_grouped_mm`) over the FP8 peak; 0 when the GPU has no FP8.
    pub grouped_mm_efficiency_fp8: f64,
    /// Fused causal attention with the best kernel for the GPU (cuDNN or FlashAttention-3 on Hopper and
    /// Blackwell, FlashAttention-2 on Ampere), by heads per GPU and sequence length.
    pub attention_efficiency: AttentionTable,
    /// The same with FlashAttention-2-class kernels (PyTorch SDPA's flash backend, FlashAttention-2).
    pub attention_efficiency_fa2: AttentionTable,
    /// Sustained fraction of HBM bandwidth on streaming kernels (the median of copy and triad).
    pub hbm_efficiency: f64,
    /// Streaming multiprocessors (compute units): the tiles one wave of a GEMM runs.
    pub sm_count: u32,
    /// A serving engine's sustained rate over the measured kernel rates (GEMM, attention, HBM) across its steps
    /// (launch gaps, scheduling, sampling between kernels); above 1 where its forward-only kernels beat the
    /// measured forward / data- / weight-gradient median. Fitted per GPU on the serving calibration rows.
    pub serving_efficiency: f64,
    /// HBM the model cannot use: runtime context, workspaces, collective buffers, fragmentation.
    pub runtime_reserve_bytes: f64,
    /// GPUs per server.
    pub server_gpus: u32,
    /// Server power per GPU beyond the GPU board (CPU, NICs, fans, PSU losses).
    pub host_power_w: f64,
    /// Coefficient of variation of speed between GPUs of the same type in one cluster (power management and
    /// manufacturing spread): a synchronous step waits for the slowest of N.
    pub speed_cv: f64,
    pub generation: Generation,
}

/// The scale-up domain: GPUs joined by NVLink (or PCIe, or Infinity Fabric) without the scale-out network.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct ScaleUpSpec {
    /// Unidirectional bandwidth per GPU into the domain.
    pub bytes_per_s: f64,
    pub domain_gpus: u32,
    /// Latency of one ring step over the domain.
    pub step_latency_s: f64,
    /// Achieved ring bus bandwidth / line rate.
    pub ring_efficiency: f64,
    /// All-reduce bus bandwidth with in-switch reduction (NVLS) / line rate; 0 = not available.
    pub in_switch_allreduce_efficiency: f64,
    /// NVLink switch trays per domain outside the servers (GB200 NVL72: 9); 0 when the switches are on the
    /// server's baseboard (HGX) and priced with it.
    pub switch_trays_per_domain: f64,
    /// Time of one ring step over the domain with NCCL's LL protocol (`step_latency_s` is Simple's).
    pub ll_step_latency_s: f64,
    /// Time of one ring step over the domain with NCCL's LL128 protocol.
    pub ll128_step_latency_s: f64,
    /// Channels NCCL opens for a ring inside the domain (8 x H100: 24).
    pub nccl_channels: u32,
    /// Compute capability (major) of the GPUs the domain joins: selects the rows of NCCL's tuning tables
    /// (8 Ampere, 9 Hopper, 10 Blackwell).
    pub compute_capability: u32,
}

crate::named_enum! {
    /// How a fabric spreads a collective's flows over the equal-cost paths between leaves.
    pub enum LoadBalancing {
        /// Static ECMP: each flow (queue pair) is hashed once onto one path (RoCE on merchant switches, TCP);
        /// the hash collisions are computed from the flows, paths and queue pairs (`crate::network::topology`).
        Ecmp = "ecmp",
        /// Dynamic load balancing: the switch re-binds a flow to the least-loaded port at a gap in the flow
        /// (flowlets; Broadcom Tomahawk 5 "Cognitive Routing"), in order, so long back-to-back RDMA transfers move
        /// seldom; it can always keep ECMP's placement.
        Dlb = "dlb",
        /// Adaptive routing: switches steer packets to the least-loaded port (InfiniBand AR, Spectrum-X).
        Adaptive = "adaptive",
        /// Per-packet spraying with out-of-order placement at the NIC (Ultra Ethernet, AWS SRD).
        Spraying = "spraying",
    }
}

crate::named_enum! {
    /// Who picks each collective's algorithm and protocol.
    pub enum CollectiveTuner {
        /// NCCL's own tuner: the fastest algorithm and protocol by its cost model (scalefront takes the fastest by
        /// its own).
        Nccl = "nccl",
        /// aws-ofi-nccl's region tuner for p5 and p5e (NCCL_TUNER_PLUGIN=libnccl-ofi-tuner.so): a fixed algorithm
        /// and protocol by message size and ranks, measured on those instances, NCCL's choice outside its regions.
        AwsOfiP5 = "aws-ofi-p5",
    }
}

crate::named_enum! {
    /// How a switch forwards a packet: once its header is in (cut-through) or once all of it is (store-and-forward,
    /// one serialisation time per hop).
    pub enum Forwarding {
        CutThrough = "cut-through",
        StoreAndForward = "store-and-forward",
    }
}

/// NCCL's communication channels per NIC on an 8-GPU, 8-NIC node: 16 channels over 8 NICs, round-robin
/// (NVIDIA/nccl src/graph/connect.cc:460 doubles the ring graph's 8 channels; search.cc:736 assigns NICs
/// round-robin; log "Channel 05/16" in NVIDIA/nccl #1453; commit 5067397c, 2026-06).
pub const NCCL_CHANNELS_PER_NIC: f64 = 2.0;

/// The scale-out network technology.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct FabricSpec {
    /// Line rate of one NIC port.
    pub link_bytes_per_s: f64,
    pub links_per_gpu: u32,
    /// GPUs that share one NIC port (`links_per_gpu` of them each): 1, or 2 where a server has half a NIC per GPU
    /// (DGX-2: 8 EDR ports for 16 GPUs; a Frontier node: 4 Slingshot NICs for 8 GCDs).
    pub gpus_per_link: u32,
    /// Achieved ring bus bandwidth between two nodes with no congestion / the wire's payload rate (line rate x
    /// `mtu_bytes / (mtu_bytes + header_bytes)`): the NIC generation's and NCCL's efficiency, the same for every
    /// transport a NIC runs; the transport's headers are `header_bytes`.
    pub efficiency: f64,
    /// Bytes each full packet carries on the wire beyond its payload (headers, CRCs, and on Ethernet the preamble
    /// and inter-frame gap): the transport's share of the line rate; 0 when `efficiency` already includes it.
    pub header_bytes: f64,
    /// One-message latency through both NICs and the host software stack, no switch.
    pub nic_latency_s: f64,
    pub switch_hop_latency_s: f64,
    /// Switch ports at the fabric's line rate.
    pub switch_radix: u32,
    /// All-reduce bus bandwidth with in-network reduction (SHARP) / line rate; 0 = not available.
    pub in_network_reduction_efficiency: f64,
    /// How flows that leave a leaf are spread over its uplinks.
    pub load_balancing: LoadBalancing,
    /// Fraction of the uplinks' capacity that leaf-crossing traffic keeps once the mechanism has spread it:
    /// adaptive routing's and spraying's own losses (decisions on stale load, reordering, congestion control).
    /// ECMP's hash collisions are computed, not folded in here (1 for plain ECMP).
    pub load_balance_efficiency: f64,
    /// Queue pairs per connection (NCCL_IB_QPS_PER_CONNECTION): each is hashed separately by ECMP.
    pub qps_per_connection: f64,
    /// Latency-bound network time under load / unloaded (tails of PFC pauses, incast, congestion control):
    /// multiplies every network message's latency. 1 = no tail beyond the base latency.
    pub tail_latency_factor: f64,
    pub forwarding: Forwarding,
    /// Largest packet: a store-and-forward hop waits for one.
    pub mtu_bytes: f64,
    /// Communication groups that can run in-network reduction at once through one leaf (0 = no limit): SHARP on
    /// Quantum (HDR) runs one streaming aggregation tree per switch, Quantum-2 one per port.
    pub in_network_groups_per_leaf: u32,
    /// Time NCCL's LL protocol saves per network ring step against Simple (whose step is the network latency),
    /// from the NIC and host part of the step (`nic_latency_s`): a figure of the NIC and NCCL's transport.
    pub ll_step_saving_s: f64,
    /// Time NCCL's LL128 protocol saves per network ring step against Simple, from the NIC and host part.
    pub ll128_step_saving_s: f64,
    /// Leaf uplink port speed / NIC port speed (ByteDance MegaScale: uplinks at twice the downlinks' rate, so each
    /// hashed path holds two NIC-rate flows). The leaf's uplink bandwidth is set by the oversubscription; this
    /// sets how few and how wide its uplinks are.
    pub uplink_speedup: f64,
    /// Each NIC port split over two top-of-rack leaves (Alibaba HPN dual-ToR): the same leaf bandwidth per GPU,
    /// twice the host links, and a leaf failure no longer stops the job. Needs leaves (not a torus).
    pub dual_tor: bool,
    /// Who picks each collective's algorithm and protocol: NCCL's cost model, or a tuner plugin the fabric's
    /// software stack ships (AWS EFA's aws-ofi-nccl).
    pub collective_tuner: CollectiveTuner,
}

impl ScaleUpSpec {
    /// NVLink switch trays outside the servers for `gpus` GPUs: one set per (possibly partial) domain.
    pub fn switch_trays(&self, gpus: u32) -> f64 {
        (gpus as f64 / self.domain_gpus.max(1) as f64).ceil() * self.switch_trays_per_domain
    }
}

impl FabricSpec {
    /// NIC ports per GPU: `links_per_gpu` / `gpus_per_link` (0.5 on a DGX-2).
    pub fn ports_per_gpu(&self) -> f64 {
        self.links_per_gpu as f64 / self.gpus_per_link as f64
    }

    /// Achieved per-GPU scale-out bandwidth with no congestion: line rate x ports per GPU x the wire's payload
    /// share x efficiency.
    pub fn gpu_bytes_per_s(&self) -> f64 {
        self.link_bytes_per_s * self.ports_per_gpu() * self.payload_fraction() * self.efficiency
    }

    /// Share of the line rate a full packet's payload gets: mtu / (mtu + header bytes). At a 4,096 B MTU,
    /// InfiniBand's 26 B (LRH 8, BTH 12, ICRC 4, VCRC 2) give 0.99369 and RoCEv2's 82 B (Ethernet 14, IPv4 20,
    /// UDP 8, BTH 12, ICRC 4, FCS 4, preamble and inter-frame gap 20) 0.98037 (Linux rdma/ib_pack.h header sizes;
    /// IEEE 802.3 framing).
    pub fn payload_fraction(&self) -> f64 {
        self.mtu_bytes / (self.mtu_bytes + self.header_bytes)
    }

    /// Time one switch adds to a message: its port-to-port latency, plus one packet's serialisation when it stores
    /// and forwards (a 4,096 B packet at 400 Gb/s: 4096 x 8 / 400e9 = 81.92 ns).
    pub fn hop_latency_s(&self) -> f64 {
        match self.forwarding {
            Forwarding::CutThrough => self.switch_hop_latency_s,
            Forwarding::StoreAndForward => self.switch_hop_latency_s + self.mtu_bytes / self.link_bytes_per_s,
        }
    }

    /// Flows one NIC port opens per connection that ECMP hashes separately: NCCL's channels per NIC x queue
    /// pairs per connection.
    pub fn flows_per_port(&self) -> f64 {
        NCCL_CHANNELS_PER_NIC * self.qps_per_connection
    }
}

crate::named_enum! {
    /// How the scale-out network is wired.
    pub enum TopologyKind {
        /// Leaf-spine (2 tiers) or 3-tier fat-tree, every NIC of a server on the same leaf.
        FatTree = "fat-tree",
        /// Fat-tree where NIC i of every server in a scalable unit goes to leaf i (one leaf per rail).
        RailFatTree = "rail-fat-tree",
        /// Groups of routers fully connected inside, one global hop between groups (Kim et al., ISCA 2008).
        Dragonfly = "dragonfly",
        /// 3-D torus of servers, six neighbour links per server, no switches.
        Torus3d = "torus-3d",
    }
}

crate::named_enum! {
    /// How the rails of a rail-optimized fat-tree meet.
    pub enum RailPlanes {
        /// One tree: rail-aligned leaves under shared spines (and a core tier when two tiers do not reach), as
        /// NVIDIA's DGX SuperPOD H100/B200 reference architectures build it.
        Shared = "shared",
        /// One independent tree per rail (multi-plane, as the DGX SuperPOD B300 reference and Alibaba HPN);
        /// cross-rail traffic moves over NVLink first (NCCL PXN). Small planes share a switch.
        PerRail = "per-rail",
    }
}

#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "python", derive(pyo3::FromPyObject), pyo3(from_item_all))]
pub struct TopologySpec {
    pub kind: TopologyKind,
    /// Leaf downlink / uplink bandwidth (1 = non-blocking); for a dragonfly, group terminals / global bandwidth.
    pub oversubscription: f64,
    /// Rail-fat-tree: servers in one rail-aligned scalable unit.
    pub rail_group_nodes: u32,
    /// Rail-fat-tree: shared spines or one tree per rail.
    pub rail_planes: RailPlanes,
    /// Typical cable length from a NIC to its leaf (or router, or neighbour): copper when within the fabric's
    /// DAC reach, else optical.
    pub host_link_m: f64,
}

pub(crate) fn positive(field: &'static str, value: f64) -> Result<(), ConfigError> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(ConfigError::InvalidFigure { field, value, expected: "a finite number > 0" })
    }
}
pub(crate) fn non_negative(field: &'static str, value: f64) -> Result<(), ConfigError> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(ConfigError::InvalidFigure { field, value, expected: "a finite number >= 0" })
    }
}
/// An achieved fraction: in (0, 1], or up to `max` where in-network reduction can beat the line rate.
pub(crate) fn fraction(field: &'static str, value: f64, max: f64) -> Result<(), ConfigError> {
    if value.is_finite() && value > 0.0 && value <= max {
        Ok(())
    } else {
        Err(ConfigError::InvalidFigure { field, value, expected: if max > 1.0 { "in (0, 2]" } else { "in (0, 1]" } })
    }
}
pub(crate) fn not_below_one(field: &'static str, value: f64) -> Result<(), ConfigError> {
    if value.is_finite() && value >= 1.0 {
        Ok(())
    } else {
        Err(ConfigError::InvalidFigure { field, value, expected: "a finite number >= 1" })
    }
}
/// Every cell of an attention table an achieved fraction.
fn table(field: &'static str, t: &AttentionTable) -> Result<(), ConfigError> {
    t.iter().flatten().try_for_each(|&v| fraction(field, v, 1.0))
}
pub(crate) fn at_least_one(field: &'static str, value: u32) -> Result<(), ConfigError> {
    if value >= 1 {
        Ok(())
    } else {
        Err(ConfigError::InvalidFigure { field, value: value as f64, expected: "an integer >= 1" })
    }
}

impl GpuSpec {
    pub fn validate(&self) -> Result<(), ConfigError> {
        positive("peak_bf16_flops", self.peak_bf16_flops)?;
        non_negative("peak_fp8_flops", self.peak_fp8_flops)?;
        positive("hbm_bytes", self.hbm_bytes)?;
        positive("hbm_bytes_per_s", self.hbm_bytes_per_s)?;
        positive("tdp_w", self.tdp_w)?;
        fraction("gemm_efficiency", self.gemm_efficiency, 1.0)?;
        fraction("small_gemm_efficiency", self.small_gemm_efficiency, 1.0)?;
        fraction("grouped_mm_efficiency", self.grouped_mm_efficiency, 1.0)?;
        if self.peak_fp8_flops > 0.0 {
            fraction("gemm_efficiency_fp8", self.gemm_efficiency_fp8, 1.0)?;
            fraction("grouped_mm_efficiency_fp8", self.grouped_mm_efficiency_fp8, 1.0)?;
        } else {
            non_negative("gemm_efficiency_fp8", self.gemm_efficiency_fp8)?;
            non_negative("grouped_mm_efficiency_fp8", self.grouped_mm_efficiency_fp8)?;
        }
        non_negative("peak_fp4_flops", self.peak_fp4_flops)?;
        if self.peak_fp4_flops > 0.0 {
            fraction("gemm_efficiency_fp4", self.gemm_efficiency_fp4, 1.0)?;
        } else {
            non_negative("gemm_efficiency_fp4", self.gemm_efficiency_fp4)?;
        }
        fraction("serving_efficiency", self.serving_efficiency, 2.0)?;
        table("attention_efficiency", &self.attention_efficiency)?;
        table("attention_efficiency_fa2", &self.attention_efficiency_fa2)?;
        fraction("hbm_efficiency", self.hbm_efficiency, 1.0)?;
        at_least_one("sm_count", self.sm_count)?;
        non_negative("runtime_reserve_bytes", self.runtime_reserve_bytes)?;
        at_least_one("server_gpus", self.server_gpus)?;
        non_negative("host_power_w", self.host_power_w)?;
        non_negative("speed_cv", self.speed_cv)
    }
}

impl ScaleUpSpec {
    pub fn validate(&self) -> Result<(), ConfigError> {
        positive("bytes_per_s", self.bytes_per_s)?;
        at_least_one("domain_gpus", self.domain_gpus)?;
        non_negative("step_latency_s", self.step_latency_s)?;
        fraction("ring_efficiency", self.ring_efficiency, 1.0)?;
        non_negative("switch_trays_per_domain", self.switch_trays_per_domain)?;
        non_negative("ll_step_latency_s", self.ll_step_latency_s)?;
        non_negative("ll128_step_latency_s", self.ll128_step_latency_s)?;
        at_least_one("nccl_channels", self.nccl_channels)?;
        at_least_one("compute_capability", self.compute_capability)?;
        if self.in_switch_allreduce_efficiency != 0.0 {
            fraction("in_switch_allreduce_efficiency", self.in_switch_allreduce_efficiency, 2.0)?;
        }
        Ok(())
    }
}

impl FabricSpec {
    pub fn validate(&self) -> Result<(), ConfigError> {
        positive("link_bytes_per_s", self.link_bytes_per_s)?;
        at_least_one("links_per_gpu", self.links_per_gpu)?;
        at_least_one("gpus_per_link", self.gpus_per_link)?;
        fraction("efficiency", self.efficiency, 1.0)?;
        fraction("load_balance_efficiency", self.load_balance_efficiency, 1.0)?;
        not_below_one("qps_per_connection", self.qps_per_connection)?;
        not_below_one("tail_latency_factor", self.tail_latency_factor)?;
        positive("mtu_bytes", self.mtu_bytes)?;
        non_negative("nic_latency_s", self.nic_latency_s)?;
        non_negative("switch_hop_latency_s", self.switch_hop_latency_s)?;
        non_negative("ll_step_saving_s", self.ll_step_saving_s)?;
        non_negative("ll128_step_saving_s", self.ll128_step_saving_s)?;
        non_negative("header_bytes", self.header_bytes)?;
        not_below_one("uplink_speedup", self.uplink_speedup)?;
        if self.switch_radix < 4 {
            return Err(ConfigError::InvalidFigure {
                field: "switch_radix",
                value: self.switch_radix as f64,
                expected: "an integer >= 4",
            });
        }
        if self.in_network_reduction_efficiency != 0.0 {
            fraction("in_network_reduction_efficiency", self.in_network_reduction_efficiency, 2.0)?;
        }
        Ok(())
    }
}

/// The largest leaf oversubscription a topology may have: 64:1 (EST: deployed fabrics run 1:1 to 4:1, NVIDIA DGX
/// SuperPOD reference architecture and Meta's RoCE paper, SIGCOMM 2024; 2024-08), so a larger one is a typo.
pub const MAX_OVERSUBSCRIPTION: f64 = 64.0;

impl FabricSpec {
    /// Whether the topology can carry the fabric's features: in-network reduction (SHARP) needs rail-aligned
    /// leaves ("It is required to build the cluster topology in such a way that leaf level switches are connected
    /// to the same HCA rail from each server", NVIDIA HPC-X 2.26, NCCL-RDMA-SHARP Plugins, 2026-04); dual
    /// top-of-rack leaves need leaves.
    pub fn check_topology(&self, topology: &TopologySpec) -> Result<(), ConfigError> {
        if self.in_network_reduction_efficiency > 0.0 && topology.kind != TopologyKind::RailFatTree {
            return Err(ConfigError::FabricTopology {
                feature: "in-network reduction (SHARP)",
                needs: "rail-aligned leaves (topology kind rail-fat-tree)",
            });
        }
        if self.dual_tor && !matches!(topology.kind, TopologyKind::FatTree | TopologyKind::RailFatTree) {
            return Err(ConfigError::FabricTopology {
                feature: "dual top-of-rack leaves",
                needs: "a leaf-spine tree (topology kind fat-tree or rail-fat-tree)",
            });
        }
        Ok(())
    }
}

impl TopologySpec {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(self.oversubscription.is_finite() && (1.0..=MAX_OVERSUBSCRIPTION).contains(&self.oversubscription)) {
            return Err(ConfigError::InvalidFigure {
                field: "oversubscription",
                value: self.oversubscription,
                expected: "a number from 1 (non-blocking) to 64",
            });
        }
        if self.kind == TopologyKind::Torus3d && self.oversubscription != 1.0 {
            return Err(ConfigError::InvalidFigure {
                field: "oversubscription",
                value: self.oversubscription,
                expected: "1 on a torus, which has no switches and so no leaf uplinks to oversubscribe",
            });
        }
        if self.kind == TopologyKind::RailFatTree {
            at_least_one("rail_group_nodes", self.rail_group_nodes)?;
        }
        non_negative("host_link_m", self.host_link_m)
    }
}
