//! The database's side of compaction: the loop that asks the strategy
//! (`crate::compaction`) for the next job, runs it with what it needs from
//! the database (a [`JobContext`]), installs the edit it returns and counts
//! it; the background thread; and `Db::compact`'s "settle fully".

use std::sync::atomic::Ordering::{Relaxed, SeqCst};

use crossbeam_channel::Receiver;

use super::stats::bump;
use super::{BgSignal, DbInner};
use crate::Result;
use crate::compaction::{self, Drift, Job, JobContext};
use crate::manifest::WriteTotals;
use crate::policy::Writing;
use crate::tree::Tree;

impl DbInner {
    /// Runs one compaction if a level needs one, or else one refresh of a
    /// table that drifted from the plan by more than `drift`; `false` if
    /// there was nothing to do.
    pub(crate) fn compact_once(&self, drift: Drift) -> Result<bool> {
        let mut cursors = self.compaction.lock();
        let sv = self.current();
        let job = compaction::pick(&sv.tree, &self.opts, &cursors).or_else(|| {
            let plan = self.plan(&self.shape(&sv.tree, None));
            let mut refreshed = self.refreshed.lock();
            let done = refreshed.since(self.counters.flushes.load(Relaxed));
            compaction::pick_refresh(&sv.tree, &plan, drift, self.policy.is_budgeted(), &|n| {
                done.contains(&n)
            })
        });
        let Some(job) = job else {
            return Ok(false);
        };
        self.run_job(&job, &sv.tree)?;
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
    /// carries its level's planned filter (to within [`EXPLICIT_DRIFT`](compaction::EXPLICIT_DRIFT)).
    ///
    /// The memtables are flushed first; level 0 then ends empty of every
    /// table flushed before the merge began (flushes of writes that land
    /// meanwhile are merged with them, but not chased), so the tree ends
    /// with each key in its settled place.
    pub(crate) fn compact_all(&self) -> Result<()> {
        // Settle fully: the memtable and every frozen one still in flight
        // are flushed first, so that level 0 ends empty (the tables those
        // flushes write are numbered below `started`), not a few tables
        // short of its trigger, each an extra filter probe on every miss.
        self.flush_and_wait()?;
        let started = self.next_file.load(SeqCst);
        loop {
            self.check_writable()?;
            let step = match self.empty_level0(started) {
                Ok(false) => self.compact_once(compaction::EXPLICIT_DRIFT),
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
        let Some(job) = compaction::pick_level0(&sv.tree, &self.opts) else {
            return Ok(false);
        };
        self.run_job(&job, &sv.tree)?;
        self.refreshed.lock().clear();
        drop(cursors);
        self.notify_bg();
        Ok(true)
    }

    /// Runs `job` on `tree` and installs its outputs in one manifest edit.
    fn run_job(&self, job: &Job, tree: &Tree) -> Result<()> {
        let filter_for = |tree: &Tree, writing: Writing| self.filter_for(tree, writing);
        let ctx = JobContext {
            opts: &self.opts,
            sink: self.sink(),
            horizon: self.snapshots.horizon(&self.visible_seq),
            budgeted: self.policy.is_budgeted(),
            filter_for: &filter_for,
        };
        let done = compaction::run(&ctx, job, tree)?;
        if job.refresh {
            bump(&self.counters.filter_refreshes, 1);
            self.refreshed.lock().add(done.outputs.iter().map(|t| t.number()));
        }
        let written = WriteTotals { compaction_bytes: done.bytes_written, ..WriteTotals::default() };
        self.install(&done.edit, done.outputs, false, written)?;
        bump(&self.counters.compactions, 1);
        bump(&self.counters.compaction_bytes_read, done.bytes_read);
        bump(&self.counters.compaction_bytes_written, done.bytes_written);
        Ok(())
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
