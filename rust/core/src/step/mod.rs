//! One training step: the model (`workload`), how it is split over the GPUs (`parallelism`), what each GPU
//! computes (`compute`) and holds (`memory`), expert dispatch (`moe`), and the staged evaluation that puts them
//! together with the network and the costs (`evaluate`).

pub mod compute;
pub mod evaluate;
pub mod memory;
pub mod moe;
pub mod parallelism;
pub mod workload;
