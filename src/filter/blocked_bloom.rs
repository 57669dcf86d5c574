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
//! (one miss is then the floor for both); see DESIGN.md, "Measured figures".
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
use super::{Filter, FilterCodec};
use crate::codec::seal;
use crate::{Error, Result};

/// Bits per block: one 64-byte cache line.
const BLOCK_BITS: u32 = 512;

/// One cache line of filter bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(C, align(64))]
struct Block([u64; 8]);

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

/// Bits per key below which the rate is taken as 1 (it exceeds 0.99995).
const MIN_BITS_PER_KEY: f64 = 0.1;

/// Bits per key above which [`BlockedBloom::bits_per_key_for_fpr`] stops searching.
const MAX_BITS_PER_KEY: f64 = 64.0;

/// The blocked-Bloom false-positive rate at `bits_per_key` with `k` probes
/// (Putze et al.; see the module doc).
#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss,
    reason = "loop bounds from a finite, positive float, and back; all far below 2^52"
)]
fn blocked_fpr(bits_per_key: f64, k: u32) -> f64 {
    // Below 0.1 bits/key (λ > 5120 keys per block) even k = 1 gives
    // ε > 1 − e^−10; stopping here also bounds the sum's length.
    if bits_per_key.is_nan() || bits_per_key < MIN_BITS_PER_KEY {
        return 1.0;
    }
    if bits_per_key.is_infinite() {
        return 0.0;
    }
    let b = f64::from(BLOCK_BITS);
    let lambda = b / bits_per_key;
    let spread = 12.0 * lambda.sqrt() + 40.0;
    let (lo, hi) = ((lambda - spread).max(0.0) as u64, (lambda + spread).ceil() as u64);
    let ln_lambda = lambda.ln();
    let ln_bit_clear = (1.0 - 1.0 / b).ln();
    let kf = f64::from(k);
    let mut ln_factorial = 0.0;
    let mut sum = 0.0;
    for i in 0..=hi {
        if i > 0 {
            ln_factorial += (i as f64).ln();
        }
        if i < lo {
            continue;
        }
        let i = i as f64;
        let poisson = (-lambda + i * ln_lambda - ln_factorial).exp();
        let block_fpr = (1.0 - (i * kf * ln_bit_clear).exp()).powf(kf);
        sum += poisson * block_fpr;
    }
    sum.min(1.0)
}

/// The probes for `keys` keys in `blocks` blocks sized at `bits_per_key`:
/// the best k for the bits per key the blocks really give (rounding up to a
/// whole block adds up to 511 bits, so the last block's bits lower the rate
/// instead of idling), capped at [`MAX_BITS_PER_KEY`] so a near-empty filter
/// does not probe 30 bits per lookup for no measurable gain.
fn probes_for(blocks: usize, keys: usize, bits_per_key: f64) -> u32 {
    #[expect(clippy::cast_precision_loss, reason = "a ratio")]
    let real = if keys == 0 {
        bits_per_key
    } else {
        (blocks as f64 * f64::from(BLOCK_BITS) / keys as f64).max(bits_per_key)
    };
    optimal_probes(real.min(MAX_BITS_PER_KEY)).0
}

