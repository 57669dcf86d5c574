//! The folds with SSE2, part of every x86-64 CPU: the baseline
//! ([`super::eight`], [`super::four`]).

use std::arch::x86_64::{
    __m128i, _mm_and_si128, _mm_andnot_si128, _mm_castps_si128, _mm_castsi128_ps, _mm_movemask_epi8,
    _mm_movemask_ps, _mm_or_si128, _mm_packs_epi16, _mm_set_epi64x, _mm_set1_epi32, _mm_shuffle_ps,
    _mm_slli_epi16, _mm_slli_epi32, _mm_srli_epi16, _mm_srli_epi32, _mm_unpackhi_epi64, _mm_unpacklo_epi64,
    _mm_xor_ps, _mm_xor_si128,
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
    let (t0, t1, t2, t3) = (fold64(x[0], x[2]), fold64(x[4], x[6]), fold64(x[1], x[3]), fold64(x[5], x[7]));
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
