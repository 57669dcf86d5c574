//! Leveled compaction, the default [`CompactionStrategy`].
//!
//! # Invariant (what is leveled-only)
//!
//! - Level 0 holds flushes, which may overlap, newest first; every deeper
//!   level is one sorted run (tables sorted by key, no two overlapping).
//!   `manifest::version` refuses an edit that would overlap two tables of
//!   a level ≥ 1, and a point read (`tree::search`) probes every level-0
//!   table but at most one table per deeper level, found by binary search.
//! - A newer version of a key is never below an older one: all of level 0
//!   merges at once, and a deeper level's table merges with everything it
//!   overlaps one level down.
//! - Level 0 is merged once it holds `l0_compaction_trigger` tables and as
//!   many bytes as level 1, or `l0_compaction_trigger_max` tables whatever
//!   level 1 holds ([`level0_trigger`]); level `i ≥ 1` once its bytes pass
//!   `Options::level_target_bytes(i)`; the last level (`max_levels − 1`)
//!   has no target. The filter planner (`crate::planner`) models the tree
//!   this way: level 0 at half its least trigger, deeper levels at their
//!   targets.
//!
//! Another strategy may change any of this, but the first point is also
//! what the version check and the read path assume: a strategy that keeps
//! several runs below level 0 changes those two with it. One that keeps
//! every table on level 0 (FIFO) keeps the first point as it is.
//!
//! # Choosing
//!
//! - Level 0 (overlapping flushes): once it reaches its trigger
//!   ([`level0_trigger`]), all of its tables merge into level 1 together
//!   with every level-1 table their combined key range overlaps; where
//!   that is all of level 1, the result would pass level 1's target and
//!   level 2 is empty, the merge writes to level 2 ([`writes_through`]). Taking all of L0 at once keeps
//!   the rule "a newer version is never below an older one" trivially true.
//! - Level `i ≥ 1`: when its bytes exceed its target
//!   (`base_level_bytes × ratio^(i−1)`), one table moves down, merged with
//!   the tables of level `i+1` it overlaps. The table chosen is the one
//!   that overlaps the fewest bytes below per byte of its own (`RocksDB`'s
//!   default); among equals, the first after the largest key compacted
//!   last time, so repeated compactions still sweep the key space.
//!
//! The level whose score (`bytes / target`, or `tables / trigger` for L0) is
//! highest goes first. The last level has no target. `Db::compact` goes on
//! past the scores: it first merges all of level 0 ([`Leveled::settle`]),
//! so it ends with level 0 empty, every key in its settled place.
//!
//! When no level needs merging, a table holding a range tombstone every
//! reader sees moves down a level, merged with what it overlaps there
//! ([`pick_range_dels`]): that is where what it deletes is dropped, and
//! where it is dropped itself once nothing below holds its range. Each
//! such job takes its tombstones a level deeper or drops them, so they
//! stop at the last level.
//!
//! When nothing needs merging either, a table whose filter drifted from
//! the plan is refreshed ([`super::refresh`]): first one that drifted by
//! the state's [`Drift`](super::Drift), then, under a filter memory budget, the one most
//! over its plan.

use std::sync::Arc;

use super::refresh::{drifted, pick_over_budget, pick_refresh};
use super::strategy::{Choice, CompactionStrategy, Job, State};
use crate::key::SeqNo;
use crate::options::Options;
use crate::policy::LevelFilter;
use crate::table::TableRecord;
use crate::tree::{Level, TableFile, Tree};

/// Leveled compaction: see the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Leveled;

impl CompactionStrategy for Leveled {
    /// A merge past a trigger or target, else a range-tombstone move, else a
    /// refresh to the filter plan.
    fn choose(&self, tree: &Tree, opts: &Options, state: &State<'_>) -> Choice {
        if let Some(job) = pick(tree, opts, state.cursors) {
            let plan = || state.planner.plan(&state.planner.shape(tree, None));
            return merge_or_move(tree, job, opts, plan);
        }
        if let Some(job) = pick_range_dels(tree, opts, state.horizon) {
            return Choice::Merge(job);
        }
        let plan = state.planner.plan(&state.planner.shape(tree, None));
        let skip = |n| state.refreshed.contains(&n);
        pick_refresh(tree, &plan, state.drift, state.budgeted, &skip)
            .or_else(|| {
                let budget = opts.filter_memory_bytes.filter(|_| state.budgeted)?;
                pick_over_budget(tree, &plan, budget, &skip)
            })
            .map_or(Choice::Nothing, Choice::Refresh)
    }

