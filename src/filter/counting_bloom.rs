//! Counting Bloom filter with 4-bit saturating counters.
//!
//! The layout and probes of [`super::Bloom`] with each bit replaced by a
//! 4-bit counter (two per byte), so keys can be removed. A counter that
//! reaches 15 is never changed again: it no longer knows how many keys
//! share it, and decrementing it could reach 0 while a key still needs it.
//! Below 15 a counter holds exactly the number of (present key, probe) pairs
//! that hit it, so a present key never reads a zero counter: no false
//! negatives, whatever the insert/remove order.
//!
//! Removing a hash that was never inserted (or removing it more times than
//! it was inserted) is the caller's hazard: it decrements counters other
//! keys rely on and can make them answer `false`. It never panics, and a
//! counter at 0 stays at 0.
//!
//! With 4 bits per counter, overflow needs 15 hits on one counter; at 10
//! counters per key and k = 7 the hits per counter are Poisson with mean
//! 0.7, so a counter saturates with probability about 1e-14.
//!
//! # Encoding
//!
//! The shared Bloom header of [`super::Bloom`] with kind 3:
//!
//! ```text
//! offset  size            field
//! 0       4               magic b"SFBL"
//! 4       1               version = 1
//! 5       1               kind = 3
//! 6       1               k, 1..=30
//! 7       1               reserved, 0
//! 8       8               counters m (≥ 64)
//! 16      8               keys present (inserts − removes)
//! 24      ceil(m/2)       byte j: counter 2j in bits 0..4, counter 2j+1 in bits 4..8
//!                         (the unused high nibble of an odd m is 0)
//! end-4   4               crc32 of everything before it
//! ```

use super::bloom::{
    FRAME_BYTES, Header, Variant, classic_fpr, classic_probes, in_filter, probe_positions, put_header,
    read_header, scaled_size, try_zeroed,
};
use super::kind::check_bits_per_key;
use super::zeroed_buf::ZeroedBuf;
use super::{Filter, FilterCodec};
use crate::codec::seal;
use crate::{Error, Result};

/// The sticky maximum of a 4-bit counter.
const SATURATED: u8 = 15;

/// Counting Bloom filter with 4-bit saturating counters.
///
/// ```
/// use siftdb::filter::{hash_key, CountingBloom, Filter};
/// let mut f = CountingBloom::new(100, 10.0);
/// let (a, b) = (hash_key(0, b"a"), hash_key(0, b"b"));
/// f.insert(a);
/// f.insert(b);
/// f.remove(a);
/// assert!(f.contains(b));
/// ```
#[derive(Debug, Clone)]
pub struct CountingBloom {
    nibbles: ZeroedBuf<u8>,
    counters: u64,
    k: u32,
    keys: u64,
}

impl CountingBloom {
    /// A filter sized for `expected_keys` at `bits_per_key`, counted as in
    /// [`super::Bloom::new`]: m = ceil(n · bpk) counters (at least 64),
    /// k = round(bpk · ln 2). Memory is 4 bits per counter. The checked
    /// constructor.
    ///
    /// # Errors
    /// `InvalidArgument` for `bits_per_key` outside
    /// [`MIN_BITS_PER_KEY`](super::MIN_BITS_PER_KEY)..=[`MAX_BITS_PER_KEY`](super::MAX_BITS_PER_KEY)
    /// (NaN and infinities included), or a size the allocator refuses.
    pub fn try_new(expected_keys: usize, bits_per_key: f64) -> Result<Self> {
        check_bits_per_key(bits_per_key).map_err(|e| in_filter("counting Bloom filter", e))?;
        let counters = scaled_size(expected_keys, bits_per_key).max(64);
        let bytes = usize::try_from(counters.div_ceil(2)).unwrap_or(usize::MAX);
        let nibbles = try_zeroed(bytes, "counting Bloom filter")?;
        Ok(CountingBloom { nibbles, counters, k: classic_probes(bits_per_key), keys: 0 })
    }

    /// As [`CountingBloom::try_new`], unchecked: any `bits_per_key` is taken
    /// as given, and a size past memory aborts the process on allocation;
    /// take [`CountingBloom::try_new`] for input from users.
    #[must_use]
    pub fn new(expected_keys: usize, bits_per_key: f64) -> Self {
        let counters = scaled_size(expected_keys, bits_per_key).max(64);
        let bytes = usize::try_from(counters.div_ceil(2)).unwrap_or(usize::MAX);
        CountingBloom { nibbles: ZeroedBuf::kept(bytes), counters, k: classic_probes(bits_per_key), keys: 0 }
    }