/// The k in 1..=30 minimising [`blocked_fpr`], with that rate.
fn optimal_probes(bits_per_key: f64) -> (u32, f64) {
    let mut best = (1, blocked_fpr(bits_per_key, 1));
    for k in 2..=MAX_PROBES {
        let fpr = blocked_fpr(bits_per_key, k);
        if fpr < best.1 {
            best = (k, fpr);
        } else if k > best.0 + 2 {
            // The rate is unimodal in k: two steps past the minimum, stop.
            break;
        }
    }
    best
}

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
    blocks: Vec<Block>,
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
            blocks: vec![Block::default(); blocks],
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
        BlockedBloom {
            blocks: vec![Block::default(); blocks],
            k: probes_for(blocks, expected_keys, real),
            keys: 0,
        }
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
    /// Bit `pos` of `block`, in bit 0 of the result (the other bits are noise).
    #[inline]
    fn probe(block: &Block, pos: u32) -> u64 {
        block.0[(pos >> 6) as usize] >> (pos & 63)
    }

    /// Whether every probe of `multipliers` finds its bit set in `block`.
    ///
    /// Probes are tested two at a time, with a branch after each pair: three
    /// quarters of absent keys leave after the first pair, and the branch
    /// goes the same way for most keys, so it mispredicts far less than a
    /// branch after every probe (wrong on half of all absent keys). Against
    /// that, and against no branch at all (which pays for all k probes),
    /// absent-key queries measured ~2× faster (DESIGN.md, "Measured figures").
    #[inline]
    fn test_pairs(block: &Block, h: u32, multipliers: &[u32]) -> bool {
        for pair in multipliers.chunks(2) {
            let mut all_set = 1;
            for &m in pair {
                all_set &= Self::probe(block, h.wrapping_mul(m) >> 23);
            }
            if all_set & 1 == 0 {
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
        let (h, mut r) =
            read_header(bytes, Variant::Blocked, |blocks| usize::try_from(blocks).ok()?.checked_mul(64))?;
        if h.size == 0 {
            return Err(Error::corruption(8, "a blocked Bloom filter needs at least one block"));
        }
        let payload = r.bytes(r.remaining())?;
        debug_assert_eq!(payload.len() % 64, 0);
        let blocks = payload
            .chunks_exact(64)
            .map(|chunk| {
                let mut block = Block::default();
                for (w, bytes) in block.0.iter_mut().zip(chunk.chunks_exact(8)) {
                    *w = u64::from_le_bytes(bytes.try_into().unwrap_or_default());
                }
                block
            })
            .collect();
        debug_assert!(HEADER_LEN + payload.len() + 4 == bytes.len());
        Ok(BlockedBloom { blocks, k: h.k, keys: h.keys })
    }

    /// The length of `BlockedBloom::new(expected_keys, bits_per_key).encode()`,
    /// without building the filter.
    fn encoded_len(expected_keys: usize, bits_per_key: f64) -> Option<usize> {
        Some(FRAME_BYTES + Self::blocks_for(expected_keys, bits_per_key) * 64)
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

    fn size_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + std::mem::size_of_val(self.blocks.as_slice())
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
mod tests {
    use super::*;
    use crate::filter::bloom::tests::{hashes, measured_fpr};
    use crate::filter::codec_tests::{all_corruption, resealed, round_trip_and_sweep};

    #[test]
    fn formula_matches_the_reference_script() {
        // Figures from /work/shared/reference/filter_fpr_theory.py (an
        // independent Python evaluation of the same sum).
        for (bpk, k, pct) in [(8.0, 5, 2.312), (10.0, 7, 0.957), (12.0, 8, 0.407), (16.0, 10, 0.082)] {
            let (best_k, fpr) = optimal_probes(bpk);
            assert_eq!(best_k, k, "bpk {bpk}");
            assert!((fpr * 100.0 - pct).abs() < 0.001, "bpk {bpk}: {fpr}");
        }
        // k = bpk/2 is close to, but worse than, the optimum.
        let half = blocked_fpr(10.0, 5);
        assert!(half > 0.0103 && half < 0.0105, "{half}");
        assert!(blocked_fpr(-1.0, 3) >= 1.0 && blocked_fpr(f64::NAN, 3) >= 1.0);
        // Absurdly few bits per key must answer at once, not sum 10^12 terms.
        assert!(BlockedBloom::fpr_for_bits_per_key(1e-12) >= 1.0);
        assert!(BlockedBloom::fpr_for_bits_per_key(0.1) > 0.9999);
        // One block (the least) for 10 keys is 51 real bits per key, and the
        // probes are chosen for those.
        assert_eq!(BlockedBloom::new(10, 1e-9).num_probes(), optimal_probes(51.2).0);
        assert!(BlockedBloom::fpr_for_bits_per_key(f64::INFINITY).abs() < f64::EPSILON);
    }

    #[test]
    fn early_stopping_scan_finds_the_global_minimum() {
        for tenth in 3..=400 {
            let bpk = f64::from(tenth) / 10.0;
            let full = (1..=MAX_PROBES)
                .map(|k| (blocked_fpr(bpk, k), k))
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .unwrap();
            assert_eq!(optimal_probes(bpk).0, full.1, "bpk {bpk}");
        }
    }

    #[test]
    fn bits_per_key_for_fpr_inverts_the_rate() {
        for eps in [0.05, 0.01, 0.0039, 0.001, 1e-6] {
            let bpk = BlockedBloom::bits_per_key_for_fpr(eps);
            let back = BlockedBloom::fpr_for_bits_per_key(bpk);
            assert!((back / eps - 1.0).abs() < 1e-3, "eps {eps}: bpk {bpk} -> {back}");
        }
        // The reference script: 1% needs 9.9 bits/key, 0.1% 15.49.
        assert!((BlockedBloom::bits_per_key_for_fpr(0.01) - 9.9).abs() < 0.01);
        assert!((BlockedBloom::bits_per_key_for_fpr(0.001) - 15.49).abs() < 0.01);
        assert!(BlockedBloom::bits_per_key_for_fpr(1.0).abs() < f64::EPSILON);
        assert!((BlockedBloom::bits_per_key_for_fpr(0.0) - MAX_BITS_PER_KEY).abs() < f64::EPSILON);
        assert!((BlockedBloom::bits_per_key_for_fpr(f64::NAN) - MAX_BITS_PER_KEY).abs() < f64::EPSILON);
    }

    #[test]
    fn sizes_follow_fractional_bits_per_key() {
        assert_eq!(BlockedBloom::new(0, 10.0).num_blocks(), 1);
        assert_eq!(BlockedBloom::new(1000, 10.0).num_blocks(), 20); // 10000 / 512 = 19.5
        assert_eq!(BlockedBloom::new(1024, 9.5).num_blocks(), 19);
        assert_eq!(BlockedBloom::new(1024, 9.75).num_blocks(), 20); // 19.5 blocks
        assert_eq!(BlockedBloom::new(10, f64::NAN).num_blocks(), 1);
        assert_eq!(std::mem::align_of::<Block>(), 64);
        assert_eq!(std::mem::size_of::<Block>(), 64);
    }

    #[test]
    fn no_false_negatives_small_and_duplicate_sets() {
        for n in [0, 1, 2, 1000] {
            let mut f = BlockedBloom::new(n, 10.0);
            let hs = hashes(n as u64 + 10, n);
            for &h in &hs {
                f.insert(h);
                f.insert(h);
            }
            assert!(hs.iter().all(|&h| f.contains(h)));
        }
        let empty = BlockedBloom::new(100, 10.0);
        assert!(!hashes(9, 1000).into_iter().any(|h| empty.contains(h)));
    }

    /// `contains` has a copy per common k and tests probes in pairs; for
    /// every k it must answer exactly as the definition (all k bits set).
    #[test]
    fn every_probe_count_answers_as_the_definition() {
        let present = hashes(21, 3000);
        let absent = hashes(22, 3000);
        for k in 1..=MAX_PROBES {
            let mut f = BlockedBloom::new(present.len(), 6.0);
            f.k = k;
            for &h in &present {
                f.insert(h);
            }
            let definition = |h: u64| {
                let block = f.block_of(h).unwrap();
                PROBE_MULTIPLIERS.iter().take(k as usize).all(|&m| {
                    let pos = lo32(h).wrapping_mul(m) >> 23;
                    block.0[(pos >> 6) as usize] & (1 << (pos & 63)) != 0
                })
            };
            assert!(present.iter().all(|&h| f.contains(h)), "k={k}: a present key answered absent");
            let positives = absent.iter().filter(|&&h| f.contains(h)).count();
            assert!(absent.iter().all(|&h| f.contains(h) == definition(h)), "k={k}");
            // Both answers occur, so the comparison is not vacuous.
            assert!(0 < positives && positives < absent.len(), "k={k}: {positives}");
        }
    }

    #[test]
    fn million_keys_at_10_bits_meet_the_fpr_target() {
        let n = 1_000_000;
        let hs = hashes(4, n);
        let f = filled(BlockedBloom::new(n, 10.0), &hs, BlockedBloom::insert);
        assert!(hs.iter().all(|&h| f.contains(h)));
        let theory = f.theoretical_fpr();
        // 1953.125 blocks round up to 1954: slightly more than 10 bits/key.
        assert!(theory < 0.00957 && theory > 0.0095, "{theory}");
        let measured = measured_fpr(&f, 2_000_000);
        assert!(measured <= 0.0098, "measured {measured}");
        assert!((measured / theory - 1.0).abs() < 0.10, "measured {measured} theory {theory}");
    }

    #[test]
    fn fpr_tracks_theory_across_bits_per_key() {
        for bpk in [6.0, 8.0, 13.3, 16.0] {
            let n = 200_000;
            let f = filled(BlockedBloom::new(n, bpk), &hashes(5, n), BlockedBloom::insert);
            let (theory, measured) = (f.theoretical_fpr(), measured_fpr(&f, 1_000_000));
            assert!((measured / theory - 1.0).abs() < 0.10, "bpk {bpk}: measured {measured} theory {theory}");
        }
    }

    #[test]
    fn round_trip_and_corruption_sweep() {
        let hs = hashes(6, 60);
        let f = filled(BlockedBloom::new(60, 10.0), &hs, BlockedBloom::insert);
        let enc = f.encode();
        assert_eq!(enc.len(), HEADER_LEN + 2 * 64 + 4);
        let g: BlockedBloom = round_trip_and_sweep(&enc, &hs);
        // Two blocks hold 17 bits per key, not 10: the probes are for those.
        assert_eq!(
            (g.num_blocks(), g.num_probes(), g.keys_inserted()),
            (2, optimal_probes(1024.0 / 60.0).0, 60)
        );
        assert!(g.num_probes() > optimal_probes(10.0).0);
    }

    #[test]
    fn decode_rejects_sealed_but_invalid_headers() {
        let f = BlockedBloom::new(100, 10.0);
        let enc = f.encode();
        let body = |edit: &dyn Fn(&mut Vec<u8>)| resealed(&enc, edit);
        let cases: Vec<(&str, Vec<u8>)> = vec![
            ("k = 0", body(&|b| b[6] = 0)),
            ("k = 200", body(&|b| b[6] = 200)),
            ("kind", body(&|b| b[5] = 1)),
            (
                "zero blocks",
                body(&|b| {
                    b.truncate(HEADER_LEN);
                    b[8..16].copy_from_slice(&0u64.to_le_bytes());
                }),
            ),
            ("huge block count", body(&|b| b[8..16].copy_from_slice(&(u64::MAX / 2).to_le_bytes()))),
            ("partial block", body(&|b| b.push(0))),
        ];
        all_corruption::<BlockedBloom>(cases);
        // A key count no filter could hold is not corruption, but theory must
        // still answer quickly.
        let crowded =
            BlockedBloom::decode(&body(&|b| b[16..24].copy_from_slice(&u64::MAX.to_le_bytes()))).unwrap();
        assert!(crowded.theoretical_fpr() >= 1.0);
    }
}
