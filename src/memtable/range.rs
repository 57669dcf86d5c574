//! An owned iterator over a memtable range that locks only per chunk.

use std::collections::VecDeque;
use std::ops::Bound;
use std::sync::Arc;

use bytes::Bytes;

use crate::key::{SeqNo, ValueKind};

use super::{Edge, KeyRef, Map, MemKey, Memtable, compare};

/// Entries copied under the first read lock: a short scan (10 pairs) pays
/// for little more than it reads. Each later chunk doubles, to
/// [`MAX_CHUNK`], so a long scan still takes few locks. With every chunk
/// 128, a scan of 10 over 200,000 keys in a memtable spent 12.8 of its
/// 16.1 µs in the range read, copying 128 entries to return 10
/// (`benches/scans.rs`).
const FIRST_CHUNK: usize = 16;

/// Entries copied per read-lock acquisition, at most.
const MAX_CHUNK: usize = 128;

/// Older versions of one key a newest-only read steps over before it seeks
/// past the key's remaining versions, as `RocksDB` re-seeks after 8
/// sequential skips (`max_sequential_skip_in_iterations`): stepping costs a
/// cache miss a version, a seek a search of the set.
const SKIPS_BEFORE_SEEK: usize = 8;

/// One version from the memtable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemEntry {
    /// The user key.
    pub user_key: Bytes,
    /// The write's sequence number.
    pub seq: SeqNo,
    /// Value or tombstone.
    pub kind: ValueKind,
    /// The value (empty for a tombstone).
    pub value: Bytes,
}

/// Iterates a key range of a [`Memtable`] in internal-key order, yielding
/// only versions with sequence number `<= snapshot`; from the back too
/// (`next_back`: reverse internal-key order), and both ends mixed, meeting
/// in the middle with every entry yielded once.
///
/// It owns an `Arc` of the memtable and copies entries a chunk per read
/// lock (16, then twice as many each time, up to 128), resuming after (or,
/// from the back, before) the last internal key it saw. Entries inserted
/// while it runs appear if they sort after that point; they carry sequence
/// numbers above any snapshot taken before them, so a snapshot iterator
/// never yields them. (Values are `Bytes`, so copying an entry is a
/// refcount bump.)
#[derive(Debug)]
pub struct MemtableRange {
    table: Arc<Memtable>,
    /// The part of the range not read yet: `(resume, upper)`.
    resume: Bound<Edge>,
    upper: Bound<Edge>,
    snapshot: SeqNo,
    /// Entries read from the front, in order.
    buf: VecDeque<MemEntry>,
    /// Entries read from the back, in order (taken from its end).
    back: VecDeque<MemEntry>,
    /// Entries the next read copies at most.
    chunk: usize,
    /// What `chunk` grows to.
    max_chunk: usize,
    /// Nothing is left between `resume` and `upper`.
    exhausted: bool,
    /// Yield only each key's newest version at or below the snapshot
    /// ([`MemtableRange::newest_only`]).
    newest_only: bool,
    /// The user key of the last version yielded from the front, while
    /// `newest_only`: its older versions are skipped.
    newest_of: Option<Bytes>,
    /// Read from the back while `newest_only`: the newest version seen so
    /// far of the lowest key seen. From the back a key's versions come
    /// oldest first, so it is yielded only once a lower key (or the end of
    /// the range) shows no newer one is left.
    back_newest: Option<MemEntry>,
}

impl MemtableRange {
    pub(super) fn new(
        table: Arc<Memtable>,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
        snapshot: SeqNo,
    ) -> Self {
        // Versions of one key run from the largest sequence number down to 0.
        let at = |k: &[u8], seq| Edge::new(k.into(), seq);
        let resume = match lower {
            Bound::Included(k) => Bound::Included(at(k, u64::MAX)),
            Bound::Excluded(k) => Bound::Excluded(at(k, 0)),
            Bound::Unbounded => Bound::Unbounded,
        };
        let upper = match upper {
            Bound::Included(k) => Bound::Included(at(k, 0)),
            Bound::Excluded(k) => Bound::Excluded(at(k, u64::MAX)),
            Bound::Unbounded => Bound::Unbounded,
        };
        MemtableRange {
            table,
            resume,
            upper,
            snapshot,
            buf: VecDeque::new(),
            back: VecDeque::new(),
            chunk: FIRST_CHUNK,
            max_chunk: MAX_CHUNK,
            exhausted: false,
            newest_only: false,
            newest_of: None,
            back_newest: None,
        }
    }

