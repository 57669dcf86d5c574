//! A table's entries backwards, for reverse range scans.
//!
//! Data blocks are prefix-compressed in runs that start at restart points,
//! so an entry can only be decoded from the restart before it. A block is
//! therefore read backwards one run at a time: the last run is decoded
//! forwards into a small vector and walked back, then the run before it.
//! Against decoding a whole block at once, this reads the last entry of a
//! 4 KiB block 8.5× faster, the last 8 1.9× faster and all of it 1.15×
//! faster (`cargo bench --bench table -- block_reverse`; docs/measurements.md).
//!
//! Blocks are read one at a time, last first, and only when the scan
//! reaches them: a block whose last key (in the index) lies below the
//! scan's lower bound is never read, and in the first block the runs past
//! the upper bound are skipped by a binary search of its restart keys.

use std::ops::Bound;

use bytes::Bytes;

use super::block::{Block, BlockIter};
use super::internal_key::{MAX_SEQ, ValueKind, pack_trailer, parse_internal_key, split_internal_key};
use super::iter::TableEntry;
use super::reader::Table;
use crate::key::{before_start, past_end};
use crate::{Error, Result};

/// Yields a table's entries in reverse internal-key order (user key
/// descending, then oldest first), from an upper bound down, checking each
/// data block's checksum as it is read. After an error it yields `None`.
///
/// ```no_run
/// # fn demo(table: &siftdb::table::Table) -> siftdb::Result<()> {
/// use std::ops::Bound;
/// // The last ten entries below "m", last first.
/// for entry in table.iter_rev((Bound::Unbounded, Bound::Excluded(b"m")))?.take(10) {
///     let e = entry?;
///     println!("{:?}@{}", e.user_key, e.seq);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct TableRevIter {
    table: Table,
    /// The block being read, its cursor and file offset.
    block: Option<(Block, BlockIter, u64)>,
    /// Runs of the current block not decoded yet: the next is `runs - 1`.
    runs: usize,
    /// The current run's remaining entries, in forward order (popped from
    /// the back).
    entries: Vec<TableEntry>,
    /// Blocks below the current one still to read: the next is `below - 1`.
    below: usize,
    /// The scan's bounds: entries outside them are not yielded; once a run
    /// starts below the lower one, nothing below it is read.
    lower: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    done: bool,
}

impl TableRevIter {
    /// A cursor at the last entry whose user key is within `upper`, going
    /// down to `lower`.
    ///
    /// # Errors
    /// `Corruption` if the index or the first block read is damaged.
    pub fn new(table: Table, (lower, upper): (Bound<&[u8]>, Bound<&[u8]>)) -> Result<Self> {
        let blocks = table.index().len();
        // The block that can hold the last entry within the bound: the
        // first whose last key is at or after the bound's last internal
        // key (for an excluded key, its first version; included, its last).
        let last_of_bound = match upper {
            Bound::Unbounded => None,
            Bound::Excluded(b) => Some((b, pack_trailer(MAX_SEQ, ValueKind::Value))),
            Bound::Included(b) => Some((b, pack_trailer(0, ValueKind::Tombstone))),
        };
        let found = match last_of_bound {
            Some((b, trailer)) => table.index().find(b, trailer).map_err(|e| e.at_file(table.path(), 0))?,
            None => None,
        };
        let start = found.map_or(blocks, |(i, _)| i + 1);
        let mut it = TableRevIter {
            table,
            block: None,
            runs: 0,
            entries: Vec::new(),
            below: start,
            lower: lower.map(<[u8]>::to_vec),
            upper: upper.map(<[u8]>::to_vec),
            done: false,
        };
        if it.load_previous()? {
            it.runs = it.runs_within_upper()?;
        }
        Ok(it)
    }

    fn in_file(&self, e: Error, base: u64) -> Error {
        e.at_file(self.table.path(), base)
    }

    /// Reads the block below the current one; `false` if there is none
    /// the scan wants.
    fn load_previous(&mut self) -> Result<bool> {
        let Some(i) = self.below.checked_sub(1) else { return Ok(false) };
        let (last, handle) = self.table.index().entry(i).map_err(|e| self.in_file(e, 0))?;
        // The index holds each block's last key: a block ending below the
        // bound holds nothing the scan wants, and is not read.
        let (last_user, _, _) = parse_internal_key(last).map_err(|e| self.in_file(e, 0))?;
        if !self.above(last_user) {
            self.below = 0;
            return Ok(false);
        }
        let block = self.table.read_data_block(handle)?;
        self.runs = block.num_restarts();
        let cursor = block.cursor();
        self.block = Some((block, cursor, handle.offset));
        self.below = i;
        Ok(true)
    }

