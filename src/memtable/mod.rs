//! The memtable: recent writes, in memory, ordered by internal key (user key
//! ascending, then sequence number descending; see [`crate::key`]).
//!
//! Concurrency: any number of readers, one writer at a time (the engine
//! serialises writers). Versions are laid out in an arena of chunks and
//! ordered by a set of 16-byte keys pointing into it (`arena`), both
//! behind one `parking_lot::RwLock`; each `get` or `insert` holds the lock
//! for one set operation, and a range iterator ([`MemtableRange`]) takes
//! the read lock only while it copies the next chunk of entries, so a slow
//! consumer never blocks the writer for long.
//!
//! Range tombstones sit beside the map, in a list of their own that reads
//! take fragmented ([`RangeDels`]), rebuilt on the first read after a range
//! delete; a memtable that never saw one answers with a counter's load.
//!
//! Entries are never removed. Freezing is done by the owner: stop writing
//! to an `Arc<Memtable>` and it is the immutable memtable a flush drains.

mod arena;
mod range;

use std::collections::BTreeSet;
use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use bytes::Bytes;
use parking_lot::RwLock;

use crate::key::{MAX_SEQ, SeqNo, ValueKind, compare_internal};
use crate::range_del::{RangeDels, RangeTombstone};
use crate::{BatchOp, Error, Result, WriteBatch};

use arena::Arena;
pub(crate) use arena::MemKey;
pub use range::{MemEntry, MemtableRange};

/// Bytes charged per entry on top of its key and value: the set node share
/// (a 16-byte `MemKey` in B-tree nodes about two-thirds full) and the
/// arena's 18-byte header. Resident memory grew 164.0 bytes per 116-byte
/// entry over 10^6 random puts (`db_bench`'s key layout), 48.0 over the
/// payload (the 48-byte key before it: 195.6). An estimate, used only to
/// decide when to flush.
pub const ENTRY_OVERHEAD: usize = 48;

/// The first eight bytes of `key`, big-endian, zero-padded. Ordering by it
/// agrees with ordering the keys: where two prefixes differ, the keys
/// differ first at that byte (a zero pad only ever sits against a real
/// byte of a longer key with the same bytes before it, and a shorter key
/// sorts first). Equal prefixes decide nothing: the whole keys are then
/// compared.
#[inline]
fn key_prefix(key: &[u8]) -> u64 {
    if let Some(head) = key.first_chunk::<8>() {
        u64::from_be_bytes(*head)
    } else {
        let mut head = [0u8; 8];
        head[..key.len()].copy_from_slice(key);
        u64::from_be_bytes(head)
    }
}

/// Internal-key order, deciding on the inline prefixes where they differ:
/// only a tie follows a key to its arena chunk.
#[inline]
fn compare<A: KeyRef + ?Sized, B: KeyRef + ?Sized>(a: &A, b: &B) -> std::cmp::Ordering {
    a.prefix().cmp(&b.prefix()).then_with(|| compare_internal(a.key(), a.seq(), b.key(), b.seq()))
}

/// An internal key the map can be searched with without owning it: a
/// lookup probes with a borrowed `(user key, seq)` instead of copying the
/// key into a `Bytes` (an allocation and a free per memtable per lookup,
/// a fifth of an absent-key get's instructions when measured).
trait KeyRef {
    /// The key's prefix ([`key_prefix`]).
    fn prefix(&self) -> u64;
    /// The user key.
    fn key(&self) -> &[u8];
    /// The sequence number.
    fn seq(&self) -> SeqNo;
}

/// A search key, its prefix computed once: borrowed by a lookup
/// (`Probe<&[u8]>`), owned by a range iterator's bounds, which outlive a
/// read lock where a `MemKey` never leaves its set ([`Edge`]).
#[derive(Debug, Clone)]
pub(crate) struct Probe<K> {
    prefix: u64,
    key: K,
    seq: SeqNo,
}

