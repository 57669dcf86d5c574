//! The eight-column fold with AVX2, two columns a 256-bit register, and
//! the coefficient window built with its per-lane shifts ([`super::Avx2`]).

use std::arch::x86_64::{
    __m256i, _mm256_add_epi64, _mm256_and_si256, _mm256_castps_si256, _mm256_castsi256_ps,
    _mm256_loadu_si256, _mm256_movemask_ps, _mm256_or_si256, _mm256_permute4x64_epi64,
    _mm256_permutevar8x32_epi32, _mm256_set_epi32, _mm256_set_epi64x, _mm256_set1_epi64x, _mm256_shuffle_ps,
    _mm256_slli_epi32, _mm256_sllv_epi64, _mm256_srli_epi32, _mm256_srlv_epi64, _mm256_sub_epi64,
    _mm256_unpackhi_epi64, _mm256_unpacklo_epi64, _mm256_xor_ps, _mm256_xor_si256,
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
