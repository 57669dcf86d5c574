//! Spending what the plan leaves over: the slack bits go to the levels
//! whose bits per key are continuous.

use super::ribbon::raised;
use super::{LevelFilter, LevelModel, bloom_choice};
use crate::filter::FilterKind;

/// Spreads `slack` bits over the levels (from `free` on) whose bits/key is
/// continuous (blocked Bloom, Ribbon), the same bits/key each: with ln p
/// about linear in bits/key, that keeps their rates in proportion, as the
/// optimum wants.
pub(super) fn spread(plan: &mut [LevelFilter], levels: &[LevelModel], free: usize, slack: f64) {
    let continuous_keys: f64 = plan
        .iter()
        .zip(levels)
        .skip(free)
        .filter(|(c, _)| matches!(c.kind, FilterKind::BlockedBloom { .. } | FilterKind::Ribbon { .. }))
        .map(|(_, l)| l.keys())
        .sum();
    if slack <= 0.0 || continuous_keys <= 0.0 {
        return;
    }
    let extra = slack / continuous_keys;
    for (c, l) in plan.iter_mut().zip(levels).skip(free) {
        if let FilterKind::BlockedBloom { bits_per_key } = c.kind {
            *c = bloom_choice(((bits_per_key + extra) * 100.0).floor() / 100.0, l.table_keys);
        } else if let Some(up) = raised(c, extra, l.table_keys) {
            *c = up;
        }
    }
}
