//! Cuckoo filter: 4-slot buckets, partial-key cuckoo hashing, a stash.
//!
//! A key's 64-bit hash `h` gives a fingerprint and two candidate buckets:
//!
//! - `fp = 1 + ((h >> 32) · (2^f − 1)) >> 32`, uniform on `1..2^f` (0 marks
//!   an empty slot), from the high 32 bits by multiply-shift range reduction;
//! - `i1 = h & (buckets − 1)`, from the low bits (the bucket count is a power
//!   of two, at most 2^32, so the two never share bits);
//! - `i2 = i1 ⊕ (mix(fp) & (buckets − 1))`, where `mix` is one multiply and a
//!   fold. Because `⊕` is an involution, either bucket and the fingerprint
//!   give the other, which is what lets an entry move without its key.
//!
//! An insert takes a free slot in `i1` or `i2`; failing that it evicts a
//! victim chosen by a xorshift generator seeded from the hash (deterministic,
//! no state between inserts) and moves it to its other bucket, up to
//! [`CuckooFilter::MAX_KICKS`] times. An entry still homeless after that goes
//! to a stash of at most [`CuckooFilter::STASH_CAPACITY`] entries; if the
//! stash is full the kick chain is replayed backwards, so the filter is
//! exactly as before, and the insert returns [`Full`]. No entry is ever dropped.
//!
//! A lookup reads two buckets (one unaligned 64-bit load each, a SWAR lane
//! compare) and consults the stash only when it is non-empty.
//!
//! False-positive rate at load `α` (occupied slots over slots): a lookup
//! compares its fingerprint against the `2·4·α` occupied slots of its two
//! buckets on average, each matching with probability `1/(2^f − 1)`, so
//! `ε = 1 − (1 − 1/(2^f − 1))^(8α) ≈ 8α / 2^f`. At 95% load that is 2.9% for
//! f = 8, 0.19% for f = 12 and 0.012% for f = 16.
//!
//! Space is exactly `4·f` bits per bucket plus a 7-byte tail; see
//! `format` for the encoding.
//!
//! ```
//! use siftdb::filter::{hash_key, CuckooFilter, Filter};
//! let mut f = CuckooFilter::new(1000, 12).unwrap();
//! f.insert(hash_key(7, b"apple")).unwrap();
//! assert!(f.contains(hash_key(7, b"apple")));
//! assert!(f.remove(hash_key(7, b"apple")));
//! assert!(!f.contains(hash_key(7, b"apple")));
//! ```

mod buckets;
mod format;
#[cfg(test)]
mod tests;

use buckets::{Buckets, LANES, SLOTS};

use super::{Filter, Full};
use crate::{Error, Result};

/// Target load when sizing from a capacity.
const SIZING_LOAD: f64 = 0.95;

/// An odd constant (from `MurmurHash2`) to remix a fingerprint into a bucket offset.
const FP_MIX: u64 = 0xc6a4_a793_5bd1_e995;

/// A homeless entry: the bucket it was last evicted towards, and its fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct StashEntry {
    bucket: usize,
    fp: u16,
}

/// Cuckoo filter: 4-slot buckets, partial-key cuckoo hashing, a stash.
///
/// A multiset: inserting a hash twice stores two copies and [`remove`]
/// removes one. Only remove hashes that were inserted: removing a hash that
/// merely reads as present (a false positive) deletes another key's entry.
///
/// [`remove`]: CuckooFilter::remove
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CuckooFilter {
    buckets: Buckets,
    /// `num_buckets − 1`.
    mask: u64,
    fingerprint_bits: u32,
    /// Entries in buckets and stash.
    len: usize,
    stash: Vec<StashEntry>,
}

impl CuckooFilter {
    /// Kicks before an insert gives up on the table and tries the stash.
    pub const MAX_KICKS: usize = 500;
    /// Entries the stash holds at most.
    pub const STASH_CAPACITY: usize = 4;
    /// Narrowest supported fingerprint.
    pub const MIN_FINGERPRINT_BITS: u32 = 4;
    /// Widest supported fingerprint.
    pub const MAX_FINGERPRINT_BITS: u32 = 16;
    /// Most buckets a filter may have: the bucket index takes the hash's low
    /// 32 bits and the fingerprint its high 32, so they stay independent.
    pub const MAX_BUCKETS: u64 = 1 << 32;
}

