//! Reads blocks written by [`super::block_builder::BlockBuilder`]: binary
//! search over restart points, then a linear scan.
//!
//! Every read is bounds-checked; a malformed block (which can only happen
//! when a crc collides or the writer has a bug) yields `Corruption` with an
//! offset relative to the block's start.

use std::cmp::Ordering;

use bytes::Bytes;

use super::internal_key::{TRAILER_LEN, compare_internal, split_internal_key};
use crate::codec::Reader;
use crate::{Error, Result};

/// A parsed block: entries plus the restart array.
#[derive(Debug, Clone)]
pub struct Block {
    data: Bytes,
    /// Where the entries end and the restart array starts.
    entries_end: usize,
    num_restarts: usize,
}

impl Block {
    /// Parses the restart trailer of `data`.
    ///
    /// # Errors
    /// `Corruption` if the restart array does not fit.
    pub fn new(data: Bytes) -> Result<Self> {
        let len = data.len();
        let Some(count_at) = len.checked_sub(4) else {
            return Err(Error::corruption(0, format!("block of {len} bytes has no restart count")));
        };
        let num_restarts = Reader::new(data.get(count_at..).unwrap_or_default()).u32()? as usize;
        let entries_end =
            num_restarts.checked_mul(4).and_then(|b| count_at.checked_sub(b)).ok_or_else(|| {
                Error::corruption(count_at as u64, format!("{num_restarts} restarts overflow block"))
            })?;
        if num_restarts == 0 && entries_end != 0 {
            return Err(Error::corruption(count_at as u64, "entries but no restart points"));
        }
        Ok(Block { data, entries_end, num_restarts })
    }

    /// Bytes of the block's contents (uncompressed).
    #[must_use]
    pub fn size_bytes(&self) -> usize {
        self.data.len()
    }

    /// The block's contents: a view of a table's mapping, or a buffer of
    /// its own for a block that was decompressed.
    #[must_use]
    pub fn contents(&self) -> &[u8] {
        &self.data
    }

    /// Number of restart points.
    #[must_use]
    pub fn num_restarts(&self) -> usize {
        self.num_restarts
    }

    /// Whether the block holds no entries.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries_end == 0
    }

    /// Byte offset of restart entry `i`.
    fn restart(&self, i: usize) -> Result<usize> {
        let at = self.entries_end + 4 * i;
        let off = Reader::new(self.data.get(at..at + 4).unwrap_or_default()).u32()? as usize;
        if off >= self.entries_end {
            return Err(Error::corruption(at as u64, format!("restart offset {off} past entries")));
        }
        Ok(off)
    }

    /// Starts loading the line of restart point `i`'s slot in the restart
    /// array, which a search reads before the entry it points at.
    pub(crate) fn prefetch_restart_slot(&self, i: usize) {
        if let Some(byte) = self.data.get(self.entries_end.saturating_add(4 * i)) {
            crate::filter::prefetch::line(byte);
        }
    }

    /// Starts loading the lines of restart point `i`'s entry: the slot is
    /// read (a damaged one is left for the read that follows to report),
    /// then the entry's first line and the one a short entry ends in.
    pub(crate) fn prefetch_restart_entry(&self, i: usize) {
        if let Ok(off) = self.restart(i) {
            for at in [off, off + 48] {
                if let Some(byte) = self.data.get(at) {
                    crate::filter::prefetch::line(byte);
                }
            }
        }
    }

    /// A cursor before the first entry.
    #[must_use]
    pub fn cursor(&self) -> BlockIter {
        BlockIter { block: self.clone(), next: 0, key: Vec::new(), value: 0..0, valid: false }
    }

    /// The full key and value stored at restart point `i` (whose key is
    /// never prefix-compressed).
    ///
    /// # Errors
    /// `Corruption` if the entry is malformed.
    pub fn restart_entry(&self, i: usize) -> Result<(&[u8], Bytes)> {
        let (key, value) = self.restart_parts(i)?;
        Ok((key, self.data.slice_ref(value)))
    }

    /// [`Block::restart_entry`] with the value borrowed, not a `Bytes`: a
    /// search compares keys at a dozen restart points and keeps none, and
    /// each `Bytes` would be two atomic updates of the block's count.
    ///
    /// # Errors
    /// `Corruption` if the entry is malformed.
    pub fn restart_parts(&self, i: usize) -> Result<(&[u8], &[u8])> {
        let off = self.restart(i)?;
        let mut r = Reader::new(self.data.get(off..self.entries_end).unwrap_or_default());
        let at = |e: Error| rebase(e, off);
        let shared = r.varint().map_err(at)?;
        if shared != 0 {
            return Err(Error::corruption(off as u64, "restart entry shares a prefix"));
        }
        let klen = len_of(r.varint().map_err(at)?, off)?;
        let vlen = len_of(r.varint().map_err(at)?, off)?;
        let key = r.bytes(klen).map_err(at)?;
        let value = r.bytes(vlen).map_err(at)?;
        Ok((key, value))
    }
}

