//! Bloom filter whose probes for one key all fall in one 64-byte cache line.
//!
//! A key's hash picks one 512-bit block (multiply-shift of the whole 64-bit
//! hash over the block count, so the block depends on the hash's high bits)
//! and sets k bits inside it. Probe `i` is the top 9 bits of
//! `lo32(h) · φ^i (mod 2^32)`, φ^i being odd powers of the 32-bit golden
//! ratio constant: k independent multiplies, no dependency chain, and the
//! positions behave as independent uniform draws (measured FPR matches the
//! formula below to within a few percent). A query touches one cache line
//! instead of k, and tests its probes two at a time with a branch after
//! each pair, so three quarters of absent keys are answered after two
//! probes and one branch. Against fastbloom (a classic layout) at 10
//! bits/key, absent keys measured 2.9–3.9× faster at 10^6 and 10^7 keys in
//! criterion's warm loop, and 1.2–1.7× when every query's line is cold
//! (one miss is then the floor for both); see docs/measurements.md.
//!
//! # Choosing k
//!
//! With `B = 512` bits per block, the number of keys landing in a block is
//! Poisson with mean λ = B/bpk. A block holding `i` keys answers a random
//! query positively with probability `(1 − (1 − 1/B)^(i·k))^k`, so (Putze,
//! Sanders, Singler, "Cache-, hash- and space-efficient Bloom filters")
//!
//! ```text
//! fpr(bpk, k) = Σ_i Pois(λ, i) · (1 − (1 − 1/B)^(i·k))^k
//! ```
//!
//! Most false positives come from the blocks that drew more keys than
//! average (the per-block FPR is convex and steep in the load), and for a
//! block with `i` keys the best k is `(B/i)·ln 2`, below the average-load
//! optimum. Minimising the mixture therefore pulls k below the classic
//! `0.69·bpk`: the continuous optimum is 6.49 at 10 bits/key (classic 6.93),
//! 7.58 at 12 (8.32), 9.52 at 16 (11.09). After rounding the integer choice
//! equals the classic one at 9, 10 and 12 bits/key and is one lower at 8, 11,
//! 14 and 16. [`BlockedBloom::new`] scans k upward from 1 and takes the
//! minimum (stopping two past it: the rate is unimodal in k, which a test
//! checks against a full scan of 1..=30). At 10 bits/key k = 7 and ε = 0.957% (the
//! classic layout reaches 0.819%). "k = bpk/2" costs 4–19% more false
//! positives between 8 and 16 bits/key (1.038% at 10), so it is a fair rule
//! of thumb but not the optimum.
//!
//! # Encoding
//!
//! The shared Bloom header of [`super::Bloom`] with kind 2, the size field
//! holding the block count:
//!
//! ```text
//! offset  size     field
//! 0       4        magic b"SFBL"
//! 4       1        version = 1
//! 5       1        kind = 2
//! 6       1        k, 1..=30
//! 7       1        reserved, 0
//! 8       8        blocks (≥ 1)
//! 16      8        keys inserted
//! 24      64·blocks  block j: eight u64 words; bit p of the block is bit p%64 of word p/64
//! end-4   4        crc32 of everything before it
//! ```

use super::bloom::{
    FRAME_BYTES, HEADER_LEN, Header, MAX_PROBES, Variant, fastrange64, filled, in_filter, put_header,
    read_header, scaled_size, try_zeroed,
};
use super::kind::{KindSpec, check_bits_per_key, decoder};
use super::zeroed_buf::{Plain, ZeroedBuf};
use super::{Filter, FilterCodec};
use crate::codec::seal;
use crate::{Error, Result};
use bytes::Bytes;
use rate::{MAX_BITS_PER_KEY, blocked_fpr, optimal_probes, probes_for};

mod rate;

/// Bits per block: one 64-byte cache line.
const BLOCK_BITS: u32 = 512;

/// One cache line of filter bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(C, align(64))]
struct Block([u64; 8]);

// SAFETY: eight `u64`s and no padding (`repr(C)`, 64 bytes at alignment
// 64, below a page's): every bit pattern is a block.
unsafe impl Plain for Block {}

