//! scalefront-core: an analytical model of distributed transformer training on a GPU cluster.
//!
//! `evaluate` takes one configuration (model, GPU, scale-up domain, fabric, topology, training framework, prices,
//! parallelism, training run, overlap) and returns its step time and breakdown, memory per GPU, throughput, utilisation,
//! and the time, energy and cost of the run. Pure Rust, no I/O; the Python package loads catalogs and calls
//! it through the `scalefront-python` bindings.

pub mod bounds;
pub mod cost;
pub mod decision;
pub mod error;
pub mod evaluate;
#[cfg(any(test, feature = "examples"))]
pub mod examples;
pub mod figures;
pub mod hardware;
pub mod inputs;
pub mod metrics;
pub mod names;
pub mod network;
pub mod prices;
pub mod records;
pub mod serve;
pub mod software;
pub mod step;
pub mod sweep;

pub use cost::reliability::ReliabilitySpec;
pub use cost::uncertainty::{ErrorModel, ErrorRegime};
pub use error::ConfigError;
pub use evaluate::{evaluate, Config, Evaluation, HiddenComm, StepBreakdown};
pub use hardware::{
    CollectiveTuner, FabricSpec, Forwarding, Generation, GpuSpec, LoadBalancing, RailPlanes, ScaleUpSpec, TopologyKind,
    TopologySpec,
};
pub use prices::{CostMode, Economics, FacilityMode, GpuPrices, NetworkPrices, Prices, ScaleUpPrices};
pub use software::FrameworkSpec;
pub use step::memory::MemoryPerGpu;
pub use step::parallelism::{
    AttentionKernel, Dispatcher, GradDtype, Overlap, Parallelism, Precision, Recompute, Training,
};
pub use step::workload::{MlaSpec, MoeSpec, TransformerSpec};
