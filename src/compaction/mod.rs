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

use crate::Result;
use crate::db::{BgSignal, DbInner};

impl DbInner {
    /// Runs one compaction if a level needs one; `false` if none does.
    pub(crate) fn compact_once(&self) -> Result<bool> {
        let mut cursors = self.compaction.lock();
        let sv = self.current();
        let Some(job) = picker::pick(&sv.tree, &self.opts, &cursors) else {
            return Ok(false);
        };
        executor::run(self, &job, &sv.tree)?;
        if let (Some(cursor), Some(largest)) =
            (cursors.get_mut(job.level), job.inputs.iter().map(|t| t.record.largest.clone()).max())
        {
            *cursor = largest;
        }
        drop(cursors);
        self.notify_bg();
        Ok(true)
    }

    /// Compacts until every level is within its target.
    pub(crate) fn compact_all(&self) -> Result<()> {
        loop {
            self.check_writable()?;
            if !self.compact_once()? {
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
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| db.compact_once())) {
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