    /// Applies `step` to each of `hash`'s counters.
    #[inline]
    fn update(&mut self, hash: u64, step: impl Fn(u8) -> u8) {
        for pos in probe_positions(hash, self.k, self.counters) {
            let shift = (pos & 1) * 4;
            if let Some(byte) = usize::try_from(pos >> 1).ok().and_then(|i| self.nibbles.get_mut(i)) {
                let old = (*byte >> shift) & 0xf;
                let new = step(old) & 0xf;
                *byte = (*byte & !(0xf << shift)) | (new << shift);
            }
        }
    }

    /// Adds a hash.
    pub fn insert(&mut self, hash: u64) {
        self.update(hash, |c| if c == SATURATED { c } else { c + 1 });
        self.keys = self.keys.saturating_add(1);
    }

    /// Removes a hash. Removing a hash never inserted is the caller's hazard
    /// (other keys may then read as absent); it never panics.
    pub fn remove(&mut self, hash: u64) {
        self.update(hash, |c| if c == SATURATED { c } else { c.saturating_sub(1) });
        self.keys = self.keys.saturating_sub(1);
    }

    /// Probes per key.
    #[must_use]
    pub fn num_probes(&self) -> u32 {
        self.k
    }

    /// Counters in the filter.
    #[must_use]
    pub fn num_counters(&self) -> u64 {
        self.counters
    }

    /// Counters stuck at 15, for inspection: each one can no longer be cleared.
    #[must_use]
    pub fn saturated_counters(&self) -> u64 {
        self.nibbles.iter().map(|&b| u64::from(b & 0xf == SATURATED) + u64::from(b >> 4 == SATURATED)).sum()
    }

    /// Keys present: inserts minus removes (duplicates counted).
    #[must_use]
    pub fn keys_inserted(&self) -> u64 {
        self.keys
    }

    /// Counters per present key, the constructor's `bits_per_key` (memory
    /// is four times this); infinite when empty.
    #[must_use]
    #[expect(clippy::cast_precision_loss, reason = "a ratio for display and theory")]
    pub fn bits_per_key(&self) -> f64 {
        self.counters as f64 / self.keys as f64
    }
}

impl FilterCodec for CountingBloom {
    /// Serialises the filter (format in the module doc).
    fn encode(&self) -> Vec<u8> {
        let header = Header { k: self.k, size: self.counters, keys: self.keys };
        let mut out = put_header(Variant::Counting, header, self.nibbles.len());
        out.extend_from_slice(&self.nibbles);
        seal(out)
    }

    /// Parses an encoded filter.
    ///
    /// # Errors
    /// `Corruption` for bytes that are not a valid encoding.
    fn decode(bytes: &[u8]) -> Result<Self> {
        let (h, mut r) = read_header(bytes, Variant::Counting, |m| usize::try_from(m.div_ceil(2)).ok())?;
        if h.size < 64 {
            return Err(Error::corruption(8, format!("{} counters is below the minimum of 64", h.size)));
        }
        let at = r.position();
        let nibbles = ZeroedBuf::from_slice(r.bytes(r.remaining())?);
        if h.size % 2 == 1 && nibbles.last().is_some_and(|&b| b >> 4 != 0) {
            return Err(Error::corruption((at + nibbles.len() - 1) as u64, "counter set past the end"));
        }
        Ok(CountingBloom { nibbles, counters: h.size, k: h.k, keys: h.keys })
    }

    /// The length of `CountingBloom::new(expected_keys, bits_per_key).encode()`:
    /// one 4-bit counter per bit a Bloom filter would have.
    fn encoded_len(expected_keys: usize, bits_per_key: f64) -> Option<usize> {
        let counters = scaled_size(expected_keys, bits_per_key).max(64);
        Some(FRAME_BYTES + usize::try_from(counters.div_ceil(2)).ok()?)
    }

    fn parameters(&self) -> Vec<(&'static str, u64)> {
        vec![("probes", u64::from(self.k)), ("counters", self.counters), ("keys_inserted", self.keys)]
    }
}

impl Filter for CountingBloom {
    #[inline]
    fn contains(&self, hash: u64) -> bool {
        probe_positions(hash, self.k, self.counters).all(|pos| {
            usize::try_from(pos >> 1)
                .ok()
                .and_then(|i| self.nibbles.get(i))
                .is_none_or(|&b| (b >> ((pos & 1) * 4)) & 0xf != 0)
        })
    }