    /// The runs of the first block that can hold entries within the upper
    /// bound: up to the last whose restart key is within it.
    fn runs_within_upper(&self) -> Result<usize> {
        let Some((block, _, offset)) = &self.block else { return Ok(0) };
        let (mut lo, mut hi) = (0usize, block.num_restarts());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let (k, _) = block.restart_parts(mid).map_err(|e| self.in_file(e, *offset))?;
            let (user, _) = split_internal_key(k).map_err(|e| self.in_file(e, *offset))?;
            if past_end(&self.upper, user) { hi = mid } else { lo = mid + 1 }
        }
        Ok(lo)
    }

    /// Decodes run `r` of the current block into `entries`.
    fn decode_run(&mut self, r: usize) -> Result<()> {
        let Some((_, cursor, offset)) = &mut self.block else { return Ok(()) };
        let offset = *offset;
        let path = self.table.path().to_path_buf();
        let in_file = |e: Error| e.at_file(&path, offset);
        self.entries.clear();
        let global_seq = self.table.global_seq();
        cursor.seek_to_restart(r).map_err(in_file)?;
        while cursor.valid() {
            let (user, seq, kind) = parse_internal_key(cursor.key()).map_err(in_file)?;
            let seq = global_seq.unwrap_or(seq);
            self.entries.push(TableEntry { user_key: Bytes::copy_from_slice(user), seq, kind, value: cursor.value() });
            if cursor.ends_run(r).map_err(in_file)? {
                break;
            }
            cursor.advance().map_err(in_file)?;
        }
        // A run that starts below the bound is the last one the scan needs.
        if self.entries.first().is_some_and(|e| !self.above(&e.user_key)) {
            self.runs = 0;
            self.below = 0;
        }
        let (lower, upper) = (&self.lower, &self.upper);
        self.entries.retain(|e| !before_start(lower, &e.user_key) && !past_end(upper, &e.user_key));
        Ok(())
    }

    /// Whether `key` is at or above the scan's lower bound.
    fn above(&self, key: &[u8]) -> bool {
        !before_start(&self.lower, key)
    }

    fn step(&mut self) -> Result<Option<TableEntry>> {
        loop {
            if let Some(e) = self.entries.pop() {
                return Ok(Some(e));
            }
            if let Some(r) = self.runs.checked_sub(1) {
                self.runs = r;
                self.decode_run(r)?;
                continue;
            }
            if !self.load_previous()? {
                return Ok(None);
            }
        }
    }
}


impl Iterator for TableRevIter {
    type Item = Result<TableEntry>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let out = self.step();
        if !matches!(out, Ok(Some(_))) {
            self.done = true;
        }
        out.transpose()
    }
}

#[cfg(test)]
mod tests {
    use std::ops::Bound;
    use std::sync::Arc;

    use super::*;
    use crate::fs::StdFs;
    use crate::table::{TableBuilder, TableOptions};

    /// A table of keys k000..k299 (every third with three versions, every
    /// fifth's newest a tombstone), in small blocks, and its entries in
    /// forward order.
    fn table(dir: &std::path::Path) -> (Table, Vec<(Vec<u8>, u64, ValueKind)>) {
        table_with(dir, 16)
    }

    /// As `table`, with a restart point every `restart_interval` entries.
    fn table_with(dir: &std::path::Path, restart_interval: usize) -> (Table, Vec<(Vec<u8>, u64, ValueKind)>) {
        let path = dir.join(format!("t{restart_interval}.sst"));
        let opts = TableOptions { block_bytes: 256, restart_interval, ..TableOptions::default() };
        let mut b = TableBuilder::new(Arc::new(StdFs), &path, opts).unwrap();
        let mut model = Vec::new();
        for i in 0..300u64 {
            let key = format!("k{i:03}").into_bytes();
            let versions = if i % 3 == 0 { 3 } else { 1 };
            for v in (0..versions).rev() {
                let seq = i * 10 + v;
                let kind = if i % 5 == 0 && v == versions - 1 { ValueKind::Tombstone } else { ValueKind::Value };
                let value = if kind == ValueKind::Value { format!("v{seq}").into_bytes() } else { Vec::new() };
                b.add(&key, seq, kind, &value).unwrap();
                model.push((key.clone(), seq, kind));
            }
        }
        b.finish().unwrap();
        (Table::open(&StdFs, &path).unwrap(), model)
    }

    fn collect(it: TableRevIter) -> Vec<(Vec<u8>, u64, ValueKind)> {
        it.map(|e| e.map(|e| (e.user_key.to_vec(), e.seq, e.kind))).collect::<Result<_>>().unwrap()
    }

