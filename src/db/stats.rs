//! Counters the engine keeps, and the [`Stats`] snapshot it hands out.
//!
//! Filter counters are exact: every table probe on the read path reports
//! what its filter answered and whether the table held the key, and the
//! engine adds that to its level's counters. Nothing is sampled or estimated.

use crate::filter::FilterKind;
use crate::manifest::{DropTotals, LostWrites, WriteTotals};

mod counters;
mod display;
mod gather;
pub(crate) use counters::{Counters, LevelCounters, ReadStripe, bump};

/// Counters and shape of one level, as of one [`Stats`] snapshot.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LevelStats {
    /// The level number (0 = the flushed, overlapping level).
    pub level: usize,
    /// Tables in the level.
    pub tables: u64,
    /// Entries (versions, tombstones included) in the level's tables.
    pub keys: u64,
    /// Bytes of the level's table files.
    pub bytes: u64,
    /// Bytes of the level's filter blocks.
    pub filter_bytes: u64,
    /// Heap bytes the level's open tables hold for their filters: 0 but a
    /// descriptor for a filter read in place from the table's mapping, its
    /// decoded size for a copy (`Table::filter_heap_bytes`).
    pub filter_heap_bytes: u64,
    /// Heap bytes the level's open tables hold for their indexes: a
    /// compressed index's decompressed contents, 0 for one read in place
    /// (`Table::index_heap_bytes`).
    pub index_heap_bytes: u64,
    /// Range tombstones the level's tables carry (as written, not
    /// fragments): deletes no compaction has yet carried down to the
    /// versions they cover, or kept because a deeper level still needs them.
    pub range_tombstones: u64,
    /// The distinct filter kinds the level's tables carry (tables written
    /// under an older policy may differ from the current one).
    pub filter_kinds: Vec<FilterKind>,
    /// The false-positive rate the policy plans for tables written to this
    /// level now (1 = no filter). Tables already there may have been built
    /// for another: see [`LevelStats::built_fpr`].
    pub target_fpr: f64,
    /// Real filter bits per key the policy plans for this level now
    /// (compare [`LevelStats::filter_bits_per_key`]); per key, with the
    /// key's share of the prefixes a prefix extractor adds to the filters.
    pub target_bits_per_key: f64,
    /// The theoretical false-positive rate of the filters the level's tables
    /// actually carry, weighted by entries (a table without a usable filter
    /// counts as 1); `None` for an empty level.
    pub built_fpr: Option<f64>,
    /// Table probes that consulted a filter.
    pub filter_probes: u64,
    /// Probes the filter answered "absent": index and data reads saved.
    pub filter_negatives: u64,
    /// Probes the filter passed and the table held a version of the key.
    pub filter_true_positives: u64,
    /// Probes the filter passed but the table held no version of the key
    /// visible at the reader's snapshot.
    pub filter_false_positives: u64,
    /// Probes of tables that have no filter.
    pub probes_without_filter: u64,
    /// Tables in the level whose filter block failed its checksum when the
    /// table was opened: the filter was dropped (fail open), so every
    /// lookup in such a table reads its index and a data block.
    pub filters_dropped: u64,
    /// Tables in the level whose requested xor or fuse filter could not be
    /// built and fell back to blocked Bloom (or, rarely, to no filter).
    pub filter_fallbacks: u64,
    /// Tables in the level whose filter, as built, misses the rate the
    /// policy plans for the level now by more than 10%: a
    /// fallback, a dropped filter, or a table written under an older plan
    /// (see [`crate::Db::compact`], which rewrites those). Under a budget a
    /// blocked-Bloom table may be a block and a Ribbon table 2% of its
    /// bits under its plan before it counts: a budget's bits move a little
    /// with every plan. On level 0 under a budget only fallbacks and
    /// dropped filters count ([`LevelStats::off_plan`] says why).
    pub tables_over_target: u64,
    /// Tables under a quarter of the level's table size target
    /// ([`Options::table_target_bytes_for`](crate::Options::table_target_bytes_for)),
    /// on a level below 0 holding more than one table: each costs a
    /// filter's fixed bytes, an index and a probe for a sliver of the
    /// level's keys. A merge's last table takes a small remainder
    /// (`compaction::writer::split_here`), so a count here is a level
    /// shaped by an older build, by ranges no merge has reached since, or
    /// by a merge whose estimate of what was left erred high.
    pub small_tables: u64,
    /// Data blocks read by point lookups.
    pub data_blocks_read: u64,
    /// Bytes of data blocks read by point lookups.
    pub bytes_read: u64,
    /// Data blocks read from the level's live tables by iterators (scans
    /// in either direction, compactions) since each table was opened: what
    /// a scan costs shows as its change. Point lookups count in
    /// [`LevelStats::data_blocks_read`].
    pub table_blocks_read: u64,
    /// Scans (`prefix`, or `range` within one extracted prefix) that asked
    /// a table of this level's filter for the scan's prefix.
    pub prefix_probes: u64,
    /// Prefix probes the filter answered "absent": the table was not opened.
    pub prefix_skipped: u64,
    /// Prefix probes the filter passed for a table that held no key within
    /// the scan's bounds (counted when the scan opens the table).
    pub prefix_false_positives: u64,
    /// Bounded scans that asked a table of this level's range filter about
    /// their bounds (a range too wide for the filter is not asked).
    pub range_probes: u64,
    /// Range probes the filter answered "empty": the table was not opened.
    pub range_skipped: u64,
    /// Range probes the filter passed for a table that held no key within
    /// the scan's bounds (counted when the scan opens the table).
    pub range_false_positives: u64,
    /// Tables a scan opened and seeked, from either end (each costs an index
    /// search and a data block read). Tables whose key range misses the scan's
    /// bounds, or whose prefix or range filter rules it out, are not opened.
    pub scan_tables_opened: u64,
    /// Flushes (level 0), merges and filter refreshes that wrote tables to
    /// this level since the open.
    pub write_jobs: u64,
    /// Bytes of the level above that merges into this level read since the
    /// open: what came down, rewritten here.
    pub bytes_merged_in: u64,
    /// Bytes of this level's own tables that merges and refreshes read to
    /// rewrite since the open.
    pub bytes_rewritten: u64,
    /// Bytes flushes (level 0), merges and refreshes wrote to this level
    /// since the open ([`LevelStats::write_amplification`]).
    pub bytes_written: u64,
    /// Bytes of tables trivially moved into this level since the open: the
    /// same files, one level down, written nowhere.
    pub bytes_moved_in: u64,
}

