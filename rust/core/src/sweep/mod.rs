//! Sweeps: evaluate every configuration of a space on all cores and keep only what can still be on a Pareto
//! frontier, plus counts (evaluated, feasible, rejected by reason). Memory stays flat as the space grows.
//!
//! The space is a product of cluster axes (GPU, scale-up domain, GPU count, fabric, topology, precision) and
//! parallel axes (tp, pp, cp, dp, ep, micro-batch, sequence parallelism, vpp, recompute, ZeRO, overlap). A
//! *cell* is one cluster design; its frontiers are kept per value of any parallel axes the caller groups by. The
//! Pareto frontier of any coarser group (per fabric, per GPU count, ...) is contained in the union of its cells'
//! frontiers, so keeping each cell's non-dominated sets loses nothing the caller can ask for, and a sweep split
//! by cells (`cells`: shards for other processes or machines) merges exactly. Each configuration is evaluated
//! by the same staged code as `evaluate` (cluster, layout, schedule stages), reusing the first two stages.
//!
//! Modules: `space` describes the space (its axes, its lists of options, one configuration as a `Choice`);
//! `count` counts it and lists a GPU count's layouts; `cells` numbers the cells, counts and estimates their cost
//! and splits them into shards; `engine` runs a set of cells on the rayon pool in windows of tasks, streaming rows
//! in enumeration order;
//! `accumulate` holds the per-cell frontiers and counts the workers fold into; `progress` is the live state a
//! watcher polls (counts, cancellation, a pause gate).

use crate::evaluate::Evaluation;

mod accumulate;
pub mod cells;
mod count;
mod engine;
mod progress;
mod space;

pub use cells::{cell_costs, cell_sizes, cluster_cells, shard_ranges, ClusterCell};
pub use count::{factorizations, layout_count, space_size};
pub(crate) use count::{inner_combinations, outer_combinations};
pub use engine::{run, run_cells};
pub(crate) use progress::{reason_index, Counts};
pub use progress::{Progress, REASONS};
pub(crate) use space::PARALLEL_AXES;
pub use space::{Axis, Choice, DegreeAxis, FabricOption, GpuOption, Objective, ScaleUpOption, SweepSpace};

/// A configuration kept on a cell's frontier.
#[derive(Clone, Debug, PartialEq)]
pub struct Kept {
    pub choice: Choice,
    pub evaluation: Evaluation,
    pub objectives: [f64; 3],
}

/// What a sweep returns: the kept configurations in a deterministic order, and the counts.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepResult {
    pub kept: Vec<Kept>,
    pub evaluated: u64,
    pub feasible: u64,
    pub rejected: [u64; REASONS.len()],
    pub cancelled: bool,
}

/// Every feasible configuration, for `--all` exports: sent in chunks, in enumeration order (cells in index
/// order; in a cell, layouts as `factorizations` lists them, then micro-batch, sequence parallelism, vpp,
/// recompute, ZeRO, overlap), whatever the number of threads.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RowChunk {
    pub choices: Vec<Choice>,
    pub evaluations: Vec<Evaluation>,
}

/// Rows per chunk of the `--all` stream.
pub const CHUNK_ROWS: usize = 16_384;