    #[test]
    fn backwards_from_every_bound_equals_the_reversed_model() {
        for interval in [1, 2, 3, 16] {
            backwards_from_every_bound(interval);
        }
    }

    fn backwards_from_every_bound(interval: usize) {
        let dir = tempfile::tempdir().unwrap();
        let (t, model) = table_with(dir.path(), interval);
        assert!(t.index().len() > 20, "small blocks: {}", t.index().len());
        let rev = |keep: &dyn Fn(&[u8]) -> bool| -> Vec<_> {
            model.iter().filter(|(k, _, _)| keep(k)).rev().cloned().collect()
        };
        assert_eq!(collect(TableRevIter::new(t.clone(), (Bound::Unbounded, Bound::Unbounded)).unwrap()), rev(&|_| true));
        for probe in ["k000", "k001", "k003", "k150", "k299", "k2995", "a", "z", "k15"] {
            let b = probe.as_bytes();
            let ex = collect(TableRevIter::new(t.clone(), (Bound::Unbounded, Bound::Excluded(b))).unwrap());
            assert_eq!(ex, rev(&|k| k < b), "< {probe}");
            let inc = collect(TableRevIter::new(t.clone(), (Bound::Unbounded, Bound::Included(b))).unwrap());
            assert_eq!(inc, rev(&|k| k <= b), "<= {probe}");
        }
    }

    #[test]
    fn a_short_reverse_scan_reads_only_its_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let (t, _) = table(dir.path());
        let before = t.counters().data_blocks_read;
        let first: Vec<_> = TableRevIter::new(t.clone(), (Bound::Unbounded, Bound::Excluded(b"k200"))).unwrap().take(3).collect();
        assert_eq!(first.len(), 3);
        // The block holding k199's versions, and at most the one below it.
        assert!(t.counters().data_blocks_read - before <= 2, "{}", t.counters().data_blocks_read - before);
    }

    /// Down to a lower bound: only the entries above it, and no block
    /// below the one holding it is read.
    #[test]
    fn a_lower_bound_stops_the_scan_at_its_block() {
        let dir = tempfile::tempdir().unwrap();
        for interval in [2, 16] {
            lower_bound_stops(dir.path(), interval);
        }
    }

    fn lower_bound_stops(dir: &std::path::Path, interval: usize) {
        let (t, model) = table_with(dir, interval);
        for (lo, hi) in [("k100", "k110"), ("k000", "k005"), ("k1505", "k151"), ("k298", "z")] {
            let (l, h) = (lo.as_bytes(), hi.as_bytes());
            let before = t.counters().data_blocks_read;
            let got = collect(TableRevIter::new(t.clone(), (Bound::Included(l), Bound::Excluded(h))).unwrap());
            let read = t.counters().data_blocks_read - before;
            let want: Vec<_> = model.iter().filter(|(k, _, _)| k.as_slice() >= l && k.as_slice() < h).rev().cloned().collect();
            assert_eq!(got, want, "{lo}..{hi}");
            // The blocks a forward scan of the range reads, at most.
            let before = t.counters().data_blocks_read;
            let mut fwd = t.iter();
            fwd.seek(l).unwrap();
            let n = fwd.take_while(|e| e.as_ref().is_ok_and(|e| e.user_key.as_ref() < h)).count();
            assert!(n >= got.len());
            let forward = t.counters().data_blocks_read - before;
            assert!(read <= forward, "{lo}..{hi}: {read} blocks back, {forward} forward");
            let excl = collect(TableRevIter::new(t.clone(), (Bound::Excluded(l), Bound::Excluded(h))).unwrap());
            assert!(excl.iter().all(|(k, _, _)| k.as_slice() > l), "{lo}..{hi}");
        }
    }

    #[test]
    fn damage_is_an_error_then_the_end() {
        let dir = tempfile::tempdir().unwrap();
        let (t, _) = table(dir.path());
        let path = t.path().to_path_buf();
        drop(t);
        let mut bytes = std::fs::read(&path).unwrap();
        // Inside the first data block, past its first entries.
        bytes[40] ^= 0xff;
        std::fs::write(&path, &bytes).unwrap();
        let t = Table::open(&StdFs, &path).unwrap();
        let mut it = TableRevIter::new(t, (Bound::Unbounded, Bound::Unbounded)).unwrap();
        let mut saw_error = false;
        for e in it.by_ref() {
            if let Err(e) = e {
                assert!(e.is_corruption(), "{e}");
                saw_error = true;
            }
        }
        assert!(saw_error);
        assert!(it.next().is_none());
    }
}
