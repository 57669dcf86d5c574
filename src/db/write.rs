//! The write path: one WAL record per batch, group commit, memtable rotation.
//!
//! A writer takes the write lock, assigns its batch consecutive sequence
//! numbers, appends one WAL record (reaching the OS before the call
//! returns), inserts the ops into the memtable, and releases the lock.
//!
//! - Buffered (`sync = false`): the batch becomes visible right away.
//! - Sync: writers queue their batches. A writer that finds no leader at
//!   work becomes the leader: it takes the whole queue, appends one record
//!   per batch, fsyncs once, publishes the last sequence number and hands
//!   every queued writer its verdict. Batches arriving during that fsync
//!   queue up for the next leader, so under load one fsync covers many
//!   writers (group commit). A batch is never visible before its fsync.
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
use std::time::{Duration, Instant};

use crate::batch::WriteBatch;
use parking_lot::{Condvar, Mutex};

use crate::key::{MAX_SEQ, SeqNo};
use crate::manifest::log_file_name;
use crate::memtable::Memtable;
use crate::wal::FrameWriter;
use crate::{Error, Result};

use super::DbInner;
use super::stats::bump;
use crate::options::{Compaction, check_batch};
use crate::tree::{MemRef, SuperVersion};

/// Frozen memtables allowed to queue for flush before writers wait.
const MAX_IMMUTABLE: usize = 2;

/// What the write lock protects.
#[derive(Debug)]
pub(crate) struct WriteState {
    pub wal: FrameWriter,
    pub wal_number: u64,
    pub mem: Arc<Memtable>,
    /// The last sequence number assigned.
    pub last_seq: SeqNo,
}

/// Synced writers waiting to be committed, and whether a leader is at work.
#[derive(Debug, Default)]
pub(crate) struct CommitQueue {
    state: Mutex<CommitState>,
    done: Condvar,
}

#[derive(Debug, Default)]
struct CommitState {
    queue: Vec<Arc<Waiter>>,
    leader_active: bool,
}

/// One synced writer's batch and, once committed, its outcome.
#[derive(Debug)]
struct Waiter {
    batch: WriteBatch,
    result: Mutex<Option<Result<()>>>,
}

impl DbInner {
    pub(crate) fn write_batch(&self, batch: WriteBatch) -> Result<()> {
        check_batch(&batch)?;
        self.check_writable()?;
        if batch.is_empty() {
            return Ok(());
        }
        self.throttle()?;
        if self.opts.sync {
            return self.write_synced(batch);
        }
        let mut w = self.write.lock();
        self.check_writable()?;
        self.append(&mut w, &batch)?;
        // Buffered: the record is in the OS; publish at once.
        self.visible_seq.store(w.last_seq, Ordering::Release);
        drop(w);
        bump(&self.counters.writes, 1);
        bump(&self.counters.write_ops, batch.len() as u64);
        bump(&self.counters.user_bytes, batch.payload_bytes() as u64);
        Ok(())
    }

    /// Group commit: the writer that finds no leader at work becomes the
    /// leader, takes every queued batch, appends them all, fsyncs once and
    /// publishes them; the others wait for its verdict. Batches queue while
    /// a leader fsyncs, so the next fsync covers all of them.
    fn write_synced(&self, batch: WriteBatch) -> Result<()> {
        let me = Arc::new(Waiter { batch, result: Mutex::new(None) });
        let mut st = self.commit.state.lock();
        st.queue.push(Arc::clone(&me));
        loop {
            if let Some(result) = me.result.lock().take() {
                return result;
            }
            if st.leader_active {
                self.commit.done.wait(&mut st);
                continue;
            }
            st.leader_active = true;
            let group = std::mem::take(&mut st.queue);
            drop(st);
            let outcome = self.commit_group(&group);
            st = self.commit.state.lock();
            st.leader_active = false;
            for w in &group {
                let result = match &outcome {
                    Ok(()) => Ok(()),
                    Err(e) if Arc::ptr_eq(w, &me) => Err(clone_error(e)),
                    Err(e) => Err(Error::WritesDisabled(format!("group commit failed: {e}"))),
                };
                *w.result.lock() = Some(result);
            }
            self.commit.done.notify_all();
        }
    }

