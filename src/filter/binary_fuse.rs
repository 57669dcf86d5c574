//! Binary fuse filters (Graf & Lemire 2022, "Binary Fuse Filters: Fast and
//! Smaller Than Xor Filters"): static, ~1.125 fingerprints per key.
//!
//! The cells are cut into `segment_count + 2` segments of a power-of-two
//! `segment_length`. A key's first cell `h0` lies anywhere in the first
//! `segment_count` segments (`h0 = (h · segment_count·segment_length) >> 64`),
//! its second and third cells lie in the next two segments at offsets
//! scrambled by hash bits: `h1 = (h0 + L) ^ ((h >> 18) & (L − 1))`,
//! `h2 = (h0 + 2L) ^ (h & (L − 1))`, where `h = mix(hash, seed)` and the
//! fingerprint is `h ^ (h >> 32)` truncated. Keys overlapping only near
//! segments peel at a far lower overhead than the xor filter's uniform three
//! blocks, and the cells of a key sit within 3L of each other, which keeps
//! construction in cache.
//!
//! Parameters (from the paper, for 3-wise filters), for n distinct keys:
//! `L = 2^⌊ln n / ln 3.33 + 2.25⌋` capped at 2^18 (4 for n ≤ 1); cells
//! wanted `c = round(n · max(1.125, 0.875 + 0.25·ln 10^6 / ln n))` (0 for
//! n ≤ 1); `segment_count = max(1, ⌈c / L⌉ − 2)`.
//!
//! # Encoding
//!
//! ```text
//! offset  size          field
//! 0       1             kind: 0x21 = BinaryFuse8, 0x22 = BinaryFuse16
//! 1       1             version: 1
//! 2       8             seed (u64 LE)
//! 10      4             keys: distinct keys built from (u32 LE)
//! 14      1             log2 of segment_length, 0..=18
//! 15      4             segment_count (u32 LE), ≥ 1
//! 19      A·B           fingerprints, A = (segment_count + 2) << log2 < 2^32,
//!                       B = 1 or 2 bytes (LE)
//! end−4   4             crc32 of every byte before it (codec::seal)
//! ```
//!
//! Decoding checks the crc, the kind and version, the parameter ranges, and
//! that the fingerprint section is exactly `A·B` bytes; every index a query
//! computes is then below `A`, so a decoded filter cannot panic.

use super::BuildError;
use super::fingerprint::Fingerprint;
use super::kind::KindSpec;
use super::peel::{self, Layout};
use super::three_wise::{GEOMETRY_OFFSET, Geometry, ThreeWise, kind_spec};
use crate::codec::Reader;
use crate::{Error, Result};
const MAX_SEGMENT_LENGTH_LOG2: u32 = 18;
/// Geometry bytes: log2 of the segment length, then the segment count.
const GEOMETRY_LEN: usize = 5;

/// The binary fuse filter's layout: segment geometry, with the derived
/// values a query needs precomputed. Only the filter builds it. Invariant
/// (relied on by unsafe code through `Layout`): the fields are consistent
/// and `array_length < 2^32`; build it with `FuseLayout::new` only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FuseLayout {
    segment_length_log2: u32,
    segment_count: u32,
    segment_length: u32,
    segment_mask: u32,
    /// `segment_count · segment_length`: the range of a key's first cell.
    first_cells: u32,
    array_length: u32,
}

impl FuseLayout {
    /// `None` when the array would not have 32-bit indices or the
    /// parameters are out of range.
    fn new(segment_length_log2: u32, segment_count: u32) -> Option<Self> {
        if segment_length_log2 > MAX_SEGMENT_LENGTH_LOG2 || segment_count == 0 {
            return None;
        }
        let segment_length = 1u32 << segment_length_log2;
        let array_length = u32::try_from((u64::from(segment_count) + 2) << segment_length_log2).ok()?;
        Some(FuseLayout {
            segment_length_log2,
            segment_count,
            segment_length,
            segment_mask: segment_length - 1,
            first_cells: segment_count * segment_length,
            array_length,
        })
    }

    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "the logarithms and the cell count are small, positive and rounded on purpose"
    )]
    fn for_keys(n: usize) -> std::result::Result<Self, BuildError> {
        let too_many = BuildError::TooManyKeys { keys: n, max: peel::MAX_KEYS };
        if n > peel::MAX_KEYS {
            return Err(too_many);
        }
        let (log2, wanted_cells) = if n <= 1 {
            (2, 0)
        } else {
            let nf = n as f64;
            let log2 = (nf.ln() / 3.33f64.ln() + 2.25).floor() as u32;
            let factor = f64::max(1.125, 0.875 + 0.25 * 1e6f64.ln() / nf.ln());
            (log2.min(MAX_SEGMENT_LENGTH_LOG2), (nf * factor).round() as u64)
        };
        let segments = wanted_cells.div_ceil(1 << log2);
        let segment_count = u32::try_from(segments.saturating_sub(2).max(1)).map_err(|_| too_many.clone())?;
        FuseLayout::new(log2, segment_count).ok_or(too_many)
    }
}