/// An owned search key: a range iterator's bound.
pub(crate) type Edge = Probe<Box<[u8]>>;

impl<K: AsRef<[u8]>> Probe<K> {
    pub(crate) fn new(user_key: K, seq: SeqNo) -> Self {
        Probe { prefix: key_prefix(user_key.as_ref()), key: user_key, seq }
    }
}

impl<K: AsRef<[u8]>> KeyRef for Probe<K> {
    #[inline]
    fn prefix(&self) -> u64 {
        self.prefix
    }

    #[inline]
    fn key(&self) -> &[u8] {
        self.key.as_ref()
    }

    #[inline]
    fn seq(&self) -> SeqNo {
        self.seq
    }
}

impl Ord for MemKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        compare(self, other)
    }
}

// Equal as ordered: a version is its key and sequence number (the set
// replaces a version inserted twice; the first one's bytes stay in the
// arena).
impl PartialEq for MemKey {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for MemKey {}

impl PartialOrd for MemKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl<'a> std::borrow::Borrow<dyn KeyRef + 'a> for MemKey {
    fn borrow(&self) -> &(dyn KeyRef + 'a) {
        self
    }
}

// The borrowed form orders exactly as `MemKey` does (`Borrow`'s contract).
impl Ord for dyn KeyRef + '_ {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        compare(self, other)
    }
}

impl PartialOrd for dyn KeyRef + '_ {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for dyn KeyRef + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for dyn KeyRef + '_ {}

/// The set and the arena its keys point into, under one lock: a reader
/// holding it may follow any key in the set and slice its chunk.
#[derive(Debug, Default)]
pub(crate) struct Map {
    pub(crate) set: BTreeSet<MemKey>,
    arena: Arena,
}

impl Map {
    /// The version's user key and value, sharing its chunk once the writer
    /// moved on.
    pub(crate) fn key_value(&self, key: &MemKey) -> (Bytes, Bytes) {
        self.arena.key_value(key)
    }

    /// The version's value, sharing its chunk once the writer moved on.
    pub(crate) fn value(&self, key: &MemKey) -> Bytes {
        self.arena.value(key)
    }

    fn insert(&mut self, user_key: &[u8], seq: SeqNo, kind: ValueKind, value: &[u8]) {
        let key = self.arena.alloc(user_key, seq, kind, value);
        self.set.replace(key);
    }
}

/// An in-memory, sorted, multi-version write buffer.
///
/// ```
/// use std::ops::Bound;
/// use std::sync::Arc;
/// use siftdb::ValueKind;
/// use siftdb::memtable::Memtable;
/// let m = Arc::new(Memtable::new());
/// m.insert(b"k", 1, ValueKind::Value, b"old").unwrap();
/// m.insert(b"k", 2, ValueKind::Tombstone, b"").unwrap();
/// assert_eq!(m.get(b"k", 1).unwrap().1.as_ref(), b"old");
/// assert_eq!(m.get(b"k", 9).unwrap().0, ValueKind::Tombstone);
/// let seqs: Vec<u64> = m.range(Bound::Unbounded, Bound::Unbounded, 9).map(|e| e.seq).collect();
/// assert_eq!(seqs, [2, 1]); // newest first
/// ```
#[derive(Debug, Default)]
pub struct Memtable {
    map: RwLock<Map>,
    bytes: AtomicUsize,
    /// Key and value bytes of every version inserted, replaced ones
    /// included: what the application wrote into this memtable.
    user_bytes: AtomicU64,
    range_dels: RwLock<RangeDelList>,
    /// Range tombstones written: read without a lock, so a memtable without
    /// any costs a lookup one load (a reader whose snapshot sees a range
    /// delete sees its count here, as [`Memtable::get`] explains for `bytes`).
    range_del_count: AtomicUsize,
}