impl CuckooFilter {
    /// A filter for `capacity` keys with `fingerprint_bits`-bit fingerprints.
    ///
    /// The bucket count is the power of two at or above
    /// `capacity / (4 · 0.95)` (at least 1), so `capacity` keys fit at no
    /// more than 95% load; rounding up means the real ceiling lies between
    /// `capacity` and about `2·capacity`.
    ///
    /// # Errors
    /// `InvalidArgument` for fingerprint widths outside 4..=16, or a capacity
    /// needing more than [`Self::MAX_BUCKETS`] buckets.
    pub fn new(capacity: usize, fingerprint_bits: u32) -> Result<Self> {
        if !(Self::MIN_FINGERPRINT_BITS..=Self::MAX_FINGERPRINT_BITS).contains(&fingerprint_bits) {
            return Err(Error::InvalidArgument(format!(
                "cuckoo filter fingerprints must be {} to {} bits, got {fingerprint_bits}",
                Self::MIN_FINGERPRINT_BITS,
                Self::MAX_FINGERPRINT_BITS
            )));
        }
        let too_big = || {
            Error::InvalidArgument(format!(
                "cuckoo filter capacity {capacity} needs more than {} buckets",
                Self::MAX_BUCKETS
            ))
        };
        #[expect(clippy::cast_precision_loss, reason = "sizing only needs an estimate")]
        let (wanted, max) =
            ((capacity as f64 / (f64::from(LANES) * SIZING_LOAD)).ceil(), Self::MAX_BUCKETS as f64);
        if wanted > max {
            return Err(too_big());
        }
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "non-negative and at most MAX_BUCKETS, checked above"
        )]
        let num_buckets = (wanted as usize).max(1).checked_next_power_of_two().ok_or_else(too_big)?;
        if num_buckets as u64 > Self::MAX_BUCKETS
            || Buckets::data_len(num_buckets, fingerprint_bits).is_none()
        {
            return Err(too_big());
        }
        Ok(Self::with_buckets(Buckets::new(num_buckets, fingerprint_bits), num_buckets, fingerprint_bits))
    }

    fn with_buckets(buckets: Buckets, num_buckets: usize, fingerprint_bits: u32) -> Self {
        CuckooFilter { buckets, mask: num_buckets as u64 - 1, fingerprint_bits, len: 0, stash: Vec::new() }
    }

    /// The fingerprint and first bucket of `hash`.
    #[inline]
    fn fingerprint_and_bucket(&self, hash: u64) -> (u16, usize) {
        let range = (1u64 << self.fingerprint_bits) - 1;
        #[expect(clippy::cast_possible_truncation, reason = "(hi32 · range) >> 32 < range < 2^16")]
        let fp = 1 + (((hash >> 32) * range) >> 32) as u16;
        (fp, self.bucket_index(hash))
    }

    #[inline]
    #[expect(clippy::cast_possible_truncation, reason = "masked below num_buckets, a usize")]
    fn bucket_index(&self, x: u64) -> usize {
        (x & self.mask) as usize
    }

    /// The other bucket of an entry with fingerprint `fp` sitting in bucket `b`.
    #[inline]
    fn alt(&self, b: usize, fp: u16) -> usize {
        let m = u64::from(fp).wrapping_mul(FP_MIX);
        b ^ self.bucket_index(m ^ (m >> 32))
    }

    /// Adds a hash. Adding it again stores a second copy.
    ///
    /// # Errors
    /// [`Full`] when no slot could be freed and the stash is full; the filter
    /// is then exactly as it was before the call.
    pub fn insert(&mut self, hash: u64) -> std::result::Result<(), Full> {
        let (fp, i1) = self.fingerprint_and_bucket(hash);
        let i2 = self.alt(i1, fp);
        if self.buckets.try_put(i1, fp) || self.buckets.try_put(i2, fp) {
            self.len += 1;
            return Ok(());
        }
        let mut rng = xorshift(hash ^ 0x9e37_79b9_7f4a_7c15 | 1);
        let mut b = if rng & 1 == 0 { i1 } else { i2 };
        let mut homeless = fp;
        // Slots chosen at each kick; buckets are recomputed when undoing.
        let mut chosen = [0u8; Self::MAX_KICKS];
        for slot_log in &mut chosen {
            rng = xorshift(rng);
            let j = (rng >> 62) as u8;
            homeless = self.buckets.swap(b, u32::from(j), homeless);
            *slot_log = j;
            b = self.alt(b, homeless);
            if self.buckets.try_put(b, homeless) {
                self.len += 1;
                return Ok(());
            }
        }
        if self.stash.len() < Self::STASH_CAPACITY {
            self.stash.push(StashEntry { bucket: b, fp: homeless });
            self.len += 1;
            return Ok(());
        }
        // Replay the chain backwards: `homeless` was evicted from the other
        // bucket of `b`, out of the slot logged for that kick.
        for &j in chosen.iter().rev() {
            b = self.alt(b, homeless);
            homeless = self.buckets.swap(b, u32::from(j), homeless);
        }
        debug_assert_eq!(homeless, fp, "undoing the kick chain must give back the new fingerprint");
        Err(Full)
    }

    /// Removes one copy of a hash; whether one was found.
    ///
    /// Only remove hashes that were inserted (see the type's docs).
    pub fn remove(&mut self, hash: u64) -> bool {
        let (fp, i1) = self.fingerprint_and_bucket(hash);
        let i2 = self.alt(i1, fp);
        for b in [i1, i2] {
            if self.buckets.remove_one(b, fp) {
                self.len -= 1;
                self.rehome_from_stash(b);
                return true;
            }
        }
        if let Some(at) = self.stash.iter().position(|e| e.fp == fp && (e.bucket == i1 || e.bucket == i2)) {
            self.stash.swap_remove(at);
            self.len -= 1;
            return true;
        }
        false
    }

    /// A slot in bucket `b` just freed up: move in a stashed entry that belongs there.
    fn rehome_from_stash(&mut self, b: usize) {
        let fits = |e: &StashEntry| e.bucket == b || self.alt(e.bucket, e.fp) == b;
        if let Some(at) = self.stash.iter().position(fits) {
            let entry = self.stash.swap_remove(at);
            let placed = self.buckets.try_put(b, entry.fp);
            debug_assert!(placed, "a slot of bucket {b} was just freed");
        }
    }

    /// Entries held, in buckets and stash, duplicates counted.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the filter holds no entry.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Slots in the bucket table (`4 · num_buckets`); the stash adds up to
    /// [`Self::STASH_CAPACITY`] more. Inserts typically start failing beyond 95%
    /// of this.
    #[must_use]
    pub fn capacity(&self) -> usize {
        self.num_buckets() * SLOTS
    }

    /// Buckets in the table, a power of two.
    #[must_use]
    pub fn num_buckets(&self) -> usize {
        self.bucket_index(u64::MAX) + 1
    }

    /// Bits per fingerprint.
    #[must_use]
    pub fn fingerprint_bits(&self) -> u32 {
        self.fingerprint_bits
    }

    /// Entries in the stash (at most [`Self::STASH_CAPACITY`]).
    #[must_use]
    pub fn stash_len(&self) -> usize {
        self.stash.len()
    }

    /// Occupied slots over total slots (stashed entries are not in slots).
    #[must_use]
    pub fn load_factor(&self) -> f64 {
        #[expect(clippy::cast_precision_loss, reason = "a ratio")]
        let load = (self.len - self.stash.len()) as f64 / self.capacity() as f64;
        load
    }
}

