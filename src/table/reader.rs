//! Opening a table file and answering point lookups.
//!
//! The file is memory-mapped once; the index and properties blocks are
//! checked and parsed at open as zero-copy slices of the map (an older
//! table's compressed index is decompressed), and the filter's array is
//! read in place (format 4; an older table's is copied: what each holds on
//! the heap is [`Table::filter_heap_bytes`], [`Table::index_heap_bytes`]).
//! A lookup probes the filter, then reads at most one data block, verifying
//! its checksum on every read; a raw block is a slice of the map, a
//! compressed one (format version 3) is decompressed, bounded by the
//! largest block the properties record.
//!
//! `Lookup { entry: Option<Entry::{Value{seq, value}, Tombstone{seq}}>, filter:
//! NoFilter | Absent | MayContain, blocks_read, bytes_read }` gives the engine
//! everything for per-level read-amplification statistics;
//! `Lookup::is_false_positive()` is `MayContain` with no entry.
//!
//! A lookup counts nothing in the table: the `Lookup` it returns is the
//! record, and the engine adds it to its level's counters (one count per
//! probe). `Table::get_hashed(key, KeyHash, snapshot)` takes the key's hash
//! from the caller: the engine hashes once under its salt for every table a
//! lookup probes (a table under another seed is hashed for again, never
//! misread). The per-table atomic counter (`Table::counters()`) is the data
//! blocks its iterators read: scans and compactions.
//!
//! `TableIter` (owned, holds a `Table` clone): `seek(user_key)`,
//! `seek_internal(user_key, seq)`, `seek_to_first()`, and `Iterator<Item =
//! Result<TableEntry>>`, checking each block's crc; after an error it ends.
//!
//! A table's range tombstones (format version 2) are checked and
//! fragmented at open, and kept only if there are any: `range_dels()`.
//!
//! Inspection accessors: `footer()`, `properties()`, `data_block_handles()`,
//! `filter_details()` (status, header, kind, requested kind,
//! bytes, actual bits/key, theoretical FPR, fallback reason), `filter_dropped()`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;

use super::block::Block;
use super::filter_block::TableFilter;
use super::filter_details::{FilterDetails, FilterStatus};
use super::compression::MAX_UNCOMPRESSED_BLOCK;
use super::format::{
    BlockHandle, BlockType, FOOTER_LEN, FORMAT_VERSION_ALIGNED, FORMAT_VERSION_COMPRESSED, Footer, check_filter_padding, read_block,
    read_block_decoded,
};
use super::index::Index;
use super::internal_key::{MAX_SEQ, ValueKind, pack_trailer, parse_internal_key};
use super::iter::TableIter;
use super::rev_iter::TableRevIter;
use super::properties::TableProperties;
use super::range_del_block;
use super::range_filter_block::{self, TableRangeFilter};
use super::stats::{CounterSnapshot, Entry, FilterAnswer, Lookup, TableCounters};
use crate::filter::{KeyHash, hash_key};
use crate::prefix::PrefixExtractor;
use crate::fs::{FileSystem, StdFs};
use crate::range_del::RangeDels;
use crate::{Error, Result};

mod batch;
pub use batch::BatchScratch;
pub(crate) use batch::locate_all;
mod heap;
mod scan_filters;

/// An open, immutable table. Cheap to clone; clones share the map and the
/// counters.
#[derive(Debug, Clone)]
pub struct Table {
    inner: Arc<Inner>,
    /// The sequence number every entry reads as, whatever the file holds:
    /// an ingested table's entries were written before the database gave
    /// them one ([`Table::with_global_seq`]).
    global_seq: Option<u64>,
}

#[derive(Debug)]
struct Inner {
    path: PathBuf,
    file: Bytes,
    footer: Footer,
    /// The largest uncompressed block a compressed block may claim; `None`
    /// for a format that has no compression.
    block_limit: Option<usize>,
    index: Index,
    filter: Option<TableFilter>,
    filter_dropped: Option<String>,
    properties: TableProperties,
    /// Boxed: most tables have none, and pay one pointer for it.
    range_dels: Option<Box<RangeDels>>,
    /// The extractor of the filter's prefix entries, if the properties name
    /// one this build knows (an unknown name: prefixes are never probed).
    prefix_extractor: Option<PrefixExtractor>,
    /// Boxed: most tables have none.
    range_filter: Option<Box<TableRangeFilter>>,
    range_filter_dropped: Option<String>,
    counters: TableCounters,
}

impl IntoIterator for &Table {
    type Item = Result<super::TableEntry>;
    type IntoIter = TableIter;

    fn into_iter(self) -> TableIter {
        self.iter()
    }
}

