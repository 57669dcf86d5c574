//! `range` and `prefix`: the merge of memtables and tables as of one
//! sequence number, within bounds, from either end. For each user key the
//! version the snapshot sees decides: a value is yielded, a tombstone hides
//! the key. Forwards the merge is [`crate::merge::Visible`]; backwards,
//! [`crate::merge::VisibleBack`] over the sources read backwards. Each end
//! opens its sources when it is first read. Both ends may be mixed, as on a
//! `BTreeMap` range: each stops at the last key the other yielded, so every
//! key comes once.
//!
//! The iterator owns `Arc`s of every memtable and table it reads, so a
//! flush or compaction that replaces them does not disturb it. Memtables are
//! read in chunks, each copied under the memtable's read lock, so no lock is
//! held between `next` calls.

use std::ops::Bound;
use std::sync::Arc;

use bytes::Bytes;

use crate::key::{SeqNo, ValueKind, before_start};
use crate::merge::{Merge, Visible, VisibleBack};
use crate::sources::{MemRevSource, MemSource, Source, TablesRevSource, TablesSource};
use crate::tree::SuperVersion;
use crate::{Error, Result};

use super::DbInner;

/// The key-value pairs of a range, as of one sequence number: ascending
/// from `next`, descending from `next_back` (`.rev()`), and both mixed.
///
/// Yields `Err` at most once (a table read failed) and then ends.
pub struct DbIter {
    /// The memtables and tables the iterator reads, fixed when it was made.
    sv: Option<Arc<SuperVersion>>,
    start: Bound<Bytes>,
    end: Bound<Bytes>,
    snapshot: SeqNo,
    front: Option<Visible>,
    back: Option<VisibleBack>,
    /// The last key each end yielded: the other end stops before it.
    front_last: Option<Bytes>,
    back_last: Option<Bytes>,
    done: bool,
    error: Option<Error>,
}

impl std::fmt::Debug for DbIter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DbIter").field("snapshot", &self.snapshot).finish_non_exhaustive()
    }
}

impl DbIter {
    /// An iterator as of `snapshot`, or (`None`) of the newest visible
    /// write, read after the tree is fixed (see `DbInner::get_at`).
    pub(crate) fn new(
        inner: &DbInner,
        (start, end): (Bound<Bytes>, Bound<Bytes>),
        snapshot: Option<SeqNo>,
    ) -> DbIter {
        let mut it = DbIter {
            sv: None,
            start,
            end,
            snapshot: snapshot.unwrap_or(0),
            front: None,
            back: None,
            front_last: None,
            back_last: None,
            done: false,
            error: None,
        };
        if let Err(e) = inner.check_open() {
            it.error = Some(e);
            return it;
        }
        // The snapshot is read after the tree is fixed, as a point read
        // does, so every write it admits is in what the iterator reads.
        it.sv = Some(inner.current());
        it.snapshot = snapshot.unwrap_or_else(|| inner.visible_seq());
        it
    }

    fn step_front(&mut self) -> Result<Option<(Bytes, Bytes)>> {
        // Each end's sources are opened when that end is first read, so a
        // reverse scan reads no block at the range's start.
        if self.front.is_none() {
            let Some(sv) = &self.sv else { return Ok(None) };
            let sources = forward_sources(sv, &self.start)?;
            self.front = Some(Visible::new(Merge::new(sources), self.snapshot, self.end.clone()));
        }
        let Some(front) = self.front.as_mut() else { return Ok(None) };
        while let Some(v) = front.next_visible()? {
            // Sources start at the start key, so only an excluded start
            // itself comes before it.
            if v.kind == ValueKind::Value && !before_start(&self.start, &v.key) {
                return Ok(Some((v.key, v.value)));
            }
        }
        Ok(None)
    }

    fn step_back(&mut self) -> Result<Option<(Bytes, Bytes)>> {
        if self.back.is_none() {
            let Some(sv) = &self.sv else { return Ok(None) };
            let sources = backward_sources(sv, &self.start, &self.end)?;
            self.back = Some(VisibleBack::new(Merge::backward(sources), self.snapshot, self.start.clone()));
        }
        let Some(back) = self.back.as_mut() else { return Ok(None) };
        while let Some(v) = back.next_visible()? {
            if v.kind == ValueKind::Value {
                return Ok(Some((v.key, v.value)));
            }
        }
        Ok(None)
    }

