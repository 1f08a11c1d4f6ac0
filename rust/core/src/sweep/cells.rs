//! Cells of a space: their numbering, exact sizes, estimated costs, and the split of a space into shards.
//!
//! A cell is one cluster design (GPU, scale-up domain, GPU count, fabric, topology, framework, precision). Cells
//! are numbered in enumeration order (GPU, then its scale-up domains, GPU count, fabric, topology, framework,
//! precision), which
//! is also the order of a sweep's streamed rows. A shard is a contiguous range of cells; ranges keep a merged
//! `--all` export a plain concatenation of the shards' exports, in order.

use std::ops::Range;

use rayon::prelude::*;

use crate::evaluate::check_cluster;
use crate::step::parallelism::placement;

use super::{factorizations, inner_combinations, layout_count, outer_combinations, Progress, SweepSpace};

/// One cluster design: indices of GPU, scale-up, GPU count, fabric, topology, framework, precision.
pub type ClusterCell = [u32; 7];

/// Every cell of the space, in enumeration order; a cell's index is its position here.
pub fn cluster_cells(space: &SweepSpace) -> Vec<ClusterCell> {
    let mut cells = Vec::new();
    for (g, gpu) in space.gpus.iter().enumerate() {
        for &su in &gpu.scale_ups {
            for c in 0..space.gpu_counts.len() {
                for f in 0..space.fabrics.len() {
                    for t in 0..space.topologies.len() {
                        for w in 0..space.frameworks.len() {
                            for p in 0..space.precisions.len() {
                                cells.push([g as u32, su as u32, c as u32, f as u32, t as u32, w as u32, p as u32]);
                            }
                        }
                    }
                }
            }
        }
    }
    cells
}

/// Configurations of every cell, exactly, without evaluating any (they add up to `space_size`).
pub fn cell_sizes(space: &SweepSpace) -> Vec<u64> {
    let per_count: Vec<u64> = space
        .gpu_counts
        .iter()
        .map(|&n| layout_count(space, n) * outer_combinations(space) * inner_combinations(space))
        .collect();
    cluster_cells(space).iter().map(|cell| per_count[cell[2] as usize]).collect()
}

/// Tasks of one GPU count (layouts x micro-batch x sequence parallelism) and how many of them pass the layout
/// checks (divisibility of GPUs, heads, global batch, sequence, experts).
fn valid_tasks(space: &SweepSpace, gpus: u32) -> (u64, u64) {
    let training = space.training(0);
    let sp = space.sequence_parallel.len() as u64;
    let mut all = 0;
    let mut valid = 0;
    for [tp, pp, cp, dp, ep] in factorizations(space, gpus) {
        for &micro_batch in &space.micro_batch {
            let par = space.layout_parallelism([tp, pp, cp, dp, ep], micro_batch, false);
            all += sp;
            if placement(&space.model, &par, &training, gpus, 1).is_ok() {
                valid += sp;
            }
        }
    }
    (all, valid)
}

/// The estimated cost of each of `cells`, in work units: a task (one layout, micro-batch and sequence-parallel
/// choice) whose layout or cluster is impossible is rejected before any arithmetic and counts 1; any other task
/// evaluates its schedule choices and counts one per choice. The GPU counts are planned in parallel; None when
/// `progress` is cancelled meanwhile (a huge space takes a while to plan, and must stop when asked).
pub(crate) fn costs_of(space: &SweepSpace, cells: &[ClusterCell], progress: Option<&Progress>) -> Option<Vec<u64>> {
    let mut needed = vec![false; space.gpu_counts.len()];
    for cell in cells {
        needed[cell[2] as usize] = true;
    }
    let per_count: Vec<Option<(u64, u64)>> = (0..space.gpu_counts.len())
        .into_par_iter()
        .map(|c| match (needed[c], progress.is_some_and(Progress::cancelled)) {
            (_, true) => None,
            (false, false) => Some((0, 0)),
            (true, false) => Some(valid_tasks(space, space.gpu_counts[c])),
        })
        .collect();
    let per_count: Vec<(u64, u64)> = per_count.into_iter().collect::<Option<_>>()?;
    let inner = inner_combinations(space);
    let trainings: Vec<_> = (0..space.precisions.len()).map(|p| space.training(p)).collect();
    let cost = |&[g, _, c, f, t, _, p]: &ClusterCell| {
        let (all, valid) = per_count[c as usize];
        let gpus = space.gpu_counts[c as usize];
        let (fabric, topology) = (&space.fabrics[f as usize].spec, &space.topologies[t as usize]);
        match check_cluster(&space.gpus[g as usize].spec, fabric, topology, &trainings[p as usize], gpus) {
            Err(_) => all,
            Ok(()) => valid.saturating_mul(inner).saturating_add(all - valid),
        }
    };
    Some(cells.iter().map(cost).collect())
}

/// The estimated cost of every cell, in work units (see `costs_of`). The engine adds the same units to
/// `Progress::work` as it goes, so the sum of a run's cells is its total work exactly.
pub fn cell_costs(space: &SweepSpace) -> Vec<u64> {
    costs_of(space, &cluster_cells(space), None).unwrap_or_default()
}

/// Split cells with these costs into `shards` contiguous ranges of about equal cost: each cell goes to the shard
/// its cost's midpoint falls in, so a shard's cost is within one cell's cost of total / shards. Ranges cover
/// every cell once, in order; a shard may be empty when there are fewer cells than shards.
pub fn shard_ranges(costs: &[u64], shards: usize) -> Vec<Range<usize>> {
    let n = shards.max(1) as u128;
    let total: u128 = costs.iter().map(|&c| c as u128).sum();
    let mut bounds = vec![0usize];
    let (mut i, mut before) = (0usize, 0u128);
    for k in 1..n {
        // Cell i belongs before boundary k when its midpoint, before + c_i / 2, is below k / n of the total.
        while i < costs.len() && (2 * before + costs[i] as u128) * n < 2 * total * k {
            before += costs[i] as u128;
            i += 1;
        }
        bounds.push(i);
    }
    bounds.push(costs.len());
    bounds.windows(2).map(|w| w[0]..w[1]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_cover_every_cell_once_in_order() {
        // Costs 1..=10 (total 55) in 3 shards: targets 18.3 and 36.7. Midpoints: cell 5 (cost 6) spans 15..21,
        // midpoint 18 < 18.3, so it goes first; cell 6 (cost 7) spans 21..28, midpoint 24.5: second shard.
        // Cell 7 (cost 8) spans 28..36, midpoint 32 < 36.7: second; cell 8 (cost 9) 36..45, midpoint 40.5: third.
        let costs: Vec<u64> = (1..=10).collect();
        let r = shard_ranges(&costs, 3);
        assert_eq!(r, vec![0..6, 6..8, 8..10]);
        let sums: Vec<u64> = r.iter().map(|r| costs[r.clone()].iter().sum()).collect();
        assert_eq!(sums, vec![21, 15, 19]);
    }

    #[test]
    fn more_shards_than_cells_leaves_some_empty() {
        let r = shard_ranges(&[5, 5], 4);
        assert_eq!(r.len(), 4);
        assert_eq!(r.iter().map(|r| r.len()).sum::<usize>(), 2);
        assert!(r.windows(2).all(|w| w[0].end == w[1].start));
        assert_eq!(shard_ranges(&[], 3), vec![0..0, 0..0, 0..0]);
        assert_eq!(shard_ranges(&[1, 2, 3], 1), vec![0..3]);
    }
}