impl Table {
    /// Opens the table at `path`, checking its footer, index, properties
    /// and filter.
    ///
    /// # Errors
    /// `Io` if the file cannot be opened or mapped; `Corruption` (naming the
    /// file and offset) for a bad footer, index, properties or
    /// range-tombstone block, or a format version that disagrees with
    /// whether the table has range tombstones. A bad
    /// filter block is not an error: the filter is dropped and reported by
    /// [`Table::filter_details`].
    pub fn open(fs: &dyn FileSystem, path: impl AsRef<Path>) -> Result<Table> {
        let path = path.as_ref();
        let file = fs.open_read(path)?;
        let len = file.metadata()?.len();
        if len < FOOTER_LEN as u64 {
            return Err(Error::corruption_in(path, 0, format!("{len} bytes is too short for a table")));
        }
        // SAFETY: table files are immutable once published: the builder
        // writes `<name>.tmp` and renames it into place only after an fsync,
        // and nothing in siftdb writes to, truncates, or reuses a published
        // table's name (it is only deleted, which keeps the mapping valid on
        // Unix). The map is read-only and lives inside `Bytes`, which keeps it
        // alive for as long as any slice of it.
        let map = unsafe { memmap2::Mmap::map(&file)? };
        let bytes = Bytes::from_owner(map);
        Self::from_bytes(path, bytes)
    }

    /// [`Table::open`] on the real file system.
    ///
    /// # Errors
    /// As for [`Table::open`].
    pub fn open_path(path: impl AsRef<Path>) -> Result<Table> {
        Self::open(&StdFs, path)
    }

    fn from_bytes(path: &Path, file: Bytes) -> Result<Table> {
        let in_file = |base: u64| move |e: Error| e.at_file(path, base);
        let footer = Footer::decode(&file).map_err(in_file(0))?;
        let props_block = read_block(&file, footer.properties, BlockType::Properties).map_err(in_file(0))?;
        let properties = TableProperties::decode(&props_block).map_err(in_file(footer.properties.offset))?;
        let block_limit = block_limit(&footer, &properties);
        let index_block =
            read_block_decoded(&file, footer.index, BlockType::Index, block_limit).map_err(in_file(0))?;
        let index = Index::new(index_block).map_err(in_file(footer.index.offset))?;
        check_filter_padding(&file, &footer).map_err(in_file(0))?;
        let range_dels = range_del_block::load(path, &file, &footer, &properties)?;
        let (range_filter, range_filter_dropped) = range_filter_block::load(path, &file, &footer, &properties)?;
        let (filter, filter_dropped) = if footer.filter.is_null() {
            (None, None)
        } else {
            match read_block(&file, footer.filter, BlockType::Filter)
                .and_then(|b| {
                    let in_place = footer.version >= FORMAT_VERSION_ALIGNED;
                    TableFilter::decode_mapped(&b, in_place).map_err(|e| e.at_file(path, footer.filter.offset))
                })
            {
                Ok(f) => (Some(f), None),
                Err(e) => (None, Some(e.at_file(path, 0).to_string())),
            }
        };
        Ok(Table {
            global_seq: None,
            inner: Arc::new(Inner {
                path: path.to_path_buf(),
                file,
                footer,
                block_limit,
                index,
                filter,
                filter_dropped,
                range_dels,
                prefix_extractor: properties.prefix_extractor.as_deref().and_then(|n| n.parse().ok()),
                range_filter: range_filter.map(Box::new),
                range_filter_dropped,
                properties,
                counters: TableCounters::default(),
            }),
        })
    }

    /// This table with every entry read as having sequence number `seq`
    /// (the entries' own numbers are ignored). For an ingested table, which
    /// holds one version per key: the database assigns the number when it
    /// installs the file, and the manifest record carries it
    /// (`TableRecord::min_seq == max_seq`), so the file is linked in
    /// unchanged.
    #[must_use]
    pub fn with_global_seq(mut self, seq: u64) -> Table {
        self.global_seq = Some(seq);
        self
    }

    /// The sequence number every entry reads as, if one was set.
    #[must_use]
    pub fn global_seq(&self) -> Option<u64> {
        self.global_seq
    }

    /// The newest version of `user_key` with a sequence number at most
    /// `snapshot_seq`, and what finding it cost.
    ///
    /// # Errors
    /// `Corruption` if the data block read fails its checksum or is
    /// malformed; never a wrong value.
    pub fn get(&self, user_key: &[u8], snapshot_seq: u64) -> Result<Lookup> {
        self.get_after(user_key, self.filter_answer(user_key), snapshot_seq)
    }

    /// [`Table::get`] with the key's filter hash computed once by the
    /// caller (a database lookup hashes under its salt and passes the same
    /// hash to every table it probes).
    ///
    /// # Errors
    /// As [`Table::get`].
    pub fn get_hashed(&self, user_key: &[u8], hash: KeyHash, snapshot_seq: u64) -> Result<Lookup> {
        self.get_after(user_key, self.filter_answer_hashed(user_key, hash), snapshot_seq)
    }