// SAFETY: h0 < segment_count·L; h1 and h2 add L and 2L and then only change
// bits below L, staying in the segments one and two after h0's, so every
// index is below (segment_count + 2)·L = array_length = cells_len.
unsafe impl Layout for FuseLayout {
    const LOCAL: bool = true;

    #[inline]
    #[expect(clippy::cast_possible_truncation, reason = "the high half of a 64x32 product fits 32 bits")]
    fn cells(&self, mixed: u64) -> [usize; 3] {
        let h0 = ((u128::from(mixed) * u128::from(self.first_cells)) >> 64) as u32;
        // h0 + L, then + L again: the same cells as h0 + 2L, without keeping
        // 2L live (a query loop, callgrind: 48 → 45 instructions a query).
        let next = h0 + self.segment_length;
        let h1 = next ^ ((mixed >> 18) as u32 & self.segment_mask);
        let h2 = (next + self.segment_length) ^ (mixed as u32 & self.segment_mask);
        [h0 as usize, h1 as usize, h2 as usize]
    }

    fn cells_len(&self) -> usize {
        self.array_length as usize
    }

    fn sort_bits(&self) -> u32 {
        self.segment_count.next_power_of_two().trailing_zeros().max(1)
    }
}

/// A binary fuse filter with fingerprints of type `F` (`u8` or `u16`):
/// the 3-wise filter on overlapping segments.
///
/// ```
/// use siftdb::filter::{hash_key, BinaryFuse8, Filter, FilterCodec};
/// let hashes: Vec<u64> = (0..1000u32).map(|i| hash_key(0, &i.to_le_bytes())).collect();
/// let f = BinaryFuse8::build(&hashes).unwrap();
/// assert!(hashes.iter().all(|&h| f.contains(h)));
/// let again = BinaryFuse8::decode(&f.encode()).unwrap();
/// assert!(hashes.iter().all(|&h| again.contains(h)));
/// ```
pub type BinaryFuse<F> = ThreeWise<F, FuseLayout>;

/// Binary fuse filter with 8-bit fingerprints: ε = 2^−8, ~9.0 bits/key.
pub type BinaryFuse8 = BinaryFuse<u8>;
/// Binary fuse filter with 16-bit fingerprints: ε = 2^−16, ~18 bits/key.
pub type BinaryFuse16 = BinaryFuse<u16>;

impl<F: Fingerprint> BinaryFuse<F> {
    /// Cells per segment (a power of two).
    #[must_use]
    pub fn segment_length(&self) -> usize {
        self.layout.segment_length as usize
    }

    /// Segments a key's first cell may fall in; the array holds two more.
    #[must_use]
    pub fn segment_count(&self) -> usize {
        self.layout.segment_count as usize
    }
}

impl Geometry for FuseLayout {
    const KIND_BASE: u8 = 0x20;
    const NAME: &'static str = "binary fuse";
    const CELLS_PER_KEY: f64 = 1.125;
    const LEN: usize = GEOMETRY_LEN;

    fn for_keys(n: usize) -> std::result::Result<Self, BuildError> {
        FuseLayout::for_keys(n)
    }

    fn write(&self, out: &mut Vec<u8>) {
        #[expect(clippy::cast_possible_truncation, reason = "the log2 is at most 18")]
        out.push(self.segment_length_log2 as u8);
        out.extend_from_slice(&self.segment_count.to_le_bytes());
    }

    fn read(r: &mut Reader<'_>) -> Result<Self> {
        let log2 = r.u8()?;
        let segment_count = r.u32()?;
        FuseLayout::new(u32::from(log2), segment_count).ok_or_else(|| {
            Error::corruption(
                GEOMETRY_OFFSET,
                format!("impossible geometry: 2^{log2}-cell segments, {segment_count} segments"),
            )
        })
    }

    fn parameters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("segment_length", u64::from(self.segment_length)),
            ("segment_count", u64::from(self.segment_count)),
        ]
    }

    #[cfg(test)]
    fn cramped() -> Self {
        FuseLayout::new(0, 1).unwrap_or_else(|| unreachable!("one segment of one cell is valid"))
    }
}

/// The table filter kind `fuse8`: filter-block tag 5.
pub(crate) static FUSE8: KindSpec = kind_spec::<u8, FuseLayout>(5, "fuse8", &["binary-fuse8"]);

