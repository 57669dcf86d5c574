//! The bytes side every stored filter shares, and the one dynamic type a
//! table's filter decodes into.
//!
//! Each filter draws its own encoding in its module; what they have in
//! common is the contract: `decode(encode(f))` answers exactly as `f` does,
//! and damaged bytes decode to `Corruption` or to a filter that still holds
//! every key it was built from, never a panic (`filter/codec_tests.rs`
//! sweeps every kind through that). [`AnyFilter`] lets the table layer hold
//! a filter without naming its type, so a new kind adds no match arm there.

use std::fmt;

use bytes::Bytes;

use super::{Filter, FilterKind};
use crate::Result;

/// Encoding, decoding and sizing, shared by every filter that can be stored.
///
/// ```
/// use siftdb::filter::{Bloom, Filter, FilterCodec};
/// let mut f = Bloom::new(100, 10.0);
/// f.insert(42);
/// let bytes = f.encode();
/// assert_eq!(Some(bytes.len()), Bloom::encoded_len(100, 10.0));
/// assert!(Bloom::decode(&bytes).unwrap().contains(42));
/// ```
pub trait FilterCodec: Filter + Sized {
    /// Serialises the filter, checksum included.
    fn encode(&self) -> Vec<u8>;

    /// Parses [`FilterCodec::encode`]'s bytes.
    ///
    /// # Errors
    /// `Corruption` (with the offset in `bytes`) for bytes that are not a
    /// valid encoding of this type.
    fn decode(bytes: &[u8]) -> Result<Self>;

    /// The length of `encode()` for a filter built from `keys` distinct keys
    /// at `bits_per_key` (ignored by the fixed-rate kinds: xor and binary
    /// fuse), without building it. `None` when this type cannot be sized
    /// that way: past a static filter's key limit, or for a cuckoo filter,
    /// which is sized by capacity and fingerprint width.
    fn encoded_len(keys: usize, bits_per_key: f64) -> Option<usize>;

    /// The filter's own parameters by name (probes, bits, cells, seed...),
    /// for inspection tools: `siftdb sst info` shows them as they are.
    fn parameters(&self) -> Vec<(&'static str, u64)>;

    /// Where the array a table reader may view in place (fingerprints,
    /// words, blocks) starts in [`FilterCodec::encode`]'s bytes, so that a
    /// table writer can put it on a cache-line boundary of the file; `None`
    /// for a filter that is only ever copied.
    fn array_offset(&self) -> Option<usize> {
        None
    }

    /// [`FilterCodec::decode`] of bytes held in `shared` (a table's
    /// mapping), the array viewed there in place where it is aligned
    /// rather than copied.
    ///
    /// # Errors
    /// As [`FilterCodec::decode`].
    fn decode_shared(shared: &Bytes) -> Result<Self> {
        Self::decode(shared)
    }

    /// The bytes the filter's array views in place, if it was decoded by
    /// [`FilterCodec::decode_shared`] without a copy.
    fn in_place(&self) -> Option<&[u8]> {
        None
    }
}

/// The object-safe part of [`FilterCodec`], for [`AnyFilter`].
pub(crate) trait StoredFilter: Filter + Send + Sync + fmt::Debug {
    fn encode(&self) -> Vec<u8>;
    fn parameters(&self) -> Vec<(&'static str, u64)>;
    fn array_offset(&self) -> Option<usize>;
    fn in_place(&self) -> Option<&[u8]>;
}

impl<T: FilterCodec + Send + Sync + fmt::Debug> StoredFilter for T {
    fn encode(&self) -> Vec<u8> {
        FilterCodec::encode(self)
    }

    fn parameters(&self) -> Vec<(&'static str, u64)> {
        FilterCodec::parameters(self)
    }

    fn array_offset(&self) -> Option<usize> {
        FilterCodec::array_offset(self)
    }

    fn in_place(&self) -> Option<&[u8]> {
        FilterCodec::in_place(self)
    }
}

/// A filter of any stored kind, with the kind it is: what
/// [`FilterKind::build`] and [`FilterKind::decode`] return.
///
/// ```
/// use siftdb::filter::{Filter, FilterKind};
/// let hashes: Vec<u64> = (1..=500u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
/// for &kind in FilterKind::ALL {
///     let f = kind.build(&hashes).unwrap();
///     let g = kind.decode(&f.encode()).unwrap();
///     assert!(hashes.iter().all(|&h| g.contains(h)), "{kind}");
/// }
/// ```
pub struct AnyFilter {
    kind: FilterKind,
    inner: Box<dyn StoredFilter>,
}

impl AnyFilter {
    pub(crate) fn from_boxed(kind: FilterKind, inner: Box<dyn StoredFilter>) -> Self {
        AnyFilter { kind, inner }
    }

    /// The kind this filter is.
    #[must_use]
    pub fn kind(&self) -> FilterKind {
        self.kind
    }

    /// Serialises the filter as its kind's [`FilterCodec::encode`] does.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        self.inner.encode()
    }

    /// The filter's own parameters ([`FilterCodec::parameters`]).
    #[must_use]
    pub fn parameters(&self) -> Vec<(&'static str, u64)> {
        self.inner.parameters()
    }

    /// [`FilterCodec::array_offset`] of the filter's kind.
    #[must_use]
    pub fn array_offset(&self) -> Option<usize> {
        self.inner.array_offset()
    }

    /// [`FilterCodec::in_place`] of the filter.
    #[must_use]
    pub fn in_place(&self) -> Option<&[u8]> {
        self.inner.in_place()
    }
}

impl Filter for AnyFilter {
    #[inline]
    fn contains(&self, hash: u64) -> bool {
        self.inner.contains(hash)
    }

    /// The kind's own batch query (one feature check a batch for Ribbon),
    /// not the default loop over `contains`.
    fn contains_batch(&self, hashes: &[u64], out: &mut Vec<bool>) {
        self.inner.contains_batch(hashes, out);
    }

    #[inline]
    fn prefetch(&self, hash: u64) {
        self.inner.prefetch(hash);
    }

    fn size_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.inner.size_bytes()
    }

    fn theoretical_fpr(&self) -> f64 {
        self.inner.theoretical_fpr()
    }
}

impl fmt::Debug for AnyFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnyFilter").field("kind", &self.kind).field("filter", &self.inner).finish()
    }
}
