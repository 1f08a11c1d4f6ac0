//! The hardware catalogs' fields: GPUs (data/gpus.toml), scale-up domains (scale_up.toml), fabrics
//! (fabrics.toml) and topologies (topologies.toml).

use super::{
    choice, core, fact, flag, grid, int, names, num, sampled, table, text, CatalogSection, CatalogUnit::*, Figure,
    AT_LEAST_ONE, COUNT, FRACTION, GAIN, NON_NEGATIVE, NOT_IN_CORE, POSITIVE, RADIX, RELATIVE, SHARE, SIZE, SPREAD,
};
use crate::hardware::{CollectiveTuner, Forwarding, Generation, LoadBalancing, RailPlanes, TopologyKind};

const G: CatalogSection = CatalogSection::Gpus;
pub(super) const GPUS: &[Figure] = &[
    text(G, "name", NOT_IN_CORE).doc("display name"),
    num(G, "peak_bf16_tflops", Tflops, POSITIVE, core("peak_bf16_flops"), "BF16 peak").doc("dense BF16 tensor peak"),
    num(G, "peak_fp8_tflops", Tflops, NON_NEGATIVE, core("peak_fp8_flops"), "FP8 peak")
        .doc("dense FP8 tensor peak (0 if the GPU has no FP8)"),
    num(G, "peak_fp4_tflops", Tflops, NON_NEGATIVE, core("peak_fp4_flops"), "FP4 peak")
        .doc("dense FP4 (NVFP4, MXFP4) tensor peak, without sparsity (0 if the GPU has no FP4); serving only"),
    num(G, "hbm_gb", Gb, POSITIVE, core("hbm_bytes"), "HBM capacity").doc("HBM capacity (GB: 10^9 bytes)"),
    num(G, "hbm_gbytes_per_s", GbytesPerS, POSITIVE, core("hbm_bytes_per_s"), "HBM bandwidth").doc("HBM bandwidth"),
    num(G, "tdp_w", W, POSITIVE, core("tdp_w"), "GPU power").doc("GPU board power"),
    num(G, "gemm_efficiency", Fraction, FRACTION, core("gemm_efficiency"), "GEMM efficiency").doc(
        "sustained fraction of the 16-bit peak of a transformer layer's GEMMs: the median over layer shapes and the \
            forward, data- and weight-gradient passes, power-limited as in training (`scalefront measure`), not a \
            cool best-case burst",
    ),
    num(G, "small_gemm_efficiency", Fraction, FRACTION, core("small_gemm_efficiency"), "small-GEMM efficiency")
        .doc("the same for layer GEMMs under 50 GFLOP (thin tensor-parallel shards of small models)"),
    num(G, "gemm_efficiency_fp8", Fraction, SHARE, core("gemm_efficiency_fp8"), "FP8 GEMM efficiency")
        .doc("sustained fraction of the FP8 peak of the layer's FP8 GEMMs (0 without FP8)"),
    num(G, "gemm_efficiency_fp4", Fraction, SHARE, core("gemm_efficiency_fp4"), "FP4 GEMM efficiency")
        .doc("best achieved fraction of the FP4 peak on large FP4 GEMMs (0 without FP4)"),
    num(G, "grouped_mm_efficiency", Fraction, FRACTION, core("grouped_mm_efficiency"), "grouped-mm efficiency").doc(
        "sustained fraction of the 16-bit peak of PyTorch's grouped GEMM kernel (`torch._grouped_mm`) on routed \
            experts of many tokens each, forward and backward: the experts' rate in frameworks that run it \
            (`torch_grouped_mm` in `frameworks.toml`)",
    ),
    num(
        G,
        "grouped_mm_efficiency_fp8",
        Fraction,
        SHARE,
        core("grouped_mm_efficiency_fp8"),
        "FP8 grouped-mm efficiency",
    )
    .doc("the same for its FP8 kernel (`torch._scaled_grouped_mm`) over the FP8 peak (0 without FP8)"),
    grid(G, "attention_efficiency", core("attention_efficiency")).doc(
        "fused causal attention, forward+backward, with the best kernel for the GPU (cuDNN or FlashAttention-3 on \
            Hopper/Blackwell, FlashAttention-2 on Ampere): fraction of the 16-bit peak by heads per GPU x sequences \
            per micro-batch (rows: 2, 4, 8, 16, 32, 64, 128) and sequence length (columns: 1,024 to 32,768 \
            tokens, doubling), read between cells in logarithms",
    ),
    grid(G, "attention_efficiency_fa2", core("attention_efficiency_fa2")).doc(
        "the same table with FlashAttention-2-class kernels (PyTorch SDPA's flash backend); runs and evaluations \
            that name `attention_kernel = \"fa2\"` use it",
    ),
    num(G, "hbm_efficiency", Fraction, FRACTION, core("hbm_efficiency"), "HBM efficiency")
        .doc("sustained fraction of HBM bandwidth on streaming kernels (the median of copy and triad)"),
    int(G, "sm_count", COUNT, core("sm_count"), "streaming multiprocessors")
        .doc("streaming multiprocessors (compute units): the tiles one wave of a grouped expert GEMM runs"),
    num(G, "serving_efficiency", Ratio, RELATIVE, core("serving_efficiency"), "serving efficiency").doc(
        "a serving engine's sustained rate over the measured kernel rates (GEMM, attention table, HBM) across its \
            prefill and decode steps (launch gaps, scheduling, sampling); above 1 where its forward-only kernels beat \
            the measured forward, data- and weight-gradient median (H100 FP8 forward GEMMs 0.628 of the peak against \
            0.612); fitted per GPU on the calibration rows of `data/validation/serving_runs.toml` (`scalefront \
            validate --calibrate`)",
    ),
    num(G, "runtime_reserve_gb", Gb, NON_NEGATIVE, core("runtime_reserve_bytes"), "runtime reserve").doc(
        "HBM not available to the model: CUDA/ROCm context, library workspaces, collective buffers, allocator \
            fragmentation",
    ),
    int(G, "server_gpus", COUNT, core("server_gpus"), "GPUs per server").doc("GPUs per server (node)"),
    num(G, "host_power_w", W, NON_NEGATIVE, core("host_power_w"), "host power per GPU")
        .doc("server power per GPU beyond the GPU itself (CPU, NICs, fans, PSU losses)"),
    text(G, "default_scale_up", NOT_IN_CORE).doc("id in `scale_up.toml` used when the user names none"),
    fact(G, "scale_up_link").doc(
        "the GPU's own scale-up port (`nvlink3`, `nvlink4`, `nvlink5`, `xgmi`, ...): the GPU joins only domains \
            whose `link` is the same, or PCIe domains",
    ),
    num(G, "speed_cv", Ratio, SPREAD, core("speed_cv"), "GPU speed spread").doc(
        "coefficient of variation of speed between GPUs of this type in one cluster: a synchronous step waits for \
            the slowest of N, E[max of N normals] x `speed_cv` of its GPU-bound time (`overhead_s`)",
    ),
    choice(G, "generation", core("generation"), || Generation::INFO.names())
        .doc("the regime of the prediction intervals (`model_error.toml`)"),
    names(G, "device_names").doc(
        "what nccl-tests' Rank lines call the GPU (part of the CUDA device name: `H100` in `NVIDIA H100 80GB HBM3`): \
            `scalefront calibrate` tells a log's GPU by them, the longest name that every line contains",
    ),
    table(G, "measured").doc(
        "kernel rates `scalefront measure` recorded on the GPU, by GEMM shape, attention heads and tokens per expert \
            (the `[<id>.measured]` table): the record the figures above are fitted from; the model reads the figures",
    ),
];

