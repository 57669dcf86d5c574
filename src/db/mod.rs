//! The database: [`Db`] and what it is configured and measured with.
//!
//! | file | concept |
//! |---|---|
//! | `open/` | opening: directory checks, manifest and WAL recovery |
//! | `write` | the write path: WAL, group commit, memtable rotation |
//! | `read` | point lookups through memtables and tables |
//! | `iter` | the merging iterator behind `range` and `prefix` |
//! | `snapshot` | [`Snapshot`] and the live-snapshot registry |
//! | `flush` | memtable → level-0 table, and the background thread |
//! | [`stats`] | [`Stats`] and the live counters |
//! | `lock` | the `LOCK` file |
//! | `workers` | the background threads' lifetime, wake-ups, and waiting until they are idle |
//!
//! [`Options`] (`crate::options`) and the in-memory tree of open tables
//! (`crate::tree`) sit below both `db` and `compaction`, which read them.
//!
//! Lock order (never the other way): `write` → `manifest` → `sv`; the background threads never take `write`.

mod checkpoint;
mod compact;
mod flush;
mod info;
mod ingest;
mod install;
pub(crate) mod iter;
mod key_range;
mod lock;
mod open;
mod read;
mod secondary;
mod shape;
mod snapshot;
pub mod stats;
mod workers;
mod write;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use bytes::Bytes;
use crossbeam_channel::Sender;
use parking_lot::{Condvar, Mutex, RwLock};

pub use crate::options::{MAX_KEY_BYTES, MAX_VALUE_BYTES, Options};
pub use info::TableInfo;
pub use ingest::{IngestOptions, Ingested, IngestedTable};
pub use iter::DbIter;
pub use key_range::KeyRange;
pub use snapshot::Snapshot;
pub use stats::{LevelStats, Stats};

use crate::batch::WriteBatch;
use crate::fs::FileSystem;
use crate::key::SeqNo;
use crate::manifest::{ManifestWriter, VersionSet};
use crate::policy::FilterPolicy;
use crate::sink::TableSink;
use crate::tree::SuperVersion;
use crate::{Error, Result};
use lock::DirLock;
use snapshot::SnapshotList;
use stats::Counters;
use workers::{Wakes, Workers, close_inner};
use write::{CommitQueue, WriteState};

/// What the background threads are asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BgSignal {
    /// Work may be waiting.
    Wake,
    /// Exit.
    Shutdown,
}

/// The manifest writer and the state it has made durable.
#[derive(Debug)]
pub(crate) struct ManifestState {
    pub writer: ManifestWriter,
    pub set: VersionSet,
    /// The manifest's length right after its snapshot edit.
    pub base_len: u64,
}

/// State shared by every handle, snapshot and iterator of one database.
pub(crate) struct DbInner {
    pub dir: PathBuf,
    pub opts: Options,
    pub fs: Arc<dyn FileSystem>,
    /// The seed of every table filter (from the manifest).
    pub salt: u64,
    lock: Mutex<Option<DirLock>>,
    pub write: Mutex<WriteState>,
    /// Synced writers queued for group commit.
    pub commit: CommitQueue,
    /// The newest sequence number readers may see.
    pub visible_seq: AtomicU64,
    pub sv: RwLock<Arc<SuperVersion>>,
    pub manifest: Mutex<ManifestState>,
    /// Held while a compaction is chosen and runs: what it remembers.
    pub compaction: Mutex<crate::compaction::Progress>,
    /// Chooses each compaction: a `Box<dyn>` (see `CompactionStrategy`).
    pub strategy: Box<dyn crate::compaction::CompactionStrategy>,
    pub next_file: AtomicU64,
    pub counters: Arc<Counters>,
    /// The filter policy tables are written with (the stored one unless the
    /// options named another).
    pub policy: FilterPolicy,
    /// The policy `policy` replaced when it last changed (this open, or an
    /// earlier one): tables written before may still carry its filters.
    pub replaced_policy: Option<String>,
    /// What this open's recovery replayed from the WALs and lost.
    pub recovery: crate::recovery::RecoveryReport,
    pub plan_cache: crate::planner::PlanCache,
    pub snapshots: SnapshotList,
    /// Why the database turned read-only, if it did.
    pub(crate) failure: Mutex<Option<String>>,
    /// Opened with [`Db::open_read_only`]: nothing is ever written.
    pub read_only: bool,
    /// Opened with [`Db::open_secondary`] (and so read-only too).
    pub secondary: bool,
    pub closed: AtomicBool,
    /// Notified whenever background work finishes or fails.
    pub bg_changed: Condvar,
    /// Counts `bg_changed`'s notifications, so a waiter that checked its
    /// condition unlocked can tell whether it missed one.
    pub bg_epoch: Mutex<u64>,
    /// Wake-ups each background thread has not finished acting on.
    pub wakes: Wakes,
    pub flush_tx: Sender<BgSignal>,
    pub compact_tx: Sender<BgSignal>,
}

