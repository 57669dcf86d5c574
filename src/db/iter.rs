//! `range` and `prefix`: a merging iterator over memtables and tables.
//!
//! Every source yields versions in internal-key order (user key ascending,
//! then newest first). The merge repeatedly takes the smallest head among
//! the sources; for each user key the first version at or below the
//! snapshot decides: a value is yielded, a tombstone hides the key, and
//! every older version of the key is skipped. With a handful of sources
//! (memtables + level-0 tables + one per deeper level) a linear scan for the
//! minimum beats a heap.
//!
//! The iterator owns `Arc`s of every memtable and table it reads, so a
//! flush or compaction that replaces them does not disturb it. Memtables are
//! read in chunks, each copied under the memtable's read lock, so no lock is
//! held between `next` calls.

use std::cmp::Ordering;
use std::ops::Bound;
use std::sync::Arc;

use bytes::Bytes;

use crate::Result;
use crate::key::{SeqNo, ValueKind};
use crate::sources::{MemSource, Source, TablesSource, internal_cmp};

use super::DbInner;

/// Ascending key-value pairs of a range, as of one sequence number.
///
/// Yields `Err` at most once (a table read failed) and then ends.
pub struct DbIter {
    sources: Vec<Box<dyn Source>>,
    start: Bound<Bytes>,
    end: Bound<Bytes>,
    snapshot: SeqNo,
    last_key: Option<Bytes>,
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
        let mut it = DbIter {
            sources: Vec::new(),
            start,
            end,
            snapshot: snapshot.unwrap_or(0),
            last_key: None,
            done: false,
            error: None,
        };
        if let Err(e) = inner.check_open().and_then(|()| it.build(inner)) {
            it.error = Some(e);
        }
        it.snapshot = snapshot.unwrap_or_else(|| inner.visible_seq());
        it
    }

    fn build(&mut self, inner: &DbInner) -> Result<()> {
        let seek: Bytes = match &self.start {
            Bound::Included(k) | Bound::Excluded(k) => k.clone(),
            Bound::Unbounded => Bytes::new(),
        };
        let sv = inner.current();
        for m in std::iter::once(&sv.mem).chain(sv.imm.iter().rev()) {
            self.sources.push(Box::new(MemSource::new(&m.mem, &seek)));
        }
        for (level, tables) in sv.tree.levels.iter().enumerate() {
            if level == 0 {
                for t in tables {
                    self.sources.push(Box::new(TablesSource::new(vec![Arc::clone(t)], &seek)?));
                }
            } else if !tables.is_empty() {
                self.sources.push(Box::new(TablesSource::new(tables.clone(), &seek)?));
            }
        }
        Ok(())
    }

    fn past_end(&self, key: &[u8]) -> bool {
        match &self.end {
            Bound::Included(e) => key > e.as_ref(),
            Bound::Excluded(e) => key >= e.as_ref(),
            Bound::Unbounded => false,
        }
    }

    fn before_start(&self, key: &[u8]) -> bool {
        match &self.start {
            Bound::Included(s) => key < s.as_ref(),
            Bound::Excluded(s) => key <= s.as_ref(),
            Bound::Unbounded => false,
        }
    }

    fn step(&mut self) -> Result<Option<(Bytes, Bytes)>> {
        loop {
            let mut best: Option<usize> = None;
            for (i, s) in self.sources.iter().enumerate() {
                if let Some(h) = s.head() {
                    let better = match best.and_then(|b| self.sources.get(b)).and_then(|b| b.head()) {
                        Some(b) => internal_cmp(h, b) == Ordering::Less,
                        None => true,
                    };
                    if better {
                        best = Some(i);
                    }
                }
            }
            let Some(source) = best.and_then(|b| self.sources.get_mut(b)) else {
                return Ok(None);
            };
            let Some(v) = source.head().cloned() else {
                return Ok(None);
            };
            source.advance()?;
            if self.past_end(&v.key) {
                return Ok(None);
            }
            if v.seq > self.snapshot || self.before_start(&v.key) {
                continue;
            }
            if self.last_key.as_ref() == Some(&v.key) {
                continue;
            }
            self.last_key = Some(v.key.clone());
            if v.kind == ValueKind::Value {
                return Ok(Some((v.key, v.value)));
            }
        }
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
