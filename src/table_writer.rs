//! Tables built outside a database, for a bulk load: [`TableWriter`].
//!
//! A bulk load sorts its data elsewhere and writes it as finished tables,
//! which the database then installs whole instead of taking each key
//! through the WAL and the memtable. The writer is the engine's own table
//! builder with the database's settings taken from [`Options`]: block size,
//! compression, prefix extractor, hash salt, and the filter its policy gives
//! the last level, where a bulk load lands.
//!
//! Every entry is written at sequence number 0: a table built apart from
//! the database cannot know the database's sequence numbers, so installing
//! it assigns one to the whole table in the manifest.
//!
//! The filter hashes keys with the options' salt. A database answers
//! lookups with its own salt, so a table meant for one should be written
//! with its [`Db::options`](crate::Db::options); a table written under
//! another salt is still a correct table, and installing it rebuilds its
//! filter under the database's salt.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::filter::FilterKind;
use crate::key::ValueKind;
use crate::options::{Options, check_entry};
use crate::table::{TableBuilder, TableOptions};
use crate::{Error, Result};

/// Writes one table from keys given in strictly increasing order, for a
/// bulk load: the database's settings from [`Options`], every entry at
/// sequence number 0 (installing the table gives it its place in the
/// database's order), and the filter the policy gives the last level.
///
/// An entry out of order (not strictly after the previous key, so a key
/// given twice too) or over [`MAX_KEY_BYTES`](crate::MAX_KEY_BYTES) /
/// [`MAX_VALUE_BYTES`](crate::MAX_VALUE_BYTES) returns
/// [`Error::InvalidArgument`] and changes nothing: the writer stays usable.
/// An I/O error poisons it: every later call fails. The table appears at
/// its path only when [`TableWriter::finish`] returns `Ok` (it is written
/// to `<path>.tmp`, synced, renamed, and the directory synced); dropping an
/// unfinished writer removes the temporary file (best effort).
///
/// ```
/// use siftdb::{FilterKind, FilterPolicy, Options, TableWriter};
///
/// # fn main() -> Result<(), siftdb::Error> {
/// # let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("load.sst");
/// let opts = Options { filter_policy: Some(FilterPolicy::uniform(FilterKind::BinaryFuse8)), ..Options::default() };
/// let mut w = TableWriter::create(&path, &opts)?;
/// w.add("apple", "red")?;
/// w.delete("banana")?;
/// w.add("cherry", "dark")?;
/// assert!(w.add("banana", "late").is_err()); // not after "cherry"
/// let written = w.finish()?;
/// assert_eq!((written.entries, written.deletions), (3, 1));
/// assert_eq!((&written.smallest[..], &written.largest[..]), (&b"apple"[..], &b"cherry"[..]));
/// assert_eq!(written.filter, FilterKind::BinaryFuse8);
/// assert_eq!(std::fs::metadata(&path)?.len(), written.file_bytes);
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct TableWriter {
    builder: TableBuilder,
    fs: Arc<dyn crate::fs::FileSystem>,
    path: PathBuf,
    salt: u64,
    filter: FilterKind,
    /// The previous key, `None` before the first entry.
    last: Option<Vec<u8>>,
    deletions: u64,
}

/// What [`TableWriter::finish`] wrote.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct TableWritten {
    /// Where the table now is.
    pub path: PathBuf,
    /// Entries written: values and deletions.
    pub entries: u64,
    /// Of those, deletions.
    pub deletions: u64,
    /// The file's size in bytes.
    pub file_bytes: u64,
    /// The first key.
    pub smallest: Vec<u8>,
    /// The last key.
    pub largest: Vec<u8>,
    /// The filter the table carries: the one asked for, or blocked Bloom at
    /// its bits per key if that failed to build (as for every table; the
    /// table's properties record the kind asked for and why).
    pub filter: FilterKind,
    /// Bytes of the table's filter block (0 without a filter).
    pub filter_bytes: u64,
    /// The hash salt the filter was built with.
    pub salt: u64,
}

/// How much of a key an error message shows.
const SHOWN_KEY_BYTES: usize = 40;

/// A key for an error message: escaped, and cut short if long, so that a
/// message about a 64 KiB binary key stays one readable line.
fn show_key(key: &[u8]) -> String {
    let shown = key.get(..SHOWN_KEY_BYTES).unwrap_or(key);
    let s = format!("\"{}\"", shown.escape_ascii());
    if shown.len() < key.len() { format!("{s}… ({} bytes)", key.len()) } else { s }
}

