//! Range tombstones: one write that deletes every key in `[start, end)`,
//! and the fragmented set that answers "is this version deleted?".
//!
//! A range tombstone written at sequence number `t` hides every version of
//! every key `k` with `start <= k < end` and sequence number below `t`, for
//! a reader whose snapshot is at or above `t`. It hides nothing written
//! after it, and nothing from a snapshot taken before it.
//!
//! The memtable, each table and each scan keep their tombstones as a
//! [`RangeDels`]: the tombstones cut at every start and end into disjoint,
//! sorted fragments, each with the sequence numbers of the tombstones that
//! cover it, newest first.
//!
//! ```text
//!   tombstones   [b, f)@7   [d, h)@9
//!   fragments    [b, d): 7   [d, f): 9 7   [f, h): 9
//! ```
//!
//! So a question about one key is a binary search for its fragment and a
//! walk down that fragment's (short) list to the first number the reader's
//! snapshot sees. The tombstones themselves are kept as written too: they
//! are what a table stores and a compaction carries.

use std::ops::Bound;

use bytes::Bytes;

use crate::key::SeqNo;

/// One range deletion: every key `k` with `start <= k < end`, as of `seq`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RangeTombstone {
    /// The first key deleted.
    pub start: Bytes,
    /// The first key past the range (not deleted).
    pub end: Bytes,
    /// The sequence number of the write.
    pub seq: SeqNo,
}

impl RangeTombstone {
    /// A tombstone over `[start, end)` at `seq`.
    #[must_use]
    pub fn new(start: impl Into<Bytes>, end: impl Into<Bytes>, seq: SeqNo) -> Self {
        RangeTombstone { start: start.into(), end: end.into(), seq }
    }

    /// Whether the range holds `key`.
    #[must_use]
    pub fn contains(&self, key: &[u8]) -> bool {
        self.start.as_ref() <= key && key < self.end.as_ref()
    }

    /// The part of the tombstone within `[lo, hi)` (either end open when
    /// `None`), or `None` if nothing of it lies there.
    #[must_use]
    pub fn clipped(&self, lo: Option<&[u8]>, hi: Option<&[u8]>) -> Option<RangeTombstone> {
        let start = match lo {
            Some(lo) if lo > self.start.as_ref() => Bytes::copy_from_slice(lo),
            _ => self.start.clone(),
        };
        let end = match hi {
            Some(hi) if hi < self.end.as_ref() => Bytes::copy_from_slice(hi),
            _ => self.end.clone(),
        };
        (start < end).then_some(RangeTombstone { start, end, seq: self.seq })
    }
}

/// The largest key a tombstone ending at `end` may cover, as an inclusive
/// bound for a table's key range: `end` without its last byte when that
/// byte is 0 (the key just below `x\0` is `x`, exactly), else `end` itself
/// (no finite key sits just below it, so the bound takes in `end`, which
/// the tombstone does not cover: one key too many, never one too few).
#[must_use]
pub fn inclusive_end(end: &[u8]) -> &[u8] {
    match end.split_last() {
        Some((0, head)) => head,
        _ => end,
    }
}

/// The smallest key after `key`: `key` followed by a zero byte. A
/// compaction cuts a tombstone there, between two output tables, so the
/// first table's range ends at `key` exactly (see [`inclusive_end`]).
#[must_use]
pub fn successor(key: &[u8]) -> Bytes {
    let mut next = Vec::with_capacity(key.len() + 1);
    next.extend_from_slice(key);
    next.push(0);
    Bytes::from(next)
}

/// `tombstones` with the pieces of one write joined again: a compaction
/// cuts a tombstone between its output tables, and the next compaction
/// that reads those tables together writes it back whole.
#[must_use]
pub fn coalesced(mut tombstones: Vec<RangeTombstone>) -> Vec<RangeTombstone> {
    tombstones.sort_unstable_by(|a, b| a.seq.cmp(&b.seq).then_with(|| a.start.cmp(&b.start)));
    let mut out: Vec<RangeTombstone> = Vec::with_capacity(tombstones.len());
    for t in tombstones {
        match out.last_mut() {
            Some(last) if last.seq == t.seq && last.end >= t.start => {
                if t.end > last.end {
                    last.end = t.end;
                }
            }
            _ => out.push(t),
        }
    }
    out.sort_unstable();
    out
}

/// A key interval and the tombstones covering all of it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Fragment {
    start: Bytes,
    end: Bytes,
    /// Sequence numbers of the tombstones covering the fragment, newest first.
    seqs: Vec<SeqNo>,
}

