//! Counting Bloom filter with 4-bit saturating counters. (STUB: being implemented.)

use super::Filter;
use crate::Result;

/// Counting Bloom filter with 4-bit saturating counters.
#[derive(Debug, Clone)]
pub struct CountingBloom {}

impl CountingBloom {
    /// A filter sized for `expected_keys` at `bits_per_key`.
    #[must_use]
    pub fn new(expected_keys: usize, bits_per_key: f64) -> Self {
        let _ = (expected_keys, bits_per_key);
        unimplemented!()
    }
    /// Adds a hash.
    pub fn insert(&mut self, hash: u64) {
        let _ = hash;
        unimplemented!()
    }
    /// Probes per key.
    #[must_use]
    pub fn num_probes(&self) -> u32 {
        unimplemented!()
    }
    /// Removes a hash. Removing a hash never inserted is the caller's hazard.
    pub fn remove(&mut self, hash: u64) {
        let _ = hash;
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

impl Filter for CountingBloom {
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
