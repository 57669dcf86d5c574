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
            let refreshed = self.refreshed.lock();
            picker::pick_refresh(&sv.tree, &plan, drift, &|n| refreshed.contains(&n))
        });
        let Some(job) = job else {
            return Ok(false);
        };
        executor::run(self, &job, &sv.tree)?;
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

    /// Compacts until every level is within its target and every table
    /// carries its level's planned filter (to within [`EXPLICIT_DRIFT`]).
    pub(crate) fn compact_all(&self) -> Result<()> {
        loop {
            self.check_writable()?;
            if !self.compact_once(EXPLICIT_DRIFT)? {
                return Ok(());
            }
        }
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
