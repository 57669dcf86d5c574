//! Xor filters (Graf & Lemire 2020): static, 1.23 fingerprints per key.
//!
//! The cells form three equal blocks; a key owns one cell in each, and is
//! reported present when the xor of its three cells equals its fingerprint.
//! All of it comes from one remix of the input hash `h = mix(hash, seed)`:
//! the fingerprint is `h ^ (h >> 32)` truncated, the cell in block `i` is the
//! low 32 bits of `h.rotate_left(21·i)` scaled into the block by
//! multiply-shift (`(x · block_length) >> 32`, never `%`).
//!
//! # Encoding
//!
//! ```text
//! offset  size          field
//! 0       1             kind: 0x11 = Xor8, 0x12 = Xor16
//! 1       1             version: 1
//! 2       8             seed (u64 LE)
//! 10      4             keys: distinct keys built from (u32 LE)
//! 14      4             block_length (u32 LE), ≥ 1, 3·block_length < 2^32
//! 18      3·L·B         fingerprints, L = block_length, B = 1 or 2 bytes (LE)
//! end−4   4             crc32 of every byte before it (codec::seal)
//! ```
//!
//! Decoding checks the crc, the kind and version, that the fingerprint
//! section is exactly `3·block_length·B` bytes and that `keys` does not
//! exceed the cells; with `block_length ≥ 1` every index a query computes is
//! then in bounds, so a decoded filter cannot panic.

use super::BuildError;
use super::fingerprint::Fingerprint;
use super::kind::KindSpec;
use super::peel::{self, Layout};
use super::three_wise::{GEOMETRY_OFFSET, Geometry, ThreeWise, kind_spec};
use crate::codec::Reader;
use crate::{Error, Result};

/// The xor filter's layout: three equal blocks of cells, a key owning one
/// in each. Only the filter builds it. Invariant (relied on by unsafe code
/// through `Layout`): `1 <= block_length` and `3·block_length < 2^32`;
/// build it with `XorLayout::new` only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XorLayout {
    block_length: u32,
}

impl XorLayout {
    fn new(block_length: u32) -> Option<Self> {
        (block_length >= 1 && block_length.checked_mul(3).is_some()).then_some(XorLayout { block_length })
    }

    /// 1.23·n + 32 cells, rounded down to a multiple of 3: the smallest
    /// array for which a random 3-hypergraph peels with high probability
    /// (threshold ≈ 1.222), plus slack that matters for small n.
    fn for_keys(n: usize) -> std::result::Result<Self, BuildError> {
        if n > peel::MAX_KEYS {
            return Err(BuildError::TooManyKeys { keys: n, max: peel::MAX_KEYS });
        }
        let cells = 32 + (n as u64 * 123).div_ceil(100);
        u32::try_from(cells / 3)
            .ok()
            .and_then(XorLayout::new)
            .ok_or(BuildError::TooManyKeys { keys: n, max: peel::MAX_KEYS })
    }
}

// SAFETY: with block_length ≥ 1 (the `XorLayout` invariant), `reduce` maps into
// 0..block_length (a 32-bit value times L, shifted right 32) and block `i`
// adds i·block_length, so every index is below 3·block_length = cells_len.
unsafe impl Layout for XorLayout {
    const LOCAL: bool = false;

    #[inline]
    #[expect(clippy::cast_possible_truncation, reason = "indices are below 3·block_length < 2^32")]
    fn cells(&self, mixed: u64) -> [usize; 3] {
        let len = u64::from(self.block_length);
        let reduce = |x: u64| ((x & 0xffff_ffff) * len) >> 32;
        let h0 = reduce(mixed);
        let h1 = reduce(mixed.rotate_left(21)) + len;
        let h2 = reduce(mixed.rotate_left(42)) + 2 * len;
        [h0 as usize, h1 as usize, h2 as usize]
    }

    fn cells_len(&self) -> usize {
        3 * self.block_length as usize
    }

    fn sort_bits(&self) -> u32 {
        0
    }
}

/// An xor filter with fingerprints of type `F` (`u8` or `u16`): the
/// 3-wise filter on three equal blocks.
///
/// ```
/// use siftdb::filter::{hash_key, Filter, FilterCodec, Xor8};
/// let hashes: Vec<u64> = (0..1000u32).map(|i| hash_key(0, &i.to_le_bytes())).collect();
/// let f = Xor8::build(&hashes).unwrap();
/// assert!(hashes.iter().all(|&h| f.contains(h)));
/// let again = Xor8::decode(&f.encode()).unwrap();
/// assert!(hashes.iter().all(|&h| again.contains(h)));
/// ```
pub type Xor<F> = ThreeWise<F, XorLayout>;

/// Xor filter with 8-bit fingerprints: ε = 2^−8, 9.84 bits/key.
pub type Xor8 = Xor<u8>;
/// Xor filter with 16-bit fingerprints: ε = 2^−16, 19.7 bits/key.
pub type Xor16 = Xor<u16>;

impl<F: Fingerprint> Xor<F> {
    /// Cells per block (a third of the array).
    #[must_use]
    pub fn block_length(&self) -> usize {
        self.layout.block_length as usize
    }
}

impl Geometry for XorLayout {
    const KIND_BASE: u8 = 0x10;
    const NAME: &'static str = "xor";
    const CELLS_PER_KEY: f64 = 1.23;
    const LEN: usize = 4;