    /// Appends every batch of `group`, fsyncs once, publishes.
    fn commit_group(&self, group: &[Arc<Waiter>]) -> Result<()> {
        let mut w = self.write.lock();
        self.check_writable()?;
        for waiter in group {
            self.append(&mut w, &waiter.batch)?;
        }
        if let Err(e) = w.wal.sync() {
            drop(w);
            self.fail(format!("WAL fsync failed: {e}"));
            return Err(e);
        }
        bump(&self.counters.wal_syncs, 1);
        self.visible_seq.store(w.last_seq, Ordering::Release);
        drop(w);
        bump(&self.counters.writes, group.len() as u64);
        bump(&self.counters.write_ops, group.iter().map(|g| g.batch.len() as u64).sum());
        bump(&self.counters.user_bytes, group.iter().map(|g| g.batch.payload_bytes() as u64).sum());
        Ok(())
    }

    /// Under the write lock: rotates a full memtable, assigns sequence
    /// numbers, appends the WAL record and inserts into the memtable. The
    /// batch is not yet visible.
    fn append(&self, w: &mut WriteState, batch: &WriteBatch) -> Result<()> {
        if w.mem.approximate_bytes() >= self.opts.memtable_bytes && !w.mem.is_empty() {
            self.rotate(w)?;
        }
        let base = w.last_seq + 1;
        let last = base + batch.len() as u64 - 1;
        if last > MAX_SEQ {
            return Err(Error::WritesDisabled("sequence numbers exhausted (2^56 writes)".into()));
        }
        let before = w.wal.len();
        if let Err(e) = w.wal.append_with(|out| batch.encode_into(out, base)) {
            self.fail(format!("WAL write failed: {e}"));
            return Err(e);
        }
        bump(&self.counters.wal_bytes, w.wal.len().saturating_sub(before));
        // Cannot fail: the sequence range was checked above.
        w.mem.apply_batch(base, batch)?;
        w.last_seq = last;
        Ok(())
    }

    /// Makes every write so far durable.
    pub(crate) fn sync_wal(&self) -> Result<()> {
        self.check_writable()?;
        let mut w = self.write.lock();
        self.sync_held(&mut w)
    }

    /// Fsyncs the live WAL under the write lock, publishes every write it
    /// holds, and records its synced end in the manifest.
    pub(crate) fn sync_held(&self, w: &mut WriteState) -> Result<()> {
        if let Err(e) = w.wal.sync() {
            self.fail(format!("WAL fsync failed: {e}"));
            return Err(e);
        }
        bump(&self.counters.wal_syncs, 1);
        self.visible_seq.fetch_max(w.last_seq, Ordering::AcqRel);
        self.record_wal_end(w.wal_number, w.wal.len(), w.last_seq)
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
        self.sync_held(w)?;
        let frozen = MemRef { mem: Arc::clone(&w.mem), wal_number: w.wal_number };
        w.wal = crate::wal::writer(file);
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
        self.wake_flush();
        Ok(())
    }

    /// Waits while too many memtables queue for flush or level 0 is past its
    /// stop trigger; sleeps 1 ms past the slowdown trigger. Counts each
    /// stall and the time it took (the clock is read only once stalled).
    fn throttle(&self) -> Result<()> {
        let mut stalled: Option<Instant> = None;
        loop {
            self.check_writable()?;
            let sv = self.current();
            let l0 = sv.tree.l0_tables();
            let imm_full = sv.imm.len() >= MAX_IMMUTABLE;
            // FIFO keeps every table on level 0: its count is no backlog.
            let limits = self.opts.auto_compaction && self.opts.compaction == Compaction::Leveled;
            let l0_stop = limits && l0 >= self.opts.l0_stop_trigger;
            if !imm_full && !l0_stop {
                if limits && l0 >= self.opts.l0_slowdown_trigger {
                    bump(&self.counters.write_stalls, 1);
                    let slowed = Instant::now();
                    std::thread::sleep(Duration::from_millis(1));
                    self.count_stall(slowed);
                }
                if let Some(since) = stalled {
                    self.count_stall(since);
                }
                return Ok(());
            }
            if stalled.is_none() {
                stalled = Some(Instant::now());
                bump(&self.counters.write_stalls, 1);
            }
            self.wake_flush();
            self.wake_compaction();
            self.wait_bg(Duration::from_millis(20));
        }
    }

    fn count_stall(&self, since: Instant) {
        let micros = u64::try_from(since.elapsed().as_micros()).unwrap_or(u64::MAX);
        bump(&self.counters.write_stall_micros, micros);
    }
}

/// A copy of `e` for the leader's own result (errors are not `Clone`).
fn clone_error(e: &Error) -> Error {
    match e {
        Error::Io(io) => Error::Io(std::io::Error::new(io.kind(), io.to_string())),
        Error::InvalidArgument(m) => Error::InvalidArgument(m.clone()),
        Error::Closed => Error::Closed,
        Error::OpenedReadOnly => Error::OpenedReadOnly,
        other => Error::WritesDisabled(other.to_string()),
    }
}
