//! The parities of eight solution columns under a key's coefficient window,
//! computed together.
//!
//! A query's answer in column `b` is the parity of `here[b] & c_here ^
//! next[b] & c_next`: the window's part in the key's start block and its
//! part in the block after. Taken one column at a time that is a 128-bit
//! AND-XOR and a parity each (without `popcnt`, which baseline x86-64 lacks,
//! LLVM folds a word to a byte and reads the flags: about seven
//! instructions). Eight columns at once in SSE2 (baseline on x86-64)
//! instead fold all eight words down together, halving the lane width and
//! doubling the columns a register holds at each step, so the folding is
//! shared:
//!
//! ```text
//!   8 × 128-bit words, one a column   (c0 … c7)
//!   → 4 × [64 | 64]      unpack lo/hi of two words, xor
//!   → 2 × [32|32|32|32]  even/odd 32-bit lanes of two registers, xor
//!   → 1 × [16 × 8]       low half of each lane beside the other's, xor
//!   → each 16-bit lane xor-folded onto its bit 15, packed to bytes,
//!     one movemask: bit b = parity of column b
//! ```
//!
//! A query reads its block's columns eight at a time: measured at 10^6
//! keys and 7 bits/key, present keys 20.7 → 13.8 ns, absent 16.4 → 14.6,
//! and the build's validation 13.1 → 9.3 ms (docs/measurements.md, "Ribbon:
//! eight columns at once").
//!
//! Where the CPU has AVX2 (checked at run time: the crate is built for
//! baseline x86-64), [`Avx2`] folds the eight with two columns a register:
//! half the loads, ANDs and folds, and one movemask of eight lanes. The
//! query, the batch and the build's validation are then compiled a second
//! time for AVX2 (`query.rs`), so that the fold inlines; a [`Fold`] says
//! which way a query folds, and how it shifts the key's coefficients to its
//! window (with AVX2, in the vector registers: `avx2::window`). Measured
//! at 10^6 keys and 7 bits/key: absent keys 16.9 → 12.4 ns for the fold,
//! 12.4 → 11.4 for the window and the unchecked reads (docs/measurements.md, "Ribbon: AVX2 where the CPU
//! has it").
//!
//! Where the CPU also has AVX-512's per-lane population count
//! (`avx512vpopcntdq`), [`Avx512`] takes four columns a register and
//! replaces the whole fold by a permute of each column's two halves side by
//! side, one XOR, `vpopcntq` and a test of bit 0 into a mask register:
//! about 14 instructions for eight columns against AVX2's 45. Measured the
//! same way: absent keys 11.3 → 9.2 ns at 7 bits/key, present keys at 9.4
//! bits/key (two groups) 19.5 → 12.5.

/// Bit `b` of the result is the parity of `here[b] & c_here ^ next[b] &
/// c_next`, for `b` in `0..8`.
#[inline]
pub(crate) fn eight(here: &[u128; 8], next: &[u128; 8], c_here: u128, c_next: u128) -> u32 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `sse2::eight` needs SSE2 and nothing else, and SSE2 is part
    // of the x86-64 baseline: every x86-64 CPU has it, and rustc enables
    // it for every x86-64 target. Calling a `#[target_feature]` function is
    // `unsafe` only because of the features it assumes.
    let found = unsafe { sse2::eight(here, next, c_here, c_next) };
    #[cfg(not(target_arch = "x86_64"))]
    let found = portable(here, next, c_here, c_next);
    found
}

/// [`eight`] for four columns: bit `b` of the result is the parity of
/// `here[b] & c_here ^ next[b] & c_next`, for `b` in `0..4`. A query's last
/// few columns past a multiple of eight take this (half the loads and
/// about half the folding of [`eight`]).
#[inline]
pub(crate) fn four(here: &[u128; 4], next: &[u128; 4], c_here: u128, c_next: u128) -> u32 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: as in `eight`: SSE2 is part of the x86-64 baseline.
    let found = unsafe { sse2::four(here, next, sse2::load(c_here), sse2::load(c_next)) };
    #[cfg(not(target_arch = "x86_64"))]
    let found = portable(here, next, c_here, c_next);
    found
}

