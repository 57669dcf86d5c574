//! Writes a table: data blocks as keys arrive, then index, filter, range
//! tombstones, properties and footer, published atomically.
//!
//! The builder writes to `<path>.tmp`, a name no reader ever opens as a
//! table, and only [`TableBuilder::finish`] renames it to `path` after an
//! fsync (followed by an fsync of the directory).
//!
//! - Out-of-order `add` (not strictly after the previous internal key,
//!   duplicates included) and `seq > 2^56 − 1` return `InvalidArgument` and
//!   change nothing; the builder stays usable.
//! - A write error poisons the builder: every later call fails.
//! - Dropping an unfinished builder, or a failed `finish`, removes the temp
//!   file (best effort). If the rename succeeded but the directory fsync failed,
//!   the published file is removed too: the caller was told the table does not
//!   exist. Never a file at `path` that `finish` did not return `Ok` for.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use super::block_builder::BlockBuilder;
use super::filter_block::{BuiltFilter, FILTER_ARRAY_ALIGN, build_filter_block};
use super::compression::{BlockCompressor, CODEC_RAW, Compression};
use super::options::TableOptions;
use super::format::{
    BLOCK_TRAILER_LEN, BlockHandle, BlockType, FORMAT_VERSION, FORMAT_VERSION_ALIGNED, FORMAT_VERSION_COMPRESSED, FORMAT_VERSION_PLAIN, FORMAT_VERSION_RANGE_DEL, Footer,
    append_coded_block,
};
use super::index::IndexBuilder;
use super::internal_key::{MAX_SEQ, ValueKind, compare_internal, encode_internal_key, pack_trailer};
use super::properties::TableProperties;
use super::{range_del_block, range_filter_block};
use super::record::TableRecord;
use crate::filter::hash_key;
use crate::prefix::PrefixExtractor;
use crate::fs::{FileSystem, StdFs, WritableFile};
use crate::range_del::{RangeDels, RangeTombstone};
use crate::{Error, Result};

/// Bytes buffered before a write goes to the file.
const WRITE_BUFFER: usize = 256 * 1024;

/// Writes one table. Keys must be added in internal-key order.
///
/// An out-of-order or invalid `add` returns `InvalidArgument` and changes
/// nothing: the builder stays usable. An I/O error poisons it: every later
/// call fails, and dropping it removes the temp file.
///
/// ```
/// use std::sync::Arc;
/// use siftdb::fs::StdFs;
/// use siftdb::filter::FilterKind;
/// use siftdb::table::{Table, TableBuilder, TableOptions};
/// use siftdb::ValueKind;
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("000001.sst");
/// let opts = TableOptions { filter: FilterKind::None, ..TableOptions::default() };
/// let mut b = TableBuilder::new(Arc::new(StdFs), &path, opts).unwrap();
/// b.add(b"apple", 2, ValueKind::Value, b"red").unwrap();
/// b.add(b"apple", 1, ValueKind::Tombstone, b"").unwrap();
/// let meta = b.finish().unwrap();
/// assert_eq!(meta.entries, 2);
/// let table = Table::open(&StdFs, &path).unwrap();
/// assert!(table.get(b"apple", 5).unwrap().entry.is_some());
/// ```
#[derive(Debug)]
pub struct TableBuilder {
    fs: Arc<dyn FileSystem>,
    path: PathBuf,
    tmp: PathBuf,
    opts: TableOptions,
    file: Option<Box<dyn WritableFile>>,
    pending: Vec<u8>,
    written: u64,
    data_block: BlockBuilder,
    index: IndexBuilder,
    hashes: Vec<u64>,
    /// The image of each distinct user key, for the range filter (empty
    /// without one); ascending, as the keys are.
    images: Vec<u64>,
    last_user_key: Vec<u8>,
    /// The last prefix given a filter entry (valid once `distinct_prefixes > 0`).
    last_prefix: Vec<u8>,
    last_trailer: u64,
    key_buf: Vec<u8>,
    /// As added: sorted and deduplicated once, at `finish`.
    range_tombstones: Vec<RangeTombstone>,
    props: TableProperties,
    compressor: BlockCompressor,
    /// Whether a block was stored compressed: the table is format version 3.
    any_compressed: bool,
    poisoned: Option<String>,
    /// Renamed to `path` but not yet durable in the directory.
    published: bool,
    finished: bool,
}

fn tmp_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".tmp");
    PathBuf::from(s)
}

