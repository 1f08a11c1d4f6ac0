//! Running a sweep: the cells to sweep become a numbered list of tasks (one layout, micro-batch and sequence
//! parallelism choice of one cell, evaluated over every schedule choice), processed on the rayon pool in windows
//! of consecutive tasks. A window's pieces are folded and joined in task order, so its streamed rows go out in
//! enumeration order and memory is bounded by the window, not by the space.

use std::ops::Range;
use std::sync::mpsc::SyncSender;

use rayon::prelude::*;

use crate::error::ConfigError;
use crate::evaluate::{finish, ClusterParts, ClusterStage, LayoutStage};
use crate::prices::Prices;
use crate::step::parallelism::{Parallelism, Training};

use super::accumulate::{Accumulator, FrontierKey};
use super::cells::{cluster_cells, costs_of, ClusterCell};
use super::{
    factorizations, inner_combinations, reason_index, Choice, Counts, Progress, RowChunk, SweepResult, SweepSpace,
    CHUNK_ROWS, PARALLEL_AXES, REASONS,
};

/// Tasks per thread in a window when no rows are streamed (the window only bounds the cluster stages built).
const WINDOW_TASKS_PER_THREAD: u64 = 4096;
/// Rows per thread a window may buffer when rows are streamed (a row is ~0.6 kB: 8,192 rows ~5 MB per thread).
const WINDOW_ROWS_PER_THREAD: u64 = 8192;

/// A sweep of some cells, set up once: where each task's cell and layout are.
struct Plan<'a> {
    space: &'a SweepSpace,
    /// The cells to sweep, ascending: (index, cell).
    cells: Vec<(u32, ClusterCell)>,
    /// Layouts (tp, pp, cp, dp, ep) per GPU-count index.
    layouts: Vec<Vec<[u32; 5]>>,
    /// The training run per precision index.
    trainings: Vec<Training>,
    /// The first task of each cell; the last entry is the number of tasks.
    offsets: Vec<u64>,
    /// Positions in `PARALLEL_AXES` of the grouped parallel axes.
    group_axes: Vec<usize>,
    n_obj: usize,
    /// Schedule choices per task.
    inner: u64,
    stream_rows: bool,
}

impl<'a> Plan<'a> {
    fn new(space: &'a SweepSpace, cells: &[u32], stream_rows: bool) -> Self {
        let all = cluster_cells(space);
        let cells: Vec<(u32, ClusterCell)> = cells.iter().map(|&i| (i, all[i as usize])).collect();
        let layouts: Vec<Vec<[u32; 5]>> = space.gpu_counts.par_iter().map(|&n| factorizations(space, n)).collect();
        let per_layout = (space.micro_batch.len() * space.sequence_parallel.len()) as u64;
        let mut offsets = Vec::with_capacity(cells.len() + 1);
        let mut next = 0u64;
        for (_, cell) in &cells {
            offsets.push(next);
            next += layouts[cell[2] as usize].len() as u64 * per_layout;
        }
        offsets.push(next);
        Plan {
            space,
            cells,
            layouts,
            trainings: (0..space.precisions.len()).map(|p| space.training(p)).collect(),
            offsets,
            group_axes: PARALLEL_AXES
                .iter()
                .enumerate()
                .filter(|(_, a)| space.group_by.contains(a))
                .map(|(i, _)| i)
                .collect(),
            n_obj: space.objectives.len().min(3),
            inner: inner_combinations(space),
            stream_rows,
        }
    }

    fn tasks(&self) -> u64 {
        *self.offsets.last().unwrap_or(&0)
    }

    /// Consecutive task ranges, sized for the current pool.
    fn windows(&self) -> impl Iterator<Item = Range<u64>> {
        let threads = rayon::current_num_threads().max(1) as u64;
        let size = if self.stream_rows {
            (WINDOW_ROWS_PER_THREAD * threads / self.inner.max(1)).max(threads)
        } else {
            WINDOW_TASKS_PER_THREAD * threads
        };
        let tasks = self.tasks();
        (0..tasks.div_ceil(size)).map(move |w| w * size..((w + 1) * size).min(tasks))
    }

    /// The position in `cells` of the cell task `t` belongs to.
    fn cell_of(&self, t: u64) -> usize {
        self.offsets.partition_point(|&o| o <= t) - 1
    }

