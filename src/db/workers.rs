//! The background threads' lifetime: started with the database, stopped
//! (and the database closed) by `Db::close` or when the last `Db` clone drops.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;

use crossbeam_channel::Receiver;
use parking_lot::Mutex;

use crate::{Error, Result};

use super::{BgSignal, DbInner};

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
