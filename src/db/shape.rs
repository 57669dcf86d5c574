//! The tree shape the filter policy plans with.
//!
//! A table's filter is fixed when the table is written, and tables below
//! level 1 live through many flushes and compactions. Planning from the
//! contents of the moment made a young last level look like a small middle
//! level, and its tables kept the strong (dear) filters planned for that;
//! a compaction's inputs were also counted twice (at their level and at the
//! output). The plan now follows the tree's steady state where the tree
//! has one, and its contents where those are what the budget is spent on:
//!
//! - level 0: `l0_compaction_trigger / 2` runs (its average between
//!   compactions) of one flush each (the table being flushed, or the mean
//!   flush so far);
//! - levels 1 … d−1: their targets, `base_level_bytes × ratio^(i−1)`, in
//!   keys at the tree's observed bytes per entry. A middle level sits at its
//!   target, so its planned rate does not move as the tree fills;
//! - the last level d (the deepest holding data, or being written): its
//!   keys, arriving ones included, but at least as many as the level above.
//!   A young last level is planned like the level above it, not as a small
//!   level that deserves a strong filter; its rate loosens as it fills.
//!   (Flooring it at `ratio ×` the level above instead would fix its rate
//!   for good, but then the tree spends more than the budget until the last
//!   level is that full: 12.1 bits/key at 10 with 10^5-key tables and the
//!   last level as large as the one above, 13.4 at a third of it.)
//! - tables: the observed mean entries per table below level 0 (which
//!   counts the short last table of each compaction, as the real per-key
//!   overhead does), or `table_target_bytes` in keys before there is one.

use std::sync::atomic::Ordering::Relaxed;

use crate::policy::{LevelModel, TreeShape};

use super::DbInner;
use super::tree::Tree;

/// Bytes per entry assumed before any table exists.
const DEFAULT_BYTES_PER_ENTRY: f64 = 64.0;

impl DbInner {
    /// The shape of the tree as the filter policy sees it; `writing` is a
    /// table (level, entries) about to be written, which may open a new
    /// deepest level.
    #[expect(clippy::cast_precision_loss, reason = "sizes feed a floating-point model")]
    pub(crate) fn shape(&self, tree: &Tree, writing: Option<(usize, u64)>) -> TreeShape {
        let opts = &self.opts;
        let all = || tree.levels.iter().flatten();
        let (entries, bytes) =
            all().fold((0u64, 0u64), |(e, b), t| (e + t.record.entries, b + t.record.file_size));
        let bytes_per_entry =
            if entries > 0 { bytes as f64 / entries as f64 } else { DEFAULT_BYTES_PER_ENTRY };
        let keys_of = |bytes: u64| (bytes as f64 / bytes_per_entry).max(1.0);
        let mean = |tables: &mut dyn Iterator<Item = u64>| {
            let (n, sum) = tables.fold((0u64, 0u64), |(n, s), e| (n + 1, s + e));
            (n > 0).then(|| sum as f64 / n as f64)
        };

        // A flush's keys: the table being flushed, else the mean flush since
        // open, else the level-0 tables', else a full memtable at the active
        // one's bytes per entry.
        let flushes = self.counters.flushes.load(Relaxed);
        let mem = &self.current().mem.mem;
        let flush_keys = match writing {
            Some((0, n)) if n > 0 => n as f64,
            _ if flushes > 0 => self.counters.flushed_entries.load(Relaxed) as f64 / flushes as f64,
            _ => mean(&mut tree.levels.first().into_iter().flatten().map(|t| t.record.entries))
                .unwrap_or_else(|| {
                    if mem.is_empty() {
                        keys_of(opts.memtable_bytes as u64)
                    } else {
                        opts.memtable_bytes as f64 * mem.len() as f64 / mem.approximate_bytes().max(1) as f64
                    }
                })
                .max(1.0),
        };
        let table_keys = mean(&mut tree.levels.iter().skip(1).flatten().map(|t| t.record.entries))
            .unwrap_or_else(|| keys_of(opts.table_target_bytes));

        // Level 0 fills to its trigger and is then merged away: trigger / 2
        // tables on average. Its count of the moment would move the budget
        // of the long-lived levels with every flush (up to the stop trigger
        // while compaction lags).
        let l0_runs = (opts.l0_compaction_trigger as f64 / 2.0).max(1.0);
        let last_allowed = opts.max_levels.saturating_sub(1).max(1);
        let deepest = tree.levels.iter().rposition(|l| !l.is_empty()).unwrap_or(0);
        let d = deepest.max(writing.map_or(0, |(l, _)| l)).clamp(1, last_allowed);
        let mut levels = vec![LevelModel { run_keys: flush_keys, runs: l0_runs, table_keys: flush_keys }];
        for level in 1..d {
            let keys = keys_of(opts.level_target_bytes(level));
            levels.push(LevelModel { run_keys: keys, runs: 1.0, table_keys: table_keys.min(keys) });
        }
        let mut last = tree.level_keys().get(d).copied().unwrap_or(0);
        if let Some((level, n)) = writing
            && level == d
        {
            last += n;
        }
        let above = levels.last().map_or(1.0, LevelModel::keys);
        let last_keys = (last as f64).max(above).max(1.0);
        levels.push(LevelModel { run_keys: last_keys, runs: 1.0, table_keys: table_keys.min(last_keys) });
        TreeShape::from_levels(levels)
    }
}
