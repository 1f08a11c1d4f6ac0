//! One fabric: the topology built for a cluster (`topology`), how its load-balancing spreads traffic
//! (`loadbalance`), the parts it is built from (`bom`), NCCL's protocol and algorithm tables (`nccl`), and the
//! time of each collective over a communication group (`collectives`).

pub mod bom;
pub mod collectives;
pub mod loadbalance;
pub mod nccl;
pub mod placement;
pub mod topology;
