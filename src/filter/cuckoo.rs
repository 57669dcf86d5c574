//! Cuckoo filter: 4-slot buckets, partial-key cuckoo hashing, a stash. (STUB: being implemented.)

use super::Filter;
use crate::Result;

/// Cuckoo filter: 4-slot buckets, partial-key cuckoo hashing, a stash.
#[derive(Debug, Clone)]
pub struct CuckooFilter {}

impl CuckooFilter {
    /// A filter for `capacity` keys with `fingerprint_bits`-bit fingerprints.
    ///
    /// # Errors
    /// `InvalidArgument` for unsupported fingerprint widths.
    pub fn new(capacity: usize, fingerprint_bits: u32) -> Result<Self> {
        let _ = (capacity, fingerprint_bits);
        unimplemented!()
    }
    /// Adds a hash.
    ///
    /// # Errors
    /// [`super::Full`] when no slot could be freed; the filter is unchanged.
    pub fn insert(&mut self, hash: u64) -> std::result::Result<(), super::Full> {
        let _ = hash;
        unimplemented!()
    }
    /// Removes one copy of a hash; whether one was found.
    pub fn remove(&mut self, hash: u64) -> bool {
        let _ = hash;
        unimplemented!()
    }
    /// Occupied slots over total slots.
    #[must_use]
    pub fn load_factor(&self) -> f64 {
        unimplemented!()
    }
    /// Serialises the filter.
    #[must_use]
    pub fn encode(&self) -> Vec<u8> {
        unimplemented!()
    }
    /// Parses an encoded filter.
    ///
    /// # Errors
    /// `Corruption` for bytes that are not a valid encoding.
    pub fn decode(bytes: &[u8]) -> Result<Self> {
        let _ = bytes;
        unimplemented!()
    }
}

impl Filter for CuckooFilter {
    fn contains(&self, hash: u64) -> bool {
        let _ = hash;
        unimplemented!()
    }
    fn size_bytes(&self) -> usize {
        unimplemented!()
    }
    fn theoretical_fpr(&self) -> f64 {
        unimplemented!()
    }
}
