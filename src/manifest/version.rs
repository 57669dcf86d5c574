//! A `Version` (the live tables, by level) and `VersionSet` (a version plus
//! the counters the manifest tracks).
//!
//! One `Version` type serves both views of the tree: the manifest's, whose
//! tables are records (`Version`, i.e. `Version<Arc<TableRecord>>`), and the
//! running database's, whose tables are open files (`tree::Tree`, a
//! `Version<Arc<TableFile>>`). Both keep the same order and the same rules,
//! written once here.

use std::sync::Arc;

use crate::key::SeqNo;
use crate::{Error, Result};

use super::edit::{TableRecord, VersionEdit, WriteTotals};

/// Levels in the tree: L0 (overlapping flushes) and L1..L6 (each a sorted run).
pub const NUM_LEVELS: usize = 7;

/// What a version holds for each table: something cheap to clone that
/// carries the table's manifest record.
pub trait TableRef: Clone {
    /// The table's record.
    fn record(&self) -> &TableRecord;
}

impl TableRef for Arc<TableRecord> {
    fn record(&self) -> &TableRecord {
        self
    }
}

/// An immutable snapshot of the live tables.
///
/// - L0 tables may overlap; they are kept newest first (larger `max_seq`
///   first, ties by larger file number), the order a lookup must probe them.
/// - L1 and deeper are sorted runs: tables sorted by smallest key, and no two
///   tables of a level may overlap (an edit that would overlap them is
///   `Corruption`, since the engine never writes one).
///
/// Tables are shared (`Arc`) between versions, so applying an edit copies
/// pointers, not keys.
#[derive(Debug, Clone, PartialEq)]
pub struct Version<T = Arc<TableRecord>> {
    pub(crate) levels: Vec<Vec<T>>,
}

impl<T> Default for Version<T> {
    fn default() -> Self {
        Version { levels: (0..NUM_LEVELS).map(|_| Vec::new()).collect() }
    }
}

impl Version {
    /// A version with no tables.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The version after `edit`: its removals first, then its additions.
    ///
    /// # Errors
    /// `Corruption` (offset 0; the caller knows where the edit came from) if
    /// the edit removes a table the level does not hold, adds a file number
    /// that is already live, or overlaps two tables in L1+.
    pub fn apply(&self, edit: &VersionEdit) -> Result<Version> {
        self.apply_with(edit, |record| Ok(Arc::new(record.clone())))
    }
}

impl<T: TableRef> Version<T> {
    /// All levels, L0 first; always at least [`NUM_LEVELS`] long.
    #[must_use]
    pub fn levels(&self) -> &[Vec<T>] {
        &self.levels
    }

    /// The tables of `level` (empty for a level out of range).
    #[must_use]
    pub fn level(&self, level: usize) -> &[T] {
        self.levels.get(level).map_or(&[], Vec::as_slice)
    }

    /// Every live table with its level.
    pub fn tables(&self) -> impl Iterator<Item = (usize, &T)> {
        self.levels.iter().enumerate().flat_map(|(l, ts)| ts.iter().map(move |t| (l, t)))
    }

    /// Total bytes of the tables in `level`.
    #[must_use]
    pub fn level_bytes(&self, level: usize) -> u64 {
        self.level(level).iter().map(|t| t.record().file_size).sum()
    }

