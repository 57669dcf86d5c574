//! The planner: the tree shape the filter policy plans with, the plan it
//! caches, and the filter and codec each write gets.
//!
//! It sits below compaction and takes a small value of what it needs (the
//! options, the policy, the flush history read once, the plan cache), never
//! the database: a compaction job is handed a [`Planner`] made before it
//! starts, and the flush, ingest and `stats()` make one the same way.
//!
//! A table's filter is fixed when the table is written, but the tree goes on
//! changing, so a plan is only as good as the shape it was made for. The
//! shape follows the tree's contents (what the budget is really spent on)
//! with two exceptions where the contents of the moment mislead:
//!
//! - level 0: `l0_compaction_trigger / 2` runs (its average between
//!   compactions) of one flush each (the table being flushed, or the mean
//!   flush so far). Its count of the moment would move the plan of the
//!   long-lived levels with every flush. Its keys are on their way down and
//!   are counted again in the levels below, which the budget pays for (a
//!   `TreeShape::settling`): after `Db::compact`, which empties level 0, the
//!   tree spends exactly its budget, and level 0's flushes carry filters on
//!   top while they wait.
//! - the last level is the deepest the tree will have *once all its data has
//!   settled*: the first level whose cumulative target
//!   (`base_level_bytes × ratio^(i−1)`, summed from level 1) holds every key
//!   of the tree, arriving ones included (or the deepest holding data, if
//!   deeper). A level that is the deepest today but will not stay so is
//!   planned as a middle level, so `+skip-last` does not strip its filters.
//!
//! Levels 1 … d hold the tree's keys as they will settle: the keys after
//! the write being planned (a compaction's inputs leave their level and
//! arrive at the output, a flush's keys arrive at level 0), with each
//! middle level at most at its target and the last level the rest. Tables are modelled at the mean entries per table
//! below level 0, scaled per level by `table_size_multiplier` (the mean
//! counts the short last table of each compaction, as the real per-key
//! overhead does). Sizes convert to keys
//! at the tree's *data* bytes per entry (the data and index blocks: what
//! follows them depends on the filter), so that rewriting a table's filter
//! never changes the shape, and a refresh written to the plan stays on it.
//!
//! Under a prefix extractor a table's filter holds each distinct prefix
//! beside the keys, so the levels are counted in filter entries (keys and
//! prefixes, at the tree's ratio of the two), while the budget stays the
//! keys' (`TreeShape::with_entries_per_key`).
//!
//! Under FIFO compaction the tree is level 0 alone, as many runs as it
//! holds tables (each a flush), with the budget spent on them all: no level
//! below will hold their keys.
//!
//! When the tree grows, tables written under an older plan drift from the
//! current one; compaction brings them back (see `compaction::refresh`'s
//! refresh jobs), so the plan is kept by the tree, not only by new tables.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering::Relaxed;

use crate::options::{Compaction, Options};
use crate::policy::{FilterPolicy, LevelFilter, LevelModel, TreeShape, Writing};
use crate::table::Compression;
use crate::tree::{TableFile, Tree};

/// Bytes per entry assumed before any table exists.
const DEFAULT_BYTES_PER_ENTRY: f64 = 64.0;

/// The last plan and the shape it was made for.
pub(crate) type PlanCache = parking_lot::Mutex<Option<(TreeShape, Arc<Vec<LevelFilter>>)>>;

/// The bytes of `t`'s data and index blocks, which a filter refresh
/// leaves as they were. The file size less the filter block is not: the
/// properties block names the filter kind (`blocked-bloom:9.43` is longer
/// than `xor8`), so a refresh moved the shape by a few bytes, and near a tie
/// between two kinds that flipped the plan, and the refreshed table drifted
/// from the new plan, and so on without end (a proptest case once rewrote
/// one table 1.8 million times).
fn data_and_index_bytes(t: &TableFile) -> u64 {
    let index = t.table.footer().index;
    index.offset.saturating_add(index.size_with_trailer())
}

/// What the planner knows of the database's flushes: a value, read once
/// when the planner is made.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FlushHistory {
    /// Flushes since open.
    pub flushes: u64,
    /// Entries those flushes wrote.
    pub flushed_entries: u64,
    /// The active memtable's entries and approximate bytes, for the size
    /// of a first flush.
    pub memtable: (usize, usize),
}

