//! scalefront-core: an analytical model of distributed transformer training on a GPU cluster.
//!
//! `evaluate` takes one configuration (model, GPU, scale-up domain, fabric, topology, prices, parallelism,
//! training run, overlap) and returns its step time and breakdown, memory per GPU, throughput, utilisation,
//! and the time, energy and cost of the run. Pure Rust, no I/O; the Python package loads catalogs and calls
//! it through the `scalefront-python` bindings.

pub mod bom;
pub mod collectives;
pub mod compute;
pub mod economics;
pub mod error;
pub mod evaluate;
pub mod examples;
pub mod hardware;
pub mod loadbalance;
pub mod memory;
pub mod metrics;
pub mod moe;
pub mod montecarlo;
pub mod names;
pub mod nccl;
pub mod parallelism;
pub mod prices;
pub mod reliability;
pub mod roi;
pub mod sweep;
pub mod topology;
pub mod uncertainty;
pub mod workload;

pub use error::ConfigError;
pub use evaluate::{evaluate, Config, Evaluation, HiddenComm, StepBreakdown};
pub use hardware::{
    FabricSpec, Forwarding, Generation, GpuSpec, LoadBalancing, RailPlanes, ScaleUpSpec, TopologyKind, TopologySpec,
};
pub use memory::MemoryPerGpu;
pub use parallelism::{AttentionKernel, Dispatcher, GradDtype, Overlap, Parallelism, Precision, Recompute, Training};
pub use prices::{CostMode, Economics, FacilityMode, GpuPrices, NetworkPrices, Prices, ScaleUpPrices};
pub use reliability::ReliabilitySpec;
pub use uncertainty::{ErrorModel, ErrorRegime};
pub use workload::{MlaSpec, MoeSpec, TransformerSpec};
