//! The Ribbon filter's shape: how many 128-slot blocks, how many solution
//! columns each block stores, and how a key's remixed hash becomes its
//! equation (start slot, coefficient row, result bits).
//!
//! # Sizing
//!
//! `n` keys get `m = 128·blocks` slots, `blocks = ⌈n·(1 + ε) / 128⌉` (at
//! least one), with ε = 2% at every size. The banded system has a solution
//! for every key with high probability only when the margin grows with `n`
//! (Dillinger & Walzer 2021, §4; 4–5% at 10^6 keys and width 128,
//! measured in docs/measurements.md, "Ribbon: width and margin"), which is
//! past the 5% over the bound this filter is held to. At 2% the few rows
//! that still contradict (0.01–0.02% of the keys from 10^6 up) are bumped
//! instead (`bumped.rs`): kept exactly, beside the system.
//!
//! # Columns
//!
//! Each slot holds `r` solution bits (columns); a key's query XORs the
//! columns of the 128 slots from its start under its coefficient mask and
//! compares them with its `r` result bits, so an absent key passes with
//! probability `2^−r`. For a fractional rate the blocks `[0, upper_start)`
//! store `lower` columns and `[upper_start, blocks)` store `lower + 1`: a
//! key starting in block `j` is checked on block `j`'s columns, and its
//! window reaches into block `j + 1`, which stores at least as many. The
//! expected rate is the mix
//!
//! ```text
//!   FPR = Σ_j (starts in block j / all starts) · 2^−columns(j)
//! ```
//!
//! and the space `128 · (blocks·lower + blocks − upper_start)` bits.

use super::super::peel::mix;

/// Slots per block, and bits of a coefficient row.
pub(crate) const WIDTH: u32 = 128;

/// The most columns a block stores: result rows are `u32`.
pub(crate) const MAX_COLUMNS: u32 = 32;

/// Odd multipliers deriving the coefficient row's two halves and the result
/// from the remixed hash (golden-ratio, xxhash and murmur constants).
const COEFF_LO: u64 = 0x9e37_79b9_7f4a_7c15;
const COEFF_HI: u64 = 0xc2b2_ae3d_27d4_eb4f;
const RESULT: u64 = 0xff51_afd7_ed55_8ccd;

/// The slot margin: `m ≈ n·(1 + MARGIN)` plus rounding to whole blocks, at
/// every size; the keys whose rows still contradict are bumped
/// (`bumped.rs`), about 0.01% of them from 10^6 keys up.
pub(crate) const MARGIN: f64 = 0.02;

/// `bits_per_key` clamped to 1..=32 (NaN reads as 1).
pub(crate) fn clamp_bits(bits_per_key: f64) -> f64 {
    if bits_per_key.is_nan() { 1.0 } else { bits_per_key.clamp(1.0, f64::from(MAX_COLUMNS)) }
}

/// Columns per slot at `bits_per_key` when the slots are exactly
/// `n·(1 + MARGIN)`: what a large set gets, and the least a small one does.
pub(crate) fn nominal_columns(bits_per_key: f64) -> f64 {
    clamp_bits(bits_per_key) / (1.0 + MARGIN)
}

/// One key's equation: `Σ_j coeff_j · Z[start + j] = result`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Equation {
    pub start: u32,
    pub coeff: u128,
    pub result: u32,
}

/// Block geometry; invariant (relied on by unchecked reads): `blocks ≥ 1`,
/// `upper_start ≤ blocks`, `lower + (upper_start < blocks) ≤ MAX_COLUMNS`,
/// and `words() < 2^32`. Built only through the crate's checked
/// constructor (`RibbonLayout::new`, which refuses any other geometry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RibbonLayout {
    pub(crate) blocks: u32,
    pub(crate) lower: u32,
    pub(crate) upper_start: u32,
}

impl RibbonLayout {
    /// `None` for a geometry no build produces.
    pub(crate) fn new(blocks: u32, lower: u32, upper_start: u32) -> Option<Self> {
        let top = lower + u32::from(upper_start < blocks);
        let words = u64::from(blocks) * u64::from(lower) + u64::from(blocks - upper_start.min(blocks));
        (blocks >= 1 && upper_start <= blocks && top <= MAX_COLUMNS && words < 1 << 32)
            .then_some(RibbonLayout { blocks, lower, upper_start })
    }