impl fmt::Debug for DbInner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DbInner").field("dir", &self.dir).finish_non_exhaustive()
    }
}

impl DbInner {
    /// The newest sequence number a reader may see.
    pub fn visible_seq(&self) -> SeqNo {
        self.visible_seq.load(Ordering::Acquire)
    }

    pub fn current(&self) -> Arc<SuperVersion> {
        Arc::clone(&self.sv.read())
    }

    pub fn allocate_file_number(&self) -> u64 {
        self.next_file.fetch_add(1, Ordering::SeqCst)
    }

    /// The means of writing new tables, for a flush or a compaction.
    pub(crate) fn sink(&self) -> TableSink<'_> {
        TableSink {
            fs: &self.fs,
            dir: &self.dir,
            next_file: &self.next_file,
            salt: self.salt,
            block_bytes: self.opts.block_bytes,
            prefix_extractor: self.opts.prefix_extractor,
            range_filter: self.opts.range_filter,
            inject_filter_build_failure: self.opts.injects_filter_build_failure(),
            clock: &*self.opts.clock,
            cleanup_failures: &self.counters.cleanup_failures,
        }
    }

    /// Turns the database read-only; the first reason sticks.
    pub fn fail(&self, why: impl fmt::Display) {
        let mut failure = self.failure.lock();
        if failure.is_none() {
            *failure = Some(why.to_string());
        }
        drop(failure);
        self.notify_bg();
    }

    /// `Closed`, `OpenedReadOnly` or `WritesDisabled` if writes are refused.
    pub fn check_writable(&self) -> Result<()> {
        if self.closed.load(Ordering::Acquire) {
            return Err(Error::Closed);
        }
        if self.read_only {
            return Err(Error::OpenedReadOnly);
        }
        match &*self.failure.lock() {
            Some(why) => Err(Error::WritesDisabled(why.clone())),
            None => Ok(()),
        }
    }

    pub fn check_open(&self) -> Result<()> {
        if self.closed.load(Ordering::Acquire) { Err(Error::Closed) } else { Ok(()) }
    }

    pub(crate) fn release_lock(&self) {
        self.lock.lock().take();
    }
}

/// An open database. Cheap to clone; every clone is the same database, and
/// it is `Send + Sync`, so threads may share one through clones or an `Arc`.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let db = siftdb::Db::open(dir.path(), siftdb::Options::default())?;
/// db.put(b"user:1", b"ada")?;
/// db.put(b"user:2", b"grace")?;
/// assert_eq!(db.get(b"user:1")?.as_deref(), Some(&b"ada"[..]));
/// let users: Vec<_> = db.prefix(b"user:").collect::<Result<_, _>>()?;
/// assert_eq!(users.len(), 2);
/// db.close()?;
/// # Ok::<(), siftdb::Error>(())
/// ```
#[derive(Clone)]
pub struct Db {
    inner: Arc<DbInner>,
    workers: Arc<Workers>,
}

impl fmt::Debug for Db {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Db").field("dir", &self.inner.dir).finish_non_exhaustive()
    }
}

impl Db {
    /// Opens the database in directory `path`, creating it if missing.
    ///
    /// # Errors
    /// - `InvalidArgument` if `path` is a file, or a non-empty directory that
    ///   is not a siftdb database (nothing is changed then), or for bad options.
    /// - `Locked` if another `Db` has it open (after retrying for 250 ms,
    ///   since a child process being spawned holds the lock until it execs).
    /// - `Corruption` naming the file for a damaged manifest, a missing or
    ///   damaged table, or (with strict recovery) a damaged WAL record.
    /// - `Io` from the file system.
    pub fn open(path: impl AsRef<Path>, opts: Options) -> Result<Db> {
        let (inner, flush_rx, compact_rx) = open::open(path.as_ref(), opts)?;
        let workers = Arc::new(Workers::start(&inner, flush_rx, compact_rx)?);
        Ok(Db { inner, workers })
    }

