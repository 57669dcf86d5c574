//! Classic Bloom filter. (STUB: being implemented.)

use super::Filter;
use crate::Result;

/// m and k derived from n and a target false-positive rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BloomParams {
    /// Bits in the array.
    pub bits: u64,
    /// Probes per key.
    pub k: u32,
}

impl BloomParams {
    /// m/n = −ln ε/(ln 2)², k = round(m/n · ln 2).
    ///
    /// # Errors
    /// `InvalidArgument` for `n == 0` or ε outside (0, 1).
    pub fn for_fpr(n: usize, fpr: f64) -> Result<Self> {
        let _ = (n, fpr);
        unimplemented!()
    }
}

/// A classic Bloom filter.
#[derive(Debug, Clone)]
pub struct Bloom {}

impl Bloom {
    /// A filter sized for `expected_keys` at `bits_per_key`.
    #[must_use]
    pub fn new(expected_keys: usize, bits_per_key: f64) -> Self {
        let _ = (expected_keys, bits_per_key);
        unimplemented!()
    }
    /// The probe count `Bloom::new` uses for `bits_per_key`: round(bpk · ln 2) in [1, 30].
    #[must_use]
    pub fn probes_for_bits_per_key(bits_per_key: f64) -> u32 {
        let _ = bits_per_key;
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

impl Filter for Bloom {
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
