//! A range filter over 64-bit key images: "may any image in `[lo, hi]` be
//! in the set?", answered without reading the set.
//!
//! **Buckets in a point filter.** The images are cut into buckets of `2^s`
//! consecutive values (bucket `b` holds the images `x` with `x >> s == b`),
//! and a point filter holds the hash of every non-empty bucket. A query
//! probes each bucket `[lo, hi]` touches; all absent means the range is
//! empty. This is the "bucketing" of Grafite's paper (Costa, Ferragina,
//! Vinciguerra, SIGMOD 2024, §5) and a one-level Rosetta (Luo et al.,
//! SIGMOD 2020): the cheapest construction that answers short ranges with a
//! point filter's rate.
//!
//! **The false-positive rate.** For an empty query touching `t` buckets,
//! with the point filter's rate `ε`:
//!
//! ```text
//! P(maybe) ≤ P(a touched bucket holds a key) + t·ε
//! ```
//!
//! The first term is the price of buckets: an empty range that shares a
//! bucket with a key is answered "maybe". For `n` keys spread over a span
//! `S` (mean gap `g = S/n`), a random range of length `ℓ` meets a non-empty
//! bucket with probability about `(2^s + ℓ)/g`, and touches `t ≤ 2 + ℓ/2^s`
//! buckets. [`RangeLayout::for_images`] therefore picks, for sparse sets,
//! the widest bucket below `g / 2^SPARSITY_BITS`: the bucket term stays
//! under `2^-10 ≈ 0.1%`, the level of `2ε` for a 12-bit-per-key Ribbon
//! filter, and ranges up to about `g/16` need at most [`MAX_RANGE_PROBES`]
//! probes. Wider ranges answer "maybe" (they are rarely empty: a random
//! range of `g/16` is empty with probability `e^(-1/16) ≈ 0.94`, and one
//! of `g` with `0.37`). `g` is the *median* gap between neighbouring
//! images, not the mean: keys in clusters (ids under a few tenants' tags,
//! say) have a mean gap set by the spaces between clusters, and buckets
//! that wide would hold whole clusters; the median is the spacing most
//! keys have, and the bucket term over the whole span only shrinks (on
//! uniform keys the median gap is `ln 2` of the mean, one step of `s` at
//! most). For dense sets (`g < 2^20`) that would leave
//! buckets so narrow that a range of a few hundred values outruns the
//! probes, so the bucket is at least `2^(⌊log2 g⌋/2 - 1)`, the geometric
//! middle of a single value and the gap: at `g = 1,000` buckets of 8, a
//! bucket term of 1/128 and 33 probes for `ℓ = 256`.
//!
//! **Against Grafite's bound.** Grafite proper (an Elias-Fano set of
//! locality-preserving hashes) guarantees `ℓ / 2^(B-2)` at `B` bits per
//! key for *any* query distribution: 1.6% for `ℓ = 16` and 25% for
//! `ℓ = 256` at 12 bits/key. Buckets do far better on ranges placed
//! independently of the keys (about `2^-10 + 2ε` for both), and worse on
//! ranges that start within a bucket of a key, which always answer "maybe".
//! docs/measurements.md has both distributions, measured.
//!
//! The bucket width adapts per set, from its own density: dense ids get
//! narrow buckets (down to single values, where a query of `ℓ` values costs
//! `ℓ` probes and `ℓ·ε`), sparse keys wide ones.

use super::{AnyFilter, BuildError, Filter, FilterKind, hash_key};

/// Most buckets a query probes before it answers "maybe" unprobed: the
/// probes cost about what opening a table would.
pub const MAX_RANGE_PROBES: u64 = 64;

/// A bucket is at most `2^-SPARSITY_BITS` of the median gap between images.
pub const SPARSITY_BITS: u32 = 10;

/// Xored into the seed of bucket hashes, so a bucket id and a user key with
/// the same bytes are different entries.
const RANGE_SEED: u64 = 0x7261_6e67_652d_6631;

/// Where the buckets of one set lie: their width (`2^shift` images) and the
/// smallest and largest image of the set, outside which every range is
/// empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RangeLayout {
    /// Bucket width is `2^shift` images (0..=63).
    pub shift: u8,
    /// The smallest image in the set.
    pub min: u64,
    /// The largest image in the set.
    pub max: u64,
}

/// What a query needs from the point filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RangeProbe {
    /// The range misses `[min, max]` (or is reversed): empty, no probe.
    Empty,
    /// Probe these bucket ids; empty if every one is absent.
    Buckets(std::ops::RangeInclusive<u64>),
    /// More than [`MAX_RANGE_PROBES`] buckets: "maybe", unprobed.
    TooWide,
}

impl RangeLayout {
    /// The layout of the empty set: every range is empty.
    pub const EMPTY: RangeLayout = RangeLayout { shift: 0, min: 1, max: 0 };

