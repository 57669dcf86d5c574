//! Snapshots: a consistent, read-only view of the database at one sequence
//! number, and the registry of live snapshots that compaction consults
//! before it drops an old version.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use parking_lot::Mutex;

use super::DbInner;
use super::iter::DbIter;
use crate::Result;
use crate::key::SeqNo;
use crate::tree::SuperVersion;

/// The sequence numbers of live snapshots, with a count per number.
#[derive(Debug, Default)]
pub(crate) struct SnapshotList {
    seqs: Mutex<BTreeMap<SeqNo, usize>>,
}

impl SnapshotList {
    /// Registers a snapshot at the current visible sequence number and
    /// returns it. Reading the number under the list's lock means a
    /// concurrent [`SnapshotList::horizon`] either sees this snapshot or
    /// computed a horizon no newer than its sequence number.
    pub fn acquire(&self, visible: &AtomicU64) -> SeqNo {
        let mut seqs = self.seqs.lock();
        let seq = visible.load(Ordering::Acquire);
        *seqs.entry(seq).or_insert(0) += 1;
        seq
    }

    /// The oldest sequence number any reader may still read at: versions
    /// shadowed by a newer version at or below it are invisible to everyone.
    pub fn horizon(&self, visible: &AtomicU64) -> SeqNo {
        let seqs = self.seqs.lock();
        let now = visible.load(Ordering::Acquire);
        seqs.keys().next().map_or(now, |&oldest| oldest.min(now))
    }

    /// The newest live snapshot's sequence number, and the list's lock
    /// held: no snapshot is taken until the guard drops (a compaction that
    /// changed entries newer than it installs under the guard).
    pub fn newest_held(&self) -> (Option<SeqNo>, parking_lot::MutexGuard<'_, BTreeMap<SeqNo, usize>>) {
        let seqs = self.seqs.lock();
        (seqs.keys().next_back().copied(), seqs)
    }

    /// The newest live snapshot's sequence number.
    pub fn newest(&self) -> Option<SeqNo> {
        self.seqs.lock().keys().next_back().copied()
    }

    pub fn release(&self, seq: SeqNo) {
        let mut seqs = self.seqs.lock();
        if let Some(n) = seqs.get_mut(&seq) {
            *n -= 1;
            if *n == 0 {
                seqs.remove(&seq);
            }
        }
    }
}

/// A consistent view of the database as of the moment it was taken.
///
/// Reads through a snapshot ignore every later write. While a snapshot
/// lives, compaction keeps the versions it can see.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let db = siftdb::Db::open(dir.path(), siftdb::Options::default()).unwrap();
/// db.put(b"k", b"old").unwrap();
/// let snap = db.snapshot();
/// db.put(b"k", b"new").unwrap();
/// assert_eq!(snap.get(b"k").unwrap().as_deref(), Some(&b"old"[..]));
/// ```
pub struct Snapshot {
    inner: Arc<DbInner>,
    seq: SeqNo,
    /// A secondary's snapshot reads the state it was taken in, whatever
    /// [`crate::Db::refresh`] brings in later: the writer's compactions
    /// may since have dropped versions the snapshot needs.
    pinned: Option<Arc<SuperVersion>>,
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot").field("seq", &self.seq).finish_non_exhaustive()
    }
}

impl Snapshot {
    pub(crate) fn new(inner: Arc<DbInner>) -> Snapshot {
        // Pinned before the sequence number is read: a refresh in between
        // raises the number past the pinned state, which still reads as
        // one whole state; the other way round, the newer state might lack
        // versions the older number needs.
        let pinned = inner.secondary.then(|| inner.current());
        let seq = inner.snapshots.acquire(&inner.visible_seq);
        Snapshot { inner, seq, pinned }
    }

    /// The sequence number this snapshot reads at.
    #[must_use]
    pub fn seq(&self) -> SeqNo {
        self.seq
    }

    /// The value of `key` as of this snapshot.
    ///
    /// # Errors
    /// `Corruption` or `Io` from a table read.
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Bytes>> {
        self.inner.get_in(self.pinned.as_ref(), key.as_ref(), Some(self.seq))
    }

    /// The value of each of `keys` as of this snapshot, in order, as
    /// [`crate::Db::multi_get`] gives them.
    ///
    /// # Errors
    /// `Corruption` or `Io` from a table read.
    pub fn multi_get<K: AsRef<[u8]>>(&self, keys: impl IntoIterator<Item = K>) -> Result<Vec<Option<Bytes>>> {
        let keys: Vec<K> = keys.into_iter().collect();
        self.inner.multi_get_in(self.pinned.as_ref(), &keys, Some(self.seq))
    }

    /// Key-value pairs in `range`, ascending, as of this snapshot (bounds as
    /// in [`crate::Db::range`]).
    pub fn range(&self, range: impl super::KeyRange) -> DbIter {
        DbIter::new(&self.inner, range.into_bounds(), Some(self.seq), self.pinned.clone())
    }

    /// Every key-value pair, ascending, as of this snapshot.
    #[must_use]
    pub fn iter(&self) -> DbIter {
        DbIter::new(
            &self.inner,
            (std::ops::Bound::Unbounded, std::ops::Bound::Unbounded),
            Some(self.seq),
            self.pinned.clone(),
        )
    }

    /// Key-value pairs whose key starts with `prefix`, ascending, as of this snapshot.
    #[must_use]
    pub fn prefix(&self, prefix: impl AsRef<[u8]>) -> DbIter {
        DbIter::new(
            &self.inner,
            super::iter::prefix_bounds(prefix.as_ref()),
            Some(self.seq),
            self.pinned.clone(),
        )
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        self.inner.snapshots.release(self.seq);
    }
}

/// `for item in &snapshot` walks the whole snapshot, as [`Snapshot::iter`].
impl IntoIterator for &Snapshot {
    type Item = <DbIter as Iterator>::Item;
    type IntoIter = DbIter;

    fn into_iter(self) -> DbIter {
        self.iter()
    }
}
