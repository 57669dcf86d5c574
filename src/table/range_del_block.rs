//! The range-tombstone block: a table's range deletions, as written.
//!
//! Present only in format version 2 tables, at the handle the properties
//! record (tag 20), between the filter (or index) block and the properties
//! block. The tombstones are sorted (start, end, seq) and distinct, and kept
//! whole rather than fragmented: fragments are rebuilt at open
//! ([`RangeDels::new`]), and a compaction carries tombstones, not fragments.
//!
//! ```text
//! +---------------+------------------------------------------------------------------------+-----+
//! | count: varint | start_len: varint | start | end_len: varint | end | seq: u64 LE        | ... |
//! +---------------+------------------------------------------------------------------------+-----+
//!                   \______________________ one tombstone, `count` times ________________/
//! ```
//!
//! followed by the usual block trailer (type 5, crc32). Each tombstone has
//! `start < end` and `seq <= MAX_SEQ`; nothing follows the last one.

use std::path::Path;

use bytes::Bytes;

use super::format::{BlockHandle, BlockType, FOOTER_LEN, Footer, check_range_del_version, read_block};
use super::internal_key::MAX_SEQ;
use super::properties::TableProperties;
use crate::codec::{Reader, put_length_prefixed, put_varint};
use crate::range_del::{RangeDels, RangeTombstone};
use crate::{Error, Result};

/// The smallest encoding of one tombstone: two one-byte lengths, an empty
/// start, a one-byte end (it sorts after the start) and the seq. A count larger than the bytes left
/// allow is damage, caught before anything is allocated for it.
const MIN_TOMBSTONE_BYTES: usize = 1 + 1 + 1 + 8;

/// The block contents (trailer excluded) holding `dels`' tombstones.
#[must_use]
pub fn encode(dels: &RangeDels) -> Vec<u8> {
    let ts = dels.tombstones();
    let mut out = Vec::with_capacity(
        10 + ts.iter().map(|t| t.start.len() + t.end.len() + 8 + 4).sum::<usize>(),
    );
    put_varint(&mut out, ts.len() as u64);
    for t in ts {
        put_length_prefixed(&mut out, &t.start);
        put_length_prefixed(&mut out, &t.end);
        out.extend_from_slice(&t.seq.to_le_bytes());
    }
    out
}

/// Decodes block contents (trailer already checked). Offsets in errors are
/// relative to the block's start; the caller adds the file offset and path
/// ([`Error::at_file`]). Keys are zero-copy slices of `block`.
///
/// # Errors
/// `Corruption` for a short read, a count the bytes cannot hold, an empty
/// or inverted range, a sequence number above `MAX_SEQ`, or trailing bytes.
pub fn decode(block: &Bytes) -> Result<RangeDels> {
    let mut r = Reader::new(block);
    let count = r.varint()?;
    let fits = usize::try_from(count).ok().filter(|&n| n <= r.remaining() / MIN_TOMBSTONE_BYTES);
    let Some(count) = fits else {
        return Err(Error::corruption(
            0,
            format!("{count} range tombstones cannot fit in the {} bytes left", r.remaining()),
        ));
    };
    let mut tombstones = Vec::with_capacity(count);
    for i in 0..count {
        let at = r.position() as u64;
        let start = r.length_prefixed()?;
        let end = r.length_prefixed()?;
        let seq_at = r.position() as u64;
        let seq = r.u64()?;
        if start >= end {
            return Err(Error::corruption(
                at,
                format!("range tombstone {i} is empty: start {:?} >= end {:?}", start.escape_ascii(), end.escape_ascii()),
            ));
        }
        if seq > MAX_SEQ {
            return Err(Error::corruption(seq_at, format!("range tombstone {i}: sequence number {seq} exceeds {MAX_SEQ}")));
        }
        tombstones.push(RangeTombstone {
            start: block.slice_ref(start),
            end: block.slice_ref(end),
            seq,
        });
    }
    r.finish()?;
    Ok(RangeDels::new(tombstones))
}

/// Checks and decodes the range-tombstone block the properties name, if
/// any; errors name `path` and the file offset.
pub(super) fn load(
    path: &Path,
    file: &Bytes,
    footer: &Footer,
    p: &TableProperties,
) -> Result<Option<Box<RangeDels>>> {
    let version_at = (file.len().saturating_sub(FOOTER_LEN) + 36) as u64;
    check_range_del_version(footer.version, p.range_del_block.is_some(), version_at)
        .map_err(|e| e.at_file(path, 0))?;
    let Some(h) = p.range_del_block else {
        return Ok(None);
    };
    let block = read_block(file, h, BlockType::RangeDel).map_err(|e| e.at_file(path, 0))?;
    let dels = decode(&block).map_err(|e| e.at_file(path, h.offset))?;
    Ok(Some(Box::new(dels)))
}

/// Widens the properties' key and sequence bounds to take in the range
/// tombstones, so a table is consulted (and compacted) wherever one of
/// them may delete, and records the block.
pub(super) fn cover(p: &mut TableProperties, dels: &RangeDels, block: Option<BlockHandle>) {
    let (Some(lo), Some(hi), Some(block)) = (dels.smallest(), dels.largest(), block) else {
        return;
    };
    let seqs = dels.tombstones().iter().map(|t| t.seq);
    let (min, max) = (seqs.clone().min().unwrap_or(0), seqs.max().unwrap_or(0));
    p.min_seq = if p.entries == 0 { min } else { p.min_seq.min(min) };
    p.max_seq = p.max_seq.max(max);
    if p.smallest_key.as_deref().is_none_or(|k| lo < k) {
        p.smallest_key = Some(lo.to_vec());
    }
    if p.largest_key.as_deref().is_none_or(|k| hi > k) {
        p.largest_key = Some(hi.to_vec());
    }
    p.range_del_block = Some(block);
    p.range_tombstones = dels.len() as u64;
}

#[cfg(test)]
mod tests;