    fn size_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.nibbles.len()
    }

    fn theoretical_fpr(&self) -> f64 {
        classic_fpr(self.k, self.keys, self.counters)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::bloom::filled;
    use crate::filter::bloom::tests::{hashes, measured_fpr};
    use crate::filter::codec_tests::{all_corruption, resealed, round_trip_and_sweep};
    use proptest::prelude::*;
    use std::collections::HashMap;

    #[test]
    fn no_false_negatives_small_and_duplicate_sets() {
        for n in [0, 1, 2, 500] {
            let mut f = CountingBloom::new(n, 10.0);
            let hs = hashes(n as u64 + 20, n);
            for &h in &hs {
                f.insert(h);
                f.insert(h);
            }
            assert!(hs.iter().all(|&h| f.contains(h)));
            // One of the two copies removed: still present.
            for &h in &hs {
                f.remove(h);
            }
            assert!(hs.iter().all(|&h| f.contains(h)));
            for &h in &hs {
                f.remove(h);
            }
            assert_eq!(f.keys_inserted(), 0);
            assert!(f.nibbles.iter().all(|&b| b == 0), "every counter back to zero");
        }
    }

    #[test]
    fn removing_half_keeps_the_rest_and_fpr_tracks_bloom_theory() {
        let n = 1_000_000;
        let hs = hashes(7, n);
        let mut f = filled(CountingBloom::new(n, 10.0), &hs, CountingBloom::insert);
        assert!(hs.iter().all(|&h| f.contains(h)));
        let (theory, measured) = (f.theoretical_fpr(), measured_fpr(&f, 1_000_000));
        assert!((theory - 0.008_19).abs() < 0.000_05, "{theory}");
        assert!((measured / theory - 1.0).abs() < 0.10, "measured {measured} theory {theory}");
        let (gone, kept) = hs.split_at(n / 2);
        for &h in gone {
            f.remove(h);
        }
        assert!(kept.iter().all(|&h| f.contains(h)));
        assert_eq!(f.keys_inserted(), (n / 2) as u64);
        // Half the keys at the same size: the rate drops to the 20-bit/key figure.
        let (theory, measured) = (f.theoretical_fpr(), measured_fpr(&f, 1_000_000));
        assert!(theory < 0.000_7, "{theory}");
        assert!((measured / theory - 1.0).abs() < 0.25, "measured {measured} theory {theory}");
        assert_eq!(f.saturated_counters(), 0);
    }

    #[test]
    fn saturated_counters_never_lose_a_key() {
        let mut f = CountingBloom::new(10, 10.0);
        let h = hashes(8, 1)[0];
        for _ in 0..20 {
            f.insert(h);
        }
        assert!(f.saturated_counters() >= 1);
        for _ in 0..20 {
            f.remove(h);
        }
        assert!(f.contains(h), "saturated counters stay at 15");
        // Removing what was never inserted must not panic or wrap below zero.
        let mut g = CountingBloom::new(10, 10.0);
        for h in hashes(9, 100) {
            g.remove(h);
        }
        assert!(g.nibbles.iter().all(|&b| b == 0));
        assert_eq!(g.keys_inserted(), 0);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn matches_a_multiset_model(ops in proptest::collection::vec((0usize..24, any::<bool>()), 0..300)) {
            // 24 keys in 64 counters at k = 3: heavy sharing and some saturation.
            let pool = hashes(10, 24);
            let mut f = CountingBloom::new(16, 4.0);
            let mut model: HashMap<usize, u32> = HashMap::new();
            for (key, insert) in ops {
                let count = model.entry(key).or_default();
                if insert {
                    f.insert(pool[key]);
                    *count += 1;
                } else if *count > 0 {
                    f.remove(pool[key]);
                    *count -= 1;
                }
                for (&k, &c) in &model {
                    prop_assert!(c == 0 || f.contains(pool[k]), "key {k} present {c} times reads absent");
                }
            }
            prop_assert_eq!(f.keys_inserted(), model.values().map(|&c| u64::from(c)).sum::<u64>());
        }
    }

    #[test]
    fn round_trip_and_corruption_sweep() {
        let mut f = CountingBloom::new(13, 5.0); // 65 counters: odd, the last nibble unused
        let hs = hashes(11, 13);
        for &h in &hs {
            f.insert(h);
        }
        let g: CountingBloom = round_trip_and_sweep(&f.encode(), &hs);
        assert_eq!((g.num_counters(), g.num_probes(), g.keys_inserted()), (65, 3, 13));
    }

    #[test]
    fn decode_rejects_sealed_but_invalid_headers() {
        let f = CountingBloom::new(13, 5.0);
        let enc = f.encode();
        let body = |edit: &dyn Fn(&mut Vec<u8>)| resealed(&enc, edit);
        let cases: Vec<(&str, Vec<u8>)> = vec![
            ("k = 0", body(&|b| b[6] = 0)),
            ("kind", body(&|b| b[5] = 1)),
            ("reserved", body(&|b| b[7] = 1)),
            ("huge counter count", body(&|b| b[8..16].copy_from_slice(&u64::MAX.to_le_bytes()))),
            ("counter past the end", body(&|b| *b.last_mut().unwrap() = 0x10)),
            (
                "too few counters",
                body(&|b| {
                    b.truncate(24 + 1);
                    b[8..16].copy_from_slice(&2u64.to_le_bytes());
                }),
            ),
        ];
        all_corruption::<CountingBloom>(cases);
    }
}
