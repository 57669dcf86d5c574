//! Where a point lookup finds its candidate tables without chasing
//! pointers: each level's smallest and largest keys, cut to their first
//! 8 bytes as big-endian integers, in two contiguous arrays.
//!
//! A deeper level's binary search used to compare the key with each
//! probed table's largest key, three dependent loads away (the `Arc`, the
//! record, the key's heap buffer) and a `memcmp` each: at 10^7 keys, 150
//! tables, that search and its `memcmp` were 42% of an absent lookup's
//! time (perf; docs/measurements.md, "readmissing beside fjall"). The
//! integer arrays of a level span a few cache lines.
//!
//! The cut keeps order one way: `a ≤ b` implies `prefix(a) ≤ prefix(b)`,
//! so a prefix strictly below or above the key's decides the comparison,
//! and only an equal prefix falls back to comparing whole keys. Keys that
//! share a long common prefix get no speed-up, and lose nothing.
//!
//! ```text
//! level 2:  largest  [ 0x3031_6166..., 0x3062_3930..., 0x3165_6132..., ... ]   u64 each
//!           smallest [ 0x3030_3031..., 0x3031_6166..., 0x3062_3931..., ... ]
//! ```

use std::ops::Deref;
use std::sync::Arc;

use super::{TableFile, Tree};

/// A key's first 8 bytes as a big-endian integer, zero-padded.
#[inline]
pub(crate) fn prefix(key: &[u8]) -> u64 {
    // Most keys have 8 bytes or more: one load, where copying a length
    // known only at run time is a call to `memcpy` (6% of a batched
    // lookup's time, perf).
    if let Some(head) = key.first_chunk::<8>() {
        return u64::from_be_bytes(*head);
    }
    let mut b = [0u8; 8];
    b[..key.len()].copy_from_slice(key);
    u64::from_be_bytes(b)
}

/// One level's key bounds, table by table, in the level's order.
#[derive(Debug, Default)]
struct Bounds {
    smallest: Box<[u64]>,
    largest: Box<[u64]>,
}

/// A [`Tree`] with its search arrays, built together so they cannot
/// disagree: what a [`super::SuperVersion`] holds.
#[derive(Debug)]
pub(crate) struct SearchTree {
    tree: Tree,
    bounds: Vec<Bounds>,
    /// The tables that carry range tombstones, which every scan meeting
    /// their key ranges must read: found once here, not per scan.
    with_range_dels: Vec<Arc<TableFile>>,
}

impl Deref for SearchTree {
    type Target = Tree;

    fn deref(&self) -> &Tree {
        &self.tree
    }
}

impl SearchTree {
    /// Indexes `tree`.
    pub(crate) fn new(tree: Tree) -> Self {
        let bounds = tree
            .levels()
            .iter()
            .map(|tables| Bounds {
                smallest: tables.iter().map(|t| prefix(&t.record.smallest)).collect(),
                largest: tables.iter().map(|t| prefix(&t.record.largest)).collect(),
            })
            .collect();
        let with_range_dels =
            tree.levels().iter().flatten().filter(|t| t.table.range_dels().is_some()).cloned().collect();
        SearchTree { tree, bounds, with_range_dels }
    }

    /// The tables that carry range tombstones.
    pub(crate) fn with_range_dels(&self) -> &[Arc<TableFile>] {
        &self.with_range_dels
    }

    /// Every table that may hold `key`, in the order a lookup probes them
    /// (level 0's newest first, then one per deeper level at most), with
    /// its level: the same tables as [`super::Level::tables_for`] over
    /// every level.
    pub(crate) fn candidates<'a>(
        &'a self,
        key: &'a [u8],
    ) -> impl Iterator<Item = (usize, &'a Arc<TableFile>)> {
        let kp = prefix(key);
        (0..self.bounds.len())
            .flat_map(move |number| self.in_level(number, key, kp).map(move |t| (number, t)))
    }

    /// A walk over level `number` (≥ 1) for keys in ascending order,
    /// giving each key's table as [`SearchTree::candidates`] would.
    pub(crate) fn level_walk(&self, number: usize) -> LevelWalk<'_> {
        match (self.tree.levels().get(number), self.bounds.get(number)) {
            (Some(t), Some(b)) => LevelWalk { tables: t, smallest: &b.smallest, largest: &b.largest, at: 0 },
            _ => LevelWalk { tables: &[], smallest: &[], largest: &[], at: 0 },
        }
    }

    fn in_level<'a>(
        &'a self,
        number: usize,
        key: &'a [u8],
        kp: u64,
    ) -> impl Iterator<Item = &'a Arc<TableFile>> {
        let level = self.tree.levels().get(number).zip(self.bounds.get(number));
        level.into_iter().flat_map(move |(tables, b)| {
            let range = if number == 0 {
                0..tables.len()
            } else {
                let i = first_ending_at_or_after(tables, b, key, kp);
                i..(i + 1).min(tables.len())
            };
            range.filter_map(move |i| {
                let t = &tables[i];
                let (s, l) = (b.smallest[i], b.largest[i]);
                let above = s < kp || (s == kp && t.record.smallest.as_slice() <= key);
                let below = kp < l || (kp == l && key <= t.record.largest.as_slice());
                (above && below).then_some(t)
            })
        })
    }
}