const U: CatalogSection = CatalogSection::ScaleUp;
pub(super) const SCALE_UP: &[Figure] = &[
    text(U, "name", NOT_IN_CORE).doc("display name"),
    choice(U, "kind", NOT_IN_CORE, || vec!["nvlink", "pcie", "infinity-fabric"]).doc("the domain's technology"),
    num(U, "gbytes_per_s", GbytesPerS, POSITIVE, core("bytes_per_s"), "scale-up bandwidth")
        .doc("unidirectional bandwidth per GPU into the domain"),
    int(U, "domain_gpus", COUNT, core("domain_gpus"), "domain size").doc("GPUs that share the domain (8, 72, 576)"),
    num(U, "step_latency_us", Us, NON_NEGATIVE, core("step_latency_s"), "scale-up step latency")
        .doc("latency of one step of a ring collective over this link with NCCL's Simple protocol"),
    num(U, "ring_efficiency", Fraction, FRACTION, core("ring_efficiency"), "scale-up ring efficiency")
        .doc("achieved ring bus bandwidth / `gbytes_per_s` (nccl-tests busbw)"),
    num(
        U,
        "in_switch_allreduce_efficiency",
        Ratio,
        GAIN,
        core("in_switch_allreduce_efficiency"),
        "in-switch reduction gain",
    )
    .doc("all-reduce bus bandwidth with in-switch reduction (NVLS) / `gbytes_per_s`; 0 when the domain has none"),
    num(U, "switch_trays_per_domain", Count, NON_NEGATIVE, core("switch_trays_per_domain"), "switch trays per domain")
        .doc("NVLink switch trays per domain bought beside the servers (NVL72: 9); 0 when on the baseboard"),
    fact(U, "link").doc(
        "the GPU port the domain's switches (or mesh) connect: an NVSwitch generation switches one NVLink \
            generation (NVSwitch gen3: `nvlink4`); `pcie` joins any GPU",
    ),
    num(U, "ll_step_latency_us", Us, NON_NEGATIVE, core("ll_step_latency_s"), "scale-up LL step latency")
        .doc("latency of one ring step with NCCL's LL protocol (NCCL's tuning table unless calibrated)"),
    num(U, "ll128_step_latency_us", Us, NON_NEGATIVE, core("ll128_step_latency_s"), "scale-up LL128 step latency")
        .doc("latency of one ring step with NCCL's LL128 protocol (NCCL's tuning table unless calibrated)"),
    int(U, "nccl_channels", COUNT, core("nccl_channels"), "NCCL channels")
        .doc("channels NCCL opens for a ring inside the domain (8 x H100: 24)"),
    int(U, "compute_capability", COUNT, core("compute_capability"), "compute capability").doc(
        "compute capability (major) of the GPUs the domain joins: the rows of NCCL's tuning tables (8 Ampere, 9 \
            Hopper, 10 Blackwell)",
    ),
];

