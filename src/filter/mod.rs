//! Membership filters over 64-bit key hashes.
//!
//! This module knows nothing of files or of the database: every structure
//! takes `u64` hashes produced by [`hash_key`], and the stored ones encode to
//! and decode from plain byte slices. It is usable on its own.
//!
//! | structure | kind | space for ε ≈ 0.4% | notes |
//! |---|---|---|---|
//! | [`Bloom`] | dynamic | ~11.5 bits/key | classic, k probes by double hashing |
//! | [`BlockedBloom`] | dynamic | ~12 bits/key | one cache line per key |
//! | [`CountingBloom`] | dynamic, deletable | 4× Bloom | 4-bit saturating counters |
//! | [`CuckooFilter`] | dynamic, deletable | ~12.6 bits/key at 12-bit fp (0.19%) | partial-key cuckoo hashing |
//! | [`Xor8`] / [`Xor16`] | static | 9.84 / 19.7 bits/key | 3-hypergraph peeling |
//! | [`BinaryFuse8`] / [`BinaryFuse16`] | static | ~9.0 / 18 bits/key | segmented 3-wise peeling |
//! | [`Ribbon`] | static, any rate | ~8.2 bits/key | banded linear system over GF(2), width 128, bumping |
//!
//! ```
//! use siftdb::filter::{hash_key, BlockedBloom, Filter};
//! let mut f = BlockedBloom::new(1000, 10.0);
//! f.insert(hash_key(7, b"apple"));
//! assert!(f.contains(hash_key(7, b"apple")));
//! ```

mod binary_fuse;
mod blocked_bloom;
mod bloom;
mod build_error;
mod codec;
#[cfg(test)]
mod codec_tests;
mod counting_bloom;
mod cuckoo;
mod fingerprint;
mod hash;
mod kind;
mod peel;
pub(crate) mod prefetch;
mod range;
mod ribbon;
#[cfg(test)]
mod static_tests;
mod three_wise;
mod xor;
mod zeroed_buf;

pub use binary_fuse::{BinaryFuse, BinaryFuse8, BinaryFuse16, FuseLayout};
pub use blocked_bloom::BlockedBloom;
pub(crate) use bloom::FRAME_BYTES as BLOOM_FRAME_BYTES;
pub use bloom::{Bloom, BloomParams};
pub use build_error::{BuildError, Full};
pub use codec::{AnyFilter, FilterCodec};
pub use counting_bloom::CountingBloom;
pub use cuckoo::CuckooFilter;
pub use fingerprint::Fingerprint;
#[cfg(test)]
pub(crate) use hash::HASHES;
pub use hash::{KeyHash, hash_key};
pub use kind::{EXAMPLE_BITS_PER_KEY, FilterKind, MAX_BITS_PER_KEY, MIN_BITS_PER_KEY, check_bits_per_key};
pub use range::{MAX_RANGE_PROBES, RangeFilter, RangeLayout, RangeProbe, SPARSITY_BITS, bucket_hash};
pub use ribbon::{Ribbon, RibbonLayout};
pub use three_wise::ThreeWise;
pub use xor::{Xor, Xor8, Xor16, XorLayout};

/// The query side shared by every filter.
///
/// A filter never answers `false` for a hash that was inserted (or that it
/// was built from); it may answer `true` for a hash that was not, with a
/// probability reported by [`Filter::theoretical_fpr`].
pub trait Filter {
    /// Whether `hash` may be in the set. `false` is definite.
    fn contains(&self, hash: u64) -> bool;
    /// Heap and inline bytes this filter occupies, all metadata included.
    fn size_bytes(&self) -> usize;
    /// The false-positive rate theory predicts for this filter's parameters
    /// and current contents.
    fn theoretical_fpr(&self) -> f64;
    /// [`Filter::contains`] for each of `hashes`, in order, into `out`
    /// (cleared first), with the same answers.
    ///
    /// The default is a plain loop over `contains`: a filter may override
    /// it where handling keys together pays. [`Ribbon`] does: it checks the
    /// CPU's features once a batch and runs a loop built for them, instead
    /// of a call a key (docs/measurements.md, "Ribbon: AVX2 where the CPU
    /// has it"). A two-pass version for [`BlockedBloom`] was measured and
    /// lost to its one-at-a-time `contains` (docs/measurements.md, "Probing
    /// in pairs").
    ///
    /// ```
    /// use siftdb::filter::{BlockedBloom, Filter};
    /// let mut f = BlockedBloom::new(100, 10.0);
    /// f.insert(1);
    /// let mut out = Vec::new();
    /// f.contains_batch(&[1, 2, 1], &mut out);
    /// assert_eq!(out.len(), 3);
    /// assert!(out[0] && out[2]);
    /// ```
    fn contains_batch(&self, hashes: &[u64], out: &mut Vec<bool>) {
        out.clear();
        out.extend(hashes.iter().map(|&h| self.contains(h)));
    }

    /// Starts loading the memory `contains(hash)` will read, and returns
    /// without waiting for it. A lookup about to probe several filters (one
    /// per level of a tree) calls it on each first, so that their cache
    /// misses overlap instead of queueing. A hint only: no answer depends
    /// on it. Blocked Bloom fetches its one block, xor and binary fuse
    /// their three cells; the default, which the rest keep, does nothing.
    #[inline]
    fn prefetch(&self, hash: u64) {
        let _ = hash;
    }
}