    /// [`Version::apply`] for any kind of table: `open` turns each added
    /// record into the table the version holds.
    ///
    /// # Errors
    /// As for [`Version::apply`], or `open`'s.
    pub fn apply_with(
        &self,
        edit: &VersionEdit,
        mut open: impl FnMut(&TableRecord) -> Result<T>,
    ) -> Result<Version<T>> {
        let mut levels = self.levels.clone();
        for &(level, number) in &edit.removed {
            let tables = levels.get_mut(usize::from(level)).ok_or_else(|| bad_level(level))?;
            let Some(i) = tables.iter().position(|t| t.record().file_number == number) else {
                return Err(Error::corruption(
                    0,
                    format!("edit removes table {number} absent from L{level}"),
                ));
            };
            tables.remove(i);
        }
        for (level, record) in &edit.added {
            if levels.iter().flatten().any(|t| t.record().file_number == record.file_number) {
                return Err(Error::corruption(0, format!("edit adds table {} twice", record.file_number)));
            }
            let tables = levels.get_mut(usize::from(*level)).ok_or_else(|| bad_level(*level))?;
            if *level == 0 {
                let newer = |t: &T| (t.record().max_seq, t.record().file_number) > (record.max_seq, record.file_number);
                let at = tables.partition_point(newer);
                tables.insert(at, open(record)?);
            } else {
                let at = tables.partition_point(|t| t.record().smallest < record.smallest);
                let overlaps_prev = at
                    .checked_sub(1)
                    .and_then(|p| tables.get(p))
                    .is_some_and(|p| p.record().largest >= record.smallest);
                let overlaps_next = tables.get(at).is_some_and(|n| n.record().smallest <= record.largest);
                if overlaps_prev || overlaps_next {
                    return Err(Error::corruption(
                        0,
                        format!("edit adds table {} overlapping another in L{level}", record.file_number),
                    ));
                }
                tables.insert(at, open(record)?);
            }
        }
        Ok(Version { levels })
    }
}

fn bad_level(level: u8) -> Error {
    Error::corruption(0, format!("level {level} out of range"))
}

/// The state a manifest describes: the live tables and the counters.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VersionSet {
    /// The live tables.
    pub version: Arc<Version>,
    /// The next unused file number.
    pub next_file_number: u64,
    /// The largest sequence number of any write the tables hold.
    pub last_seq: SeqNo,
    /// The oldest WAL still needed.
    pub log_number: u64,
    /// The salt of the key hash used by every filter; `None` until set.
    pub hash_salt: Option<u64>,
    /// The filter policy last recorded (text in `FilterPolicy`'s grammar);
    /// `None` for a database that never recorded one.
    pub filter_policy: Option<String>,
    /// The policy `filter_policy` replaced when it last changed.
    pub replaced_policy: Option<String>,
    /// The filter memory budget last recorded, in bytes; `None`: no budget.
    pub filter_memory_bytes: Option<u64>,
    /// The database format version the manifest declares; `None` for a
    /// manifest from before versions were recorded (version 1).
    pub format_version: Option<u32>,
    /// Bytes written over the database's life, as of the last edit that
    /// recorded them (zero for a database older than format version 3,
    /// which counted nothing).
    pub write_totals: WriteTotals,
    /// The compaction strategy the database was last opened with (text in
    /// `Compaction`'s grammar); `None` before format 11.
    pub compaction: Option<String>,
    /// What FIFO compaction dropped over the database's life.
    pub fifo_dropped: super::DropTotals,
    /// The synced end last recorded for each live WAL (numbered at or
    /// above `log_number`); a WAL flushed away drops out.
    pub wal_ends: std::collections::BTreeMap<u64, super::WalEnd>,
    /// Synced writes point-in-time recoveries lost, oldest first (the
    /// newest [`super::LostWrites::KEPT`]).
    pub lost_writes: Vec<super::LostWrites>,
}

