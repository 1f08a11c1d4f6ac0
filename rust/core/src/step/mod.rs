//! One training step on one GPU's share of the work: the model (`workload`), how it is split over the GPUs
//! (`parallelism`), what each GPU computes (`compute`) and holds (`memory`), and expert dispatch (`moe`). The
//! staged evaluation that puts them together with the network and the costs is `crate::evaluate`.

pub mod attention;
pub mod compute;
pub mod gradients;
pub mod memory;
pub mod modules;
pub mod moe;
pub mod parallelism;
pub mod recompute;
pub mod shard;
pub mod workload;
