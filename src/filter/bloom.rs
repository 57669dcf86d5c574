//! Classic Bloom filter: one bit array, k probes per key anywhere in it.
//!
//! All k probe positions come from the one 64-bit key hash by double
//! hashing (Kirsch–Mitzenmacher): `x_0 = h`, `x_{i+1} = x_i + rotl(h, 32)`,
//! each mapped onto the `m` bits by multiply-shift (`(x · m) >> 64`), which
//! is unbiased enough for any `m` and costs one multiply instead of a `%`.
//! The rotation makes the stride's high bits (which decide the position)
//! come from the hash's low bits, independent of the start's high bits.
//!
//! A query for an absent key touches up to k random cache lines; see
//! [`super::BlockedBloom`] for the one-cache-line layout.
//!
//! # Encoding
//!
//! Shared by the three Bloom variants (the kind byte tells them apart); all
//! integers little-endian, the whole buffer sealed by a trailing crc32.
//!
//! ```text
//! offset  size  field
//! 0       4     magic  b"SFBL"
//! 4       1     version = 1
//! 5       1     kind: 1 = Bloom, 2 = BlockedBloom, 3 = CountingBloom
//! 6       1     k, probes per key, 1..=30
//! 7       1     reserved, 0
//! 8       8     size: bits (Bloom), 64-byte blocks (BlockedBloom), counters (CountingBloom)
//! 16      8     keys inserted (net of removals for CountingBloom)
//! 24      L     payload: Bloom ceil(bits/64) u64 words; BlockedBloom blocks × 8 u64 words;
//!               CountingBloom ceil(counters/2) bytes, counter 2j in the low nibble of byte j
//! 24+L    4     crc32 of bytes 0..24+L
//! ```
//!
//! Unused bits past `size` in the last word (or nibble) must be zero.

use super::kind::{KindSpec, check_bits_per_key, decoder};
use super::zeroed_buf::{Plain, ZeroedBuf};
use super::{Filter, FilterCodec};
use crate::codec::{Reader, seal, unseal};
use crate::{Error, Result};
use bytes::Bytes;

/// Largest probe count any Bloom variant accepts.
pub(super) const MAX_PROBES: u32 = 30;
const MAGIC: &[u8; 4] = b"SFBL";
const VERSION: u8 = 1;
/// Bytes before the payload.
pub(super) const HEADER_LEN: usize = 24;
/// Bytes every Bloom-family encoding adds around its payload: the header
/// and the trailing crc.
pub(crate) const FRAME_BYTES: usize = HEADER_LEN + 4;

/// Which Bloom variant an encoding holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Variant {
    Classic = 1,
    Blocked = 2,
    Counting = 3,
}

/// The fixed header every Bloom variant writes.
#[derive(Debug, Clone, Copy)]
pub(super) struct Header {
    pub(super) k: u32,
    pub(super) size: u64,
    pub(super) keys: u64,
}

/// Writes the header; the caller appends the payload and seals.
pub(super) fn put_header(variant: Variant, h: Header, payload_len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + payload_len + 4);
    out.extend_from_slice(MAGIC);
    out.push(VERSION);
    out.push(variant as u8);
    out.push(u8::try_from(h.k).unwrap_or(0));
    out.push(0);
    out.extend_from_slice(&h.size.to_le_bytes());
    out.extend_from_slice(&h.keys.to_le_bytes());
    out
}

/// Checks the crc and the header; returns the header and a reader at the
/// payload. `payload_len` maps the size field to the payload's byte length
/// (`None` if it overflows), which is checked against the buffer before any
/// allocation.
pub(super) fn read_header(
    bytes: &[u8],
    variant: Variant,
    payload_len: impl Fn(u64) -> Option<usize>,
) -> Result<(Header, Reader<'_>)> {
    let body = unseal(bytes)?;
    let mut r = Reader::new(body);
    if r.bytes(4)? != MAGIC {
        return Err(Error::corruption(0, "bad magic for a Bloom filter"));
    }
    let version = r.u8()?;
    if version != VERSION {
        return Err(Error::corruption(4, format!("unknown Bloom filter version {version}")));
    }
    let kind = r.u8()?;
    if kind != variant as u8 {
        return Err(Error::corruption(5, format!("kind {kind}, expected {}", variant as u8)));
    }
    let k = u32::from(r.u8()?);
    if !(1..=MAX_PROBES).contains(&k) {
        return Err(Error::corruption(6, format!("probe count {k} outside 1..={MAX_PROBES}")));
    }
    if r.u8()? != 0 {
        return Err(Error::corruption(7, "reserved byte is not zero"));
    }
    let size = r.u64()?;
    let keys = r.u64()?;
    let Some(len) = payload_len(size).filter(|&len| len == r.remaining()) else {
        return Err(Error::corruption(
            8,
            format!("size {size} does not match the {} payload bytes", r.remaining()),
        ));
    };
    debug_assert_eq!(len, r.remaining());
    Ok((Header { k, size, keys }, r))
}

