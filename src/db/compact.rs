//! The database's side of compaction: the loop that asks the strategy
//! (`DbInner::strategy`, a `compaction::CompactionStrategy`) for the next job, runs it with what it needs from
//! the database (a [`JobContext`]), installs the edit it returns and counts
//! it; the background thread; and `Db::compact`'s "settle fully".

use std::sync::atomic::Ordering::{Relaxed, SeqCst};

use crossbeam_channel::{Receiver, RecvTimeoutError};

use super::stats::bump;
use super::{BgSignal, DbInner};
use crate::Result;
use crate::compaction::{self, Choice, Drift, Filtered, JobContext, Progress, State};
use crate::manifest::WriteTotals;
use crate::tree::Tree;

impl DbInner {
    /// Runs one compaction if a level needs one, or else one refresh of a
    /// table that drifted from the plan by more than `drift`; `false` if
    /// there was nothing to do.
    pub(crate) fn compact_once(&self, drift: Drift) -> Result<bool> {
        self.compact_locked(self.compaction.lock(), drift)
    }

    /// [`compact_once`](Self::compact_once) under the compaction lock
    /// already taken.
    fn compact_locked(
        &self,
        mut progress: parking_lot::MutexGuard<'_, Progress>,
        drift: Drift,
    ) -> Result<bool> {
        let sv = self.current();
        let choice = self.choose(&sv.tree, &mut progress, drift);
        if !self.run_choice(&choice, &sv.tree, &mut progress)? {
            return Ok(false);
        }
        release_in_order(choice, sv, progress);
        self.notify_bg();
        Ok(true)
    }

    /// What the strategy chooses on `tree`, given what compaction
    /// remembers and what it needs from the database now.
    fn choose(&self, tree: &Tree, progress: &mut Progress, drift: Drift) -> Choice {
        let planner = self.planner();
        let state = State {
            cursors: &progress.cursors,
            refreshed: progress.refreshed.since(self.counters.flushes.load(Relaxed)),
            horizon: self.snapshots.horizon(&self.visible_seq),
            drift,
            budgeted: self.policy.is_budgeted(),
            planner: &planner,
            now_unix_secs: self.opts.clock.now_unix_secs(),
        };
        self.strategy.choose(tree, &self.opts, &state)
    }

    /// Whether the background thread would find a job on the tree as it
    /// is; `None` while a compaction runs (the answer would be stale by the
    /// time it ends).
    pub(crate) fn compaction_due(&self) -> Option<bool> {
        let mut progress = self.compaction.try_lock()?;
        let sv = self.current();
        let due = self.choose(&sv.tree, &mut progress, Drift::Presence).job().is_some();
        Some(due)
    }

