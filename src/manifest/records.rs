//! The small records a manifest edit carries besides tables: the write
//! totals, each WAL's synced end, and the synced writes a point-in-time
//! recovery lost. Encoded by `edit.rs` (tags 10, 11/12 and 13).

use crate::key::SeqNo;

/// Bytes written over the database's whole life, across every open: what
/// the application wrote (counted when its memtable is flushed, so a write
/// counts once even if a crash makes recovery replay it), and the table
/// bytes flushes and compactions wrote for it. `Stats` counts the same
/// since the open; these survive it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteTotals {
    /// Key and value bytes of the writes flushed to tables (a delete counts
    /// its key; an overwrite counts every version written).
    pub user_bytes: u64,
    /// Bytes of the level-0 table files flushes wrote.
    pub flush_bytes: u64,
    /// Bytes of the table files compactions wrote (filter refreshes included).
    pub compaction_bytes: u64,
}

impl WriteTotals {
    /// Table bytes written per byte the application wrote, over the
    /// database's life; `None` before the first flush.
    #[must_use]
    #[expect(clippy::cast_precision_loss, reason = "a ratio; 2^53 bytes are far away")]
    pub fn write_amplification(&self) -> Option<f64> {
        (self.user_bytes > 0)
            .then(|| (self.flush_bytes.saturating_add(self.compaction_bytes)) as f64 / self.user_bytes as f64)
    }

    /// The totals after adding `more` (saturating: totals never wrap).
    #[must_use]
    pub fn plus(self, more: WriteTotals) -> WriteTotals {
        WriteTotals {
            user_bytes: self.user_bytes.saturating_add(more.user_bytes),
            flush_bytes: self.flush_bytes.saturating_add(more.flush_bytes),
            compaction_bytes: self.compaction_bytes.saturating_add(more.compaction_bytes),
        }
    }

    /// Whether no total is below `earlier`'s: totals only grow.
    #[must_use]
    pub fn covers(&self, earlier: &WriteTotals) -> bool {
        self.user_bytes >= earlier.user_bytes
            && self.flush_bytes >= earlier.flush_bytes
            && self.compaction_bytes >= earlier.compaction_bytes
    }
}

/// Tables the FIFO strategy dropped whole ([`crate::Compaction::Fifo`]):
/// past its byte limit or its time to live.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DropTotals {
    /// Tables dropped.
    pub tables: u64,
    /// Entries (versions and tombstones) they held.
    pub entries: u64,
    /// Bytes of their files.
    pub bytes: u64,
}

impl DropTotals {
    /// The totals after adding `more` (saturating).
    #[must_use]
    pub fn plus(self, more: DropTotals) -> DropTotals {
        DropTotals {
            tables: self.tables.saturating_add(more.tables),
            entries: self.entries.saturating_add(more.entries),
            bytes: self.bytes.saturating_add(more.bytes),
        }
    }

    /// The totals less `earlier` (saturating): what was dropped since.
    #[must_use]
    pub fn since(self, earlier: DropTotals) -> DropTotals {
        DropTotals {
            tables: self.tables.saturating_sub(earlier.tables),
            entries: self.entries.saturating_sub(earlier.entries),
            bytes: self.bytes.saturating_sub(earlier.bytes),
        }
    }
}

/// How far one WAL was fsynced, as the manifest records it: recovery
/// refuses a live log whose whole records end before `len` (it was cut or
/// damaged after the sync), instead of serving the older state as if the
/// lost writes had never been acknowledged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WalEnd {
    /// Bytes fsynced.
    pub len: u64,
    /// The largest sequence number written when it was synced (`None` when
    /// recorded by format version 4, which did not say).
    pub last_seq: Option<SeqNo>,
}

/// A point-in-time recovery that lost synced writes, as the manifest
/// records it durably: the open that met the cut writes it into the new
/// manifest, and every later open carries it forward, so `Db::stats` and
/// `siftdb db info` show it long after the open that lost them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LostWrites {
    /// The WAL found cut.
    pub log_number: u64,
    /// Bytes of it the manifest had recorded as fsynced.
    pub synced_len: u64,
    /// Bytes of whole records found in it (0 when it was missing).
    pub found_len: u64,
    /// Synced writes lost past the cut; `None` when the log's end was
    /// recorded without its sequence number (format 4), so the count is
    /// unknown.
    pub writes_lost: Option<u64>,
    /// When the recovery ran, in seconds since the Unix epoch.
    pub recovered_at: u64,
}

impl LostWrites {
    /// The most a manifest keeps, newest last: each is a few bytes, but a
    /// database reopened point-in-time over and over must not grow its
    /// manifest without bound.
    pub const KEPT: usize = 32;
}

impl std::fmt::Display for LostWrites {
    /// One line for operators, as `Stats` and `siftdb db info` print it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let lost = self.writes_lost.map_or_else(|| "an unknown number of".to_owned(), |n| n.to_string());
        write!(
            f,
            "LOST WRITES: a point-in-time recovery at {} lost {lost} synced write(s) (WAL {} cut at byte {} of {} synced)",
            crate::codec::iso8601_utc(self.recovered_at),
            self.log_number,
            self.found_len,
            self.synced_len
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loss_names_what_it_lost() {
        let l = LostWrites { log_number: 7, synced_len: 90, found_len: 40, writes_lost: Some(3), recovered_at: 0 };
        assert_eq!(
            l.to_string(),
            "LOST WRITES: a point-in-time recovery at 1970-01-01T00:00:00Z lost 3 synced write(s) \
             (WAL 7 cut at byte 40 of 90 synced)"
        );
        let unknown = LostWrites { writes_lost: None, ..l };
        assert!(unknown.to_string().contains("lost an unknown number of synced write(s)"));
    }
}
