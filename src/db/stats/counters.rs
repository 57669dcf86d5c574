//! The engine's live counters: relaxed atomics the read, write, flush and
//! compaction paths add to, copied into a [`Stats`] on demand.
//!
//! The read path counts every get and every table probe. Those counters
//! are striped: each thread adds to a [`ReadStripe`] of its own (one of
//! [`STRIPES`], aligned apart), so concurrent readers never write the same
//! cache line; a snapshot sums the stripes, so the figures stay exact.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

use super::{LevelStats, Stats};
use crate::sources::{Passed, ScanObserver};

/// The read-path counters of one level.
#[derive(Debug, Default)]
pub(crate) struct LevelCounters {
    pub filter_negatives: AtomicU64,
    pub filter_true_positives: AtomicU64,
    pub filter_false_positives: AtomicU64,
    pub probes_without_filter: AtomicU64,
    pub data_blocks_read: AtomicU64,
    pub bytes_read: AtomicU64,
    pub prefix_probes: AtomicU64,
    pub prefix_skipped: AtomicU64,
    pub prefix_false_positives: AtomicU64,
    pub range_probes: AtomicU64,
    pub range_skipped: AtomicU64,
    pub range_false_positives: AtomicU64,
    pub scan_tables_opened: AtomicU64,
}

/// What flushes and compactions wrote to one level since the open (one
/// writer at a time: the flush or the compaction thread).
#[derive(Debug, Default)]
pub(crate) struct LevelWrites {
    pub jobs: AtomicU64,
    pub merged_in: AtomicU64,
    pub rewritten: AtomicU64,
    pub written: AtomicU64,
    pub moved_in: AtomicU64,
}

/// Read-path stripes: more than a 2- or 8-core machine runs threads at
/// once, so two readers rarely share one.
pub(crate) const STRIPES: usize = 16;

/// One thread's share of the read-path counters. Aligned to 128 bytes, two
/// cache lines, so that the adjacent-line prefetcher does not pair one
/// stripe's line with its neighbour's.
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct ReadStripe {
    pub gets: AtomicU64,
    pub memtable_hits: AtomicU64,
    pub levels: Box<[LevelCounters]>,
}

/// The stripe the calling thread adds to: threads take stripes in the
/// order they first read, round robin.
fn stripe_index() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static INDEX: usize = NEXT.fetch_add(1, Relaxed) % STRIPES;
    }
    INDEX.with(|i| *i)
}

/// The engine's live counters; [`Stats`] is a copy of them plus the tree's shape.
#[derive(Debug)]
pub(crate) struct Counters {
    /// Gets, memtable hits and per-level probe counts, per thread.
    pub read: Box<[ReadStripe]>,
    pub writes: AtomicU64,
    pub write_ops: AtomicU64,
    /// Key and value bytes of those ops, as the user handed them over.
    pub user_bytes: AtomicU64,
    pub wal_syncs: AtomicU64,
    pub wal_bytes: AtomicU64,
    pub flushes: AtomicU64,
    /// Entries written by those flushes (the filter policy's flush size).
    pub flushed_entries: AtomicU64,
    pub flush_bytes_written: AtomicU64,
    pub compactions: AtomicU64,
    pub filter_refreshes: AtomicU64,
    pub range_deleted_entries: AtomicU64,
    pub compaction_filter_removed: AtomicU64,
    pub tables_moved: AtomicU64,
    pub split_merges: AtomicU64,
    pub split_pieces: AtomicU64,
    pub compaction_filter_changed: AtomicU64,
    pub filter_plans: AtomicU64,
    pub compaction_bytes_read: AtomicU64,
    pub compaction_bytes_written: AtomicU64,
    pub write_stalls: AtomicU64,
    pub write_stall_micros: AtomicU64,
    /// Tables, entries and bytes FIFO compaction dropped.
    pub fifo_dropped: [AtomicU64; 3],
    /// Shared with every open table, which counts its own failed delete.
    pub cleanup_failures: Arc<AtomicU64>,
    /// Per level: what flushes and compactions wrote there.
    pub level_writes: Box<[LevelWrites]>,
}

impl Counters {
    pub fn new(levels: usize, cleanup_failures: Arc<AtomicU64>) -> Self {
        Counters {
            read: (0..STRIPES)
                .map(|_| ReadStripe {
                    levels: (0..levels).map(|_| LevelCounters::default()).collect(),
                    ..ReadStripe::default()
                })
                .collect(),
            writes: AtomicU64::new(0),
            write_ops: AtomicU64::new(0),
            user_bytes: AtomicU64::new(0),
            wal_syncs: AtomicU64::new(0),
            wal_bytes: AtomicU64::new(0),
            flushes: AtomicU64::new(0),
            flushed_entries: AtomicU64::new(0),
            flush_bytes_written: AtomicU64::new(0),
            compactions: AtomicU64::new(0),
            filter_refreshes: AtomicU64::new(0),
            range_deleted_entries: AtomicU64::new(0),
            compaction_filter_removed: AtomicU64::new(0),
            tables_moved: AtomicU64::new(0),
            split_merges: AtomicU64::new(0),
            split_pieces: AtomicU64::new(0),
            compaction_filter_changed: AtomicU64::new(0),
            filter_plans: AtomicU64::new(0),
            compaction_bytes_read: AtomicU64::new(0),
            compaction_bytes_written: AtomicU64::new(0),
            write_stalls: AtomicU64::new(0),
            write_stall_micros: AtomicU64::new(0),
            fifo_dropped: Default::default(),
            cleanup_failures,
            level_writes: (0..levels).map(|_| LevelWrites::default()).collect(),
        }
    }

