//! The filter block: a self-describing header and a filter over the table's
//! distinct user keys.
//!
//! ```text
//! offset  0: kind tag        u8   FilterKind::tag: 1 bloom, 2 blocked bloom,
//!                                 3 xor8, 4 xor16, 5 fuse8, 6 fuse16,
//!                                 7 ribbon
//! offset  1: format version  u8   currently 1
//! offset  2: hash seed       u64 LE  (keys are probed as hash_key(seed, user_key))
//! offset 10: bits per key    f64 LE  (the configured or nominal parameter)
//! offset 18: key count       u64 LE  (distinct user keys the filter was built from)
//! offset 26: the filter's own encode() bytes, to the end of the block
//! ```
//!
//! A reader that does not know the kind tag or the version treats the
//! filter as "may contain" for every key: an unreadable filter may cost I/O,
//! never a wrong "absent".
//!
//! Building validates before anything is written: the encoded filter is
//! decoded again and probed with every input hash. A static filter that
//! fails to peel or to validate is replaced by a blocked Bloom filter of
//! about the same size, and the reason is kept for the properties block.

use bytes::Bytes;

use crate::codec::Reader;
use crate::filter::{AnyFilter, BuildError, Filter, FilterKind};
use crate::{Error, Result};

/// The filter-block layout this code writes.
pub const FILTER_FORMAT_VERSION: u8 = 1;
/// Bytes before the filter's own encoding.
pub const FILTER_HEADER_LEN: usize = 26;
/// The file alignment a table writer gives a filter's array (format
/// version 4): a cache line, which a blocked Bloom block must not straddle
/// and which covers every kind's element alignment.
pub const FILTER_ARRAY_ALIGN: u64 = 64;

/// The parsed header of a filter block.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FilterHeader {
    /// Kind tag as stored.
    pub tag: u8,
    /// Filter-block format version as stored.
    pub version: u8,
    /// Seed of the key hash.
    pub seed: u64,
    /// Bits-per-key parameter.
    pub bits_per_key: f64,
    /// Distinct user keys the filter was built from.
    pub keys: u64,
}

impl FilterHeader {
    fn encode_to(&self, out: &mut Vec<u8>) {
        out.push(self.tag);
        out.push(self.version);
        out.extend_from_slice(&self.seed.to_le_bytes());
        out.extend_from_slice(&self.bits_per_key.to_le_bytes());
        out.extend_from_slice(&self.keys.to_le_bytes());
    }
}

/// A table's filter, ready to probe.
#[derive(Debug)]
pub struct TableFilter {
    header: FilterHeader,
    /// `None` for a kind or version this build does not know: the table
    /// then answers "may contain" for every key.
    filter: Option<AnyFilter>,
    block_bytes: usize,
}

impl TableFilter {
    /// Parses a filter block's verified contents.
    ///
    /// # Errors
    /// `Corruption` if a known kind's header or body is malformed. An
    /// unknown kind tag or version is not an error: the result answers
    /// "may contain" for every key.
    pub fn decode(block: &[u8]) -> Result<Self> {
        Self::decode_in(block, None)
    }

    /// [`TableFilter::decode`] of a block held in `shared` (a slice of a
    /// table's mapping): with `in_place` (format 4), the filter's array is
    /// viewed there where it is aligned, not copied.
    ///
    /// # Errors
    /// As [`TableFilter::decode`].
    pub fn decode_mapped(shared: &Bytes, in_place: bool) -> Result<Self> {
        Self::decode_in(shared, in_place.then_some(shared))
    }

    fn decode_in(block: &[u8], shared: Option<&Bytes>) -> Result<Self> {
        let mut r = Reader::new(block);
        let header = FilterHeader {
            tag: r.u8()?,
            version: r.u8()?,
            seed: r.u64()?,
            bits_per_key: r.f64()?,
            keys: r.u64()?,
        };
        let body = block.get(FILTER_HEADER_LEN..).unwrap_or_default();
        let filter = match FilterKind::of_tag(header.tag, header.bits_per_key) {
            Some(kind) if header.version == FILTER_FORMAT_VERSION => {
                let body_shared = shared.filter(|s| s.len() >= FILTER_HEADER_LEN).map(|s| s.slice(FILTER_HEADER_LEN..));
                let decoded = match body_shared {
                    Some(b) => kind.decode_shared(&b),
                    None => kind.decode(body),
                };
                Some(decoded.map_err(|e| rebase(e, FILTER_HEADER_LEN))?)
            }
            _ => None,
        };
        Ok(TableFilter { header, filter, block_bytes: block.len() })
    }