impl LevelStats {
    /// Bytes written to this level per byte merged into it from above
    /// (`RocksDB`'s per-level W-Amp): how much each byte coming down cost
    /// here. `None` for level 0 and before any merge into the level.
    #[must_use]
    #[expect(clippy::cast_precision_loss, reason = "a ratio of byte counts")]
    pub fn write_amplification(&self) -> Option<f64> {
        (self.level > 0 && self.bytes_merged_in > 0)
            .then(|| self.bytes_written as f64 / self.bytes_merged_in as f64)
    }

    /// False positives over the probes of keys the tables lacked:
    /// `false_positives / (probes − true_positives)`; `None` before any such probe.
    #[must_use]
    #[expect(clippy::cast_precision_loss, reason = "a rate; 2^53 probes are far away")]
    pub fn observed_fpr(&self) -> Option<f64> {
        let negatives_asked = self.filter_probes.saturating_sub(self.filter_true_positives);
        (negatives_asked > 0).then(|| self.filter_false_positives as f64 / negatives_asked as f64)
    }

    /// Filter bits per entry in this level, 0 for an empty level.
    #[must_use]
    #[expect(clippy::cast_precision_loss, reason = "a ratio for display")]
    pub fn filter_bits_per_key(&self) -> f64 {
        if self.keys == 0 { 0.0 } else { self.filter_bytes as f64 * 8.0 / self.keys as f64 }
    }

    fn since(&self, earlier: &LevelStats) -> LevelStats {
        LevelStats {
            filter_probes: self.filter_probes.saturating_sub(earlier.filter_probes),
            filter_negatives: self.filter_negatives.saturating_sub(earlier.filter_negatives),
            filter_true_positives: self.filter_true_positives.saturating_sub(earlier.filter_true_positives),
            filter_false_positives: self
                .filter_false_positives
                .saturating_sub(earlier.filter_false_positives),
            probes_without_filter: self.probes_without_filter.saturating_sub(earlier.probes_without_filter),
            data_blocks_read: self.data_blocks_read.saturating_sub(earlier.data_blocks_read),
            bytes_read: self.bytes_read.saturating_sub(earlier.bytes_read),
            table_blocks_read: self.table_blocks_read.saturating_sub(earlier.table_blocks_read),
            prefix_probes: self.prefix_probes.saturating_sub(earlier.prefix_probes),
            prefix_skipped: self.prefix_skipped.saturating_sub(earlier.prefix_skipped),
            prefix_false_positives: self
                .prefix_false_positives
                .saturating_sub(earlier.prefix_false_positives),
            range_probes: self.range_probes.saturating_sub(earlier.range_probes),
            range_skipped: self.range_skipped.saturating_sub(earlier.range_skipped),
            range_false_positives: self.range_false_positives.saturating_sub(earlier.range_false_positives),
            scan_tables_opened: self.scan_tables_opened.saturating_sub(earlier.scan_tables_opened),
            write_jobs: self.write_jobs.saturating_sub(earlier.write_jobs),
            bytes_merged_in: self.bytes_merged_in.saturating_sub(earlier.bytes_merged_in),
            bytes_rewritten: self.bytes_rewritten.saturating_sub(earlier.bytes_rewritten),
            bytes_written: self.bytes_written.saturating_sub(earlier.bytes_written),
            bytes_moved_in: self.bytes_moved_in.saturating_sub(earlier.bytes_moved_in),
            ..self.clone()
        }
    }
}