    /// Opens the database in directory `path` for reading only: nothing in
    /// the directory is created, changed or deleted, and no background
    /// thread runs. The state is the one [`Db::open`] would recover (the
    /// manifest, its tables, and the WALs replayed into memory, under
    /// `opts.recovery`), but a torn WAL tail is left in place rather than
    /// cut, and `CURRENT` and the manifest are not rewritten.
    ///
    /// Reads, iterators and snapshots work as usual; `put`, `delete`,
    /// `write`, `flush`, `compact` and `sync` return
    /// [`Error::OpenedReadOnly`]. The directory's lock is taken shared:
    /// read-only opens coexist, but not with a writer (in this process or
    /// another), so the files cannot change underneath. A directory without
    /// a `LOCK` file (copied without it) is opened unlocked, since creating
    /// the file would be a write: keep writers away from such a copy.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = siftdb::Db::open(dir.path(), siftdb::Options::default())?;
    /// # db.put(b"k", b"v")?;
    /// # db.close()?;
    /// let ro = siftdb::Db::open_read_only(dir.path(), siftdb::Options::default())?;
    /// assert_eq!(ro.get(b"k")?.as_deref(), Some(&b"v"[..]));
    /// assert!(matches!(ro.put(b"k", b"w"), Err(siftdb::Error::OpenedReadOnly)));
    /// # Ok::<(), siftdb::Error>(())
    /// ```
    ///
    /// # Errors
    /// - `InvalidArgument` if `path` is missing, not a directory, or not a
    ///   siftdb database (no `CURRENT`), or for bad options.
    /// - `Locked` if a writer has it open (after the same 250 ms retry).
    /// - `Corruption` and `Io` as for [`Db::open`].
    pub fn open_read_only(path: impl AsRef<Path>, opts: Options) -> Result<Db> {
        let (inner, _flush_rx, _compact_rx) = open::open_read_only(path.as_ref(), opts)?;
        let workers = Arc::new(Workers::idle(&inner));
        Ok(Db { inner, workers })
    }

    /// Whether the database was opened with [`Db::open_read_only`].
    #[must_use]
    pub fn is_read_only(&self) -> bool {
        self.inner.read_only
    }

