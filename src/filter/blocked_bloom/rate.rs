//! The blocked layout's false-positive rate, and the probe count that
//! minimises it (the formula is drawn in the parent module's docs).

use super::super::bloom::MAX_PROBES;
use super::BLOCK_BITS;

/// Bits per key below which the rate is taken as 1 (it exceeds 0.99995).
pub(super) const MIN_BITS_PER_KEY: f64 = 0.1;

/// Bits per key above which
/// [`BlockedBloom::bits_per_key_for_fpr`](super::BlockedBloom::bits_per_key_for_fpr) stops searching.
pub(super) const MAX_BITS_PER_KEY: f64 = 64.0;

/// The blocked-Bloom false-positive rate at `bits_per_key` with `k` probes
/// (Putze et al.; see the module doc).
#[expect(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss,
    reason = "loop bounds from a finite, positive float, and back; all far below 2^52"
)]
pub(super) fn blocked_fpr(bits_per_key: f64, k: u32) -> f64 {
    // Below 0.1 bits/key (λ > 5120 keys per block) even k = 1 gives
    // ε > 1 − e^−10; stopping here also bounds the sum's length.
    if bits_per_key.is_nan() || bits_per_key < MIN_BITS_PER_KEY {
        return 1.0;
    }
    if bits_per_key.is_infinite() {
        return 0.0;
    }
    let b = f64::from(BLOCK_BITS);
    let lambda = b / bits_per_key;
    let spread = 12.0 * lambda.sqrt() + 40.0;
    let (lo, hi) = ((lambda - spread).max(0.0) as u64, (lambda + spread).ceil() as u64);
    let ln_lambda = lambda.ln();
    let ln_bit_clear = (1.0 - 1.0 / b).ln();
    let kf = f64::from(k);
    let mut ln_factorial = 0.0;
    let mut sum = 0.0;
    for i in 0..=hi {
        if i > 0 {
            ln_factorial += (i as f64).ln();
        }
        if i < lo {
            continue;
        }
        let i = i as f64;
        let poisson = (-lambda + i * ln_lambda - ln_factorial).exp();
        let block_fpr = (1.0 - (i * kf * ln_bit_clear).exp()).powf(kf);
        sum += poisson * block_fpr;
    }
    sum.min(1.0)
}

/// The probes for `keys` keys in `blocks` blocks sized at `bits_per_key`:
/// the best k for the bits per key the blocks really give (rounding up to a
/// whole block adds up to 511 bits, so the last block's bits lower the rate
/// instead of idling), capped at [`MAX_BITS_PER_KEY`] so a near-empty filter
/// does not probe 30 bits per lookup for no measurable gain.
pub(super) fn probes_for(blocks: usize, keys: usize, bits_per_key: f64) -> u32 {
    #[expect(clippy::cast_precision_loss, reason = "a ratio")]
    let real = if keys == 0 {
        bits_per_key
    } else {
        (blocks as f64 * f64::from(BLOCK_BITS) / keys as f64).max(bits_per_key)
    };
    optimal_probes(real.min(MAX_BITS_PER_KEY)).0
}

/// The k in 1..=30 minimising [`blocked_fpr`], with that rate.
pub(super) fn optimal_probes(bits_per_key: f64) -> (u32, f64) {
    let mut best = (1, blocked_fpr(bits_per_key, 1));
    for k in 2..=MAX_PROBES {
        let fpr = blocked_fpr(bits_per_key, k);
        if fpr < best.1 {
            best = (k, fpr);
        } else if k > best.0 + 2 {
            // The rate is unimodal in k: two steps past the minimum, stop.
            break;
        }
    }
    best
}
