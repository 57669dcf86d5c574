//! Refreshes: when no level needs merging, one table below level 0 whose
//! filter no longer matches the plan for its level is rewritten in
//! place (same entries, same level, the planned filter), published as a new
//! table and swapped in by one manifest edit. Tables drift from the plan as
//! the tree grows: a level that was the deepest (unfiltered under
//! `+skip-last`, loosely filtered under Monkey) becomes a middle level. A
//! table drifts when it has no filter and the plan wants one, or the
//! reverse, or when it carries another kind than the planned one (blocked
//! Bloom at other bits/key only when its bytes differ from the planned
//! ones' by more than a tolerance). Background compaction refreshes only
//! the first kind (no level above the last is left unfiltered), and under
//! a filter memory budget the tables most over their plan once the filters
//! pass the budget by 5% ([`pick_over_budget`]); `Db::compact` refreshes
//! all, so the whole tree ends on its plan and its budget. A table whose
//! filter build fell back is not
//! refreshed: the same build would fall back again.

use std::sync::Arc;

use super::EXPLICIT_DRIFT;
use super::strategy::Job;
use crate::filter::FilterKind;
use crate::policy::{BloomLedger, LevelFilter, MixLedger, table_filter_bytes};
use crate::tree::{TableFile, Tree, kinds_left};

/// How far a table may drift from its level's plan before it is refreshed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Drift {
    /// Only a filter where the plan has none, or none where it has one.
    Presence,
    /// That, or another kind than the planned one (a small table's xor8
    /// costs about what blocked Bloom at 15 bits/key does, at 4× its rate),
    /// or blocked Bloom or Ribbon whose bytes are off the planned
    /// bits/key's by more than this fraction.
    Bytes(f64),
}

/// Whether `t`, on a level planned `planned`, should be rewritten.
pub(crate) fn drifted(t: &TableFile, planned: &LevelFilter, drift: Drift) -> bool {
    if t.table.filter_fell_back() {
        return false;
    }
    // A kind the plan writes is on plan, the bare tables of a level whose
    // plan filters only a share of them (a mix over no filter) included.
    if planned.writes(t.record.filter) {
        return false;
    }
    let has = t.record.filter != FilterKind::None;
    let wants = planned.kind != FilterKind::None;
    if has != wants {
        return true;
    }
    let Drift::Bytes(tolerance) = drift else { return false };
    if !has {
        return false;
    }
    // A mixed level keeps its share by counting exact kinds (`MixLedger`).
    if planned.mix.is_some() {
        return true;
    }
    // A kind sized by bits per key (blocked Bloom, Ribbon) drifts only by
    // its bytes: a budget moves its bits a little with every plan.
    let Some(planned_sized) = planned.sized_like(t.record.filter) else {
        return true;
    };
    let keys = t.table.filter_keys();
    #[expect(clippy::cast_precision_loss, reason = "a relative difference of sizes")]
    let (built, want) =
        (table_filter_bytes(t.record.filter, keys) as f64, table_filter_bytes(planned_sized, keys) as f64);
    (built - want).abs() > tolerance * want
}

/// Whether `t`, on a mixed level of `tables` planned `planned`, is one the
/// level's share wants rewritten as its other kind: the kind a write
/// replacing it would choose ([`MixLedger`]) is not its own.
fn off_share(t: &TableFile, tables: &[Arc<TableFile>], planned: &LevelFilter) -> bool {
    if !planned.writes(t.record.filter) {
        return false;
    }
    let kept = kinds_left(tables, |n| n == t.number());
    MixLedger::new(planned, &kept, t.record.entries)
        .is_some_and(|ledger| ledger.next_kind(planned, t.record.entries) != t.record.filter)
}

/// The blocked-Bloom account ([`BloomLedger`]) of a level of `tables`
/// planned `planned`, but for the table numbered `leave_out`: only tables
/// that stay count, not those `Db::compact` will rewrite for drifting from
/// the plan (paying for a table that is about to be rewritten would leave
/// its level off once it is).
pub(crate) fn bloom_account(
    tables: &[Arc<TableFile>],
    planned: &LevelFilter,
    leave_out: impl Fn(u64) -> bool,
) -> Option<BloomLedger> {
    let stay = tables.iter().filter(|t| !leave_out(t.number()) && !drifted(t, planned, EXPLICIT_DRIFT));
    BloomLedger::new(planned, stay.map(|t| (t.record.filter, t.table.filter_keys(), t.record.filter_bytes)))
}