fn len_of(v: u64, at: usize) -> Result<usize> {
    usize::try_from(v).map_err(|_| Error::corruption(at as u64, "length does not fit in memory"))
}

fn rebase(e: Error, base: usize) -> Error {
    match e {
        Error::Corruption { file: None, offset, what } => {
            Error::Corruption { file: None, offset: offset.saturating_add(base as u64), what }
        }
        other => other,
    }
}

/// A cursor over one block's entries whose keys are internal keys.
#[derive(Debug, Clone)]
pub struct BlockIter {
    block: Block,
    /// Offset of the entry after the current one.
    next: usize,
    key: Vec<u8>,
    value: std::ops::Range<usize>,
    valid: bool,
}

impl BlockIter {
    /// Whether the cursor is on an entry.
    #[must_use]
    pub fn valid(&self) -> bool {
        self.valid
    }

    /// The current entry's key (an internal key).
    #[must_use]
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    /// The current entry's value, zero-copy.
    #[must_use]
    pub fn value(&self) -> Bytes {
        self.block.data.slice(self.value.clone())
    }

    /// Moves to the next entry; afterwards [`BlockIter::valid`] says whether
    /// there was one.
    ///
    /// # Errors
    /// `Corruption` if the entry is malformed.
    pub fn advance(&mut self) -> Result<()> {
        let off = self.next;
        if off >= self.block.entries_end {
            self.valid = false;
            return Ok(());
        }
        let at = |e: Error| rebase(e, off);
        let mut r = Reader::new(self.block.data.get(off..self.block.entries_end).unwrap_or_default());
        let shared = len_of(r.varint().map_err(at)?, off)?;
        let unshared = len_of(r.varint().map_err(at)?, off)?;
        let vlen = len_of(r.varint().map_err(at)?, off)?;
        if shared > self.key.len() {
            self.valid = false;
            return Err(Error::corruption(
                off as u64,
                format!("entry shares {shared} bytes of a shorter key"),
            ));
        }
        let suffix = r.bytes(unshared).map_err(at)?;
        let v_at = off + r.position();
        r.bytes(vlen).map_err(at)?;
        self.key.truncate(shared);
        self.key.extend_from_slice(suffix);
        if self.key.len() < TRAILER_LEN {
            self.valid = false;
            return Err(Error::corruption(off as u64, "key shorter than an internal-key trailer"));
        }
        self.value = v_at..v_at + vlen;
        self.next = off + r.position();
        self.valid = true;
        Ok(())
    }

    /// Positions the cursor at restart point `i` (the first entry of its
    /// run of prefix-compressed entries).
    ///
    /// # Errors
    /// `Corruption` if the restart offset or the entry is malformed.
    pub fn seek_to_restart(&mut self, i: usize) -> Result<()> {
        self.next = self.block.restart(i)?;
        self.key.clear();
        self.advance()
    }

    /// Whether the current entry is the last of restart run `i` (the next
    /// entry starts run `i + 1`, or the block ends).
    ///
    /// # Errors
    /// `Corruption` if the restart offset is malformed.
    pub fn ends_run(&self, i: usize) -> Result<bool> {
        if i + 1 >= self.block.num_restarts {
            return Ok(self.next >= self.block.entries_end);
        }
        Ok(self.next >= self.block.restart(i + 1)?)
    }

    /// Positions the cursor at the first entry, if any.
    ///
    /// # Errors
    /// `Corruption` if the entry is malformed.
    pub fn seek_to_first(&mut self) -> Result<()> {
        self.next = 0;
        self.key.clear();
        self.advance()
    }

