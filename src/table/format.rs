//! The table file's fixed parts: block handles, block trailers and the footer.
//!
//! A table file is a sequence of blocks, each followed by a trailer, and
//! ends in a fixed-size footer:
//!
//! ```text
//! +--------------+-----+-------------+---------------+--------------------+------------------+--------+
//! | data block 0 | ... | index block | filter block? | range-del block?   | range-filter block? | properties block | footer |
//! +--------------+-----+-------------+---------------+--------------------+---------------------+------------------+--------+
//! ```
//!
//! The range-tombstone block's handle is not in the footer, whose frame is
//! frozen, but in the properties (tag 20). Its presence is what format
//! version 2 means: a table without one is written as version 1, byte for
//! byte as before, so builds that know no range deletes still read it.
//! Version 3 means some data or index block is compressed
//! ([`compression`](super::compression)), with or without range
//! tombstones; a table whose blocks all stay raw is written as 1 or 2.
//! Version 4 means the filter block is aligned: up to 63 zero bytes follow
//! the index block so that the filter's array (its fingerprints, words or
//! blocks) starts on a 64-byte file offset, which the page-aligned mapping
//! keeps, and a reader views it in place instead of copying it
//! ([`FILTER_ARRAY_ALIGN`]).
//! Every table with such a filter is version 4, compressed, with range
//! tombstones or neither; a table without one is written as 1, 2 or 3.
//! Version 5 means the table has a range filter
//! ([`range_filter_block`](super::range_filter_block), its handle in
//! properties tag 26), after the range-tombstone block's place; it keeps
//! every rule of version 4. A table without a range filter is written as
//! before, so builds from before range filters read it.
//!
//! ```text
//! ... | index block | zeros (0..=63) | filter header (26) | kind's header | array @ 64·k | ...
//! ```
//!
//! Block trailer (5 bytes), after every block's contents:
//!
//! ```text
//!  bit 7     4 3     0
//! +---------+---------+-----------------------------------------+
//! | codec   | type    | crc32 LE (crc32fast over contents+byte) |
//! +---------+---------+-----------------------------------------+
//!   codec: 0 raw, 1 lz4, 2 zstd (only data and index blocks, only in
//!   format version 3; the crc covers the stored, compressed bytes)
//! ```
//!
//! Block handle (12 bytes): where a block's contents start and how long they
//! are, trailer excluded.
//!
//! ```text
//! +------------------+----------------+
//! | offset: u64 LE   | size: u32 LE   |
//! +------------------+----------------+
//! ```
//!
//! Footer (56 bytes), the last bytes of the file:
//!
//! ```text
//! offset  0: index handle       (12)
//! offset 12: filter handle      (12)   offset 0 + size 0 = no filter block
//! offset 24: properties handle  (12)
//! offset 36: format version     u32 LE: 1; 2 with range tombstones; 3 with a compressed block;
//!                                4 with an aligned filter block; 5 with a range filter
//! offset 40: reserved           u32 LE, zero (covered by the crc)
//! offset 44: crc32 LE of bytes 0..44
//! offset 48: magic              u64 LE = 0x5349_4654_5353_5401 ("SIFTSST" + 1)
//! ```

use bytes::Bytes;

use super::compression::{CODEC_RAW, decompress_block};
use super::filter_block::FILTER_ARRAY_ALIGN;
use crate::codec::Reader;
use crate::{Error, Result};

