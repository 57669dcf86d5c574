//! The range-filter block: a [`RangeFilter`](crate::filter::RangeFilter)
//! over the images of the table's distinct user keys, so that a scan can
//! skip a table that holds no key in its range.
//!
//! Present only in format version 5 tables, at the handle the properties
//! record (tag 26), after the range-tombstone block's place and before the
//! properties block:
//!
//! ```text
//! offset  0: version        u8      1
//! offset  1: bucket shift   u8      0..=63: bucket = image >> shift
//! offset  2: min image      u64 LE  of the table's keys
//! offset 10: max image      u64 LE  of the table's keys
//! offset 18: name length    u8      n, 1..=255
//! offset 19: image name     n bytes UTF-8, as `KeyImage::name` gives it
//! 19 + n:    pad length     u8      p, 0..=63
//! 20 + n:    zeros          p bytes, so that the point filter's array lies
//!                                   on a 64-byte file offset (read in place)
//! 20 + n + p: filter block  the `filter_block` layout, to the end: a point
//!                           filter over `bucket_hash(seed, b)` of every
//!                           non-empty bucket `b`
//! ```
//!
//! followed by the usual block trailer (type 6, crc32).
//!
//! Like the point filter, it is built, encoded, decoded again and checked
//! against every key's image before it is written: a kind that fails falls
//! back as the filter block does, and if even that fails the table is
//! written with no range filter (a version 1–4 table) and the reason. A
//! reader that does not know the version, or the point filter's kind,
//! answers "maybe" for every range; a block that fails its crc or does not
//! decode is dropped at open, and the table is read for every scan.

use std::path::Path;

use bytes::Bytes;

use super::filter_block::{FILTER_ARRAY_ALIGN, TableFilter, build_filter_block};
use super::format::{BlockType, FOOTER_LEN, Footer, check_range_filter_version, read_block};
use super::properties::TableProperties;
use crate::codec::Reader;
use crate::filter::{FilterKind, RangeLayout};
use crate::key_image::RangeFilterPolicy;
use crate::{Error, Result};

/// The range-filter block layout this code writes.
pub const RANGE_FILTER_VERSION: u8 = 1;

/// The most padding a block holds: less than [`FILTER_ARRAY_ALIGN`].
const MAX_PAD: usize = 63;

/// A table's range filter, ready to probe.
#[derive(Debug)]
pub struct TableRangeFilter {
    version: u8,
    layout: RangeLayout,
    image: String,
    /// `None` for a version this build does not know: every range "maybe".
    points: Option<TableFilter>,
    block_bytes: usize,
}

impl TableRangeFilter {
    /// Parses a range-filter block's verified contents, copying the point
    /// filter's array.
    ///
    /// # Errors
    /// `Corruption` (offsets within the block) for a short or malformed
    /// header, padding that is not zeros, or a known point-filter kind
    /// that does not decode.
    pub fn decode(block: &[u8]) -> Result<Self> {
        Self::decode_in(block, None)
    }

    /// [`TableRangeFilter::decode`] of a block held in `shared` (a slice of
    /// a table's mapping): the point filter's array is viewed in place
    /// where it is aligned.
    ///
    /// # Errors
    /// As [`TableRangeFilter::decode`].
    pub fn decode_mapped(shared: &Bytes) -> Result<Self> {
        Self::decode_in(shared, Some(shared))
    }

    fn decode_in(block: &[u8], shared: Option<&Bytes>) -> Result<Self> {
        let mut r = Reader::new(block);
        let version = r.u8()?;
        let unknown = TableRangeFilter {
            version,
            layout: RangeLayout { shift: 0, min: 0, max: u64::MAX },
            image: String::new(),
            points: None,
            block_bytes: block.len(),
        };
        if version != RANGE_FILTER_VERSION {
            return Ok(unknown);
        }
        let shift_at = r.position() as u64;
        let shift = r.u8()?;
        if shift > 63 {
            return Err(Error::corruption(shift_at, format!("range filter bucket shift {shift} exceeds 63")));
        }
        let (min, max) = (r.u64()?, r.u64()?);
        if min > max {
            return Err(Error::corruption(2, format!("range filter min image {min:#x} above max {max:#x}")));
        }
        let name_at = r.position() as u64;
        let name_len = usize::from(r.u8()?);
        let name = r.bytes(name_len)?;
        let image = match std::str::from_utf8(name) {
            Ok(n) if !n.is_empty() => n.to_owned(),
            _ => return Err(Error::corruption(name_at, "range filter image name is empty or not UTF-8")),
        };
        let pad_at = r.position();
        let pad = usize::from(r.u8()?);
        let zeros = r.bytes(pad)?;
        if pad > MAX_PAD || zeros.iter().any(|&b| b != 0) {
            return Err(Error::corruption(pad_at as u64, format!("range filter padding of {pad} is not 0..64 zeros")));
        }
        let at = r.position();
        let points = match shared {
            Some(s) => TableFilter::decode_mapped(&s.slice(at..), true),
            None => TableFilter::decode(&block[at..]),
        }
        .map_err(|e| rebase(e, at as u64))?;
        Ok(TableRangeFilter { layout: RangeLayout { shift, min, max }, image, points: Some(points), ..unknown })
    }

    /// Whether a key whose image lies in `[lo, hi]` may be in the table.
    /// `false` is definite.
    #[must_use]
    pub fn may_intersect(&self, lo: u64, hi: u64) -> bool {
        self.answer(lo, hi).unwrap_or(true)
    }

