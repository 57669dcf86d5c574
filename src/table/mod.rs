//! Immutable sorted tables (`SSTables`) with checksummed blocks and a
//! validated membership filter.
//!
//! A table maps internal keys (user key, sequence number, kind) to values.
//! [`TableBuilder`] writes one and publishes it atomically; [`Table`] maps
//! it into memory and answers point lookups, probing the filter first so a
//! key the table cannot hold costs no I/O. [`TableIter`] scans in order.
//!
//! File layout (each module draws its own part byte by byte):
//!
//! ```text
//! +--------------+-----+-------------+---------------+-------------------+------------------+-------------+
//! | data block 0 | ... | index block | filter block? | range-del block?  | properties block | footer (56) |
//! +--------------+-----+-------------+---------------+-------------------+------------------+-------------+
//!   each block = contents + trailer (codec and type u8, crc32 LE over contents and that byte)
//! ```
//!
//! - [`internal_key`]: key encoding and order.
//! - [`format`](mod@format): block handles, trailers, footer.
//! - [`block_builder`] / [`block`]: prefix-compressed blocks with restart points.
//! - [`compression`]: block codecs (lz4, zstd) and bounded decompression.
//! - [`index`]: last key of each data block -> handle.
//! - [`filter_block`]: self-describing filter header and validated build.
//! - [`range_del_block`]: the range tombstones (format version 2, or 3).
//! - [`properties`]: tagged statistics.

pub mod block;
pub mod block_builder;
mod builder;
pub mod compression;
pub mod filter_block;
mod filter_details;
pub mod format;
pub mod index;
pub mod internal_key;
mod iter;
mod options;
pub mod properties;
pub mod range_del_block;
pub mod range_filter_block;
mod reader;
mod record;
mod rev_iter;
mod stats;
pub mod verify;

pub use builder::TableBuilder;
pub use options::TableOptions;
pub use filter_block::FilterHeader;
pub use compression::Compression;
pub use format::{
    BlockHandle, FORMAT_VERSION, FORMAT_VERSION_ALIGNED, FORMAT_VERSION_COMPRESSED, FORMAT_VERSION_PLAIN, FORMAT_VERSION_RANGE_DEL,
    Footer,
};
pub use range_filter_block::TableRangeFilter;
pub use iter::{TableEntry, TableIter};
pub use properties::TableProperties;
pub use filter_details::{FilterDetails, FilterStatus};
pub use reader::{BatchScratch, Table};
pub(crate) use index::Search;
pub(crate) use reader::locate_all;
pub use record::TableRecord;
pub use rev_iter::TableRevIter;
pub use stats::{CounterSnapshot, Entry, FilterAnswer, Lookup};
pub use verify::{Problem, VerifyReport, verify_table};