/// A snapshot of the database's counters and shape.
///
/// Counters count from the moment the database was opened. To measure one
/// phase of a benchmark, take a snapshot before and after and use
/// [`Stats::since`]:
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let db = siftdb::Db::open(dir.path(), siftdb::Options::default()).unwrap();
/// let before = db.stats();
/// db.get(b"missing").unwrap();
/// assert_eq!(db.stats().since(&before).gets, 1);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    /// Point lookups (`get`, on the database or a snapshot).
    pub gets: u64,
    /// Lookups answered by a memtable (active or immutable).
    pub memtable_hits: u64,
    /// Write batches acknowledged (a put or delete is a batch of one).
    pub writes: u64,
    /// Operations (puts and deletes) in those batches.
    pub write_ops: u64,
    /// Key and value bytes of those operations (a delete counts its key):
    /// what the application wrote, the denominator of
    /// [`Stats::write_amplification`].
    pub user_bytes: u64,
    /// fsyncs of the WAL (group commit makes this smaller than `writes`).
    pub wal_syncs: u64,
    /// Bytes appended to WALs.
    pub wal_bytes: u64,
    /// Memtables flushed to level-0 tables.
    pub flushes: u64,
    /// Bytes of the level-0 table files those flushes wrote.
    pub flush_bytes_written: u64,
    /// Compactions run (filter refreshes included).
    pub compactions: u64,
    /// Tables rewritten in place because their filter had drifted from the
    /// plan for their level (see [`crate::Db::compact`]).
    pub filter_refreshes: u64,
    /// Versions compactions dropped because a range tombstone every reader
    /// sees deleted them (those of tables dropped unread included): the
    /// space range deletes gave back.
    pub range_deleted_entries: u64,
    /// Tables compaction moved a level down as they were (trivial moves:
    /// they met nothing below), writing nothing; counted in `compactions`.
    pub tables_moved: u64,
    /// Merges split by key range into pieces merged side by side
    /// ([`crate::Options::subcompactions`]).
    pub split_merges: u64,
    /// Pieces the split merges ran.
    pub split_pieces: u64,
    /// Keys the compaction filter (`Options::compaction_filter`) removed.
    pub compaction_filter_removed: u64,
    /// Values the compaction filter changed.
    pub compaction_filter_changed: u64,
    /// Filter plans the policy made: one per change of the tree's shape,
    /// never one per table written or `stats()` call.
    pub filter_plans: u64,
    /// Bytes of table files compactions read.
    pub compaction_bytes_read: u64,
    /// Bytes of table files compactions wrote.
    pub compaction_bytes_written: u64,
    /// Writes that were slowed or stopped because level 0 was too full.
    pub write_stalls: u64,
    /// Microseconds writers spent slowed or stopped (`RocksDB`'s stall
    /// micros): the part of a fill that waited on flushes and compactions.
    pub write_stall_micros: u64,
    /// What FIFO compaction ([`crate::Compaction::Fifo`]) dropped: tables
    /// past its byte limit or time to live, with their entries and bytes.
    pub fifo_dropped: DropTotals,
    /// Bytes in the active and immutable memtables.
    pub memtable_bytes: u64,
    /// Immutable memtables waiting to be flushed.
    pub immutable_memtables: u64,
    /// Obsolete files (tables, logs, manifests) whose deletion failed after
    /// the edit that dropped them was durable, while the database ran.
    /// Harmless to the data: no manifest names them, and the next open
    /// removes them (that sweep's own failures are not counted here).
    pub cleanup_failures: u64,
    /// The filter policy tables are written with now, in the policy grammar.
    pub filter_policy: String,
    /// The policy `filter_policy` replaced when it last changed (an open
    /// with an explicit, different [`crate::Options::filter_policy`]), kept
    /// in the manifest; `None` if it never changed.
    pub replaced_policy: Option<String>,
    /// Bytes written over the database's whole life, across opens, as of
    /// the last flush or compaction the manifest recorded: unlike the
    /// counters above, these survive a restart (`siftdb db info` shows them).
    /// [`Stats::since`] keeps the later snapshot's.
    pub lifetime_writes: WriteTotals,
    /// What FIFO compaction dropped over the database's whole life, across
    /// every open (the manifest's record; [`Stats::fifo_dropped`] counts
    /// since the open).
    pub lifetime_fifo_dropped: DropTotals,
    /// What the open's recovery replayed from the write-ahead logs, and,
    /// after a [`crate::RecoveryMode::PointInTime`] open that met a log cut
    /// after its sync, the cut and the synced writes it lost.
    /// [`Stats::since`] keeps the later snapshot's.
    pub recovery: crate::recovery::RecoveryReport,
    /// Synced writes lost by point-in-time recoveries, this open's or any
    /// earlier one's, oldest first, as the manifest keeps them (the newest
    /// [`LostWrites::KEPT`]): a loss is remembered after the open that
    /// took it. [`Stats::since`] keeps the later snapshot's.
    pub lost_writes: Vec<LostWrites>,
    /// The filter memory budget the policy plans under
    /// ([`crate::Options::filter_memory_bytes`], as stored), `None` without
    /// one: compare [`Stats::filter_bytes`] ([`Stats::filter_budget_share`]).
    pub filter_memory_budget: Option<u64>,
    /// One entry per level, level 0 first.
    pub levels: Vec<LevelStats>,
}