    /// The hash seed keys must be probed with.
    #[must_use]
    pub fn seed(&self) -> u64 {
        self.header.seed
    }

    /// Whether `hash` (from `hash_key(self.seed(), key)`) may be in the table.
    #[must_use]
    #[inline]
    pub fn may_contain(&self, hash: u64) -> bool {
        self.filter.as_ref().is_none_or(|f| f.contains(hash))
    }

    /// [`TableFilter::may_contain`] for each of `hashes`, in order, into
    /// `out` (cleared first), through the kind's batch query
    /// ([`crate::filter::Filter::contains_batch`]).
    pub fn may_contain_batch(&self, hashes: &[u64], out: &mut Vec<bool>) {
        if let Some(f) = &self.filter {
            f.contains_batch(hashes, out);
        } else {
            out.clear();
            out.resize(hashes.len(), true);
        }
    }

    /// Starts loading what [`TableFilter::may_contain`] of `hash` will read
    /// ([`crate::filter::Filter::prefetch`]).
    #[inline]
    pub fn prefetch(&self, hash: u64) {
        if let Some(f) = &self.filter {
            f.prefetch(hash);
        }
    }

    /// The file offsets of the filter's array when it is viewed in place in
    /// `file` (the table's mapping) rather than copied; `None` for a copy.
    #[must_use]
    pub fn in_place_within(&self, file: &[u8]) -> Option<std::ops::Range<u64>> {
        let array = self.filter.as_ref()?.in_place()?;
        let start = (array.as_ptr() as usize).checked_sub(file.as_ptr() as usize)?;
        let end = start + array.len();
        (end <= file.len()).then_some(start as u64..end as u64)
    }

    /// Heap bytes the filter holds when its block lies in `file` (the
    /// table's mapping): its decoded size ([`Filter::size_bytes`], its
    /// arrays and the structs that hold them), less the array it views in
    /// place there. A copied filter counts whole; one read in place counts
    /// only its descriptor (tens of bytes) and whatever part it still
    /// copies; a kind this build cannot read holds nothing.
    #[must_use]
    pub fn heap_bytes(&self, file: &[u8]) -> usize {
        let Some(f) = &self.filter else { return 0 };
        let viewed = self.in_place_within(file).map_or(0, |r| usize::try_from(r.end - r.start).unwrap_or(0));
        f.size_bytes().saturating_sub(viewed)
    }

    /// The stored header.
    #[must_use]
    pub fn header(&self) -> FilterHeader {
        self.header
    }

    /// The kind, or `None` for a kind or version this build cannot read.
    #[must_use]
    pub fn kind(&self) -> Option<FilterKind> {
        self.filter.as_ref().map(AnyFilter::kind)
    }

    /// Bytes of the filter block, header included.
    #[must_use]
    pub fn block_bytes(&self) -> usize {
        self.block_bytes
    }

    /// The false-positive rate theory predicts, if the kind is known.
    #[must_use]
    pub fn theoretical_fpr(&self) -> Option<f64> {
        self.filter.as_ref().map(Filter::theoretical_fpr)
    }
}

fn rebase(e: Error, base: usize) -> Error {
    match e {
        Error::Corruption { file: None, offset, what } => {
            Error::Corruption { file: None, offset: offset.saturating_add(base as u64), what }
        }
        other => other,
    }
}

/// The outcome of building a table's filter.
#[derive(Debug, Clone, PartialEq)]
pub struct BuiltFilter {
    /// The kind actually written ([`FilterKind::None`] if none).
    pub kind: FilterKind,
    /// The filter block's contents; empty when `kind` is `None`.
    pub block: Vec<u8>,
    /// Why the requested kind was not used, if it was not.
    pub fallback_reason: Option<String>,
    /// Where in `block` the array a reader views in place starts, which the
    /// table writer aligns to [`FILTER_ARRAY_ALIGN`]; `None` if no kind's
    /// array is read in place.
    pub array_at: Option<usize>,
}