/// Whether `t`, a blocked-Bloom table on a level of `tables` planned
/// `planned` under a budget, should be rewritten to bring its level back to
/// its price: the level is more than a block off it, and a rewrite sized by
/// the other tables' balance ([`BloomLedger`]) moves it that way. Each
/// rewrite moves the balance toward zero, so a level settles after about
/// one rewrite per block it was off.
fn off_budget(t: &TableFile, tables: &[Arc<TableFile>], planned: &LevelFilter) -> bool {
    if !matches!(t.record.filter, FilterKind::BlockedBloom { .. }) {
        return false;
    }
    let Some(level) = bloom_account(tables, planned, |_| false) else { return false };
    let owed = level.owed_bits();
    if owed.abs() <= 512.0 {
        return false;
    }
    let Some(others) = bloom_account(tables, planned, |n| n == t.number()) else { return false };
    let (was, would) = (t.record.filter_bytes, others.next_filter_bytes(t.table.filter_keys()));
    if owed > 0.0 { would > was } else { would < was }
}

/// The first table below level 0 that drifted from `plan`, as a refresh.
/// Tables for which `skip` is true (refreshed already under this shape) are
/// passed over: a rewrite that did not cure a drift would not cure it the
/// second time either.
/// Under a budget (`budgeted`), an explicit refresh also rewrites
/// blocked-Bloom tables to keep each level on its price ([`off_budget`]).
pub(crate) fn pick_refresh(
    tree: &Tree,
    plan: &[LevelFilter],
    drift: Drift,
    budgeted: bool,
    skip: &dyn Fn(u64) -> bool,
) -> Option<Job> {
    tree.levels.iter().enumerate().skip(1).find_map(|(level, tables)| {
        let planned = plan.get(level)?;
        let explicit = matches!(drift, Drift::Bytes(_));
        let t = tables.iter().find(|t| {
            !skip(t.number())
                && !t.table.filter_fell_back()
                && (drifted(t, planned, drift)
                    || (explicit && off_share(t, tables, planned))
                    || (explicit && budgeted && off_budget(t, tables, planned)))
        })?;
        Some(Job::new(level, vec![Arc::clone(t)], Vec::new()))
    })
}

/// How far the filters below level 0 may pass a filter memory budget
/// before background compaction rewrites tables to bring them back
/// ([`pick_over_budget`]).
pub(crate) const BACKGROUND_BUDGET_SLACK: f64 = 0.05;

/// Under a filter memory budget of `budget` bytes, once the filters of
/// levels 1 and deeper take more than [`BACKGROUND_BUDGET_SLACK`] over it:
/// the table below level 0 whose filter takes the most bytes over what its
/// level's plan gives a table of its keys (by more than a tenth: a rewrite
/// that sheds less is not worth its data's bytes, and the level's
/// blocked-Bloom ledger moves a table's filter by a block either way), as
/// a refresh. Background compaction otherwise refreshes only tables
/// whose filter is present against the plan or absent against it, so tables
/// written while the tree was smaller (at more bits per key) kept their
/// bytes until a merge rewrote them: under `compact_due` after every flush,
/// 19.7% over the budget below level 0 at the end of a 200,000-key fill,
/// and for good once writes stop. The oldest tables carry the most excess,
/// so a few rewrites shed most of it.
pub(crate) fn pick_over_budget(
    tree: &Tree,
    plan: &[LevelFilter],
    budget: u64,
    skip: &dyn Fn(u64) -> bool,
) -> Option<Job> {
    let below: u64 = tree.levels.iter().skip(1).flatten().map(|t| t.record.filter_bytes).sum();
    #[expect(clippy::cast_precision_loss, reason = "a share of a byte count")]
    if below as f64 <= budget as f64 * (1.0 + BACKGROUND_BUDGET_SLACK) {
        return None;
    }
    let excess = |t: &TableFile, planned: &LevelFilter| -> i64 {
        let kind = t.record.filter;
        let on_plan = if planned.writes(kind) { kind } else { planned.kind };
        let want = table_filter_bytes(planned.sized_like(kind).unwrap_or(on_plan), t.table.filter_keys());
        let tolerance = want / 10;
        let excess = t.record.filter_bytes.saturating_sub(want);
        if excess > tolerance { i64::try_from(excess).unwrap_or(i64::MAX) } else { 0 }
    };
    let (level, t, _) = tree
        .levels
        .iter()
        .enumerate()
        .skip(1)
        .filter_map(|(level, tables)| plan.get(level).map(|p| (level, tables, p)))
        .flat_map(|(level, tables, p)| tables.iter().map(move |t| (level, t, excess(t, p))))
        .filter(|(_, t, e)| *e > 0 && !skip(t.number()) && !t.table.filter_fell_back())
        .max_by_key(|(_, _, e)| *e)?;
    Some(Job::new(level, vec![Arc::clone(t)], Vec::new()))
}
