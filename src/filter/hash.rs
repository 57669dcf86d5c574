//! The one seeded key hash every filter is fed with.

/// Hashes `key` under `seed` to the 64-bit value all filters consume.
///
/// This is XXH3-64 with a seed. Its output for a given `(seed, key)` is part
/// of the on-disk format (filters store hashes, not keys) and must never
/// change; golden-value tests pin it.
///
/// ```
/// let h = siftdb::filter::hash_key(0, b"key");
/// assert_eq!(h, siftdb::filter::hash_key(0, b"key"));
/// assert_ne!(h, siftdb::filter::hash_key(1, b"key"));
/// ```
#[must_use]
#[inline]
pub fn hash_key(seed: u64, key: &[u8]) -> u64 {
    #[cfg(test)]
    HASHES.with(|n| n.set(n.get() + 1));
    xxhash_rust::xxh3::xxh3_64_with_seed(key, seed)
}

#[cfg(test)]
thread_local! {
    /// [`hash_key`] calls on this thread, for tests that a read path hashes
    /// a key once.
    pub(crate) static HASHES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// A key's filter hash under one seed, computed once and handed to every
/// table a lookup probes: all of a database's tables share its salt.
///
/// ```
/// use siftdb::filter::{hash_key, KeyHash};
/// let h = KeyHash::new(7, b"apple");
/// assert_eq!(h.under(7, b"apple"), hash_key(7, b"apple"));
/// // A filter built under another seed still gets the right hash.
/// assert_eq!(h.under(8, b"apple"), hash_key(8, b"apple"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyHash {
    seed: u64,
    hash: u64,
}

impl KeyHash {
    /// `key` hashed under `seed`.
    #[must_use]
    #[inline]
    pub fn new(seed: u64, key: &[u8]) -> Self {
        KeyHash { seed, hash: hash_key(seed, key) }
    }

    /// The hash of `key` (the key this was made from) under `seed`: the
    /// stored one when the seeds match, else hashed again, so a table
    /// written under another seed is probed correctly, only slower.
    #[must_use]
    #[inline]
    pub fn under(&self, seed: u64, key: &[u8]) -> u64 {
        if seed == self.seed { self.hash } else { hash_key(seed, key) }
    }
}