impl VersionSet {
    /// Applies `edit`, replacing the version and updating the counters it sets.
    ///
    /// # Errors
    /// `Corruption` if the version rejects the edit, if a counter would move
    /// backwards (file numbers, sequence numbers and log numbers only grow),
    /// or if the edit changes an already set hash salt. On error `self` is
    /// unchanged.
    pub fn apply(&mut self, edit: &VersionEdit) -> Result<()> {
        let forward = |name: &str, old: u64, new: Option<u64>| match new {
            Some(n) if n < old => Err(Error::corruption(0, format!("{name} moves back from {old} to {n}"))),
            Some(n) => Ok(n),
            None => Ok(old),
        };
        let next_file_number = forward("next file number", self.next_file_number, edit.next_file_number)?;
        let last_seq = forward("last sequence", self.last_seq, edit.last_seq)?;
        let log_number = forward("log number", self.log_number, edit.log_number)?;
        if let (Some(old), Some(new)) = (self.hash_salt, edit.hash_salt)
            && old != new
        {
            return Err(Error::corruption(0, format!("hash salt changes from {old:#x} to {new:#x}")));
        }
        if let Some(totals) = edit.write_totals
            && !totals.covers(&self.write_totals)
        {
            return Err(Error::corruption(
                0,
                format!("write totals move back from {:?} to {totals:?}", self.write_totals),
            ));
        }
        let version = Arc::new(self.version.apply(edit)?);
        self.version = version;
        self.next_file_number = next_file_number;
        self.last_seq = last_seq;
        self.log_number = log_number;
        self.hash_salt = self.hash_salt.or(edit.hash_salt);
        if let Some(policy) = &edit.filter_policy {
            self.filter_policy = Some(policy.clone());
        }
        if let Some(policy) = &edit.replaced_policy {
            self.replaced_policy = Some(policy.clone());
        }
        if let Some(bytes) = edit.filter_memory_bytes {
            self.filter_memory_bytes = Some(bytes);
        }
        if let Some(v) = edit.format_version {
            self.format_version = Some(v);
        }
        if let Some(totals) = edit.write_totals {
            self.write_totals = totals;
        }
        if let Some(text) = &edit.compaction {
            self.compaction = Some(text.clone());
        }
        if let Some(dropped) = edit.fifo_dropped {
            self.fifo_dropped = dropped;
        }
        self.wal_ends.extend(edit.wal_ends.iter().copied());
        let live = self.log_number;
        self.wal_ends.retain(|&number, _| number >= live);
        self.remember_lost_writes(&edit.lost_writes);
        Ok(())
    }

    /// Adds `lost` to the lost writes kept, dropping the oldest past
    /// [`super::LostWrites::KEPT`].
    pub fn remember_lost_writes(&mut self, lost: &[super::LostWrites]) {
        self.lost_writes.extend_from_slice(lost);
        let excess = self.lost_writes.len().saturating_sub(super::LostWrites::KEPT);
        self.lost_writes.drain(..excess);
    }

    /// One edit that recreates this whole state from nothing: the first
    /// record of a new manifest.
    #[must_use]
    pub fn snapshot_edit(&self) -> VersionEdit {
        VersionEdit {
            added: self
                .version
                .tables()
                .map(|(l, t)| (u8::try_from(l).unwrap_or(u8::MAX), TableRecord::clone(t)))
                .collect(),
            removed: Vec::new(),
            next_file_number: Some(self.next_file_number),
            last_seq: Some(self.last_seq),
            log_number: Some(self.log_number),
            hash_salt: self.hash_salt,
            filter_policy: self.filter_policy.clone(),
            replaced_policy: self.replaced_policy.clone(),
            filter_memory_bytes: self.filter_memory_bytes,
            // The snapshot starts a manifest this build writes.
            format_version: Some(super::edit::DB_FORMAT_VERSION),
            write_totals: Some(self.write_totals),
            compaction: self.compaction.clone(),
            fifo_dropped: Some(self.fifo_dropped).filter(|d| *d != super::DropTotals::default()),
            wal_ends: self.wal_ends.iter().map(|(&n, &end)| (n, end)).collect(),
            lost_writes: self.lost_writes.clone(),
        }
    }

