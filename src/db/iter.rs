//! `range` and `prefix`: the merge of memtables and tables
//! ([`crate::merge::Visible`]) as of one sequence number, within bounds.
//! For each user key the version the snapshot sees decides: a value is
//! yielded, a tombstone hides the key.
//!
//! The iterator owns `Arc`s of every memtable and table it reads, so a
//! flush or compaction that replaces them does not disturb it. Memtables are
//! read in chunks, each copied under the memtable's read lock, so no lock is
//! held between `next` calls.

use std::ops::Bound;
use std::sync::Arc;

use bytes::Bytes;

use crate::Result;
use crate::key::{SeqNo, ValueKind};
use crate::merge::{Merge, Visible};
use crate::sources::{MemSource, Source, TablesSource};

use super::DbInner;

/// Ascending key-value pairs of a range, as of one sequence number.
///
/// Yields `Err` at most once (a table read failed) and then ends.
pub struct DbIter {
    visible: Option<Visible>,
    start: Bound<Bytes>,
    snapshot: SeqNo,
    done: bool,
    error: Option<crate::Error>,
}

impl std::fmt::Debug for DbIter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DbIter").field("snapshot", &self.snapshot).finish_non_exhaustive()
    }
}

impl DbIter {
    /// An iterator as of `snapshot`, or (`None`) of the newest visible
    /// write, read after the sources are fixed (see `DbInner::get_at`).
    pub(crate) fn new(
        inner: &DbInner,
        (start, end): (Bound<Bytes>, Bound<Bytes>),
        snapshot: Option<SeqNo>,
    ) -> DbIter {
        let mut it =
            DbIter { visible: None, start, snapshot: snapshot.unwrap_or(0), done: false, error: None };
        match inner.check_open().and_then(|()| it.sources(inner)) {
            Ok(sources) => {
                // Read after the sources are fixed, so every write it admits
                // is in them.
                it.snapshot = snapshot.unwrap_or_else(|| inner.visible_seq());
                it.visible = Some(Visible::new(Merge::new(sources), it.snapshot, end));
            }
            Err(e) => it.error = Some(e),
        }
        it
    }

    fn sources(&self, inner: &DbInner) -> Result<Vec<Box<dyn Source>>> {
        let seek: Bytes = match &self.start {
            Bound::Included(k) | Bound::Excluded(k) => k.clone(),
            Bound::Unbounded => Bytes::new(),
        };
        let sv = inner.current();
        let mut sources: Vec<Box<dyn Source>> = Vec::new();
        for m in std::iter::once(&sv.mem).chain(sv.imm.iter().rev()) {
            sources.push(Box::new(MemSource::new(&m.mem, &seek)));
        }
        for (level, tables) in sv.tree.levels.iter().enumerate() {
            if level == 0 {
                for t in tables {
                    sources.push(Box::new(TablesSource::new(vec![Arc::clone(t)], &seek)?));
                }
            } else if !tables.is_empty() {
                sources.push(Box::new(TablesSource::new(tables.clone(), &seek)?));
            }
        }
        Ok(sources)
    }

    fn step(&mut self) -> Result<Option<(Bytes, Bytes)>> {
        let Some(visible) = self.visible.as_mut() else { return Ok(None) };
        while let Some(v) = visible.next_visible()? {
            // Sources start at the start key, so only an excluded start
            // itself comes before it.
            if v.kind == ValueKind::Value && !before(&self.start, &v.key) {
                return Ok(Some((v.key, v.value)));
            }
        }
        Ok(None)
    }
}

/// Whether `key` lies before the range's `start`.
fn before(start: &Bound<Bytes>, key: &[u8]) -> bool {
    match start {
        Bound::Included(s) => key < s.as_ref(),
        Bound::Excluded(s) => key <= s.as_ref(),
        Bound::Unbounded => false,
    }
}

impl Iterator for DbIter {
    type Item = Result<(Bytes, Bytes)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if let Some(e) = self.error.take() {
            self.done = true;
            return Some(Err(e));
        }
        match self.step() {
            Ok(Some(kv)) => Some(Ok(kv)),
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

/// The range of keys starting with `prefix`: from the prefix itself up to
/// (excluding) the smallest key greater than every such key.
pub(crate) fn prefix_bounds(prefix: &[u8]) -> (Bound<Bytes>, Bound<Bytes>) {
    let mut upper = prefix.to_vec();
    while let Some(last) = upper.pop() {
        if last < u8::MAX {
            upper.push(last + 1);
            return (Bound::Included(Bytes::copy_from_slice(prefix)), Bound::Excluded(Bytes::from(upper)));
        }
    }
    (Bound::Included(Bytes::copy_from_slice(prefix)), Bound::Unbounded)
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
