//! What Monkey's plan is held against and topped up with: the uniform
//! plans it must not lose to, and the mixes that spend what a plan leaves
//! (see `plan` in the parent module).

use super::super::cost::{
    expected_blocked_bloom_bits, expected_ribbon_bits, static_kinds, table_filter_bits_per_key,
};
use super::super::{LevelFilter, Mix};
use super::ribbon::{ribbon_bits_for, ribbon_choice, vertices};
use super::{
    BLOOM_MAX_BITS, BLOOM_MIN_BITS, LevelModel, bloom_bits_for, bloom_choice, exact, exact_rates,
    offers_ribbon,
};
use crate::filter::FilterKind;

/// How close to Monkey's own summed rate a uniform plan may come and be
/// taken instead (see `plan`).
pub(super) const TIE: f64 = 1.02;

/// How far over the budget a uniform plan may be priced and still compete
/// (see `plan`).
pub(super) const UNIFORM_SLACK: f64 = 1.01;

/// The largest share of the budget one table's step up may be, for a level
/// to mix (half of it is what the built share may miss by).
pub(super) const MAX_MIX_STEP: f64 = 0.02;

/// The blocked-Bloom bits/key a mixed level's stronger tables may take.
const MIX_BLOOM_BITS: [f64; 7] = [12.0, 16.0, 20.0, 24.0, 32.0, 40.0, BLOOM_MAX_BITS];

/// Spends `slack` bits (what the plan leaves when every level's next step
/// up costs more than is left) by giving some of one level's tables a
/// stronger kind: a [`Mix`]. The level and kind are those whose share that
/// `slack` pays for lowers the summed rate most. Shares are whole tables of
/// the level's modelled size, rounded down, so the plan stays within its
/// budget and the engine can build it; a level of one table can only move
/// whole, to a stronger kind the slack pays for in full.
/// What the rounding leaves goes to the next level that can take it.
pub(super) fn mix_in_slack(
    plan: &mut [LevelFilter],
    levels: &[LevelModel],
    statics: &[Vec<LevelFilter>],
    mut slack: f64,
    free: usize,
    budget_bits: f64,
) {
    // Each round mixes a level or moves one wholly to a stronger option;
    // a few rounds per level bound it.
    for _ in 0..4 * levels.len() {
        let Some((i, stronger, share)) = best_mix(plan, levels, statics, slack, free, budget_bits) else {
            return;
        };
        let current = plan[i];
        slack -= share * levels[i].keys() * (stronger.bits_per_key - current.bits_per_key);
        plan[i] = if share >= 1.0 {
            stronger
        } else {
            LevelFilter {
                kind: current.kind,
                target_fpr: (1.0 - share) * current.target_fpr + share * stronger.target_fpr,
                bits_per_key: (1.0 - share) * current.bits_per_key + share * stronger.bits_per_key,
                mix: Some(Mix { kind: stronger.kind, share }),
            }
        };
    }
}

/// The level (not yet mixed), stronger option and share of whole tables
/// that `slack` buys with the largest fall in the summed rate.
fn best_mix(
    plan: &[LevelFilter],
    levels: &[LevelModel],
    statics: &[Vec<LevelFilter>],
    slack: f64,
    free: usize,
    budget_bits: f64,
) -> Option<(usize, LevelFilter, f64)> {
    let mut best: Option<(f64, usize, LevelFilter, f64)> = None;
    for (i, ((current, l), s)) in plan.iter().zip(levels).zip(statics).enumerate().skip(free) {
        if current.mix.is_some() || l.keys() <= 0.0 || l.table_keys < 1.0 {
            continue;
        }
        // A level of one table can only move whole.
        let tables = (l.keys() / l.table_keys).round().max(1.0);
        // Whole bits/key, so that the stronger kind stays the same kind from
        // one plan to the next and a level's share can be counted; and, for
        // the whole level, blocked Bloom at all the bits `slack` pays for.
        let blooms = MIX_BLOOM_BITS.map(|b| exact(bloom_choice(b, l.table_keys)));
        let affordable = current.bits_per_key + slack / l.keys();
        let whole = bloom_bits_for(affordable, l.table_keys)
            .map(|b| exact(bloom_choice(b, l.table_keys)))
            .into_iter()
            .chain(
                ribbon_bits_for(affordable, l.table_keys)
                    .filter(|_| offers_ribbon(s))
                    .map(|b| ribbon_choice(b, l.table_keys)),
            );
        for stronger in s.iter().copied().chain(blooms).chain(whole) {
            let extra_bits = stronger.bits_per_key - current.bits_per_key;
            if stronger.target_fpr >= current.target_fpr || extra_bits <= 0.0 {
                continue;
            }
            // The engine builds a share to within half a table, so one
            // table's step must be small beside the budget (a level of four
            // tables, each a quarter of it, was built 3.4% over). A bare
            // level is the exception: under a tight budget its first filters
            // are the best bits left (the deepest level of 30,000 keys at
            // 1.2 bits/key, left bare, summed 1.000 where uniform Ribbon
            // summed 0.990), so it mixes in big steps with half a table held
            // back, which the engine's half-table rounding cannot pass.
            let fits = (slack / (l.keys() * extra_bits)).min(1.0) * tables;
            let share_of_all = extra_bits * l.table_keys.min(l.keys()) / budget_bits;
            let whole_level = extra_bits * l.keys() <= slack;
            let bare = current.kind == FilterKind::None;
            if share_of_all > MAX_MIX_STEP && !whole_level && !bare {
                continue;
            }
            let margin = if share_of_all > MAX_MIX_STEP && !whole_level { 0.5 } else { 0.0 };
            let share = (fits - margin).max(0.0).floor() / tables;
            let gain = share * (current.target_fpr - stronger.target_fpr) * l.runs;
            if share > 0.0 && best.as_ref().is_none_or(|b| gain > b.0) {
                best = Some((gain, i, stronger, share));
            }
        }
    }
    best.map(|(_, i, stronger, share)| (i, stronger, share))
}

