//! Stage 1 of a serving evaluation: what the cluster fixes whatever the layout (its network, its kernel rates in
//! every number format, what an hour of it costs).

use crate::cost::economics::{run_cost, ClusterCost};
use crate::error::ConfigError;
use crate::hardware::{FabricSpec, GpuSpec, ScaleUpSpec, TopologySpec};
use crate::network::bom::{self, Cabling};
use crate::network::collectives::Interconnect;
use crate::network::topology::Network;
use crate::prices::Prices;
use crate::step::compute::{GemmFormat, Throughput};
use crate::step::parallelism::AttentionKernel;
use crate::step::workload::TransformerSpec;

use super::step::layer_kernels;
use super::{Quantization, ServingConfig};

/// What one cluster design fixes for serving.
#[derive(Clone, Debug)]
pub struct ServingCluster<'a> {
    pub model: &'a TransformerSpec,
    pub gpu: &'a GpuSpec,
    pub scale_up: &'a ScaleUpSpec,
    pub fabric: &'a FabricSpec,
    pub gpus: u32,
    pub(super) network: Network,
    /// Kernel rates with GEMMs in BF16, FP8 and FP4 (`Quantization` order), at the GPU's serving efficiency.
    pub(super) rates: [Throughput; 3],
    /// The cluster's cost per second of service in the economics' cost mode (rent, or own at its levelised TCO).
    pub(super) cost_usd_per_s: f64,
    pub(super) it_power_w: f64,
    pub(super) capex_usd: f64,
    /// Kernels of a dense layer and of a MoE layer (`step::layer_kernels`).
    pub(super) layer_kernels: [f64; 2],
}

impl<'a> ServingCluster<'a> {
    pub fn new(cfg: &'a ServingConfig) -> Result<Self, ConfigError> {
        cfg.validate_figures()?;
        Ok(Self::from_parts(&cfg.model, &cfg.gpu, &cfg.scale_up, &cfg.fabric, &cfg.topology, &cfg.prices, cfg.gpus))
    }

    /// The stage of one cluster design (figures assumed valid).
    pub fn from_parts(
        model: &'a TransformerSpec,
        gpu: &'a GpuSpec,
        scale_up: &'a ScaleUpSpec,
        fabric: &'a FabricSpec,
        topology: &TopologySpec,
        prices: &Prices,
        gpus: u32,
    ) -> Self {
        let network = Network::new(fabric, topology, gpus, gpu.server_gpus);
        let parts = bom::parts(&network, &Cabling::new(&network, topology, prices));
        let cost = ClusterCost::new(gpus, gpu, prices, &parts, scale_up.switch_trays(gpus));
        // One second of service, as a training run's second is priced (rent: GPU-hours; own: the levelised TCO).
        let cost_usd_per_s = run_cost(1.0, gpus, &cost, prices).in_mode(prices.economics.cost_mode);
        let s = gpu.serving_efficiency;
        let rate = |format| Throughput::serving(gpu, format, AttentionKernel::Best, s);
        ServingCluster {
            model,
            gpu,
            scale_up,
            fabric,
            gpus,
            network,
            rates: [rate(GemmFormat::bf16(gpu)), rate(GemmFormat::fp8(gpu)), rate(GemmFormat::fp4(gpu))],
            cost_usd_per_s,
            it_power_w: cost.it_power_w,
            capex_usd: cost.capex_usd(),
            layer_kernels: [layer_kernels(model, false), layer_kernels(model, true)],
        }
    }

    pub(super) fn links(&self) -> Interconnect<'_> {
        Interconnect { scale_up: self.scale_up, fabric: self.fabric, network: &self.network }
    }

    pub(super) fn rate(&self, q: Quantization) -> &Throughput {
        &self.rates[q as usize]
    }

    /// Whether the GPU has tensor cores for the format.
    pub(super) fn supports(&self, q: Quantization) -> bool {
        match q {
            Quantization::Bf16 => true,
            Quantization::Fp8 => self.gpu.peak_fp8_flops > 0.0,
            Quantization::Fp4 => self.gpu.peak_fp4_flops > 0.0,
        }
    }
}