    /// `cell_of(t)`, trying first the cell of the previous task a worker took (`hint`) and the one after it.
    fn cell_near(&self, t: u64, hint: usize) -> usize {
        for pos in [hint, hint + 1] {
            if pos + 1 < self.offsets.len() && self.offsets[pos] <= t && t < self.offsets[pos + 1] {
                return pos;
            }
        }
        self.cell_of(t)
    }

    /// The configuration task `t` starts from: its cell, layout, micro-batch and sequence parallelism; schedule
    /// axes at their first value. `hint`: the cell of the worker's previous task.
    fn task(&self, t: u64, hint: usize) -> (usize, Choice, Parallelism) {
        let pos = self.cell_near(t, hint);
        let (_, [g, su, c, f, tp_, w, p]) = self.cells[pos];
        let local = t - self.offsets[pos];
        let (mbs, sps) = (self.space.micro_batch.len() as u64, self.space.sequence_parallel.len() as u64);
        let (layout, mi, si) = ((local / (mbs * sps)) as usize, ((local / sps) % mbs) as usize, (local % sps) as usize);
        let [tp, pp, cp, dp, ep] = self.layouts[c as usize][layout];
        let choice = Choice {
            gpu: g,
            scale_up: su,
            gpus: c,
            fabric: f,
            topology: tp_,
            framework: w,
            precision: p,
            tp,
            pp,
            dp,
            cp,
            ep,
            vpp: 0,
            micro_batch: mi as u32,
            sequence_parallel: si as u32,
            recompute: 0,
            zero: 0,
            overlap: 0,
        };
        let par = self.space.layout_parallelism(
            [tp, pp, cp, dp, ep],
            self.space.micro_batch[mi],
            self.space.sequence_parallel[si],
        );
        (pos, choice, par)
    }

    /// Every price of the cell at `pos`.
    fn prices(&self, pos: usize) -> Prices {
        let [g, su, _, f, _, _, _] = self.cells[pos].1;
        self.space.prices(&self.space.gpus[g as usize], &self.space.fabrics[f as usize], su as usize)
    }

    /// The cluster stage of the cell at `pos` (borrowing its prices).
    fn cluster_stage<'p>(&'p self, pos: usize, prices: &'p Prices) -> Result<ClusterStage<'p>, ConfigError> {
        let s = self.space;
        let [g, su, c, f, t, w, p] = self.cells[pos].1;
        ClusterStage::from_parts(ClusterParts {
            model: &s.model,
            gpu: &s.gpus[g as usize].spec,
            scale_up: &s.scale_ups[su as usize].spec,
            fabric: &s.fabrics[f as usize].spec,
            topology: &s.topologies[t as usize],
            framework: &s.frameworks[w as usize],
            prices,
            training: &self.trainings[p as usize],
            reliability: &s.reliability,
            errors: &s.errors,
            gpus: s.gpu_counts[c as usize],
        })
    }
}

/// The cluster stages of the cells a window touches, built once per window.
struct WindowStages<'p> {
    first: usize,
    stages: Vec<Result<ClusterStage<'p>, ConfigError>>,
}

fn build_stages<'p>(plan: &'p Plan<'_>, prices: &'p [Prices], first: usize) -> WindowStages<'p> {
    let stages = prices.par_iter().enumerate().map(|(i, pr)| plan.cluster_stage(first + i, pr)).collect();
    WindowStages { first, stages }
}