/// The last eight bytes of every table file.
pub const TABLE_MAGIC: u64 = 0x5349_4654_5353_5401;
/// The newest table format this code writes and reads: a table with a
/// range filter ([`BlockType::RangeFilter`]), and otherwise as version 4.
pub const FORMAT_VERSION: u32 = 5;
/// The format of a table whose filter block is aligned for reading in
/// place (zero padding before it), compressed or not, with range
/// tombstones or not, and no range filter.
pub const FORMAT_VERSION_ALIGNED: u32 = 4;
/// The format of a table with a compressed data or index block, range
/// tombstones or not, and no aligned filter block.
pub const FORMAT_VERSION_COMPRESSED: u32 = 3;
/// The format of a table with a range-tombstone block
/// ([`BlockType::RangeDel`]) and no compressed block.
pub const FORMAT_VERSION_RANGE_DEL: u32 = 2;
/// The format of a table without range tombstones, still written for them
/// so that builds from before range deletes read them.
pub const FORMAT_VERSION_PLAIN: u32 = 1;
/// Bytes in the footer.
pub const FOOTER_LEN: usize = 56;
/// Bytes in a block trailer.
pub const BLOCK_TRAILER_LEN: usize = 5;
/// Bytes in an encoded [`BlockHandle`].
pub const HANDLE_LEN: usize = 12;

/// What a block holds, recorded in its trailer so a handle pointing at the
/// wrong block is caught.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum BlockType {
    /// Sorted key-value entries.
    Data = 1,
    /// Last key of each data block -> its handle.
    Index = 2,
    /// The membership filter over the table's user keys.
    Filter = 3,
    /// Table statistics.
    Properties = 4,
    /// The table's range tombstones (format version 2).
    RangeDel = 5,
    /// The range filter over the table's key images (format version 5).
    RangeFilter = 6,
}

/// Where a block lives in the file: contents only, trailer excluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlockHandle {
    /// Byte offset of the block's first byte.
    pub offset: u64,
    /// Length of the block's contents.
    pub size: u32,
}

impl BlockHandle {
    /// Appends the 12-byte encoding.
    pub fn encode_to(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.offset.to_le_bytes());
        out.extend_from_slice(&self.size.to_le_bytes());
    }

    /// Reads a 12-byte encoding.
    ///
    /// # Errors
    /// `Corruption` on a short read.
    pub fn decode_from(r: &mut Reader<'_>) -> Result<Self> {
        Ok(BlockHandle { offset: r.u64()?, size: r.u32()? })
    }

    /// Whether this is the "no block" handle (offset 0, size 0).
    #[must_use]
    pub fn is_null(&self) -> bool {
        self.offset == 0 && self.size == 0
    }

    /// Bytes this block occupies in the file, trailer included.
    #[must_use]
    pub fn size_with_trailer(&self) -> u64 {
        u64::from(self.size) + BLOCK_TRAILER_LEN as u64
    }
}

/// The fixed-size tail of a table file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footer {
    /// The index block.
    pub index: BlockHandle,
    /// The filter block, or the null handle when the table has none.
    pub filter: BlockHandle,
    /// The properties block.
    pub properties: BlockHandle,
    /// The format version the table was written with.
    pub version: u32,
}

impl Footer {
    /// The 56-byte encoding.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(FOOTER_LEN);
        self.index.encode_to(&mut out);
        self.filter.encode_to(&mut out);
        self.properties.encode_to(&mut out);
        out.extend_from_slice(&self.version.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(&TABLE_MAGIC.to_le_bytes());
        out
    }

