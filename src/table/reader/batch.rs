//! Many keys looked up in one table at once (`Db::multi_get`): the filter
//! answers them all in one call (Ribbon checks the CPU's features once a
//! batch, [`crate::filter::Filter::contains_batch`]), then each survivor's
//! block is found in the index, and a data block that several keys fall
//! in is read (checked, decompressed) once for all of them.

use super::Table;
use super::super::block::Block;
use super::super::format::BlockHandle;
use super::super::index::Search;
use super::super::internal_key::{MAX_SEQ, ValueKind, pack_trailer};
use super::super::stats::{FilterAnswer, Lookup};
use crate::Result;
use crate::filter::KeyHash;

impl Table {
    /// Looks each of `keys` (user keys with their hashes under the
    /// database's salt) up as [`Table::get_hashed`] would at
    /// `snapshot_seq`, appending one [`Lookup`] a key to `out`, in order.
    ///
    /// A data block is read once for a run of neighbouring keys that fall
    /// in it, and counted against the first of them: keys in ascending
    /// order share every block they can. Any order gives the same answers.
    ///
    /// # Errors
    /// As [`Table::get`]: a damaged data block fails the batch.
    pub fn get_batch(&self, keys: &[(&[u8], KeyHash)], snapshot_seq: u64, out: &mut Vec<Lookup>) -> Result<()> {
        self.get_batch_into(keys, snapshot_seq, out, &mut BatchScratch::default())
    }

    /// [`Table::get_batch`] with its working buffers kept by the caller,
    /// for a caller that asks many tables in turn.
    ///
    /// # Errors
    /// As [`Table::get`].
    pub fn get_batch_into(
        &self,
        keys: &[(&[u8], KeyHash)],
        snapshot_seq: u64,
        out: &mut Vec<Lookup>,
        scratch: &mut BatchScratch,
    ) -> Result<()> {
        let answer = self.filter_batch(keys, scratch);
        let start = out.len();
        let BatchScratch { passed, searches, survivors, handles, .. } = scratch;
        searches.clear();
        survivors.clear();
        for (k, &pass) in passed.iter().enumerate() {
            let filter = if pass { answer } else { FilterAnswer::Absent };
            out.push(Lookup { entry: None, filter, blocks_read: 0, bytes_read: 0 });
            if pass {
                survivors.push(k);
                searches.push(self.index_search());
            }
        }
        locate_all(searches, |j| (self, keys[survivors[j]].0), snapshot_seq)?;
        // Every survivor's block located and its first lines requested
        // before any is read, so their memory waits overlap.
        handles.clear();
        for s in searches.iter() {
            let handle = self.located(s)?;
            if let Some(h) = handle {
                self.prefetch_block(h);
            }
            handles.push(handle);
        }
        let mut last = None;
        for (&k, handle) in survivors.iter().zip(handles.iter()) {
            if let Some(h) = *handle {
                self.entry_at(h, keys[k].0, snapshot_seq, &mut last, &mut out[start + k])?;
            }
        }
        Ok(())
    }

    /// The filter's answers for `keys` into `scratch.passed` (all `true`
    /// without a usable filter), and the answer a key that passed got.
    pub(crate) fn filter_batch(&self, keys: &[(&[u8], KeyHash)], scratch: &mut BatchScratch) -> FilterAnswer {
        let BatchScratch { hashes, passed, .. } = scratch;
        if let Some(f) = &self.inner.filter {
            hashes.clear();
            hashes.extend(keys.iter().map(|&(key, hash)| hash.under(f.seed(), key)));
            f.may_contain_batch(hashes, passed);
            FilterAnswer::MayContain
        } else {
            passed.clear();
            passed.resize(keys.len(), true);
            FilterAnswer::NoFilter
        }
    }

    /// The data block that holds `user_key`'s newest version at most
    /// `snapshot_seq`, if the table has one that can.
    pub(crate) fn locate(&self, user_key: &[u8], snapshot_seq: u64) -> Result<Option<BlockHandle>> {
        let mut s = [self.index_search()];
        locate_all(&mut s, |_| (self, user_key), snapshot_seq)?;
        self.located(&s[0])
    }

    /// A search of this table's index for [`locate_all`].
    pub(crate) fn index_search(&self) -> Search {
        self.inner.index.search()
    }

