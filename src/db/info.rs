//! Per-table facts for inspection tools and tests.

use std::path::PathBuf;

use bytes::Bytes;

use crate::filter::FilterKind;
use crate::key::SeqNo;

use super::Db;

/// One live table, as the manifest records it.
#[derive(Debug, Clone, PartialEq)]
pub struct TableInfo {
    /// The level the table is in.
    pub level: usize,
    /// The table's file number.
    pub number: u64,
    /// The table file.
    pub path: PathBuf,
    /// Smallest user key.
    pub smallest: Bytes,
    /// Largest user key.
    pub largest: Bytes,
    /// Oldest and newest sequence numbers in the table.
    pub seqs: (SeqNo, SeqNo),
    /// Entries (versions and tombstones).
    pub entries: u64,
    /// File size in bytes.
    pub bytes: u64,
    /// The filter the table carries.
    pub filter: FilterKind,
    /// Bytes of the filter block.
    pub filter_bytes: u64,
    /// The theoretical false-positive rate of the filter the table carries,
    /// from its real size (a blocked Bloom filter's last 64-byte block is
    /// whole, so it is a little below its kind's nominal rate); 1 without a
    /// usable filter.
    pub filter_fpr: f64,
}

impl Db {
    /// Every live table, level by level, in each level's order (level 0
    /// newest first, deeper levels by key).
    #[must_use]
    pub fn tables(&self) -> Vec<TableInfo> {
        let sv = self.inner.current();
        sv.tree
            .levels
            .iter()
            .enumerate()
            .flat_map(|(level, tables)| {
                tables.iter().map(move |t| TableInfo {
                    level,
                    number: t.number(),
                    path: t.path.clone(),
                    smallest: Bytes::copy_from_slice(&t.record.smallest),
                    largest: Bytes::copy_from_slice(&t.record.largest),
                    seqs: (t.record.min_seq, t.record.max_seq),
                    entries: t.record.entries,
                    bytes: t.record.file_size,
                    filter: t.record.filter,
                    filter_bytes: t.record.filter_bytes,
                    filter_fpr: t.table.filter_fpr(),
                })
            })
            .collect()
    }
}
