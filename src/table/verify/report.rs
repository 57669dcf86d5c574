//! What a verification found: the report [`super::verify_table`] returns
//! and the problems in it, each at the file offset of the damage.

use crate::Error;

/// One thing wrong with a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// File offset of the damaged or inconsistent bytes.
    pub offset: u64,
    /// What is wrong, in words.
    pub what: String,
}

/// The outcome of [`verify_table`](super::verify_table).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerifyReport {
    /// Blocks whose trailer was checked (data, index, filter, range
    /// tombstones, properties).
    pub blocks_checked: u64,
    /// Range tombstones decoded from the table's range-tombstone block.
    pub range_tombstones_checked: u64,
    /// Entries read from data blocks.
    pub entries_checked: u64,
    /// Distinct user keys probed against the filter.
    pub keys_probed: u64,
    /// Distinct prefixes probed against the filter (tables written with a
    /// prefix extractor this build knows).
    pub prefixes_probed: u64,
    /// Distinct user keys whose image was probed in the range filter (its
    /// image is the built-in one; a custom image cannot be recomputed here).
    pub range_keys_probed: u64,
    /// Data blocks that could not be read in full (bad checksum or
    /// malformed contents). When any is, the contents are incomplete and
    /// are not compared with the properties or the filter's key count.
    pub unreadable_data_blocks: u64,
    /// Whether the properties (and the filter header's key count) were
    /// compared with the contents: only when the index, the properties,
    /// the range tombstones and every data block could be read.
    pub properties_compared: bool,
    /// Everything found wrong, in file order of discovery.
    pub problems: Vec<Problem>,
}

impl VerifyReport {
    /// Whether no problem was found.
    #[must_use]
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty()
    }

    pub(super) fn problem(&mut self, offset: u64, what: impl Into<String>) {
        self.problems.push(Problem { offset, what: what.into() });
    }

    pub(super) fn error(&mut self, fallback_offset: u64, e: &Error) {
        match e {
            Error::Corruption { offset, what, .. } => self.problem(*offset, what.clone()),
            other => self.problem(fallback_offset, other.to_string()),
        }
    }
}
