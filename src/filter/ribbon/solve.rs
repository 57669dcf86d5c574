//! Solving the banded system: on-the-fly Gaussian elimination over GF(2)
//! ("banding"), then back substitution into the interleaved solution.
//!
//! Each key contributes the equation `Σ_j c_j · Z[s + j] = r` whose
//! coefficient row `c` (128 bits, bit 0 set) starts at slot `s`. Banding
//! keeps at most one row per slot, the row whose lowest set bit (its pivot)
//! is that slot:
//!
//! ```text
//!   insert (s, c, r):
//!     while slot s holds a row (c', r'):
//!       c ^= c'; r ^= r'               // clears bit 0: the pivots agree
//!       if c == 0: return r == 0       // implied by earlier rows, or contradicts them
//!       s += tz(c); c >>= tz(c)        // move to the new pivot
//!     store (c, r) at slot s
//! ```
//!
//! A row only moves right, and its highest bit never passes the end of the
//! original window, so every stored row fits inside the array. A
//! contradiction (`c == 0`, `r != 0`) means this seed's system has no
//! solution; a duplicate key reduces to `0 = 0` and costs nothing.
//!
//! Back substitution then sets, from the last slot down,
//! `Z[i] = r_i ⊕ Σ_{j≥1} c_{i,j} · Z[i + j]` (a slot with no row is free
//! and takes 0). Working column by column, each column keeps a 128-bit
//! window of the solution bits just above `i`; when a block's 128 slots are
//! done, the window *is* that block's solution word for the column, the
//! interleaved (column-major per block) storage queries read.

use super::super::zeroed_buf::ZeroedBuf;
use super::layout::{Equation, MAX_COLUMNS, RibbonLayout, WIDTH, remix};

/// The banded rows, one optional row per slot (scratch on huge pages when
/// large: 20 bytes a slot).
pub(crate) struct Banding {
    /// The rows' low and high 64 bits apart: a slot's index then scales by
    /// 8 inside the load's address, one step fewer on the chain each
    /// elimination step waits on.
    lo: ZeroedBuf<u64>,
    hi: ZeroedBuf<u64>,
    results: ZeroedBuf<u32>,
}

impl Banding {
    pub(crate) fn new(slots: usize) -> Self {
        Banding { lo: ZeroedBuf::new(slots), hi: ZeroedBuf::new(slots), results: ZeroedBuf::new(slots) }
    }

    /// Adds one equation; `false` if it contradicts the rows already held
    /// (the system has no solution under this seed).
    #[inline]
    pub(crate) fn add(&mut self, e: Equation) -> bool {
        #[expect(clippy::cast_possible_truncation, reason = "the halves of the row")]
        let (mut s, mut lo, mut hi, mut r) =
            (e.start as usize, e.coeff as u64, (e.coeff >> 64) as u64, e.result);
        loop {
            let (Some(&held_lo), Some(&held_hi)) = (self.lo.get(s), self.hi.get(s)) else {
                // Unreachable for an equation from the layout (its window
                // ends inside the array); refused rather than trusted.
                return false;
            };
            if held_lo | held_hi == 0 {
                self.lo[s] = lo;
                self.hi[s] = hi;
                self.results[s] = r;
                return true;
            }
            lo ^= held_lo;
            hi ^= held_hi;
            r ^= self.results[s];
            // Bit 0 is clear now, and the next set bit is in the low half
            // but for one row in 2^63: testing that half alone keeps the
            // high half's count off the chain of dependent steps, 54 → 42
            // ms of banding at 10^6 keys; a shift by 1..=63 needs no
            // fix-up for counts of 64 and more.
            if let Some(low) = std::num::NonZeroU64::new(lo) {
                let tz = low.trailing_zeros();
                s += tz as usize;
                lo = (lo >> tz) | ((hi << 1) << (63 - tz));
                hi >>= tz;
            } else if hi == 0 {
                return r == 0;
            } else {
                let tz = hi.trailing_zeros();
                s += 64 + tz as usize;
                lo = hi >> tz;
                hi = 0;
            }
        }
    }

    /// Back substitution into `layout`'s interleaved words, followed by
    /// `MAX_COLUMNS` zero words of padding (see `Ribbon::words`).
    pub(crate) fn solve(&self, layout: &RibbonLayout) -> ZeroedBuf<u128> {
        let mut words = ZeroedBuf::kept(layout.words() + MAX_COLUMNS as usize);
        let top = layout.columns(layout.blocks - 1) as usize;
        // windows[b]: bit t holds Z[i + t][b] for the slot i last solved.
        let mut windows = [0u128; 32];
        for block in (0..layout.blocks).rev() {
            let columns = layout.columns(block) as usize;
            let base = block as usize * WIDTH as usize;
            for i in (base..base + WIDTH as usize).rev() {
                let (c, r) = (u128::from(self.hi[i]) << 64 | u128::from(self.lo[i]), self.results[i]);
                for (b, w) in windows.iter_mut().enumerate().take(top) {
                    // Bit 0 of the shifted window is the unknown Z[i][b];
                    // the row's bit 0 (its pivot) multiplies it, so leave
                    // it out of the sum and set it to balance the equation.
                    let shifted = *w << 1;
                    let z = ((c & shifted).count_ones() ^ (r >> b)) & 1;
                    *w = shifted | u128::from(z);
                }
            }
            let first = layout.first_word(block);
            words[first..first + columns].copy_from_slice(&windows[..columns]);
        }
        words
    }
}

/// `hashes` remixed under `seed`, sorted and without duplicates: banding
/// and validation then walk the slots forwards.
///
/// A counting pass places each hash by its top bits into one of up to
/// 2^14 buckets (about 60 hashes each at 10^6), and each bucket is then
/// sorted alone, in cache: 11 ms against 15 for one sort of the whole at
/// 10^6 keys (docs/measurements.md). Remixing in both passes costs less
/// than writing and reading back a remixed copy.
pub(crate) fn remix_sorted(hashes: &[u64], seed: u64) -> Vec<u64> {
    // About 64 hashes a bucket, at most 2^14 buckets: their counts and
    // write positions (256 KiB) stay in the L2 cache.
    let bits = (usize::BITS - (hashes.len() / 64).leading_zeros()).min(14);
    let shift = 64 - bits;
    #[expect(clippy::cast_possible_truncation, reason = "at most 14 bits")]
    let bucket = |m: u64| m.checked_shr(shift).unwrap_or(0) as usize;
    let mut ends = vec![0usize; (1 << bits) + 1];
    for &h in hashes {
        ends[bucket(remix(h, seed)) + 1] += 1;
    }
    for i in 1..ends.len() {
        ends[i] += ends[i - 1];
    }
    let mut next = ends.clone();
    let mut out = vec![0u64; hashes.len()];
    for &h in hashes {
        let m = remix(h, seed);
        let at = &mut next[bucket(m)];
        out[*at] = m;
        *at += 1;
    }
    for w in ends.windows(2) {
        out[w[0]..w[1]].sort_unstable();
    }
    out.dedup();
    out
}
