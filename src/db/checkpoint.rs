//! A consistent copy of a live database in a new directory.
//!
//! The memtables are flushed first, so the copy needs no WAL: it is the
//! tables of one manifest version, which holds every batch acknowledged
//! before the call whole, and no part of any later one (a batch lives in
//! one memtable, and a version holds whole flushes). The tables are
//! immutable once published, so each is hard-linked (copied across file
//! systems); the compaction lock is held meanwhile, so no table the
//! version names is deleted under the links.
//!
//! The copy is built in a staging directory beside `dst`
//! (`<dst name>.checkpoint-tmp`, as `RocksDB` does): the tables, a fresh
//! manifest naming exactly that version, `CURRENT`, a sync of the staging
//! directory, and only then one rename onto `dst` and a sync of its parent.
//! Written straight into `dst`, a copy cut short before its first table and
//! manifest were durable would leave an empty directory, which `Db::open`
//! takes for a new, empty database: a copy that opens wrong. With the
//! rename, `dst` is as it was (missing, or empty) or the whole copy; what a
//! crash leaves is in the staging directory, which the next checkpoint to
//! the same `dst` clears first.

use std::path::{Path, PathBuf};

use crate::fs::FileSystem;
use crate::manifest::{ManifestWriter, set_current, table_file_name};
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
    /// The copy is built in `<dst name>.checkpoint-tmp` beside `dst` and
    /// renamed onto it when complete; a staging directory left by an earlier
    /// failed checkpoint (or a crash during one) is removed first.
    ///
    /// # Errors
    /// `InvalidArgument` if `dst` holds anything or has no file name;
    /// `Closed`, or `WritesDisabled` (the memtables are flushed first, which
    /// a read-only or failed database cannot do); `Io` from the copy, which
    /// leaves `dst` as it was and removes the staging directory (best
    /// effort: a crash leaves it to the next checkpoint). Only a failure of
    /// the very last step, the sync of `dst`'s parent, leaves the complete
    /// copy in `dst`, its name perhaps not yet durable.
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
        let (parent, stage) = staging_dir(dst)?;
        self.flush_and_wait()?;
        if fs.exists(&stage) {
            clear_dir(fs, &stage)?;
        }
        let result = self.build_copy(&stage).and_then(|()| {
            fs.rename(&stage, dst)?;
            Ok(fs.sync_dir(&parent)?)
        });
        if result.is_err() && fs.exists(&stage) {
            // Best effort: a leftover staging directory is never opened as
            // the copy, and the next checkpoint to `dst` clears it.
            let _ = clear_dir(fs, &stage);
        }
        result
    }

    /// Builds the whole copy in `stage`, durable before it is renamed.
    fn build_copy(&self, stage: &Path) -> Result<()> {
        let fs = &*self.fs;
        let _no_compaction = self.compaction.lock();
        let mut set = self.manifest.lock().set.clone();
        fs.create_dir_all(stage)?;
        for (_, t) in set.version.tables() {
            let name = table_file_name(t.file_number);
            fs.link_or_copy(&self.dir.join(&name), &stage.join(&name))?;
        }
        // The copy has no WAL: nothing of one is recorded, and the log
        // number stays (the copy's first log is at or past it).
        set.wal_ends.clear();
        let number = set.next_file_number.max(self.next_file.load(std::sync::atomic::Ordering::SeqCst));
        set.next_file_number = number + 1;
        ManifestWriter::create(fs, stage, number, &set.snapshot_edit())?;
        set_current(fs, stage, number)?;
        fs.sync_dir(stage)?;
        Ok(())
    }
}

/// `dst`'s parent (`.` for a bare name, so it can be synced) and the
/// staging directory beside `dst`.
fn staging_dir(dst: &Path) -> Result<(PathBuf, PathBuf)> {
    let Some(name) = dst.file_name() else {
        return Err(Error::InvalidArgument(format!("checkpoint: {} has no file name", dst.display())));
    };
    let parent = match dst.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut stage = name.to_os_string();
    stage.push(".checkpoint-tmp");
    let stage = parent.join(stage);
    Ok((parent, stage))
}

/// Removes the staging directory `dir` and the files in it (it holds no
/// subdirectory: a checkpoint writes none, and one there is not ours).
fn clear_dir(fs: &dyn FileSystem, dir: &Path) -> Result<()> {
    for entry in fs.list_dir(dir)? {
        fs.remove_file(&entry)?;
    }
    fs.remove_dir(dir)?;
    Ok(())
}