    /// Parses and checks the footer at the end of `file`; offsets in errors
    /// are file offsets.
    ///
    /// # Errors
    /// `Corruption` if the file is too short, the magic or crc is wrong, the
    /// version is unknown, or a handle points outside the file.
    pub fn decode(file: &[u8]) -> Result<Self> {
        let Some(start) = file.len().checked_sub(FOOTER_LEN) else {
            return Err(Error::corruption(
                0,
                format!("{} bytes is too short for a table footer of {FOOTER_LEN}", file.len()),
            ));
        };
        let tail = file.get(start..).unwrap_or_default();
        let base = start as u64;
        let at = |e: Error| rebase(e, base);
        let mut r = Reader::new(tail);
        let index = BlockHandle::decode_from(&mut r).map_err(at)?;
        let filter = BlockHandle::decode_from(&mut r).map_err(at)?;
        let properties = BlockHandle::decode_from(&mut r).map_err(at)?;
        let version = r.u32().map_err(at)?;
        let _reserved = r.u32().map_err(at)?;
        let crc = r.u32().map_err(at)?;
        let magic = r.u64().map_err(at)?;
        if magic != TABLE_MAGIC {
            return Err(Error::corruption(base + 48, format!("bad table magic {magic:#018x}")));
        }
        let actual = crc32fast::hash(tail.get(..44).unwrap_or_default());
        if crc != actual {
            return Err(Error::corruption(
                base + 44,
                format!("footer checksum mismatch: stored {crc:#010x}, computed {actual:#010x}"),
            ));
        }
        // Checked after the crc, which covers it: a damaged version is
        // damage. The 56-byte frame (version at 36, crc of 0..44, magic) is
        // frozen, so a newer table's version reads here (DESIGN.md,
        // "Format versions").
        if version > FORMAT_VERSION {
            return Err(Error::Unsupported {
                file: None,
                format: "table",
                found: version,
                supported: FORMAT_VERSION,
            });
        }
        if version < FORMAT_VERSION_PLAIN {
            return Err(Error::corruption(
                base + 36,
                format!("table format version {version} was never written"),
            ));
        }
        let footer = Footer { index, filter, properties, version };
        for (name, h, off) in [("index", index, 0), ("filter", filter, 12), ("properties", properties, 24)] {
            let end = h.offset.checked_add(h.size_with_trailer());
            if !(name == "filter" && h.is_null()) && end.is_none_or(|end| end > base) {
                return Err(Error::corruption(
                    base + off,
                    format!("{name} handle {h:?} points past the blocks"),
                ));
            }
        }
        Ok(footer)
    }
}

/// Checks the zeros a format-4 writer puts between the index and the
/// filter block: no checksum covers them, so a flipped one would otherwise
/// go unnoticed. Offsets in errors are file offsets.
///
/// # Errors
/// `Corruption` if the gap is not fewer than 64 zero bytes.
pub fn check_filter_padding(file: &[u8], footer: &Footer) -> Result<()> {
    if footer.version < FORMAT_VERSION_ALIGNED || footer.filter.is_null() {
        return Ok(());
    }
    let start = footer.index.offset.saturating_add(footer.index.size_with_trailer());
    let short = footer.filter.offset.checked_sub(start).is_some_and(|gap| gap < FILTER_ARRAY_ALIGN);
    let gap = usize::try_from(start).ok().zip(usize::try_from(footer.filter.offset).ok());
    match gap.and_then(|(s, e)| file.get(s..e)) {
        Some(pad) if short && pad.iter().all(|&b| b == 0) => Ok(()),
        _ => Err(Error::corruption(
            start,
            format!("the filter block at {} is not aligned by zeros after the index block", footer.filter.offset),
        )),
    }
}

/// Checks that a table's format `version` and whether its properties name
/// a range-tombstone block agree: version 2 has one, version 1 none, and
/// version 3 (compressed) either. `version_at` is the footer's version
/// field, the offset errors name.
///
/// # Errors
/// `Corruption` if they disagree.
pub fn check_range_del_version(version: u32, has_block: bool, version_at: u64) -> Result<()> {
    match (version, has_block) {
        (FORMAT_VERSION_RANGE_DEL, false) => Err(Error::corruption(
            version_at,
            format!("table format version {version} without a range-tombstone block in its properties"),
        )),
        (FORMAT_VERSION_PLAIN, true) => Err(Error::corruption(
            version_at,
            format!("table format version {version} names a range-tombstone block, which it cannot hold"),
        )),
        _ => Ok(()),
    }
}

/// Checks that a table's format `version` and whether its properties name
/// a range-filter block agree: version 5 has one, earlier versions none.
///
/// # Errors
/// `Corruption` (at `version_at`, the footer's version field) if they
/// disagree.
pub fn check_range_filter_version(version: u32, has_block: bool, version_at: u64) -> Result<()> {
    match (version >= FORMAT_VERSION, has_block) {
        (true, false) => Err(Error::corruption(
            version_at,
            format!("table format version {version} without a range-filter block in its properties"),
        )),
        (false, true) => Err(Error::corruption(
            version_at,
            format!("table format version {version} names a range-filter block, which it cannot hold"),
        )),
        _ => Ok(()),
    }
}

