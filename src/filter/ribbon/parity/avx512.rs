//! The folds with AVX-512's per-lane population count, four columns a
//! 512-bit register ([`super::Avx512`]).

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
