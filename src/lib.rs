//! # siftdb
//!
//! An embedded key-value store built as an LSM tree whose immutable tables
//! each carry a membership filter, so that a point lookup skips, with no I/O,
//! every table that cannot hold the key.
//!
//! ```
//! use siftdb::{Db, Options};
//!
//! # fn main() -> Result<(), siftdb::Error> {
//! # let dir = tempfile::tempdir().unwrap();
//! # let path = dir.path();
//! let db = Db::open(path, Options::default())?;
//! db.put("user:1", "ada")?;
//! assert_eq!(db.get("user:1")?.as_deref(), Some(&b"ada"[..]));
//! for item in db.prefix("user:") {
//!     let (key, value) = item?;
//! }
//! db.close()?;
//! # Ok(())
//! # }
//! ```
//!
//! Where to read next:
//! - [`Db`]: writes, reads, ranges ([`KeyRange`]), snapshots, flush and
//!   compaction, [`Db::stats`] (what the filters saved, level by level).
//! - [`Options`]: durability, sizes, and [`Options::filter_policy`], the
//!   filter per level ([`FilterPolicy`]: uniform, per level, Monkey), which
//!   the database stores.
//! - [`filter`]: the filters on their own (Bloom, blocked Bloom, counting
//!   Bloom, cuckoo, xor, binary fuse, and Ribbon, which the default policy
//!   uses), each validated when built.
//! - [`Error`]: every failure, typed; damage names its file and offset.
//! - [`TableWriter`]: a table built outside the database from sorted
//!   keys, for a bulk load, with the filter and salt of the database's
//!   [`Options`].
//! - [`Bytes`]: what reads return (`db.get`, iterators), a cheap,
//!   reference-counted view of the value; `as_ref()`, `to_vec()` or
//!   `&value[..]` give its bytes.
//! - [`records`]: what the database records about itself and what
//!   recovery found, as [`Stats`] and [`Db::tables`] report them.
//!
//! How the crate is built, layer by layer, and why: `DESIGN.md` in the
//! repository ("Layers and data flow"). The engine's building blocks
//! (tables, WAL, manifest, memtable, the recovery scan, fault injection)
//! are public only with the `internals` feature, for the `siftdb` CLI, the
//! fuzz targets and the project's tests; applications need none of it.

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]
#![warn(missing_docs, clippy::pedantic, clippy::undocumented_unsafe_blocks)]
#![deny(unsafe_op_in_unsafe_fn)]
#![allow(
    clippy::module_name_repetitions,
    reason = "types like FilterKind read better than Kind at call sites"
)]

/// A module public with the `internals` feature (the CLI, fuzz targets and
/// the project's tests), private to the crate without it.
macro_rules! internal_mod {
    ($($(#[$attr:meta])* $name:ident;)*) => {$(
        $(#[$attr])*
        #[cfg(feature = "internals")]
        pub mod $name;
        $(#[$attr])*
        #[cfg(not(feature = "internals"))]
        #[allow(dead_code, unused_imports, unreachable_pub, reason = "reached only through the internals feature")]
        mod $name;
    )*};
}

/// Re-exports public with the `internals` feature, crate-private without.
macro_rules! internal_use {
    ($($path:path),* $(,)?) => {$(
        #[cfg(feature = "internals")]
        pub use $path;
        #[cfg(not(feature = "internals"))]
        #[allow(unused_imports, reason = "reached only through the internals feature")]
        pub(crate) use $path;
    )*};
}

/// A method public with the `internals` feature, crate-private without.
macro_rules! internal_fn {
    ($(#[$attr:meta])* fn $($item:tt)*) => {
        $(#[$attr])*
        #[cfg(feature = "internals")]
        pub fn $($item)*
        $(#[$attr])*
        #[cfg(not(feature = "internals"))]
        #[allow(dead_code, reason = "reached only through the internals feature")]
        pub(crate) fn $($item)*
    };
}

mod batch;
mod compaction;
mod db;
mod error;
pub mod filter;
pub mod fs;
mod key_image;
mod merge;
mod options;
mod planner;
pub mod policy;
mod prefix;
mod sink;
mod sources;
mod table_writer;
mod tree;
internal_mod! {
    codec;
    frame;
    recovery;
    key;
    manifest;
    memtable;
    range_del;
    table;
    wal;
}

pub use batch::{BatchOp, WriteBatch};
/// The byte buffer reads return (from the `bytes` crate), re-exported so
/// that naming it needs no dependency of one's own.
pub use bytes::Bytes;
pub use db::{
    Db, DbIter, IngestOptions, Ingested, IngestedTable, KeyRange, LevelStats, MAX_KEY_BYTES, MAX_VALUE_BYTES,
    Options, Snapshot, Stats, TableInfo,
};
pub use error::{Error, Result};
pub use filter::FilterKind;
pub use key_image::{FIRST_BYTES_IMAGE, KeyImage, RangeFilterPolicy};
pub use options::{Clock, Compaction, CompactionFilter, Decision, SystemClock};
pub use policy::{CompressionPolicy, FilterPolicy};
pub use prefix::{MAX_FIXED_PREFIX, PrefixExtractor};
pub use table::Compression;
pub use table_writer::{TableWriter, TableWritten};
pub use wal::RecoveryMode;

/// What the database records about itself (the manifest's table records
/// and write totals, the WAL's recorded ends, lost writes) and what
/// recovery found at open: the types [`Stats`] and [`Db::tables`] report
/// them in. One place for them, so that the crate's first page stays on
/// reading and writing.
pub mod records {
    pub use crate::key::ValueKind;
    pub use crate::manifest::{DropTotals, LostWrites, WalEnd, WriteTotals};
    pub use crate::recovery::{RecoveryReport, WalCut};
    pub use crate::table::TableRecord;
}
// The paths these had before `records` grouped them, kept so that code
// naming them still compiles; the docs show them once, in `records`.
#[doc(hidden)]
pub use records::{LostWrites, RecoveryReport, TableRecord, ValueKind, WalCut, WalEnd, WriteTotals};

/// The README's examples, compiled and run as doctests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
