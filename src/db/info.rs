//! Per-table facts for inspection tools and tests.

use std::path::PathBuf;

use crate::table::{Compression, TableRecord};

use super::Db;

/// One live table: the record the manifest keeps ([`TableRecord`], whose
/// fields read through this as its own: `info.file_number`, `info.filter`),
/// with where the table is and what its filter really gives.
#[derive(Debug, Clone, PartialEq)]
pub struct TableInfo {
    /// The level the table is in.
    pub level: usize,
    /// The table file.
    pub path: PathBuf,
    /// The manifest's record of it.
    pub record: TableRecord,
    /// The theoretical false-positive rate of the filter the table carries,
    /// from its real size (a blocked Bloom filter's last 64-byte block is
    /// whole, so it is a little below its kind's nominal rate); 1 without a
    /// usable filter.
    pub filter_fpr: f64,
    /// The codec the table was written with (its properties record it;
    /// [`Compression::None`] for a table written without).
    pub compression: Compression,
}

impl std::ops::Deref for TableInfo {
    type Target = TableRecord;

    fn deref(&self) -> &TableRecord {
        &self.record
    }
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
                    path: t.path.clone(),
                    record: TableRecord::clone(&t.record),
                    filter_fpr: t.table.filter_fpr(),
                    compression: t.table.properties().codec(),
                })
            })
            .collect()
    }
}