/// Evaluate every schedule choice of the configurations `choice` / `par` hold (a recompute, ZeRO and overlap
/// loop at one vpp), offering each feasible one to the accumulator.
fn evaluate_schedules(
    plan: &Plan<'_>,
    cluster: &ClusterStage,
    stage: &LayoutStage,
    task: (u32, u64),
    par: &mut Parallelism,
    choice: &mut Choice,
    acc: &mut Accumulator,
) {
    let space = plan.space;
    let (cell, t) = task;
    for (ri, &recompute) in space.recompute.iter().enumerate() {
        par.recompute = recompute;
        choice.recompute = ri as u32;
        for (zi, &zero) in space.zero.iter().enumerate() {
            par.zero_stage = zero;
            choice.zero = zi as u32;
            for (oi, overlap) in space.overlap.iter().enumerate() {
                choice.overlap = oi as u32;
                match finish(cluster, stage, par, overlap) {
                    Err(err) => acc.counts.rejected[reason_index(&err)] += 1,
                    Ok(e) if !e.feasible => acc.counts.rejected[REASONS.len() - 1] += 1,
                    Ok(e) => {
                        acc.counts.feasible += 1;
                        if let Some(rows) = acc.rows.as_mut() {
                            rows.push(t, *choice, e.clone());
                        }
                        let mut objectives = [0.0; 3];
                        for (i, o) in space.objectives.iter().take(3).enumerate() {
                            objectives[i] = o.0.minimised(&e);
                        }
                        acc.offer(frontier_key(plan, cell, choice), *choice, e, objectives, plan.n_obj);
                    }
                }
            }
        }
    }
}

fn frontier_key(plan: &Plan<'_>, cell: u32, choice: &Choice) -> FrontierKey {
    let mut group = [0u32; 11];
    for &a in &plan.group_axes {
        group[a] = choice.axis(PARALLEL_AXES[a]);
    }
    (cell, group)
}

/// Evaluate one task: every schedule choice (vpp, recompute, ZeRO, overlap) of one layout of one cell, reusing
/// the cluster and layout stages. Returns its work (see `cells::cell_costs`): 1 when the cluster or the layout
/// is impossible (every choice rejected at once), else one per schedule choice.
fn evaluate_task(
    plan: &Plan<'_>,
    cluster: &Result<ClusterStage, ConfigError>,
    task: (u32, u64),
    par: &mut Parallelism,
    choice: &mut Choice,
    acc: &mut Accumulator,
) -> u64 {
    let (space, inner) = (plan.space, plan.inner);
    acc.counts.evaluated += inner;
    let cluster = match cluster {
        Ok(c) => c,
        Err(e) => {
            acc.counts.rejected[reason_index(e)] += inner;
            return 1;
        }
    };
    let per_vpp = inner / space.vpp.len() as u64;
    let mut stage: Option<LayoutStage> = None;
    for (vi, &vpp) in space.vpp.iter().enumerate() {
        par.vpp = vpp;
        choice.vpp = vi as u32;
        if stage.as_ref().is_none_or(|s| !s.serves(&space.model, par)) {
            match LayoutStage::new(cluster, par) {
                Ok(s) => stage = Some(s),
                Err(e) => {
                    if vi == 0 && degrees_impossible(cluster, par) {
                        // The degrees themselves are impossible (whatever the vpp): every choice is too.
                        acc.counts.rejected[reason_index(&e)] += inner;
                        return 1;
                    }
                    // Only this vpp is (the layers do not split over pp x vpp chunks, or vpp needs pp > 1).
                    acc.counts.rejected[reason_index(&e)] += per_vpp;
                    stage = None;
                    continue;
                }
            }
        }
        if let Some(s) = stage.as_ref() {
            evaluate_schedules(plan, cluster, s, task, par, choice, acc);
        }
    }
    inner
}

/// Whether `par`'s degrees are impossible without interleaving (vpp 1): a layout that fails then fails at every
/// vpp (divisibility by pp x vpp implies divisibility by pp), so the whole task is rejected at once.
fn degrees_impossible(cluster: &ClusterStage, par: &mut Parallelism) -> bool {
    let vpp = par.vpp;
    par.vpp = 1;
    let impossible = LayoutStage::new(cluster, par).is_err();
    par.vpp = vpp;
    impossible
}

/// Process task `t` into `acc` (unless cancelled), holding at the pause gate first, and report it to `progress`.
fn process_task(
    plan: &Plan<'_>,
    stages: &WindowStages<'_>,
    progress: &Progress,
    mut acc: Accumulator,
    t: u64,
) -> Accumulator {
    progress.wait_if_paused();
    if progress.cancelled() {
        return acc;
    }
    let (pos, mut choice, mut par) = plan.task(t, acc.cell_hint);
    acc.cell_hint = pos;
    let before = acc.counts;
    let cell = plan.cells[pos].0;
    let work = evaluate_task(plan, &stages.stages[pos - stages.first], (cell, t), &mut par, &mut choice, &mut acc);
    acc.counts.work += work;
    progress.record(&delta(&acc.counts, &before));
    acc
}

