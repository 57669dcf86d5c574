//! Binary fuse filter with 8-bit fingerprints. (STUB: being implemented.)

use super::Filter;
use crate::Result;

/// Binary fuse filter with 8-bit fingerprints.
#[derive(Debug, Clone)]
pub struct BinaryFuse8 {}

impl BinaryFuse8 {
    /// Builds the filter from a set of hashes (duplicates allowed).
    ///
    /// # Errors
    /// [`super::BuildError`] when peeling fails on every seed, or validation fails.
    pub fn build(hashes: &[u64]) -> std::result::Result<Self, super::BuildError> {
        let _ = hashes;
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

impl Filter for BinaryFuse8 {
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

/// Binary fuse filter with 16-bit fingerprints.
#[derive(Debug, Clone)]
pub struct BinaryFuse16 {}

impl BinaryFuse16 {
    /// Builds the filter from a set of hashes (duplicates allowed).
    ///
    /// # Errors
    /// [`super::BuildError`] when peeling fails on every seed, or validation fails.
    pub fn build(hashes: &[u64]) -> std::result::Result<Self, super::BuildError> {
        let _ = hashes;
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

impl Filter for BinaryFuse16 {
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