/// Each fixed-rate kind (`static_kinds()`, in order), then Ribbon at each
/// whole column count (`ribbon::vertices`), priced for each level's table
/// size: `[level][option]`.
pub(super) fn static_options(levels: &[LevelModel]) -> Vec<Vec<LevelFilter>> {
    levels
        .iter()
        .map(|l| {
            #[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "a key count")]
            let n = l.table_keys.round() as u64;
            static_kinds()
                .map(|kind| LevelFilter {
                    kind,
                    target_fpr: kind.theoretical_fpr(),
                    bits_per_key: table_filter_bits_per_key(kind, n),
                    mix: None,
                })
                .chain(vertices(l.table_keys))
                .collect()
        })
        .collect()
}

/// The uniform plans Monkey compares itself with: each fixed-rate kind on
/// every level, and blocked Bloom and Ribbon each at the one bits/key (to a
/// hundredth) that spends the budget.
pub(super) fn uniform_plans(
    levels: &[LevelModel],
    valid: &dyn Fn(&LevelModel) -> bool,
    budget_bits: f64,
    free: usize,
) -> Vec<Vec<LevelFilter>> {
    let on_valid = |choose: &dyn Fn(&LevelModel) -> LevelFilter| -> Vec<LevelFilter> {
        levels.iter().map(|l| if valid(l) { choose(l) } else { LevelFilter::NONE }).collect()
    };
    let statics = static_options(levels);
    let mut out: Vec<Vec<LevelFilter>> = (0..static_kinds().count())
        .map(|k| {
            levels
                .iter()
                .zip(&statics)
                .map(|(l, s)| if valid(l) { s[k] } else { LevelFilter::NONE })
                .collect()
        })
        .collect();
    let spending =
        |range, price: fn(f64, f64) -> f64| uniform_bits(levels, valid, budget_bits, free, range, price);
    if let Some(b) = spending((BLOOM_MIN_BITS, BLOOM_MAX_BITS), expected_blocked_bloom_bits) {
        let mut plan = on_valid(&|l: &LevelModel| bloom_choice(b, l.table_keys));
        exact_rates(&mut plan);
        out.push(plan);
    }
    if let Some(b) = spending((1.0, 32.0), expected_ribbon_bits) {
        out.push(on_valid(&|l: &LevelModel| ribbon_choice(b, l.table_keys)));
    }
    out
}

/// The bits/key in `range` (to a hundredth below) whose expected real
/// cost, `price(bits, table_keys)` per key, spends `budget_bits` over the
/// charged valid levels, if the range's lower end fits.
fn uniform_bits(
    levels: &[LevelModel],
    valid: &dyn Fn(&LevelModel) -> bool,
    budget_bits: f64,
    free: usize,
    (mut lo, mut hi): (f64, f64),
    price: fn(f64, f64) -> f64,
) -> Option<f64> {
    let cost = |b: f64| -> f64 {
        levels.iter().skip(free).filter(|l| valid(l)).map(|l| price(b, l.table_keys) * l.keys()).sum()
    };
    if cost(lo) > budget_bits {
        return None;
    }
    for _ in 0..40 {
        let mid = f64::midpoint(lo, hi);
        if cost(mid) <= budget_bits { lo = mid } else { hi = mid }
    }
    Some((lo * 100.0).floor() / 100.0)
}