/// `ceil(n · bits_per_key)`, saturating, 0 for NaN or negative input.
#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss,
    reason = "a float size estimate; `as` saturates and maps NaN to 0, both wanted here"
)]
pub(super) fn scaled_size(n: usize, bits_per_key: f64) -> u64 {
    (n as f64 * bits_per_key).ceil() as u64
}

/// `len` zeros, kept on huge pages when large (`ZeroedBuf::try_kept`), or
/// `InvalidArgument` if the allocator refuses them: a size no machine holds
/// must be an error, not an abort.
pub(super) fn try_zeroed<T: Plain>(len: usize, what: &str) -> Result<ZeroedBuf<T>> {
    ZeroedBuf::try_kept(len).ok_or_else(|| {
        Error::InvalidArgument(format!(
            "{what}: cannot allocate {} bytes",
            (len as u128) * std::mem::size_of::<T>() as u128
        ))
    })
}

/// `e`'s message, prefixed with the structure it is about.
pub(super) fn in_filter(what: &str, e: Error) -> Error {
    match e {
        Error::InvalidArgument(m) => Error::InvalidArgument(format!("{what}: {m}")),
        other => other,
    }
}

/// 64-bit words holding `bits` bits.
fn words_for(bits: u64) -> usize {
    usize::try_from(bits.div_ceil(64)).unwrap_or(usize::MAX)
}

/// `round(bits_per_key · ln 2)` clamped to 1..=30: the classic optimum.
#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "clamped right after; NaN maps to 0 and so to 1"
)]
pub(super) fn classic_probes(bits_per_key: f64) -> u32 {
    ((bits_per_key * std::f64::consts::LN_2).round() as u32).clamp(1, MAX_PROBES)
}

/// (1 − e^(−k·n/m))^k, the classic Bloom false-positive rate.
#[expect(clippy::cast_precision_loss, reason = "sizes far below 2^52")]
pub(super) fn classic_fpr(k: u32, keys: u64, slots: u64) -> f64 {
    if keys == 0 {
        return 0.0;
    }
    let k = f64::from(k);
    (1.0 - (-k * keys as f64 / slots as f64).exp()).powf(k)
}

/// Multiply-shift range reduction: maps a uniform `x` onto `0..n`.
#[inline]
pub(super) fn fastrange64(x: u64, n: u64) -> u64 {
    ((u128::from(x) * u128::from(n)) >> 64) as u64
}

/// The k double-hashing positions of `hash` over `slots`.
#[inline]
pub(super) fn probe_positions(hash: u64, k: u32, slots: u64) -> impl Iterator<Item = u64> {
    let delta = hash.rotate_left(32);
    let mut x = hash;
    (0..k).map(move |_| {
        let pos = fastrange64(x, slots);
        x = x.wrapping_add(delta);
        pos
    })
}

/// m and k derived from n and a target false-positive rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BloomParams {
    /// Bits in the array.
    pub bits: u64,
    /// Probes per key.
    pub k: u32,
}

impl BloomParams {
    /// m/n = −ln ε/(ln 2)², k = round(m/n · ln 2).
    ///
    /// ```
    /// let p = siftdb::filter::BloomParams::for_fpr(1000, 0.01).unwrap();
    /// assert_eq!((p.bits, p.k), (9586, 7)); // 9.585 bits/key
    /// ```
    ///
    /// # Errors
    /// `InvalidArgument` for `n == 0` or ε outside (0, 1) (NaN included).
    pub fn for_fpr(n: usize, fpr: f64) -> Result<Self> {
        if n == 0 {
            return Err(Error::InvalidArgument("a Bloom filter needs at least one expected key".into()));
        }
        if !(fpr > 0.0 && fpr < 1.0) {
            return Err(Error::InvalidArgument(format!("false-positive rate {fpr} is outside (0, 1)")));
        }
        let ln2 = std::f64::consts::LN_2;
        let bits_per_key = -fpr.ln() / (ln2 * ln2);
        Ok(BloomParams { bits: scaled_size(n, bits_per_key).max(64), k: classic_probes(bits_per_key) })
    }
}