    /// Compacts until the strategy's settling is done (for leveled: level 0
    /// empty), every level is within its target and every table carries
    /// its level's planned filter (to within [`EXPLICIT_DRIFT`](compaction::EXPLICIT_DRIFT)).
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
            let step = match self.settle(started) {
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

    /// Runs the strategy's settling job for the tables numbered below
    /// `before` (`CompactionStrategy::settle`); `false` if there was none.
    fn settle(&self, before: u64) -> Result<bool> {
        let mut progress = self.compaction.lock();
        let sv = self.current();
        let choice = self.strategy.settle(&sv.tree, &self.opts, before);
        if !self.run_choice(&choice, &sv.tree, &mut progress)? {
            return Ok(false);
        }
        release_in_order(choice, sv, progress);
        self.notify_bg();
        Ok(true)
    }

    /// Runs `choice` on `tree`, installs its outputs in one manifest edit
    /// and notes it in `progress`; `false` for [`Choice::Nothing`].
    fn run_choice(&self, choice: &Choice, tree: &Tree, progress: &mut Progress) -> Result<bool> {
        let planner = self.planner();
        let ctx = JobContext {
            opts: &self.opts,
            sink: self.sink(),
            horizon: self.snapshots.horizon(&self.visible_seq),
            budgeted: self.policy.is_budgeted(),
            planner: &planner,
            newest_snapshot: self.snapshots.newest(),
        };
        let Some(done) = compaction::run(&ctx, choice, tree)? else {
            return Ok(false);
        };
        // Entries the compaction filter changed were newer than every
        // snapshot when the job began; one taken since may see them. The
        // edit goes in with snapshots held off, or not at all (the job runs
        // again, under the new snapshot).
        let (newest, _no_snapshots) = if done.filtered == Filtered::default() {
            (ctx.newest_snapshot, None)
        } else {
            let (newest, guard) = self.snapshots.newest_held();
            (newest, Some(guard))
        };
        if newest != ctx.newest_snapshot {
            for t in &done.outputs {
                t.mark_obsolete();
            }
            return Ok(true);
        }
        match choice {
            Choice::Refresh(job) => {
                bump(&self.counters.filter_refreshes, 1);
                self.counters.wrote(job.level, 0, job.input_bytes(), done.bytes_written);
            }
            Choice::Move(job) => {
                bump(&self.counters.tables_moved, job.inputs.len() as u64);
                self.counters.moved(job.target_level(), job.input_bytes());
            }
            Choice::Merge(job) => {
                let (merged_in, rewritten) = job.input_bytes_by_level();
                self.counters.wrote(job.target_level(), merged_in, rewritten, done.bytes_written);
                if done.pieces > 1 {
                    bump(&self.counters.split_merges, 1);
                    bump(&self.counters.split_pieces, done.pieces as u64);
                }
            }
            Choice::Nothing | Choice::Drop(_) => {}
        }
        if let Some(d) = done.edit.fifo_dropped {
            let [tables, entries, bytes] = &self.counters.fifo_dropped;
            bump(tables, d.tables);
            bump(entries, d.entries);
            bump(bytes, d.bytes);
        }
        progress.record(choice, done.outputs.iter().map(|t| t.number()));
        let written = WriteTotals { compaction_bytes: done.bytes_written, ..WriteTotals::default() };
        self.install(&done.edit, done.outputs, false, written)?;
        bump(&self.counters.compactions, 1);
        bump(&self.counters.compaction_bytes_read, done.bytes_read);
        bump(&self.counters.compaction_bytes_written, done.bytes_written);
        bump(&self.counters.range_deleted_entries, done.dropped_by_range);
        bump(&self.counters.compaction_filter_removed, done.filtered.removed);
        bump(&self.counters.compaction_filter_changed, done.filtered.changed);
        Ok(true)
    }
}

/// Drops a finished job and the tree it ran on before the compaction lock.
///
/// The job's inputs are the replaced tables; the last handle to each deletes
/// its file. Releasing them while the lock is still held means that whoever
/// takes the lock next (`Db::compact` on another thread, say) finds them
/// deleted unless a reader still holds them: dropped after the lock, the
/// background thread could delete them after `Db::compact` had returned.
/// (On an early `?` return the locals drop in this order by themselves.)
fn release_in_order<T>(choice: Choice, sv: T, progress: parking_lot::MutexGuard<'_, Progress>) {
    drop(choice);
    drop(sv);
    drop(progress);
}

/// The background compaction thread. Under a FIFO TTL it also wakes by
/// itself now and then (`Compaction::ttl_recheck`), since tables expire
/// while nothing is written.
pub(crate) fn compact_loop(db: &DbInner, rx: &Receiver<BgSignal>) {
    let recheck = db.opts.compaction.ttl_recheck().filter(|_| db.opts.auto_compaction);
    loop {
        let signal = match recheck {
            Some(every) => match rx.recv_timeout(every) {
                Ok(signal) => Some(signal),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => return,
            },
            None => match rx.recv() {
                Ok(signal) => Some(signal),
                Err(_) => return,
            },
        };
        match signal {
            Some(BgSignal::Wake) => {
                if db.opts.auto_compaction {
                    compact_while_due(db, rx);
                }
                db.compaction_wake_done();
            }
            // A timeout is no wake-up: nobody counted it.
            None => compact_while_due(db, rx),
            Some(BgSignal::Shutdown) => return,
        }
    }
}

impl DbInner {
    /// On the flush thread, right after a flush: the strategy's jobs, when
    /// they only drop tables (`CompactionStrategy::drops_only`), so that a
    /// FIFO byte limit holds flush by flush, whatever the compaction
    /// thread is doing. A failure fails the database, as there.
    pub(crate) fn drop_after_flush(&self) {
        if !self.opts.auto_compaction || !self.strategy.drops_only() {
            return;
        }
        while self.check_writable().is_ok() {
            // Never wait for the lock: its holder may be waiting for this
            // thread's next flush (an ingest does), and the compaction
            // thread, woken after every flush, runs the same drops.
            let Some(progress) = self.compaction.try_lock() else {
                return;
            };
            match self.compact_locked(progress, Drift::Presence) {
                Ok(true) => {}
                Ok(false) => return,
                Err(e) => {
                    self.fail(format!("compaction failed: {e}"));
                    return;
                }
            }
        }
    }
}

/// Runs what the strategy chooses until it finds nothing, the database fails,
/// or another signal arrives.
fn compact_while_due(db: &DbInner, rx: &Receiver<BgSignal>) {
    while db.check_writable().is_ok() {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| db.compact_once(Drift::Presence))) {
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
}

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::io;
    use std::path::{Path, PathBuf};
    use std::sync::{Arc, OnceLock, Weak};

