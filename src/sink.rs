//! Where new tables come from: the one path by which flushes and
//! compactions number, build and publish a table.
//!
//! A [`TableSink`] borrows what every new table needs from the database
//! (its directory and file system, the file-number counter, the filter
//! seed, the table options) so that `compaction` writes tables without
//! knowing the database, and a flush writes them the same way. The table
//! builder publishes atomically (`<name>.tmp`, fsync, rename, fsync of the
//! directory); the sink then opens the published file, so what joins the
//! tree is what a reader after a restart would see.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::Result;
use crate::filter::FilterKind;
use crate::fs::FileSystem;
use crate::key::{SeqNo, ValueKind};
use crate::key_image::RangeFilterPolicy;
use crate::manifest::table_file_name;
use crate::options::Clock;
use crate::prefix::PrefixExtractor;
use crate::range_del::RangeTombstone;
use crate::table::{Compression, Table, TableBuilder, TableOptions};
use crate::tree::TableFile;

/// The database's means of writing tables, borrowed for one flush or job.
pub(crate) struct TableSink<'a> {
    pub fs: &'a Arc<dyn FileSystem>,
    pub dir: &'a Path,
    /// The next unused file number (shared with the WAL and the manifest).
    pub next_file: &'a AtomicU64,
    /// The seed of every table filter.
    pub salt: u64,
    pub block_bytes: usize,
    /// The extractor whose prefixes every new table's filter also holds.
    pub prefix_extractor: Option<PrefixExtractor>,
    /// The range filter every new table gets, if any.
    pub range_filter: Option<RangeFilterPolicy>,
    pub inject_filter_build_failure: bool,
    /// What new tables record as their creation time (`Options::clock`).
    pub clock: &'a dyn Clock,
    /// Where a table that fails to delete once obsolete is counted.
    pub cleanup_failures: &'a Arc<AtomicU64>,
}

/// A table being written: its number and its builder.
pub(crate) struct NewTable {
    number: u64,
    builder: TableBuilder,
}

impl NewTable {
    /// Adds one version (internal-key order).
    ///
    /// # Errors
    /// As for [`TableBuilder::add`].
    pub fn add(&mut self, key: &[u8], seq: SeqNo, kind: ValueKind, value: &[u8]) -> Result<()> {
        self.builder.add(key, seq, kind, value)
    }

    /// Adds a range tombstone (in any order beside the versions).
    ///
    /// # Errors
    /// As for [`TableBuilder::add_range_tombstone`].
    pub fn add_range_tombstone(&mut self, t: &RangeTombstone) -> Result<()> {
        self.builder.add_range_tombstone(t)
    }

    /// Bytes written or buffered so far.
    pub fn estimated_size(&self) -> u64 {
        self.builder.estimated_size()
    }
}

impl TableSink<'_> {
    /// Starts a table for `level` with `filter` (a blocked-Bloom filter
    /// sized with `bloom_carry_bits`, see `TableOptions`) and `compression`
    /// (the policy's codec for the write), under a fresh file number.
    ///
    /// # Errors
    /// The file system's, creating the temporary file.
    pub fn start(
        &self,
        level: usize,
        filter: FilterKind,
        bloom_carry_bits: i64,
        compression: Compression,
    ) -> Result<NewTable> {
        let number = self.next_file.fetch_add(1, Ordering::SeqCst);
        let opts = TableOptions {
            block_bytes: self.block_bytes,
            filter,
            level: u32::try_from(level).unwrap_or(u32::MAX),
            seed: self.salt,
            file_number: number,
            bloom_carry_bits,
            prefix_extractor: self.prefix_extractor,
            range_filter: self.range_filter,
            inject_filter_build_failure: self.inject_filter_build_failure,
            compression,
            created_unix_secs: Some(self.clock.now_unix_secs()),
            ..TableOptions::default()
        };
        let builder = TableBuilder::new(Arc::clone(self.fs), self.dir.join(table_file_name(number)), opts)?;
        Ok(NewTable { number, builder })
    }

    /// What [`TableSink::finish`] needs, owned: a compaction finishes each
    /// output on a thread of its own while it merges into the next.
    pub fn finisher(&self) -> Finisher {
        Finisher {
            fs: Arc::clone(self.fs),
            dir: self.dir.to_path_buf(),
            cleanup_failures: Arc::clone(self.cleanup_failures),
        }
    }

    /// Finishes (publishes) `t` and opens it, with the record the manifest
    /// will keep.
    ///
    /// # Errors
    /// Writing or syncing the table, or reading it back.
    pub fn finish(&self, t: NewTable) -> Result<TableFile> {
        self.finisher().finish(t)
    }

    /// The next unused file number, for the manifest edit that installs
    /// what this sink wrote.
    pub fn next_file_number(&self) -> u64 {
        self.next_file.load(Ordering::SeqCst)
    }
}

/// The part of a [`TableSink`] that finishes a table, owned, so that it can
/// move to another thread.
pub(crate) struct Finisher {
    fs: Arc<dyn FileSystem>,
    dir: PathBuf,
    cleanup_failures: Arc<AtomicU64>,
}

impl Finisher {
    /// [`TableSink::finish`].
    ///
    /// # Errors
    /// Writing or syncing the table, or reading it back.
    pub fn finish(&self, t: NewTable) -> Result<TableFile> {
        let path = self.dir.join(table_file_name(t.number));
        let record = t.builder.finish()?;
        let table = Table::open(&*self.fs, &path).map_err(|e| e.at_file(&path, 0))?;
        Ok(TableFile::new(
            Arc::new(record),
            table,
            path,
            Arc::clone(&self.fs),
            Arc::clone(&self.cleanup_failures),
        ))
    }
}