const F: CatalogSection = CatalogSection::Fabrics;
pub(super) const FABRICS: &[Figure] = &[
    text(F, "name", NOT_IN_CORE).doc("display name"),
    choice(F, "kind", NOT_IN_CORE, || vec!["infiniband", "roce", "uec", "efa", "tcp"]).doc("the fabric's family"),
    fact(F, "nic").doc(
        "the NIC generation and NCCL transport (`connectx-7-400g`, ...): fabrics that name the same NIC share its \
            `efficiency`, `nic_latency_us` and LL/LL128 step savings (NCCL's net_ib transport and its tuning tables \
            do not tell InfiniBand from RoCE); a test holds them equal",
    ),
    num(F, "link_gbps", Gbps, POSITIVE, sampled!(fabric, link_bytes_per_s), "line rate")
        .doc("line rate of one NIC port"),
    int(F, "links_per_gpu", COUNT, core("links_per_gpu"), "NIC ports per GPU")
        .doc("NIC ports per GPU (EFA p5: 4 x 100G per GPU)"),
    int(F, "gpus_per_link", COUNT, core("gpus_per_link"), "GPUs per NIC port").doc(
        "GPUs that share one NIC port: 1, or 2 where a server has half a NIC per GPU (DGX-2: 8 EDR ports for 16 \
            GPUs)",
    ),
    num(F, "efficiency", Fraction, FRACTION, sampled!(fabric, efficiency), "bus-bandwidth efficiency").doc(
        "achieved ring bus bandwidth between two nodes, no congestion (nccl-tests), / the wire's payload rate \
            (line rate x `mtu_bytes / (mtu_bytes + header_bytes)`): one figure per NIC generation",
    ),
    num(F, "nic_latency_us", Us, NON_NEGATIVE, sampled!(fabric, nic_latency_s), "NIC latency")
        .doc("one-message latency through both NICs and host software, no switch"),
    num(F, "switch_hop_latency_us", Us, NON_NEGATIVE, sampled!(fabric, switch_hop_latency_s), "switch hop latency")
        .doc("latency added per switch traversed"),
    int(F, "switch_radix", RADIX, core("switch_radix"), "switch radix").doc("ports per switch at `link_gbps`"),
    num(
        F,
        "in_network_reduction_efficiency",
        Ratio,
        GAIN,
        sampled!(fabric, in_network_reduction_efficiency),
        "in-network reduction gain",
    )
    .doc("all-reduce bus bandwidth with in-network reduction (SHARP) / line rate; 0 when the fabric has none"),
    choice(F, "load_balancing", core("load_balancing"), || LoadBalancing::INFO.names()).doc(
        "how flows that leave a leaf are spread: `ecmp` (each queue pair hashed once; collisions computed from \
            flows, uplinks and queue pairs), `dlb` (flowlet re-binding in the switch: Tomahawk 5), `adaptive` \
            (switches pick the least-loaded port: InfiniBand AR, Spectrum-X) or `spraying` (per-packet, \
            out-of-order placement: Ultra Ethernet, AWS SRD); the last three are never slower than ECMP",
    ),
    num(
        F,
        "load_balance_efficiency",
        Fraction,
        FRACTION,
        sampled!(fabric, load_balance_efficiency),
        "load-balance efficiency",
    )
    .doc(
        "uplink capacity leaf-crossing traffic keeps once the mechanism has spread it (its own loss, where it is \
            below ECMP's; 1 for plain ECMP, whose collisions are computed)",
    ),
    num(
        F,
        "qps_per_connection",
        Count,
        AT_LEAST_ONE,
        sampled!(fabric, qps_per_connection),
        "queue pairs per connection",
    )
    .doc(
        "queue pairs per connection (NCCL_IB_QPS_PER_CONNECTION; sockets for TCP): each is hashed separately by \
            ECMP; NCCL opens 2 channels per NIC",
    ),
    num(F, "tail_latency_factor", Ratio, AT_LEAST_ONE, sampled!(fabric, tail_latency_factor), "tail latency factor")
        .doc(
            "latency-bound network time under load / unloaded (PFC pauses, incast, congestion control); multiplies \
            every network message's latency",
        ),
    choice(F, "collective_tuner", core("collective_tuner"), || CollectiveTuner::INFO.names()).doc(
        "who picks each collective's algorithm and protocol: `nccl` (NCCL's cost model: the fastest) or \
            `aws-ofi-p5` (aws-ofi-nccl's region tuner on p5/p5e, fixed choices by message size and ranks)",
    ),
    choice(F, "forwarding", core("forwarding"), || Forwarding::INFO.names())
        .doc("how a switch forwards a packet: `store-and-forward` adds one `mtu_bytes` serialisation per switch"),
    num(F, "mtu_bytes", Bytes, POSITIVE, sampled!(fabric, mtu_bytes), "MTU").doc("largest packet"),
    num(F, "header_bytes", Bytes, NON_NEGATIVE, core("header_bytes"), "header bytes per packet").doc(
        "bytes a full packet carries on the wire beyond its payload: InfiniBand 26 (LRH, BTH, ICRC, VCRC), RoCEv2 82 \
            (Ethernet, IPv4, UDP, BTH, ICRC, FCS, preamble and gap); 0 where `efficiency` already includes them",
    ),
    int(
        F,
        "in_network_groups_per_leaf",
        SIZE,
        core("in_network_groups_per_leaf"),
        "in-network reduction groups per leaf",
    )
    .doc(
        "groups that can run in-network reduction at once through one leaf (SHARP on Quantum HDR: 1 per switch; 0 \
            = no limit)",
    ),
    num(F, "ll_step_saving_us", Us, NON_NEGATIVE, core("ll_step_saving_s"), "LL step saving").doc(
        "time NCCL's LL protocol saves per network ring step against Simple (whose step is the network latency), \
            from its NIC and host part (`nic_latency_us`; the switches and the tail stay); fitted per NIC and \
            transport on the named calibration curves (`scalefront validate --calibrate-protocols`)",
    ),
    num(F, "ll128_step_saving_us", Us, NON_NEGATIVE, core("ll128_step_saving_s"), "LL128 step saving").doc(
        "time NCCL's LL128 protocol saves per network ring step against Simple, from its NIC and host part; \
            fitted per NIC and transport on the named calibration curves (`scalefront validate \
            --calibrate-protocols`)",
    ),
    num(F, "uplink_speedup", Ratio, AT_LEAST_ONE, core("uplink_speedup"), "uplink speed / NIC speed").doc(
        "leaf uplink port speed / NIC port speed (MegaScale: 2): the oversubscription sets the uplinks' bandwidth, \
            this how few and how wide they are; wider paths collide less under ECMP",
    ),
    flag(F, "dual_tor", core("dual_tor")).doc(
        "each NIC port split over two leaves (Alibaba HPN dual-ToR): twice the host links at half the rate, the same \
            leaf bandwidth, and a leaf failure no longer stops the job; needs a leaf-spine tree",
    ),
    text(F, "default_mode", NOT_IN_CORE)
        .doc("the operating mode a bare fabric id means (`roce-400g` is `roce-400g@untuned`); only with `modes`"),
    table(F, "modes").doc(
        "named operating modes (`[<id>.modes.<mode>]`): each a `summary` and the figures it overrides, with their \
            sources; `<id>@<mode>` names the fabric in that mode wherever a fabric id goes",
    ),
];