/// Builds, encodes and validates the filter block for `hashes` (one per
/// distinct user key, under `seed`), falling back as described in the
/// module docs. `inject_failure` makes a static build fail, for tests;
/// `carry_bits` sizes a blocked-Bloom filter
/// ([`BlockedBloom::blocks_with_carry`](crate::filter::BlockedBloom::blocks_with_carry);
/// 0 for the smallest at its bits per key).
#[must_use]
pub fn build_filter_block(
    kind: FilterKind,
    seed: u64,
    hashes: &mut Vec<u64>,
    inject_failure: bool,
    carry_bits: i64,
) -> BuiltFilter {
    hashes.sort_unstable();
    hashes.dedup();
    if kind == FilterKind::None || hashes.is_empty() {
        return BuiltFilter { kind: FilterKind::None, block: Vec::new(), fallback_reason: None, array_at: None };
    }
    let first = try_build(kind, seed, hashes, inject_failure && kind.is_static(), carry_bits);
    let reason = match first {
        Ok((block, array_at)) => return BuiltFilter { kind, block, fallback_reason: None, array_at },
        Err(e) => format!("{kind}: {e}"),
    };
    if kind.is_static() {
        let fallback = FilterKind::BlockedBloom { bits_per_key: kind.nominal_bits_per_key() };
        match try_build(fallback, seed, hashes, false, 0) {
            Ok((block, array_at)) => BuiltFilter { kind: fallback, block, fallback_reason: Some(reason), array_at },
            Err(e) => BuiltFilter {
                kind: FilterKind::None,
                block: Vec::new(),
                fallback_reason: Some(format!("{reason}; fallback {fallback}: {e}")),
                array_at: None,
            },
        }
    } else {
        BuiltFilter { kind: FilterKind::None, block: Vec::new(), fallback_reason: Some(reason), array_at: None }
    }
}

/// The filter block and where its array starts in it.
type Block = (Vec<u8>, Option<usize>);