    use parking_lot::Mutex;

    use crate::fs::{FileSystem, StdFs, WritableFile};
    use crate::{Db, Options};

    use super::DbInner;

    /// A file system that notes, for each table file removed, whether the
    /// compaction lock was held at that moment.
    #[derive(Debug, Default)]
    struct LockWatch {
        db: OnceLock<Weak<DbInner>>,
        removals: Mutex<Vec<(PathBuf, bool)>>,
    }

    impl FileSystem for LockWatch {
        fn create_dir_all(&self, path: &Path) -> io::Result<()> {
            StdFs.create_dir_all(path)
        }
        fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
            StdFs.create(path)
        }
        fn open_append(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
            StdFs.open_append(path)
        }
        fn open_read(&self, path: &Path) -> io::Result<File> {
            StdFs.open_read(path)
        }
        fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
            StdFs.rename(from, to)
        }
        fn remove_file(&self, path: &Path) -> io::Result<()> {
            if path.extension().is_some_and(|e| e == "sst")
                && let Some(db) = self.db.get().and_then(Weak::upgrade)
            {
                let held = db.compaction.try_lock().is_none();
                self.removals.lock().push((path.to_path_buf(), held));
            }
            StdFs.remove_file(path)
        }
        fn sync_dir(&self, _dir: &Path) -> io::Result<()> {
            Ok(())
        }
        fn truncate(&self, path: &Path, len: u64) -> io::Result<()> {
            StdFs.truncate(path, len)
        }
        fn list_dir(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
            StdFs.list_dir(dir)
        }
        fn exists(&self, path: &Path) -> bool {
            StdFs.exists(path)
        }
    }

    /// Regression: `db_iter_stability` once saw a replaced table still on
    /// disk after `Db::compact` returned, because the background thread
    /// dropped its job (and the last handle to the job's inputs) after
    /// releasing the compaction lock. Every replaced table no reader holds
    /// must now be deleted while the compaction that replaced it holds the lock.
    #[test]
    fn replaced_tables_are_deleted_before_the_compaction_lock_is_released() {
        let dir = tempfile::tempdir().unwrap();
        let fs = Arc::new(LockWatch::default());
        let opts = Options {
            memtable_bytes: 4096,
            hash_salt: Some(8),
            fs: Arc::clone(&fs) as Arc<dyn FileSystem>,
            l0_compaction_trigger: 2,
            base_level_bytes: 8192,
            table_target_bytes: 4096,
            auto_compaction: false,
            ..Options::default()
        };
        let db = Db::open(dir.path(), opts).unwrap();
        fs.db.set(Arc::downgrade(&db.inner)).unwrap();
        for round in 0..3 {
            for i in 0..1000u32 {
                db.put(format!("k{i:05}").as_bytes(), format!("v{round}").as_bytes()).unwrap();
            }
            db.flush().unwrap();
            db.compact_due().unwrap();
        }
        db.compact().unwrap();
        let removals = fs.removals.lock().clone();
        assert!(removals.len() >= 4, "too few tables replaced to tell: {removals:?}");
        let late: Vec<_> = removals.iter().filter(|(_, held)| !held).collect();
        assert!(late.is_empty(), "deleted after the compaction lock was released: {late:?}");
        assert!(removals.iter().all(|(p, _)| !p.exists()));
    }
}