impl Stats {
    /// The counters accumulated since `earlier` (a snapshot of the same
    /// database); shape fields (tables, bytes, kinds, …) keep `self`'s values.
    #[must_use]
    pub fn since(&self, earlier: &Stats) -> Stats {
        let levels = self
            .levels
            .iter()
            .map(|l| match earlier.levels.iter().find(|e| e.level == l.level) {
                Some(e) => l.since(e),
                None => l.clone(),
            })
            .collect();
        Stats {
            gets: self.gets.saturating_sub(earlier.gets),
            memtable_hits: self.memtable_hits.saturating_sub(earlier.memtable_hits),
            writes: self.writes.saturating_sub(earlier.writes),
            write_ops: self.write_ops.saturating_sub(earlier.write_ops),
            user_bytes: self.user_bytes.saturating_sub(earlier.user_bytes),
            wal_syncs: self.wal_syncs.saturating_sub(earlier.wal_syncs),
            wal_bytes: self.wal_bytes.saturating_sub(earlier.wal_bytes),
            flushes: self.flushes.saturating_sub(earlier.flushes),
            flush_bytes_written: self.flush_bytes_written.saturating_sub(earlier.flush_bytes_written),
            compactions: self.compactions.saturating_sub(earlier.compactions),
            filter_refreshes: self.filter_refreshes.saturating_sub(earlier.filter_refreshes),
            range_deleted_entries: self.range_deleted_entries.saturating_sub(earlier.range_deleted_entries),
            tables_moved: self.tables_moved.saturating_sub(earlier.tables_moved),
            split_merges: self.split_merges.saturating_sub(earlier.split_merges),
            split_pieces: self.split_pieces.saturating_sub(earlier.split_pieces),
            compaction_filter_removed: self
                .compaction_filter_removed
                .saturating_sub(earlier.compaction_filter_removed),
            compaction_filter_changed: self
                .compaction_filter_changed
                .saturating_sub(earlier.compaction_filter_changed),
            filter_plans: self.filter_plans.saturating_sub(earlier.filter_plans),
            compaction_bytes_read: self.compaction_bytes_read.saturating_sub(earlier.compaction_bytes_read),
            compaction_bytes_written: self
                .compaction_bytes_written
                .saturating_sub(earlier.compaction_bytes_written),
            write_stalls: self.write_stalls.saturating_sub(earlier.write_stalls),
            write_stall_micros: self.write_stall_micros.saturating_sub(earlier.write_stall_micros),
            fifo_dropped: self.fifo_dropped.since(earlier.fifo_dropped),
            cleanup_failures: self.cleanup_failures.saturating_sub(earlier.cleanup_failures),
            memtable_bytes: self.memtable_bytes,
            immutable_memtables: self.immutable_memtables,
            filter_policy: self.filter_policy.clone(),
            replaced_policy: self.replaced_policy.clone(),
            lifetime_writes: self.lifetime_writes,
            lifetime_fifo_dropped: self.lifetime_fifo_dropped,
            recovery: self.recovery.clone(),
            lost_writes: self.lost_writes.clone(),
            filter_memory_budget: self.filter_memory_budget,
            levels,
        }
    }

