//! # siftdb
//!
//! An embedded key-value store built as an LSM tree whose immutable tables
//! each carry a membership filter, so that a point lookup skips, with no I/O,
//! every table that cannot hold the key.
//!
//! The crate is layered, and data flows one way: [`filter`] knows nothing of
//! files; `table` uses `filter`; the database uses `table`.

#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]
#![warn(missing_docs, clippy::pedantic, clippy::undocumented_unsafe_blocks)]
#![deny(unsafe_op_in_unsafe_fn)]
#![allow(
    clippy::module_name_repetitions,
    reason = "types like FilterKind read better than Kind at call sites"
)]

mod batch;
pub mod codec;
mod compaction;
mod db;
mod error;
pub mod filter;
pub mod fs;
pub mod inspect;
pub mod key;
pub mod manifest;
pub mod memtable;
pub mod policy;
pub mod table;
pub mod wal;

pub use batch::{BatchOp, WriteBatch};
pub use db::{
    Db, DbIter, KeyRange, LevelStats, MAX_KEY_BYTES, MAX_VALUE_BYTES, Options, Snapshot, Stats, TableInfo,
    options, stats,
};
pub use error::{Error, Result};
pub use filter::FilterKind;
pub use policy::FilterPolicy;
pub use wal::RecoveryMode;

/// The README's examples, compiled and run as doctests so they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