/// `φ^i mod 2^32` for the 32-bit golden-ratio constant: probe `i` reads the
/// top 9 bits of `lo32(hash) · PROBE_MULTIPLIERS[i]`.
const PROBE_MULTIPLIERS: [u32; MAX_PROBES as usize] = {
    let mut out = [1u32; MAX_PROBES as usize];
    let mut i = 1;
    while i < out.len() {
        out[i] = out[i - 1].wrapping_mul(0x9e37_79b9);
        i += 1;
    }
    out
};

/// Bloom filter whose probes for one key all fall in one 64-byte cache line.
///
/// ```
/// use siftdb::filter::{hash_key, BlockedBloom, Filter, FilterCodec};
/// let mut f = BlockedBloom::new(1000, 10.0);
/// assert_eq!(f.num_probes(), 7);
/// f.insert(hash_key(0, b"k"));
/// assert!(BlockedBloom::decode(&f.encode()).unwrap().contains(hash_key(0, b"k")));
/// ```
#[derive(Debug, Clone)]
pub struct BlockedBloom {
    blocks: ZeroedBuf<Block>,
    k: u32,
    keys: u64,
}

impl BlockedBloom {
    /// A filter sized for `expected_keys` at `bits_per_key` (fractional
    /// values allowed): ceil(n · bpk / 512) blocks, at least one, and the k
    /// that minimises the blocked-layout FPR at `bits_per_key`; the checked
    /// constructor.
    ///
    /// ```
    /// use siftdb::filter::BlockedBloom;
    /// assert!(BlockedBloom::try_new(1000, 10.0).is_ok());
    /// assert!(BlockedBloom::try_new(1000, f64::INFINITY).is_err());
    /// assert!(BlockedBloom::try_new(usize::MAX, 64.0).is_err());
    /// ```
    ///
    /// # Errors
    /// `InvalidArgument` for `bits_per_key` outside
    /// [`MIN_BITS_PER_KEY`](super::MIN_BITS_PER_KEY)..=[`MAX_BITS_PER_KEY`](super::MAX_BITS_PER_KEY)
    /// (NaN and infinities included), or a size the allocator refuses.
    pub fn try_new(expected_keys: usize, bits_per_key: f64) -> Result<Self> {
        check_bits_per_key(bits_per_key).map_err(|e| in_filter("blocked Bloom filter", e))?;
        let blocks = try_zeroed(Self::blocks_for(expected_keys, bits_per_key), "blocked Bloom filter")?;
        let k = probes_for(blocks.len(), expected_keys, bits_per_key);
        Ok(BlockedBloom { blocks, k, keys: 0 })
    }

    /// As [`BlockedBloom::try_new`], unchecked: kept for parameters known to
    /// be sane (constants, or ones already checked, as a table's filter
    /// kind is). Any `bits_per_key` is taken as given, and a size past
    /// memory aborts the process on allocation; take
    /// [`BlockedBloom::try_new`] for input from users.
    #[must_use]
    pub fn new(expected_keys: usize, bits_per_key: f64) -> Self {
        let blocks = Self::blocks_for(expected_keys, bits_per_key);
        BlockedBloom {
            blocks: ZeroedBuf::kept(blocks),
            k: probes_for(blocks, expected_keys, bits_per_key),
            keys: 0,
        }
    }

    /// A filter of exactly `blocks` 64-byte blocks (at least one) for
    /// `expected_keys` keys, with the k that minimises the rate at the bits
    /// per key that gives: for callers that choose the size themselves, as a
    /// table does to keep its level's filter bits on a budget.
    ///
    /// ```
    /// use siftdb::filter::BlockedBloom;
    /// let f = BlockedBloom::with_blocks(3, 100);
    /// assert_eq!(f.num_blocks(), 3);
    /// ```
    #[must_use]
    pub fn with_blocks(blocks: usize, expected_keys: usize) -> Self {
        let blocks = blocks.max(1);
        #[expect(clippy::cast_precision_loss, reason = "a ratio")]
        let real = blocks as f64 * f64::from(BLOCK_BITS) / expected_keys.max(1) as f64;
        BlockedBloom { blocks: ZeroedBuf::kept(blocks), k: probes_for(blocks, expected_keys, real), keys: 0 }
    }

