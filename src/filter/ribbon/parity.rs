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
//! at 10^6 keys and 7 bits/key:
//! absent keys 16.9 → 12.4 ns for the fold, 12.4 → 11.4 for the window and
//! the unchecked reads (docs/measurements.md, "Ribbon: AVX2 where the CPU
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

/// Proof that the CPU has AVX2: only [`Avx2::detect`] makes one.
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
/// [`Avx512::detect`] makes one.
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
mod avx2 {
    use std::arch::x86_64::{
        __m256i, _mm256_add_epi64, _mm256_and_si256, _mm256_castps_si256, _mm256_castsi256_ps,
        _mm256_loadu_si256, _mm256_movemask_ps, _mm256_or_si256, _mm256_permute4x64_epi64,
        _mm256_permutevar8x32_epi32, _mm256_set_epi32, _mm256_set_epi64x, _mm256_set1_epi64x,
        _mm256_shuffle_ps, _mm256_slli_epi32, _mm256_sllv_epi64, _mm256_srli_epi32, _mm256_srlv_epi64,
        _mm256_sub_epi64, _mm256_unpackhi_epi64, _mm256_unpacklo_epi64, _mm256_xor_ps, _mm256_xor_si256,
    };

    /// `u128`s `2i` and `2i + 1` of `words`, one a lane.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn pair(words: &[u128; 8], i: usize) -> __m256i {
        // SAFETY: `words[2i..2i + 2]` is 32 readable bytes (i < 4), and
        // `loadu` takes any alignment.
        unsafe { _mm256_loadu_si256(words.as_ptr().add(2 * i).cast()) }
    }

    /// [`super::Fold::window`], in both 128-bit lanes of each register.
    ///
    /// The 256 bits `coeff << offset` hold the word `lo` at bit `offset`
    /// and `hi` at `offset + 64`: 64-bit lane `i` takes `lo << (offset −
    /// 64i)` and `lo >> (64i − offset)`, and `hi` likewise 64 further on.
    /// AVX2's per-lane shifts read a count of 64 or more (a negative one
    /// included, as unsigned) as shifting everything out, which is what
    /// the lanes `lo` or `hi` do not reach need: four shifts, no branch.
    /// On x86-64 the scalar `u128` shifts by a variable count take `shld`
    /// and `shrd` by `%cl`, four µops each on Intel.
    #[target_feature(enable = "avx2")]
    #[inline]
    #[expect(clippy::cast_possible_truncation, reason = "the row's two halves, as bits")]
    pub(super) fn window(coeff: u128, offset: u32) -> (__m256i, __m256i) {
        let lo = _mm256_set1_epi64x(coeff as i64);
        let hi = _mm256_set1_epi64x((coeff >> 64) as i64);
        let lanes = _mm256_set_epi64x(192, 128, 64, 0);
        let offset = _mm256_set1_epi64x(i64::from(offset));
        let up = _mm256_sub_epi64(offset, lanes);
        let down = _mm256_sub_epi64(lanes, offset);
        let sixty_four = _mm256_set1_epi64x(64);
        let lo = _mm256_or_si256(_mm256_sllv_epi64(lo, up), _mm256_srlv_epi64(lo, down));
        let hi = _mm256_or_si256(
            _mm256_sllv_epi64(hi, _mm256_add_epi64(up, sixty_four)),
            _mm256_srlv_epi64(hi, _mm256_sub_epi64(down, sixty_four)),
        );
        // [here | next] → [here | here] and [next | next].
        let w = _mm256_or_si256(lo, hi);
        (_mm256_permute4x64_epi64::<0b01_00_01_00>(w), _mm256_permute4x64_epi64::<0b11_10_11_10>(w))
    }

    /// [`super::eight`], with each coefficient word in both lanes.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn eight(here: &[u128; 8], next: &[u128; 8], c_here: __m256i, c_next: __m256i) -> u32 {
        // Columns 2i and 2i + 1, one a lane.
        let x: [__m256i; 4] = std::array::from_fn(|i| {
            _mm256_xor_si256(_mm256_and_si256(pair(here, i), c_here), _mm256_and_si256(pair(next, i), c_next))
        });
        // 128 → 64: [c0 c2 | c1 c3] and [c4 c6 | c5 c7].
        let lo = _mm256_xor_si256(_mm256_unpacklo_epi64(x[0], x[1]), _mm256_unpackhi_epi64(x[0], x[1]));
        let hi = _mm256_xor_si256(_mm256_unpacklo_epi64(x[2], x[3]), _mm256_unpackhi_epi64(x[2], x[3]));
        // 64 → 32: [c0 c2 c4 c6 | c1 c3 c5 c7].
        let (lo, hi) = (_mm256_castsi256_ps(lo), _mm256_castsi256_ps(hi));
        let w = _mm256_castps_si256(_mm256_xor_ps(
            _mm256_shuffle_ps::<0b10_00_10_00>(lo, hi),
            _mm256_shuffle_ps::<0b11_01_11_01>(lo, hi),
        ));
        // Columns in order, one a 32-bit lane.
        let w = _mm256_permutevar8x32_epi32(w, _mm256_set_epi32(7, 3, 6, 2, 5, 1, 4, 0));
        // 32 → 1 within each lane, then bit 0 to the sign bit.
        let w = _mm256_xor_si256(w, _mm256_srli_epi32::<16>(w));
        let w = _mm256_xor_si256(w, _mm256_srli_epi32::<8>(w));
        let w = _mm256_xor_si256(w, _mm256_srli_epi32::<4>(w));
        let w = _mm256_xor_si256(w, _mm256_srli_epi32::<2>(w));
        let w = _mm256_xor_si256(w, _mm256_srli_epi32::<1>(w));
        #[expect(clippy::cast_sign_loss, reason = "an 8-bit mask")]
        let bits = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_slli_epi32::<31>(w))) as u32;
        bits
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::{
        __m256i, __m512i, _mm512_and_si512, _mm512_broadcast_i64x4, _mm512_loadu_si512,
        _mm512_permutex2var_epi64, _mm512_popcnt_epi64, _mm512_set_epi64, _mm512_set1_epi64,
        _mm512_setzero_si512, _mm512_test_epi64_mask, _mm512_xor_si512,
    };

    /// `u128`s `4i..4i + 4` of `words`, one a 128-bit lane.
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn quad<const N: usize>(words: &[u128; N], i: usize) -> __m512i {
        assert!(4 * i + 4 <= N);
        // SAFETY: `words[4i..4i + 4]` is 64 readable bytes (just checked,
        // against constants), and `loadu` takes any alignment.
        unsafe { _mm512_loadu_si512(words.as_ptr().add(4 * i).cast()) }
    }

    /// Columns `4i..4i + 4` of the window, one a 128-bit lane.
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn masked<const N: usize>(here: &[u128; N], next: &[u128; N], c: [__m512i; 2], i: usize) -> __m512i {
        _mm512_xor_si512(_mm512_and_si512(quad(here, i), c[0]), _mm512_and_si512(quad(next, i), c[1]))
    }

    /// Bit `b` is the parity of 128-bit lane `b` of `[x, y]` (`x`'s four
    /// lanes first): each lane's low words against its high words, the
    /// lanes in order, then each word's population count.
    #[target_feature(enable = "avx512f,avx512vpopcntdq")]
    #[inline]
    fn parities(x: __m512i, y: __m512i) -> u32 {
        let low = _mm512_permutex2var_epi64(x, _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0), y);
        let high = _mm512_permutex2var_epi64(x, _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1), y);
        let counts = _mm512_popcnt_epi64(_mm512_xor_si512(low, high));
        u32::from(_mm512_test_epi64_mask(counts, _mm512_set1_epi64(1)))
    }

    /// [`super::eight`], with each coefficient word in both lanes of a
    /// 256-bit register.
    #[target_feature(enable = "avx512f,avx512vpopcntdq,avx2")]
    #[inline]
    pub(super) fn eight(here: &[u128; 8], next: &[u128; 8], c_here: __m256i, c_next: __m256i) -> u32 {
        let c = [_mm512_broadcast_i64x4(c_here), _mm512_broadcast_i64x4(c_next)];
        parities(masked(here, next, c, 0), masked(here, next, c, 1))
    }

    /// [`super::four`], likewise: one register of columns, the other zero.
    #[target_feature(enable = "avx512f,avx512vpopcntdq,avx2")]
    #[inline]
    pub(super) fn four(here: &[u128; 4], next: &[u128; 4], c_here: __m256i, c_next: __m256i) -> u32 {
        let c = [_mm512_broadcast_i64x4(c_here), _mm512_broadcast_i64x4(c_next)];
        parities(masked(here, next, c, 0), _mm512_setzero_si512())
    }
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_and_si128, _mm_andnot_si128, _mm_castps_si128, _mm_castsi128_ps, _mm_movemask_epi8,
        _mm_movemask_ps, _mm_or_si128, _mm_packs_epi16, _mm_set_epi64x, _mm_set1_epi32, _mm_shuffle_ps,
        _mm_slli_epi16, _mm_slli_epi32, _mm_srli_epi16, _mm_srli_epi32, _mm_unpackhi_epi64,
        _mm_unpacklo_epi64, _mm_xor_ps, _mm_xor_si128,
    };

    /// A `u128` in a register, low half in lane 0 (from memory, one aligned
    /// load: LLVM sees the two halves are one word).
    #[target_feature(enable = "sse2")]
    #[inline]
    #[expect(clippy::cast_possible_truncation, reason = "the word's two halves, as bits")]
    pub(super) fn load(x: u128) -> __m128i {
        _mm_set_epi64x((x >> 64) as i64, x as i64)
    }

    /// Each column's window under the key's coefficients: `here[b] &
    /// c_here ^ next[b] & c_next`, whose parity is column `b`'s answer.
    #[target_feature(enable = "sse2")]
    #[inline]
    fn masked<const N: usize>(
        here: &[u128; N],
        next: &[u128; N],
        c_here: __m128i,
        c_next: __m128i,
    ) -> [__m128i; N] {
        std::array::from_fn(|b| {
            _mm_xor_si128(_mm_and_si128(load(here[b]), c_here), _mm_and_si128(load(next[b]), c_next))
        })
    }

    /// 128 → 64: `[p, q]`, each word's two halves folded together.
    #[target_feature(enable = "sse2")]
    #[inline]
    fn fold64(p: __m128i, q: __m128i) -> __m128i {
        _mm_xor_si128(_mm_unpacklo_epi64(p, q), _mm_unpackhi_epi64(p, q))
    }

    /// 64 → 32: the even 32-bit lanes of two registers against the odd,
    /// `p`'s two lanes first.
    #[target_feature(enable = "sse2")]
    #[inline]
    fn fold32(p: __m128i, q: __m128i) -> __m128i {
        let (p, q) = (_mm_castsi128_ps(p), _mm_castsi128_ps(q));
        let even = _mm_shuffle_ps::<0b10_00_10_00>(p, q);
        let odd = _mm_shuffle_ps::<0b11_01_11_01>(p, q);
        _mm_castps_si128(_mm_xor_ps(even, odd))
    }

    /// [`super::eight`].
    #[target_feature(enable = "sse2")]
    #[inline]
    pub(super) fn eight(here: &[u128; 8], next: &[u128; 8], c_here: u128, c_next: u128) -> u32 {
        let x = masked(here, next, load(c_here), load(c_next));
        // 128 → 64. The pairs are chosen so that the 16-bit lanes come out
        // in column order at the end.
        let (t0, t1, t2, t3) =
            (fold64(x[0], x[2]), fold64(x[4], x[6]), fold64(x[1], x[3]), fold64(x[5], x[7]));
        // 64 → 32.
        let (evens, odds) = (fold32(t0, t1), fold32(t2, t3)); // c0 c2 c4 c6, c1 c3 c5 c7
        // 32 → 16: an even column's fold in each lane's low half, the next
        // odd column's in its high half.
        let low = _mm_set1_epi32(0xffff);
        let evens = _mm_and_si128(_mm_xor_si128(evens, _mm_srli_epi32::<16>(evens)), low);
        let odds = _mm_xor_si128(odds, _mm_slli_epi32::<16>(odds));
        let w = _mm_or_si128(evens, _mm_andnot_si128(low, odds));
        // 16 → 1 within each lane, then bit 0 to bit 15 (the rest shifted
        // out), 0x8000 packing to 0x80, and one bit a column.
        let w = _mm_xor_si128(w, _mm_srli_epi16::<8>(w));
        let w = _mm_xor_si128(w, _mm_srli_epi16::<4>(w));
        let w = _mm_xor_si128(w, _mm_srli_epi16::<2>(w));
        let w = _mm_xor_si128(w, _mm_srli_epi16::<1>(w));
        let w = _mm_slli_epi16::<15>(w);
        #[expect(clippy::cast_sign_loss, reason = "a 16-bit mask")]
        let bits = _mm_movemask_epi8(_mm_packs_epi16(w, w)) as u32;
        bits & 0xff
    }

    /// [`super::four`]: the same folds as [`eight`], on one register from
    /// the 32-bit step on.
    #[target_feature(enable = "sse2")]
    #[inline]
    pub(super) fn four(here: &[u128; 4], next: &[u128; 4], c_here: __m128i, c_next: __m128i) -> u32 {
        let x = masked(here, next, c_here, c_next);
        // 128 → 64 → 32: c0 c1 c2 c3, one a lane.
        let w = fold32(fold64(x[0], x[1]), fold64(x[2], x[3]));
        // 32 → 1 within each lane, then bit 0 to the sign bit: one bit a column.
        let w = _mm_xor_si128(w, _mm_srli_epi32::<16>(w));
        let w = _mm_xor_si128(w, _mm_srli_epi32::<8>(w));
        let w = _mm_xor_si128(w, _mm_srli_epi32::<4>(w));
        let w = _mm_xor_si128(w, _mm_srli_epi32::<2>(w));
        let w = _mm_xor_si128(w, _mm_srli_epi32::<1>(w));
        #[expect(clippy::cast_sign_loss, reason = "a 4-bit mask")]
        let bits = _mm_movemask_ps(_mm_castsi128_ps(_mm_slli_epi32::<31>(w))) as u32;
        bits
    }
}

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
            eprintln!("no AVX2 on this CPU: its fold is not run");
            return;
        };
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
            eprintln!("no AVX-512 population count on this CPU: its fold is not run");
            return;
        };
        wide_folds_agree(avx512, 12);
    }
}
