//! Bloom filter whose probes for one key all fall in one 64-byte cache line. (STUB: being implemented.)

use super::Filter;
use crate::Result;

/// Bloom filter whose probes for one key all fall in one 64-byte cache line.
#[derive(Debug, Clone)]
pub struct BlockedBloom {}

impl BlockedBloom {
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
    /// Theoretical FPR at `bits_per_key` with the best probe count.
    #[must_use]
    pub fn fpr_for_bits_per_key(bits_per_key: f64) -> f64 {
        let _ = bits_per_key;
        unimplemented!()
    }
    /// Bits per key needed to reach `fpr`.
    #[must_use]
    pub fn bits_per_key_for_fpr(fpr: f64) -> f64 {
        let _ = fpr;
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

impl Filter for BlockedBloom {
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
