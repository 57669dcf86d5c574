//! Keys the banded system could not take, kept exactly.
//!
//! At a slot margin small enough to stay within a few percent of the bound,
//! a seed's system is rarely solvable for every key: past about 10^5 keys
//! some row almost always reduces to `0 = 1` (at 2% margin and 10^6 keys,
//! 99–151 keys of a seed; docs/measurements.md, "Ribbon: width and
//! margin"). Re-seeding until none does costs a larger margin, and so
//! space, for every key. Instead a key whose row contradicts the rows
//! already held is *bumped* (the paper's term, in its simplest form): left
//! out of the system, which stays solvable, and kept here as its remixed
//! hash. A query the system rejects then looks here, but only when its
//! start block holds a bumped key (one bit per block, derived from the
//! hashes), so most negative queries pay one predictable branch.
//!
//! The hashes are 64 bits each: at most one key in 500 is bumped (more and
//! the build re-seeds), so they cost under 0.13 bits per key, and an absent
//! key matches one only by a 64-bit collision.

use super::layout::{RibbonLayout, WIDTH};

/// The most keys a build may bump before it re-seeds: one in 500, and at
/// least 64.
pub(crate) fn max_bumped(keys: usize) -> usize {
    (keys / 500).max(64)
}

/// Bumped keys' remixed hashes, sorted and distinct, with a bit per block
/// saying whether any of them starts there.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Bumped {
    hashes: Box<[u64]>,
    blocks: Box<[u64]>,
}

impl Bumped {
    /// `hashes` must be sorted and distinct (the build's order; the decoder
    /// checks it).
    pub(crate) fn new(hashes: Vec<u64>, layout: &RibbonLayout) -> Self {
        if hashes.is_empty() {
            return Bumped::default();
        }
        let mut blocks = vec![0u64; (layout.blocks as usize).div_ceil(64)];
        for &h in &hashes {
            let block = (layout.equation(h).start / WIDTH) as usize;
            if let Some(word) = blocks.get_mut(block / 64) {
                *word |= 1 << (block % 64);
            }
        }
        Bumped { hashes: hashes.into_boxed_slice(), blocks: blocks.into_boxed_slice() }
    }

    /// The remixed hashes.
    pub(crate) fn hashes(&self) -> &[u64] {
        &self.hashes
    }

    /// Whether the key with remixed hash `h`, starting in `block`, is here.
    #[inline]
    pub(crate) fn contains(&self, block: u32, h: u64) -> bool {
        let flagged = self.blocks.get(block as usize / 64).is_some_and(|w| w >> (block % 64) & 1 == 1);
        flagged && self.hashes.binary_search(&h).is_ok()
    }

    /// Heap bytes.
    pub(crate) fn size_bytes(&self) -> usize {
        8 * (self.hashes.len() + self.blocks.len())
    }
}