    /// 64-byte blocks [`BlockedBloom::new`] allocates: ceil(n · bpk / 512), at least one.
    #[must_use]
    pub fn blocks_for(expected_keys: usize, bits_per_key: f64) -> usize {
        let blocks = scaled_size(expected_keys, bits_per_key).div_ceil(u64::from(BLOCK_BITS)).max(1);
        usize::try_from(blocks).unwrap_or(usize::MAX)
    }

    /// The 64-byte blocks of a table's filter at `bits_per_key` over
    /// `keys` keys, when its level is owed `carry_bits` filter bits
    /// (negative: it is over its budget).
    ///
    /// Without a carry this is [`BlockedBloom::blocks_for`], the smallest
    /// filter with at least b bits per key. With one, a table may take one
    /// block more or less than that, so that a level of tables whose sizes
    /// all round the same way still spends its planned bits on average
    /// (error diffusion, as in halftoning): the level stays within about a
    /// block of its budget instead of up to a block per table off it.
    ///
    /// ```
    /// use siftdb::filter::BlockedBloom;
    /// assert_eq!(BlockedBloom::blocks_with_carry(1000, 10.0, 0), BlockedBloom::blocks_for(1000, 10.0));
    /// assert_eq!(BlockedBloom::blocks_with_carry(1000, 10.0, 5000), BlockedBloom::blocks_for(1000, 10.0) + 1);
    /// ```
    #[must_use]
    #[expect(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "block counts far below 2^52, the ceiling taken of a positive value"
    )]
    pub fn blocks_with_carry(keys: usize, bits_per_key: f64, carry_bits: i64) -> usize {
        let ceil = Self::blocks_for(keys, bits_per_key);
        if carry_bits == 0 {
            return ceil;
        }
        let want = ((keys as f64 * bits_per_key + carry_bits as f64) / 512.0).ceil().max(1.0) as usize;
        want.clamp(ceil.saturating_sub(1).max(1), ceil + 1)
    }

    /// The theoretical false-positive rate at `bits_per_key` with the
    /// optimal k (1.0 for a non-positive or NaN argument).
    ///
    /// ```
    /// let e = siftdb::filter::BlockedBloom::fpr_for_bits_per_key(10.0);
    /// assert!((e - 0.00957).abs() < 0.00001);
    /// ```
    #[must_use]
    pub fn fpr_for_bits_per_key(bits_per_key: f64) -> f64 {
        optimal_probes(bits_per_key).1
    }

    /// The bits per key at which [`Self::fpr_for_bits_per_key`] equals
    /// `fpr`, by bisection to 1e-6. Returns 0.0 for `fpr ≥ 1` (no filter
    /// needed) and 64.0, the search cap, for rates not reachable below it
    /// (about 1e-13), zero, negative or NaN.
    #[must_use]
    pub fn bits_per_key_for_fpr(fpr: f64) -> f64 {
        if fpr >= 1.0 {
            return 0.0;
        }
        if fpr.is_nan() || Self::fpr_for_bits_per_key(MAX_BITS_PER_KEY) > fpr {
            return MAX_BITS_PER_KEY;
        }
        let (mut lo, mut hi) = (0.0, MAX_BITS_PER_KEY);
        while hi - lo > 1e-6 {
            let mid = f64::midpoint(lo, hi);
            if Self::fpr_for_bits_per_key(mid) > fpr {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        hi
    }

    #[inline]
    fn block_of(&self, hash: u64) -> Option<&Block> {
        self.blocks.get(self.block_index(hash))
    }

    /// Adds a hash.
    #[inline]
    pub fn insert(&mut self, hash: u64) {
        let i = self.block_index(hash);
        if let Some(block) = self.blocks.get_mut(i) {
            let h = lo32(hash);
            for &m in PROBE_MULTIPLIERS.iter().take(self.k as usize) {
                let pos = h.wrapping_mul(m) >> 23;
                block.0[(pos >> 6) as usize] |= 1 << (pos & 63);
            }
        }
        self.keys = self.keys.saturating_add(1);
    }

    /// Probes per key.
    #[must_use]
    pub fn num_probes(&self) -> u32 {
        self.k
    }

    /// 64-byte blocks in the filter.
    #[must_use]
    pub fn num_blocks(&self) -> usize {
        self.blocks.len()
    }

    /// Bits in the filter (512 per block).
    #[must_use]
    pub fn num_bits(&self) -> u64 {
        self.blocks.len() as u64 * u64::from(BLOCK_BITS)
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
        self.num_bits() as f64 / self.keys as f64
    }
}

#[inline]
#[expect(clippy::cast_possible_truncation, reason = "the low 32 bits drive the probes, by design")]
fn lo32(hash: u64) -> u32 {
    hash as u32
}

impl BlockedBloom {
    /// Whether bit `pos` of `block` is set.
    #[inline]
    fn probe(block: &Block, pos: u32) -> bool {
        block.0[(pos >> 6) as usize] & (1 << (pos & 63)) != 0
    }

    /// Whether every probe of `multipliers` finds its bit set in `block`.
    ///
    /// Probes are tested two at a time, with a branch after each pair: three
    /// quarters of absent keys leave after the first pair, and the branch
    /// goes the same way for most keys, so it mispredicts far less than a
    /// branch after every probe (wrong on half of all absent keys). Against
    /// that, and against no branch at all (which pays for all k probes),
    /// absent-key queries measured ~2× faster (docs/measurements.md).
    ///
    /// A pair's bits are counted, not combined with `&`. Counted, LLVM
    /// tests each bit with `bt` and adds the second with `adc`: one µop a
    /// probe. Shifted words combined with `&` shift by a register (`shr %cl`,
    /// two or three µops on Intel), and two `bool`s combined with `&` are
    /// split into a branch a probe, which brings back the mispredictions
    /// above. Counting measured present keys 25% faster at 10^6 keys, absent
    /// keys unchanged (docs/measurements.md, "Blocked Bloom probes with
    /// `bt`").
    #[inline]
    fn test_pairs(block: &Block, h: u32, multipliers: &[u32]) -> bool {
        for pair in multipliers.chunks(2) {
            let mut set = 0;
            for &m in pair {
                set += usize::from(Self::probe(block, h.wrapping_mul(m) >> 23));
            }
            if set != pair.len() {
                return false;
            }
        }
        true
    }

    /// Whether all k probes of `h` find their bits set in `block`. The
    /// common probe counts get a copy with k fixed at compile time, so the
    /// pair loop unrolls (measured ~20% faster than the loop over a runtime
    /// k; the `match` itself is one well-predicted jump).
    #[inline]
    fn test_all(&self, block: &Block, h: u32) -> bool {
        match self.k {
            4 => Self::test_pairs(block, h, &PROBE_MULTIPLIERS[..4]),
            5 => Self::test_pairs(block, h, &PROBE_MULTIPLIERS[..5]),
            6 => Self::test_pairs(block, h, &PROBE_MULTIPLIERS[..6]),
            7 => Self::test_pairs(block, h, &PROBE_MULTIPLIERS[..7]),
            8 => Self::test_pairs(block, h, &PROBE_MULTIPLIERS[..8]),
            9 => Self::test_pairs(block, h, &PROBE_MULTIPLIERS[..9]),
            10 => Self::test_pairs(block, h, &PROBE_MULTIPLIERS[..10]),
            // k ≤ MAX_PROBES always (new clamps, decode checks); `get`
            // keeps even a broken invariant from panicking.
            k => {
                Self::test_pairs(block, h, PROBE_MULTIPLIERS.get(..k as usize).unwrap_or(&PROBE_MULTIPLIERS))
            }
        }
    }

    #[inline]
    fn block_index(&self, hash: u64) -> usize {
        usize::try_from(fastrange64(hash, self.blocks.len() as u64)).unwrap_or(usize::MAX)
    }
}

impl BlockedBloom {
    /// [`FilterCodec::decode`], the blocks viewed in place in `shared`
    /// (holding `bytes`) where they are aligned.
    fn decode_in(bytes: &[u8], shared: Option<&Bytes>) -> Result<Self> {
        let (h, mut r) =
            read_header(bytes, Variant::Blocked, |blocks| usize::try_from(blocks).ok()?.checked_mul(64))?;
        if h.size == 0 {
            return Err(Error::corruption(8, "a blocked Bloom filter needs at least one block"));
        }
        let payload = r.bytes(r.remaining())?;
        debug_assert_eq!(payload.len() % 64, 0);
        let blocks = shared.and_then(|s| ZeroedBuf::view(s, payload)).unwrap_or_else(|| {
            let mut blocks = ZeroedBuf::<Block>::kept(payload.len() / 64);
            for (block, chunk) in blocks.iter_mut().zip(payload.chunks_exact(64)) {
                for (w, bytes) in block.0.iter_mut().zip(chunk.chunks_exact(8)) {
                    *w = u64::from_le_bytes(bytes.try_into().unwrap_or_default());
                }
            }
            blocks
        });
        debug_assert!(HEADER_LEN + payload.len() + 4 == bytes.len());
        Ok(BlockedBloom { blocks, k: h.k, keys: h.keys })
    }
}

impl FilterCodec for BlockedBloom {
    /// Serialises the filter (format in the module doc).
    fn encode(&self) -> Vec<u8> {
        let header = Header { k: self.k, size: self.blocks.len() as u64, keys: self.keys };
        let mut out = put_header(Variant::Blocked, header, self.blocks.len() * 64);
        for w in self.blocks.iter().flat_map(|b| b.0) {
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
        self.blocks.shared()
    }

    /// The length of `BlockedBloom::new(expected_keys, bits_per_key).encode()`,
    /// without building the filter.
    fn encoded_len(expected_keys: usize, bits_per_key: f64) -> Option<usize> {
        Some(FRAME_BYTES + Self::blocks_for(expected_keys, bits_per_key) * 64)
    }

    fn array_offset(&self) -> Option<usize> {
        Some(HEADER_LEN)
    }

    fn parameters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("probes", u64::from(self.k)),
            ("blocks", self.blocks.len() as u64),
            ("block_bits", u64::from(BLOCK_BITS)),
            ("bits", self.num_bits()),
            ("keys_inserted", self.keys),
        ]
    }
}