/// One level's tables met by keys in ascending order (a batch's): each
/// key's search gallops on from where the previous key's ended, a step or
/// two when the keys are as dense as the tables, where a binary search per
/// key restarts from the middle: 18.5% of a batch's time before, 11.5%
/// after (perf; docs/measurements.md, "Batched lookups, second pass").
pub(crate) struct LevelWalk<'a> {
    tables: &'a [Arc<TableFile>],
    smallest: &'a [u64],
    largest: &'a [u64],
    /// No table before this one ends at or after the keys still to come.
    at: usize,
}

impl<'a> LevelWalk<'a> {
    /// The one table of the level that may hold `key`, whose [`prefix`] is
    /// `kp`, and which must not sort before the previous key asked.
    pub(crate) fn candidate(&mut self, key: &[u8], kp: u64) -> Option<&'a Arc<TableFile>> {
        debug_assert_eq!(kp, prefix(key));
        let (tables, smallest, largest) = (self.tables, self.smallest, self.largest);
        let lo = gallop(largest, kp, self.at);
        // A later key's prefix is at least this one's: no table before `lo`
        // ends at or after it either.
        self.at = lo;
        let i = if largest.get(lo) == Some(&kp) {
            let hi = lo + largest[lo..].partition_point(|&p| p == kp);
            lo + tables[lo..hi].partition_point(|t| t.record.largest.as_slice() < key)
        } else {
            lo
        };
        let t = tables.get(i)?;
        let above = smallest[i] < kp || (smallest[i] == kp && t.record.smallest.as_slice() <= key);
        above.then_some(t)
    }
}

/// The first index at or after `from` of sorted `a` holding a value at or
/// above `x` (`a.len()` if none does): steps of 1, 2, 4, … from `from`,
/// then a binary search within the last step.
fn gallop(a: &[u64], x: u64, from: usize) -> usize {
    let mut lo = from; // every index before `lo` holds a value below `x`
    let mut step = 1;
    while let Some(&v) = a.get(lo) {
        if v >= x {
            return lo;
        }
        let hi = (lo + step).min(a.len());
        // a[lo] < x: the answer is in lo + 1..=hi (hi = a.len() if none is).
        if a.get(hi).is_none_or(|&v| v >= x) {
            return lo + 1 + first_at_or_after(&a[lo + 1..hi], x);
        }
        lo = hi;
        step *= 2;
    }
    a.len()
}

/// The index of the first table of a sorted level whose largest key is at
/// or after `key` (whose prefix is `kp`); the table count if none is.
fn first_ending_at_or_after(tables: &[Arc<TableFile>], b: &Bounds, key: &[u8], kp: u64) -> usize {
    // Tables before `lo` end below the key on their prefix alone, and from
    // `hi` on they end above it; between, the prefixes tie and whole keys
    // decide.
    let lo = first_at_or_after(&b.largest, kp);
    if b.largest.get(lo) != Some(&kp) {
        return lo; // the usual case: no tie, no key compared
    }
    let hi = lo + b.largest[lo..].partition_point(|&p| p == kp);
    lo + tables[lo..hi].partition_point(|t| t.record.largest.as_slice() < key)
}

/// The first index of sorted `a` holding a value at or above `x` (`a.len()`
/// if none does). Branch-free: each step is a conditional move, so random
/// keys cost no mispredicted branches, where a plain binary search
/// mispredicts about every other step.
#[inline]
fn first_at_or_after(a: &[u64], x: u64) -> usize {
    let Some(&last) = a.last() else { return 0 };
    if last < x {
        return a.len();
    }
    // Invariant: a[base + size - 1] >= x, and every index before base is < x.
    let (mut base, mut size) = (0, a.len());
    while size > 1 {
        let half = size / 2;
        if a[base + half - 1] < x {
            base += half;
        }
        size -= half;
    }
    base
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_branch_free_search_is_partition_point() {
        for len in 0..40u64 {
            let a: Vec<u64> = (0..len).map(|i| i / 3 * 2).collect();
            for x in 0..(len + 3) {
                assert_eq!(first_at_or_after(&a, x), a.partition_point(|&p| p < x), "len {len}, x {x}");
            }
        }
    }

    #[test]
    fn galloping_from_any_earlier_place_is_partition_point() {
        for len in 0..40u64 {
            let a: Vec<u64> = (0..len).map(|i| i / 3 * 2).collect();
            for x in 0..(len + 3) {
                let want = a.partition_point(|&p| p < x);
                for from in 0..=want {
                    assert_eq!(gallop(&a, x, from), want, "len {len}, x {x}, from {from}");
                }
            }
        }
    }

    #[test]
    fn the_cut_keeps_order_one_way() {
        let keys: [&[u8]; 9] =
            [b"", b"\0", b"a", b"a\0", b"abcdefgh", b"abcdefgh\0", b"abcdefghz", b"abcdefgi", b"\xff"];
        for a in keys {
            for b in keys {
                if a <= b {
                    assert!(prefix(a) <= prefix(b), "{a:?} {b:?}");
                }
            }
        }
    }
}