    /// Checks the invariants a complete manifest satisfies: a hash salt is
    /// set, and the next file number is above every live file number and the
    /// log number.
    ///
    /// # Errors
    /// `Corruption` (offset 0) naming the broken invariant.
    pub fn validate(&self) -> Result<()> {
        if self.hash_salt.is_none() {
            return Err(Error::corruption(0, "manifest never sets the hash salt"));
        }
        let max_used =
            self.version.tables().map(|(_, t)| t.file_number).max().unwrap_or(0).max(self.log_number);
        if self.next_file_number <= max_used {
            return Err(Error::corruption(
                0,
                format!(
                    "next file number {} is not above live file number {max_used}",
                    self.next_file_number
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::edit::tests::table;

    fn add(level: u8, t: TableRecord) -> VersionEdit {
        VersionEdit { added: vec![(level, t)], ..VersionEdit::default() }
    }

    fn numbers(v: &Version, level: usize) -> Vec<u64> {
        v.level(level).iter().map(|t| t.file_number).collect()
    }

    #[test]
    fn levels_keep_their_order() {
        let mut v = Version::new();
        for (n, lo, hi) in [(5, b"m", b"p"), (6, b"a", b"c"), (7, b"x", b"z"), (8, b"d", b"f")] {
            v = v.apply(&add(2, table(n, lo, hi))).unwrap();
        }
        assert_eq!(numbers(&v, 2), [6, 8, 5, 7]);
        // L0: newest (largest max_seq) first regardless of insertion order.
        for n in [3, 9, 4] {
            v = v.apply(&add(0, table(n, b"a", b"z"))).unwrap();
        }
        assert_eq!(numbers(&v, 0), [9, 4, 3]);
        assert_eq!(v.level_bytes(0), 3 * 4096 + 16);
        assert_eq!(v.tables().count(), 7);
    }

    /// Another kind of table (here, a record wrapped with a tag) follows
    /// the same rules; a table `open` cannot supply fails the edit, and a
    /// rejected edit opens nothing.
    #[test]
    fn any_table_kind_follows_the_same_rules() {
        #[derive(Clone, Debug)]
        struct Tagged(Arc<TableRecord>, &'static str);
        impl TableRef for Tagged {
            fn record(&self) -> &TableRecord {
                &self.0
            }
        }
        let v: Version<Tagged> = Version::default();
        let v = v.apply_with(&add(2, table(5, b"m", b"p")), |r| Ok(Tagged(Arc::new(r.clone()), "open"))).unwrap();
        let v = v.apply_with(&add(2, table(6, b"a", b"c")), |r| Ok(Tagged(Arc::new(r.clone()), "open"))).unwrap();
        assert_eq!(v.level(2).iter().map(|t| (t.0.file_number, t.1)).collect::<Vec<_>>(), [(6, "open"), (5, "open")]);
        let missing = v.apply_with(&add(2, table(7, b"x", b"z")), |_| Err(Error::corruption(0, "not opened")));
        assert!(missing.unwrap_err().is_corruption());
        let mut opened = 0;
        let overlap = v.apply_with(&add(2, table(8, b"b", b"d")), |r| {
            opened += 1;
            Ok(Tagged(Arc::new(r.clone()), "open"))
        });
        assert!(overlap.is_err());
        assert_eq!(opened, 0);
    }

    #[test]
    fn apply_rejects_impossible_edits_and_leaves_the_old_version() {
        let v = Version::new().apply(&add(1, table(5, b"f", b"m"))).unwrap();
        let absent = VersionEdit { removed: vec![(1, 6)], ..VersionEdit::default() };
        assert!(v.apply(&absent).unwrap_err().is_corruption());
        let wrong_level = VersionEdit { removed: vec![(2, 5)], ..VersionEdit::default() };
        assert!(v.apply(&wrong_level).unwrap_err().is_corruption());
        assert!(v.apply(&add(3, table(5, b"x", b"y"))).unwrap_err().is_corruption());
        for (lo, hi) in [(b"a", b"f"), (b"m", b"q"), (b"g", b"h"), (b"a", b"z")] {
            assert!(v.apply(&add(1, table(6, lo, hi))).unwrap_err().is_corruption(), "{lo:?}..{hi:?}");
        }
        assert!(v.apply(&add(1, table(6, b"a", b"e"))).is_ok());
        assert!(v.apply(&add(1, table(6, b"n", b"z"))).is_ok());
        assert_eq!(numbers(&v, 1), [5]);
    }

    #[test]
    fn removal_then_addition_in_one_edit_replaces_tables() {
        let v = Version::new().apply(&add(1, table(5, b"a", b"z"))).unwrap();
        let compaction = VersionEdit {
            removed: vec![(1, 5)],
            added: vec![(1, table(7, b"a", b"k")), (1, table(8, b"l", b"z"))],
            ..VersionEdit::default()
        };
        let v = v.apply(&compaction).unwrap();
        assert_eq!(numbers(&v, 1), [7, 8]);
    }

    #[test]
    fn version_set_counters_only_move_forward() {
        let mut vs = VersionSet::default();
        let first = VersionEdit {
            next_file_number: Some(10),
            last_seq: Some(100),
            log_number: Some(4),
            hash_salt: Some(42),
            write_totals: Some(WriteTotals { user_bytes: 50, flush_bytes: 60, compaction_bytes: 70 }),
            ..add(0, table(3, b"a", b"b"))
        };
        vs.apply(&first).unwrap();
        vs.validate().unwrap();
        let before = vs.clone();
        for bad in [
            VersionEdit { next_file_number: Some(9), ..VersionEdit::default() },
            VersionEdit { last_seq: Some(99), ..VersionEdit::default() },
            VersionEdit { log_number: Some(3), ..VersionEdit::default() },
            VersionEdit { hash_salt: Some(43), ..VersionEdit::default() },
            VersionEdit {
                write_totals: Some(WriteTotals { user_bytes: 50, flush_bytes: 60, compaction_bytes: 69 }),
                ..VersionEdit::default()
            },
        ] {
            assert!(vs.apply(&bad).unwrap_err().is_corruption());
            assert_eq!(vs, before);
        }
        vs.apply(&VersionEdit { hash_salt: Some(42), last_seq: Some(150), ..VersionEdit::default() })
            .unwrap();
        assert_eq!(vs.last_seq, 150);
        assert_eq!(vs.write_totals.compaction_bytes, 70, "an edit without totals keeps them");

        let mut rebuilt = VersionSet::default();
        rebuilt.apply(&vs.snapshot_edit()).unwrap();
        // The snapshot is written by this build, so it declares this build's format.
        assert_eq!(rebuilt, VersionSet { format_version: Some(crate::manifest::DB_FORMAT_VERSION), ..vs });
    }

    #[test]
    fn validate_catches_incomplete_state() {
        let mut vs = VersionSet::default();
        assert!(vs.validate().unwrap_err().is_corruption());
        vs.apply(&VersionEdit {
            hash_salt: Some(1),
            next_file_number: Some(4),
            ..add(0, table(4, b"a", b"b"))
        })
        .unwrap();
        assert!(vs.validate().unwrap_err().is_corruption());
        vs.apply(&VersionEdit { next_file_number: Some(5), ..VersionEdit::default() }).unwrap();
        vs.validate().unwrap();
    }

    #[test]
    fn lost_writes_are_kept_newest_last_up_to_the_cap() {
        let lost = |n: u64| crate::manifest::LostWrites {
            log_number: n,
            synced_len: 10,
            found_len: 0,
            writes_lost: Some(n),
            recovered_at: n,
        };
        let mut vs = VersionSet::default();
        let kept = crate::manifest::LostWrites::KEPT as u64;
        for n in 0..kept + 5 {
            vs.apply(&VersionEdit { lost_writes: vec![lost(n)], ..VersionEdit::default() }).unwrap();
        }
        let numbers: Vec<u64> = vs.lost_writes.iter().map(|l| l.log_number).collect();
        assert_eq!(numbers, (5..kept + 5).collect::<Vec<_>>(), "the oldest five dropped");
        assert_eq!(vs.snapshot_edit().lost_writes, vs.lost_writes, "a new manifest carries them");
    }
}