    /// All of level 0 merged into level 1 while it holds a table numbered
    /// below `before`: `Db::compact` ends with level 0 empty of every
    /// table flushed before it began.
    fn settle(&self, tree: &Tree, opts: &Options, before: u64) -> Choice {
        if !tree.levels.first().is_some_and(|l0| l0.iter().any(|t| t.number() < before)) {
            return Choice::Nothing;
        }
        pick_level0(tree, opts).map_or(Choice::Nothing, Choice::Merge)
    }
}

/// `job` as a trivial move when merging would only copy its tables: they
/// meet nothing at the level below (widening took no neighbour there:
/// they are at least a table's size, or have no neighbours), not each
/// other, hold no range tombstone (those are merged down to drop what
/// they delete), were written with the codec of the level they would move
/// to (a policy with a codec of its own for the last level always merges),
/// and carry a filter on that level's plan (`plan`, asked last): a move
/// writes nothing, and a table that would then be refreshed to its new
/// level's filter would be written anyway, while one left off plan would
/// hold more filter memory than the policy gives. Under a policy whose
/// levels share a filter (`fuse8`) keys written in order go down whole;
/// under Monkey, where each level's bits differ, moves are rarer. (Planning
/// the move on the tree it leaves, where a whole level moving into an
/// empty one keeps its place as the last level, was tried: at 10^7 keys
/// the tables then missed that plan in most runs and every one was
/// rewritten, docs/measurements.md.)
///
/// A move from a level ≥ 1 takes along every neighbour on its level that
/// could move as well ([`extend_move`]).
fn merge_or_move(
    tree: &Tree,
    job: Job,
    opts: &Options,
    plan: impl FnOnce() -> Arc<Vec<LevelFilter>>,
) -> Choice {
    let codec = opts.compression.for_level(job.level + 1, false);
    let mut ranges: Vec<(&[u8], &[u8])> =
        job.inputs.iter().map(|t| (t.record.smallest.as_slice(), t.record.largest.as_slice())).collect();
    ranges.sort_unstable();
    let disjoint = ranges.windows(2).all(|w| w[0].1 < w[1].0);
    let copyable =
        |t: &Arc<TableFile>| t.table.range_dels().is_none() && t.table.properties().codec() == codec;
    if !(job.next_inputs.is_empty()
        && disjoint
        && opts.compression.last_level().is_none()
        && job.inputs.iter().all(copyable))
    {
        return Choice::Merge(job);
    }
    let plan = plan();
    let Some(planned) = plan.get(job.level + 1) else { return Choice::Merge(job) };
    let on_plan = |t: &Arc<TableFile>| !drifted(t, planned, super::EXPLICIT_DRIFT);
    if !job.inputs.iter().all(on_plan) {
        return Choice::Merge(job);
    }
    // Tables written under one plan share their filter's bits, so the
    // neighbours almost always pass with the table the strategy chose.
    // Neighbours under a quarter of the next level's table size stay: each
    // would be a small table there (`LevelStats::small_tables`), where a
    // merge widens them into their neighbours (`table_size_multiplier`).
    let fits = |t: &Arc<TableFile>| t.record.file_size * 4 >= opts.table_target_bytes_for(job.level + 1);
    Choice::Move(extend_move(tree, &job, |t| copyable(t) && on_plan(t) && fits(t)))
}