/// A classic Bloom filter.
///
/// ```
/// use siftdb::filter::{hash_key, Bloom, Filter, FilterCodec};
/// let mut f = Bloom::new(100, 10.0);
/// f.insert(hash_key(0, b"k"));
/// assert!(f.contains(hash_key(0, b"k")));
/// let g = Bloom::decode(&f.encode()).unwrap();
/// assert!(g.contains(hash_key(0, b"k")));
/// ```
#[derive(Debug, Clone)]
pub struct Bloom {
    words: ZeroedBuf<u64>,
    bits: u64,
    k: u32,
    keys: u64,
}

impl Bloom {
    /// The probe count [`Bloom::new`] uses for `bits_per_key`:
    /// round(bpk · ln 2), clamped to 1..=30.
    #[must_use]
    pub fn probes_for_bits_per_key(bits_per_key: f64) -> u32 {
        classic_probes(bits_per_key)
    }

    /// A filter sized for `expected_keys` at `bits_per_key`: m = ceil(n · bpk)
    /// bits (at least 64), k = round(bpk · ln 2) clamped to 1..=30; the
    /// checked constructor.
    ///
    /// # Errors
    /// `InvalidArgument` for `bits_per_key` outside
    /// [`MIN_BITS_PER_KEY`](super::MIN_BITS_PER_KEY)..=[`MAX_BITS_PER_KEY`](super::MAX_BITS_PER_KEY)
    /// (NaN and infinities included), or a size the allocator refuses.
    pub fn try_new(expected_keys: usize, bits_per_key: f64) -> Result<Self> {
        check_bits_per_key(bits_per_key).map_err(|e| in_filter("Bloom filter", e))?;
        Self::try_with_params(BloomParams {
            bits: scaled_size(expected_keys, bits_per_key),
            k: classic_probes(bits_per_key),
        })
    }

    /// As [`Bloom::try_new`], unchecked: kept for parameters known to be
    /// sane (constants, or ones already checked). Any `bits_per_key` is
    /// taken as given, NaN as zero, and a size past memory aborts the
    /// process on allocation; take [`Bloom::try_new`] for input from users.
    #[must_use]
    pub fn new(expected_keys: usize, bits_per_key: f64) -> Self {
        Self::with_params(BloomParams {
            bits: scaled_size(expected_keys, bits_per_key),
            k: classic_probes(bits_per_key),
        })
    }

    /// A filter with exactly these parameters (bits raised to at least 64,
    /// k clamped to 1..=30), allocating `bits / 8` bytes up front.
    ///
    /// # Errors
    /// `InvalidArgument` if the allocator refuses that size.
    pub fn try_with_params(params: BloomParams) -> Result<Self> {
        let bits = params.bits.max(64);
        let words = try_zeroed(words_for(bits), "Bloom filter")?;
        Ok(Bloom { words, bits, k: params.k.clamp(1, MAX_PROBES), keys: 0 })
    }

    /// As [`Bloom::try_with_params`], unchecked: a size past memory aborts
    /// the process on allocation.
    #[must_use]
    pub fn with_params(params: BloomParams) -> Self {
        let bits = params.bits.max(64);
        Bloom { words: ZeroedBuf::kept(words_for(bits)), bits, k: params.k.clamp(1, MAX_PROBES), keys: 0 }
    }

    /// Adds a hash.
    #[inline]
    pub fn insert(&mut self, hash: u64) {
        for pos in probe_positions(hash, self.k, self.bits) {
            if let Some(w) = usize::try_from(pos >> 6).ok().and_then(|i| self.words.get_mut(i)) {
                *w |= 1 << (pos & 63);
            }
        }
        self.keys = self.keys.saturating_add(1);
    }

    /// Probes per key.
    #[must_use]
    pub fn num_probes(&self) -> u32 {
        self.k
    }

    /// Bits in the array.
    #[must_use]
    pub fn num_bits(&self) -> u64 {
        self.bits
    }

    /// Inserts so far (duplicates counted).
    #[must_use]
    pub fn keys_inserted(&self) -> u64 {
        self.keys
    }

    /// Bits per inserted key (infinite when empty).
    #[must_use]
    #[expect(clippy::cast_precision_loss, reason = "a ratio for display and theory")]
    pub fn bits_per_key(&self) -> f64 {
        self.bits as f64 / self.keys as f64
    }
}

