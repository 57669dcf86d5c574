//! Flushing frozen memtables to level-0 tables, and the background threads.
//!
//! The flush thread takes the oldest frozen memtable, writes it as a new
//! level-0 table (published atomically by the table builder), and installs
//! a manifest edit that adds the table and advances the log number past the
//! memtable's WAL. Only after that edit is durable is the WAL deleted: a
//! crash at any point leaves either the WAL (replayed on open) or the table
//! (named by the manifest), never neither.

use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::Receiver;

use crate::Result;
use crate::manifest::{TableRecord, VersionEdit, WriteTotals, log_file_name};
use crate::merge::Merge;

use super::stats::bump;
use super::{BgSignal, DbInner};
use crate::policy::Writing;
use crate::sources::MemSource;
use crate::tree::{MemRef, TableFile};

pub(crate) fn flush_loop(db: &DbInner, rx: &Receiver<BgSignal>) {
    while let Ok(BgSignal::Wake) = rx.recv() {
        while db.check_writable().is_ok() {
            // A panic here would leave writers waiting for a flush that never
            // comes; turn it into a failure they can see instead.
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| db.flush_oldest())) {
                Ok(Ok(true)) => {
                    db.drop_after_flush();
                    db.notify_bg();
                    db.wake_compaction();
                }
                Ok(Ok(false)) => break,
                Ok(Err(e)) => {
                    db.fail(format!("flush failed: {e}"));
                    break;
                }
                Err(_) => {
                    db.fail("flush thread panicked");
                    break;
                }
            }
        }
        db.flush_wake_done();
    }
}

impl DbInner {
    /// Flushes the oldest frozen memtable; `false` if there is none.
    pub(crate) fn flush_oldest(&self) -> Result<bool> {
        let sv = self.current();
        let Some(imm) = sv.imm.first().cloned() else {
            return Ok(false);
        };
        let next_wal = sv.imm.get(1).map_or(sv.mem.wal_number, |m| m.wal_number);
        let entries = imm.mem.len() as u64;
        let filter = self.filter_for(&sv.tree, Writing { level: 0, entries, from: None, passing: 0 }).kind;
        drop(sv);
        let table = self.write_memtable(&imm, filter)?;
        let (flushed_bytes, flushed_entries) = (table.record.file_size, table.record.entries);
        let last_seq = self.manifest.lock().set.last_seq.max(table.record.max_seq);
        let edit = VersionEdit {
            added: vec![(0, TableRecord::clone(&table.record))],
            log_number: Some(next_wal),
            next_file_number: Some(self.next_file.load(std::sync::atomic::Ordering::SeqCst)),
            last_seq: Some(last_seq),
            ..VersionEdit::default()
        };
        let written =
            WriteTotals { user_bytes: imm.mem.user_bytes(), flush_bytes: flushed_bytes, compaction_bytes: 0 };
        self.install(&edit, vec![Arc::new(table)], true, written)?;
        bump(&self.counters.flushes, 1);
        // What the table holds, not what the memtable did: a flush drops
        // shadowed versions, and the planner sizes level 0 from this.
        bump(&self.counters.flushed_entries, flushed_entries);
        bump(&self.counters.flush_bytes_written, flushed_bytes);
        self.counters.wrote(0, 0, 0, flushed_bytes);
        // The edit is durable: the WALs before `next_wal` are no longer needed.
        for n in super::open::list_logs(&*self.fs, &self.dir)?.into_iter().filter(|&n| n < next_wal) {
            self.remove_obsolete_file(&self.dir.join(log_file_name(n)));
        }
        Ok(true)
    }

    fn write_memtable(&self, imm: &MemRef, filter: crate::FilterKind) -> Result<TableFile> {
        let sink = self.sink();
        // Level 0 is never the last level, so the policy needs no shape.
        let mut table = sink.start(0, filter, 0, self.opts.compression.for_level(0, false))?;
        // A key's versions shadowed by a newer one every reader sees (at or
        // below the horizon) are dropped, as compaction drops them: a hot
        // key overwritten thousands of times in one memtable reaches level
        // 0 as the few versions a snapshot may read, not thousands that
        // every scan passing it would step through. Every frozen memtable's
        // writes are published before it is frozen (`rotate`), and a
        // snapshot taken after the horizon is read is at or above it, so
        // none can need a dropped version. Tombstones and range tombstones
        // all stay: only a compaction knows what lies deeper.
        let horizon = self.snapshots.horizon(&self.visible_seq);
        let mut kept_at_horizon = false;
        let mut current: Option<bytes::Bytes> = None;
        let mut merge = Merge::new(vec![Box::new(MemSource::new(&imm.mem, b""))]);
        while let Some(v) = merge.next_version()? {
            if current.as_ref() != Some(&v.key) {
                current = Some(v.key.clone());
                kept_at_horizon = false;
            }
            if crate::compaction::keep(&v, horizon, &mut kept_at_horizon, &|_| true) {
                table.add(&v.key, v.seq, v.kind, &v.value)?;
            }
        }
        if let Some(dels) = imm.mem.range_dels() {
            for t in dels.tombstones() {
                table.add_range_tombstone(t)?;
            }
        }
        sink.finish(table)
    }

    /// Freezes the active memtable (if it holds anything) and waits until
    /// every frozen memtable is flushed.
    pub(crate) fn flush_and_wait(&self) -> Result<()> {
        self.check_writable()?;
        let target = {
            let mut w = self.write.lock();
            self.check_writable()?;
            if !w.mem.is_empty() {
                self.rotate(&mut w)?;
            }
            w.wal_number
        };
        self.wake_flush();
        self.wait_flushed(target)
    }

    /// Waits until every frozen memtable of a WAL before `target` is
    /// flushed. Takes no lock the flush thread needs (a caller may hold
    /// the write lock, which the flush thread never takes).
    pub(crate) fn wait_flushed(&self, target: u64) -> Result<()> {
        loop {
            self.check_writable()?;
            let sv = self.current();
            if sv.imm.first().is_none_or(|m| m.wal_number >= target) {
                return Ok(());
            }
            drop(sv);
            self.wait_bg(Duration::from_millis(50));
        }
    }
}
