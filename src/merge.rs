//! The one merge of sorted sources, used by reads, flushes and compactions.
//!
//! Every [`Source`] yields versions in internal-key order (user key
//! ascending, then newest first); [`Merge`] interleaves them into one
//! stream in that order, every version of every key. Compaction reads that
//! raw stream and applies its drop rules; so does a flush, keeping every
//! tombstone.
//! [`Visible`] resolves it for a reader at one sequence number: for each
//! user key the first version at or below the snapshot decides (a value, or
//! a tombstone that hides the key), and every other version of the key is
//! skipped.
//!
//! Backwards ([`Merge::backward`], over the backward sources) the stream
//! runs in the reverse order: user key descending, oldest version first.
//! [`VisibleBack`] resolves that for a reader: it reads every version of a
//! key and keeps the newest at or below the snapshot.
//!
//! With a handful of sources (memtables, level-0 tables, one per deeper
//! level) a linear scan for the smallest head beats a heap. Ties between
//! sources (the same key and sequence number, which writes never make) go
//! to the earlier source.

use std::cmp::Ordering;
use std::ops::Bound;

use bytes::Bytes;

use crate::Result;
use crate::key::{SeqNo, before_start, past_end};
use crate::sources::{KeyVersion, Source, internal_cmp};

/// Sorted sources merged into one stream in internal-key order.
pub(crate) struct Merge {
    sources: Vec<Box<dyn Source>>,
    /// The order the sources run in: `Less` forwards, `Greater` backwards.
    first: Ordering,
}

impl Merge {
    /// A merge of `sources`, which yield versions in internal-key order.
    pub fn new(sources: Vec<Box<dyn Source>>) -> Self {
        Merge { sources, first: Ordering::Less }
    }

    /// A merge of backward `sources`, which yield versions in reverse
    /// internal-key order; so does the merge.
    pub fn backward(sources: Vec<Box<dyn Source>>) -> Self {
        Merge { sources, first: Ordering::Greater }
    }

    /// The next version of the merged stream; `None` at the end.
    ///
    /// # Errors
    /// A source's read error (a table block failed its checksum).
    pub fn next_version(&mut self) -> Result<Option<KeyVersion>> {
        let mut best: Option<usize> = None;
        for (i, s) in self.sources.iter().enumerate() {
            let Some(h) = s.head() else { continue };
            let better = match best.and_then(|b| self.sources.get(b)).and_then(|b| b.head()) {
                Some(b) => internal_cmp(h, b) == self.first,
                None => true,
            };
            if better {
                best = Some(i);
            }
        }
        let Some(s) = best.and_then(|b| self.sources.get_mut(b)) else { return Ok(None) };
        let v = s.head().cloned();
        s.advance()?;
        Ok(v)
    }
}

/// A merge as a reader at one sequence number sees it, up to an end bound.
pub(crate) struct Visible {
    merge: Merge,
    snapshot: SeqNo,
    end: Bound<Bytes>,
    last_key: Option<Bytes>,
}

impl Visible {
    /// `merge` as of `snapshot`, ending before the first key past `end`.
    pub fn new(merge: Merge, snapshot: SeqNo, end: Bound<Bytes>) -> Self {
        Visible { merge, snapshot, end, last_key: None }
    }

    /// The version that decides the next user key: the newest at or below
    /// the snapshot, a value or a tombstone; `None` past the end bound.
    ///
    /// # Errors
    /// A source's read error.
    pub fn next_visible(&mut self) -> Result<Option<KeyVersion>> {
        while let Some(v) = self.merge.next_version()? {
            // Past the end, stop at once, even on a version the snapshot
            // cannot see: what follows is further past it.
            if past_end(&self.end, &v.key) {
                return Ok(None);
            }
            if v.seq > self.snapshot || self.last_key.as_ref() == Some(&v.key) {
                continue;
            }
            self.last_key = Some(v.key.clone());
            return Ok(Some(v));
        }
        Ok(None)
    }
}

/// A backward merge as a reader at one sequence number sees it, down to a
/// start bound: for each user key, last first, the newest version at or
/// below the snapshot.
pub(crate) struct VisibleBack {
    merge: Merge,
    snapshot: SeqNo,
    start: Bound<Bytes>,
    /// The first version of the next key, read while finishing a key.
    peeked: Option<KeyVersion>,
}

impl VisibleBack {
    /// `merge` (backward) as of `snapshot`, ending past `start`.
    pub fn new(merge: Merge, snapshot: SeqNo, start: Bound<Bytes>) -> Self {
        VisibleBack { merge, snapshot, start, peeked: None }
    }

