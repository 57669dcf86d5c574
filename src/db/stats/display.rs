//! How [`Stats`] reads to a person: the summary lines, then a table of
//! the levels (what `siftdb db info` and the examples print).

use super::{LevelStats, Stats};

/// One level's part of the written-by-level line.
fn level_writes(l: &LevelStats) -> String {
    let jobs = if l.level == 0 { "flushes" } else { "jobs" };
    let merged = l.write_amplification().map_or_else(String::new, |w| {
        format!(" ({} in, {} rewritten: {w:.2} per byte in)", l.bytes_merged_in, l.bytes_rewritten)
    });
    let moved = if l.bytes_moved_in > 0 { format!(", {} moved in", l.bytes_moved_in) } else { String::new() };
    format!("L{} {} by {} {jobs}{merged}{moved}", l.level, l.bytes_written, l.write_jobs)
}

impl Stats {
    /// The bytes-written lines of the Display: this open's, then the
    /// database's life's (once a flush has recorded any).
    fn fmt_bytes_written(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "bytes written: {} by the application, {} to WALs, {} by flushes, {} by compactions",
            self.user_bytes, self.wal_bytes, self.flush_bytes_written, self.compaction_bytes_written
        )?;
        match self.write_amplification() {
            Some(w) => writeln!(f, "; write amplification {w:.2}")?,
            None => writeln!(f)?,
        }
        let life = &self.lifetime_writes;
        if let Some(w) = life.write_amplification() {
            writeln!(
                f,
                "over the database's life: {} bytes flushed from the application, {} by flushes, {} by compactions; write amplification {w:.2}",
                life.user_bytes, life.flush_bytes, life.compaction_bytes
            )?;
        }
        // Where those bytes went, once a flush or a compaction wrote any.
        let by_level: Vec<String> =
            self.levels.iter().filter(|l| l.bytes_written + l.bytes_moved_in > 0).map(level_writes).collect();
        if !by_level.is_empty() {
            writeln!(f, "written by level since the open: {}", by_level.join("; "))?;
        }
        if self.write_stalls > 0 {
            let seconds = std::time::Duration::from_micros(self.write_stall_micros).as_secs_f64();
            writeln!(f, "writes stalled {} times for {seconds:.3} s since the open", self.write_stalls)?;
        }
        if self.split_merges > 0 {
            let (merges, pieces) = (self.split_merges, self.split_pieces);
            writeln!(f, "{merges} merges split by key range into {pieces} pieces run side by side")?;
        }
        // What FIFO compaction gave back, once it has dropped anything.
        let (now, life) = (self.fifo_dropped, self.lifetime_fifo_dropped);
        if life.tables > 0 {
            writeln!(
                f,
                "FIFO dropped {} tables ({} entries, {} bytes) since the open, {} ({} entries, {} bytes) over the database's life",
                now.tables, now.entries, now.bytes, life.tables, life.entries, life.bytes
            )?;
        }
        Ok(())
    }

    /// One line `what: L1 n, L3 m` (with `of tables` when `of`) naming the
    /// levels where `count` is not 0; nothing when it is 0 everywhere.
    fn levels_with(
        &self,
        f: &mut std::fmt::Formatter<'_>,
        what: &str,
        count: impl Fn(&LevelStats) -> u64,
        of: bool,
    ) -> std::fmt::Result {
        let named: Vec<String> = self
            .levels
            .iter()
            .filter(|l| count(l) > 0)
            .map(|l| {
                if of {
                    format!("L{} {} of {}", l.level, count(l), l.tables)
                } else {
                    format!("L{} {}", l.level, count(l))
                }
            })
            .collect();
        if named.is_empty() { Ok(()) } else { writeln!(f, "{what}: {}", named.join(", ")) }
    }
}

impl Stats {
    /// The legend under the level table, and the line that explains small
    /// level-0 tables when the table shows them.
    fn fmt_legend(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The header's words are short to keep a row on one line; a reader
        // meeting them for the first time needs them spelled out.
        writeln!(
            f,
            "bits/k: filter bits per key as built; plan: bits per key the policy plans for the level; \
             target: the false-positive rate it plans; built: the tables' theoretical rate, weighted by keys; \
             probes: lookups that asked a filter; negative: those it ruled out, with no I/O; \
             false+: those it let through to a table without the key; obs.fpr: false+ / probes of absent keys"
        )?;
        if let Some(l0) = self.levels.first().filter(|l| self.small_flushes_show(l)) {
            writeln!(
                f,
                "L{}: a small table's filter is sized for its few keys: at least one whole block (a large bits/k), \
                 or none when a budget's share does not pay for one; level-0 tables keep the filter planned at \
                 their flush until a compaction merges them down",
                l0.level
            )?;
        }
        Ok(())
    }

    /// Whether level 0 shows what small flushes do to a filter: a table
    /// with none under a budget, or more bits per key than any kind is
    /// sized at (64), or than twice the plan (a filter's smallest size
    /// spread over a few keys).
    fn small_flushes_show(&self, l: &LevelStats) -> bool {
        let budgeted = self.filter_policy.parse::<crate::FilterPolicy>().is_ok_and(|p| p.is_budgeted());
        let bits = l.filter_bits_per_key();
        l.level == 0
            && l.tables > 0
            && ((budgeted && l.filter_kinds.contains(&crate::FilterKind::None))
                || bits > 64.0
                || (l.target_bits_per_key > 0.0 && bits > 2.0 * l.target_bits_per_key))
    }
}