    fn for_keys(n: usize) -> std::result::Result<Self, BuildError> {
        XorLayout::for_keys(n)
    }

    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.block_length.to_le_bytes());
    }

    fn read(r: &mut Reader<'_>) -> Result<Self> {
        let block_length = r.u32()?;
        XorLayout::new(block_length).ok_or_else(|| {
            Error::corruption(GEOMETRY_OFFSET, format!("impossible block length {block_length}"))
        })
    }

    fn parameters(&self) -> Vec<(&'static str, u64)> {
        vec![("block_length", u64::from(self.block_length))]
    }

    #[cfg(test)]
    fn cramped() -> Self {
        XorLayout { block_length: 1 }
    }
}

/// The table filter kind `xor8`: filter-block tag 3.
pub(crate) static XOR8: KindSpec = kind_spec::<u8, XorLayout>(3, "xor8", &[]);

/// The table filter kind `xor16`: filter-block tag 4.
pub(crate) static XOR16: KindSpec = kind_spec::<u16, XorLayout>(4, "xor16", &[]);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::static_tests::{self as shared, hex, unhex};
    use crate::filter::{Filter, FilterCodec};

    #[test]
    fn no_false_negatives_at_every_small_size() {
        shared::no_false_negatives_at_every_small_size::<Xor8>();
        shared::no_false_negatives_at_every_small_size::<Xor16>();
    }

    #[test]
    fn arbitrary_inputs() {
        shared::arbitrary_inputs::<Xor8>();
        shared::arbitrary_inputs::<Xor16>();
    }

    #[test]
    fn large_filters_live_on_huge_pages() {
        shared::large_filters_live_on_huge_pages::<Xor8>();
        shared::large_filters_live_on_huge_pages::<Xor16>();
    }

    #[test]
    fn duplicates_are_removed() {
        shared::duplicates_are_removed::<Xor8>();
        shared::duplicates_are_removed::<Xor16>();
    }

    #[test]
    fn xor8_million_keys_space_and_fpr() {
        shared::million_keys::<Xor8>(9.9, 1.1, 0.9);
    }

    #[test]
    fn xor16_million_keys_space_and_fpr() {
        shared::million_keys::<Xor16>(19.8, 2.0, 0.0);
    }

    #[test]
    fn peeling_failure_is_reported() {
        shared::peeling_failure_is_reported::<Xor8>();
        shared::peeling_failure_is_reported::<Xor16>();
    }

    #[test]
    fn validation_failure_is_reported() {
        shared::validation_failure_is_reported::<Xor8>();
        shared::validation_failure_is_reported::<Xor16>();
    }

    #[test]
    fn build_walk_finds_damage() {
        shared::build_walk_finds_damage::<Xor8>();
        shared::build_walk_finds_damage::<Xor16>();
    }

    #[test]
    fn validation_walks_exactly_the_input() {
        shared::validation_walks_exactly_the_input::<Xor8>();
        shared::validation_walks_exactly_the_input::<Xor16>();
    }

    #[test]
    fn round_trips() {
        shared::round_trips::<Xor8>();
        shared::round_trips::<Xor16>();
    }

    #[test]
    fn corruption_sweep() {
        shared::corruption_sweep::<Xor8>();
        shared::corruption_sweep::<Xor16>();
    }

    #[test]
    fn kinds_do_not_cross_decode() {
        let enc = Xor8::build(&[1, 2, 3]).unwrap().encode();
        assert!(Xor16::decode(&enc).unwrap_err().is_corruption());
        assert!(crate::filter::BinaryFuse8::decode(&enc).unwrap_err().is_corruption());
    }

    #[test]
    fn geometry_follows_the_paper() {
        let f = Xor8::build(&shared::random_hashes(3, 1_000_000)).unwrap();
        // 32 + 1.23·10^6 = 1_230_032 cells, 410_010 per block.
        assert_eq!(f.block_length(), 410_010);
        assert_eq!(f.cells(), 1_230_030);
        assert_eq!(f.fingerprint_bits(), 8);
        assert_eq!(Xor8::build(&[]).unwrap().cells(), 30);
        assert!(XorLayout::for_keys(peel::MAX_KEYS).is_ok());
        assert_eq!(
            XorLayout::for_keys(peel::MAX_KEYS + 1).unwrap_err(),
            BuildError::TooManyKeys { keys: peel::MAX_KEYS + 1, max: peel::MAX_KEYS }
        );
    }

    #[test]
    fn golden_bytes() {
        let f = Xor8::build(&[1, 2, 3]).unwrap();
        let enc = f.encode();
        assert_eq!(enc.len(), 18 + 36 + 4);
        assert_eq!(&enc[..2], &[0x11, 1]);
        assert_eq!(&enc[2..10], &f.seed().to_le_bytes());
        assert_eq!(&enc[10..18], &[3, 0, 0, 0, 12, 0, 0, 0]);
        assert_eq!(hex(&enc), GOLDEN_XOR8);
        assert_eq!(Xor16::build(&[1, 2, 3]).unwrap().encode()[..2], [0x12, 1]);
        // The same keys peeled in the older order (a stack, before the
        // queue of `peel/walk.rs`): other cell values, the same format,
        // and still read.
        let older = unhex(GOLDEN_XOR8_STACK_PEELED);
        assert_ne!(older, enc);
        let f = Xor8::decode(&older).unwrap();
        assert!([1, 2, 3].iter().all(|&h| f.contains(h)));
    }

    const GOLDEN_XOR8: &str = "11015db7a41907cfd485030000000c00000000001a8100003f0000000000000000000000000000000000000000000000000000000000e86d31db";
    const GOLDEN_XOR8_STACK_PEELED: &str = "11015db7a41907cfd485030000000c000000000000000000000000000000000000000025000000000000000000001a81000000000000c40f8bc1";
}
