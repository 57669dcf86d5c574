//! The in-memory picture of the tree: open table files by level, and the
//! memtables, bundled in a [`SuperVersion`] that readers clone in one step.
//!
//! A `SuperVersion` is immutable. Writers of state (memtable rotation,
//! flush, compaction) build a new one and swap it in; a reader that cloned
//! the old `Arc` keeps every table and memtable it refers to alive, so a
//! compaction can drop a table from the tree while an iterator still reads
//! it. A table removed from the tree is deleted from disk when its last
//! reference goes away (see [`TableFile`]'s `Drop`).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::fs::FileSystem;
use crate::manifest::{TableRecord, TableRef, Version};
use crate::memtable::Memtable;
use crate::table::Table;

mod search;
pub(crate) use search::{SearchTree, prefix};

/// An open table and what the manifest says about it.
#[derive(Debug)]
pub(crate) struct TableFile {
    pub record: Arc<TableRecord>,
    pub table: Table,
    pub path: PathBuf,
    fs: Arc<dyn FileSystem>,
    obsolete: AtomicBool,
    /// The engine's count of obsolete files it failed to delete.
    cleanup_failures: Arc<AtomicU64>,
}

impl TableFile {
    pub fn new(
        record: Arc<TableRecord>,
        table: Table,
        path: PathBuf,
        fs: Arc<dyn FileSystem>,
        cleanup_failures: Arc<AtomicU64>,
    ) -> Self {
        // A record of one sequence number gives it to every entry: a no-op
        // for a table written by the database (its entries have it
        // already), and what numbers an ingested table's entries (format 9).
        let table =
            if record.min_seq == record.max_seq { table.with_global_seq(record.max_seq) } else { table };
        TableFile { record, table, path, fs, obsolete: AtomicBool::new(false), cleanup_failures }
    }

    pub fn number(&self) -> u64 {
        self.record.file_number
    }

    /// Marks the file for deletion once no reader holds it. Call only after
    /// the manifest edit that removed it is durable.
    pub fn mark_obsolete(&self) {
        self.obsolete.store(true, Ordering::Release);
    }

    /// Whether `key` lies within the table's key range.
    pub fn covers(&self, key: &[u8]) -> bool {
        self.record.smallest.as_slice() <= key && key <= self.record.largest.as_slice()
    }
}

impl Drop for TableFile {
    fn drop(&mut self) {
        if self.obsolete.load(Ordering::Acquire) {
            // Best effort: a file left behind is not in the manifest and is
            // removed by the next open. Counted, so it is not silent.
            if self.fs.remove_file(&self.path).is_err() {
                self.cleanup_failures.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// The running database's version of the tree: its open tables by level,
/// in the manifest's order (L0 newest first, deeper levels sorted by
/// smallest key and non-overlapping). The manifest's `Version` with open
/// files in place of records: one type, one set of rules.
pub(crate) type Tree = Version<Arc<TableFile>>;

impl TableRef for Arc<TableFile> {
    fn record(&self) -> &TableRecord {
        &self.record
    }
}

impl Tree {
    /// The tree matching `version`, taking each table from `open` by number.
    /// Tables the version names but `open` lacks are skipped (callers open
    /// every table first, so this does not happen).
    pub(crate) fn from_version(version: &Version, open: &HashMap<u64, Arc<TableFile>>) -> Tree {
        let levels = version
            .levels()
            .iter()
            .map(|level| level.iter().filter_map(|r| open.get(&r.file_number).cloned()).collect())
            .collect();
        Tree { levels }
    }

    /// Entries per level.
    pub(crate) fn level_keys(&self) -> Vec<u64> {
        self.levels.iter().map(|l| l.iter().map(|t| t.record.entries).sum()).collect()
    }

    /// Every level, from 0 down.
    pub(crate) fn each_level(&self) -> impl Iterator<Item = Level<'_>> {
        self.levels.iter().enumerate().map(|(number, tables)| Level { number, tables })
    }

    /// Tables in level 0.
    pub(crate) fn l0_tables(&self) -> usize {
        self.levels.first().map_or(0, Vec::len)
    }
}

/// One level's tables, seen as a lookup or a compaction sees them: level
/// 0's overlap and are newest first; a deeper level's are disjoint and
/// sorted by key, so at most one can hold a key.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Level<'a> {
    /// The level's number (0 for flushes).
    pub number: usize,
    pub tables: &'a [Arc<TableFile>],
}

impl<'a> Level<'a> {
    /// The tables that may hold `key`, in the order a lookup probes them:
    /// every level-0 table whose range covers it, newest first; below, the
    /// one table whose range covers it, if any.
    pub fn tables_for(self, key: &'a [u8]) -> impl Iterator<Item = &'a Arc<TableFile>> + 'a {
        let candidates = if self.number == 0 {
            self.tables
        } else {
            let i = self.first_ending_at_or_after(key);
            self.tables.get(i..=i).unwrap_or(&[])
        };
        candidates.iter().filter(move |t| t.covers(key))
    }

    /// The index of the first table of a sorted level whose largest key is
    /// at or after `key` (the table count if none is).
    pub fn first_ending_at_or_after(self, key: &[u8]) -> usize {
        self.tables.partition_point(|t| t.record.largest.as_slice() < key)
    }

    /// Whether a table of a sorted level holds a key range meeting
    /// `[lo, hi]`: only the first one ending at or after `lo` can decide.
    pub fn meets(self, lo: &[u8], hi: &[u8]) -> bool {
        let i = self.first_ending_at_or_after(lo);
        self.tables.get(i).is_some_and(|t| t.record.smallest.as_slice() <= hi)
    }
}

/// A memtable and the WAL that holds its writes.
#[derive(Debug, Clone)]
pub(crate) struct MemRef {
    pub mem: Arc<Memtable>,
    pub wal_number: u64,
}

/// Everything a reader needs, swapped atomically.
#[derive(Debug)]
pub(crate) struct SuperVersion {
    /// The memtable receiving writes.
    pub mem: MemRef,
    /// Frozen memtables waiting for flush, oldest first.
    pub imm: Vec<MemRef>,
    /// The tables, with the arrays point lookups search.
    pub tree: Arc<SearchTree>,
}

/// Each of `tables`' filter kind and entries, but for the tables whose
/// number `leave_out` names: what a write that replaces those leaves on the
/// level (the input of a mixed level's `MixLedger`).
pub(crate) fn kinds_left(
    tables: &[Arc<TableFile>],
    leave_out: impl Fn(u64) -> bool,
) -> Vec<(crate::filter::FilterKind, u64)> {
    tables.iter().filter(|t| !leave_out(t.number())).map(|t| (t.record.filter, t.record.entries)).collect()
}
