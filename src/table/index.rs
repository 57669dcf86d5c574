//! The index block: for each data block, its last internal key and handle.
//!
//! It is a block in the [`super::block_builder`] layout with a restart
//! point at every entry, so entry `i` is reachable in O(1) through the
//! restart array and lookups binary-search the entries directly:
//!
//! ```text
//! entry i:  shared = 0 | key len | 12 | last internal key of data block i | BlockHandle (12 bytes)
//! ```

use std::cmp::Ordering;

use bytes::Bytes;

use super::block::Block;
use super::block_builder::BlockBuilder;
use super::format::{BlockHandle, HANDLE_LEN};
use super::internal_key::{compare_internal, split_internal_key};
use crate::codec::Reader;
use crate::{Error, Result};

/// Accumulates index entries.
#[derive(Debug)]
pub struct IndexBuilder {
    block: BlockBuilder,
}

impl Default for IndexBuilder {
    fn default() -> Self {
        IndexBuilder { block: BlockBuilder::new(1) }
    }
}

impl IndexBuilder {
    /// Records that the data block at `handle` ends with `last_key`.
    pub fn add(&mut self, last_key: &[u8], handle: BlockHandle) {
        let mut v = Vec::with_capacity(HANDLE_LEN);
        handle.encode_to(&mut v);
        self.block.add(last_key, &v);
    }

    /// The encoded index block.
    pub fn finish(&mut self) -> Vec<u8> {
        self.block.finish()
    }
}

/// A parsed index block.
#[derive(Debug, Clone)]
pub struct Index {
    block: Block,
}

impl Index {
    /// Parses `data` (an index block's verified contents).
    ///
    /// # Errors
    /// `Corruption` if the block is malformed. Each entry is decoded and
    /// checked here, once, so lookups cannot meet a malformed entry later.
    pub fn new(data: Bytes) -> Result<Self> {
        let index = Index { block: Block::new(data)? };
        let mut prev_end = 0u64;
        for i in 0..index.len() {
            let (key, h) = index.entry(i)?;
            split_internal_key(key)?;
            if h.offset != prev_end {
                return Err(Error::corruption(
                    0,
                    format!("data block {i} at {} does not follow {prev_end}", h.offset),
                ));
            }
            prev_end = h.offset + h.size_with_trailer();
        }
        Ok(index)
    }

    /// Number of data blocks.
    #[must_use]
    pub fn len(&self) -> usize {
        self.block.num_restarts()
    }

    /// The index block's contents ([`Block::contents`]).
    #[must_use]
    pub fn contents(&self) -> &[u8] {
        self.block.contents()
    }

    /// Whether the table has no data blocks.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Last key and handle of data block `i`.
    ///
    /// # Errors
    /// `Corruption` if the entry is malformed.
    pub fn entry(&self, i: usize) -> Result<(&[u8], BlockHandle)> {
        let (key, value) = self.block.restart_parts(i)?;
        let mut r = Reader::new(value);
        let h = BlockHandle::decode_from(&mut r)?;
        r.finish()?;
        Ok((key, h))
    }

    /// The first data block whose last key is at or after
    /// `(user_key, trailer)`: the only block that can hold that position.
    ///
    /// # Errors
    /// `Corruption` if an entry is malformed.
    pub fn find(&self, user_key: &[u8], trailer: u64) -> Result<Option<(usize, BlockHandle)>> {
        let mut s = self.search();
        self.finish(&mut s, user_key, trailer)?;
        Ok(self.found(&s)?.map(|h| (s.lo, h)))
    }

    /// Takes `s`'s remaining steps toward `(user_key, trailer)`.
    ///
    /// # Errors
    /// `Corruption` if a probed entry is malformed.
    pub(crate) fn finish(&self, s: &mut Search, user_key: &[u8], trailer: u64) -> Result<()> {
        while !s.done() {
            self.step(s, user_key, trailer)?;
        }
        Ok(())
    }

    /// A new [`Search`] over every block.
    pub(crate) fn search(&self) -> Search {
        Search { lo: 0, hi: self.len() }
    }