    /// The rest of a lookup once the filter has answered `filter`. Counts
    /// nothing: the returned [`Lookup`] says what it cost, and the caller
    /// keeps the count (the database, per level).
    fn get_after(&self, user_key: &[u8], filter: FilterAnswer, snapshot_seq: u64) -> Result<Lookup> {
        let mut lookup = Lookup { entry: None, filter, blocks_read: 0, bytes_read: 0 };
        if filter != FilterAnswer::Absent
            && let Some(handle) = self.locate(user_key, snapshot_seq)?
        {
            self.entry_at(handle, user_key, snapshot_seq, &mut None, &mut lookup)?;
        }
        Ok(lookup)
    }

    /// The newest version of `user_key` at most `snapshot_seq` in `block`
    /// (the data block at `handle` that the index gave for it).
    fn entry_in(&self, block: &Block, handle: BlockHandle, user_key: &[u8], snapshot_seq: u64) -> Result<Option<Entry>> {
        let trailer = pack_trailer(snapshot_seq.min(MAX_SEQ), ValueKind::Value);
        let mut it = block.cursor();
        let at = |e: Error| e.at_file(&self.inner.path, handle.offset);
        it.seek(user_key, trailer).map_err(at)?;
        if !it.valid() {
            return Ok(None);
        }
        let (user, seq, kind) = parse_internal_key(it.key()).map_err(at)?;
        let seq = self.global_seq.unwrap_or(seq);
        // Under a global number a table holds one version per key: newer
        // than the snapshot, the key is not here for it.
        Ok((user == user_key && seq <= snapshot_seq).then(|| match kind {
            ValueKind::Value => Entry::Value { seq, value: it.value() },
            ValueKind::Tombstone => Entry::Tombstone { seq },
        }))
    }

    /// What the filter says about `user_key`, without reading data or
    /// counting a probe: `NoFilter` when the table has no usable filter
    /// (written without one, or dropped as corrupt: see
    /// [`Table::filter_details`]).
    #[must_use]
    pub fn filter_answer(&self, user_key: &[u8]) -> FilterAnswer {
        match &self.inner.filter {
            None => FilterAnswer::NoFilter,
            Some(f) => answer(f.may_contain(hash_key(f.seed(), user_key))),
        }
    }

    /// Starts loading the part of this table's filter that a lookup of
    /// `user_key` (hashed as `hash`) will read, and returns at once
    /// ([`crate::filter::Filter::prefetch`]): a point lookup calls it for
    /// every candidate table before probing any.
    #[inline]
    pub fn prefetch_filter(&self, user_key: &[u8], hash: KeyHash) {
        if let Some(f) = &self.inner.filter {
            f.prefetch(hash.under(f.seed(), user_key));
        }
    }

    /// [`Table::filter_answer`] for a key whose hash the caller computed:
    /// no hashing when the table's seed is the hash's.
    #[must_use]
    #[inline]
    pub fn filter_answer_hashed(&self, user_key: &[u8], hash: KeyHash) -> FilterAnswer {
        match &self.inner.filter {
            None => FilterAnswer::NoFilter,
            Some(f) => answer(f.may_contain(hash.under(f.seed(), user_key))),
        }
    }

    /// Reads and checks the data block at `handle` for an iterator,
    /// counting it in [`Table::counters`].
    pub(super) fn read_data_block(&self, handle: BlockHandle) -> Result<Block> {
        TableCounters::bump(&self.inner.counters.data_blocks_read);
        self.read_block_uncounted(handle)
    }

    /// Reads and checks the data block at `handle`.
    fn read_block_uncounted(&self, handle: BlockHandle) -> Result<Block> {
        let inner = &*self.inner;
        let contents = read_block_decoded(&inner.file, handle, BlockType::Data, inner.block_limit)
            .map_err(|e| e.at_file(&inner.path, 0))?;
        Block::new(contents).map_err(|e| e.at_file(&inner.path, handle.offset))
    }

    pub(super) fn index(&self) -> &Index {
        &self.inner.index
    }

    /// An iterator over every entry, positioned before the first.
    #[must_use]
    pub fn iter(&self) -> TableIter {
        TableIter::new(self.clone())
    }

    /// An iterator over the entries whose user keys lie within `bounds`
    /// (lower, upper), last first (reverse internal-key order).
    ///
    /// # Errors
    /// `Corruption` if the index or the first block read is damaged.
    pub fn iter_rev(&self, bounds: (std::ops::Bound<&[u8]>, std::ops::Bound<&[u8]>)) -> Result<TableRevIter> {
        TableRevIter::new(self.clone(), bounds)
    }

    /// The table's path.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The file's size in bytes.
    #[must_use]
    pub fn file_size(&self) -> u64 {
        self.inner.file.len() as u64
    }