    /// The version that decides the previous user key: the newest at or
    /// below the snapshot, a value or a tombstone; `None` past the start.
    ///
    /// # Errors
    /// A source's read error.
    pub fn next_visible(&mut self) -> Result<Option<KeyVersion>> {
        loop {
            let first = match self.peeked.take() {
                Some(v) => v,
                None => match self.merge.next_version()? {
                    Some(v) => v,
                    None => return Ok(None),
                },
            };
            // Before the start, stop at once: what follows is further before.
            if before_start(&self.start, &first.key) {
                return Ok(None);
            }
            // A key's versions come oldest first: the last one the snapshot
            // sees decides.
            let key = first.key.clone();
            let mut decides = (first.seq <= self.snapshot).then_some(first);
            while let Some(v) = self.merge.next_version()? {
                if v.key != key {
                    self.peeked = Some(v);
                    break;
                }
                if v.seq <= self.snapshot {
                    decides = Some(v);
                }
            }
            if decides.is_some() {
                return Ok(decides);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::ValueKind;

    /// A source over a fixed list, for the merge's tests.
    struct Listed(std::vec::IntoIter<KeyVersion>, Option<KeyVersion>);

    impl Listed {
        fn boxed(items: &[(&str, SeqNo, ValueKind)]) -> Box<dyn Source> {
            let mut it: std::vec::IntoIter<KeyVersion> = items
                .iter()
                .map(|&(k, seq, kind)| KeyVersion {
                    key: Bytes::copy_from_slice(k.as_bytes()),
                    seq,
                    kind,
                    value: Bytes::from(format!("{k}@{seq}")),
                })
                .collect::<Vec<_>>()
                .into_iter();
            let head = it.next();
            Box::new(Listed(it, head))
        }
    }

    impl Source for Listed {
        fn head(&self) -> Option<&KeyVersion> {
            self.1.as_ref()
        }
        fn advance(&mut self) -> Result<()> {
            self.1 = self.0.next();
            Ok(())
        }
    }

    use ValueKind::{Tombstone as T, Value as V};

    fn sources() -> Vec<Box<dyn Source>> {
        vec![
            Listed::boxed(&[("a", 9, V), ("c", 8, T), ("e", 12, V)]),
            Listed::boxed(&[("a", 3, V), ("b", 5, V), ("c", 2, V), ("e", 4, V)]),
            Listed::boxed(&[("b", 7, T), ("d", 1, V)]),
        ]
    }

    #[test]
    fn the_raw_stream_is_every_version_in_internal_order() {
        let mut m = Merge::new(sources());
        let mut got = Vec::new();
        while let Some(v) = m.next_version().unwrap() {
            got.push((String::from_utf8(v.key.to_vec()).unwrap(), v.seq));
        }
        let want =
            [("a", 9), ("a", 3), ("b", 7), ("b", 5), ("c", 8), ("c", 2), ("d", 1), ("e", 12), ("e", 4)];
        assert_eq!(got, want.map(|(k, s)| (k.to_string(), s)));
    }

    fn visible(snapshot: SeqNo, end: Bound<Bytes>) -> Vec<(String, SeqNo, ValueKind)> {
        let mut v = Visible::new(Merge::new(sources()), snapshot, end);
        let mut out = Vec::new();
        while let Some(x) = v.next_visible().unwrap() {
            out.push((String::from_utf8(x.key.to_vec()).unwrap(), x.seq, x.kind));
        }
        out
    }

    /// The sources of `sources()`, read backwards.
    fn backward_sources() -> Vec<Box<dyn Source>> {
        vec![
            Listed::boxed(&[("e", 12, V), ("c", 8, T), ("a", 9, V)]),
            Listed::boxed(&[("e", 4, V), ("c", 2, V), ("b", 5, V), ("a", 3, V)]),
            Listed::boxed(&[("d", 1, V), ("b", 7, T)]),
        ]
    }

    fn visible_back(snapshot: SeqNo, start: Bound<Bytes>) -> Vec<(String, SeqNo, ValueKind)> {
        let mut v = VisibleBack::new(Merge::backward(backward_sources()), snapshot, start);
        let mut out = Vec::new();
        while let Some(x) = v.next_visible().unwrap() {
            out.push((String::from_utf8(x.key.to_vec()).unwrap(), x.seq, x.kind));
        }
        out
    }

    #[test]
    fn backwards_a_reader_sees_what_it_sees_forwards_in_reverse() {
        let mut m = Merge::backward(backward_sources());
        let mut raw = Vec::new();
        while let Some(v) = m.next_version().unwrap() {
            raw.push((String::from_utf8(v.key.to_vec()).unwrap(), v.seq));
        }
        let want =
            [("e", 4), ("e", 12), ("d", 1), ("c", 2), ("c", 8), ("b", 5), ("b", 7), ("a", 3), ("a", 9)];
        assert_eq!(raw, want.map(|(k, s)| (k.to_string(), s)));
        for snapshot in [0, 1, 2, 4, 5, 6, 7, 8, 9, 12, 100] {
            let mut fwd = visible(snapshot, Bound::Unbounded);
            fwd.reverse();
            assert_eq!(visible_back(snapshot, Bound::Unbounded), fwd, "at {snapshot}");
        }
        let s = |k: &str, seq, kind| (k.to_string(), seq, kind);
        assert_eq!(
            visible_back(100, Bound::Included(Bytes::from_static(b"c"))),
            [s("e", 12, V), s("d", 1, V), s("c", 8, T)]
        );
        assert_eq!(
            visible_back(100, Bound::Excluded(Bytes::from_static(b"c"))),
            [s("e", 12, V), s("d", 1, V)]
        );
    }

    #[test]
    fn a_reader_sees_the_newest_version_at_its_snapshot() {
        let s = |k: &str, seq, kind| (k.to_string(), seq, kind);
        assert_eq!(
            visible(100, Bound::Unbounded),
            [s("a", 9, V), s("b", 7, T), s("c", 8, T), s("d", 1, V), s("e", 12, V)]
        );
        // At 6: b's tombstone (7) and c's (8) are in the future.
        assert_eq!(
            visible(6, Bound::Unbounded),
            [s("a", 3, V), s("b", 5, V), s("c", 2, V), s("d", 1, V), s("e", 4, V)]
        );
        assert_eq!(visible(2, Bound::Excluded(Bytes::from_static(b"d"))), [s("c", 2, V)]);
        assert_eq!(visible(100, Bound::Included(Bytes::from_static(b"b"))), [s("a", 9, V), s("b", 7, T)]);
    }
}
