//! Ribbon filters (Dillinger & Walzer 2021, "Ribbon filter: practically
//! smaller than Bloom and Xor"): static, at any bits per key from 1 to 32,
//! fractional included, within a few percent of the information-theoretic
//! bound.
//!
//! A key's remixed hash gives one linear equation over GF(2): a 128-bit
//! coefficient row starting at some slot, and `r` result bits. The filter
//! stores a solution `Z` (r bits per slot) of every key's equation
//! (`solve.rs`), and a query recomputes the equation and checks it against
//! `Z`: a key built in always passes; another key passes with probability
//! `2^−r` per slot width `r` (`layout.rs` has the sizing, the fractional
//! column mix and the rate). The band keeps a query to one 128-slot window:
//! two adjacent blocks of solution words, a few cache lines.
//!
//! Width 128 rather than 64, measured: at 64 a seed solves with even odds
//! only at about 8% more slots than keys (10^5 and 10^6 keys); at 128 it
//! takes 3–4%. With bumping (`bumped.rs`) the margin is 2%, and the whole
//! filter stays within about 3% of the bound at any size
//! (docs/measurements.md, "Ribbon: width and margin").
//!
//! # Encoding
//!
//! ```text
//! offset  size   field
//! 0       1      kind: 0x31 = Ribbon (width 128)
//! 1       1      version: 2 (1 still read: see below)
//! 2       8      seed (u64 LE)
//! 10      4      keys: distinct keys built from (u32 LE)
//! 14      4      blocks (u32 LE), ≥ 1: 128 slots each
//! 18      1      lower: columns of blocks [0, upper_start), 0..=32
//! 19      4      upper_start (u32 LE) ≤ blocks; blocks from it store lower + 1
//!                columns (lower + 1 ≤ 32 when any do)
//! 23      16·W   solution words (u128 LE), block after block, each block's
//!                columns in order: W = blocks·lower + blocks − upper_start
//! 23+16W  4      bumped keys B (u32 LE), at most max(64, keys / 500)
//!         8·B    their remixed hashes (u64 LE), strictly ascending
//! end−4   4      crc32 of every byte before it (codec::seal)
//! ```
//!
//! Version 1 (the first build of this filter) ended after the solution
//! words, without bumped keys; it still decodes.
//!
//! Decoding checks the crc, the kind and version, the geometry (with at
//! least half a word a block, as every build has), that the words are
//! exactly `16·W` bytes and the bumped keys exactly `8·B`, in order; every word a query reads is then inside the array (with the zero
//! padding the decoder appends), so a decoded filter cannot panic.

mod bumped;
mod layout;
mod parity;
mod query;
#[cfg(test)]
mod query_tests;
mod solve;
#[cfg(test)]
mod tests;

use super::kind::{KindSpec, decoder};
use super::zeroed_buf::ZeroedBuf;
use super::{BuildError, Filter, FilterCodec};
use crate::codec::{Reader, seal, unseal};
use crate::{Error, Result};
use bumped::{Bumped, max_bumped};
use bytes::Bytes;
pub use layout::RibbonLayout;
use layout::{MARGIN, MAX_COLUMNS, WIDTH, remix};
use solve::Banding;

const KIND_BYTE: u8 = 0x31;
/// The encoding written: 2 adds the bumped keys; 1 (without them) still reads.
const VERSION: u8 = 2;
/// Bytes before the solution words.
const HEADER_LEN: usize = 23;

/// Seeds tried before a build gives up: with contradicting rows bumped, a
/// seed fails only if more than one key in 500 contradicts, which no
/// random key set does at the 2% margin, so 30 failures in a row mean a
/// bug or an adversarial input.
pub(crate) const MAX_ATTEMPTS: u32 = 30;

/// The most distinct keys a Ribbon filter takes (slots are 32-bit).
pub const MAX_KEYS: usize = 1 << 31;

/// A Ribbon filter of width 128.
///
/// ```
/// use siftdb::filter::{hash_key, Filter, FilterCodec, Ribbon};
/// let hashes: Vec<u64> = (0..10_000u32).map(|i| hash_key(0, &i.to_le_bytes())).collect();
/// let f = Ribbon::build(&hashes, 7.0).unwrap();
/// assert!(hashes.iter().all(|&h| f.contains(h)));
/// assert!(f.theoretical_fpr() < 0.011);
/// let again = Ribbon::decode(&f.encode()).unwrap();
/// assert!(hashes.iter().all(|&h| again.contains(h)));
/// ```
///
/// Invariant: `words.len() ≥ layout.words()`; a built or copied solution
/// has `MAX_COLUMNS` zero words more, which queries read past a block's
/// window unchecked (one read in place from its table copies the tail).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ribbon {
    seed: u64,
    keys: u32,
    layout: RibbonLayout,
    words: ZeroedBuf<u128>,
    /// Keys left out of the system, kept exactly (`bumped.rs`).
    bumped: Bumped,
}

