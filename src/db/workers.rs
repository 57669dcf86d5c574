//! The background threads' lifetime: started with the database, stopped
//! (and the database closed) by `Db::close` or when the last `Db` clone drops;
//! how they are woken, and how a caller waits until they have nothing to do.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::Receiver;
use parking_lot::Mutex;

use crate::{Error, Result};

use super::{BgSignal, DbInner};

/// How long `wait_for_background_work` sleeps before looking again with no
/// notification: only a backstop, since every finished job notifies.
const SETTLED_RECHECK: Duration = Duration::from_millis(100);

/// Wake-ups sent to each background thread that it has not finished acting
/// on. A thread's channel alone cannot tell this: it is empty again as soon
/// as the thread takes the wake-up, before the work is done. The flush
/// thread wakes the compaction thread before its own wake-up counts as
/// done, so both never read zero while a new table waits to be looked at.
#[derive(Debug, Default)]
pub(crate) struct Wakes {
    flush: AtomicUsize,
    compact: AtomicUsize,
}

impl DbInner {
    pub fn wake_flush(&self) {
        wake(&self.wakes.flush, &self.flush_tx);
    }

    pub fn wake_compaction(&self) {
        wake(&self.wakes.compact, &self.compact_tx);
    }

    /// Marks one flush wake-up as acted on, and tells the waiters.
    pub(crate) fn flush_wake_done(&self) {
        self.wakes.flush.fetch_sub(1, Ordering::SeqCst);
        self.notify_bg();
    }

    /// Marks one compaction wake-up as acted on, and tells the waiters.
    pub(crate) fn compaction_wake_done(&self) {
        self.wakes.compact.fetch_sub(1, Ordering::SeqCst);
        self.notify_bg();
    }

    pub fn notify_bg(&self) {
        let mut epoch = self.bg_epoch.lock();
        *epoch = epoch.wrapping_add(1);
        self.bg_changed.notify_all();
    }

    /// Waits (briefly) for background progress.
    pub fn wait_bg(&self, timeout: Duration) {
        let mut guard = self.bg_epoch.lock();
        let _ = self.bg_changed.wait_for(&mut guard, timeout);
    }

    /// `Db::wait_for_background_work`.
    pub(crate) fn wait_for_background_work(&self) -> Result<()> {
        if self.read_only {
            return self.check_open();
        }
        loop {
            // Read before looking and compared after, not held while looking
            // (a failing compaction notifies under the compaction lock, which
            // `settled` takes): a notification in between is not slept through.
            let epoch = *self.bg_epoch.lock();
            self.check_writable()?;
            if self.settled() {
                return Ok(());
            }
            let mut guard = self.bg_epoch.lock();
            if *guard == epoch {
                let _ = self.bg_changed.wait_for(&mut guard, SETTLED_RECHECK);
            }
        }
    }

    /// Whether no flush or compaction is pending or running and none is
    /// due. Wakes an idle thread that has work it was not told of (a tree
    /// recovered past its triggers: opening wakes nobody), since waiting for
    /// it would otherwise never end.
    fn settled(&self) -> bool {
        // The counters first: a job that starts after they read zero was
        // woken by a write, or by us; one that ran before is in the tree.
        let flushing = self.wakes.flush.load(Ordering::SeqCst);
        let compacting = self.wakes.compact.load(Ordering::SeqCst);
        if !self.current().imm.is_empty() {
            if flushing == 0 {
                self.wake_flush();
            }
            return false;
        }
        if flushing > 0 || compacting > 0 {
            return false;
        }
        if !self.opts.auto_compaction {
            return true;
        }
        match self.compaction_due() {
            Some(false) => true,
            Some(true) => {
                self.wake_compaction();
                false
            }
            // `Db::compact` on another thread: it notifies after each job.
            None => false,
        }
    }
}

fn wake(unhandled: &AtomicUsize, tx: &crossbeam_channel::Sender<BgSignal>) {
    // Counted before it is sent, so the thread never acts on an uncounted one.
    unhandled.fetch_add(1, Ordering::SeqCst);
    if tx.send(BgSignal::Wake).is_err() {
        unhandled.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Owns the background threads; dropping the last `Db` clone stops them.
pub(crate) struct Workers {
    inner: Arc<DbInner>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl Workers {
    /// Starts the flush and compaction threads.
    pub(crate) fn start(
        inner: &Arc<DbInner>,
        flush_rx: Receiver<BgSignal>,
        compact_rx: Receiver<BgSignal>,
    ) -> Result<Workers> {
        let mut threads = Vec::with_capacity(2);
        let db = Arc::clone(inner);
        threads.push(
            std::thread::Builder::new()
                .name("siftdb-flush".into())
                .spawn(move || super::flush::flush_loop(&db, &flush_rx))
                .map_err(Error::Io)?,
        );
        let db = Arc::clone(inner);
        threads.push(
            std::thread::Builder::new()
                .name("siftdb-compact".into())
                .spawn(move || super::compact::compact_loop(&db, &compact_rx))
                .map_err(Error::Io)?,
        );
        Ok(Workers { inner: Arc::clone(inner), threads: Mutex::new(threads) })
    }

    /// No threads: for a database opened read-only, which has no flush or
    /// compaction to do.
    pub(crate) fn idle(inner: &Arc<DbInner>) -> Workers {
        Workers { inner: Arc::clone(inner), threads: Mutex::new(Vec::new()) }
    }

    fn stop(&self) {
        let _ = self.inner.flush_tx.send(BgSignal::Shutdown);
        let _ = self.inner.compact_tx.send(BgSignal::Shutdown);
        self.inner.notify_bg();
        let threads = std::mem::take(&mut *self.threads.lock());
        for t in threads {
            let _ = t.join();
        }
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        // Dropping without close() is a close whose errors nobody can see;
        // every acknowledged write is already in the WAL either way.
        let _ = close_inner(&self.inner, self);
    }
}

pub(crate) fn close_inner(inner: &DbInner, workers: &Workers) -> Result<()> {
    if inner.closed.swap(true, Ordering::AcqRel) {
        return Ok(());
    }
    workers.stop();
    let healthy = inner.failure.lock().is_none() && !inner.read_only;
    let result = if healthy {
        let mut w = inner.write.lock();
        w.wal.sync().and_then(|()| inner.record_wal_end(w.wal_number, w.wal.len(), w.last_seq))
    } else {
        Ok(())
    };
    inner.release_lock();
    result
}