/// A memtable's range tombstones as written, and their fragmented set once
/// a read asked for it.
#[derive(Debug, Default)]
struct RangeDelList {
    written: Vec<RangeTombstone>,
    set: Option<Arc<RangeDels>>,
}

impl Memtable {
    /// An empty memtable.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a version of `user_key`. Inserting the same key and sequence
    /// number twice keeps the second value (and charges both: the first
    /// one's bytes stay in the arena until the memtable goes).
    ///
    /// # Errors
    /// `InvalidArgument` if `seq > MAX_SEQ`.
    pub fn insert(&self, user_key: &[u8], seq: SeqNo, kind: ValueKind, value: &[u8]) -> Result<()> {
        check_seq(seq)?;
        self.map.write().insert(user_key, seq, kind, value);
        self.bytes.fetch_add(entry_bytes(user_key, value), Ordering::Relaxed);
        self.user_bytes.fetch_add((user_key.len() + value.len()) as u64, Ordering::Relaxed);
        Ok(())
    }

    /// Inserts every op of `batch`, the i-th with sequence number
    /// `base_seq + i`, under one lock acquisition.
    ///
    /// # Errors
    /// `InvalidArgument` if the batch's last sequence number passes
    /// `MAX_SEQ`; nothing is inserted then.
    pub fn apply_batch(&self, base_seq: SeqNo, batch: &WriteBatch) -> Result<()> {
        let last = base_seq.saturating_add(batch.len().saturating_sub(1) as u64);
        check_seq(last)?;
        let mut map = self.map.write();
        let mut added = 0;
        for (seq, op) in (base_seq..).zip(batch.iter()) {
            if let BatchOp::DeleteRange { start, end } = op {
                added += entry_bytes(start, end);
                self.add_range_tombstone(RangeTombstone::new(start.to_vec(), end.to_vec(), seq));
                continue;
            }
            let (key, value) = (op.key(), op.value());
            added += entry_bytes(key, value);
            map.insert(key, seq, op.kind(), value);
        }
        drop(map);
        self.bytes.fetch_add(added, Ordering::Relaxed);
        self.user_bytes.fetch_add(batch.payload_bytes() as u64, Ordering::Relaxed);
        Ok(())
    }

    /// Adds a range tombstone over `[start, end)` at `seq`.
    ///
    /// # Errors
    /// `InvalidArgument` if `seq > MAX_SEQ` or `start` does not sort
    /// before `end`.
    pub fn delete_range(&self, start: &[u8], end: &[u8], seq: SeqNo) -> Result<()> {
        check_seq(seq)?;
        if start >= end {
            return Err(Error::InvalidArgument("a range delete's start must sort before its end".into()));
        }
        self.add_range_tombstone(RangeTombstone::new(start.to_vec(), end.to_vec(), seq));
        self.bytes.fetch_add(entry_bytes(start, end), Ordering::Relaxed);
        self.user_bytes.fetch_add((start.len() + end.len()) as u64, Ordering::Relaxed);
        Ok(())
    }

    fn add_range_tombstone(&self, t: RangeTombstone) {
        let mut list = self.range_dels.write();
        list.written.push(t);
        list.set = None;
        self.range_del_count.fetch_add(1, Ordering::Release);
    }

    /// The memtable's range tombstones, fragmented; `None` if it has none
    /// (the usual case, answered without a lock).
    #[must_use]
    pub fn range_dels(&self) -> Option<Arc<RangeDels>> {
        if self.range_del_count.load(Ordering::Acquire) == 0 {
            return None;
        }
        if let Some(set) = &self.range_dels.read().set {
            return Some(Arc::clone(set));
        }
        let mut guard = self.range_dels.write();
        let list = &mut *guard;
        let set = list.set.get_or_insert_with(|| Arc::new(RangeDels::new(list.written.iter().cloned())));
        Some(Arc::clone(set))
    }

    /// Number of range tombstones written.
    #[must_use]
    pub fn range_del_count(&self) -> usize {
        self.range_del_count.load(Ordering::Acquire)
    }

