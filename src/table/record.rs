//! The record of one table: what [`TableBuilder::finish`] reports, what
//! the manifest stores (`manifest/edit.rs` draws its encoding), and what
//! `Db::tables` shows (wrapped with the table's level and path).
//!
//! [`TableBuilder::finish`]: super::TableBuilder::finish

use crate::filter::FilterKind;
use crate::key::SeqNo;

/// One table as the database knows it without opening it.
#[derive(Debug, Clone, PartialEq)]
pub struct TableRecord {
    /// The number in the file's name (`{number:06}.sst`); 0 for a table
    /// built outside a database (the builder's `TableOptions::file_number`).
    pub file_number: u64,
    /// The file's size in bytes.
    pub file_size: u64,
    /// The smallest user key in the table, or range tombstone start if
    /// smaller (empty for an empty table).
    pub smallest: Vec<u8>,
    /// The largest user key in the table, or the largest key a range
    /// tombstone may cover if larger (a tombstone's end, or `x` for an end
    /// `x\0`; empty for an empty table).
    pub largest: Vec<u8>,
    /// The smallest sequence number in the table, range tombstones included.
    pub min_seq: SeqNo,
    /// The largest sequence number in the table, range tombstones included.
    pub max_seq: SeqNo,
    /// Entries (versions, tombstones included; range tombstones not) in the table.
    pub entries: u64,
    /// The filter the table carries (after any build fallback; the kind
    /// requested and the reason are in the table's properties).
    pub filter: FilterKind,
    /// Bytes of the table's filter block, trailer included.
    pub filter_bytes: u64,
}