impl Stats {
    /// The filter memory line: bytes in all and per level holding filters,
    /// against the budget when there is one.
    #[expect(clippy::cast_precision_loss, reason = "a share for display")]
    fn fmt_budget(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let levels: Vec<String> = self
            .levels
            .iter()
            .filter(|l| l.filter_bytes > 0)
            .map(|l| format!("L{} {}", l.level, l.filter_bytes))
            .collect();
        write!(f, "filter memory {} bytes", self.filter_bytes())?;
        if !levels.is_empty() {
            write!(f, " ({})", levels.join(", "))?;
        }
        match (self.filter_memory_budget, self.filter_budget_share()) {
            // Level 0 is named apart: the plan does not charge its
            // flushes, so a reader seeing the total pass the budget knows
            // whether the planned levels did.
            (Some(budget), Some(share)) => {
                let below = self.filter_bytes() - self.levels.first().map_or(0, |l| l.filter_bytes);
                writeln!(
                    f,
                    " of a budget of {budget}: {:.1}% ({:.1}% in levels 1+, which the plan charges)",
                    share * 100.0,
                    below as f64 * 100.0 / budget as f64
                )
            }
            (Some(budget), None) => writeln!(f, " of a budget of {budget}"),
            _ => writeln!(f),
        }
    }
}

impl std::fmt::Display for Stats {
    /// A per-level table for humans (the CLI's `stats`), levels with no
    /// tables and no probes left out.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "gets {} (memtable hits {}), writes {} ({} ops, {} WAL syncs, {} WAL bytes), flushes {}, compactions {}{}",
            self.gets,
            self.memtable_hits,
            self.writes,
            self.write_ops,
            self.wal_syncs,
            self.wal_bytes,
            self.flushes,
            self.compactions,
            // Only once a range delete has given space back: most databases never write one.
            if self.range_deleted_entries > 0 {
                format!(" (versions dropped by range deletes {})", self.range_deleted_entries)
            } else {
                String::new()
            }
        )?;
        self.fmt_bytes_written(f)?;
        if let Some(cut) = &self.recovery.cut {
            let lost = self
                .recovery
                .synced_writes_lost
                .map_or_else(|| "an unknown number of".to_owned(), |n| n.to_string());
            writeln!(
                f,
                "recovery: WAL {} was cut at byte {} of {} synced; {lost} synced writes lost (point-in-time recovery)",
                cut.number, cut.found, cut.recorded.len
            )?;
        }
        for l in &self.lost_writes {
            writeln!(f, "{l}")?;
        }
        write!(f, "filter policy {}", self.filter_policy)?;
        if let Some(old) = &self.replaced_policy {
            write!(f, " (replaced {old}, whose filters older tables may still carry)")?;
        }
        writeln!(f, "; filter refreshes {}, plans {}", self.filter_refreshes, self.filter_plans)?;
        self.fmt_budget(f)?;
        writeln!(
            f,
            "{:<5} {:>6} {:>10} {:>12} {:<22} {:>6} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
            "level",
            "tables",
            "keys",
            "bytes",
            "filter",
            "bits/k",
            "plan",
            "target",
            "built",
            "probes",
            "negative",
            "false+",
            "obs.fpr"
        )?;
        for l in
            self.levels.iter().filter(|l| l.tables > 0 || l.filter_probes > 0 || l.probes_without_filter > 0)
        {
            let kinds: Vec<String> = l.filter_kinds.iter().map(ToString::to_string).collect();
            let observed = l.observed_fpr().map_or_else(|| "-".to_string(), |r| format!("{r:.5}"));
            let built = l.built_fpr.map_or_else(|| "-".to_string(), |r| format!("{r:.5}"));
            writeln!(
                f,
                "L{:<4} {:>6} {:>10} {:>12} {:<22} {:>6.2} {:>6.2} {:>9.5} {:>9} {:>9} {:>9} {:>9} {:>9}",
                l.level,
                l.tables,
                l.keys,
                l.bytes,
                kinds.join(","),
                l.filter_bits_per_key(),
                l.target_bits_per_key,
                l.target_fpr,
                built,
                l.filter_probes,
                l.filter_negatives,
                l.filter_false_positives,
                observed
            )?;
        }
        self.fmt_legend(f)?;
        self.levels_with(f, "tables whose filter fell back to blocked Bloom", |l| l.filter_fallbacks, false)?;
        self.levels_with(
            f,
            "tables whose filter misses the level's planned rate",
            |l| l.tables_over_target,
            true,
        )?;
        self.levels_with(f, "tables under a quarter of their level's target size", |l| l.small_tables, true)?;
        self.levels_with(f, "range tombstones", |l| l.range_tombstones, false)?;
        let dropped: u64 = self.levels.iter().map(|l| l.filters_dropped).sum();
        if dropped > 0 || self.cleanup_failures > 0 {
            writeln!(
                f,
                "filters dropped as corrupt: {dropped}; obsolete files not deleted: {}",
                self.cleanup_failures
            )?;
        }
        Ok(())
    }
}