    /// The newest version of `user_key` with sequence number `<= snapshot`:
    /// its kind and value (empty for a tombstone). `None` if the memtable
    /// holds no such version (the caller then looks in older tables).
    ///
    /// This is the point entries only: a range tombstone here may still
    /// delete what it returns ([`Memtable::get_version`] and
    /// [`Memtable::range_dels`] tell).
    #[must_use]
    pub fn get(&self, user_key: &[u8], snapshot: SeqNo) -> Option<(ValueKind, Bytes)> {
        self.get_version(user_key, snapshot).map(|(_, kind, value)| (kind, value))
    }

    /// [`Memtable::get`] with the version's sequence number.
    #[must_use]
    pub fn get_version(&self, user_key: &[u8], snapshot: SeqNo) -> Option<(SeqNo, ValueKind, Bytes)> {
        // An empty memtable (every one after a flush or a settled
        // `compact`) answers without taking its lock, a line every reader
        // would otherwise write. Every entry adds to `bytes` before the
        // insert returns, and a version is visible to a reader only after
        // its writer published the sequence number (Release) the reader's
        // snapshot was read from (Acquire), so a visible version is never
        // missed here.
        if self.bytes.load(Ordering::Relaxed) == 0 {
            return None;
        }
        // The first entry at or after (key, snapshot) is the newest visible
        // version, if it belongs to the same user key.
        let probe = Probe::new(user_key, snapshot);
        let map = self.map.read();
        let from: Bound<&dyn KeyRef> = Bound::Included(&probe);
        let k = map.set.range::<dyn KeyRef, _>((from, Bound::Unbounded)).next()?;
        (k.user_key() == user_key).then(|| (k.seq(), k.kind(), map.value(k)))
    }

    /// Approximate memory held: keys, values and [`ENTRY_OVERHEAD`] per entry.
    #[must_use]
    pub fn approximate_bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Key and value bytes of every version inserted (a tombstone counts its
    /// key), replaced versions included: the application's bytes, the
    /// measure of write amplification.
    #[must_use]
    pub fn user_bytes(&self) -> u64 {
        self.user_bytes.load(Ordering::Relaxed)
    }

    /// Number of entries: versions, tombstones and range tombstones.
    #[must_use]
    pub fn len(&self) -> usize {
        self.map.read().set.len() + self.range_del_count()
    }

    /// Whether nothing was ever written to the memtable, read without its
    /// lock: a reader whose snapshot was read after a write's sequence
    /// number was published sees that write's bytes here (see
    /// [`Memtable::get`]), so `true` means no version the reader may see.
    #[must_use]
    pub fn unwritten(&self) -> bool {
        self.bytes.load(Ordering::Relaxed) == 0
    }

    /// Whether the memtable holds no entries (range tombstones included).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.map.read().set.is_empty() && self.range_del_count() == 0
    }

    /// The entries with user keys within the bounds and sequence numbers
    /// `<= snapshot`, in internal-key order: every visible version of each
    /// key, newest first (the consumer keeps the first and skips the rest, or
    /// keeps all when flushing). Pass [`MAX_SEQ`] to see everything.
    #[must_use]
    pub fn range(
        self: &Arc<Self>,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        snapshot: SeqNo,
    ) -> MemtableRange {
        MemtableRange::new(Arc::clone(self), lower, upper, snapshot)
    }

    pub(crate) fn read_map(&self) -> parking_lot::RwLockReadGuard<'_, Map> {
        self.map.read()
    }
}

fn entry_bytes(key: &[u8], value: &[u8]) -> usize {
    key.len() + value.len() + ENTRY_OVERHEAD
}

fn check_seq(seq: SeqNo) -> Result<()> {
    if seq > MAX_SEQ {
        return Err(Error::InvalidArgument(format!("sequence number {seq} exceeds 2^56 - 1")));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