impl Ribbon {
    /// Builds a filter of about `bits_per_key` bits per key (1 to 32,
    /// fractional allowed) from `hashes` (duplicates allowed, and removed),
    /// then checks that it holds every one of them.
    ///
    /// Below a few hundred keys the 128-slot minimum costs more bits per
    /// key: the columns are never fewer than `bits_per_key` would give a
    /// large set, so the rate holds and the size does not.
    ///
    /// # Errors
    /// [`BuildError::BandingFailed`] (no solvable seed in 30),
    /// [`BuildError::ValidationFailed`] if the result rejects an input
    /// hash, [`BuildError::TooManyKeys`] beyond 2^31 keys.
    ///
    /// A `bits_per_key` outside 1..=32 is clamped to it (NaN reads as 1).
    pub fn build(hashes: &[u64], bits_per_key: f64) -> std::result::Result<Self, BuildError> {
        Self::build_with(hashes, MAX_ATTEMPTS, |n, blocks| RibbonLayout::for_bits(n, blocks, bits_per_key))
    }

    /// The expected false-positive rate of [`Ribbon::build`] over `keys`
    /// distinct keys at `bits_per_key`: its column mix over whole blocks,
    /// each block's `2^−columns` weighted by the starts it holds (the last
    /// holds one). Below a few thousand keys this differs from the kind's
    /// nominal rate ([`FilterKind::theoretical_fpr`](super::FilterKind::theoretical_fpr))
    /// by the blocks' rounding. `None` beyond 2^31 keys.
    #[must_use]
    pub fn expected_fpr(keys: usize, bits_per_key: f64) -> Option<f64> {
        Some(Self::layout_for(keys, bits_per_key)?.theoretical_fpr())
    }

    /// The layout [`Ribbon::build`] takes for `keys` distinct keys.
    fn layout_for(keys: usize, bits_per_key: f64) -> Option<RibbonLayout> {
        if keys > MAX_KEYS {
            return None;
        }
        RibbonLayout::for_bits(keys, RibbonLayout::blocks_for(keys)?, bits_per_key)
    }

    /// The bits per key at which a large set gets exactly `columns`
    /// solution columns in every slot (`columns · (1 + 2%)`, the slot
    /// margin): a rate of `2^−columns`. Between two of these the rate falls
    /// linearly in the bits, so they are the corners of Ribbon's
    /// rate-for-space curve, the points a memory planner compares
    /// (`monkey:B` does). `columns` is clamped to 1..=31, the most that fit
    /// under 32 bits per key.
    ///
    /// ```
    /// use siftdb::filter::{Filter, Ribbon};
    /// let bits = Ribbon::bits_per_key_for_columns(7);
    /// assert!((bits - 7.14).abs() < 1e-9);
    /// let hashes: Vec<u64> = (0..10_000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
    /// let f = Ribbon::build(&hashes, bits)?;
    /// assert!((f.theoretical_fpr() - 2f64.powi(-7)).abs() < 1e-4);
    /// # Ok::<(), siftdb::filter::BuildError>(())
    /// ```
    #[must_use]
    pub fn bits_per_key_for_columns(columns: u32) -> f64 {
        // In hundredths, so that a vertex prints as it parses (`ribbon:7.14`).
        (f64::from(columns.clamp(1, MAX_COLUMNS - 1)) * (1.0 + MARGIN) * 100.0).round() / 100.0
    }

    /// Builds a filter whose expected false-positive rate is `fpr`
    /// (clamped to 2^−32..=1/2: a filter holds at least one column): the
    /// columns are mixed so that the blocks' rates average to it.
    ///
    /// # Errors
    /// As [`Ribbon::build`].
    pub fn build_for_fpr(hashes: &[u64], fpr: f64) -> std::result::Result<Self, BuildError> {
        let fpr = if fpr.is_nan() { 0.5 } else { fpr.clamp((-f64::from(MAX_COLUMNS)).exp2(), 0.5) };
        Self::build_with(hashes, MAX_ATTEMPTS, |_, blocks| {
            // With a fraction f of blocks at k + 1 columns the rate is
            // 2^−k·(1 − f/2) (starts spread evenly over blocks).
            let bits = -fpr.log2();
            let k = bits.floor();
            let f = (2.0 * (1.0 - fpr * k.exp2())).clamp(0.0, 1.0);
            RibbonLayout::with_columns(blocks, k + f)
        })
    }