const T: CatalogSection = CatalogSection::Topologies;
pub(super) const TOPOLOGIES: &[Figure] = &[
    text(T, "name", NOT_IN_CORE).doc("display name"),
    choice(T, "kind", core("kind"), || TopologyKind::INFO.names()).doc("how the network is wired"),
    num(T, "oversubscription", Ratio, AT_LEAST_ONE, core("oversubscription"), "oversubscription")
        .doc("leaf downlink / uplink bandwidth (1 = non-blocking); a user may override it"),
    int(T, "rail_group_nodes", COUNT, core("rail_group_nodes"), "servers per rail group")
        .doc("rail-fat-tree only: servers in one rail-aligned scalable unit"),
    choice(T, "rail_planes", core("rail_planes"), || RailPlanes::INFO.names()).doc(
        "rail-fat-tree only: `shared` (rail-aligned leaves under shared spines and, beyond two tiers, a core: the \
            DGX SuperPOD H100/B200 design) or `per-rail` (one independent tree per rail; planes that fit a \
            switch share it)",
    ),
    num(T, "host_link_m", M, NON_NEGATIVE, core("host_link_m"), "host cable length").doc(
        "typical NIC-to-leaf (router, neighbour) cable length: the host link is copper when within the fabric's \
            `dac_reach_m`, else optical",
    ),
];