impl Filter for BlockedBloom {
    #[inline]
    fn contains(&self, hash: u64) -> bool {
        match self.block_of(hash) {
            Some(block) => self.test_all(block, lo32(hash)),
            None => true,
        }
    }

    #[inline]
    fn prefetch(&self, hash: u64) {
        // One 64-byte-aligned block: one cache line.
        if let Some(block) = self.block_of(hash) {
            super::prefetch::line(block);
        }
    }

    fn size_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + std::mem::size_of_val::<[Block]>(&self.blocks)
    }

    fn theoretical_fpr(&self) -> f64 {
        if self.keys == 0 { 0.0 } else { blocked_fpr(self.bits_per_key(), self.k) }
    }
}

/// The table filter kind `blocked-bloom:B`: filter-block tag 2.
pub(crate) static KIND: KindSpec = KindSpec {
    tag: 2,
    name: "blocked-bloom",
    aliases: &["blocked"],
    is_static: false,
    max_bits_per_key: super::kind::MAX_BITS_PER_KEY,
    nominal_bits_per_key: |bits_per_key| bits_per_key,
    theoretical_fpr: BlockedBloom::fpr_for_bits_per_key,
    encoded_len: <BlockedBloom as FilterCodec>::encoded_len,
    build: |hashes, bits_per_key, carry_bits| {
        let blocks = BlockedBloom::blocks_with_carry(hashes.len(), bits_per_key, carry_bits);
        Ok(Box::new(filled(BlockedBloom::with_blocks(blocks, hashes.len()), hashes, BlockedBloom::insert)))
    },
    decode: decoder::<BlockedBloom>,
};

#[cfg(test)]
mod tests;