/// The table filter kind `fuse16`: filter-block tag 6.
pub(crate) static FUSE16: KindSpec = kind_spec::<u16, FuseLayout>(6, "fuse16", &["binary-fuse16"]);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::FilterCodec;
    use crate::filter::static_tests::{self as shared, hex};

    #[test]
    fn no_false_negatives_at_every_small_size() {
        shared::no_false_negatives_at_every_small_size::<BinaryFuse8>();
        shared::no_false_negatives_at_every_small_size::<BinaryFuse16>();
    }

    #[test]
    fn arbitrary_inputs() {
        shared::arbitrary_inputs::<BinaryFuse8>();
        shared::arbitrary_inputs::<BinaryFuse16>();
    }

    #[test]
    fn large_filters_live_on_huge_pages() {
        shared::large_filters_live_on_huge_pages::<BinaryFuse8>();
        shared::large_filters_live_on_huge_pages::<BinaryFuse16>();
    }

    #[test]
    fn duplicates_are_removed() {
        shared::duplicates_are_removed::<BinaryFuse8>();
        shared::duplicates_are_removed::<BinaryFuse16>();
    }

    #[test]
    fn fuse8_million_keys_space_and_fpr() {
        shared::million_keys::<BinaryFuse8>(9.2, 1.1, 0.9);
    }

    #[test]
    fn fuse16_million_keys_space_and_fpr() {
        shared::million_keys::<BinaryFuse16>(18.2, 2.0, 0.0);
    }

    #[test]
    fn peeling_failure_is_reported() {
        shared::peeling_failure_is_reported::<BinaryFuse8>();
        shared::peeling_failure_is_reported::<BinaryFuse16>();
    }

    #[test]
    fn validation_failure_is_reported() {
        shared::validation_failure_is_reported::<BinaryFuse8>();
        shared::validation_failure_is_reported::<BinaryFuse16>();
    }

    #[test]
    fn build_walk_finds_damage() {
        shared::build_walk_finds_damage::<BinaryFuse8>();
        shared::build_walk_finds_damage::<BinaryFuse16>();
    }

    #[test]
    fn validation_walks_exactly_the_input() {
        shared::validation_walks_exactly_the_input::<BinaryFuse8>();
        shared::validation_walks_exactly_the_input::<BinaryFuse16>();
    }

    #[test]
    fn round_trips() {
        shared::round_trips::<BinaryFuse8>();
        shared::round_trips::<BinaryFuse16>();
    }

    #[test]
    fn corruption_sweep() {
        shared::corruption_sweep::<BinaryFuse8>();
        shared::corruption_sweep::<BinaryFuse16>();
    }

    #[test]
    fn kinds_do_not_cross_decode() {
        let enc = BinaryFuse8::build(&[1, 2, 3]).unwrap().encode();
        assert!(BinaryFuse16::decode(&enc).unwrap_err().is_corruption());
        assert!(crate::filter::Xor8::decode(&enc).unwrap_err().is_corruption());
    }

    #[test]
    fn geometry_follows_the_paper() {
        let f = BinaryFuse8::build(&shared::random_hashes(3, 1_000_000)).unwrap();
        // ln 10^6 / ln 3.33 + 2.25 = 13.73 -> 8192-cell segments; factor
        // 1.125 -> 1_125_000 cells wanted -> 138 segments, 136 + 2.
        assert_eq!(f.segment_length(), 8192);
        assert_eq!(f.segment_count(), 136);
        assert_eq!(f.cells(), 138 * 8192);
        assert_eq!(f.fingerprint_bits(), 8);
        // n <= 1: one 4-cell segment plus two.
        for n in [0, 1] {
            let f = BinaryFuse8::build(&shared::random_hashes(5, n)).unwrap();
            assert_eq!((f.segment_length(), f.segment_count(), f.cells()), (4, 1, 12));
        }
        // Segments never exceed 2^18 cells.
        assert_eq!(FuseLayout::for_keys(peel::MAX_KEYS).unwrap().segment_length, 1 << 18);
        assert_eq!(
            FuseLayout::for_keys(peel::MAX_KEYS + 1).unwrap_err(),
            BuildError::TooManyKeys { keys: peel::MAX_KEYS + 1, max: peel::MAX_KEYS }
        );
    }

    #[test]
    fn golden_bytes() {
        let f = BinaryFuse8::build(&[1, 2, 3]).unwrap();
        let enc = f.encode();
        // n = 3: 8-cell segments, 12 cells wanted -> 1 + 2 segments.
        assert_eq!(enc.len(), 19 + 24 + 4);
        assert_eq!(&enc[..2], &[0x21, 1]);
        assert_eq!(&enc[2..10], &f.seed().to_le_bytes());
        assert_eq!(&enc[10..19], &[3, 0, 0, 0, 3, 1, 0, 0, 0]);
        assert_eq!(hex(&enc), GOLDEN_FUSE8);
        assert_eq!(BinaryFuse16::build(&[1, 2, 3]).unwrap().encode()[..2], [0x22, 1]);
    }

    const GOLDEN_FUSE8: &str =
        "21015db7a41907cfd48503000000030100000000000000000000000000000000000000000081003f001a0049cd931e";
}
