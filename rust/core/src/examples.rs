//! Test fixtures (compiled for the crate's tests, and with the `examples` feature for its integration tests and
//! benchmark; not public API): published model configurations, and a reference configuration, Llama 3 70B on
//! 1,024 H100 SXM (NVLink4 servers of 8) over 400G InfiniBand NDR in a rail-optimized fat-tree.
//!
//! The hardware and price figures are modelled on the catalog's entries of the same names (data/*.toml, sources
//! there) but are fixed here for the tests worked by hand: they are not kept in step with the catalog, which the
//! Python tests cover. Where they differ from it today: the H100 is deterministic (`speed_cv` 0); the reference
//! configuration's framework adds nothing to the kernels (`FrameworkSpec::kernels_only`); ib_ndr keeps LL/LL128 step savings of 1.5/1.0 us (the catalog's fit is 0/0); roce_400g forwards
//! cut-through with ib_ndr's savings (the catalog: store-and-forward, 5.25/3.25 us); the prices are an earlier
//! price book's (PUE 1.25, $2.99 per GPU-hour, $280k per server, $2,200 per NIC).

use crate::cost::reliability::ReliabilitySpec;
use crate::cost::uncertainty::ErrorModel;
use crate::evaluate::Config;
use crate::hardware::{
    AttentionTable, CollectiveTuner, FabricSpec, Forwarding, Generation, GpuSpec, LoadBalancing, RailPlanes,
    ScaleUpSpec, TopologyKind, TopologySpec,
};
use crate::prices::{CostMode, Economics, FacilityMode, GpuPrices, NetworkPrices, Prices, ScaleUpPrices};
use crate::serve::{
    AttentionQuantization, KvAdmission, KvCacheDtype, Quantization, Serving, ServingConfig, ServingMode,
};
use crate::software::FrameworkSpec;
use crate::step::parallelism::{Overlap, Parallelism, Recompute, Training};
use crate::step::workload::{MlaSpec, MoeSpec, TransformerSpec};

/// Llama 3 70B (Llama 3 paper, Table 3): 80 layers, 8192 hidden, 64 heads, 8 KV heads, FFN 28672, vocab 128256.
pub fn llama3_70b() -> TransformerSpec {
    TransformerSpec {
        layers: 80,
        hidden: 8192,
        heads: 64,
        kv_heads: 8,
        head_dim: 0,
        ffn_hidden: 28672,
        gated_mlp: true,
        vocab: 128256,
        tied_embeddings: false,
        moe: None,
        mla: None,
    }
}

/// GPT-3 175B (Brown et al. 2020, Table 2.1): 96 layers, 12288 hidden, 96 heads, FFN 4h, tied embeddings.
pub fn gpt3_175b() -> TransformerSpec {
    TransformerSpec {
        layers: 96,
        hidden: 12288,
        heads: 96,
        kv_heads: 96,
        head_dim: 0,
        ffn_hidden: 4 * 12288,
        gated_mlp: false,
        vocab: 50257,
        tied_embeddings: true,
        moe: None,
        mla: None,
    }
}

/// Mixtral 8x7B (Jiang et al. 2024, Table 1): 32 layers, 4096 hidden, 32 heads, 8 KV heads,
/// 8 experts of FFN 14336, top-2, vocab 32000.
pub fn mixtral_8x7b() -> TransformerSpec {
    TransformerSpec {
        layers: 32,
        hidden: 4096,
        heads: 32,
        kv_heads: 8,
        head_dim: 0,
        ffn_hidden: 14336,
        gated_mlp: true,
        vocab: 32000,
        tied_embeddings: false,
        moe: Some(MoeSpec {
            experts: 8,
            top_k: 2,
            ffn_hidden: 14336,
            shared_experts: 0,
            first_dense_layers: 0,
            node_limit: 0,
        }),
        mla: None,
    }
}