impl TableWriter {
    /// Starts a table to be published at `path`, with the settings of
    /// `opts` and the filter its [`filter_policy`](Options::filter_policy)
    /// (or [`FilterPolicy::default`](crate::FilterPolicy::default)) gives
    /// the last level: a per-level policy's last entry (the same kind
    /// everywhere for a uniform one); for a Monkey budget, which has no
    /// fixed kind without a tree, Ribbon at the budget's bits per key
    /// (clamped to 1..=32); none if the policy skips the last level.
    ///
    /// The hash salt is `opts.hash_salt`, 0 if `None`: the
    /// [`Db::options`](crate::Db::options) of an open database carry its
    /// salt, which is what makes the filter usable there as written.
    ///
    /// # Errors
    /// `InvalidArgument` if `path` exists (a writer never overwrites) or
    /// `opts` fails [`Options::validate`]; `Io` if the temporary file
    /// cannot be created.
    pub fn create(path: impl AsRef<Path>, opts: &Options) -> Result<TableWriter> {
        let policy = opts.filter_policy.clone().unwrap_or_default();
        Self::create_with_filter(path, opts, policy.last_level_kind())
    }

    /// [`TableWriter::create`] with the filter the caller chose instead of
    /// the policy's. It is validated against every key at `finish`, as every
    /// table's filter is, and falls back to blocked Bloom if it fails.
    ///
    /// # Errors
    /// As for [`TableWriter::create`], and `InvalidArgument` for a filter
    /// whose parameter is out of range ([`FilterKind::validate`]).
    pub fn create_with_filter(
        path: impl AsRef<Path>,
        opts: &Options,
        filter: FilterKind,
    ) -> Result<TableWriter> {
        opts.validate()?;
        let path = path.as_ref().to_path_buf();
        if opts.fs.exists(&path) {
            return Err(Error::InvalidArgument(format!(
                "{} exists: a table writer does not overwrite",
                path.display()
            )));
        }
        let salt = opts.hash_salt.unwrap_or(0);
        let last = opts.max_levels.saturating_sub(1);
        let table_opts = TableOptions {
            block_bytes: opts.block_bytes,
            filter,
            level: u32::try_from(last).unwrap_or(u32::MAX),
            seed: salt,
            prefix_extractor: opts.prefix_extractor,
            range_filter: opts.range_filter,
            compression: opts.compression.for_level(last, true),
            inject_filter_build_failure: opts.injects_filter_build_failure(),
            ..TableOptions::default()
        };
        let builder = TableBuilder::new(Arc::clone(&opts.fs), &path, table_opts)?;
        Ok(TableWriter { builder, fs: Arc::clone(&opts.fs), path, salt, filter, last: None, deletions: 0 })
    }

    /// Writes `key` with `value`.
    ///
    /// # Errors
    /// `InvalidArgument` if `key` is not strictly after the previous key, or
    /// `key` or `value` is over its limit (nothing is written); `Io` on a
    /// write error (the writer is poisoned).
    pub fn add(&mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        self.put(key.as_ref(), ValueKind::Value, value.as_ref())
    }

    /// Writes a deletion of `key`: once installed, it hides the key's
    /// older values in the database.
    ///
    /// # Errors
    /// As for [`TableWriter::add`].
    pub fn delete(&mut self, key: impl AsRef<[u8]>) -> Result<()> {
        self.put(key.as_ref(), ValueKind::Tombstone, b"")
    }

    fn put(&mut self, key: &[u8], kind: ValueKind, value: &[u8]) -> Result<()> {
        check_entry(key, value)?;
        if let Some(last) = &self.last
            && key <= last.as_slice()
        {
            return Err(Error::InvalidArgument(format!(
                "table writer keys must be strictly increasing: {} after {}",
                show_key(key),
                show_key(last)
            )));
        }
        self.builder.add(key, 0, kind, value)?;
        if kind == ValueKind::Tombstone {
            self.deletions += 1;
        }
        let last = self.last.get_or_insert_with(Vec::new);
        last.clear();
        last.extend_from_slice(key);
        Ok(())
    }

    /// Entries written so far.
    #[must_use]
    pub fn entries(&self) -> u64 {
        self.builder.entries()
    }

    /// The filter the table will be built with (before any fallback).
    #[must_use]
    pub fn filter(&self) -> FilterKind {
        self.filter
    }

    /// Builds the filter, writes the index, properties and footer, and
    /// publishes the table at its path.
    ///
    /// # Errors
    /// `InvalidArgument` for a table with no entries (nothing to install)
    /// or if a file has appeared at the path since `create`; `Io` from a
    /// write, sync or rename, or an earlier error that poisoned the writer.
    /// On any error nothing is left at the path.
    pub fn finish(self) -> Result<TableWritten> {
        if self.last.is_none() {
            return Err(Error::InvalidArgument(format!(
                "{}: a table with no entries cannot be finished",
                self.path.display()
            )));
        }
        // Checked again since the rename would replace it: a window remains
        // between this and the rename, which the file systems offer no
        // portable way to close.
        if self.fs.exists(&self.path) {
            return Err(Error::InvalidArgument(format!(
                "{} appeared while the table was written: a table writer does not overwrite",
                self.path.display()
            )));
        }
        let record = self.builder.finish()?;
        Ok(TableWritten {
            path: self.path,
            entries: record.entries,
            deletions: self.deletions,
            file_bytes: record.file_size,
            smallest: record.smallest,
            largest: record.largest,
            filter: record.filter,
            filter_bytes: record.filter_bytes,
            salt: self.salt,
        })
    }
}