    /// Counts one flush, merge or refresh that wrote `written` bytes to
    /// `level`, reading `merged_in` bytes of the level above and
    /// `rewritten` of its own.
    pub fn wrote(&self, level: usize, merged_in: u64, rewritten: u64, written: u64) {
        if let Some(w) = self.level_writes.get(level) {
            bump(&w.jobs, 1);
            bump(&w.merged_in, merged_in);
            bump(&w.rewritten, rewritten);
            bump(&w.written, written);
        }
    }

    /// Counts `bytes` of tables trivially moved into `level`.
    pub fn moved(&self, level: usize, bytes: u64) {
        if let Some(w) = self.level_writes.get(level) {
            bump(&w.moved_in, bytes);
        }
    }

    /// The calling thread's read-path counters.
    #[inline]
    pub fn read_stripe(&self) -> &ReadStripe {
        &self.read[stripe_index() % self.read.len()]
    }

    /// Copies the counters into a [`Stats`] whose `levels` carry only counters.
    pub fn snapshot(&self) -> Stats {
        let sum = |f: &dyn Fn(&ReadStripe) -> &AtomicU64| self.read.iter().map(|s| f(s).load(Relaxed)).sum();
        let level_count = self.read.first().map_or(0, |s| s.levels.len());
        let levels = (0..level_count)
            .map(|level| {
                let at = |f: fn(&LevelCounters) -> &AtomicU64| sum(&|s: &ReadStripe| f(&s.levels[level]));
                LevelStats {
                    level,
                    filter_negatives: at(|c| &c.filter_negatives),
                    filter_true_positives: at(|c| &c.filter_true_positives),
                    filter_false_positives: at(|c| &c.filter_false_positives),
                    probes_without_filter: at(|c| &c.probes_without_filter),
                    data_blocks_read: at(|c| &c.data_blocks_read),
                    bytes_read: at(|c| &c.bytes_read),
                    prefix_probes: at(|c| &c.prefix_probes),
                    prefix_skipped: at(|c| &c.prefix_skipped),
                    prefix_false_positives: at(|c| &c.prefix_false_positives),
                    range_probes: at(|c| &c.range_probes),
                    range_skipped: at(|c| &c.range_skipped),
                    range_false_positives: at(|c| &c.range_false_positives),
                    scan_tables_opened: at(|c| &c.scan_tables_opened),
                    ..self.level_writes.get(level).map_or_else(LevelStats::default, LevelWrites::stats)
                }
            })
            .map(|mut l| {
                // Every filter probe ends in exactly one of these answers.
                l.filter_probes = l.filter_negatives + l.filter_true_positives + l.filter_false_positives;
                l
            })
            .collect();
        Stats {
            gets: sum(&|s| &s.gets),
            memtable_hits: sum(&|s| &s.memtable_hits),
            writes: self.writes.load(Relaxed),
            write_ops: self.write_ops.load(Relaxed),
            user_bytes: self.user_bytes.load(Relaxed),
            wal_syncs: self.wal_syncs.load(Relaxed),
            wal_bytes: self.wal_bytes.load(Relaxed),
            flushes: self.flushes.load(Relaxed),
            flush_bytes_written: self.flush_bytes_written.load(Relaxed),
            compactions: self.compactions.load(Relaxed),
            filter_refreshes: self.filter_refreshes.load(Relaxed),
            range_deleted_entries: self.range_deleted_entries.load(Relaxed),
            compaction_filter_removed: self.compaction_filter_removed.load(Relaxed),
            tables_moved: self.tables_moved.load(Relaxed),
            split_merges: self.split_merges.load(Relaxed),
            split_pieces: self.split_pieces.load(Relaxed),
            compaction_filter_changed: self.compaction_filter_changed.load(Relaxed),
            filter_plans: self.filter_plans.load(Relaxed),
            compaction_bytes_read: self.compaction_bytes_read.load(Relaxed),
            compaction_bytes_written: self.compaction_bytes_written.load(Relaxed),
            write_stalls: self.write_stalls.load(Relaxed),
            write_stall_micros: self.write_stall_micros.load(Relaxed),
            fifo_dropped: crate::manifest::DropTotals {
                tables: self.fifo_dropped[0].load(Relaxed),
                entries: self.fifo_dropped[1].load(Relaxed),
                bytes: self.fifo_dropped[2].load(Relaxed),
            },
            cleanup_failures: self.cleanup_failures.load(Relaxed),
            memtable_bytes: 0,
            immutable_memtables: 0,
            filter_policy: String::new(),
            replaced_policy: None,
            lifetime_writes: super::WriteTotals::default(),
            lifetime_fifo_dropped: crate::manifest::DropTotals::default(),
            recovery: crate::recovery::RecoveryReport::default(),
            lost_writes: Vec::new(),
            filter_memory_budget: None,
            levels,
        }
    }
}

impl LevelWrites {
    /// A [`LevelStats`] holding only these counts.
    fn stats(&self) -> LevelStats {
        LevelStats {
            write_jobs: self.jobs.load(Relaxed),
            bytes_merged_in: self.merged_in.load(Relaxed),
            bytes_rewritten: self.rewritten.load(Relaxed),
            bytes_written: self.written.load(Relaxed),
            bytes_moved_in: self.moved_in.load(Relaxed),
            ..LevelStats::default()
        }
    }
}

impl ScanObserver for Counters {
    fn table_opened(&self, level: usize, passed: Passed, held: bool) {
        if let Some(c) = self.read_stripe().levels.get(level) {
            bump(&c.scan_tables_opened, 1);
            if passed.prefix && !held {
                bump(&c.prefix_false_positives, 1);
            }
            if passed.range && !held {
                bump(&c.range_false_positives, 1);
            }
        }
    }
}

/// Adds `n` to a counter.
pub(crate) fn bump(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Relaxed);
}