impl TableBuilder {
    /// Starts a table that will be published at `path`.
    ///
    /// # Errors
    /// `InvalidArgument` for a zero block size, a Bloom bits-per-key
    /// outside 1..=64 (NaN included) or a zstd level outside
    /// [`ZSTD_LEVELS`](super::compression::ZSTD_LEVELS); `Io` if the temp
    /// file cannot be created.
    pub fn new(fs: Arc<dyn FileSystem>, path: impl Into<PathBuf>, opts: TableOptions) -> Result<Self> {
        if opts.block_bytes == 0 {
            return Err(Error::InvalidArgument("table block size must be positive".into()));
        }
        opts.filter.validate()?;
        if let Some(e) = &opts.prefix_extractor {
            e.validate()?;
        }
        if let Some(r) = &opts.range_filter {
            r.validate()?;
        }
        let compressor = BlockCompressor::new(opts.compression)?;
        let path = path.into();
        let tmp = tmp_path(&path);
        let file = fs.create(&tmp)?;
        Ok(TableBuilder {
            fs,
            path,
            tmp,
            data_block: BlockBuilder::new(opts.restart_interval),
            opts,
            file: Some(file),
            pending: Vec::new(),
            written: 0,
            index: IndexBuilder::default(),
            hashes: Vec::new(),
            images: Vec::new(),
            last_user_key: Vec::new(),
            last_prefix: Vec::new(),
            last_trailer: 0,
            key_buf: Vec::new(),
            range_tombstones: Vec::new(),
            props: TableProperties::default(),
            compressor,
            any_compressed: false,
            poisoned: None,
            published: false,
            finished: false,
        })
    }

    /// [`TableBuilder::new`] on the real file system.
    ///
    /// # Errors
    /// As for [`TableBuilder::new`].
    pub fn create(path: impl Into<PathBuf>, opts: TableOptions) -> Result<Self> {
        Self::new(Arc::new(StdFs), path, opts)
    }

    /// Entries added so far.
    #[must_use]
    pub fn entries(&self) -> u64 {
        self.props.entries
    }

    /// Approximate file size if finished now (excluding filter and index).
    #[must_use]
    pub fn estimated_size(&self) -> u64 {
        self.written + self.pending.len() as u64 + self.data_block.estimated_size() as u64
    }

    /// Adds one version of `user_key`.
    ///
    /// # Errors
    /// `InvalidArgument` if `seq` exceeds [`MAX_SEQ`] or `(user_key, seq)`
    /// does not sort strictly after the previous entry (the builder is
    /// unchanged); `Io` on a write error (the builder is poisoned).
    pub fn add(&mut self, user_key: &[u8], seq: u64, kind: ValueKind, value: &[u8]) -> Result<()> {
        self.check_poisoned()?;
        if seq > MAX_SEQ {
            return Err(Error::InvalidArgument(format!("sequence number {seq} exceeds {MAX_SEQ}")));
        }
        let trailer = pack_trailer(seq, kind);
        let first = self.props.entries == 0;
        if !first
            && compare_internal(&self.last_user_key, self.last_trailer, user_key, trailer)
                != std::cmp::Ordering::Less
        {
            return Err(Error::InvalidArgument(format!(
                "table keys out of order: ({:?}, seq {seq}) after ({:?}, seq {})",
                String::from_utf8_lossy(user_key),
                String::from_utf8_lossy(&self.last_user_key),
                self.last_trailer >> 8
            )));
        }
        if first || self.last_user_key != user_key {
            self.hashes.push(hash_key(self.opts.seed, user_key));
            if let Some(r) = &self.opts.range_filter {
                self.images.push(r.image.image(user_key));
            }
            self.props.distinct_keys += 1;
            // Keys sharing a prefix are adjacent in key order (every key
            // between two of them starts with it), so comparing with the
            // last prefix finds each distinct one once.
            if let Some(q) = self.opts.prefix_extractor.as_ref().and_then(|e| e.extract(user_key))
                && (self.props.distinct_prefixes == 0 || self.last_prefix != q)
            {
                self.hashes.push(PrefixExtractor::hash(self.opts.seed, q));
                self.props.distinct_prefixes += 1;
                self.last_prefix.clear();
                self.last_prefix.extend_from_slice(q);
            }
            if first {
                self.props.smallest_key = Some(user_key.to_vec());
            }
            self.last_user_key.clear();
            self.last_user_key.extend_from_slice(user_key);
        }
        self.last_trailer = trailer;
        self.props.min_seq = if first { seq } else { self.props.min_seq.min(seq) };
        self.props.max_seq = self.props.max_seq.max(seq);
        self.props.entries += 1;
        if kind == ValueKind::Tombstone {
            self.props.tombstones += 1;
        }
        self.key_buf.clear();
        encode_internal_key(&mut self.key_buf, user_key, seq, kind);
        self.data_block.add(&self.key_buf, value);
        if self.data_block.estimated_size() >= self.opts.block_bytes {
            self.flush_data_block()?;
        }
        Ok(())
    }