fn try_build(kind: FilterKind, seed: u64, hashes: &[u64], inject: bool, carry: i64) -> Result<Block, String> {
    if inject {
        return Err(BuildError::Injected.to_string());
    }
    let Some(tag) = kind.tag() else { return Ok((Vec::new(), None)) };
    let built = kind.build_with_carry(hashes, carry).map_err(|e| e.to_string())?;
    let array_at = built.array_offset().map(|at| FILTER_HEADER_LEN + at);
    let body = built.encode();
    let header = FilterHeader {
        tag,
        version: FILTER_FORMAT_VERSION,
        seed,
        bits_per_key: kind.nominal_bits_per_key(),
        keys: hashes.len() as u64,
    };
    let mut block = Vec::with_capacity(FILTER_HEADER_LEN + body.len());
    header.encode_to(&mut block);
    block.extend_from_slice(&body);
    // Validate what a reader will see: the decoded block, not the in-memory
    // filter, so an encode/decode mismatch is caught too.
    let decoded = TableFilter::decode(&block)
        .map_err(|e| format!("validation failed: encoding does not decode: {e}"))?;
    if let Some(&hash) = hashes.iter().find(|&&h| !decoded.may_contain(h)) {
        return Err(BuildError::ValidationFailed { hash }.to_string());
    }
    Ok((block, array_at))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::{BlockedBloom, FilterCodec};

    #[test]
    fn none_and_empty_inputs_write_no_filter() {
        let built = build_filter_block(FilterKind::None, 1, &mut vec![1, 2, 3], false, 0);
        assert_eq!(built.kind, FilterKind::None);
        assert!(built.block.is_empty());
        let built = build_filter_block(FilterKind::Xor8, 1, &mut Vec::new(), false, 0);
        assert_eq!((built.kind, built.fallback_reason), (FilterKind::None, None));
    }

    #[test]
    fn bloom_blocks_move_at_most_one_block_from_the_smallest_filter() {
        for (n, b) in [(1usize, 10.0), (100, 1.0), (1000, 2.7), (1600, 1.1), (60_000, 9.9)] {
            let ceil = BlockedBloom::blocks_for(n, b);
            assert_eq!(BlockedBloom::blocks_with_carry(n, b, 0), ceil, "{n} at {b}");
            for carry in [-100_000i64, -700, -1, 1, 300, 700, 100_000] {
                let got = BlockedBloom::blocks_with_carry(n, b, carry);
                assert!(got >= 1 && got.abs_diff(ceil) <= 1, "{n} at {b}, carry {carry}: {got} vs {ceil}");
            }
            assert!(BlockedBloom::blocks_with_carry(n, b, 100_000) > ceil);
            assert_eq!(BlockedBloom::blocks_with_carry(n, b, -100_000), ceil.saturating_sub(1).max(1));
        }
        // A carried filter still holds every key.
        let mut hashes: Vec<u64> = (0..1000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
        let kind = FilterKind::BlockedBloom { bits_per_key: 2.7 };
        let built = build_filter_block(kind, 1, &mut hashes, false, -600);
        assert_eq!(built.kind, kind);
        assert_eq!(built.block.len(), FILTER_HEADER_LEN + BlockedBloom::encoded_len(1000, 2.7).unwrap() - 64);
    }

    /// A block read in place views its array where the array is aligned
    /// for its elements, copies it where not (and when not asked to read in
    /// place), answers the same either way, and a truncated one is
    /// `Corruption`.
    #[test]
    fn mapped_blocks_are_viewed_when_aligned_and_copied_when_not() {
        let mut hashes: Vec<u64> = (0..3000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
        let kinds = [
            (FilterKind::Bloom { bits_per_key: 10.0 }, 8),
            (FilterKind::BlockedBloom { bits_per_key: 10.0 }, 64),
            (FilterKind::Xor8, 1),
            (FilterKind::Xor16, 2),
            (FilterKind::BinaryFuse8, 1),
            (FilterKind::BinaryFuse16, 2),
        ];
        for (kind, align) in kinds {
            let built = build_filter_block(kind, 7, &mut hashes, false, 0);
            let (block, at) = (&built.block, built.array_at.expect("an aligned kind"));
            for shift in 0..64 {
                let mut buf = bytes::BytesMut::zeroed(block.len() + 128);
                let o = (128 + shift - (buf.as_ptr() as usize + at) % 64) % 64;
                buf[o..o + block.len()].copy_from_slice(block);
                let mapped = buf.freeze().slice(o..o + block.len());
                let f = TableFilter::decode_mapped(&mapped, true).unwrap();
                let viewed = f.in_place_within(&mapped);
                assert_eq!(viewed.is_some(), shift % align == 0, "{kind} at shift {shift}");
                if let Some(range) = viewed {
                    assert_eq!(range, at as u64..block.len() as u64 - 4, "{kind}: the array, to the crc");
                }
                assert!(hashes.iter().all(|&h| f.may_contain(h)), "{kind} at shift {shift}");
                assert!(TableFilter::decode_mapped(&mapped, false).unwrap().in_place_within(&mapped).is_none());
            }
            let mapped = bytes::Bytes::copy_from_slice(block);
            for len in [0, 1, 25, 26, at, at + 1, block.len() - 5, block.len() - 1] {
                let cut = TableFilter::decode_mapped(&mapped.slice(..len), true);
                assert!(cut.unwrap_err().is_corruption(), "{kind} cut to {len}");
            }
        }
    }

    #[test]
    fn unknown_kinds_and_versions_fail_open() {
        let mut block = Vec::new();
        FilterHeader { tag: 99, version: 1, seed: 3, bits_per_key: 10.0, keys: 5 }.encode_to(&mut block);
        block.extend_from_slice(b"future filter bytes");
        let f = TableFilter::decode(&block).unwrap();
        assert_eq!(f.kind(), None);
        assert!((0..1000).all(|h| f.may_contain(h)));
        // A known kind under a future version is also read as "may contain".
        block[0] = 2;
        block[1] = FILTER_FORMAT_VERSION + 1;
        let f = TableFilter::decode(&block).unwrap();
        assert_eq!(f.kind(), None);
        assert!((0..1000u64).all(|h| f.may_contain(h.wrapping_mul(0x9e37_79b9_7f4a_7c15))));
        assert_eq!(f.seed(), 3);
    }

    #[test]
    fn truncated_headers_are_corruption() {
        let mut block = Vec::new();
        FilterHeader { tag: 99, version: 1, seed: 3, bits_per_key: 10.0, keys: 5 }.encode_to(&mut block);
        for len in 0..FILTER_HEADER_LEN {
            assert!(TableFilter::decode(&block[..len]).unwrap_err().is_corruption(), "len {len}");
        }
    }
}
