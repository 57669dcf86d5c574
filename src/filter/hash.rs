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
    xxhash_rust::xxh3::xxh3_64_with_seed(key, seed)
}