    /// Adds a range tombstone, deleting `[t.start, t.end)` as of `t.seq`.
    /// Unlike [`TableBuilder::add`], any order and any time before
    /// [`TableBuilder::finish`]; duplicates are written once. A table with
    /// range tombstones is written as format version 2, and its key and
    /// sequence bounds take them in.
    ///
    /// # Errors
    /// `InvalidArgument` if `t.start >= t.end` or `t.seq` exceeds
    /// [`MAX_SEQ`] (the builder is unchanged), or if the builder is
    /// poisoned.
    pub fn add_range_tombstone(&mut self, t: &RangeTombstone) -> Result<()> {
        self.check_poisoned()?;
        if t.start >= t.end {
            return Err(Error::InvalidArgument(format!(
                "empty range tombstone: start {:?} >= end {:?}",
                String::from_utf8_lossy(&t.start),
                String::from_utf8_lossy(&t.end)
            )));
        }
        if t.seq > MAX_SEQ {
            return Err(Error::InvalidArgument(format!("sequence number {} exceeds {MAX_SEQ}", t.seq)));
        }
        self.range_tombstones.push(t.clone());
        Ok(())
    }

    fn check_poisoned(&self) -> Result<()> {
        match &self.poisoned {
            Some(why) => {
                Err(Error::InvalidArgument(format!("table builder unusable after an earlier error: {why}")))
            }
            None => Ok(()),
        }
    }

    fn offset(&self) -> u64 {
        self.written + self.pending.len() as u64
    }

    fn append(&mut self, contents: &[u8], ty: BlockType) -> Result<BlockHandle> {
        let offset = self.offset();
        let h = append_coded_block(&mut self.pending, offset, contents, ty, CODEC_RAW);
        self.appended(h)
    }

    /// Appends a data block, compressed if that pays.
    fn append_compressible(&mut self, raw: &[u8], ty: BlockType) -> Result<BlockHandle> {
        if self.opts.compression == Compression::None {
            return self.append(raw, ty);
        }
        self.props.max_block_bytes = self.props.max_block_bytes.max(raw.len() as u64);
        let offset = self.offset();
        let (stored, codec) = self.compressor.compress(raw);
        let h = append_coded_block(&mut self.pending, offset, stored, ty, codec);
        if codec != CODEC_RAW {
            self.any_compressed = true;
            if ty == BlockType::Data {
                self.props.compressed_data_blocks += 1;
            }
        }
        self.appended(h)
    }

    fn appended(&mut self, h: Result<BlockHandle>) -> Result<BlockHandle> {
        let h = match h {
            Ok(h) => h,
            Err(e) => {
                // The block's entries are gone from the builder; nothing
                // correct can be finished any more.
                self.poisoned = Some(e.to_string());
                return Err(e);
            }
        };
        if self.pending.len() >= WRITE_BUFFER {
            self.write_pending()?;
        }
        Ok(h)
    }

    fn write_pending(&mut self) -> Result<()> {
        let Some(file) = self.file.as_mut() else {
            return Err(Error::InvalidArgument("table builder has no open file".into()));
        };
        if let Err(e) = file.write_all(&self.pending) {
            self.poisoned = Some(e.to_string());
            return Err(e.into());
        }
        self.written += self.pending.len() as u64;
        self.pending.clear();
        Ok(())
    }

    fn flush_data_block(&mut self) -> Result<()> {
        if self.data_block.is_empty() {
            return Ok(());
        }
        let last_key = self.data_block.last_key().to_vec();
        let contents = self.data_block.finish();
        let h = self.append_compressible(&contents, BlockType::Data)?;
        self.index.add(&last_key, h);
        self.props.data_blocks += 1;
        self.props.data_bytes += h.size_with_trailer();
        self.props.data_raw_bytes += (contents.len() + BLOCK_TRAILER_LEN) as u64;
        Ok(())
    }

    /// Writes the filter, index, properties and footer, syncs, and publishes
    /// the table at its path.
    ///
    /// # Errors
    /// `Io` from any write, sync or rename; the temp file is then removed
    /// (best effort) and nothing is left at the table's path.
    pub fn finish(mut self) -> Result<TableRecord> {
        self.check_poisoned()?;
        let meta = self.finish_inner();
        if meta.is_err() {
            self.poisoned = Some("finish failed".into());
        }
        meta
    }