/// The filter and codec planner for one job or write.
pub(crate) struct Planner<'a> {
    pub opts: &'a Options,
    pub policy: &'a FilterPolicy,
    pub history: FlushHistory,
    pub cache: &'a PlanCache,
    /// Counts the plans made (`Stats::filter_plans`).
    pub plans_made: &'a AtomicU64,
}

impl Planner<'_> {
    /// The shape of the tree as the filter policy sees it, for `writing`
    /// (or for the tree as it is).
    #[expect(clippy::cast_precision_loss, reason = "sizes feed a floating-point model")]
    pub fn shape(&self, tree: &Tree, writing: Option<Writing>) -> TreeShape {
        let opts = &self.opts;
        let all = || tree.levels.iter().flatten();
        let (entries, data_bytes) =
            all().fold((0u64, 0u64), |(e, b), t| (e + t.record.entries, b + data_and_index_bytes(t)));
        let bytes_per_entry =
            if entries > 0 { data_bytes as f64 / entries as f64 } else { DEFAULT_BYTES_PER_ENTRY };
        let keys_of = |bytes: u64| (bytes as f64 / bytes_per_entry).max(1.0);
        let mean = |tables: &mut dyn Iterator<Item = u64>| {
            let (n, sum) = tables.fold((0u64, 0u64), |(n, s), e| (n + 1, s + e));
            (n > 0).then(|| sum as f64 / n as f64)
        };

        // A flush's keys: the table being flushed, else the mean flush since
        // open, else the level-0 tables', else a full memtable at the active
        // one's bytes per entry.
        let FlushHistory { flushes, flushed_entries, memtable: (mem_len, mem_bytes) } = self.history;
        let flush_keys = match writing {
            Some(Writing { level: 0, entries: n, .. }) if n > 0 => n as f64,
            _ if flushes > 0 => flushed_entries as f64 / flushes as f64,
            _ => mean(&mut tree.levels.first().into_iter().flatten().map(|t| t.record.entries))
                .unwrap_or_else(|| {
                    if mem_len == 0 {
                        keys_of(opts.memtable_bytes as u64)
                    } else {
                        opts.memtable_bytes as f64 * mem_len as f64 / mem_bytes.max(1) as f64
                    }
                })
                .max(1.0),
        };
        // Tables grow by `table_size_multiplier` per level: the observed
        // mean, brought back to level 1's size, then scaled per level.
        let growth =
            |level: usize| opts.table_target_bytes_for(level) as f64 / opts.table_target_bytes as f64;
        let (tables, scaled) = tree.levels.iter().enumerate().skip(1).fold((0u64, 0.0), |(n, s), (l, ts)| {
            (n + ts.len() as u64, s + ts.iter().map(|t| t.record.entries as f64 / growth(l)).sum::<f64>())
        });
        let level1_table_keys =
            if tables > 0 { scaled / tables as f64 } else { keys_of(opts.table_target_bytes) };

        // Keys per level once the write is done.
        let mut keys: Vec<f64> = tree.level_keys().iter().map(|&n| n as f64).collect();
        if let Some(w) = writing {
            if keys.len() <= w.level {
                keys.resize(w.level + 1, 0.0);
            }
            keys[w.level] += (w.entries + w.passing) as f64;
            if let Some(from) = w.from.and_then(|f| keys.get_mut(f)) {
                *from = (*from - w.entries as f64).max(0.0);
            }
            if let Some(above) =
                w.level.checked_sub(1).filter(|_| w.passing > 0).and_then(|l| keys.get_mut(l))
            {
                *above = (*above - w.passing as f64).max(0.0);
            }
        }
        let total: f64 = keys.iter().sum();

        let last_allowed = opts.max_levels.saturating_sub(1).max(1);
        let deepest = keys.iter().rposition(|&n| n > 0.0).unwrap_or(0);
        let mut settled = 1;
        let mut capacity = keys_of(opts.level_target_bytes(1));
        while capacity < total && settled < last_allowed {
            settled += 1;
            capacity += keys_of(opts.level_target_bytes(settled));
        }
        let d = settled.max(deepest).clamp(1, last_allowed);

        // Filters hold prefixes too: plan their entries, on the budget of
        // the keys (`TreeShape::with_entries_per_key`). Both counts are the
        // data's, which a filter refresh leaves as they were.
        let (distinct, in_filters) =
            all().fold((0u64, 0u64), |(d, f), t| (d + t.table.distinct_keys(), f + t.table.filter_keys()));
        let per_key = if distinct > 0 { in_filters as f64 / distinct as f64 } else { 1.0 };

        // FIFO never merges: the whole tree is level 0's flushes, every one
        // probed by a miss, so its runs are its tables (the flush being
        // written included) and the budget is all theirs.
        if let Compaction::Fifo { .. } = opts.compaction {
            let flushing = matches!(writing, Some(Writing { level: 0, .. }));
            let runs = (all().count() + usize::from(flushing)).max(1) as f64;
            let keys = flush_keys * per_key;
            return TreeShape::from_levels(vec![LevelModel { run_keys: keys, runs, table_keys: keys }])
                .with_entries_per_key(per_key)
                .with_filter_memory_bytes(opts.filter_memory_bytes);
        }

        // Level 0 fills to its trigger and is then merged away: trigger / 2
        // tables on average.
        let l0_runs = (opts.l0_compaction_trigger as f64 / 2.0).max(1.0);
        let mut levels = vec![LevelModel { run_keys: flush_keys, runs: l0_runs, table_keys: flush_keys }];
        // The settled shape of the keys the tree holds: all of them sit in
        // levels 1 … d, each middle level at most at its target, the last
        // level the rest; level 0's residency is modelled on top (the keys
        // of its flushes are on their way down). A backlog above a
        // level's target (a load outrunning compaction: level 1 held 12,981
        // keys against a target of 67 at the end of the bench's 20,000-key
        // load) is on its way down; planned as it stood, it took no filter
        // and its budget went to level 0 at 48 bits/key.
        let mut below_l0 = total;
        for level in 1..=d {
            let n = if level == d {
                below_l0
            } else {
                keys.get(level)
                    .copied()
                    .unwrap_or(0.0)
                    .min(keys_of(opts.level_target_bytes(level)))
                    .min(below_l0)
            };
            below_l0 -= n;
            let table_keys = level1_table_keys * growth(level);
            levels.push(LevelModel { run_keys: n, runs: 1.0, table_keys: table_keys.min(n).max(1.0) });
        }
        for l in &mut levels {
            l.run_keys *= per_key;
            l.table_keys *= per_key;
        }
        TreeShape::settling(levels)
            .with_entries_per_key(per_key)
            .with_filter_memory_bytes(opts.filter_memory_bytes)
    }

    /// The policy's plan for `shape`, made once per shape: flushes,
    /// compactions and `stats()` reuse it until the tree changes. (Rounding
    /// the shape to reuse plans across small changes was tried: at 1.1%
    /// steps it flipped monkey:10 at 100,000 keys from beating uniform fuse8
    /// to losing to it, 1.67% against 1.56% summed; DESIGN.md, Monkey.)
    pub fn plan(&self, shape: &TreeShape) -> Arc<Vec<LevelFilter>> {
        let key = shape.clone();
        let mut cache = self.cache.lock();
        if let Some((cached, plan)) = cache.as_ref()
            && *cached == key
        {
            return Arc::clone(plan);
        }
        let plan = Arc::new(self.policy.plan(&key));
        self.plans_made.fetch_add(1, Relaxed);
        *cache = Some((key, Arc::clone(&plan)));
        plan
    }

    /// The codec for tables written for `writing`: the policy's last-level
    /// codec if `writing.level` is the last level of the shape the filter
    /// policy plans with (the one `+skip-last` strips), so both policies
    /// agree on which level is the last.
    pub fn compression_for(&self, tree: &Tree, writing: Writing) -> Compression {
        let policy = &self.opts.compression;
        let is_last = writing.level > 0
            && policy.last_level().is_some()
            && writing.level + 1 >= self.shape(tree, Some(writing)).level_models().len();
        policy.for_level(writing.level, is_last)
    }

    /// The filter for tables written to `level` for `writing`.
    pub fn filter_for(&self, tree: &Tree, writing: Writing) -> LevelFilter {
        let shape = self.shape(tree, Some(writing));
        let plan = self.plan(&shape);
        plan.get(writing.level).copied().unwrap_or_else(|| self.policy.for_level(writing.level, &shape))
    }
}