fn delta(after: &Counts, before: &Counts) -> Counts {
    let mut d = Counts {
        evaluated: after.evaluated - before.evaluated,
        feasible: after.feasible - before.feasible,
        work: after.work - before.work,
        ..Counts::default()
    };
    for (i, r) in d.rejected.iter_mut().enumerate() {
        *r = after.rejected[i] - before.rejected[i];
    }
    d
}

/// Run one window of tasks on the pool: fold and join in task order.
fn run_window(plan: &Plan<'_>, window: Range<u64>, progress: &Progress) -> Accumulator {
    let first = plan.cell_of(window.start);
    let last = plan.cell_of(window.end - 1);
    let prices: Vec<Prices> = (first..=last).map(|pos| plan.prices(pos)).collect();
    let stages = build_stages(plan, &prices, first);
    window
        .into_par_iter()
        .fold(|| Accumulator::new(plan.stream_rows), |acc, t| process_task(plan, &stages, progress, acc, t))
        .reduce(|| Accumulator::new(plan.stream_rows), |a, b| a.merge(b, plan.n_obj))
}

/// Send a window's rows in enumeration order, in chunks of at most `CHUNK_ROWS` (each send blocks while the
/// receiver is behind, which bounds memory). A closed receiver means the caller stopped listening: drop them.
fn send_rows(acc: &mut Accumulator, sink: &SyncSender<RowChunk>) -> bool {
    let Some(rows) = acc.rows.take() else { return true };
    let rows = rows.into_enumeration_order();
    let mut choices = rows.choices.into_iter();
    let mut evaluations = rows.evaluations.into_iter();
    loop {
        let chunk = RowChunk {
            choices: choices.by_ref().take(CHUNK_ROWS).collect(),
            evaluations: evaluations.by_ref().take(CHUNK_ROWS).collect(),
        };
        if chunk.choices.is_empty() {
            return true;
        }
        if sink.send(chunk).is_err() {
            return false;
        }
    }
}

/// Sweep the given cells (indices into `cluster_cells(space)`, ascending, each once) on the current rayon pool,
/// after planning them (their tasks, and their estimated work, published as `progress.work_total()`).
/// `rows`, when given, receives every feasible configuration of those cells in enumeration order, in chunks
/// (the send blocks when the receiver falls behind, so memory stays bounded). Set `progress.cancel` to stop
/// early: the result then says `cancelled`. The result of a set of cells does not depend on the pool's size
/// nor on which other cells are swept: the kept rows of a union of disjoint sets are the union of their kept rows.
pub fn run_cells(
    space: &SweepSpace,
    cells: &[u32],
    progress: &Progress,
    rows: Option<&SyncSender<RowChunk>>,
) -> SweepResult {
    // A paused sweep is held before it plans too (planning a huge space takes a while, and a caller holding the
    // gate must be able to cancel it before any of that work).
    progress.wait_if_paused();
    let plan = Plan::new(space, cells, rows.is_some());
    let mut total = Accumulator::new(false);
    let designs: Vec<ClusterCell> = plan.cells.iter().map(|&(_, cell)| cell).collect();
    if let Some(costs) = costs_of(space, &designs, Some(progress)) {
        progress.set_work_total(costs.iter().fold(0u64, |a, &c| a.saturating_add(c)));
    }
    let mut listening = true;
    for window in plan.windows() {
        if progress.cancelled() {
            break;
        }
        let mut acc = run_window(&plan, window, progress);
        if let (Some(sink), true) = (rows, listening) {
            listening = send_rows(&mut acc, sink);
        }
        acc.rows = None;
        total = total.merge(acc, plan.n_obj);
    }
    let counts = total.counts;
    SweepResult {
        kept: total.into_kept(),
        evaluated: counts.evaluated,
        feasible: counts.feasible,
        rejected: counts.rejected,
        cancelled: progress.cancelled(),
    }
}

/// Sweep every cell of the space (see `run_cells`).
pub fn run(space: &SweepSpace, progress: &Progress, rows: Option<&SyncSender<RowChunk>>) -> SweepResult {
    let all: Vec<u32> = (0..cluster_cells(space).len() as u32).collect();
    run_cells(space, &all, progress, rows)
}
