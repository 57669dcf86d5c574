//! The packed bucket array: four `f`-bit slots per bucket, no padding.
//!
//! Bucket `b` occupies bits `[4·f·b, 4·f·(b+1))` of a little-endian bit
//! string. Since `4·f ≤ 64` and a bucket starts on a bit offset that is a
//! multiple of 4, every bucket lies inside the 64-bit window that starts at
//! byte `4·f·b / 8`: one unaligned load reads it whole. Seven zero bytes of
//! tail padding keep the window of the last bucket in bounds.
//!
//! A slot holding 0 is empty; fingerprints are never 0.

/// Slots per bucket.
pub(super) const LANES: u32 = 4;
/// [`LANES`] as a `usize`.
pub(super) const SLOTS: usize = LANES as usize;

/// Tail padding so the last bucket's 8-byte window stays in bounds.
const PAD: usize = 7;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Buckets {
    /// `data_len(num_buckets, f)` bytes of packed buckets, then `PAD` zeros.
    bytes: Vec<u8>,
    count: usize,
    f: u32,
    /// Mask of one bucket's `4·f` bits.
    bucket_mask: u64,
    /// Mask of one slot's `f` bits.
    slot_mask: u64,
    /// Bit 0 of every slot: `fp * ones` replicates a fingerprint into each lane.
    ones: u64,
    /// The top bit of every slot.
    highs: u64,
}

impl Buckets {
    /// Bytes the packed buckets take on disk and in memory (padding excluded).
    /// `None` if that does not fit in a `usize`.
    pub(super) fn data_len(num_buckets: usize, f: u32) -> Option<usize> {
        let bits = num_buckets.checked_mul(SLOTS * f as usize)?;
        Some(bits.div_ceil(8))
    }

    /// Empty buckets. The caller has checked `data_len` and `f` in 4..=16.
    pub(super) fn new(num_buckets: usize, f: u32) -> Self {
        let len = Self::data_len(num_buckets, f).unwrap_or(0);
        Self::from_data(vec![0; len + PAD], num_buckets, f)
    }

    /// Buckets over `data` (exactly `data_len` bytes, as written by [`Self::data`]).
    pub(super) fn from_bytes(data: &[u8], num_buckets: usize, f: u32) -> Self {
        let mut bytes = Vec::with_capacity(data.len() + PAD);
        bytes.extend_from_slice(data);
        bytes.resize(data.len() + PAD, 0);
        Self::from_data(bytes, num_buckets, f)
    }

    fn from_data(bytes: Vec<u8>, num_buckets: usize, f: u32) -> Self {
        let bucket_bits = LANES * f;
        let ones = (0..LANES).fold(0u64, |acc, j| acc | 1 << (j * f));
        Buckets {
            bytes,
            count: num_buckets,
            f,
            bucket_mask: u64::MAX >> (64 - bucket_bits),
            slot_mask: (1 << f) - 1,
            ones,
            highs: ones << (f - 1),
        }
    }

    /// The packed buckets without padding, for encoding.
    pub(super) fn data(&self) -> &[u8] {
        let len = self.bytes.len().saturating_sub(PAD);
        self.bytes.get(..len).unwrap_or(&[])
    }

    /// Heap bytes held.
    pub(super) fn heap_bytes(&self) -> usize {
        self.bytes.capacity()
    }

    /// Byte offset and bit shift of bucket `b`'s window.
    #[inline]
    #[expect(clippy::cast_possible_truncation, reason = "bit & 7 < 8")]
    fn locate(&self, b: usize) -> (usize, u32) {
        let bit = b * SLOTS * self.f as usize;
        (bit >> 3, (bit & 7) as u32)
    }

    /// Bucket `b` as a `4·f`-bit word, slot `j` in bits `[j·f, (j+1)·f)`.
    #[inline]
    pub(super) fn get(&self, b: usize) -> u64 {
        let (at, shift) = self.locate(b);
        // `b < num_buckets` always (indexes are masked), so the window is in
        // bounds by construction; the fallback is unreachable, not a guess.
        match self.bytes.get(at..).and_then(<[u8]>::first_chunk::<8>) {
            Some(w) => (u64::from_le_bytes(*w) >> shift) & self.bucket_mask,
            None => 0,
        }
    }

    fn set(&mut self, b: usize, word: u64) {
        let (at, shift) = self.locate(b);
        let mask = self.bucket_mask << shift;
        if let Some(w) = self.bytes.get_mut(at..).and_then(<[u8]>::first_chunk_mut::<8>) {
            let old = u64::from_le_bytes(*w);
            *w = ((old & !mask) | ((word << shift) & mask)).to_le_bytes();
        }
    }

    #[inline]
    fn slot(&self, word: u64, j: u32) -> u16 {
        // A slot is f ≤ 16 bits wide, so the masked value fits.
        #[expect(clippy::cast_possible_truncation, reason = "masked to f <= 16 bits")]
        let fp = ((word >> (j * self.f)) & self.slot_mask) as u16;
        fp
    }

    fn with_slot(&self, word: u64, j: u32, fp: u16) -> u64 {
        let shift = j * self.f;
        (word & !(self.slot_mask << shift)) | (u64::from(fp) << shift)
    }

    /// Whether bucket `b` holds `fp`: one SWAR test over all four lanes.
    ///
    /// `(x - ones) & !x & highs` is nonzero exactly when some lane of `x` is
    /// zero: with no zero lane nothing borrows, and the lowest zero lane
    /// receives no borrow and sets its high bit.
    #[inline]
    pub(super) fn holds(&self, b: usize, fp: u16) -> bool {
        let x = self.get(b) ^ (u64::from(fp) * self.ones);
        x.wrapping_sub(self.ones) & !x & self.highs != 0
    }

    /// Puts `fp` into an empty slot of bucket `b`; whether there was one.
    pub(super) fn try_put(&mut self, b: usize, fp: u16) -> bool {
        let word = self.get(b);
        for j in 0..LANES {
            if self.slot(word, j) == 0 {
                self.set(b, self.with_slot(word, j, fp));
                return true;
            }
        }
        false
    }

    /// Writes `fp` into slot `j` of bucket `b` and returns what was there.
    pub(super) fn swap(&mut self, b: usize, j: u32, fp: u16) -> u16 {
        let word = self.get(b);
        let old = self.slot(word, j);
        self.set(b, self.with_slot(word, j, fp));
        old
    }

    /// Clears one slot of bucket `b` holding `fp`; whether one did.
    pub(super) fn remove_one(&mut self, b: usize, fp: u16) -> bool {
        let word = self.get(b);
        for j in 0..LANES {
            if self.slot(word, j) == fp {
                self.set(b, self.with_slot(word, j, 0));
                return true;
            }
        }
        false
    }

    /// Occupied slots in the whole array.
    pub(super) fn count_occupied(&self) -> usize {
        (0..self.count)
            .map(|b| {
                let word = self.get(b);
                (0..LANES).filter(|&j| self.slot(word, j) != 0).count()
            })
            .sum()
    }
}
