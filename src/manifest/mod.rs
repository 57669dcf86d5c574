//! The manifest: which tables are live, and the counters that must survive
//! a restart (next file number, last sequence number, live WAL number, hash
//! salt).
//!
//! - [`edit`]: [`VersionEdit`], one change, and the encoding of a
//!   [`TableRecord`] (the table layer's type, re-exported here).
//! - [`version`]: [`Version`] (tables by level) and [`VersionSet`].
//! - [`records`]: the write totals, WAL ends and lost writes edits carry.
//! - [`log`]: [`ManifestWriter`] and [`replay`], over the WAL's framing.
//! - [`current`]: the `CURRENT` file naming the live manifest.
//! - [`filename`]: file names in the database directory.
//! - [`kinds`]: the format version a table's filter kind needs.
//!
//! Opening a database: [`read_current`] → read `MANIFEST-n` → [`replay`] →
//! [`ManifestWriter::reopen`] at `valid_len` (or start a new manifest from
//! [`VersionSet::snapshot_edit`] and [`set_current`]).

pub mod current;
pub mod edit;
pub mod filename;
pub mod kinds;
pub mod log;
pub mod records;
pub mod version;

pub use current::{current_contents, read_current, set_current};
pub use edit::{DB_FORMAT_VERSION, TableRecord, VersionEdit};
pub use records::{DropTotals, LostWrites, WalEnd, WriteTotals};
pub use filename::{
    CURRENT, FileKind, LOCK, log_file_name, manifest_file_name, parse_file_name, table_file_name,
};
pub use log::{ManifestWriter, Replayed, replay};
pub use version::{NUM_LEVELS, TableRef, Version, VersionSet};
