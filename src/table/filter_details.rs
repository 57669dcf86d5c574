//! What the inspection tool shows about a table's filter
//! ([`super::Table::filter_details`]).

use super::filter_block::FilterHeader;
use crate::filter::FilterKind;

/// The state of a table's filter.
#[derive(Debug, Clone, PartialEq)]
pub enum FilterStatus {
    /// The table was written without a filter.
    None,
    /// The filter is loaded and answers lookups.
    Loaded,
    /// The filter's kind or version is unknown to this build: every key
    /// reads as "may contain".
    Unknown,
    /// The filter block was corrupt and was dropped; lookups read data.
    Dropped(String),
}

/// Everything the inspection tool shows about a table's filter.
#[derive(Debug, Clone, PartialEq)]
pub struct FilterDetails {
    /// Whether the filter is usable.
    pub status: FilterStatus,
    /// The stored header, if the block could be read.
    pub header: Option<FilterHeader>,
    /// The kind, if known.
    pub kind: Option<FilterKind>,
    /// The kind the writer was asked for.
    pub requested: String,
    /// Bytes of the filter block (header included, trailer excluded).
    pub block_bytes: u64,
    /// Filter-block bits per distinct key actually spent.
    pub bits_per_key: f64,
    /// The false-positive rate theory predicts, if the kind is known.
    pub theoretical_fpr: Option<f64>,
    /// Why the writer fell back from the requested kind, if it did.
    pub fallback_reason: Option<String>,
}