    /// Sorts and deduplicates the remixed hashes (which orders them by
    /// start slot, so banding walks memory forwards), bands them and solves,
    /// trying up to `max_attempts` seeds, then validates every input hash.
    pub(crate) fn build_with(
        hashes: &[u64],
        max_attempts: u32,
        layout_for: impl Fn(usize, u32) -> Option<RibbonLayout>,
    ) -> std::result::Result<Self, BuildError> {
        let (f, mixed) = Self::solve_with(hashes, max_attempts, layout_for)?;
        f.validate_mixed(&mixed)?;
        Ok(f)
    }

    /// The solving half of [`Ribbon::build_with`], unvalidated, with the
    /// remixed inputs it solved for, sorted and distinct.
    fn solve_with(
        hashes: &[u64],
        max_attempts: u32,
        layout_for: impl Fn(usize, u32) -> Option<RibbonLayout>,
    ) -> std::result::Result<(Self, Vec<u64>), BuildError> {
        let too_many = |keys| BuildError::TooManyKeys { keys, max: MAX_KEYS };
        if hashes.len() > MAX_KEYS {
            return Err(too_many(hashes.len()));
        }
        let mut seed = 0x7269_6262_6f6e_5eed_u64;
        let mut distinct = hashes.len();
        for attempt in 0..max_attempts {
            let mixed = solve::remix_sorted(hashes, seed);
            distinct = mixed.len();
            let blocks = RibbonLayout::blocks_for(distinct).ok_or_else(|| too_many(distinct))?;
            let layout = layout_for(distinct, blocks).ok_or_else(|| too_many(distinct))?;
            let mut banding = Banding::new(layout.slots());
            if let Some(bumped) = banding.add_all(&layout, &mixed, max_bumped(distinct)) {
                let words = banding.solve(&layout);
                let keys = u32::try_from(distinct).map_err(|_| too_many(distinct))?;
                let bumped = Bumped::new(bumped, &layout);
                return Ok((Ribbon { seed, keys, layout, words, bumped }, mixed));
            }
            // The next seed: a fresh, independent system.
            seed = remix(seed, u64::from(attempt) + 1);
        }
        Err(BuildError::BandingFailed { attempts: max_attempts, keys: distinct })
    }

    /// The seed the input hashes are remixed with.
    #[must_use]
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Distinct keys the filter was built from.
    #[must_use]
    pub fn keys(&self) -> usize {
        self.keys as usize
    }

    /// Slots (128 per block).
    #[must_use]
    pub fn slots(&self) -> usize {
        self.layout.slots()
    }

    /// The block geometry: blocks, and the columns they store.
    #[must_use]
    pub fn layout(&self) -> RibbonLayout {
        self.layout
    }

    /// Solution bits per slot, averaged over the blocks.
    #[must_use]
    #[expect(clippy::cast_precision_loss, reason = "a ratio")]
    pub fn columns(&self) -> f64 {
        self.layout.words() as f64 / f64::from(self.layout.blocks)
    }

    /// Keys the system left out and the filter holds exactly.
    #[must_use]
    pub fn bumped_keys(&self) -> usize {
        self.bumped.hashes().len()
    }

