//! Many keys looked up in one table at once (`Db::multi_get`): the filter
//! answers them all in one call (Ribbon checks the CPU's features once a
//! batch, [`crate::filter::Filter::contains_batch`]), then each survivor's
//! block is found in the index, and a data block that several keys fall
//! in is read (checked, decompressed) once for all of them.

use super::Table;
use super::super::block::Block;
use super::super::format::BlockHandle;
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
        // Every survivor's block located and its first lines requested
        // before any is read, so their memory waits overlap.
        scratch.handles.clear();
        for (&(key, _), &pass) in keys.iter().zip(&scratch.passed) {
            let filter = if pass { answer } else { FilterAnswer::Absent };
            out.push(Lookup { entry: None, filter, blocks_read: 0, bytes_read: 0 });
            let handle = if pass { self.locate(key, snapshot_seq)? } else { None };
            if let Some(h) = handle {
                self.prefetch_block(h);
            }
            scratch.handles.push(handle);
        }
        let mut last = None;
        for ((&(key, _), handle), lookup) in keys.iter().zip(&scratch.handles).zip(&mut out[start..]) {
            if let Some(h) = *handle {
                self.entry_at(h, key, snapshot_seq, &mut last, lookup)?;
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
        let inner = &*self.inner;
        // Kind Value (1) is the largest kind, so this trailer sorts at or
        // before every version with seq <= snapshot.
        let trailer = pack_trailer(snapshot_seq.min(MAX_SEQ), ValueKind::Value);
        let found = inner.index.find(user_key, trailer).map_err(|e| e.at_file(&inner.path, inner.footer.index.offset))?;
        Ok(found.map(|(_, handle)| handle))
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

/// The working buffers of [`Table::get_batch_into`]: the keys' hashes
/// under the table's seed, the filter's answers, and the blocks located.
#[derive(Debug, Default)]
pub struct BatchScratch {
    hashes: Vec<u64>,
    pub(crate) passed: Vec<bool>,
    handles: Vec<Option<BlockHandle>>,
}

impl BatchScratch {
    /// Room for batches of `keys` keys.
    #[must_use]
    pub fn with_capacity(keys: usize) -> Self {
        BatchScratch {
            hashes: Vec::with_capacity(keys),
            passed: Vec::with_capacity(keys),
            handles: Vec::with_capacity(keys),
        }
    }
}