impl Bloom {
    /// [`FilterCodec::decode`], the words viewed in place in `shared`
    /// (holding `bytes`) where they are aligned.
    fn decode_in(bytes: &[u8], shared: Option<&Bytes>) -> Result<Self> {
        let (h, mut r) = read_header(bytes, Variant::Classic, |bits| {
            usize::try_from(bits.div_ceil(64)).ok()?.checked_mul(8)
        })?;
        if h.size < 64 {
            return Err(Error::corruption(8, format!("{} bits is below the 64-bit minimum", h.size)));
        }
        // `read_header` checked that the bytes hold exactly these words.
        let stored = r.bytes(usize::try_from(h.size.div_ceil(64)).unwrap_or(0) * 8)?;
        let words = shared.and_then(|s| ZeroedBuf::view(s, stored)).unwrap_or_else(|| {
            let mut words = ZeroedBuf::kept(stored.len() / 8);
            for (w, b) in words.iter_mut().zip(stored.chunks_exact(8)) {
                *w = u64::from_le_bytes(b.try_into().unwrap_or_default());
            }
            words
        });
        let tail = h.size % 64;
        if tail != 0 && words.last().is_some_and(|&w| w >> tail != 0) {
            return Err(Error::corruption(r.position() as u64 - 8, "bits set past the end of the array"));
        }
        r.finish()?;
        Ok(Bloom { words, bits: h.size, k: h.k, keys: h.keys })
    }
}

impl FilterCodec for Bloom {
    /// Serialises the filter (format in the module doc).
    fn encode(&self) -> Vec<u8> {
        let header = Header { k: self.k, size: self.bits, keys: self.keys };
        let mut out = put_header(Variant::Classic, header, self.words.len() * 8);
        for w in self.words.iter() {
            out.extend_from_slice(&w.to_le_bytes());
        }
        seal(out)
    }

    /// Parses an encoded filter.
    ///
    /// # Errors
    /// `Corruption` for bytes that are not a valid encoding.
    fn decode(bytes: &[u8]) -> Result<Self> {
        Self::decode_in(bytes, None)
    }

    fn decode_shared(shared: &Bytes) -> Result<Self> {
        Self::decode_in(shared, Some(shared))
    }

    fn in_place(&self) -> Option<&[u8]> {
        self.words.shared()
    }

    /// The length of `Bloom::new(expected_keys, bits_per_key).encode()`,
    /// without building the filter (what a table's filter block will cost).
    fn encoded_len(expected_keys: usize, bits_per_key: f64) -> Option<usize> {
        Some(FRAME_BYTES + words_for(scaled_size(expected_keys, bits_per_key).max(64)) * 8)
    }

    fn array_offset(&self) -> Option<usize> {
        Some(HEADER_LEN)
    }

    fn parameters(&self) -> Vec<(&'static str, u64)> {
        vec![("probes", u64::from(self.k)), ("bits", self.bits), ("keys_inserted", self.keys)]
    }
}

impl Filter for Bloom {
    #[inline]
    fn contains(&self, hash: u64) -> bool {
        probe_positions(hash, self.k, self.bits).all(|pos| {
            usize::try_from(pos >> 6)
                .ok()
                .and_then(|i| self.words.get(i))
                .is_none_or(|w| w & (1 << (pos & 63)) != 0)
        })
    }

    fn size_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.words.len() * 8
    }

    fn theoretical_fpr(&self) -> f64 {
        classic_fpr(self.k, self.keys, self.bits)
    }
}

/// `filter` with each of `hashes` inserted by `insert` (the Bloom family's
/// filters are filled one key at a time).
pub(super) fn filled<F>(mut filter: F, hashes: &[u64], insert: fn(&mut F, u64)) -> F {
    for &h in hashes {
        insert(&mut filter, h);
    }
    filter
}

/// The table filter kind `bloom:B`: filter-block tag 1.
pub(crate) static KIND: KindSpec = KindSpec {
    tag: 1,
    name: "bloom",
    aliases: &[],
    is_static: false,
    max_bits_per_key: super::kind::MAX_BITS_PER_KEY,
    nominal_bits_per_key: |bits_per_key| bits_per_key,
    // (1 − e^(−k/b))^k at the k `Bloom::new` picks for b bits per key.
    theoretical_fpr: |bits_per_key| {
        let k = classic_probes(bits_per_key);
        (1.0 - (-f64::from(k) / bits_per_key).exp()).powi(k.cast_signed())
    },
    encoded_len: <Bloom as FilterCodec>::encoded_len,
    build: |hashes, bits_per_key, _carry| {
        Ok(Box::new(filled(Bloom::new(hashes.len(), bits_per_key), hashes, Bloom::insert)))
    },
    decode: decoder::<Bloom>,
};

#[cfg(test)]
#[expect(clippy::cast_precision_loss, reason = "rates over counts far below 2^52")]
pub(super) mod tests;
