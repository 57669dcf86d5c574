//! How a table is written: block size, filter, compression, and what the
//! database passes down.

use super::compression::Compression;
use crate::filter::FilterKind;
use crate::key_image::RangeFilterPolicy;
use crate::prefix::PrefixExtractor;

/// How a table is written.
#[derive(Debug, Clone, PartialEq)]
pub struct TableOptions {
    /// Target size of a data block's contents (default 4 KiB). A block is
    /// closed once it reaches this size, so it may exceed it by one entry.
    pub block_bytes: usize,
    /// Entries between restart points in data blocks (default 16).
    pub restart_interval: usize,
    /// The filter to build over the table's distinct user keys
    /// (default binary fuse, 8-bit: the smallest at ε ≈ 0.4%).
    pub filter: FilterKind,
    /// LSM level the table is written for, recorded in its properties.
    pub level: u32,
    /// Seed of the key hash the filter is built from.
    pub seed: u64,
    /// The number the table's record carries ([`TableRecord::file_number`](super::TableRecord::file_number)):
    /// the database passes the number in the file's name; 0 (the default)
    /// outside a database.
    pub file_number: u64,
    /// Filter bits the table's level is owed (negative: over budget), for a
    /// blocked-Bloom filter to give or take up to one 64-byte block
    /// ([`BlockedBloom::blocks_with_carry`](crate::filter::BlockedBloom::blocks_with_carry)); 0, the
    /// default, builds the smallest filter at the kind's bits per key.
    pub bloom_carry_bits: i64,
    /// If set, the filter also holds each distinct prefix this extractor
    /// gives the table's keys, and the properties name it
    /// ([`crate::PrefixExtractor`]). Default `None`.
    pub prefix_extractor: Option<PrefixExtractor>,
    /// If set, the table also gets a range filter over its keys' images
    /// ([`range_filter_block`](super::range_filter_block)), and is written
    /// in format version 5. Default `None`.
    pub range_filter: Option<RangeFilterPolicy>,
    /// How data blocks (and the index block, if it pays) are compressed
    /// (default [`Compression::None`]). A block that would not shrink by
    /// 1/8 is stored raw, and a table with no compressed block is written
    /// exactly as without compression, in format version 1 or 2.
    pub compression: Compression,
    /// When the table was written, in seconds since the Unix epoch, as its
    /// properties record it; `None` (the default): the system clock's time
    /// when the table is finished. The database passes its
    /// [`Clock`](crate::Clock)'s.
    pub created_unix_secs: Option<u64>,
    /// Test hook: make a static (xor, fuse) filter build fail, to exercise
    /// the blocked-Bloom fallback.
    #[doc(hidden)]
    pub inject_filter_build_failure: bool,
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions {
            block_bytes: 4096,
            restart_interval: 16,
            filter: FilterKind::BinaryFuse8,
            level: 0,
            seed: 0,
            file_number: 0,
            bloom_carry_bits: 0,
            prefix_extractor: None,
            range_filter: None,
            compression: Compression::None,
            created_unix_secs: None,
            inject_filter_build_failure: false,
        }
    }
}
