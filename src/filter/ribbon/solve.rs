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
    /// (the system has no solution under this seed). Builds band with
    /// [`Banding::add_all`]; this is for rows made by hand, and the
    /// one-at-a-time reference that is tested against.
    #[cfg(test)]
    pub(crate) fn add(&mut self, e: Equation) -> bool {
        let mut row = Row::of(e);
        let (lo, hi, results) = (&mut *self.lo, &mut *self.hi, &mut *self.results);
        loop {
            if let Some(taken) = row.step(lo, hi, results) {
                return taken;
            }
        }
    }

    /// Bands the equations of `mixed` (remixed hashes, sorted by start)
    /// two at a time: returns the keys whose rows contradict (bumped,
    /// sorted), or `None` once there are more than `limit` of them.
    ///
    /// Each step of an elimination waits on the last (the slot it loads
    /// comes from the shift before), so one row at a time leaves the core
    /// mostly idle. Two rows in flight, one from each half of the keys,
    /// are two independent chains the core overlaps: 50 → 33 ms of
    /// banding at 10^6 keys (three rows bought nothing more; docs/
    /// measurements.md, "two rows in flight"). Rows meet only near
    /// the middle, and the order rows arrive in changes nothing but which
    /// of two contradicting rows is bumped: a row moves only past slots
    /// that hold a row, and a held row never changes, so whatever it is
    /// reduced against was there, in either order.
    pub(crate) fn add_all(&mut self, layout: &RibbonLayout, mixed: &[u64], limit: usize) -> Option<Vec<u64>> {
        let mut bumped = Vec::new();
        let mut bump = |h: u64| {
            bumped.push(h);
            bumped.len() <= limit
        };
        let (lo, hi, results) = (&mut *self.lo, &mut *self.hi, &mut *self.results);
        let (front, back) = mixed.split_at(mixed.len() / 2);
        let (mut front, mut back) = (front.iter(), back.iter());
        let row = |h: &u64| (*h, Row::of(layout.equation(*h)));
        let (mut a, mut b) = (front.next().map(row), back.next().map(row));
        // The two lanes' steps are written out: one closure stepping either
        // lane measured 73 ms against these 33 (10^6 keys), its lane state
        // kept in memory instead of registers.
        while let (Some((ha, mut ra)), Some((hb, mut rb))) = (a, b) {
            a = match ra.step(lo, hi, results) {
                None => Some((ha, ra)),
                Some(taken) => {
                    if !taken && !bump(ha) {
                        return None;
                    }
                    front.next().map(row)
                }
            };
            b = match rb.step(lo, hi, results) {
                None => Some((hb, rb)),
                Some(taken) => {
                    if !taken && !bump(hb) {
                        return None;
                    }
                    back.next().map(row)
                }
            };
        }
        // One half is done: the other's row in flight, then its rest.
        for (h, mut r) in a.into_iter().chain(front.map(row)).chain(b).chain(back.map(row)) {
            let taken = loop {
                if let Some(taken) = r.step(lo, hi, results) {
                    break taken;
                }
            };
            if !taken && !bump(h) {
                return None;
            }
        }
        bumped.sort_unstable();
        Some(bumped)
    }

    /// Slots holding a row.
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        self.lo.iter().zip(self.hi.iter()).filter(|&(&lo, &hi)| lo | hi != 0).count()
    }

    /// Back substitution into `layout`'s interleaved words, followed by
    /// `MAX_COLUMNS` zero words of padding (see `Ribbon::words`).
    pub(crate) fn solve(&self, layout: &RibbonLayout) -> ZeroedBuf<u128> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("popcnt") {
            // SAFETY: the CPU has `popcnt`, checked just above.
            return unsafe { self.solve_popcnt(layout) };
        }
        self.solve_any(layout)
    }

    /// [`Banding::solve`] compiled for `popcnt`, which counts a row's
    /// parity in one instruction where baseline x86-64 folds the word
    /// down: back substitution 13.7% → 10.7% of a build at 10^6 keys
    /// (`perf`), builds 2–7% faster (docs/measurements.md, "Ribbon's back
    /// substitution with `popcnt`").
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt")]
    fn solve_popcnt(&self, layout: &RibbonLayout) -> ZeroedBuf<u128> {
        self.solve_any(layout)
    }

    /// [`Banding::solve`] for whatever CPU it is compiled for.
    #[expect(
        clippy::inline_always,
        reason = "compiled into `solve_popcnt`, so that its popcounts are the instruction"
    )]
    #[inline(always)]
    pub(super) fn solve_any(&self, layout: &RibbonLayout) -> ZeroedBuf<u128> {
        let mut words = ZeroedBuf::kept(layout.words() + MAX_COLUMNS as usize);
        let top = layout.columns(layout.blocks - 1) as usize;
        // windows[b]: bit t holds Z[i + t][b] for the slot i last solved.
        let mut windows = [0u128; 32];
        for block in (0..layout.blocks).rev() {
            let columns = layout.columns(block) as usize;
            let base = block as usize * WIDTH as usize;
            for i in (base..base + WIDTH as usize).rev() {
                let (c, mut r) = (u128::from(self.hi[i]) << 64 | u128::from(self.lo[i]), self.results[i]);
                for w in windows.iter_mut().take(top) {
                    // Bit 0 of the shifted window is the unknown Z[i][b];
                    // the row's bit 0 (its pivot) multiplies it, so leave
                    // it out of the sum and set it to balance the equation.
                    let shifted = *w << 1;
                    let x = c & shifted;
                    #[expect(clippy::cast_possible_truncation, reason = "the halves of the row")]
                    let z = (((x as u64) ^ (x >> 64) as u64).count_ones() ^ r) & 1;
                    // The next column's result bit into bit 0: a shift by
                    // one, where `r >> b` shifted by a register (`%cl`, two
                    // or three µops on Intel): 9.5–10.4 → 8.6–8.7 ms at
                    // 10^6 keys and 7 bits/key.
                    r >>= 1;
                    *w = shifted | u128::from(z);
                }
            }
            let first = layout.first_word(block);
            words[first..first + columns].copy_from_slice(&windows[..columns]);
        }
        words
    }
}