    /// Reads the bumped section: a count, then that many remixed hashes,
    /// strictly ascending, filling the rest of the encoding exactly.
    fn read_bumped(r: &mut Reader<'_>, keys: u32) -> Result<Vec<u64>> {
        let at = r.position() as u64;
        let count = r.u32()?;
        if count as usize > max_bumped(keys as usize) || r.remaining() != 8 * count as usize {
            return Err(Error::corruption(
                at,
                format!("{count} bumped keys of {keys}, in {} bytes", r.remaining()),
            ));
        }
        let hashes = (0..count).map(|_| r.u64()).collect::<Result<Vec<u64>>>()?;
        if hashes.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Error::corruption(at + 4, "bumped keys out of order"));
        }
        Ok(hashes)
    }

    /// The bits of an encoding for about `keys` keys at `bits_per_key`,
    /// averaged over key counts near it: every build stores the nominal
    /// columns in each of `⌈keys·(1 + MARGIN)/128⌉` blocks, and that
    /// rounding up to a whole block is taken as half a block. A planner
    /// pricing tables whose sizes vary (a compaction's last output is short)
    /// wants this, not one key count's exact price.
    #[expect(clippy::cast_precision_loss, reason = "small constants")]
    pub(crate) fn expected_encoded_bits(keys: f64, bits_per_key: f64) -> f64 {
        let n = keys.max(1.0);
        let blocks = f64::max(1.0, n * (1.0 + MARGIN) / f64::from(WIDTH) + 0.5);
        let fixed =
            (Self::encoded_bytes(&RibbonLayout { blocks: 1, lower: 0, upper_start: 1 }, 0) * 8) as f64;
        fixed + f64::from(WIDTH) * layout::nominal_columns(bits_per_key) * blocks
    }

    /// Bytes of an encoding of `layout`.
    fn encoded_bytes(layout: &RibbonLayout, bumped: usize) -> usize {
        HEADER_LEN + 16 * layout.words() + 4 + 8 * bumped + 4
    }

    /// Parses an encoding, viewing the solution in place inside `shared`
    /// where it lies there aligned (see [`ZeroedBuf::view`]), else copying it
    /// with the zero padding queries read past the last block.
    fn decode_in(bytes: &[u8], shared: Option<&Bytes>) -> Result<Self> {
        let mut r = Reader::new(unseal(bytes)?);

        let found = r.u8()?;
        if found != KIND_BYTE {
            return Err(Error::corruption(0, format!("kind {found:#04x} is not ribbon")));
        }
        let version = r.u8()?;
        if version != 1 && version != VERSION {
            return Err(Error::corruption(1, format!("unknown ribbon filter version {version}")));
        }
        let seed = r.u64()?;
        let keys = r.u32()?;
        let blocks = r.u32()?;
        let lower = r.u8()?;
        let upper_start = r.u32()?;
        let layout = RibbonLayout::new(blocks, u32::from(lower), upper_start).ok_or_else(|| {
            Error::corruption(
                14,
                format!("impossible geometry: {blocks} blocks, {lower} columns, upper from {upper_start}"),
            )
        })?;
        if keys as usize > layout.slots() {
            return Err(Error::corruption(10, format!("{keys} keys cannot fit {} slots", layout.slots())));
        }
        // Every build stores at least about one column (1 bit/key at the
        // least): fewer than half a word a block is damage, and refusing it
        // keeps what decoding allocates (the bumped keys' block bits) in
        // proportion to the bytes it was given.
        if 2 * layout.words() < layout.blocks as usize {
            return Err(Error::corruption(
                18,
                format!("{} solution words for {blocks} blocks: under half a column", layout.words()),
            ));
        }
        let at = r.position() as u64;
        let expected = 16 * layout.words();
        let tail = if version == 1 { 0 } else { 4 };
        if r.remaining() < expected + tail || (version == 1 && r.remaining() != expected) {
            return Err(Error::corruption(
                at,
                format!("solution takes {} bytes, the geometry needs {expected}", r.remaining()),
            ));
        }
        let solution = r.bytes(expected)?;
        let words = shared.and_then(|s| ZeroedBuf::view(s, solution)).unwrap_or_else(|| {
            let mut words = ZeroedBuf::kept(layout.words() + MAX_COLUMNS as usize);
            for (w, c) in words.iter_mut().zip(solution.chunks_exact(16)) {
                *w = u128::from_le_bytes(c.try_into().unwrap_or([0; 16]));
            }
            words
        });
        let bumped = if version == 1 { Vec::new() } else { Self::read_bumped(&mut r, keys)? };
        let bumped = Bumped::new(bumped, &layout);
        Ok(Ribbon { seed, keys, layout, words, bumped })
    }

    /// Flips a solution bit that `hash`'s query reads (tests of validation).
    #[cfg(test)]
    pub(crate) fn damage_for(&mut self, hash: u64) {
        let e = self.layout.equation(remix(hash, self.seed));
        let first = self.layout.first_word(e.start / WIDTH);
        self.words[first] ^= 1u128 << (e.start % WIDTH);
    }
}

impl Filter for Ribbon {
    #[inline]
    fn contains(&self, hash: u64) -> bool {
        self.dispatch(query::One(remix(hash, self.seed)))
    }

    /// One check of the CPU's features for the whole batch, and the loop
    /// compiled with the query for them: no call a key.
    fn contains_batch(&self, hashes: &[u64], out: &mut Vec<bool>) {
        out.clear();
        self.dispatch(query::Batch { hashes, out });
    }