    /// The parsed footer.
    #[must_use]
    pub fn footer(&self) -> Footer {
        self.inner.footer
    }

    /// The properties block.
    #[must_use]
    pub fn properties(&self) -> &TableProperties {
        &self.inner.properties
    }

    /// The table's range tombstones; `None` if it has none.
    #[must_use]
    pub fn range_dels(&self) -> Option<&RangeDels> {
        self.inner.range_dels.as_deref()
    }

    /// The handle of every data block, in key order.
    ///
    /// # Errors
    /// `Corruption` if an index entry is malformed (checked at open, so
    /// this does not happen for a table that opened).
    pub fn data_block_handles(&self) -> Result<Vec<BlockHandle>> {
        let index = &self.inner.index;
        (0..index.len())
            .map(|i| {
                index
                    .entry(i)
                    .map(|(_, h)| h)
                    .map_err(|e| e.at_file(&self.inner.path, self.inner.footer.index.offset))
            })
            .collect()
    }

    /// File offsets of the filter's array if read in place from the mapping (format 4), not copied.
    #[must_use]
    pub fn filter_in_place(&self) -> Option<std::ops::Range<u64>> {
        self.inner.filter.as_ref()?.in_place_within(&self.inner.file)
    }

    /// What the filter is and whether it is usable.
    #[must_use]
    pub fn filter_details(&self) -> FilterDetails {
        let inner = &*self.inner;
        let status = match (&inner.filter, &inner.filter_dropped) {
            (_, Some(why)) => FilterStatus::Dropped(why.clone()),
            (Some(f), None) if f.kind().is_none() => FilterStatus::Unknown,
            (Some(_), None) => FilterStatus::Loaded,
            (None, None) => FilterStatus::None,
        };
        let block_bytes = if inner.footer.filter.is_null() { 0 } else { u64::from(inner.footer.filter.size) };
        let keys = self.filter_keys();
        #[expect(clippy::cast_precision_loss, reason = "a ratio for display")]
        let bits_per_key = if keys == 0 { 0.0 } else { (block_bytes * 8) as f64 / keys as f64 };
        FilterDetails {
            status,
            header: inner.filter.as_ref().map(TableFilter::header),
            kind: inner.filter.as_ref().and_then(TableFilter::kind),
            requested: inner.properties.filter_requested.clone(),
            block_bytes,
            bits_per_key,
            theoretical_fpr: inner.filter.as_ref().and_then(TableFilter::theoretical_fpr),
            fallback_reason: inner.properties.filter_fallback_reason.clone(),
        }
    }

    /// The theoretical false-positive rate of the table's usable filter,
    /// from its real size; 1 without one (an absent or dropped filter
    /// passes every key).
    #[must_use]
    pub fn filter_fpr(&self) -> f64 {
        self.inner.filter.as_ref().and_then(TableFilter::theoretical_fpr).unwrap_or(1.0)
    }

    /// Distinct user keys in the table.
    #[must_use]
    pub fn distinct_keys(&self) -> u64 {
        self.inner.properties.distinct_keys
    }

    /// The entries the filter was built over: the distinct user keys and,
    /// written with a prefix extractor, the distinct prefixes. What a
    /// filter's size is planned and judged by.
    #[must_use]
    pub fn filter_keys(&self) -> u64 {
        self.inner.properties.distinct_keys.saturating_add(self.inner.properties.distinct_prefixes)
    }

    /// Whether the writer could not build the requested filter and fell
    /// back (to blocked Bloom, or to none).
    #[must_use]
    pub fn filter_fell_back(&self) -> bool {
        self.inner.properties.filter_fallback_reason.is_some()
    }

    /// Whether the filter block was dropped as corrupt.
    #[must_use]
    pub fn filter_dropped(&self) -> bool {
        self.inner.filter_dropped.is_some()
    }

    /// The table's read counters.
    #[must_use]
    pub fn counters(&self) -> CounterSnapshot {
        self.inner.counters.snapshot()
    }
}

/// The largest uncompressed block a table of format version 3 or later may claim:
/// what its properties record, never more than any table may hold; `None`
/// for older formats, which hold no compressed block.
pub(super) fn block_limit(footer: &Footer, p: &TableProperties) -> Option<usize> {
    (footer.version >= FORMAT_VERSION_COMPRESSED).then(|| {
        let recorded = usize::try_from(p.max_block_bytes).unwrap_or(usize::MAX);
        if recorded == 0 { MAX_UNCOMPRESSED_BLOCK } else { recorded.min(MAX_UNCOMPRESSED_BLOCK) }
    })
}

#[inline]
fn answer(may_contain: bool) -> FilterAnswer {
    if may_contain { FilterAnswer::MayContain } else { FilterAnswer::Absent }
}