/// DeepSeek-V3 (HF config.json; report arXiv 2412.19437 Sec. 2 and 4.2): 61 layers, the first 3 dense, 7168
/// hidden, 128 heads of MLA (q_lora 1536, kv_lora 512, qk 128 + 64 rope, v 128), 256 routed experts of 2048
/// plus one shared, top-8 over at most 4 nodes, vocab 129280.
pub fn deepseek_v3() -> TransformerSpec {
    TransformerSpec {
        layers: 61,
        hidden: 7168,
        heads: 128,
        kv_heads: 128,
        head_dim: 0,
        ffn_hidden: 18432,
        gated_mlp: true,
        vocab: 129280,
        tied_embeddings: false,
        moe: Some(MoeSpec {
            experts: 256,
            top_k: 8,
            ffn_hidden: 2048,
            shared_experts: 1,
            first_dense_layers: 3,
            node_limit: 4,
        }),
        mla: Some(MlaSpec {
            q_lora_rank: 1536,
            kv_lora_rank: 512,
            qk_nope_head_dim: 128,
            qk_rope_head_dim: 64,
            v_head_dim: 128,
        }),
    }
}

/// Hopper's attention table with PyTorch's default backend (cuDNN): the H200's measured table
/// (data/measurements/h200-measure-grid.json and h200-gpu-bench.json, as `scalefront measure --replay` fits it),
/// rows 2-128 heads per GPU, columns 1,024-32,768 tokens.
pub const HOPPER_ATTENTION: AttentionTable = [
    [0.023, 0.059, 0.132, 0.286, 0.374, 0.574],
    [0.046, 0.113, 0.258, 0.346, 0.555, 0.579],
    [0.088, 0.222, 0.321, 0.454, 0.582, 0.554],
    [0.176, 0.283, 0.411, 0.509, 0.540, 0.553],
    [0.227, 0.368, 0.454, 0.535, 0.539, 0.558],
    [0.295, 0.427, 0.489, 0.516, 0.549, 0.555],
    [0.357, 0.406, 0.503, 0.514, 0.545, 0.553],
];
/// The same with the FlashAttention-2 backend.
pub const HOPPER_ATTENTION_FA2: AttentionTable = [
    [0.028, 0.071, 0.114, 0.139, 0.252, 0.287],
    [0.046, 0.090, 0.133, 0.189, 0.276, 0.307],
    [0.063, 0.123, 0.161, 0.237, 0.301, 0.324],
    [0.104, 0.153, 0.212, 0.270, 0.315, 0.329],
    [0.135, 0.198, 0.243, 0.289, 0.320, 0.329],
    [0.172, 0.208, 0.262, 0.301, 0.323, 0.329],
    [0.210, 0.225, 0.274, 0.306, 0.324, 0.329],
];

/// H100 SXM with the measured Hopper kernel figures, deterministic (no speed spread).
pub fn h100() -> GpuSpec {
    GpuSpec {
        peak_bf16_flops: 989e12,
        peak_fp8_flops: 1979e12,
        peak_fp4_flops: 0.0,
        hbm_bytes: 80e9,
        hbm_bytes_per_s: 3.35e12,
        tdp_w: 700.0,
        gemm_efficiency: 0.70,
        small_gemm_efficiency: 0.66,
        gemm_efficiency_fp8: 0.63,
        gemm_efficiency_fp4: 0.0,
        grouped_mm_efficiency: 0.70,
        grouped_mm_efficiency_fp8: 0.63,
        attention_efficiency: HOPPER_ATTENTION,
        attention_efficiency_fa2: HOPPER_ATTENTION_FA2,
        hbm_efficiency: 0.90,
        sm_count: 132,
        serving_efficiency: 1.0,
        runtime_reserve_bytes: 3.5e9,
        server_gpus: 8,
        host_power_w: 575.0,
        speed_cv: 0.0,
        generation: Generation::Hopper,
    }
}