    #[inline]
    fn prefetch(&self, hash: u64) {
        let block = self.layout.equation(remix(hash, self.seed)).start / WIDTH;
        let first = self.layout.first_word(block);
        // The first group's reads: eight words from each block, so
        // `first..next + 8`, a line every four words and the last one's.
        let end = first + self.layout.columns(block) as usize + 8;
        for at in (first..end).step_by(4).chain([end - 1]) {
            if let Some(w) = self.words.get(at) {
                super::prefetch::line(w);
            }
        }
    }

    fn size_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + 16 * self.layout.words() + self.bumped.size_bytes()
    }

    fn theoretical_fpr(&self) -> f64 {
        self.layout.theoretical_fpr()
    }
}

impl FilterCodec for Ribbon {
    /// Serialises the filter (format in the module docs).
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(Self::encoded_bytes(&self.layout, self.bumped_keys()));
        out.push(KIND_BYTE);
        out.push(VERSION);
        out.extend_from_slice(&self.seed.to_le_bytes());
        out.extend_from_slice(&self.keys.to_le_bytes());
        out.extend_from_slice(&self.layout.blocks.to_le_bytes());
        #[expect(clippy::cast_possible_truncation, reason = "at most 32 columns")]
        out.push(self.layout.lower as u8);
        out.extend_from_slice(&self.layout.upper_start.to_le_bytes());
        for w in &self.words[..self.layout.words()] {
            out.extend_from_slice(&w.to_le_bytes());
        }
        #[expect(clippy::cast_possible_truncation, reason = "at most one key in 500 of a u32 count")]
        out.extend_from_slice(&(self.bumped_keys() as u32).to_le_bytes());
        for h in self.bumped.hashes() {
            out.extend_from_slice(&h.to_le_bytes());
        }
        seal(out)
    }

    /// Parses an encoding of this type.
    ///
    /// # Errors
    /// `Corruption` for bytes that are not a valid encoding of this type.
    fn decode(bytes: &[u8]) -> Result<Self> {
        Self::decode_in(bytes, None)
    }

    /// Reads the solution in place from `shared` when it is aligned there
    /// (a format-4 table's filter block), else copies it.
    fn decode_shared(shared: &Bytes) -> Result<Self> {
        Self::decode_in(shared, Some(shared))
    }

    fn in_place(&self) -> Option<&[u8]> {
        self.words.shared()
    }

    /// The length of [`FilterCodec::encode`] for `keys` distinct keys at
    /// `bits_per_key`, without building it, if no key is bumped (each adds
    /// 8 bytes, at most one key in 500); `None` beyond 2^31 keys.
    fn encoded_len(keys: usize, bits_per_key: f64) -> Option<usize> {
        Some(Self::encoded_bytes(&Self::layout_for(keys, bits_per_key)?, 0))
    }

    fn array_offset(&self) -> Option<usize> {
        Some(HEADER_LEN)
    }

    fn parameters(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("filter_seed", self.seed),
            ("keys", u64::from(self.keys)),
            ("width", u64::from(WIDTH)),
            ("blocks", u64::from(self.layout.blocks)),
            ("slots", self.slots() as u64),
            ("lower_columns", u64::from(self.layout.lower)),
            ("upper_start_block", u64::from(self.layout.upper_start)),
            ("solution_words", self.layout.words() as u64),
            ("bumped_keys", self.bumped_keys() as u64),
        ]
    }
}

/// The expected rate of a large Ribbon filter at `bits_per_key`
/// ([`FilterKind::theoretical_fpr`](super::FilterKind::theoretical_fpr)):
/// the column mix its layout takes, with starts spread evenly over blocks.
fn nominal_fpr(bits_per_key: f64) -> f64 {
    let columns = layout::nominal_columns(bits_per_key);
    let k = columns.floor();
    (-k).exp2() * (1.0 - (columns - k) / 2.0)
}

/// The table filter kind `ribbon:B`: filter-block tag 7.
pub(crate) static KIND: KindSpec = KindSpec {
    tag: 7,
    name: "ribbon",
    aliases: &[],
    is_static: true,
    max_bits_per_key: 32.0,
    nominal_bits_per_key: |bits_per_key| bits_per_key,
    theoretical_fpr: nominal_fpr,
    encoded_len: <Ribbon as FilterCodec>::encoded_len,
    build: |hashes, bits_per_key, _carry| Ok(Box::new(Ribbon::build(hashes, bits_per_key)?)),
    decode: decoder::<Ribbon>,
};
