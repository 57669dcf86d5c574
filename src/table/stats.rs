//! Per-table read counters and the per-lookup report the engine aggregates.

use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;

/// What one lookup found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// The key's newest visible version is a value.
    Value {
        /// Sequence number of the write.
        seq: u64,
        /// The value, zero-copy from the table file.
        value: Bytes,
    },
    /// The key's newest visible version is a deletion.
    Tombstone {
        /// Sequence number of the deletion.
        seq: u64,
    },
}

/// What the filter said about a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterAnswer {
    /// The table has no usable filter (none configured, or dropped as corrupt).
    NoFilter,
    /// The filter ruled the key out; no index or data was read.
    Absent,
    /// The filter let the key through.
    MayContain,
}

/// The result of [`super::Table::get`], with what it cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lookup {
    /// The newest version visible at the snapshot, if the table holds one.
    pub entry: Option<Entry>,
    /// The filter's answer.
    pub filter: FilterAnswer,
    /// Data blocks read (0 or 1).
    pub blocks_read: u32,
    /// Bytes of data blocks read, trailers included.
    pub bytes_read: u64,
}

impl Lookup {
    /// Whether the filter let the key through but the table held no
    /// version of it: a false positive.
    #[must_use]
    pub fn is_false_positive(&self) -> bool {
        self.filter == FilterAnswer::MayContain && self.entry.is_none()
    }
}

/// Counters shared by every clone of a table: what its iterators read.
///
/// Point lookups count nothing here: each returns a [`Lookup`] saying what
/// its filter answered and what it read, and the caller keeps that count
/// (the database, per level), so no probe is counted twice.
#[derive(Debug, Default)]
pub struct TableCounters {
    pub(super) data_blocks_read: AtomicU64,
}

/// A point-in-time copy of a table's read counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CounterSnapshot {
    /// Data blocks read by iterators (scans in either direction,
    /// compactions); a point lookup reports its block in its [`Lookup`].
    pub data_blocks_read: u64,
}

impl TableCounters {
    pub(super) fn bump(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// A copy of the current values.
    #[must_use]
    pub fn snapshot(&self) -> CounterSnapshot {
        CounterSnapshot { data_blocks_read: self.data_blocks_read.load(Ordering::Relaxed) }
    }
}