/// A move of one table of a level ≥ 1 widened to the run of neighbours
/// around it that meet nothing below either and pass `movable` (`RocksDB`
/// extends its trivial moves the same way); `job` itself otherwise. Every
/// byte left on a level is rewritten by each merge from the level above
/// that overlaps it, which for keys spread over the key space is every
/// merge: when level 1 first passes its target over an empty level 2,
/// moving one table at a time leaves level 1 at its target, and each later
/// level-0 merge rewrites it all. A byte moved down costs nothing now, and
/// is merged below only once that level passes its own target
/// (docs/measurements.md).
fn extend_move(tree: &Tree, job: &Job, movable: impl Fn(&Arc<TableFile>) -> bool) -> Job {
    let (Some(here), [only], 1..) = (tree.levels.get(job.level), job.inputs.as_slice(), job.level) else {
        return job.clone();
    };
    let below = tree.levels.get(job.level + 1).map_or(&[][..], Vec::as_slice);
    let below = Level { number: job.level + 1, tables: below };
    let meets_below = |t: &Arc<TableFile>| below.meets(&t.record.smallest, &t.record.largest);
    let free = |t: &Arc<TableFile>| movable(t) && !meets_below(t);
    let Some(at) = here.iter().position(|t| Arc::ptr_eq(t, only)) else { return job.clone() };
    let start = here[..at].iter().rposition(|t| !free(t)).map_or(0, |i| i + 1);
    let end = here[at + 1..].iter().position(|t| !free(t)).map_or(here.len(), |i| at + 1 + i);
    Job::new(job.level, here[start..end].to_vec(), Vec::new())
}

/// How far over its limit each level is; > 1 needs compaction.
#[expect(clippy::cast_precision_loss, reason = "scores only rank levels")]
fn scores(tree: &Tree, opts: &Options) -> Vec<f64> {
    let last = opts.max_levels - 1;
    (0..last)
        .map(|level| {
            if level == 0 {
                tree.l0_tables() as f64 / level0_trigger(tree, opts) as f64
            } else {
                tree.level_bytes(level) as f64 / opts.level_target_bytes(level) as f64
            }
        })
        .collect()
}

/// The level-0 table count that triggers a merge into level 1 now: the
/// count at which level 0, at its tables' mean size, holds as many bytes as
/// level 1, between `l0_compaction_trigger` and `l0_compaction_trigger_max`.
///
/// A level-0 merge writes level 0's bytes and rewrites level 1's, so
/// merging at a fixed table count writes `1 + L1 / L0` bytes per byte
/// brought down: over a full level 1 of 256 MiB and four flushes of 29 MB
/// that is 3.3; waiting until level 0 holds level 1's bytes bounds it at 2
/// (until the cap). The same trade of runs for writes that tiering makes
/// at the top of a tree (Dostoevsky's lazy leveling), kept to level 0,
/// where a point read pays a filter probe per table.
///
/// The cap stays below `l0_slowdown_trigger`: waiting for level 1 never
/// holds level 0 where writes slow or stop, which (past the stop trigger)
/// would wait on a merge that never came.
fn level0_trigger(tree: &Tree, opts: &Options) -> usize {
    let least = opts.l0_compaction_trigger;
    let most = opts.l0_compaction_trigger_max.min(opts.l0_slowdown_trigger.saturating_sub(1));
    trigger_for(tree.l0_tables(), tree.level_bytes(0), tree.level_bytes(1), least, most)
}

/// [`level0_trigger`] for `tables` level-0 tables of `l0` bytes over `l1`
/// bytes of level 1.
fn trigger_for(tables: usize, l0: u64, l1: u64, least: usize, most: usize) -> usize {
    let most = most.max(least);
    if tables == 0 || l0 == 0 {
        return least;
    }
    // ceil(l1 / mean) with mean = l0 / tables, in integers.
    let wanted = (u128::from(l1) * tables as u128).div_ceil(u128::from(l0));
    usize::try_from(wanted).unwrap_or(usize::MAX).clamp(least, most)
}

/// The tables of `tables` (a sorted run) whose key range meets `[lo, hi]`.
fn overlapping(tables: &[Arc<TableFile>], lo: &[u8], hi: &[u8]) -> Vec<Arc<TableFile>> {
    tables
        .iter()
        .filter(|t| t.record.largest.as_slice() >= lo && t.record.smallest.as_slice() <= hi)
        .cloned()
        .collect()
}