    /// The database directory.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.inner.dir
    }

    /// The filter policy this database writes tables with: the one stored
    /// in it, unless [`Options::filter_policy`] named another.
    #[must_use]
    pub fn filter_policy(&self) -> &FilterPolicy {
        &self.inner.policy
    }

    /// The options the database was opened with.
    #[must_use]
    pub fn options(&self) -> &Options {
        &self.inner.opts
    }

    /// The salt of every table filter's key hash.
    #[must_use]
    pub fn hash_salt(&self) -> u64 {
        self.inner.salt
    }

    /// Sets `key` to `value`.
    ///
    /// # Errors
    /// `InvalidArgument` for an oversize key or value; `WritesDisabled` after an
    /// earlier write failure; `Closed`; `Io` if the WAL write (or, with
    /// `sync`, its fsync) fails, after which the database is read-only.
    pub fn put(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        let mut batch = WriteBatch::new();
        batch.put(key, value);
        self.write(batch)
    }

    /// Removes `key` (a no-op if absent).
    ///
    /// # Errors
    /// As [`Db::put`].
    pub fn delete(&self, key: impl AsRef<[u8]>) -> Result<()> {
        let mut batch = WriteBatch::new();
        batch.delete(key);
        self.write(batch)
    }

    /// Deletes every key `k` with `start <= k < end`, in one write however
    /// many keys the range holds. Keys written after it are visible; a
    /// [`Snapshot`] taken before it still sees the old ones (the README's
    /// example shows both).
    ///
    /// # Errors
    /// `InvalidArgument` if `start` does not sort before `end`, or either
    /// is oversize; otherwise as [`Db::put`].
    pub fn delete_range(&self, start: impl AsRef<[u8]>, end: impl AsRef<[u8]>) -> Result<()> {
        let mut batch = WriteBatch::new();
        batch.delete_range(start, end);
        self.write(batch)
    }

    /// Applies every op of `batch` atomically: after a crash, all or none of
    /// it is present, and no reader sees part of it.
    ///
    /// # Errors
    /// As [`Db::put`]; nothing of the batch is applied on error.
    pub fn write(&self, batch: WriteBatch) -> Result<()> {
        self.inner.write_batch(batch)
    }

    /// The value of `key`, if any: a slice of what it was read from (a 32 KiB
    /// memtable chunk, a table block or mapping), so copy values kept long.
    /// # Errors
    /// `Corruption` or `Io` from a table read; `Closed`.
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Bytes>> {
        self.inner.get_at(key.as_ref(), None)
    }

    /// Key-value pairs with keys in `range`, ascending. The bounds may be
    /// any `AsRef<[u8]>`: `b"a"..b"c"`, `"a"..="c"`, `"a"..`, `..` (see
    /// [`KeyRange`]).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let db = siftdb::Db::open(dir.path(), siftdb::Options::default()).unwrap();
    /// for k in ["a", "b", "c"] { db.put(k, "v").unwrap(); }
    /// let keys: Vec<_> = db.range("a".."c").map(|r| r.unwrap().0).collect();
    /// assert_eq!(keys, [&b"a"[..], &b"b"[..]]);
    /// assert_eq!(db.range(b"b"..).count(), 2);
    /// assert_eq!(db.range(String::from("a")..=String::from("b")).count(), 2);
    /// ```
    pub fn range(&self, range: impl KeyRange) -> DbIter {
        DbIter::new(&self.inner, range.into_bounds(), None, None)
    }

    /// Every key-value pair, ascending.
    #[must_use]
    pub fn iter(&self) -> DbIter {
        DbIter::new(&self.inner, (std::ops::Bound::Unbounded, std::ops::Bound::Unbounded), None, None)
    }

    /// Key-value pairs whose key starts with `prefix`, ascending.
    #[must_use]
    pub fn prefix(&self, prefix: impl AsRef<[u8]>) -> DbIter {
        DbIter::new(&self.inner, iter::prefix_bounds(prefix.as_ref()), None, None)
    }

    /// A consistent read-only view as of now.
    #[must_use]
    pub fn snapshot(&self) -> Snapshot {
        Snapshot::new(Arc::clone(&self.inner))
    }

    /// Freezes the memtable and writes it to a level-0 table; returns once
    /// the table and the manifest edit naming it are durable. Every write
    /// acknowledged before the call is then in a table.
    ///
    /// # Errors
    /// `WritesDisabled` if the database failed earlier or the flush fails; `Io`.
    pub fn flush(&self) -> Result<()> {
        self.inner.flush_and_wait()
    }

    /// Makes every acknowledged write durable (fsyncs the WAL).
    ///
    /// # Errors
    /// `Io` if the fsync fails (the database is then read-only).
    pub fn sync(&self) -> Result<()> {
        self.inner.sync_wal()
    }

    /// Settles the tree: flushes the memtable (as [`Db::flush`]), merges
    /// level 0 away, compacts until every level is within its target size,
    /// and rewrites the filters that drifted from the policy's plan, then
    /// returns. Level 0 ends empty unless other threads write meanwhile,
    /// so a lookup of an absent key probes one filter per deeper level and
    /// nothing more. Runs on the calling thread (one compaction at a time:
    /// it waits for a background one to finish).
    ///
    /// # Errors
    /// `WritesDisabled` if the database failed earlier or a compaction fails; `Io`.
    pub fn compact(&self) -> Result<()> {
        self.inner.compact_all()
    }

    /// Waits until the background threads have nothing left to do, as
    /// `RocksDB`'s `WaitForCompact` does: no frozen memtable waits for or
    /// is in a flush, no compaction runs, and the compaction strategy finds
    /// no level past its trigger or target and no filter refresh due. The
    /// tree then stays as it is until the next write. Writes from other
    /// threads meanwhile may extend the wait (each full memtable is one more
    /// flush); the active memtable is not flushed ([`Db::flush`] first for
    /// that). It sleeps on a condition variable, never spins.
    ///
    /// With [`Options::auto_compaction`] off nothing compacts in the
    /// background, so it returns once the flushes are done, whatever the
    /// strategy would find (rather than wait for work nobody will do). A
    /// database opened read-only has no background work: it returns at once.
    ///
    /// # Errors
    /// `WritesDisabled` if the database failed, before or during the wait
    /// (a failed flush or compaction stops the background work for good);
    /// `Closed` if it is closed, before or during the wait.
    pub fn wait_for_background_work(&self) -> Result<()> {
        self.inner.wait_for_background_work()
    }

    internal_fn! {
        /// Runs, on the calling thread, the compactions the background
        /// thread would run now (merges past their triggers and targets, and
        /// filter refreshes where a level's plan and its tables disagree on
        /// having a filter), until none is due; unlike [`Db::compact`] it
        /// leaves level 0 below its trigger and filters within their plan's
        /// kinds as they are. With `auto_compaction` off, a loader that calls
        /// it between memtables gets a tree that does not depend on thread
        /// scheduling (the bench does).
        ///
        /// # Errors
        /// As [`Db::compact`].
        fn compact_due(&self) -> Result<()> {
            self.inner.compact_due()
        }
    }

    /// A snapshot of the counters and the shape of the tree.
    #[must_use]
    pub fn stats(&self) -> Stats {
        self.inner.stats()
    }

    /// Stops background work, syncs the WAL and releases the lock. Dropping
    /// the last clone does the same, ignoring errors. Later calls on any
    /// clone return `Closed`.
    ///
    /// # Errors
    /// `Io` if the final fsync fails.
    pub fn close(&self) -> Result<()> {
        close_inner(&self.inner, &self.workers)
    }
}

/// `for item in &db` walks the whole database, as [`Db::iter`].
impl IntoIterator for &Db {
    type Item = <DbIter as Iterator>::Item;
    type IntoIter = DbIter;

    fn into_iter(self) -> DbIter {
        self.iter()
    }
}
