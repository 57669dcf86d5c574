//! Leveled compaction.
//!
//! - [`picker`]: which tables to compact next (L0 trigger, level targets,
//!   round-robin cursor per level).
//! - [`executor`]: merge, drop shadowed versions and dead tombstones, install.
//! - [`writer`]: output tables split at the target size between user keys.
//!
//! One compaction runs at a time (the `compaction` lock), either on the
//! background thread or on the caller of `Db::compact`.

pub(crate) mod executor;
pub(crate) mod picker;
pub(crate) mod writer;

use std::collections::HashSet;
use std::sync::atomic::Ordering::Relaxed;

use crossbeam_channel::Receiver;

pub(crate) use picker::Drift;

/// How far `Db::compact` lets a table's filter drift from the plan: 2% of
/// its bytes, so a compacted tree spends its budget to within a few percent.
pub(crate) const EXPLICIT_DRIFT: Drift = Drift::Bytes(0.02);

use crate::Result;
use crate::db::{BgSignal, DbInner};

impl DbInner {
    /// Runs one compaction if a level needs one, or else one refresh of a
    /// table that drifted from the plan by more than `drift`; `false` if
    /// there was nothing to do.
    pub(crate) fn compact_once(&self, drift: Drift) -> Result<bool> {
        let mut cursors = self.compaction.lock();
        let sv = self.current();
        let job = picker::pick(&sv.tree, &self.opts, &cursors).or_else(|| {
            let plan = self.plan(&self.shape(&sv.tree, None));
            let mut refreshed = self.refreshed.lock();
            let done = refreshed.since(self.counters.flushes.load(Relaxed));
            picker::pick_refresh(&sv.tree, &plan, drift, self.policy.is_budgeted(), &|n| done.contains(&n))
        });
        let Some(job) = job else {
            return Ok(false);
        };
        executor::run(self, &job, &sv.tree)?;
        if !job.refresh {
            self.refreshed.lock().clear();
        }
        if !job.refresh
            && let (Some(cursor), Some(largest)) =
                (cursors.get_mut(job.level), job.inputs.iter().map(|t| t.record.largest.clone()).max())
        {
            *cursor = largest;
        }
        drop(cursors);
        self.notify_bg();
        Ok(true)
    }

    /// Compacts until level 0 is empty, every level is within its target and every table
    /// carries its level's planned filter (to within [`EXPLICIT_DRIFT`]).
    ///
    /// Level 0 ends empty of every table flushed before the call (flushes
    /// that land meanwhile are merged with them, but not chased), so the
    /// tree ends with each key in its settled place.
    pub(crate) fn compact_all(&self) -> Result<()> {
        let started = self.next_file.load(std::sync::atomic::Ordering::SeqCst);
        loop {
            self.check_writable()?;
            let step = match self.empty_level0(started) {
                Ok(false) => self.compact_once(EXPLICIT_DRIFT),
                other => other,
            };
            match step {
                Ok(true) => {}
                Ok(false) => return Ok(()),
                // As on the background thread: a failed compaction stops
                // writes, so nothing is acknowledged that a half-done merge
                // might not hold.
                Err(e) => {
                    self.fail(format!("compaction failed: {e}"));
                    return Err(e);
                }
            }
        }
    }

    /// Runs, on the calling thread, what the background thread would run
    /// now: merges past their triggers and targets, and presence refreshes,
    /// until none is due.
    pub(crate) fn compact_due(&self) -> Result<()> {
        loop {
            self.check_writable()?;
            match self.compact_once(Drift::Presence) {
                Ok(true) => {}
                Ok(false) => return Ok(()),
                Err(e) => {
                    self.fail(format!("compaction failed: {e}"));
                    return Err(e);
                }
            }
        }
    }

    /// Merges all of level 0 into level 1 if it holds a table numbered
    /// below `before`; `false` if it did not.
    fn empty_level0(&self, before: u64) -> Result<bool> {
        let cursors = self.compaction.lock();
        let sv = self.current();
        if !sv.tree.levels.first().is_some_and(|l0| l0.iter().any(|t| t.number() < before)) {
            return Ok(false);
        }
        let Some(job) = picker::pick_level0(&sv.tree, &self.opts) else {
            return Ok(false);
        };
        executor::run(self, &job, &sv.tree)?;
        self.refreshed.lock().clear();
        drop(cursors);
        self.notify_bg();
        Ok(true)
    }
}

/// The tables refreshed since the tree last changed shape (a flush or a
/// merge): each is refreshed at most once per shape.
///
/// A refresh writes its table to the plan of the shape it sees, and leaves
/// that shape as it was (`db::shape` counts only data and index bytes), so
/// it cures its drift. This is the backstop should some drift outlive its
/// rewrite: `compact()` would otherwise rewrite the table without end,
/// while a table refreshed under one shape is still brought to the plan of
/// the next.
#[derive(Debug, Default)]
pub(crate) struct Refreshed {
    /// `Stats::flushes` when the set was last emptied.
    flushes: u64,
    tables: HashSet<u64>,
}

impl Refreshed {
    /// The tables refreshed under the current shape, given the flushes so far.
    fn since(&mut self, flushes: u64) -> &HashSet<u64> {
        if flushes != self.flushes {
            self.clear();
            self.flushes = flushes;
        }
        &self.tables
    }

    /// Records the tables a refresh wrote.
    pub(crate) fn add(&mut self, tables: impl IntoIterator<Item = u64>) {
        self.tables.extend(tables);
    }

    /// Forgets every table: the shape changed.
    fn clear(&mut self) {
        self.tables.clear();
    }
}

/// The background compaction thread.
pub(crate) fn compact_loop(db: &DbInner, rx: &Receiver<BgSignal>) {
    while let Ok(BgSignal::Wake) = rx.recv() {
        if !db.opts.auto_compaction {
            continue;
        }
        while db.check_writable().is_ok() {
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| db.compact_once(Drift::Presence)))
            {
                Ok(Ok(true)) => {}
                Ok(Ok(false)) => break,
                Ok(Err(e)) => {
                    db.fail(format!("compaction failed: {e}"));
                    break;
                }
                Err(_) => {
                    db.fail("compaction thread panicked");
                    break;
                }
            }
            // Yield between jobs so a shutdown request is seen promptly.
            if !rx.is_empty() {
                break;
            }
        }
        db.notify_bg();
    }
}
