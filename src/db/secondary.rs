//! A secondary: a read-only view of a database another process holds,
//! brought up to date on request.
//!
//! It takes no lock and writes nothing, ever. It reads what the writer has
//! published: tables (immutable once named by the manifest), the manifest,
//! and the logs as they stand (see `open::secondary` for how it reads one
//! whole state while they change). A table the writer deletes after a
//! compaction stays readable while the view holds it open (the mapping
//! keeps the file's data; the name only goes), so a view never fails for
//! what the writer did meanwhile: it is just older until refreshed.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::options::Options;
use crate::tree::{MemRef, SearchTree, SuperVersion, TableFile};
use crate::{Error, Result};

use super::open;
use super::workers::Workers;
use super::{Db, DbInner};

impl Db {
    /// Opens a read-only view of the database in `path` that another
    /// process (or handle) may hold open for writing (what a secondary
    /// instance is in `RocksDB`). The view holds the state as of its open:
    /// every table the writer had published and every write in its logs, so every write
    /// acknowledged before the call (a batch still being appended is left
    /// out whole). [`Db::refresh`] catches up later.
    ///
    /// It takes no lock and never creates, changes or deletes a file;
    /// writes, `flush` and `compact` return [`Error::OpenedReadOnly`].
    /// Tables the writer deletes stay readable through the view until it
    /// refreshes. A snapshot of a view keeps the state it was taken in
    /// across refreshes.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let writer = siftdb::Db::open(dir.path(), siftdb::Options::default())?;
    /// writer.put(b"k", b"v1")?;
    /// let view = siftdb::Db::open_secondary(dir.path(), siftdb::Options::default())?;
    /// assert_eq!(view.get(b"k")?.as_deref(), Some(&b"v1"[..]));
    /// writer.put(b"k", b"v2")?;
    /// assert_eq!(view.get(b"k")?.as_deref(), Some(&b"v1"[..]), "as of its open");
    /// view.refresh()?;
    /// assert_eq!(view.get(b"k")?.as_deref(), Some(&b"v2"[..]));
    /// # Ok::<(), siftdb::Error>(())
    /// ```
    ///
    /// # Errors
    /// - `InvalidArgument` if `path` is missing or not a siftdb database,
    ///   or for bad options.
    /// - `Corruption` and `Io` as for [`Db::open_read_only`]; if the writer
    ///   changed the database under every attempt to read it whole for
    ///   `recovery::SCAN_RETRY_TIME` (10 s), the last attempt's error.
    pub fn open_secondary(path: impl AsRef<Path>, opts: Options) -> Result<Db> {
        let (inner, _flush_rx, _compact_rx) = open::open_secondary(path.as_ref(), opts)?;
        let workers = Arc::new(Workers::idle(&inner));
        Ok(Db { inner, workers })
    }

    /// Whether the database was opened with [`Db::open_secondary`].
    #[must_use]
    pub fn is_secondary(&self) -> bool {
        self.inner.secondary
    }

    /// Brings a secondary up to date with what its writer has published
    /// since it opened or last refreshed. Only tables new since then are
    /// opened; the logs are read again. Readers see the old state or the
    /// new one, never a mix; snapshots and iterators keep the state they
    /// began in.
    ///
    /// # Errors
    /// `InvalidArgument` if this handle is not a secondary; `Closed`;
    /// otherwise as [`Db::open_secondary`], and the view keeps its state.
    pub fn refresh(&self) -> Result<()> {
        self.inner.refresh()
    }
}

impl DbInner {
    /// `Db::refresh`.
    fn refresh(&self) -> Result<()> {
        self.check_open()?;
        if !self.secondary {
            return Err(Error::InvalidArgument(format!(
                "{}: refresh catches a secondary up with its writer; this handle is not one \
                 (Db::open_secondary)",
                self.dir.display()
            )));
        }
        // One refresh at a time (a secondary never compacts).
        let _one = self.compaction.lock();
        let open: HashMap<u64, Arc<TableFile>> =
            self.current().tree.tables().map(|(_, t)| (t.record.file_number, Arc::clone(t))).collect();
        let c = open::catch_up(&self.fs, &self.dir, &self.opts, &open, &self.counters.cleanup_failures)?;
        let mem = Arc::new(c.mem);
        let mut write = self.write.lock();
        let mut manifest = self.manifest.lock();
        let last_seq = c.set.last_seq.max(write.last_seq);
        let sv = SuperVersion {
            mem: MemRef { mem: Arc::clone(&mem), wal_number: c.wal_number },
            imm: Vec::new(),
            tree: Arc::new(SearchTree::new(c.tree)),
        };
        *self.sv.write() = Arc::new(sv);
        manifest.set = c.set;
        manifest.set.last_seq = last_seq;
        write.mem = mem;
        write.wal_number = c.wal_number;
        write.last_seq = last_seq;
        self.visible_seq.store(last_seq, Ordering::Release);
        Ok(())
    }
}
