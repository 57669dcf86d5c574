//! The engine's live counters: relaxed atomics the read, write, flush and
//! compaction paths add to, copied into a [`Stats`] on demand.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use super::{LevelStats, Stats};

/// The read-path counters of one level.
#[derive(Debug, Default)]
pub(crate) struct LevelCounters {
    pub filter_negatives: AtomicU64,
    pub filter_true_positives: AtomicU64,
    pub filter_false_positives: AtomicU64,
    pub probes_without_filter: AtomicU64,
    pub data_blocks_read: AtomicU64,
    pub bytes_read: AtomicU64,
}

/// The engine's live counters; [`Stats`] is a copy of them plus the tree's shape.
#[derive(Debug)]
pub(crate) struct Counters {
    pub gets: AtomicU64,
    pub memtable_hits: AtomicU64,
    pub writes: AtomicU64,
    pub write_ops: AtomicU64,
    pub wal_syncs: AtomicU64,
    pub wal_bytes: AtomicU64,
    pub flushes: AtomicU64,
    /// Entries written by those flushes (the filter policy's flush size).
    pub flushed_entries: AtomicU64,
    pub compactions: AtomicU64,
    pub filter_refreshes: AtomicU64,
    pub filter_plans: AtomicU64,
    pub compaction_bytes_read: AtomicU64,
    pub compaction_bytes_written: AtomicU64,
    pub write_stalls: AtomicU64,
    /// Shared with every open table, which counts its own failed delete.
    pub cleanup_failures: Arc<AtomicU64>,
    pub levels: Vec<LevelCounters>,
}

impl Counters {
    pub fn new(levels: usize, cleanup_failures: Arc<AtomicU64>) -> Self {
        Counters {
            gets: AtomicU64::new(0),
            memtable_hits: AtomicU64::new(0),
            writes: AtomicU64::new(0),
            write_ops: AtomicU64::new(0),
            wal_syncs: AtomicU64::new(0),
            wal_bytes: AtomicU64::new(0),
            flushes: AtomicU64::new(0),
            flushed_entries: AtomicU64::new(0),
            compactions: AtomicU64::new(0),
            filter_refreshes: AtomicU64::new(0),
            filter_plans: AtomicU64::new(0),
            compaction_bytes_read: AtomicU64::new(0),
            compaction_bytes_written: AtomicU64::new(0),
            write_stalls: AtomicU64::new(0),
            cleanup_failures,
            levels: (0..levels).map(|_| LevelCounters::default()).collect(),
        }
    }

    /// Copies the counters into a [`Stats`] whose `levels` carry only counters.
    pub fn snapshot(&self) -> Stats {
        let levels = self
            .levels
            .iter()
            .enumerate()
            .map(|(level, c)| LevelStats {
                level,
                filter_negatives: c.filter_negatives.load(Relaxed),
                filter_true_positives: c.filter_true_positives.load(Relaxed),
                filter_false_positives: c.filter_false_positives.load(Relaxed),
                probes_without_filter: c.probes_without_filter.load(Relaxed),
                data_blocks_read: c.data_blocks_read.load(Relaxed),
                bytes_read: c.bytes_read.load(Relaxed),
                ..LevelStats::default()
            })
            .map(|mut l| {
                // Every filter probe ends in exactly one of these answers.
                l.filter_probes = l.filter_negatives + l.filter_true_positives + l.filter_false_positives;
                l
            })
            .collect();
        Stats {
            gets: self.gets.load(Relaxed),
            memtable_hits: self.memtable_hits.load(Relaxed),
            writes: self.writes.load(Relaxed),
            write_ops: self.write_ops.load(Relaxed),
            wal_syncs: self.wal_syncs.load(Relaxed),
            wal_bytes: self.wal_bytes.load(Relaxed),
            flushes: self.flushes.load(Relaxed),
            compactions: self.compactions.load(Relaxed),
            filter_refreshes: self.filter_refreshes.load(Relaxed),
            filter_plans: self.filter_plans.load(Relaxed),
            compaction_bytes_read: self.compaction_bytes_read.load(Relaxed),
            compaction_bytes_written: self.compaction_bytes_written.load(Relaxed),
            write_stalls: self.write_stalls.load(Relaxed),
            cleanup_failures: self.cleanup_failures.load(Relaxed),
            memtable_bytes: 0,
            immutable_memtables: 0,
            filter_policy: String::new(),
            replaced_policy: None,
            levels,
        }
    }
}

/// Adds `n` to a counter.
pub(crate) fn bump(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Relaxed);
}