/// One column at a time: the reference the SIMD path is tested against,
/// and the implementation off x86-64.
#[cfg(any(test, not(target_arch = "x86_64")))]
pub(crate) fn portable<const N: usize>(
    here: &[u128; N],
    next: &[u128; N],
    c_here: u128,
    c_next: u128,
) -> u32 {
    (0..N).fold(0, |found, b| found | ((here[b] & c_here ^ next[b] & c_next).count_ones() & 1) << b)
}

/// The widest fold this CPU has, holding the proof of its features.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Widest {
    #[cfg(target_arch = "x86_64")]
    Avx512(Avx512),
    #[cfg(target_arch = "x86_64")]
    Avx2(Avx2),
    Baseline,
}

/// [`Widest`] on this CPU. The features are checked once and the choice
/// kept: a query then pays one load and compare, where asking
/// `is_x86_feature_detected!` for each of the four features a query's
/// dispatch needs (each macro tests its cache for initialisation, then its
/// bit) cost 7 of 157 instructions a query (callgrind, AVX2 path, 7
/// bits/key) and 5–8% of an absent query's time with AVX-512.
#[inline]
pub(crate) fn widest() -> Widest {
    #[cfg(target_arch = "x86_64")]
    {
        use std::sync::atomic::{AtomicU8, Ordering};
        const UNKNOWN: u8 = 0;
        const AVX512: u8 = 1;
        const AVX2: u8 = 2;
        const BASELINE: u8 = 3;
        // Relaxed: every thread that checks finds the same answer, so a
        // race only repeats the check.
        static WIDEST: AtomicU8 = AtomicU8::new(UNKNOWN);
        let mut found = WIDEST.load(Ordering::Relaxed);
        if found == UNKNOWN {
            found = if Avx512::detect().is_some() {
                AVX512
            } else if Avx2::detect().is_some() {
                AVX2
            } else {
                BASELINE
            };
            WIDEST.store(found, Ordering::Relaxed);
        }
        // Each token made here stands on the check above, which stored
        // its value only where its `detect` succeeded.
        match found {
            AVX512 => Widest::Avx512(Avx512(())),
            AVX2 => Widest::Avx2(Avx2(())),
            _ => Widest::Baseline,
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    Widest::Baseline
}

/// Proof that the CPU has AVX2: only [`Avx2::detect`] (and [`widest`],
/// after it) makes one.
#[cfg(target_arch = "x86_64")]
#[derive(Debug, Clone, Copy)]
pub(crate) struct Avx2(());

#[cfg(target_arch = "x86_64")]
impl Avx2 {
    /// `Some` on a CPU with AVX2 (the check is a cached flag).
    #[inline]
    pub(crate) fn detect() -> Option<Self> {
        std::arch::is_x86_feature_detected!("avx2").then_some(Avx2(()))
    }
}

#[cfg(target_arch = "x86_64")]
impl Fold for Avx2 {
    type Window = (std::arch::x86_64::__m256i, std::arch::x86_64::__m256i);

    #[inline]
    fn window(self, coeff: u128, offset: u32) -> Self::Window {
        // SAFETY: an `Avx2` exists only where `detect` found AVX2.
        unsafe { avx2::window(coeff, offset) }
    }

    /// [`eight`], two columns a register.
    #[inline]
    fn eight(self, here: &[u128; 8], next: &[u128; 8], (c_here, c_next): Self::Window) -> u32 {
        // SAFETY: as in `window`.
        unsafe { avx2::eight(here, next, c_here, c_next) }
    }

    /// [`four`], on the low lanes of the window.
    #[inline]
    fn four(self, here: &[u128; 4], next: &[u128; 4], (c_here, c_next): Self::Window) -> u32 {
        use std::arch::x86_64::_mm256_castsi256_si128;
        // SAFETY: as in `window`; SSE2 is part of AVX2 (and of x86-64).
        unsafe { sse2::four(here, next, _mm256_castsi256_si128(c_here), _mm256_castsi256_si128(c_next)) }
    }
}

/// Proof that the CPU has AVX-512 with its per-lane population count
/// (`avx512vpopcntdq`, Ice Lake and Zen 4 on), and AVX2: only
/// [`Avx512::detect`] (and [`widest`], after it) makes one.
#[cfg(target_arch = "x86_64")]
#[derive(Debug, Clone, Copy)]
pub(crate) struct Avx512(());

#[cfg(target_arch = "x86_64")]
impl Avx512 {
    /// `Some` on a CPU with all three (cached flags).
    #[inline]
    pub(crate) fn detect() -> Option<Self> {
        (std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512vpopcntdq")
            && std::arch::is_x86_feature_detected!("avx2"))
        .then_some(Avx512(()))
    }
}

#[cfg(target_arch = "x86_64")]
impl Fold for Avx512 {
    type Window = <Avx2 as Fold>::Window;

    #[inline]
    fn window(self, coeff: u128, offset: u32) -> Self::Window {
        // An `Avx512` proves AVX2 too: `detect` checks it.
        Avx2(()).window(coeff, offset)
    }

    /// [`eight`], four columns a register, each column's parity from its
    /// halves' population counts.
    #[inline]
    fn eight(self, here: &[u128; 8], next: &[u128; 8], (c_here, c_next): Self::Window) -> u32 {
        // SAFETY: an `Avx512` exists only where `detect` found its features.
        unsafe { avx512::eight(here, next, c_here, c_next) }
    }

    #[inline]
    fn four(self, here: &[u128; 4], next: &[u128; 4], (c_here, c_next): Self::Window) -> u32 {
        // SAFETY: as in `eight`.
        unsafe { avx512::four(here, next, c_here, c_next) }
    }
}

/// How a query meets its window and folds its columns' parities:
/// [`Baseline`] anywhere, or a faster way the CPU was found to have.
pub(crate) trait Fold: Copy {
    /// A key's coefficient row shifted to its window's two blocks: the part
    /// over the rest of its start block, and the part over the next.
    type Window: Copy;

    /// The window of `coeff` starting `offset` (below 128) slots into a
    /// block: `coeff << offset`, and the bits shifted out of it.
    fn window(self, coeff: u128, offset: u32) -> Self::Window;

    /// [`eight`].
    fn eight(self, here: &[u128; 8], next: &[u128; 8], window: Self::Window) -> u32;

    /// [`four`].
    fn four(self, here: &[u128; 4], next: &[u128; 4], window: Self::Window) -> u32;
}

/// [`eight`] and [`four`] as every CPU of the target runs them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Baseline;

impl Fold for Baseline {
    type Window = (u128, u128);

    #[inline]
    fn window(self, coeff: u128, offset: u32) -> Self::Window {
        // The second in two steps, so that an offset of 0 shifts everything out.
        (coeff << offset, (coeff >> 1) >> (u128::BITS - 1 - offset))
    }

    #[inline]
    fn eight(self, here: &[u128; 8], next: &[u128; 8], (c_here, c_next): Self::Window) -> u32 {
        eight(here, next, c_here, c_next)
    }

    #[inline]
    fn four(self, here: &[u128; 4], next: &[u128; 4], (c_here, c_next): Self::Window) -> u32 {
        four(here, next, c_here, c_next)
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2;

#[cfg(target_arch = "x86_64")]
mod avx512;

#[cfg(target_arch = "x86_64")]
mod sse2;

#[cfg(test)]
mod tests {
    use super::{eight, four, portable};
    use crate::filter::codec_tests::hashes;

    /// `fold` against one column at a time: on random words, and on every
    /// single bit of every word alone, which must show up in its own column
    /// and no other.
    fn agrees_with_one_at_a_time<const N: usize>(
        fold: impl Fn(&[u128; N], &[u128; N], u128, u128) -> u32,
        stream: u64,
    ) {
        let mut r = hashes(stream, 1 << 16).into_iter();
        let mut word = || u128::from(r.next().unwrap_or(1)) << 64 | u128::from(r.next().unwrap_or(2));
        for round in 0..8000 / N {
            let here: [u128; N] = std::array::from_fn(|_| word());
            let next: [u128; N] = std::array::from_fn(|_| word());
            let (c_here, c_next) = (word(), word());
            assert_eq!(
                fold(&here, &next, c_here, c_next),
                portable(&here, &next, c_here, c_next),
                "round {round}"
            );
        }
        let ones = [u128::MAX; N];
        for b in 0..N {
            for bit in 0..128 {
                let mut here = [0u128; N];
                here[b] = 1 << bit;
                assert_eq!(fold(&here, &[0; N], u128::MAX, 0), 1 << b);
                assert_eq!(fold(&[0; N], &here, 0, u128::MAX), 1 << b);
                assert_eq!(fold(&ones, &here, 0, u128::MAX), 1 << b);
            }
        }
    }

    #[test]
    fn eight_at_once_agree_with_one_at_a_time() {
        agrees_with_one_at_a_time::<8>(eight, 7);
    }

    #[test]
    fn four_at_once_agree_with_one_at_a_time() {
        agrees_with_one_at_a_time::<4>(four, 8);
    }

    /// A 256-bit window's two 128-bit lanes.
    #[cfg(target_arch = "x86_64")]
    fn lanes(x: std::arch::x86_64::__m256i) -> [u128; 2] {
        // SAFETY: both are 32 bytes of plain integers.
        unsafe { std::mem::transmute(x) }
    }

    /// `fold`'s eight- and four-column folds against one column at a time,
    /// each coefficient word in both lanes of its window register.
    #[cfg(target_arch = "x86_64")]
    fn wide_folds_agree<F>(fold: F, stream: u64)
    where
        F: super::Fold<Window = (std::arch::x86_64::__m256i, std::arch::x86_64::__m256i)>,
    {
        // SAFETY: both are 32 bytes of plain integers.
        let both = |x: u128| unsafe { std::mem::transmute::<[u128; 2], std::arch::x86_64::__m256i>([x, x]) };
        agrees_with_one_at_a_time::<8>(|h, n, ch, cn| fold.eight(h, n, (both(ch), both(cn))), stream);
        agrees_with_one_at_a_time::<4>(|h, n, ch, cn| fold.four(h, n, (both(ch), both(cn))), stream + 1);
    }

    /// The AVX2 windows against the baseline's `u128` shifts at every
    /// offset, and the AVX2 folds against one column at a time.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn avx2_agrees_with_the_baseline() {
        use super::{Avx2, Baseline, Fold};
        let Some(avx2) = Avx2::detect() else {
            assert!(
                !std::arch::is_x86_feature_detected!("avx2"),
                "the CPU has AVX2 but Avx2::detect found none"
            );
            eprintln!("no AVX2 on this CPU: its fold is not run");
            return;
        };
        eprintln!("AVX2 windows and folds checked");
        let mut r = hashes(10, 64).into_iter();
        let mut word = || u128::from(r.next().unwrap_or(3)) << 64 | u128::from(r.next().unwrap_or(4));
        let coeffs = [1, u128::MAX, 1 << 127 | 1, 1 << 64 | 1, word(), word(), word(), word()];
        for coeff in coeffs {
            for offset in 0..128 {
                let (here, next) = avx2.window(coeff, offset);
                let (want_here, want_next) = Baseline.window(coeff, offset);
                assert_eq!(lanes(here), [want_here; 2], "{coeff:#x} at {offset}");
                assert_eq!(lanes(next), [want_next; 2], "{coeff:#x} at {offset}");
            }
        }
        wide_folds_agree(avx2, 9);
    }

    /// The AVX-512 folds against one column at a time (its windows are
    /// AVX2's, checked above).
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn avx512_agrees_with_one_at_a_time() {
        let Some(avx512) = super::Avx512::detect() else {
            use std::arch::is_x86_feature_detected as has;
            let has_it = has!("avx512f") && has!("avx512vpopcntdq") && has!("avx2");
            assert!(!has_it, "the CPU has AVX-512 with its population count but Avx512::detect found none");
            eprintln!("no AVX-512 population count on this CPU: its fold is not run");
            return;
        };
        eprintln!("AVX-512 folds checked");
        wide_folds_agree(avx512, 12);
    }
}
