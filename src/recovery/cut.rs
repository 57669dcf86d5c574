//! A write-ahead log found shorter than the synced end the manifest
//! recorded for it, and what recovery reports about the writes it replayed
//! and lost.
//!
//! A torn tail and a cut look alike in the bytes: both end in a partial or
//! missing record. What tells them apart is the manifest's record of how far
//! the log was fsynced (tag 12, written at close, at rotation and at
//! `Db::sync`). Bytes past that end were never synced, so losing them loses
//! only unacknowledged (or unsynced) writes: a torn tail, dropped as before.
//! Whole records ending before it mean bytes that were on stable storage are
//! gone: the file was cut, damaged or deleted after the sync. Serving what is
//! left would silently answer with older values and resurrect deleted keys,
//! so the default recovery mode refuses; point-in-time mode recovers the
//! prefix and counts the synced writes lost.

use std::path::PathBuf;

use crate::Error;
use crate::manifest::{LostWrites, WalEnd};

/// A live WAL whose whole records end before its recorded synced end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalCut {
    /// The log's file number.
    pub number: u64,
    /// The log file.
    pub path: PathBuf,
    /// What the manifest recorded: synced length and last sequence number.
    pub recorded: WalEnd,
    /// Bytes of whole records found (0 when the file is missing).
    pub found: u64,
    /// The file's size, or `None` if it is missing.
    pub size: Option<u64>,
}

impl WalCut {
    /// The `Corruption` the default recovery mode refuses to open with:
    /// names the file, the offset where valid records end, and both lengths.
    #[must_use]
    pub fn error(&self) -> Error {
        let seq = self.recorded.last_seq.map_or_else(String::new, |s| format!(", writes through seq {s}"));
        let found = match self.size {
            Some(size) => format!("its whole records end at byte {} (file {size} bytes)", self.found),
            None => "the file is missing".to_owned(),
        };
        Error::corruption_in(
            &self.path,
            self.found,
            format!(
                "WAL {} was synced through byte {}{seq} (recorded in the manifest), but {found}: \
                 it was cut or damaged after it was synced; open with RecoveryMode::PointInTime \
                 to recover the writes before the cut",
                self.number, self.recorded.len
            ),
        )
    }
}

/// What recovery replayed from the write-ahead logs, and what it lost.
/// [`crate::Stats::recovery`] holds the report of the open.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    /// Live logs replayed.
    pub logs_replayed: u64,
    /// Operations (puts and deletes) replayed from them.
    pub ops_replayed: u64,
    /// Bytes dropped from the ends of the logs replayed: torn tails (writes
    /// past the last recorded sync, never acknowledged as durable) and, in
    /// point-in-time mode, what follows the damage or cut it stopped at.
    pub torn_bytes: u64,
    /// The first live log found short of its recorded synced end. Only a
    /// [`crate::RecoveryMode::PointInTime`] open gets past one; the default
    /// mode refuses with [`WalCut::error`].
    pub cut: Option<WalCut>,
    /// Synced operations lost past the cut: the largest sequence number any
    /// recorded sync covered, less the last one recovered. `None` when there
    /// is no cut, or when a log's end was recorded without its sequence
    /// number (database format 4), so the count is unknown.
    pub synced_writes_lost: Option<u64>,
}

impl RecoveryReport {
    /// What the manifest records of this recovery's loss, run at
    /// `recovered_at` (seconds since the Unix epoch): `None` without a cut.
    #[must_use]
    pub fn lost_writes(&self, recovered_at: u64) -> Option<LostWrites> {
        self.cut.as_ref().map(|cut| LostWrites {
            log_number: cut.number,
            synced_len: cut.recorded.len,
            found_len: cut.found,
            writes_lost: self.synced_writes_lost,
            recovered_at,
        })
    }
}
