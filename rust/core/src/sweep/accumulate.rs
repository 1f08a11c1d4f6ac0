//! What the workers fold into: per-cell Pareto sets, each cell's fastest configuration, counts, and (for `--all`
//! exports) the feasible rows with the task that found them.

use std::collections::BTreeMap;

use crate::evaluate::Evaluation;

use super::{Choice, Counts, Kept, RowChunk};

/// Non-dominated configurations of one cell; ties on every objective keep the smaller `Choice`, so the result
/// does not depend on the order configurations arrive in (thread scheduling, shards).
#[derive(Clone, Debug, Default)]
pub(crate) struct Frontier {
    kept: Vec<Kept>,
}

fn dominates(a: &[f64; 3], b: &[f64; 3], n: usize) -> bool {
    let mut strictly = false;
    for i in 0..n {
        if a[i] > b[i] {
            return false;
        }
        if a[i] < b[i] {
            strictly = true;
        }
    }
    strictly
}

impl Frontier {
    /// Would a configuration with these objectives enter the frontier?
    pub(crate) fn admits(&self, objectives: &[f64; 3], n: usize, choice: &Choice) -> bool {
        !self.kept.iter().any(|k| {
            dominates(&k.objectives, objectives, n) || (k.objectives[..n] == objectives[..n] && k.choice < *choice)
        })
    }

    pub(crate) fn insert(&mut self, item: Kept, n: usize) {
        if !self.admits(&item.objectives, n, &item.choice) {
            return;
        }
        self.kept.retain(|k| {
            !(dominates(&item.objectives, &k.objectives, n) || (k.objectives[..n] == item.objectives[..n]))
        });
        self.kept.push(item);
    }
}

/// A frontier's key: the cell's index and the values of the grouped parallel axes (zero for the others).
pub(crate) type FrontierKey = (u32, [u32; 11]);

/// Feasible rows with the index of the task that found each, so that a window's rows can be put back in
/// enumeration order whatever order the workers' pieces were joined in.
#[derive(Debug, Default)]
pub(crate) struct Rows {
    tasks: Vec<u64>,
    choices: Vec<Choice>,
    evaluations: Vec<Evaluation>,
}

impl Rows {
    pub(crate) fn push(&mut self, task: u64, choice: Choice, evaluation: Evaluation) {
        self.tasks.push(task);
        self.choices.push(choice);
        self.evaluations.push(evaluation);
    }

    fn append(&mut self, mut other: Rows) {
        self.tasks.append(&mut other.tasks);
        self.choices.append(&mut other.choices);
        self.evaluations.append(&mut other.evaluations);
    }

    /// The rows in enumeration order: by task, and within a task in the order it found them. Rayon joins the
    /// pieces of an indexed iterator left to right, so this is normally already the order (a linear check);
    /// otherwise a stable sort by task restores it.
    pub(crate) fn into_enumeration_order(self) -> RowChunk {
        if self.tasks.is_sorted() {
            return RowChunk { choices: self.choices, evaluations: self.evaluations };
        }
        let mut order: Vec<usize> = (0..self.tasks.len()).collect();
        order.sort_by_key(|&i| self.tasks[i]);
        let mut evaluations: Vec<Option<Evaluation>> = self.evaluations.into_iter().map(Some).collect();
        RowChunk {
            choices: order.iter().map(|&i| self.choices[i]).collect(),
            evaluations: order.iter().filter_map(|&i| evaluations[i].take()).collect(),
        }
    }
}

/// Per-cell frontiers, each cell's fastest configuration (shortest time to train, whatever the objectives, so
/// that "the fastest per (fabric, GPU count)" is always answerable from the kept rows), counts, and the rows of
/// the current window when they are streamed.
#[derive(Debug, Default)]
pub(crate) struct Accumulator {
    frontiers: BTreeMap<FrontierKey, Frontier>,
    fastest: BTreeMap<u32, Kept>,
    pub(crate) counts: Counts,
    pub(crate) rows: Option<Rows>,
}

/// Is `a` faster than `b` (ties: the smaller choice)?
fn faster(a: &Kept, b: &Kept) -> bool {
    let (ta, tb) = (a.evaluation.time_to_train_s, b.evaluation.time_to_train_s);
    ta < tb || (ta == tb && a.choice < b.choice)
}

impl Accumulator {
    pub(crate) fn new(stream_rows: bool) -> Self {
        Accumulator { rows: stream_rows.then(Rows::default), ..Accumulator::default() }
    }

    /// Would `item` replace its cell's fastest configuration?
    pub(crate) fn is_fastest(&self, cell: u32, item: &Kept) -> bool {
        self.fastest.get(&cell).is_none_or(|current| faster(item, current))
    }

    /// Would `item` enter the frontier under `key`?
    pub(crate) fn admits(&self, key: &FrontierKey, item: &Kept, n_obj: usize) -> bool {
        self.frontiers.get(key).is_none_or(|f| f.admits(&item.objectives, n_obj, &item.choice))
    }

    /// Keep `item` where it belongs: as its cell's fastest, on its frontier, or both.
    pub(crate) fn offer(&mut self, key: FrontierKey, item: Kept, n_obj: usize) {
        let fastest = self.is_fastest(key.0, &item);
        let on_frontier = self.admits(&key, &item, n_obj);
        match (fastest, on_frontier) {
            (true, true) => {
                self.fastest.insert(key.0, item.clone());
                self.frontiers.entry(key).or_default().insert(item, n_obj);
            }
            (true, false) => {
                self.fastest.insert(key.0, item);
            }
            (false, true) => self.frontiers.entry(key).or_default().insert(item, n_obj),
            (false, false) => {}
        }
    }

    /// Fold `other` (the pieces that come after this one, for rows) into this accumulator.
    pub(crate) fn merge(mut self, other: Accumulator, n_obj: usize) -> Accumulator {
        for (key, f) in other.frontiers {
            match self.frontiers.get_mut(&key) {
                None => {
                    self.frontiers.insert(key, f);
                }
                Some(target) => {
                    for k in f.kept {
                        target.insert(k, n_obj);
                    }
                }
            }
        }
        for (cell, k) in other.fastest {
            if self.is_fastest(cell, &k) {
                self.fastest.insert(cell, k);
            }
        }
        self.counts.add(&other.counts);
        if let (Some(rows), Some(more)) = (self.rows.as_mut(), other.rows) {
            rows.append(more);
        }
        self
    }

    /// Every kept configuration, sorted by choice, each once (a cell's fastest is often on its frontier too).
    pub(crate) fn into_kept(self) -> Vec<Kept> {
        let mut kept: Vec<Kept> = self.frontiers.into_values().flat_map(|f| f.kept).collect();
        kept.extend(self.fastest.into_values());
        kept.sort_by_key(|k| k.choice);
        kept.dedup_by_key(|k| k.choice);
        kept
    }
}