/// The most urgent compaction, if any level needs one. `cursors[level]` is
/// the largest key compacted last from that level.
fn pick(tree: &Tree, opts: &Options, cursors: &[Vec<u8>]) -> Option<Job> {
    let scores = scores(tree, opts);
    let (level, &score) = scores.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1))?;
    if score < 1.0 {
        return None;
    }
    job_at(tree, opts, cursors, level)
}

/// Every level-0 table merged into level 1, whatever level 0's score:
/// `Db::compact` ends with level 0 empty.
fn pick_level0(tree: &Tree, opts: &Options) -> Option<Job> {
    if tree.l0_tables() == 0 {
        return None;
    }
    job_at(tree, opts, &[], 0)
}

/// The first table above the last level holding a range tombstone at or
/// below `horizon` (which every reader sees), moved a level down: all of
/// level 0 if it is there, else that table with what it overlaps below.
fn pick_range_dels(tree: &Tree, opts: &Options, horizon: SeqNo) -> Option<Job> {
    let seen_by_all = |t: &&Arc<TableFile>| {
        t.table.range_dels().is_some_and(|d| d.tombstones().iter().any(|d| d.seq <= horizon))
    };
    let last = opts.max_levels.saturating_sub(1);
    let (level, t) = tree
        .levels
        .iter()
        .take(last)
        .enumerate()
        .find_map(|(level, tables)| tables.iter().find(seen_by_all).map(|t| (level, t)))?;
    if level == 0 { job_at(tree, opts, &[], 0) } else { job_with(tree, opts, level, vec![Arc::clone(t)]) }
}

/// The compaction of `level`: all of level 0, or the table of a deeper
/// level after its cursor.
fn job_at(tree: &Tree, opts: &Options, cursors: &[Vec<u8>], level: usize) -> Option<Job> {
    let here = tree.levels.get(level)?;
    let below = tree.levels.get(level + 1).map_or(&[][..], Vec::as_slice);
    let inputs: Vec<Arc<TableFile>> = if level == 0 {
        here.clone()
    } else {
        let cursor = cursors.get(level).map_or(&[][..], Vec::as_slice);
        vec![Arc::clone(least_overlapping(here, below, cursor, |t| &t.record)?)]
    };
    job_with(tree, opts, level, inputs)
}

/// `inputs` of `level` merged into `level + 1` with what they overlap there.
fn job_with(tree: &Tree, opts: &Options, level: usize, inputs: Vec<Arc<TableFile>>) -> Option<Job> {
    let below = tree.levels.get(level + 1).map_or(&[][..], Vec::as_slice);
    let lo = inputs.iter().map(|t| t.record.smallest.as_slice()).min()?;
    let hi = inputs.iter().map(|t| t.record.largest.as_slice()).max()?;
    let mut next_inputs = overlapping(below, lo, hi);
    let input_bytes = inputs.iter().map(|t| t.record.file_size).sum();
    widen_to_target(below, &mut next_inputs, input_bytes, opts.table_target_bytes_for(level + 1), lo);
    let through = level == 0 && writes_through(tree, opts, input_bytes, &next_inputs);
    Some(Job { level, inputs, next_inputs, through })
}

/// Whether a level-0 merge taking `next_inputs` of level 1 writes to level 2
/// instead: it takes all of level 1, level 2 is empty, and what it writes
/// would leave level 1 over its target.
///
/// Level 1 would then move down whole ([`extend_move`]), but only tables on
/// level 2's filter plan move, and under Monkey the merge wrote level 1's
/// plan (more bits per key than the level below, once the tree outgrows
/// level 1): at 10^7 keys the tables went down one merge at a time until
/// level 1 was back at its target, and the next level-0 merge rewrote that
/// target's worth again. Written to level 2 directly, the output carries
/// level 2's plan, and level 1 starts over empty (docs/measurements.md).
fn writes_through(tree: &Tree, opts: &Options, input_bytes: u64, next_inputs: &[Arc<TableFile>]) -> bool {
    let level1 = tree.levels.get(1).map_or(&[][..], Vec::as_slice);
    let level2_empty = tree.levels.get(2).is_none_or(Vec::is_empty);
    let next_bytes: u64 = next_inputs.iter().map(|t| t.record.file_size).sum();
    opts.max_levels > 2
        && level2_empty
        && !next_inputs.is_empty()
        && next_inputs.len() == level1.len()
        && input_bytes + next_bytes > opts.level_target_bytes(1)
}

