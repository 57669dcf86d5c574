//! The write path: one WAL record per batch, group commit, memtable rotation.
//!
//! A writer takes the write lock, assigns its batch consecutive sequence
//! numbers, appends one WAL record (reaching the OS before the call
//! returns), inserts the ops into the memtable, and releases the lock.
//!
//! - Buffered (`sync = false`): the batch becomes visible right away.
//! - Sync: the batch stays invisible until an fsync covers it. Writers then
//!   queue on `sync_serial`; the first one fsyncs everything appended so far
//!   (its own record and every record queued behind it), and the writers
//!   whose records that fsync covered return without an fsync of their own.
//!   That is group commit: N concurrent writers cost far fewer than N fsyncs.
//!
//! A failed write or fsync turns the database read-only; no write is
//! acknowledged after it, and unsynced batches never become visible.
//!
//! When the memtable is full, the next writer freezes it (under the write
//! lock, before appending), syncs its WAL, starts a new WAL, and wakes the
//! flush thread. Writes wait when two frozen memtables are already queued,
//! and slow down or stop when level 0 has too many tables.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::batch::WriteBatch;
use crate::key::{MAX_SEQ, SeqNo};
use crate::manifest::log_file_name;
use crate::memtable::Memtable;
use crate::wal::WalWriter;
use crate::{Error, Result};

use super::options::check_entry;
use super::stats::bump;
use super::tree::{MemRef, SuperVersion};
use super::{BgSignal, DbInner};

/// Frozen memtables allowed to queue for flush before writers wait.
const MAX_IMMUTABLE: usize = 2;

/// What the write lock protects.
#[derive(Debug)]
pub(crate) struct WriteState {
    pub wal: WalWriter,
    pub wal_number: u64,
    pub mem: Arc<Memtable>,
    /// The last sequence number assigned.
    pub last_seq: SeqNo,
    /// WAL bytes appended this session, over every WAL (monotonic).
    pub logical_bytes: u64,
}

impl DbInner {
    pub(crate) fn write_batch(&self, batch: &WriteBatch) -> Result<()> {
        for op in batch.iter() {
            check_entry(op.key(), op.value())?;
        }
        self.check_writable()?;
        if batch.is_empty() {
            return Ok(());
        }
        self.throttle()?;
        let (end, last_seq) = {
            let mut w = self.write.lock();
            self.check_writable()?;
            if w.mem.approximate_bytes() >= self.opts.memtable_bytes && !w.mem.is_empty() {
                self.rotate(&mut w)?;
            }
            let base = w.last_seq + 1;
            if base + batch.len() as u64 - 1 > MAX_SEQ {
                return Err(Error::ReadOnly("sequence numbers exhausted (2^56 writes)".into()));
            }
            let payload = batch.encode(base);
            let before = w.wal.len();
            if let Err(e) = w.wal.append(&payload) {
                if !matches!(e, Error::InvalidArgument(_)) {
                    self.fail(format!("WAL write failed: {e}"));
                }
                return Err(e);
            }
            let appended = w.wal.len() - before;
            w.logical_bytes += appended;
            // Cannot fail: the sequence range was checked before logging.
            w.mem.apply_batch(base, batch)?;
            w.last_seq = base + batch.len() as u64 - 1;
            bump(&self.counters.wal_bytes, appended);
            if !self.opts.sync {
                self.visible_seq.store(w.last_seq, Ordering::Release);
            }
            (w.logical_bytes, w.last_seq)
        };
        if self.opts.sync {
            self.sync_to(end, last_seq)?;
        }
        bump(&self.counters.writes, 1);
        bump(&self.counters.write_ops, batch.len() as u64);
        Ok(())
    }