    /// Yields only the newest version at or below the snapshot of each key,
    /// which is all a reader's merge keeps: the older ones are not copied,
    /// and a key with more than a few of them (a hot key overwritten many
    /// times) is passed with one seek instead of a step a version, from
    /// either end. Only a range read from one end should ask for it: where
    /// the two ends meet inside a key's versions, both may yield one.
    #[must_use]
    pub fn newest_only(mut self) -> Self {
        self.newest_only = true;
        self
    }

    #[cfg(test)]
    pub(super) fn with_chunks(mut self, first: usize, max: usize) -> Self {
        self.chunk = first.max(1);
        self.max_chunk = max.max(self.chunk);
        self
    }

    fn refill(&mut self) {
        self.read_chunk(false);
    }

    fn refill_back(&mut self) {
        self.read_chunk(true);
    }

    /// Copies up to a chunk of the unread middle, from its front or its
    /// back, under one read lock.
    fn read_chunk(&mut self, from_back: bool) {
        if is_empty(&self.resume, &self.upper) {
            self.exhaust();
            return;
        }
        if self.newest_only && from_back {
            self.read_back_newest();
            return;
        }
        let map = self.table.read_map();
        let keys = self.chunk_keys(&map, from_back);
        let newest_only = self.newest_only;
        let mut scanned = 0;
        let mut last = None;
        let mut skipped = 0;
        let mut seek_past = None;
        for k in keys {
            scanned += 1;
            last = Some(k);
            if k.seq() > self.snapshot {
                continue;
            }
            if newest_only {
                let newest = self.buf.back().map(|e| &e.user_key).or(self.newest_of.as_ref());
                if newest.is_some_and(|n| n.as_ref() == k.user_key()) {
                    skipped += 1;
                    if skipped == SKIPS_BEFORE_SEEK {
                        // Versions run newest first down to sequence number
                        // 0: past `(key, 0)` is the next key.
                        seek_past = Some(Edge::new(k.user_key().into(), 0));
                        break;
                    }
                    continue;
                }
                skipped = 0;
            }
            let e = entry(&map, k);
            if from_back { self.back.push_front(e) } else { self.buf.push_back(e) }
        }
        if newest_only && let Some(e) = self.buf.back() {
            self.newest_of = Some(e.user_key.clone());
        }
        let jumped = seek_past.is_some();
        if let Some(edge) = seek_past {
            self.resume = Bound::Excluded(edge);
        }
        let stop = Stop { scanned, last: last.map(seen), jumped };
        drop(map);
        self.finish(from_back, stop);
    }

    /// [`Self::read_chunk`] from the back of a newest-only read. A key's
    /// versions come oldest first, each visible one replacing the one held
    /// in `back_newest`; after a few, the newest is found with one search
    /// instead, and the read resumes below the key.
    fn read_back_newest(&mut self) {
        let map = self.table.read_map();
        let keys = self.chunk_keys(&map, true);
        let mut scanned = 0;
        let mut last = None;
        let mut replaced = 0;
        let mut search_from = None;
        for k in keys {
            scanned += 1;
            last = Some(k);
            if k.seq() > self.snapshot {
                continue;
            }
            if self.back_newest.as_ref().is_some_and(|held| held.user_key.as_ref() == k.user_key()) {
                replaced += 1;
                if replaced == SKIPS_BEFORE_SEEK {
                    search_from = Some(k);
                    break;
                }
                self.back_newest = Some(entry(&map, k));
                continue;
            }
            replaced = 0;
            if let Some(held) = self.back_newest.replace(entry(&map, k)) {
                self.back.push_front(held);
            }
        }
        if let Some(k) = search_from {
            // The key's newest visible version is the first at or after
            // `(key, snapshot)` (newest first), and `k` is one of them. The
            // range's lower bound only matters to a read from both ends.
            let newest = Edge::new(k.user_key().into(), self.snapshot);
            let oldest = Edge::new(k.user_key().into(), k.seq());
            let lower = match &self.resume {
                Bound::Included(r) | Bound::Excluded(r) if compare(r, &newest).is_gt() => as_dyn(&self.resume),
                _ => Bound::Included(&newest as &dyn KeyRef),
            };
            let found = map.set.range::<dyn KeyRef, _>((lower, Bound::Included(&oldest as &dyn KeyRef))).next();
            self.back_newest = Some(entry(&map, found.unwrap_or(k)));
            // Before `(key, MAX)` is the previous key.
            self.upper = Bound::Excluded(Edge::new(k.user_key().into(), u64::MAX));
        }
        let stop = Stop { scanned, last: last.map(seen), jumped: search_from.is_some() };
        drop(map);
        self.finish(true, stop);
    }