    /// Builds and appends the range-filter block, if the options ask for
    /// one, and records it in the properties; `None` if none was written.
    fn write_range_filter(&mut self) -> Result<Option<BlockHandle>> {
        let Some(policy) = self.opts.range_filter else { return Ok(None) };
        let built = range_filter_block::build(
            &policy,
            self.opts.seed,
            &self.images,
            (self.offset(), self.opts.inject_filter_build_failure),
        );
        let handle =
            if built.block.is_empty() { None } else { Some(self.append(&built.block, BlockType::RangeFilter)?) };
        let p = &mut self.props;
        (p.range_filter_block, p.range_filter_buckets) = (handle, built.buckets);
        (p.range_filter_kind, p.range_filter_fallback_reason) = (built.kind.to_string(), built.fallback_reason);
        Ok(handle)
    }

    fn finish_inner(&mut self) -> Result<TableRecord> {
        self.flush_data_block()?;
        let BuiltFilter { kind, block: filter_block, fallback_reason, array_at } = build_filter_block(
            self.opts.filter,
            self.opts.seed,
            &mut self.hashes,
            self.opts.inject_filter_build_failure,
            self.opts.bloom_carry_bits,
        );
        // The index is stored raw whatever the codec, so that an open reads
        // it in place from the mapping: compressed, every open decompressed
        // it onto the heap for as long as the table lived (docs/measurements.md,
        // issue 66), to save about 1% of the file.
        let index_block = self.index.finish();
        let index = self.append(&index_block, BlockType::Index)?;
        let filter = if filter_block.is_empty() {
            BlockHandle::default()
        } else {
            if let Some(at) = array_at {
                // The mapping is page-aligned, so an aligned file offset is
                // an aligned address: the reader views the array in place.
                let misfit = (self.offset() + at as u64) % FILTER_ARRAY_ALIGN;
                let pad = (FILTER_ARRAY_ALIGN - misfit) % FILTER_ARRAY_ALIGN;
                self.pending.resize(self.pending.len() + pad as usize, 0);
            }
            self.append(&filter_block, BlockType::Filter)?
        };
        let dels = RangeDels::new(std::mem::take(&mut self.range_tombstones));
        let range_del = if dels.is_empty() {
            None
        } else {
            Some(self.append(&range_del_block::encode(&dels), BlockType::RangeDel)?)
        };
        let range_filter = self.write_range_filter()?;
        let p = &mut self.props;
        p.largest_key = (p.entries > 0).then(|| self.last_user_key.clone());
        range_del_block::cover(p, &dels, range_del);
        p.index_bytes = index.size_with_trailer();
        p.filter_bytes = if filter.is_null() { 0 } else { filter.size_with_trailer() };
        p.filter_kind = kind.to_string();
        p.filter_requested = self.opts.filter.to_string();
        p.filter_fallback_reason = fallback_reason;
        p.level = self.opts.level;
        p.prefix_extractor = self.opts.prefix_extractor.map(|e| e.name());
        if self.opts.compression == Compression::None {
            p.data_raw_bytes = 0;
        } else {
            p.compression = Some(self.opts.compression.to_string());
        }
        p.created_unix_secs = self
            .opts
            .created_unix_secs
            .unwrap_or_else(|| SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()));
        let props_block = p.encode();
        let properties = self.append(&props_block, BlockType::Properties)?;
        let version = match (self.any_compressed, range_del.is_some()) {
            _ if range_filter.is_some() => FORMAT_VERSION,
            _ if array_at.is_some() && !filter.is_null() => FORMAT_VERSION_ALIGNED,
            (true, _) => FORMAT_VERSION_COMPRESSED,
            (false, true) => FORMAT_VERSION_RANGE_DEL,
            (false, false) => FORMAT_VERSION_PLAIN,
        };
        let footer = Footer { index, filter, properties, version }.encode();
        self.pending.extend_from_slice(&footer);
        self.write_pending()?;
        let file_size = self.written;
        let Some(mut file) = self.file.take() else {
            return Err(Error::InvalidArgument("table builder has no open file".into()));
        };
        file.sync()?;
        drop(file);
        self.fs.rename(&self.tmp, &self.path)?;
        self.published = true;
        let dir = match self.path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        self.fs.sync_dir(&dir)?;
        self.published = false;
        self.finished = true;
        let p = &self.props;
        Ok(TableRecord {
            file_number: self.opts.file_number,
            file_size,
            smallest: p.smallest_key.clone().unwrap_or_default(),
            largest: p.largest_key.clone().unwrap_or_default(),
            min_seq: p.min_seq,
            max_seq: p.max_seq,
            entries: p.entries,
            filter: kind,
            filter_bytes: p.filter_bytes,
        })
    }
}

impl Drop for TableBuilder {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        self.file = None;
        // Best effort: a leftover temp name is never opened as a table.
        if self.fs.exists(&self.tmp) {
            let _ = self.fs.remove_file(&self.tmp);
        }
        // Renamed but the directory sync failed: the caller was told the
        // table does not exist, so it must not appear.
        if self.published {
            let _ = self.fs.remove_file(&self.path);
        }
    }
}
