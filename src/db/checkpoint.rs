//! A consistent copy of a live database in a new directory.
//!
//! The memtables are flushed first, so the copy needs no WAL: it is the
//! tables of one manifest version, which holds every batch acknowledged
//! before the call whole, and no part of any later one (a batch lives in
//! one memtable, and a version holds whole flushes). The tables are
//! immutable once published, so each is hard-linked (copied across file
//! systems); the compaction lock is held meanwhile, so no table the
//! version names is deleted under the links. A fresh manifest naming
//! exactly that version goes in next, and `CURRENT` last: a copy cut short
//! before `CURRENT` has no database to open (open refuses the directory),
//! never a wrong one.

use std::path::Path;

use crate::manifest::{ManifestWriter, manifest_file_name, set_current, table_file_name};
use crate::{Error, Result};

use super::{Db, DbInner};

impl Db {
    /// Writes a consistent copy of the database into `dst`, a new (or empty)
    /// directory, while writes go on: every batch acknowledged before the
    /// call is in it whole, and none after it in part. Tables are
    /// hard-linked (copied across file systems), so the copy costs a flush
    /// and a few links; it opens as a database of its own, and writing to
    /// either changes nothing in the other.
    ///
    /// # Errors
    /// `InvalidArgument` if `dst` holds anything; `Closed`, or
    /// `WritesDisabled` (the memtables are flushed first, which a read-only
    /// or failed database cannot do); `Io` from the copy, in which case
    /// `dst` has no `CURRENT` and does not open.
    pub fn checkpoint(&self, dst: impl AsRef<Path>) -> Result<()> {
        self.inner.checkpoint(dst.as_ref())
    }
}

impl DbInner {
    /// `Db::checkpoint`.
    pub(crate) fn checkpoint(&self, dst: &Path) -> Result<()> {
        self.check_open()?;
        let fs = &*self.fs;
        if fs.list_dir(dst).is_ok_and(|entries| !entries.is_empty()) {
            return Err(Error::InvalidArgument(format!(
                "checkpoint: {} exists and is not empty",
                dst.display()
            )));
        }
        self.flush_and_wait()?;
        let _no_compaction = self.compaction.lock();
        let mut set = self.manifest.lock().set.clone();
        fs.create_dir_all(dst)?;
        for (_, t) in set.version.tables() {
            let name = table_file_name(t.file_number);
            fs.link_or_copy(&self.dir.join(&name), &dst.join(&name))?;
        }
        // The copy has no WAL: nothing of one is recorded, and the log
        // number stays (the copy's first log is at or past it).
        set.wal_ends.clear();
        let number = set.next_file_number.max(self.next_file.load(std::sync::atomic::Ordering::SeqCst));
        set.next_file_number = number + 1;
        let written = ManifestWriter::create(fs, dst, number, &set.snapshot_edit());
        if let Err(e) = written {
            let _ = fs.remove_file(&dst.join(manifest_file_name(number)));
            return Err(e);
        }
        set_current(fs, dst, number)?;
        fs.sync_dir(dst)?;
        Ok(())
    }
}