    /// Positions the cursor at the first entry whose internal key is at or
    /// after `(user_key, trailer)`; invalid if there is none.
    ///
    /// # Errors
    /// `Corruption` if the block is malformed.
    pub fn seek(&mut self, user_key: &[u8], trailer: u64) -> Result<()> {
        // Find the last restart whose key is before the target.
        let (mut lo, mut hi) = (0usize, self.block.num_restarts);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let (k, _) = self.block.restart_parts(mid)?;
            let (ku, kt) = split_internal_key(k)?;
            if compare_internal(ku, kt, user_key, trailer) == Ordering::Less {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        self.next = if lo == 0 { 0 } else { self.block.restart(lo - 1)? };
        self.key.clear();
        loop {
            self.advance()?;
            if !self.valid {
                return Ok(());
            }
            let (ku, kt) = split_internal_key(&self.key)?;
            if compare_internal(ku, kt, user_key, trailer) != Ordering::Less {
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::block_builder::BlockBuilder;
    use super::super::internal_key::{ValueKind, internal_key, pack_trailer, parse_internal_key};
    use super::*;

    fn build(n: u64, interval: usize) -> Bytes {
        let mut b = BlockBuilder::new(interval);
        for i in 0..n {
            let key = internal_key(format!("key{:05}", i * 2).as_bytes(), 7, ValueKind::Value);
            b.add(&key, format!("v{i}").as_bytes());
        }
        Bytes::from(b.finish())
    }

    /// Each restart run, decoded from its restart point, is the block's
    /// entries in order: the runs back to front are the block reversed.
    #[test]
    fn runs_decoded_from_their_restarts_cover_the_block() {
        for (n, interval) in [(100, 1), (100, 3), (100, 16), (7, 16), (1, 4)] {
            let block = Block::new(build(n, interval)).unwrap();
            let mut it = block.cursor();
            it.seek_to_first().unwrap();
            let mut all = Vec::new();
            while it.valid() {
                all.push(it.key().to_vec());
                it.advance().unwrap();
            }
            let mut back = Vec::new();
            for r in (0..block.num_restarts()).rev() {
                let mut run = Vec::new();
                it.seek_to_restart(r).unwrap();
                loop {
                    run.push(it.key().to_vec());
                    if it.ends_run(r).unwrap() {
                        break;
                    }
                    it.advance().unwrap();
                }
                back.extend(run.into_iter().rev());
            }
            all.reverse();
            assert_eq!(back, all, "{n} entries, restart every {interval}");
        }
        assert!(Block::new(build(10, 4)).unwrap().cursor().seek_to_restart(99).is_err());
    }

    #[test]
    fn seek_finds_every_key_and_the_gaps_between() {
        for interval in [1, 3, 16] {
            let block = Block::new(build(100, interval)).unwrap();
            let mut it = block.cursor();
            for i in 0..100u64 {
                it.seek(format!("key{:05}", i * 2).as_bytes(), pack_trailer(9, ValueKind::Value)).unwrap();
                assert!(it.valid());
                assert_eq!(it.value(), format!("v{i}").as_bytes());
                // A key between two stored keys lands on the next one.
                it.seek(format!("key{:05}", i * 2 + 1).as_bytes(), pack_trailer(9, ValueKind::Value))
                    .unwrap();
                assert_eq!(it.valid(), i < 99);
                if i < 99 {
                    assert_eq!(
                        parse_internal_key(it.key()).unwrap().0,
                        format!("key{:05}", i * 2 + 2).as_bytes()
                    );
                }
            }
            it.seek_to_first().unwrap();
            let mut n = 0;
            while it.valid() {
                n += 1;
                it.advance().unwrap();
            }
            assert_eq!(n, 100);
        }
    }

    #[test]
    fn empty_block_has_no_entries() {
        let block = Block::new(build(0, 16)).unwrap();
        assert!(block.is_empty());
        let mut it = block.cursor();
        it.seek(b"a", 0).unwrap();
        assert!(!it.valid());
    }

    #[test]
    fn garbage_blocks_never_panic() {
        let good = build(40, 4);
        for i in 0..good.len() {
            for flip in [0x01, 0x80, 0xff] {
                let mut bad = good.to_vec();
                bad[i] ^= flip;
                let Ok(block) = Block::new(Bytes::from(bad)) else { continue };
                let mut it = block.cursor();
                let _ = it.seek(b"key00040", u64::MAX);
                if it.seek_to_first().is_ok() {
                    for _ in 0..100 {
                        if !it.valid() || it.advance().is_err() {
                            break;
                        }
                    }
                }
            }
        }
        for len in 0..good.len() {
            if let Ok(block) = Block::new(good.slice(..len)) {
                let _ = block.cursor().seek(b"key00010", 0);
            }
        }
    }
}