    /// Blocks for `n` keys.
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "slot counts are positive and far below 2^52"
    )]
    pub(crate) fn blocks_for(n: usize) -> Option<u32> {
        let slots = (n as f64 * (1.0 + MARGIN)).ceil() as u64;
        u32::try_from(slots.div_ceil(u64::from(WIDTH)).max(1)).ok()
    }

    /// The layout for `n` keys with `columns` solution columns per slot on
    /// average (a fraction mixes two widths).
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "columns are clamped to 0..=32 and blocks fit u32"
    )]
    pub(crate) fn with_columns(blocks: u32, columns: f64) -> Option<Self> {
        let columns = columns.clamp(0.0, f64::from(MAX_COLUMNS));
        let words = (columns * f64::from(blocks)).round() as u64;
        let lower = u32::try_from(words / u64::from(blocks)).ok()?;
        let extra = u32::try_from(words % u64::from(blocks)).ok()?;
        Self::new(blocks, lower.min(MAX_COLUMNS), blocks - extra)
    }

    /// The layout of `blocks` blocks for `n` keys at `bits_per_key`
    /// (clamped to 1..=32): `bits_per_key · n` solution bits, but never
    /// fewer columns than [`nominal_columns`], what the slots would get
    /// without rounding to whole blocks, so that a small
    /// set (whose one 128-slot block is mostly empty) keeps the rate and
    /// pays in bits instead.
    pub(crate) fn for_bits(n: usize, blocks: u32, bits_per_key: f64) -> Option<Self> {
        #[expect(clippy::cast_precision_loss, reason = "key and slot counts for a ratio")]
        let per_slot = clamp_bits(bits_per_key) * n as f64 / (f64::from(blocks) * f64::from(WIDTH));
        Self::with_columns(blocks, per_slot.max(nominal_columns(bits_per_key)))
    }

    /// Slots: `128 · blocks`.
    pub(crate) fn slots(&self) -> usize {
        self.blocks as usize * WIDTH as usize
    }

    /// Start positions a key may take: `slots − 127`, so that its 128-slot
    /// window ends inside the array.
    pub(crate) fn starts(&self) -> u64 {
        u64::from(self.blocks) * u64::from(WIDTH) - u64::from(WIDTH) + 1
    }

    /// Columns block `block` stores.
    #[inline]
    pub(crate) fn columns(&self, block: u32) -> u32 {
        self.lower + u32::from(block >= self.upper_start)
    }

    /// Index of block `block`'s first solution word: blocks are stored one
    /// after another, each as its columns' 128-bit words.
    #[inline]
    pub(crate) fn first_word(&self, block: u32) -> usize {
        block as usize * self.lower as usize + block.saturating_sub(self.upper_start) as usize
    }

    /// Solution words in all: `blocks·lower + blocks − upper_start`.
    pub(crate) fn words(&self) -> usize {
        self.first_word(self.blocks)
    }

    /// The equation of the key whose remixed hash is `h`.
    #[inline]
    #[expect(clippy::cast_possible_truncation, reason = "the start is below 2^32, results keep low bits")]
    pub(crate) fn equation(&self, h: u64) -> Equation {
        // The start from the hash's top bits (a multiply-shift range
        // reduction); the coefficients and the result from products that
        // mix every bit, so that they are independent of the start.
        let start = ((u128::from(h) * u128::from(self.starts())) >> 64) as u32;
        let lo = h.wrapping_mul(COEFF_LO);
        let hi = h.wrapping_mul(COEFF_HI);
        let coeff = (u128::from(hi) << 64 | u128::from(lo)) | 1;
        // Not a GF(2)-linear function of the coefficient bits (the carries
        // of a third product see to that): a result that were one would
        // let a single solution satisfy every key and every query alike.
        let result = (h.wrapping_mul(RESULT) >> 32) as u32;
        let columns = self.columns(start / WIDTH);
        Equation { start, coeff, result: result & mask(columns) }
    }

    /// The expected false-positive rate: each block's `2^−columns`,
    /// weighted by the starts it holds (the last block holds one).
    #[expect(clippy::cast_precision_loss, reason = "a rate")]
    pub(crate) fn theoretical_fpr(&self) -> f64 {
        let starts = self.starts() as f64;
        let upper_blocks = self.blocks - self.upper_start;
        // Starts in the upper blocks: 128 per block but one in the last.
        let upper_starts = if upper_blocks == 0 { 0.0 } else { f64::from(upper_blocks - 1) * 128.0 + 1.0 };
        let lower_starts = starts - upper_starts;
        (lower_starts * (-f64::from(self.lower)).exp2() + upper_starts * (-f64::from(self.lower + 1)).exp2())
            / starts
    }
}

/// The low `columns` bits set (all of them from 32 up).
#[inline]
#[expect(clippy::cast_possible_truncation, reason = "at most 32 bits set")]
pub(crate) fn mask(columns: u32) -> u32 {
    // In 64 bits, so that 32 needs no branch of its own.
    ((1u64 << columns.min(32)) - 1) as u32
}

/// The remixed hash of `hash` under `seed` (the xor and fuse filters' mix).
#[inline]
pub(crate) fn remix(hash: u64, seed: u64) -> u64 {
    mix(hash, seed)
}
