//! What the workers fold into: per-cell Pareto sets, each cell's fastest configuration, counts, and (for `--all`
//! exports) the feasible rows with the task that found them.

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

/// A map kept as a vector sorted by key. Workers visit tasks in order, so lookups mostly hit the last entry and
/// the pieces a fold joins mostly follow each other (an append): cheaper than a tree for this pattern.
#[derive(Debug)]
pub(crate) struct SortedMap<K, V> {
    entries: Vec<(K, V)>,
}

impl<K, V> Default for SortedMap<K, V> {
    fn default() -> Self {
        SortedMap { entries: Vec::new() }
    }
}

impl<K: Ord + Copy, V> SortedMap<K, V> {
    fn position(&self, key: &K) -> Result<usize, usize> {
        match self.entries.last() {
            Some((last, _)) if last == key => Ok(self.entries.len() - 1),
            Some((last, _)) if last < key => Err(self.entries.len()),
            _ => self.entries.binary_search_by(|(k, _)| k.cmp(key)),
        }
    }

    pub(crate) fn get(&self, key: &K) -> Option<&V> {
        self.position(key).ok().map(|i| &self.entries[i].1)
    }

    pub(crate) fn get_or_insert_with(&mut self, key: K, make: impl FnOnce() -> V) -> &mut V {
        let i = match self.position(&key) {
            Ok(i) => i,
            Err(i) => {
                self.entries.insert(i, (key, make()));
                i
            }
        };
        &mut self.entries[i].1
    }

    /// Fold `other` in, combining values of equal keys with `combine`; entries past this map's last key are
    /// appended in one go.
    fn absorb(&mut self, other: SortedMap<K, V>, mut combine: impl FnMut(&mut V, V)) {
        let mut rest = other.entries.into_iter().peekable();
        while let Some((k, v)) = rest.next_if(|(k, _)| self.entries.last().is_some_and(|(last, _)| k <= last)) {
            match self.position(&k) {
                Ok(i) => combine(&mut self.entries[i].1, v),
                Err(i) => self.entries.insert(i, (k, v)),
            }
        }
        self.entries.extend(rest);
    }

    fn into_values(self) -> impl Iterator<Item = V> {
        self.entries.into_iter().map(|(_, v)| v)
    }
}

/// Per-cell frontiers, each cell's fastest configuration (shortest time to train, whatever the objectives, so
/// that "the fastest per (fabric, GPU count)" is always answerable from the kept rows), counts, and the rows of
/// the current window when they are streamed.
#[derive(Debug, Default)]
pub(crate) struct Accumulator {
    frontiers: SortedMap<FrontierKey, Frontier>,
    fastest: SortedMap<u32, Kept>,
    pub(crate) counts: Counts,
    pub(crate) rows: Option<Rows>,
    /// The position of the cell of the last task folded in (where the next one most likely is).
    pub(crate) cell_hint: usize,
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

    /// Would a configuration of `cell` with this time replace the cell's fastest?
    fn is_fastest(&self, cell: u32, time_to_train_s: f64, choice: &Choice) -> bool {
        self.fastest.get(&cell).is_none_or(|k| {
            let t = k.evaluation.time_to_train_s;
            time_to_train_s < t || (time_to_train_s == t && *choice < k.choice)
        })
    }

    /// Keep a feasible configuration where it belongs: as its cell's fastest, on its frontier, or both. The
    /// checks come first, so that the (large) evaluation is only moved when it is kept.
    #[inline]
    pub(crate) fn offer(
        &mut self,
        key: FrontierKey,
        choice: Choice,
        evaluation: Evaluation,
        objectives: [f64; 3],
        n_obj: usize,
    ) {
        let fastest = self.is_fastest(key.0, evaluation.time_to_train_s, &choice);
        let on_frontier = self.frontiers.get(&key).is_none_or(|f| f.admits(&objectives, n_obj, &choice));
        if !(fastest || on_frontier) {
            return;
        }
        let item = Kept { choice, evaluation, objectives };
        match (fastest, on_frontier) {
            (true, true) => {
                self.set_fastest(key.0, item.clone());
                self.frontiers.get_or_insert_with(key, Frontier::default).insert(item, n_obj);
            }
            (true, false) => self.set_fastest(key.0, item),
            _ => self.frontiers.get_or_insert_with(key, Frontier::default).insert(item, n_obj),
        }
    }

    fn set_fastest(&mut self, cell: u32, item: Kept) {
        match self.fastest.position(&cell) {
            Ok(i) => self.fastest.entries[i].1 = item,
            Err(i) => self.fastest.entries.insert(i, (cell, item)),
        }
    }

    /// Fold `other` (the pieces that come after this one, for rows) into this accumulator.
    pub(crate) fn merge(mut self, other: Accumulator, n_obj: usize) -> Accumulator {
        self.frontiers.absorb(other.frontiers, |target, f| {
            for k in f.kept {
                target.insert(k, n_obj);
            }
        });
        self.fastest.absorb(other.fastest, |current, k| {
            if faster(&k, current) {
                *current = k;
            }
        });
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