fn rebase(e: Error, base: u64) -> Error {
    match e {
        Error::Corruption { file: None, offset, what } => {
            Error::Corruption { file: None, offset: base.saturating_add(offset), what }
        }
        other => other,
    }
}

/// Appends `contents` and its trailer to `out` (which starts at file offset
/// `file_offset`) and returns the block's handle.
///
/// # Errors
/// `InvalidArgument` if the block exceeds the 4 GiB a handle can describe.
pub fn append_block(
    out: &mut Vec<u8>,
    file_offset: u64,
    contents: &[u8],
    ty: BlockType,
) -> Result<BlockHandle> {
    append_coded_block(out, file_offset, contents, ty, CODEC_RAW)
}

/// [`append_block`] for contents stored with codec nibble `codec`
/// ([`compression`](super::compression)), which the trailer's type byte
/// carries in its high four bits.
///
/// # Errors
/// As [`append_block`].
pub fn append_coded_block(
    out: &mut Vec<u8>,
    file_offset: u64,
    contents: &[u8],
    ty: BlockType,
    codec: u8,
) -> Result<BlockHandle> {
    let size = u32::try_from(contents.len())
        .map_err(|_| Error::InvalidArgument(format!("block of {} bytes exceeds 4 GiB", contents.len())))?;
    let type_byte = ty as u8 | codec << 4;
    out.extend_from_slice(contents);
    out.push(type_byte);
    let mut h = crc32fast::Hasher::new();
    h.update(contents);
    h.update(&[type_byte]);
    out.extend_from_slice(&h.finalize().to_le_bytes());
    Ok(BlockHandle { offset: file_offset, size })
}

/// Returns the contents of the block at `handle` in `file` after checking
/// its trailer's type and crc, as a zero-copy slice. Offsets in errors are
/// file offsets. For blocks that are never compressed: a codec nibble is a
/// wrong type byte.
///
/// # Errors
/// `Corruption` if the handle is out of range, the type differs from `ty`,
/// or the crc mismatches.
pub fn read_block(file: &Bytes, handle: BlockHandle, ty: BlockType) -> Result<Bytes> {
    let (start, end, stored_ty) = checked_block(file, handle, ty)?;
    if stored_ty != ty as u8 {
        return Err(wrong_type(end, ty, stored_ty));
    }
    Ok(file.slice(start..end))
}

/// [`read_block`] for a data or index block, which may be compressed: a
/// raw one is still a zero-copy slice, a compressed one is decompressed
/// into a buffer of its own. `limit` is the largest uncompressed block the
/// table may claim, `None` for a table of format version 1 or 2, which
/// holds no compressed block.
///
/// # Errors
/// As [`read_block`]; also `Corruption` for a codec in a table that cannot
/// hold one, or a compressed block that fails to decompress
/// ([`decompress_block`]).
pub fn read_block_decoded(file: &Bytes, handle: BlockHandle, ty: BlockType, limit: Option<usize>) -> Result<Bytes> {
    let (start, end, stored_ty) = checked_block(file, handle, ty)?;
    if stored_ty & 0x0f != ty as u8 {
        return Err(wrong_type(end, ty, stored_ty));
    }
    let codec = stored_ty >> 4;
    if codec == CODEC_RAW {
        return Ok(file.slice(start..end));
    }
    let Some(limit) = limit else {
        return Err(Error::corruption(
            end as u64,
            format!("{ty:?} block has codec {codec}, but the table's format version has no compression"),
        ));
    };
    let stored = file.get(start..end).unwrap_or_default();
    decompress_block(codec, stored, limit).map(Bytes::from).map_err(|e| rebase(e, handle.offset))
}

fn wrong_type(end: usize, ty: BlockType, stored_ty: u8) -> Error {
    Error::corruption(end as u64, format!("expected a {ty:?} block, found type {stored_ty}"))
}