    /// Makes WAL bytes up to `end` (logical) durable, sharing the fsync with
    /// every writer that queued meanwhile; then publishes `last_seq`.
    fn sync_to(&self, end: u64, last_seq: SeqNo) -> Result<()> {
        let _serial = self.sync_serial.lock();
        if self.synced_upto.load(Ordering::Acquire) < end {
            let mut w = self.write.lock();
            let (upto, seq) = (w.logical_bytes, w.last_seq);
            if let Err(e) = w.wal.sync() {
                drop(w);
                self.fail(format!("WAL fsync failed: {e}"));
                return Err(e);
            }
            bump(&self.counters.wal_syncs, 1);
            self.synced_upto.fetch_max(upto, Ordering::AcqRel);
            self.visible_seq.fetch_max(seq, Ordering::AcqRel);
        }
        // A failure after our bytes were synced does not un-sync them, but
        // the caller must still not be told "ok" if the database failed
        // before our record was covered: that case returned above.
        debug_assert!(self.visible_seq.load(Ordering::Acquire) >= last_seq);
        Ok(())
    }

    /// Makes every write so far durable.
    pub(crate) fn sync_wal(&self) -> Result<()> {
        self.check_writable()?;
        let _serial = self.sync_serial.lock();
        let mut w = self.write.lock();
        let (upto, seq) = (w.logical_bytes, w.last_seq);
        if let Err(e) = w.wal.sync() {
            drop(w);
            self.fail(format!("WAL fsync failed: {e}"));
            return Err(e);
        }
        bump(&self.counters.wal_syncs, 1);
        self.synced_upto.fetch_max(upto, Ordering::AcqRel);
        self.visible_seq.fetch_max(seq, Ordering::AcqRel);
        Ok(())
    }

    /// Freezes the active memtable and starts a new WAL. The old WAL is
    /// synced first, so every frozen memtable's WAL is durable and
    /// `Db::sync` only ever needs to sync the newest WAL.
    pub(crate) fn rotate(&self, w: &mut WriteState) -> Result<()> {
        let number = self.allocate_file_number();
        let path = self.dir.join(log_file_name(number));
        let created = self.fs.create(&path).and_then(|f| self.fs.sync_dir(&self.dir).map(|()| f));
        let file = match created {
            Ok(f) => f,
            Err(e) => {
                self.fail(format!("cannot create WAL {}: {e}", path.display()));
                return Err(e.into());
            }
        };
        if let Err(e) = w.wal.sync() {
            self.fail(format!("WAL fsync failed: {e}"));
            return Err(e);
        }
        bump(&self.counters.wal_syncs, 1);
        self.synced_upto.fetch_max(w.logical_bytes, Ordering::AcqRel);
        self.visible_seq.fetch_max(w.last_seq, Ordering::AcqRel);
        let frozen = MemRef { mem: Arc::clone(&w.mem), wal_number: w.wal_number };
        w.wal = WalWriter::new(file);
        w.wal_number = number;
        w.mem = Arc::new(Memtable::new());
        {
            let mut sv = self.sv.write();
            let mut imm = sv.imm.clone();
            imm.push(frozen);
            *sv = Arc::new(SuperVersion {
                mem: MemRef { mem: Arc::clone(&w.mem), wal_number: number },
                imm,
                tree: Arc::clone(&sv.tree),
            });
        }
        let _ = self.flush_tx.send(BgSignal::Wake);
        Ok(())
    }

    /// Waits while too many memtables queue for flush or level 0 is past its
    /// stop trigger; sleeps 1 ms past the slowdown trigger.
    fn throttle(&self) -> Result<()> {
        let mut stalled = false;
        loop {
            self.check_writable()?;
            let sv = self.current();
            let l0 = sv.tree.l0_tables();
            let imm_full = sv.imm.len() >= MAX_IMMUTABLE;
            let l0_stop = self.opts.auto_compaction && l0 >= self.opts.l0_stop_trigger;
            if !imm_full && !l0_stop {
                if self.opts.auto_compaction && l0 >= self.opts.l0_slowdown_trigger {
                    bump(&self.counters.write_stalls, 1);
                    std::thread::sleep(Duration::from_millis(1));
                }
                return Ok(());
            }
            if !stalled {
                stalled = true;
                bump(&self.counters.write_stalls, 1);
            }
            let _ = self.flush_tx.send(BgSignal::Wake);
            self.wake_compaction();
            self.wait_bg(Duration::from_millis(20));
        }
    }
}