/// The table of `here` whose compaction into `below` rewrites the fewest
/// bytes of `below` per byte it brings down (`RocksDB`'s default,
/// `kMinOverlappingRatio`): at 10^7 keys it wrote 2–3% fewer bytes than
/// taking tables in key order (docs/measurements.md). Ties go to the first
/// table after `cursor`, wrapping, so equal tables are still taken in turn
/// and a level is swept end to end.
fn least_overlapping<'a, T>(
    here: &'a [T],
    below: &[T],
    cursor: &[u8],
    rec: impl Fn(&T) -> &TableRecord,
) -> Option<&'a T> {
    // below_bytes[i] = bytes of below[..i]; `below` is sorted and disjoint.
    let mut below_bytes = Vec::with_capacity(below.len() + 1);
    below_bytes.push(0u64);
    for t in below {
        below_bytes.push(below_bytes.last().copied().unwrap_or(0) + rec(t).file_size);
    }
    let overlap = |t: &TableRecord| {
        let a = below.partition_point(|b| rec(b).largest < t.smallest);
        let b = below.partition_point(|b| rec(b).smallest <= t.largest);
        below_bytes.get(b).zip(below_bytes.get(a)).map_or(0, |(hi, lo)| hi.saturating_sub(*lo))
    };
    let start = here.partition_point(|t| rec(t).smallest.as_slice() <= cursor);
    let in_turn = here.iter().skip(start).chain(here.iter().take(start));
    // Compare overlap / size as overlap × other size: no division, no rounding.
    let mut best: Option<(&T, u128, u128)> = None;
    for t in in_turn {
        let r = rec(t);
        let (o, size) = (u128::from(overlap(r)), u128::from(r.file_size.max(1)));
        if best.is_none_or(|(_, bo, bs)| o * bs < bo * size) {
            best = Some((t, o, size));
        }
    }
    best.map(|(t, _, _)| t)
}