/// NVLink4 in 8-GPU servers, with NVLink SHARP.
pub fn nvlink4() -> ScaleUpSpec {
    ScaleUpSpec {
        bytes_per_s: 450e9,
        domain_gpus: 8,
        step_latency_s: 3.4e-6,
        ring_efficiency: 0.82,
        in_switch_allreduce_efficiency: 1.06,
        switch_trays_per_domain: 0.0,
        ll_step_latency_s: 0.6e-6,
        ll128_step_latency_s: 1.9e-6,
        nccl_channels: 24,
        compute_capability: 9,
    }
}

/// 400G InfiniBand NDR on a 64-port Quantum-2 switch with adaptive routing and SHARP.
pub fn ib_ndr() -> FabricSpec {
    FabricSpec {
        link_bytes_per_s: 50e9,
        links_per_gpu: 1,
        gpus_per_link: 1,
        efficiency: 0.93,
        header_bytes: 0.0,
        nic_latency_s: 5e-6,
        switch_hop_latency_s: 0.2e-6,
        switch_radix: 64,
        in_network_reduction_efficiency: 0.0,
        load_balancing: LoadBalancing::Adaptive,
        load_balance_efficiency: 0.95,
        qps_per_connection: 1.0,
        tail_latency_factor: 1.0,
        forwarding: Forwarding::CutThrough,
        mtu_bytes: 4096.0,
        in_network_groups_per_leaf: 0,
        ll_step_saving_s: 1.5e-6,
        ll128_step_saving_s: 1.0e-6,
        uplink_speedup: 1.0,
        dual_tor: false,
        collective_tuner: CollectiveTuner::Nccl,
    }
}

/// RoCE on a 51.2 Tb/s merchant switch with static ECMP and two queue pairs per connection (after the catalog's
/// roce-400g; see the module doc for where they differ).
pub fn roce_400g() -> FabricSpec {
    FabricSpec {
        efficiency: 0.95,
        switch_radix: 128,
        in_network_reduction_efficiency: 0.0,
        load_balancing: LoadBalancing::Ecmp,
        load_balance_efficiency: 1.0,
        qps_per_connection: 2.0,
        tail_latency_factor: 1.3,
        switch_hop_latency_s: 0.4e-6,
        ..ib_ndr()
    }
}

/// An H100 / NDR price book in rent mode.
pub fn prices() -> Prices {
    Prices {
        gpu: GpuPrices { rent_usd_per_gpu_hour: 2.99, server_usd: 280_000.0, gpus_per_rack: 32.0 },
        network: NetworkPrices {
            nic_usd: 2_200.0,
            switch_usd: 36_000.0,
            nic_optic_usd: 650.0,
            switch_optic_usd: 1_250.0,
            switch_ports_per_optic: 2.0,
            dac_usd: 300.0,
            dac_reach_m: 3.0,
            acc_usd: 500.0,
            acc_reach_m: 5.0,
            fibre_usd: 100.0,
            support_fraction_per_year: 0.12,
            nos_usd_per_switch_year: 0.0,
            spine_switch_premium_usd: 0.0,
            fabric_manager_usd: 0.0,
            nic_w: 25.0,
            switch_w: 750.0,
            nic_optic_w: 8.0,
            switch_optic_w: 17.0,
            fabric_manager_usd_per_endpoint_year: 0.0,
            ops_staff_fte: 0.0,
            ops_staff_fte_per_1000_switches: 0.0,
            ops_wage_premium_fraction: 0.0,
            lead_time_weeks: 0.0,
            incidents_per_year: 0.0,
            incident_stall_s: 0.0,
        },
        scale_up: ScaleUpPrices::default(),
        economics: Economics {
            amortization_years: 5.0,
            pue: 1.25,
            usd_per_kwh: 0.0826,
            gpu_power_fraction: 0.75,
            cost_mode: CostMode::Rent,
            discount_rate: 0.12,
            residual_fraction: 0.15,
            utilisation: 0.8,
            idle_power_fraction: 0.25,
            facility: FacilityMode::Colocation,
            colocation_usd_per_kw_month: 185.0,
            facility_build_usd_per_kw: 11_700.0,
            facility_life_years: 20.0,
            server_spares_fraction: 0.08,
            network_spares_fraction: 0.03,
            installation_fraction: 0.06,
            oob_usd_per_rack: 4_500.0,
            usd_per_fte_year: 0.0,
            gpu_lead_time_weeks: 0.0,
            optic_replacement_fraction_per_year: 0.0,
            switch_replacement_fraction_per_year: 0.0,
            nic_replacement_fraction_per_year: 0.0,
            replacement_labour_usd: 0.0,
        },
    }
}