    /// One item from either end: the error first if there is one, and the
    /// end once the two ends meet.
    fn take(&mut self, from_back: bool) -> Option<Result<(Bytes, Bytes)>> {
        if self.done {
            return None;
        }
        if let Some(e) = self.error.take() {
            self.done = true;
            return Some(Err(e));
        }
        let step = if from_back { self.step_back() } else { self.step_front() };
        match step {
            Ok(Some((key, value))) => {
                let met = if from_back {
                    self.front_last.as_ref().is_some_and(|f| key <= *f)
                } else {
                    self.back_last.as_ref().is_some_and(|b| key >= *b)
                };
                if met {
                    self.done = true;
                    return None;
                }
                *(if from_back { &mut self.back_last } else { &mut self.front_last }) = Some(key.clone());
                Some(Ok((key, value)))
            }
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

/// The sources a forward scan from `start` merges: every memtable, each
/// level-0 table, and one run per deeper level.
fn forward_sources(sv: &SuperVersion, start: &Bound<Bytes>) -> Result<Vec<Box<dyn Source>>> {
    let seek: Bytes = match start {
        Bound::Included(k) | Bound::Excluded(k) => k.clone(),
        Bound::Unbounded => Bytes::new(),
    };
    let mut sources: Vec<Box<dyn Source>> = Vec::new();
    for m in std::iter::once(&sv.mem).chain(sv.imm.iter().rev()) {
        sources.push(Box::new(MemSource::new(&m.mem, &seek)));
    }
    for level in sv.tree.each_level() {
        if level.number == 0 {
            for t in level.tables {
                sources.push(Box::new(TablesSource::new(vec![Arc::clone(t)], &seek)?));
            }
        } else if !level.tables.is_empty() {
            sources.push(Box::new(TablesSource::new(level.tables.to_vec(), &seek)?));
        }
    }
    Ok(sources)
}

/// The same sources read backwards from `end` down to `start`.
fn backward_sources(
    sv: &SuperVersion,
    start: &Bound<Bytes>,
    end: &Bound<Bytes>,
) -> Result<Vec<Box<dyn Source>>> {
    let (start, end) = (start.as_ref().map(|k| &k[..]), end.as_ref().map(|k| &k[..]));
    let mut sources: Vec<Box<dyn Source>> = Vec::new();
    for m in std::iter::once(&sv.mem).chain(sv.imm.iter().rev()) {
        sources.push(Box::new(MemRevSource::new(&m.mem, end)));
    }
    for level in sv.tree.each_level() {
        if level.number == 0 {
            for t in level.tables {
                sources.push(Box::new(TablesRevSource::new(vec![Arc::clone(t)], (start, end))?));
            }
        } else if !level.tables.is_empty() {
            sources.push(Box::new(TablesRevSource::new(level.tables.to_vec(), (start, end))?));
        }
    }
    Ok(sources)
}

impl Iterator for DbIter {
    type Item = Result<(Bytes, Bytes)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.take(false)
    }
}

impl DoubleEndedIterator for DbIter {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.take(true)
    }
}

/// The range of keys starting with `prefix`: from the prefix itself up to
/// (excluding) the smallest key greater than every such key.
pub(crate) fn prefix_bounds(prefix: &[u8]) -> (Bound<Bytes>, Bound<Bytes>) {
    let start = Bound::Included(Bytes::copy_from_slice(prefix));
    match crate::prefix::successor(prefix) {
        Some(upper) => (start, Bound::Excluded(Bytes::from(upper))),
        None => (start, Bound::Unbounded),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_bounds_cover_exactly_the_prefix() {
        assert_eq!(prefix_bounds(b"ab").1, Bound::Excluded(Bytes::from_static(b"ac")));
        assert_eq!(prefix_bounds(b"a\xff").1, Bound::Excluded(Bytes::from_static(b"b")));
        assert_eq!(prefix_bounds(b"\xff\xff").1, Bound::Unbounded);
        assert_eq!(prefix_bounds(b"").1, Bound::Unbounded);
    }
}