/// Checks a block's range and crc; its contents' start and end and the
/// stored type byte.
fn checked_block(file: &Bytes, handle: BlockHandle, ty: BlockType) -> Result<(usize, usize, u8)> {
    let start = usize::try_from(handle.offset).unwrap_or(usize::MAX);
    let size = handle.size as usize;
    let end = start.checked_add(size).filter(|e| e.saturating_add(BLOCK_TRAILER_LEN) <= file.len());
    let Some(end) = end else {
        return Err(Error::corruption(handle.offset, format!("{ty:?} block handle {handle:?} out of range")));
    };
    let contents = file.get(start..end).unwrap_or_default();
    let trailer = file.get(end..end + BLOCK_TRAILER_LEN).unwrap_or_default();
    let mut r = Reader::new(trailer);
    let stored_ty = r.u8().map_err(|e| rebase(e, end as u64))?;
    let stored_crc = r.u32().map_err(|e| rebase(e, end as u64))?;
    let mut h = crc32fast::Hasher::new();
    h.update(contents);
    h.update(&[stored_ty]);
    let actual = h.finalize();
    if actual != stored_crc {
        return Err(Error::corruption(
            handle.offset,
            format!("{ty:?} block checksum mismatch: stored {stored_crc:#010x}, computed {actual:#010x}"),
        ));
    }
    Ok((start, end, stored_ty))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> (Bytes, Footer) {
        let mut file = Vec::new();
        let d = append_block(&mut file, 0, b"data!", BlockType::Data).unwrap();
        let at = file.len() as u64;
        let i = append_block(&mut file, at, b"idx", BlockType::Index).unwrap();
        let at = file.len() as u64;
        let p = append_block(&mut file, at, b"props", BlockType::Properties).unwrap();
        assert_eq!(d, BlockHandle { offset: 0, size: 5 });
        let footer =
            Footer { index: i, filter: BlockHandle::default(), properties: p, version: FORMAT_VERSION };
        file.extend_from_slice(&footer.encode());
        (Bytes::from(file), footer)
    }

    #[test]
    fn footer_and_blocks_round_trip() {
        let (file, footer) = sample();
        assert_eq!(Footer::decode(&file).unwrap(), footer);
        assert_eq!(&read_block(&file, footer.index, BlockType::Index).unwrap()[..], b"idx");
        // The right bytes under the wrong type are rejected.
        assert!(read_block(&file, footer.index, BlockType::Data).unwrap_err().is_corruption());
    }

    #[test]
    fn every_flipped_footer_byte_and_truncation_is_corruption() {
        let (file, _) = sample();
        let start = file.len() - FOOTER_LEN;
        for i in start..file.len() {
            let mut bad = file.to_vec();
            bad[i] ^= 0x10;
            assert!(Footer::decode(&bad).unwrap_err().is_corruption(), "flip at {i}");
        }
        for len in 0..file.len() {
            assert!(Footer::decode(&file[..len]).unwrap_err().is_corruption(), "len {len}");
        }
    }

    #[test]
    fn flipped_block_bytes_and_wild_handles_are_corruption() {
        let (file, footer) = sample();
        for i in 0..usize::try_from(footer.index.offset).unwrap() {
            let mut bad = file.to_vec();
            bad[i] ^= 1;
            let bad = Bytes::from(bad);
            let h = BlockHandle { offset: 0, size: 5 };
            assert!(read_block(&bad, h, BlockType::Data).unwrap_err().is_corruption(), "flip at {i}");
        }
        let wild = BlockHandle { offset: u64::MAX - 2, size: u32::MAX };
        assert!(read_block(&file, wild, BlockType::Data).unwrap_err().is_corruption());
        // A footer (with a valid crc) whose handle overflows is rejected, not a panic.
        let footer = Footer { index: wild, filter: wild, properties: wild, version: FORMAT_VERSION };
        let mut f = file.to_vec();
        f.extend_from_slice(&footer.encode());
        assert!(Footer::decode(&f).unwrap_err().is_corruption());
    }
}