/// A row on its way to the free slot it will be held in.
#[derive(Clone, Copy)]
struct Row {
    s: usize,
    lo: u64,
    hi: u64,
    r: u32,
}

impl Row {
    #[expect(clippy::cast_possible_truncation, reason = "the halves of the row")]
    fn of(e: Equation) -> Row {
        Row { s: e.start as usize, lo: e.coeff as u64, hi: (e.coeff >> 64) as u64, r: e.result }
    }

    /// One elimination step against the row held at this row's pivot:
    /// `Some(true)` once it is held (or reduced to `0 = 0`), `Some(false)`
    /// if it contradicts the rows held, `None` while it moves on.
    #[inline]
    fn step(&mut self, lo: &mut [u64], hi: &mut [u64], results: &mut [u32]) -> Option<bool> {
        let s = self.s;
        let (Some(&held_lo), Some(&held_hi), Some(&held_r)) = (lo.get(s), hi.get(s), results.get(s)) else {
            // Unreachable for an equation from the layout (its window
            // ends inside the array); refused rather than trusted.
            return Some(false);
        };
        if held_lo | held_hi == 0 {
            lo[s] = self.lo;
            hi[s] = self.hi;
            results[s] = self.r;
            return Some(true);
        }
        self.lo ^= held_lo;
        self.hi ^= held_hi;
        self.r ^= held_r;
        // Bit 0 is clear now, and the next set bit is in the low half
        // but for one row in 2^63: testing that half alone keeps the
        // high half's count off the chain of dependent steps, 54 → 42
        // ms of banding at 10^6 keys (one row at a time); a shift by
        // 1..=63 needs no fix-up for counts of 64 and more.
        if let Some(low) = std::num::NonZeroU64::new(self.lo) {
            let tz = low.trailing_zeros();
            self.s += tz as usize;
            self.lo = (self.lo >> tz) | ((self.hi << 1) << (63 - tz));
            self.hi >>= tz;
        } else if self.hi == 0 {
            return Some(self.r == 0);
        } else {
            let tz = self.hi.trailing_zeros();
            self.s += 64 + tz as usize;
            self.lo = self.hi >> tz;
            self.hi = 0;
        }
        None
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
