//! What a running sweep shares with whoever watches it: live counts, cancellation and a pause gate, and the
//! reasons a configuration is rejected.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};

use crate::error::{ConfigError, CATEGORIES};

/// Rejected-configuration reasons, in a fixed order: every `ConfigError::category`, then out of memory.
pub const REASONS: [&str; CATEGORIES.len() + 1] = {
    let mut out = ["out_of_memory"; CATEGORIES.len() + 1];
    let mut i = 0;
    while i < CATEGORIES.len() {
        out[i] = CATEGORIES[i];
        i += 1;
    }
    out
};

/// The `REASONS` index of a rejection: its category's (REASONS starts with CATEGORIES).
pub(crate) fn reason_index(e: &ConfigError) -> usize {
    e.category_index()
}

/// Live progress, cancellation and a pause gate, shared with whoever watches the sweep (the Python layer polls
/// it). The gate lets a caller (a UI, a test) hold the workers at the next task boundary and release them, so that
/// behaviour during a running sweep can be tested on events rather than on timing.
#[derive(Debug, Default)]
pub struct Progress {
    pub done: AtomicU64,
    pub feasible: AtomicU64,
    /// Rejected so far, by `REASONS` index.
    pub rejected: [AtomicU64; REASONS.len()],
    /// Estimated work done so far, in the units of `cells::cell_costs` (it ends equal to their sum): a better
    /// base for an ETA than configurations, most of which are rejected before any arithmetic.
    pub work: AtomicU64,
    /// The run's whole estimated work (its cells' `cell_costs` summed), once the engine has planned it:
    /// `work_total()` is None before. Planning a huge space takes a while; a watcher can cancel it meanwhile.
    work_total: AtomicU64,
    planned: AtomicBool,
    pub cancel: AtomicBool,
    paused: AtomicBool,
    gate: Mutex<()>,
    resumed: Condvar,
    /// Workers currently held at the gate.
    held: AtomicU64,
}

/// What one task did, added to `Progress` once per task.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Counts {
    pub evaluated: u64,
    pub feasible: u64,
    pub rejected: [u64; REASONS.len()],
    pub work: u64,
}

impl Counts {
    pub(crate) fn add(&mut self, other: &Counts) {
        self.evaluated += other.evaluated;
        self.feasible += other.feasible;
        self.work += other.work;
        for (a, b) in self.rejected.iter_mut().zip(other.rejected) {
            *a += b;
        }
    }
}

impl Progress {
    /// Ask the sweep to stop; held workers are released to see it.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::SeqCst);
        self.wake();
    }

    /// Hold every worker at its next task boundary until `resume` (or `cancel`).
    pub fn pause(&self) {
        self.paused.store(true, Ordering::SeqCst);
    }

    pub fn resume(&self) {
        self.paused.store(false, Ordering::SeqCst);
        self.wake();
    }

    pub fn is_paused(&self) -> bool {
        self.paused.load(Ordering::SeqCst)
    }

    /// Workers waiting at the gate right now.
    pub fn held(&self) -> u64 {
        self.held.load(Ordering::SeqCst)
    }

    fn wake(&self) {
        let _guard = self.gate.lock().unwrap_or_else(|p| p.into_inner());
        self.resumed.notify_all();
    }

    /// The run's whole estimated work, once planned.
    pub fn work_total(&self) -> Option<u64> {
        self.planned.load(Ordering::SeqCst).then(|| self.work_total.load(Ordering::SeqCst))
    }

    pub(crate) fn set_work_total(&self, work: u64) {
        self.work_total.store(work, Ordering::SeqCst);
        self.planned.store(true, Ordering::SeqCst);
    }

    /// Add what one task did to the live counters.
    pub(crate) fn record(&self, c: &Counts) {
        self.done.fetch_add(c.evaluated, Ordering::Relaxed);
        self.work.fetch_add(c.work, Ordering::Relaxed);
        if c.feasible > 0 {
            self.feasible.fetch_add(c.feasible, Ordering::Relaxed);
        }
        for (counter, n) in self.rejected.iter().zip(c.rejected) {
            if n > 0 {
                counter.fetch_add(n, Ordering::Relaxed);
            }
        }
    }

    pub(crate) fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// Block while paused (unless cancelled). One relaxed load when not paused.
    pub(crate) fn wait_if_paused(&self) {
        if !self.paused.load(Ordering::Relaxed) {
            return;
        }
        let mut guard = self.gate.lock().unwrap_or_else(|p| p.into_inner());
        self.held.fetch_add(1, Ordering::SeqCst);
        while self.paused.load(Ordering::SeqCst) && !self.cancel.load(Ordering::SeqCst) {
            guard = self.resumed.wait(guard).unwrap_or_else(|p| p.into_inner());
        }
        self.held.fetch_sub(1, Ordering::SeqCst);
    }
}