    /// The layout for `sorted` (ascending images, duplicates allowed);
    /// `None` for an empty set. O(n) time and a word of memory per image.
    #[must_use]
    pub fn for_images(sorted: &[u64]) -> Option<RangeLayout> {
        let (&min, &max) = (sorted.first()?, sorted.last()?);
        let mut gaps: Vec<u64> = sorted.windows(2).map(|w| w[1] - w[0]).filter(|&d| d > 0).collect();
        let middle = gaps.len() / 2;
        let gap = if gaps.is_empty() { 0 } else { *gaps.select_nth_unstable(middle).1 };
        let shift = match gap.checked_ilog2() {
            None => 0,
            Some(lg) => lg.saturating_sub(SPARSITY_BITS).max((lg / 2).saturating_sub(1)),
        };
        Some(RangeLayout { shift: u8::try_from(shift).unwrap_or(63), min, max })
    }

    /// The bucket of `image`.
    #[must_use]
    #[inline]
    pub fn bucket(&self, image: u64) -> u64 {
        image >> self.shift
    }

    /// Which buckets a query of the images `[lo, hi]` must probe.
    #[must_use]
    pub fn probe(&self, lo: u64, hi: u64) -> RangeProbe {
        let (lo, hi) = (lo.max(self.min), hi.min(self.max));
        if lo > hi {
            return RangeProbe::Empty;
        }
        let (first, last) = (self.bucket(lo), self.bucket(hi));
        if last - first >= MAX_RANGE_PROBES {
            return RangeProbe::TooWide;
        }
        RangeProbe::Buckets(first..=last)
    }

    /// Whether `[lo, hi]` may hold an image, asking `contains` about bucket
    /// hashes (under `seed`, [`bucket_hash`]).
    pub fn may_intersect(&self, seed: u64, lo: u64, hi: u64, contains: impl FnMut(u64) -> bool) -> bool {
        self.answer(seed, lo, hi, contains).unwrap_or(true)
    }

    /// [`RangeLayout::may_intersect`], or `None` for a range too wide to
    /// probe ([`RangeProbe::TooWide`]), which a caller may count apart.
    pub fn answer(&self, seed: u64, lo: u64, hi: u64, mut contains: impl FnMut(u64) -> bool) -> Option<bool> {
        match self.probe(lo, hi) {
            RangeProbe::Empty => Some(false),
            RangeProbe::TooWide => None,
            RangeProbe::Buckets(mut ids) => Some(ids.any(|b| contains(bucket_hash(seed, b)))),
        }
    }

    /// One hash per distinct bucket of `sorted`, for building the point
    /// filter.
    #[must_use]
    pub fn bucket_hashes(&self, seed: u64, sorted: &[u64]) -> Vec<u64> {
        let mut buckets: Vec<u64> = sorted.iter().map(|&x| self.bucket(x)).collect();
        buckets.dedup();
        buckets.into_iter().map(|b| bucket_hash(seed, b)).collect()
    }
}

/// The point-filter entry of bucket `b` under `seed`.
#[must_use]
#[inline]
pub fn bucket_hash(seed: u64, bucket: u64) -> u64 {
    hash_key(seed ^ RANGE_SEED, &bucket.to_le_bytes())
}

/// A range filter held in memory: a [`RangeLayout`] and a point filter of
/// any kind over its buckets.
///
/// ```
/// use siftdb::filter::{FilterKind, RangeFilter};
/// let ids: Vec<u64> = (0..1000u64).map(|i| i * 1_000_003).collect();
/// let f = RangeFilter::build(FilterKind::Ribbon { bits_per_key: 12.0 }, 7, &ids).unwrap();
/// assert!(f.may_intersect(2_000_000, 2_000_006)); // holds 2,000,006
/// assert!(f.may_intersect(0, 0)); // 0 is present
/// assert!(!f.may_intersect(2_000_000_000, u64::MAX)); // past the largest
/// ```
#[derive(Debug)]
pub struct RangeFilter {
    layout: RangeLayout,
    seed: u64,
    points: AnyFilter,
}

impl RangeFilter {
    /// Builds a filter of `kind` over `images` (any order), checked against
    /// every image.
    ///
    /// # Errors
    /// [`BuildError`] if the kind cannot build (none, or a static kind that
    /// fails) or the built filter misses an image.
    pub fn build(kind: FilterKind, seed: u64, images: &[u64]) -> Result<RangeFilter, BuildError> {
        let mut sorted = images.to_vec();
        sorted.sort_unstable();
        let layout = RangeLayout::for_images(&sorted).unwrap_or(RangeLayout::EMPTY);
        let points = kind.build(&layout.bucket_hashes(seed, &sorted))?;
        let f = RangeFilter { layout, seed, points };
        match sorted.iter().find(|&&x| !f.may_intersect(x, x)) {
            Some(&x) => Err(BuildError::ValidationFailed { hash: bucket_hash(seed, layout.bucket(x)) }),
            None => Ok(f),
        }
    }

    /// Whether an image in `[lo, hi]` may be in the set. `false` is
    /// definite.
    #[must_use]
    pub fn may_intersect(&self, lo: u64, hi: u64) -> bool {
        self.layout.may_intersect(self.seed, lo, hi, |h| self.points.contains(h))
    }

    /// The buckets and bounds.
    #[must_use]
    pub fn layout(&self) -> RangeLayout {
        self.layout
    }

    /// The point filter over the buckets.
    #[must_use]
    pub fn points(&self) -> &AnyFilter {
        &self.points
    }
}

#[cfg(test)]
#[path = "range_tests.rs"]
mod tests;
