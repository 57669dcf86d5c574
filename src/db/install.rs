//! Making a change to the set of tables durable and visible, in that order.
//!
//! Flush and compaction both end here: the manifest edit is appended and
//! fsynced; only then is the new tree swapped in for readers, and only then
//! are replaced tables marked for deletion (they are unlinked when the last
//! reader lets go of them).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::{Error, Result};

use crate::manifest::{ManifestWriter, VersionEdit, WalEnd, WriteTotals, manifest_file_name, set_current};

use super::{DbInner, ManifestState};
use crate::tree::{SuperVersion, TableFile};

impl DbInner {
    /// Applies `edit` to the manifest (durably) and then to the tree readers
    /// see. `opened` are the tables the edit adds; `flushed_imm` drops the
    /// oldest frozen memtable (whose contents the edit's table now holds).
    /// `written` is what the change adds to the database's write totals;
    /// the edit records the sum, settled here like the other counters (and
    /// so for `edit.fifo_dropped`, which holds what this edit dropped).
    ///
    /// On failure the database turns read-only: the manifest's tail is
    /// unknown, so no later edit may be appended after it.
    pub(crate) fn install(
        &self,
        edit: &VersionEdit,
        opened: Vec<Arc<TableFile>>,
        flushed_imm: bool,
        written: WriteTotals,
    ) -> Result<()> {
        let mut manifest = self.manifest.lock();
        // Counters only move forward; flush and compaction fill them in
        // racing each other, so settle them here, under the lock.
        let mut edit = edit.clone();
        let next_file = self.next_file.load(Ordering::SeqCst);
        edit.next_file_number = Some(next_file.max(manifest.set.next_file_number));
        edit.last_seq = edit.last_seq.map(|s| s.max(manifest.set.last_seq));
        edit.log_number = edit.log_number.map(|l| l.max(manifest.set.log_number));
        edit.write_totals = Some(manifest.set.write_totals.plus(written));
        // An edit that drops tables carries what it dropped; the manifest
        // records the running sum.
        edit.fifo_dropped = edit.fifo_dropped.map(|d| manifest.set.fifo_dropped.plus(d));
        // A table of a kind newer than the recorded format raises it first
        // (in this edit, whose tag 9 an older reader meets first).
        if let Some(v) = crate::manifest::kinds::raise_for_kinds(&edit, manifest.set.format_version) {
            edit.format_version = Some(v);
        }
        let edit = &edit;
        let mut set = manifest.set.clone();
        set.apply(edit)?;
        if let Err(e) = manifest.writer.append(edit) {
            drop(manifest);
            self.fail(format!("manifest write failed: {e}"));
            return Err(e);
        }
        manifest.set = set;
        let mut sv = self.sv.write();
        // The same edit, applied by the same rules to the open tables.
        let mut opened: HashMap<u64, Arc<TableFile>> = opened.into_iter().map(|t| (t.number(), t)).collect();
        let applied = sv.tree.apply_with(edit, |r| {
            opened.remove(&r.file_number).ok_or_else(|| {
                Error::corruption(0, format!("edit adds table {} that was not opened", r.file_number))
            })
        });
        let tree = match applied {
            Ok(tree) => tree,
            Err(e) => {
                drop(sv);
                drop(manifest);
                self.fail(format!("the tree in memory disagrees with the manifest: {e}"));
                return Err(e);
            }
        };
        for &(level, removed) in &edit.removed {
            // A table moved to another level is removed and added again:
            // its file lives on.
            if edit.added.iter().any(|(_, r)| r.file_number == removed) {
                continue;
            }
            if let Some(t) = sv.tree.level(usize::from(level)).iter().find(|t| t.number() == removed) {
                t.mark_obsolete();
            }
        }
        let imm = if flushed_imm { sv.imm.get(1..).unwrap_or(&[]).to_vec() } else { sv.imm.clone() };
        *sv = Arc::new(SuperVersion {
            mem: sv.mem.clone(),
            imm,
            tree: Arc::new(crate::tree::SearchTree::new(tree)),
        });
        drop(sv);
        // Roll only once the edits outweigh the snapshot itself, or a large
        // tree would rewrite its manifest on every edit.
        let len = manifest.writer.len();
        if len > self.opts.manifest_roll_bytes && len > 2 * manifest.base_len {
            self.roll_manifest(&mut manifest);
        }
        Ok(())
    }

    /// Records durably that WAL `number` is fsynced through `synced_len`
    /// bytes holding writes up to `last_seq` (called after the fsync, at
    /// close, rotation and `Db::sync`), so
    /// that recovery can tell a log cut after it was synced from a torn
    /// tail. Nothing is appended when the manifest already says so, or when
    /// the log is already flushed away.
    ///
    /// Lock order: the write lock may be held; the manifest lock is taken
    /// here, and no path takes the write lock while holding it.
    pub(crate) fn record_wal_end(&self, number: u64, synced_len: u64, last_seq: u64) -> Result<()> {
        let mut manifest = self.manifest.lock();
        let end = WalEnd { len: synced_len, last_seq: Some(last_seq) };
        if number < manifest.set.log_number || manifest.set.wal_ends.get(&number) == Some(&end) {
            return Ok(());
        }
        let edit = VersionEdit { wal_ends: vec![(number, end)], ..VersionEdit::default() };
        let mut set = manifest.set.clone();
        set.apply(&edit)?;
        if let Err(e) = manifest.writer.append(&edit) {
            drop(manifest);
            self.fail(format!("manifest write failed: {e}"));
            return Err(e);
        }
        manifest.set = set;
        Ok(())
    }

    /// Starts a new manifest holding one snapshot edit of the current state,
    /// points `CURRENT` at it and deletes the old one, so the manifest does
    /// not grow without bound between opens.
    ///
    /// If the new manifest cannot be written the old one stays in use (no
    /// harm done; the next edit tries again). If `CURRENT` cannot be
    /// switched it may name either manifest, so the database turns read-only.
    fn roll_manifest(&self, manifest: &mut ManifestState) {
        let number = self.allocate_file_number();
        let mut set = manifest.set.clone();
        set.next_file_number = set.next_file_number.max(self.next_file.load(Ordering::SeqCst));
        let Ok(writer) = ManifestWriter::create(&*self.fs, &self.dir, number, &set.snapshot_edit()) else {
            self.remove_obsolete_file(&self.dir.join(manifest_file_name(number)));
            return;
        };
        if let Err(e) = set_current(&*self.fs, &self.dir, number) {
            self.fail(format!("switching CURRENT to a new manifest failed: {e}"));
            return;
        }
        manifest.base_len = writer.len();
        let old = std::mem::replace(&mut manifest.writer, writer).number();
        manifest.set = set;
        self.remove_obsolete_file(&self.dir.join(manifest_file_name(old)));
    }
}