    /// The data block a finished search of this table's index found.
    pub(crate) fn located(&self, s: &Search) -> Result<Option<BlockHandle>> {
        self.inner.index.found(s).map_err(|e| self.in_index(e))
    }

    fn in_index(&self, e: crate::Error) -> crate::Error {
        e.at_file(&self.inner.path, self.inner.footer.index.offset)
    }

    /// Starts loading the lines of the block at `handle` that a read meets
    /// first: its trailer (type and checksum, read before the contents) and
    /// its first line (where the checksum starts); the rest streams.
    pub(crate) fn prefetch_block(&self, handle: BlockHandle) {
        let file = &self.inner.file;
        let start = usize::try_from(handle.offset).unwrap_or(usize::MAX);
        let end = start.saturating_add(handle.size as usize);
        for at in [start, end] {
            if let Some(byte) = file.get(at) {
                crate::filter::prefetch::line(byte);
            }
        }
    }

    /// Fills `lookup` with `user_key`'s entry in the block at `handle`,
    /// reading the block unless `last` already holds it (then the read is
    /// not counted again), and leaving it there.
    pub(crate) fn entry_at(
        &self,
        handle: BlockHandle,
        user_key: &[u8],
        snapshot_seq: u64,
        last: &mut Option<(BlockHandle, Block)>,
        lookup: &mut Lookup,
    ) -> Result<()> {
        let block = match last.take() {
            Some((h, block)) if h == handle => block,
            _ => {
                lookup.blocks_read = 1;
                lookup.bytes_read = handle.size_with_trailer();
                self.read_block_uncounted(handle)?
            }
        };
        lookup.entry = self.entry_in(&block, handle, user_key, snapshot_seq)?;
        *last = Some((handle, block));
        Ok(())
    }
}

/// Runs the index searches of a batch's lookups in lockstep, one step of
/// every search before the next step of any, each step in three passes:
/// request each probe's slot in its restart array, then each probe's entry,
/// then compare. A lookup's search is about 11 steps of two dependent
/// misses each where the index is not in cache (a present key's lookup
/// spent 40% of its time there, perf); in lockstep a batch waits for each
/// step's misses together. `searches[j]` is lookup `j`'s search (begun by
/// [`Table::index_search`]), and `at(j)` its table and user key; each ends
/// at the block [`Table::locate`] would find, for `snapshot_seq`.
///
/// # Errors
/// `Corruption` from a malformed index entry.
pub(crate) fn locate_all<'a>(
    searches: &mut [Search],
    at: impl Fn(usize) -> (&'a Table, &'a [u8]),
    snapshot_seq: u64,
) -> Result<()> {
    // Kind Value (1) is the largest kind, so this trailer sorts at or
    // before every version with seq <= snapshot.
    let trailer = pack_trailer(snapshot_seq.min(MAX_SEQ), ValueKind::Value);
    if let [s] = searches {
        // One search has nothing to overlap with.
        let (t, key) = at(0);
        return t.inner.index.finish(s, key, trailer).map_err(|e| t.in_index(e));
    }
    while searches.iter().any(|s| !s.done()) {
        for (j, s) in searches.iter().enumerate() {
            at(j).0.inner.index.prefetch_slot(s);
        }
        for (j, s) in searches.iter().enumerate() {
            at(j).0.inner.index.prefetch_entry(s);
        }
        for (j, s) in searches.iter_mut().enumerate() {
            if !s.done() {
                let (t, key) = at(j);
                t.inner.index.step(s, key, trailer).map_err(|e| t.in_index(e))?;
            }
        }
    }
    Ok(())
}

/// The working buffers of [`Table::get_batch_into`]: the keys' hashes
/// under the table's seed, the filter's answers, and the blocks located.
#[derive(Debug, Default)]
pub struct BatchScratch {
    hashes: Vec<u64>,
    pub(crate) passed: Vec<bool>,
    /// The index searches of the keys that passed the filter.
    searches: Vec<Search>,
    /// Which keys those are.
    survivors: Vec<usize>,
    handles: Vec<Option<BlockHandle>>,
}

impl BatchScratch {
    /// Room for batches of `keys` keys.
    #[must_use]
    pub fn with_capacity(keys: usize) -> Self {
        BatchScratch {
            hashes: Vec::with_capacity(keys),
            passed: Vec::with_capacity(keys),
            searches: Vec::with_capacity(keys),
            survivors: Vec::with_capacity(keys),
            handles: Vec::with_capacity(keys),
        }
    }
}