impl Filter for CuckooFilter {
    #[inline]
    fn contains(&self, hash: u64) -> bool {
        let (fp, i1) = self.fingerprint_and_bucket(hash);
        let i2 = self.alt(i1, fp);
        self.buckets.holds(i1, fp)
            || self.buckets.holds(i2, fp)
            || (!self.stash.is_empty()
                && self.stash.iter().any(|e| e.fp == fp && (e.bucket == i1 || e.bucket == i2)))
    }

    fn size_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.buckets.heap_bytes()
            + self.stash.capacity() * std::mem::size_of::<StashEntry>()
    }

    /// `1 − (1 − 1/(2^f − 1))^(8α)` at load `α`, stash entries counted in
    /// `α`. With one bucket both candidates coincide and the exponent is 4α.
    fn theoretical_fpr(&self) -> f64 {
        #[expect(clippy::cast_precision_loss, reason = "a ratio")]
        let alpha = self.len as f64 / self.capacity() as f64;
        let buckets_probed = if self.num_buckets() == 1 { 1.0 } else { 2.0 };
        let per_slot = 1.0 / f64::from((1u32 << self.fingerprint_bits) - 1);
        1.0 - (1.0 - per_slot).powf(buckets_probed * f64::from(LANES) * alpha)
    }
}

#[inline]
fn xorshift(mut x: u64) -> u64 {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    x
}