/// Adds the neighbours of `chosen` (a contiguous run of `run`, the output
/// level) while the compaction's bytes stay within one output table of
/// `target`, smaller neighbour first.
///
/// Without it a level's tables are as small as the slices compacted into
/// it: an upper table covering a narrow key range meets few or no tables
/// below and makes a small output, and nothing merges small neighbours, so
/// a deep level of a young tree holds tables of a few dozen keys whatever
/// its target (each then pays a filter's fixed bytes). Neighbours keep the
/// output's range contiguous, and rewriting a level's own tables at the
/// same level reorders no versions.
fn widen_to_target(
    run: &[Arc<TableFile>],
    chosen: &mut Vec<Arc<TableFile>>,
    input_bytes: u64,
    target: u64,
    lo: &[u8],
) {
    // The run's index range [a, b) that `chosen` covers; where it is empty,
    // the point `lo` would sit at.
    let (mut a, mut b) = if let (Some(first), Some(last)) = (chosen.first(), chosen.last()) {
        let a = run.iter().position(|t| Arc::ptr_eq(t, first)).unwrap_or(0);
        let b = run.iter().position(|t| Arc::ptr_eq(t, last)).map_or(a, |i| i + 1);
        (a, b)
    } else {
        let at = run.partition_point(|t| t.record.largest.as_slice() < lo);
        (at, at)
    };
    let mut total = input_bytes + chosen.iter().map(|t| t.record.file_size).sum::<u64>();
    loop {
        let left = a.checked_sub(1).and_then(|i| run.get(i)).map(|t| t.record.file_size);
        let right = run.get(b).map(|t| t.record.file_size);
        let take_left = match (left, right) {
            (Some(l), Some(r)) => l <= r,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        let size = if take_left { left } else { right }.unwrap_or(u64::MAX);
        if total.saturating_add(size) > target {
            break;
        }
        total += size;
        if take_left {
            a -= 1;
        } else {
            b += 1;
        }
    }
    *chosen = run.get(a..b).map(<[_]>::to_vec).unwrap_or_default();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::FilterKind;

    fn rec(number: u64, smallest: &str, largest: &str, size: u64) -> TableRecord {
        TableRecord {
            file_number: number,
            file_size: size,
            smallest: smallest.as_bytes().to_vec(),
            largest: largest.as_bytes().to_vec(),
            min_seq: 1,
            max_seq: 1,
            entries: 1,
            filter: FilterKind::None,
            filter_bytes: 0,
        }
    }

    #[test]
    fn the_table_overlapping_least_below_per_byte_goes_first() {
        let below =
            [rec(10, "a", "c", 100), rec(11, "d", "f", 300), rec(12, "g", "i", 50), rec(13, "p", "q", 10)];
        // Overlap per byte: 1 → 100/10, 2 → 300/100, 3 → 50/10 and 4 → 0/10.
        let here = [rec(1, "b", "b", 10), rec(2, "e", "e", 100), rec(3, "h", "h", 10), rec(4, "j", "o", 10)];
        let pick =
            |cursor: &str| least_overlapping(&here, &below, cursor.as_bytes(), |r| r).unwrap().file_number;
        assert_eq!(pick(""), 4, "a table with nothing below moves first");
        let here = &here[..3];
        let pick =
            |cursor: &str| least_overlapping(here, &below, cursor.as_bytes(), |r| r).unwrap().file_number;
        assert_eq!(pick(""), 2, "3 per byte beats 5 and 10");
        // Overlaps are summed over every table a range meets: 450 bytes
        // below a 100-byte table (4.5 per byte) lose to 300 (3 per byte),
        // though its first neighbour below alone (100) would have won.
        let here = [rec(5, "b", "h", 100), rec(6, "p", "p", 100)];
        let below =
            [rec(10, "a", "c", 100), rec(11, "d", "f", 150), rec(12, "g", "i", 200), rec(13, "p", "q", 300)];
        assert_eq!(least_overlapping(&here, &below, b"", |r| r).unwrap().file_number, 6);
    }

    #[test]
    fn level_0_waits_for_level_1s_bytes_between_its_two_triggers() {
        // Level 1 empty or small: the least trigger.
        assert_eq!(trigger_for(0, 0, 1 << 30, 4, 7), 4);
        assert_eq!(trigger_for(2, 60, 0, 4, 7), 4);
        assert_eq!(trigger_for(3, 90, 100, 4, 7), 4);
        // Tables of 30 bytes over 150 bytes of level 1: five of them hold
        // as much; 151 bytes needs a sixth.
        assert_eq!(trigger_for(4, 120, 150, 4, 7), 5);
        assert_eq!(trigger_for(5, 150, 150, 4, 7), 5);
        assert_eq!(trigger_for(5, 150, 151, 4, 7), 6);
        // Level 1 far larger: the cap.
        assert_eq!(trigger_for(4, 120, 1 << 40, 4, 7), 7);
        assert_eq!(trigger_for(4, 1, u64::MAX, 4, 7), 7);
        // A cap at or below the least trigger is a fixed trigger.
        assert_eq!(trigger_for(4, 120, 1 << 40, 4, 0), 4);
        assert_eq!(trigger_for(4, 120, 1 << 40, 4, 4), 4);
    }

    #[test]
    fn equal_tables_are_taken_in_turn_after_the_cursor() {
        let below = [rec(10, "a", "z", 100)];
        let here = [rec(1, "b", "b", 10), rec(2, "c", "c", 10), rec(3, "d", "d", 10)];
        let pick =
            |cursor: &str| least_overlapping(&here, &below, cursor.as_bytes(), |r| r).unwrap().file_number;
        assert_eq!(pick(""), 1);
        assert_eq!(pick("b"), 2);
        assert_eq!(pick("c"), 3);
        assert_eq!(pick("d"), 1, "wraps past the last table");
        assert!(least_overlapping(&[], &below, b"", |r: &TableRecord| r).is_none());
    }
}