    /// Starts loading what `s`'s next step reads first: its probe's slot
    /// in the restart array.
    pub(crate) fn prefetch_slot(&self, s: &Search) {
        if !s.done() {
            self.block.prefetch_restart_slot(s.mid());
        }
    }

    /// Starts loading what `s`'s next step reads second: its probe's entry
    /// (reading the slot, which [`Index::prefetch_slot`] requested).
    pub(crate) fn prefetch_entry(&self, s: &Search) {
        if !s.done() {
            self.block.prefetch_restart_entry(s.mid());
        }
    }

    /// One step of binary search toward `(user_key, trailer)`: halves `s`.
    ///
    /// # Errors
    /// `Corruption` if the probed entry is malformed.
    pub(crate) fn step(&self, s: &mut Search, user_key: &[u8], trailer: u64) -> Result<()> {
        let mid = s.mid();
        let (k, _) = self.entry(mid)?;
        let (ku, kt) = split_internal_key(k)?;
        if compare_internal(ku, kt, user_key, trailer) == Ordering::Less {
            s.lo = mid + 1;
        } else {
            s.hi = mid;
        }
        Ok(())
    }

    /// The block a finished search found, if any.
    ///
    /// # Errors
    /// `Corruption` if its entry is malformed.
    pub(crate) fn found(&self, s: &Search) -> Result<Option<BlockHandle>> {
        debug_assert!(s.done());
        if s.lo >= self.len() { Ok(None) } else { Ok(Some(self.entry(s.lo)?.1)) }
    }
}

/// A binary search of an index, one step at a time ([`Index::step`]), so
/// that a batch of lookups can take theirs in lockstep and overlap their
/// cache misses: each step reads a slot of the restart array and then the
/// entry it points at, two dependent misses in an index that is not in
/// cache, and a table's index is searched in about 11 steps.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Search {
    /// Every block before `lo` ends before the target.
    lo: usize,
    /// Block `hi` (if any) ends at or after it.
    hi: usize,
}

impl Search {
    /// Whether the search has found its block.
    pub(crate) fn done(&self) -> bool {
        self.lo >= self.hi
    }

    fn mid(&self) -> usize {
        self.lo + (self.hi - self.lo) / 2
    }
}

#[cfg(test)]
mod tests {
    use super::super::internal_key::{ValueKind, internal_key, pack_trailer};
    use super::*;

    fn handle(i: u64) -> BlockHandle {
        BlockHandle { offset: i * 105, size: 100 }
    }

    fn index_of(keys: &[(&[u8], u64)], handles: impl Fn(u64) -> BlockHandle) -> Result<Index> {
        let mut b = IndexBuilder::default();
        for (i, (k, seq)) in keys.iter().enumerate() {
            b.add(&internal_key(k, *seq, ValueKind::Value), handles(i as u64));
        }
        Index::new(Bytes::from(b.finish()))
    }

    #[test]
    fn find_picks_the_first_block_that_can_hold_the_target() {
        // Block 1 ends inside key "m"'s versions: seq 5 is in block 1, seq 4 in block 2.
        let idx = index_of(&[(b"c", 1), (b"m", 5), (b"z", 1)], handle).unwrap();
        let find =
            |k: &[u8], seq: u64| idx.find(k, pack_trailer(seq, ValueKind::Value)).unwrap().map(|f| f.0);
        assert_eq!(find(b"a", 9), Some(0));
        assert_eq!(find(b"c", 1), Some(0));
        assert_eq!(find(b"d", 9), Some(1));
        assert_eq!(find(b"m", 9), Some(1));
        assert_eq!(find(b"m", 4), Some(2));
        assert_eq!(find(b"zz", 9), None);
        assert_eq!(idx.entry(2).unwrap().1, handle(2));
    }

    #[test]
    fn handles_that_do_not_tile_the_data_are_corruption() {
        let gap = |i: u64| BlockHandle { offset: i * 200, size: 100 };
        assert!(index_of(&[(b"a", 1), (b"b", 1)], gap).unwrap_err().is_corruption());
        assert!(Index::new(Bytes::from_static(&[1, 2])).unwrap_err().is_corruption());
    }
}
