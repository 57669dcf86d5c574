//! Ribbon as the planner sees it: a rate for any bits per key, about 3%
//! over the bound `log2(1/p)` where blocked Bloom pays about 45%.
//!
//! A Ribbon filter at `b` bits/key stores `c = b / 1.02` solution columns a
//! slot and passes an absent key with probability `2^−⌊c⌋·(1 − frac(c)/2)`:
//! linear in the bits between whole column counts, so its rate-for-space
//! curve is the convex chain through the points `(k·1.02, 2^−k)`
//! ([`Ribbon::bits_per_key_for_columns`]). The Lagrangian in `plan` only
//! ever lands on a convex curve's corners, so those are the options each
//! level is offered ([`vertices`], beside the fixed-rate kinds); the bits a
//! plan leaves are spent along the chain's edges ([`ribbon_bits_for`]).
//! Every option is priced at the level's table size with
//! [`expected_ribbon_bits`], so a small table's headers and 128-slot
//! rounding (half a block, on average over table sizes) are paid where
//! they fall.

use super::super::LevelFilter;
use super::super::cost::expected_ribbon_bits;
use crate::filter::{FilterKind, Ribbon};

/// The most columns offered: 31, under Ribbon's 32 bits/key (a rate of
/// 2^−31, below anything a plan asks for).
const MAX_COLUMNS: u32 = 31;

/// Ribbon at `bits_per_key` (clamped to 1..=32) for tables of `table_keys`
/// keys: its nominal rate, its expected real bits per key.
pub(super) fn ribbon_choice(bits_per_key: f64, table_keys: f64) -> LevelFilter {
    let kind = FilterKind::Ribbon { bits_per_key: bits_per_key.clamp(1.0, 32.0) };
    LevelFilter {
        kind,
        target_fpr: kind.theoretical_fpr(),
        bits_per_key: expected_ribbon_bits(kind.bits_per_key().unwrap_or(1.0), table_keys),
        mix: None,
    }
}

/// Ribbon at each whole column count, 1 to 31, for tables of `table_keys` keys.
pub(super) fn vertices(table_keys: f64) -> impl Iterator<Item = LevelFilter> {
    (1..=MAX_COLUMNS).map(move |k| ribbon_choice(Ribbon::bits_per_key_for_columns(k), table_keys))
}

/// The most Ribbon bits/key (to a hundredth) whose expected real cost in
/// tables of `table_keys` keys is at most `real_bits` per key, if 1 bit/key fits.
pub(super) fn ribbon_bits_for(real_bits: f64, table_keys: f64) -> Option<f64> {
    let fits = |hundredths: u32| expected_ribbon_bits(f64::from(hundredths) / 100.0, table_keys) <= real_bits;
    // The real cost never falls as the bits/key grow: bisect on hundredths.
    let (mut lo, mut hi) = (100u32, 3200u32);
    if !fits(lo) {
        return None;
    }
    if fits(hi) {
        return Some(32.0);
    }
    while hi - lo > 1 {
        let mid = u32::midpoint(lo, hi);
        if fits(mid) { lo = mid } else { hi = mid }
    }
    Some(f64::from(lo) / 100.0)
}

/// `current`, a level's Ribbon filter, raised by `extra` real bits per key
/// along the chain's edge (to a hundredth below), if that raises it at all.
pub(super) fn raised(current: &LevelFilter, extra: f64, table_keys: f64) -> Option<LevelFilter> {
    // A mixed level's bits are an average over two kinds: not this edge.
    let (FilterKind::Ribbon { bits_per_key }, None) = (current.kind, current.mix) else { return None };
    let b = ribbon_bits_for(current.bits_per_key + extra, table_keys)?;
    (b > bits_per_key).then(|| ribbon_choice(b, table_keys))
}

#[cfg(test)]
mod tests {
    use super::super::LevelModel;
    use super::super::rivals::uniform_plans;
    use super::*;

    #[test]
    fn vertices_are_the_corners_of_the_rate_curve() {
        for n in [1_000.0, 100_000.0] {
            let v: Vec<LevelFilter> = vertices(n).collect();
            assert_eq!(v.len(), 31);
            for (k, c) in (1..).zip(&v) {
                assert!((c.target_fpr - (-f64::from(k)).exp2()).abs() < 1e-12, "{k}: {c:?}");
            }
            // Convex: each step up in columns buys less rate per bit.
            for w in v.windows(3) {
                let slope = |a: &LevelFilter, b: &LevelFilter| {
                    (a.target_fpr - b.target_fpr) / (b.bits_per_key - a.bits_per_key)
                };
                assert!(slope(&w[0], &w[1]) > slope(&w[1], &w[2]), "{n}: {w:?}");
            }
            // Between two corners the rate is on the chord.
            let mid = ribbon_choice(f64::midpoint(v[6].kind_bits(), v[7].kind_bits()), n);
            let chord = f64::midpoint(v[6].target_fpr, v[7].target_fpr);
            assert!((mid.target_fpr - chord).abs() < 1e-9 * chord.max(1e-12) + 1e-12, "{mid:?}");
        }
    }

    #[test]
    fn bits_for_a_real_cost_fit_it_and_are_the_most_that_do() {
        for n in [300.0, 2_000.0, 60_000.0] {
            for real in [1.5, 7.3, 10.0, 19.9, 40.0] {
                let Some(b) = ribbon_bits_for(real, n) else {
                    assert!(ribbon_choice(1.0, n).bits_per_key > real, "{real} at {n}");
                    continue;
                };
                assert!(ribbon_choice(b, n).bits_per_key <= real, "{b} for {real} at {n}");
                if b < 32.0 {
                    assert!(ribbon_choice(b + 0.01, n).bits_per_key > real, "{b} for {real} at {n}");
                }
            }
        }
    }

    #[test]
    fn uniform_ribbon_spends_the_budget() {
        let levels: Vec<LevelModel> = [1e4, 1e5, 1e6]
            .iter()
            .map(|&n| LevelModel { run_keys: n, runs: 1.0, table_keys: f64::min(n, 5e4) })
            .collect();
        let total: f64 = levels.iter().map(LevelModel::keys).sum();
        let valid = |l: &LevelModel| l.keys() > 0.0;
        let ribbon_plan = |budget: f64| {
            uniform_plans(&levels, &valid, budget, 0)
                .into_iter()
                .find(|p| p.iter().all(|c| matches!(c.kind, FilterKind::Ribbon { .. })))
        };
        let plan = ribbon_plan(10.0 * total).unwrap();
        let spent: f64 = plan.iter().zip(&levels).map(|(c, l)| c.bits_per_key * l.keys()).sum();
        assert!(spent <= 10.0 * total && spent >= 9.98 * total, "{}", spent / total);
        assert!(ribbon_plan(0.5 * total).is_none());
    }

    impl LevelFilter {
        fn kind_bits(&self) -> f64 {
            self.kind.bits_per_key().unwrap()
        }
    }
}