/// A set of range tombstones, fragmented for lookups (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RangeDels {
    /// The tombstones as written, sorted, without duplicates.
    tombstones: Vec<RangeTombstone>,
    /// Disjoint, sorted by start.
    fragments: Vec<Fragment>,
}

impl RangeDels {
    /// The set of `tombstones` (empty ranges are left out).
    #[must_use]
    pub fn new(tombstones: impl IntoIterator<Item = RangeTombstone>) -> Self {
        let mut tombstones: Vec<RangeTombstone> = tombstones.into_iter().filter(|t| t.start < t.end).collect();
        tombstones.sort_unstable();
        tombstones.dedup();
        let fragments = fragment(&tombstones);
        RangeDels { tombstones, fragments }
    }

    /// Whether the set holds no tombstone.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.tombstones.is_empty()
    }

    /// Number of tombstones (as written, not fragments).
    #[must_use]
    pub fn len(&self) -> usize {
        self.tombstones.len()
    }

    /// The tombstones, sorted by start, then end, then sequence number.
    #[must_use]
    pub fn tombstones(&self) -> &[RangeTombstone] {
        &self.tombstones
    }

    /// The newest sequence number at or below `snapshot` of a tombstone
    /// covering `key`; `None` if no tombstone the snapshot sees covers it.
    /// A version of `key` with a smaller sequence number is deleted.
    #[must_use]
    pub fn covering(&self, key: &[u8], snapshot: SeqNo) -> Option<SeqNo> {
        let i = self.fragments.partition_point(|f| f.end.as_ref() <= key);
        let f = self.fragments.get(i).filter(|f| f.start.as_ref() <= key)?;
        f.seqs.iter().copied().find(|&s| s <= snapshot)
    }

    /// Whether the version of `key` written at `seq` is deleted for a
    /// reader at `snapshot`.
    #[must_use]
    pub fn deletes(&self, key: &[u8], seq: SeqNo, snapshot: SeqNo) -> bool {
        self.covering(key, snapshot).is_some_and(|t| t > seq)
    }

    /// The tombstones that meet the key range `(lower, upper)`.
    pub fn meeting<'a>(
        &'a self,
        lower: Bound<&'a [u8]>,
        upper: Bound<&'a [u8]>,
    ) -> impl Iterator<Item = &'a RangeTombstone> + 'a {
        self.tombstones.iter().filter(move |t| {
            let after_lower = match lower {
                Bound::Included(k) | Bound::Excluded(k) => t.end.as_ref() > k,
                Bound::Unbounded => true,
            };
            let before_upper = match upper {
                Bound::Included(k) => t.start.as_ref() <= k,
                Bound::Excluded(k) => t.start.as_ref() < k,
                Bound::Unbounded => true,
            };
            after_lower && before_upper
        })
    }

    /// The smallest key any tombstone covers.
    #[must_use]
    pub fn smallest(&self) -> Option<&[u8]> {
        self.tombstones.first().map(|t| t.start.as_ref())
    }

    /// The largest key any tombstone may cover, as an inclusive bound
    /// ([`inclusive_end`]).
    #[must_use]
    pub fn largest(&self) -> Option<&[u8]> {
        self.tombstones.iter().map(|t| inclusive_end(&t.end)).max()
    }
}

/// Cuts sorted `tombstones` at every start and end: one sweep over the
/// boundaries, adding the tombstones that start at each and dropping those
/// that end there.
fn fragment(tombstones: &[RangeTombstone]) -> Vec<Fragment> {
    let mut bounds: Vec<&Bytes> = tombstones.iter().flat_map(|t| [&t.start, &t.end]).collect();
    bounds.sort_unstable();
    bounds.dedup();
    let mut fragments: Vec<Fragment> = Vec::new();
    let mut active: Vec<&RangeTombstone> = Vec::new();
    let mut next = 0;
    for pair in bounds.windows(2) {
        let (from, to) = (pair[0], pair[1]);
        while let Some(t) = tombstones.get(next).filter(|t| t.start <= *from) {
            active.push(t);
            next += 1;
        }
        active.retain(|t| t.end > *from);
        if active.is_empty() {
            continue;
        }
        let mut seqs: Vec<SeqNo> = active.iter().map(|t| t.seq).collect();
        seqs.sort_unstable_by(|a, b| b.cmp(a));
        seqs.dedup();
        // Neighbours with the same tombstones are one fragment.
        if let Some(last) = fragments.last_mut().filter(|f| f.end == *from && f.seqs == seqs) {
            last.end = to.clone();
        } else {
            fragments.push(Fragment { start: from.clone(), end: to.clone(), seqs });
        }
    }
    fragments
}

#[cfg(test)]
mod tests;