    /// [`TableRangeFilter::may_intersect`], or `None` when the filter
    /// cannot tell: a version or point-filter kind this build does not
    /// read, or a range touching more than
    /// [`MAX_RANGE_PROBES`](crate::filter::MAX_RANGE_PROBES) buckets.
    #[must_use]
    pub fn answer(&self, lo: u64, hi: u64) -> Option<bool> {
        let f = self.points.as_ref().filter(|f| f.kind().is_some())?;
        self.layout.answer(f.seed(), lo, hi, |h| f.may_contain(h))
    }

    /// The stored version.
    #[must_use]
    pub fn version(&self) -> u8 {
        self.version
    }

    /// The buckets and the keys' image bounds.
    #[must_use]
    pub fn layout(&self) -> RangeLayout {
        self.layout
    }

    /// The name of the key image the filter was built over (empty for an
    /// unknown version).
    #[must_use]
    pub fn image(&self) -> &str {
        &self.image
    }

    /// The point filter over the buckets (`None` for an unknown version).
    #[must_use]
    pub fn points(&self) -> Option<&TableFilter> {
        self.points.as_ref()
    }

    /// Bytes of the block, trailer excluded.
    #[must_use]
    pub fn block_bytes(&self) -> usize {
        self.block_bytes
    }
}

fn rebase(e: Error, base: u64) -> Error {
    match e {
        Error::Corruption { file: None, offset, what } => {
            Error::Corruption { file: None, offset: offset.saturating_add(base), what }
        }
        other => other,
    }
}

/// The outcome of building a table's range filter.
#[derive(Debug, Clone, PartialEq)]
pub struct BuiltRangeFilter {
    /// The block's contents; empty when none was built.
    pub block: Vec<u8>,
    /// The point filter's kind as built ([`FilterKind::None`] if none).
    pub kind: FilterKind,
    /// Non-empty buckets.
    pub buckets: u64,
    /// Why the requested kind was not built, if it was not.
    pub fallback_reason: Option<String>,
}

/// Builds, encodes and validates the range-filter block for `images` (the
/// images of the table's distinct user keys, ascending, under `policy`),
/// hashed under `seed`; `block_at` is the file offset the block will start
/// at, for the padding that aligns the point filter's array.
/// `inject_failure` makes a static kind's build fail, for tests of the
/// fallback.
#[must_use]
pub fn build(
    policy: &RangeFilterPolicy,
    seed: u64,
    images: &[u64],
    (block_at, inject_failure): (u64, bool),
) -> BuiltRangeFilter {
    let none = |reason| BuiltRangeFilter { block: Vec::new(), kind: FilterKind::None, buckets: 0, fallback_reason: reason };
    let Some(layout) = RangeLayout::for_images(images) else { return none(None) };
    let mut hashes = layout.bucket_hashes(seed, images);
    let buckets = hashes.len() as u64;
    let built = build_filter_block(policy.kind, seed, &mut hashes, inject_failure, 0);
    if built.block.is_empty() {
        return none(built.fallback_reason);
    }
    let name = policy.image.name().as_bytes();
    let Ok(name_len) = u8::try_from(name.len()) else {
        return none(Some(format!("image name {:?} is longer than 255 bytes", policy.image.name())));
    };
    let mut block = vec![RANGE_FILTER_VERSION, layout.shift];
    block.extend_from_slice(&layout.min.to_le_bytes());
    block.extend_from_slice(&layout.max.to_le_bytes());
    block.push(name_len);
    block.extend_from_slice(name);
    let pad = built.array_at.map_or(0, |a| {
        let misfit = (block_at + block.len() as u64 + 1 + a as u64) % FILTER_ARRAY_ALIGN;
        u8::try_from((FILTER_ARRAY_ALIGN - misfit) % FILTER_ARRAY_ALIGN).unwrap_or(0)
    });
    block.push(pad);
    block.resize(block.len() + usize::from(pad), 0);
    block.extend_from_slice(&built.block);
    // Validate what a reader will see, as the point filter's build does.
    let check = TableRangeFilter::decode(&block).map_err(|e| format!("does not decode: {e}")).and_then(|f| {
        match images.iter().find(|&&x| !f.may_intersect(x, x)) {
            Some(x) => Err(format!("validation failed: the image {x:#x} reads as absent")),
            None => Ok(()),
        }
    });
    match check {
        Ok(()) => BuiltRangeFilter { block, kind: built.kind, buckets, fallback_reason: built.fallback_reason },
        Err(e) => none(Some(e)),
    }
}

/// Checks the range-filter block the properties name, if any, against the
/// format version, and decodes it. A block that fails its crc or does not
/// decode is dropped (returned as the reason, naming `path`), not an error.
///
/// # Errors
/// `Corruption` naming `path` if the format version and the properties
/// disagree about whether there is a block.
pub(super) fn load(
    path: &Path,
    file: &Bytes,
    footer: &Footer,
    p: &TableProperties,
) -> Result<(Option<TableRangeFilter>, Option<String>)> {
    let version_at = (file.len().saturating_sub(FOOTER_LEN) + 36) as u64;
    check_range_filter_version(footer.version, p.range_filter_block.is_some(), version_at)
        .map_err(|e| e.at_file(path, 0))?;
    let Some(h) = p.range_filter_block else { return Ok((None, None)) };
    let decoded = read_block(file, h, BlockType::RangeFilter)
        .and_then(|b| TableRangeFilter::decode_mapped(&b).map_err(|e| e.at_file(path, h.offset)));
    Ok(match decoded {
        Ok(f) => (Some(f), None),
        Err(e) => (None, Some(e.at_file(path, 0).to_string())),
    })
}

#[cfg(test)]
mod tests;
