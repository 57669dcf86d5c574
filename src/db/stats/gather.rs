//! Filling a [`Stats`] from the live counters, the tree's shape, the
//! policy's plan and the manifest.

use super::{LevelStats, Stats, bump};

impl crate::db::DbInner {
    /// Deletes a file no durable state names any more. A failure is
    /// counted in [`Stats::cleanup_failures`], not returned: the write or
    /// edit that made the file obsolete has already succeeded, and the next
    /// open sweeps up what is left.
    pub(crate) fn remove_obsolete_file(&self, path: &std::path::Path) {
        match self.fs.remove_file(path) {
            // Already gone (e.g. a manifest whose create failed early): nothing left behind.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(_) => bump(&self.counters.cleanup_failures, 1),
            Ok(()) => {}
        }
    }
}

impl crate::db::DbInner {
    /// Counters plus the current shape of the tree and the policy's plan.
    pub(crate) fn stats(&self) -> Stats {
        let mut stats = self.counters.snapshot();
        let sv = self.current();
        stats.memtable_bytes =
            std::iter::once(&sv.mem).chain(sv.imm.iter()).map(|m| m.mem.approximate_bytes() as u64).sum();
        stats.immutable_memtables = sv.imm.len() as u64;
        stats.filter_policy = self.policy.to_string();
        stats.replaced_policy.clone_from(&self.replaced_policy);
        {
            let manifest = self.manifest.lock();
            stats.lifetime_writes = manifest.set.write_totals;
            stats.lifetime_fifo_dropped = manifest.set.fifo_dropped;
            stats.lost_writes.clone_from(&manifest.set.lost_writes);
        }
        stats.recovery.clone_from(&self.recovery);
        stats.filter_memory_budget = self.opts.filter_memory_bytes;
        let shape = self.shape(&sv.tree, None);
        let plan = self.plan(&shape);
        let used = sv.tree.levels.iter().rposition(|l| !l.is_empty()).map_or(0, |i| i + 1);
        stats.levels.truncate(self.opts.max_levels.max(used));
        for l in &mut stats.levels {
            let tables = sv.tree.levels.get(l.level).map_or(&[][..], Vec::as_slice);
            l.tables = tables.len() as u64;
            l.keys = tables.iter().map(|t| t.record.entries).sum();
            l.bytes = tables.iter().map(|t| t.record.file_size).sum();
            l.filter_bytes = tables.iter().map(|t| t.record.filter_bytes).sum();
            l.filter_heap_bytes = tables.iter().map(|t| t.table.filter_heap_bytes()).sum();
            l.index_heap_bytes = tables.iter().map(|t| t.table.index_heap_bytes()).sum();
            l.range_tombstones =
                tables.iter().map(|t| t.table.range_dels().map_or(0, |d| d.len() as u64)).sum();
            l.table_blocks_read = tables.iter().map(|t| t.table.counters().data_blocks_read).sum();
            l.filters_dropped = tables.iter().filter(|t| t.table.filter_dropped()).count() as u64;
            l.filter_fallbacks = tables.iter().filter(|t| t.table.filter_fell_back()).count() as u64;
            let small = self.opts.table_target_bytes_for(l.level) / 4;
            l.small_tables = if l.level == 0 || tables.len() < 2 {
                0
            } else {
                tables.iter().filter(|t| t.record.file_size < small).count() as u64
            };
            // A level below the deepest the plan covers is planned as if
            // the shape reached it.
            let planned = match plan.get(l.level) {
                Some(p) => *p,
                None => self.policy.for_level(l.level, &shape),
            };
            let mut weighted = 0.0;
            for t in tables {
                if !l.filter_kinds.contains(&t.record.filter) {
                    l.filter_kinds.push(t.record.filter);
                }
                let rate = t.table.filter_fpr();
                let target =
                    planned.table_target(t.record.filter, t.table.filter_keys(), self.policy.is_budgeted());
                let fault = t.table.filter_fell_back() || t.table.filter_dropped();
                l.tables_over_target +=
                    u64::from(LevelStats::off_plan(l.level, self.policy.is_budgeted(), fault, rate, target));
                #[expect(clippy::cast_precision_loss, reason = "a weighted mean of rates")]
                let entries = t.record.entries as f64;
                weighted += rate * entries;
            }
            #[expect(clippy::cast_precision_loss, reason = "a weighted mean of rates")]
            let built = (l.keys > 0).then(|| weighted / l.keys as f64);
            l.built_fpr = built;
            l.target_fpr = planned.target_fpr;
            // The plan's bits are per filter entry; under a prefix
            // extractor a key brings a share of a prefix as well.
            l.target_bits_per_key = planned.bits_per_key * shape.entries_per_key();
        }
        stats
    }
}
