//! Monkey's allocation of filter memory across LSM levels.
//!
//! Dayan, Athanassoulis and Idreos (SIGMOD 2017) observe that a point lookup
//! for an absent key probes one filter per level, so the expected number of
//! wasted data-block reads is the *sum* of the levels' false-positive rates.
//! Giving every level the same bits per key (and so the same rate) is not
//! what minimises that sum: bits spent on a small level protect few keys.
//!
//! With the Bloom memory model `bits(N, p) = N · ln(1/p) / (ln 2)²`, the
//! Lagrangian of "minimise Σ pᵢ subject to Σ bits(Nᵢ, pᵢ) = M" gives
//! `pᵢ = λ · Nᵢ`: each level's rate is proportional to its size, capped at 1
//! (a level whose optimal rate reaches 1 gets no filter at all). λ is found by
//! bisection on the memory constraint, which is monotone in λ.

const LN2_SQUARED: f64 = std::f64::consts::LN_2 * std::f64::consts::LN_2;

/// Bits a Bloom-model filter needs per key for false-positive rate `p`.
#[must_use]
pub fn model_bits_per_key(p: f64) -> f64 {
    if p >= 1.0 { 0.0 } else { (1.0 / p).ln() / LN2_SQUARED }
}

/// The false-positive rate a Bloom-model filter reaches with `bits_per_key`.
#[must_use]
pub fn model_fpr(bits_per_key: f64) -> f64 {
    (-bits_per_key * LN2_SQUARED).exp()
}

/// Monkey-optimal per-level false-positive rates.
///
/// `level_keys[i]` is the (expected) number of keys at level `i`; the budget
/// is `bits_per_key` averaged over all of them. Levels with no keys get a rate
/// of 1 (no filter). The result minimises the sum of rates for that budget.
///
/// ```
/// use siftdb::policy::monkey_rates;
/// let rates = monkey_rates(&[1.0, 10.0, 100.0, 1000.0], 10.0);
/// // Rates grow with level size: the biggest level gets the loosest filter.
/// assert!(rates.windows(2).all(|w| w[0] < w[1]));
/// ```
#[must_use]
pub fn monkey_rates(level_keys: &[f64], bits_per_key: f64) -> Vec<f64> {
    let total: f64 = level_keys.iter().filter(|n| n.is_finite() && **n > 0.0).sum();
    if total <= 0.0 || !bits_per_key.is_finite() || bits_per_key <= 0.0 {
        return vec![1.0; level_keys.len()];
    }
    let budget = bits_per_key * total;
    let rates_for = |lambda: f64| -> Vec<f64> {
        level_keys.iter().map(|&n| if n > 0.0 { (lambda * n).min(1.0) } else { 1.0 }).collect()
    };
    let memory = |rates: &[f64]| -> f64 {
        level_keys
            .iter()
            .zip(rates)
            .map(|(&n, &p)| if n > 0.0 { n * model_bits_per_key(p) } else { 0.0 })
            .sum()
    };
    // Memory falls as λ grows; bisect in log space between "every level at
    // rate ~0" and "every level at rate 1".
    let (mut lo, mut hi) = (1e-300_f64.ln(), 0.0_f64);
    for _ in 0..200 {
        let mid = f64::midpoint(lo, hi);
        if memory(&rates_for(mid.exp())) > budget {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    rates_for(hi.exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geometric(ratio: f64, levels: usize) -> Vec<f64> {
        (0..levels).map(|i| ratio.powi(i32::try_from(i).unwrap())).collect()
    }

    #[test]
    fn spends_exactly_the_budget() {
        for (ratio, levels, bpk) in [(10.0, 5, 10.0), (10.0, 7, 5.0), (4.0, 7, 10.0), (10.0, 4, 10.0)] {
            let keys = geometric(ratio, levels);
            let rates = monkey_rates(&keys, bpk);
            let used: f64 = keys.iter().zip(&rates).map(|(n, p)| n * model_bits_per_key(*p)).sum();
            let budget = bpk * keys.iter().sum::<f64>();
            assert!((used - budget).abs() / budget < 1e-6, "{ratio} {levels}: used {used} of {budget}");
        }
    }

    #[test]
    fn t10_five_levels_halves_the_uniform_sum_of_rates() {
        // The issue's bar: T = 10, 5 levels, 10 bits/key on average.
        let keys = geometric(10.0, 5);
        let monkey: f64 = monkey_rates(&keys, 10.0).iter().sum();
        let uniform = 5.0 * model_fpr(10.0);
        assert!(monkey < uniform / 2.0, "monkey {monkey} vs uniform {uniform}");
        // Cross-check against the reference script's figures
        // (shared/reference/monkey_allocation.py): 0.0410 and 0.0118.
        assert!((uniform - 0.0410).abs() < 5e-4, "{uniform}");
        assert!((monkey - 0.0118).abs() < 5e-4, "{monkey}");
    }

    #[test]
    fn rates_are_proportional_to_level_size_below_the_cap() {
        let keys = geometric(10.0, 5);
        let rates = monkey_rates(&keys, 10.0);
        for w in rates.windows(2) {
            assert!((w[1] / w[0] - 10.0).abs() < 1e-6, "{rates:?}");
        }
    }

    #[test]
    fn a_tiny_budget_drops_filters_from_the_largest_levels_first() {
        let keys = geometric(10.0, 4);
        let rates = monkey_rates(&keys, 0.5);
        assert!((rates[3] - 1.0).abs() < 1e-12, "{rates:?}");
        assert!(rates[0] < 1.0, "{rates:?}");
    }

    #[test]
    fn degenerate_inputs_mean_no_filters() {
        assert_eq!(monkey_rates(&[], 10.0), Vec::<f64>::new());
        assert_eq!(monkey_rates(&[0.0, 0.0], 10.0), vec![1.0, 1.0]);
        assert_eq!(monkey_rates(&[5.0], f64::NAN), vec![1.0]);
        assert!((monkey_rates(&[5.0, 0.0], 10.0)[1] - 1.0).abs() < f64::EPSILON);
    }
}