    /// The next chunk's keys of the unread middle, from its front or back.
    fn chunk_keys<'m>(&self, map: &'m Map, from_back: bool) -> Vec<&'m MemKey> {
        let range = map.set.range::<dyn KeyRef, _>((as_dyn(&self.resume), as_dyn(&self.upper)));
        let chunk: Box<dyn Iterator<Item = _>> =
            if from_back { Box::new(range.rev().take(self.chunk)) } else { Box::new(range.take(self.chunk)) };
        // The set is in key order, the arena in write order: each version
        // is a cache miss. Asked for all at once, the misses overlap (a scan
        // of 300k entries took 41.6 ms one by one, 29.4 ms so:
        // docs/measurements.md).
        chunk.inspect(|k| k.prefetch()).collect()
    }

    /// Moves the read's end past what a chunk saw (unless it jumped past a
    /// key already), marks the middle read when the chunk came up short,
    /// and grows the next chunk.
    fn finish(&mut self, from_back: bool, stop: Stop) {
        if !stop.jumped {
            if let Some(edge) = stop.last {
                let seen = Bound::Excluded(edge);
                if from_back { self.upper = seen } else { self.resume = seen }
            }
            if stop.scanned < self.chunk {
                self.exhaust();
            }
        }
        self.chunk = (self.chunk * 2).min(self.max_chunk);
    }

    /// Marks the middle read; a key held by a newest-only read from the
    /// back has no newer version left, and is yielded.
    fn exhaust(&mut self) {
        self.exhausted = true;
        if let Some(held) = self.back_newest.take() {
            self.back.push_front(held);
        }
    }
}

/// Where a chunk's read stopped: entries scanned, the last one's internal
/// key, and whether it jumped past a key's versions (and set its own end).
struct Stop {
    scanned: usize,
    last: Option<Edge>,
    jumped: bool,
}

fn seen(k: &MemKey) -> Edge {
    Edge::new(k.user_key().into(), k.seq())
}

fn entry(map: &Map, k: &MemKey) -> MemEntry {
    let (user_key, value) = map.key_value(k);
    MemEntry { user_key, seq: k.seq(), kind: k.kind(), value }
}

fn as_dyn(b: &Bound<Edge>) -> Bound<&dyn KeyRef> {
    match b {
        Bound::Included(e) => Bound::Included(e),
        Bound::Excluded(e) => Bound::Excluded(e),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// Whether the internal-key range is empty (`BTreeMap::range` panics on
/// some empty ranges, so they are never passed to it).
fn is_empty(lower: &Bound<Edge>, upper: &Bound<Edge>) -> bool {
    match (lower, upper) {
        (Bound::Included(a), Bound::Included(b)) => compare(a, b).is_gt(),
        (Bound::Included(a) | Bound::Excluded(a), Bound::Excluded(b))
        | (Bound::Excluded(a), Bound::Included(b)) => compare(a, b).is_ge(),
        (Bound::Unbounded, _) | (_, Bound::Unbounded) => false,
    }
}

impl Iterator for MemtableRange {
    type Item = MemEntry;

    fn next(&mut self) -> Option<MemEntry> {
        loop {
            if let Some(e) = self.buf.pop_front() {
                return Some(e);
            }
            if self.exhausted {
                // The middle is read: what is left was read from the back.
                return self.back.pop_front();
            }
            self.refill();
        }
    }
}

impl DoubleEndedIterator for MemtableRange {
    fn next_back(&mut self) -> Option<MemEntry> {
        loop {
            if let Some(e) = self.back.pop_back() {
                return Some(e);
            }
            if self.exhausted {
                return self.buf.pop_back();
            }
            self.refill_back();
        }
    }
}