/// The SuperPOD-style rail-optimized tree: shared spines, leaves in network racks (optical host links).
pub fn rail_fat_tree() -> TopologySpec {
    TopologySpec {
        kind: TopologyKind::RailFatTree,
        oversubscription: 1.0,
        rail_group_nodes: 32,
        rail_planes: RailPlanes::Shared,
        host_link_m: 20.0,
    }
}

/// A fat-tree with top-of-rack leaves (copper host links within DAC reach).
pub fn fat_tree(oversubscription: f64) -> TopologySpec {
    TopologySpec { kind: TopologyKind::FatTree, oversubscription, host_link_m: 2.0, ..rail_fat_tree() }
}

/// Llama 3 70B on 1,024 GPUs: tp 8, pp 4 (vpp 5), dp 32, selective recomputation, overlapped DP.
pub fn reference() -> Config {
    Config {
        model: llama3_70b(),
        gpu: h100(),
        scale_up: nvlink4(),
        fabric: ib_ndr(),
        topology: rail_fat_tree(),
        framework: FrameworkSpec::kernels_only(),
        prices: prices(),
        gpus: 1024,
        parallelism: Parallelism {
            tp: 8,
            pp: 4,
            dp: 32,
            vpp: 5,
            recompute: Recompute::Selective,
            ..Parallelism::default()
        },
        training: Training { global_batch: 1024, seq_len: 8192, tokens: 15e12, ..Training::default() },
        overlap: Overlap { dp: 1.0, tp: 0.0, pp: 0.0, ep: 0.0 },
        reliability: ReliabilitySpec::perfect(),
        errors: ErrorModel::none(),
    }
}

/// A serving layout and workload: one TP 8 instance, chunked prefill, FP8 weights and KV cache, 1,000 tokens in
/// and out, the largest batch the KV cache holds.
pub fn serving() -> Serving {
    Serving {
        tp: 8,
        pp: 1,
        ep: 1,
        dp_attention: 1,
        mode: ServingMode::Colocated,
        prefill_instances: 1,
        decode_instances: 1,
        prefill_tp: 0,
        prefill_ep: 0,
        prefill_dp_attention: 0,
        batch: 0,
        max_num_tokens: 8192,
        input_tokens: 1000.0,
        output_tokens: 1000.0,
        input_tokens_cv: 0.0,
        output_tokens_cv: 0.0,
        quantization: Quantization::Fp8,
        attention_quantization: AttentionQuantization::Same,
        kv_cache_dtype: KvCacheDtype::Fp8,
        kv_cache_fraction: 0.9,
        kv_block_tokens: 32,
        kv_admission: KvAdmission::OnDemand,
        moe_imbalance: 1.0,
        redundant_experts: 0,
        two_batch_overlap: false,
        requests: 0,
        max_output_tokens: 0,
    }
}

/// Llama 3 70B served on 8 H100s over InfiniBand NDR (`serving()`).
pub fn serving_config() -> ServingConfig {
    ServingConfig {
        model: llama3_70b(),
        gpu: h100(),
        scale_up: nvlink4(),
        fabric: ib_ndr(),
        topology: rail_fat_tree(),
        prices: prices(),
        gpus: 8,
        serving: serving(),
    }
}