    /// Table bytes written per byte the application wrote: flushes' plus
    /// compactions' file bytes over [`Stats::user_bytes`], the definition
    /// `RocksDB` uses. The WAL is left out (it is [`Stats::wal_bytes`], about
    /// one byte per user byte plus framing); `None` before any write.
    ///
    /// Taken over an interval ([`Stats::since`]), it counts the flushes and
    /// compactions that ran in it, so measure from the first write to a
    /// settled tree ([`crate::Db::compact`]) for the whole cost of a load.
    #[must_use]
    pub fn write_amplification(&self) -> Option<f64> {
        WriteTotals {
            user_bytes: self.user_bytes,
            flush_bytes: self.flush_bytes_written,
            compaction_bytes: self.compaction_bytes_written,
        }
        .write_amplification()
    }

    /// Bytes of the filter blocks of every live table, level 0's included
    /// (per level: [`LevelStats::filter_bytes`]).
    #[must_use]
    pub fn filter_bytes(&self) -> u64 {
        self.levels.iter().map(|l| l.filter_bytes).sum()
    }

    /// Heap bytes the open tables hold for their filters and their
    /// indexes, all levels ([`LevelStats::filter_heap_bytes`],
    /// [`LevelStats::index_heap_bytes`]): beside [`Stats::filter_bytes`],
    /// what reading filters in place from the mappings saves.
    #[must_use]
    pub fn heap_bytes(&self) -> (u64, u64) {
        self.levels.iter().fold((0, 0), |(f, i), l| (f + l.filter_heap_bytes, i + l.index_heap_bytes))
    }

    /// [`Stats::filter_bytes`] over the budget (1.0 spends it exactly),
    /// `None` without a budget (or with a budget of 0 bytes). Level 0 is
    /// counted, though the plan does not charge it: its flushes carry
    /// filters planned before the tree grew, so during a fill this passes
    /// 1.0 by up to `l0_compaction_trigger` flushes' worth.
    #[must_use]
    #[expect(clippy::cast_precision_loss, reason = "a ratio for display")]
    pub fn filter_budget_share(&self) -> Option<f64> {
        self.filter_memory_budget.filter(|&b| b > 0).map(|b| self.filter_bytes() as f64 / b as f64)
    }

    /// Filter probes, negatives and false positives summed over all levels.
    #[must_use]
    pub fn filter_totals(&self) -> (u64, u64, u64) {
        self.levels.iter().fold((0, 0, 0), |(p, n, f), l| {
            (p + l.filter_probes, n + l.filter_negatives, f + l.filter_false_positives)
        })
    }
}

impl LevelStats {
    /// How far above its level's planned rate a table's filter may be
    /// before it counts in [`LevelStats::tables_over_target`]: 10%, past the
    /// rounding of Monkey's bits per key and a fuse filter's segment sizes.
    pub const MISS_TOLERANCE: f64 = 0.10;

    /// Whether a filter of theoretical rate `built` misses a `planned` rate
    /// (by more than [`LevelStats::MISS_TOLERANCE`]).
    #[must_use]
    pub fn misses(built: f64, planned: f64) -> bool {
        built > planned * (1.0 + Self::MISS_TOLERANCE)
    }

    /// Whether a table of `level` counts in
    /// [`LevelStats::tables_over_target`]: its filter's rate `built`
    /// [misses](LevelStats::misses) the `planned` one, except on level 0
    /// under a `budgeted` policy (Monkey), where only a `fault` (a filter
    /// that fell back or was dropped) counts. A budget's plan moves with
    /// every flush as the tree grows, and a level-0 table is never
    /// refreshed (the next compaction merges it down), so each keeps the
    /// filter planned at its flush: the first, tiny flushes none at all,
    /// since their few keys do not pay for a filter's smallest block.
    #[must_use]
    pub fn off_plan(level: usize, budgeted: bool, fault: bool, built: f64, planned: f64) -> bool {
        if level == 0 && budgeted { fault } else { Self::misses(built, planned) }
    }
}

#[cfg(test)]
mod tests;
