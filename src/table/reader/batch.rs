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
        let inner = &*self.inner;
        let BatchScratch { hashes, passed } = scratch;
        let answer = match &inner.filter {
            None => {
                passed.clear();
                passed.resize(keys.len(), true);
                FilterAnswer::NoFilter
            }
            Some(f) => {
                hashes.clear();
                hashes.extend(keys.iter().map(|&(key, hash)| hash.under(f.seed(), key)));
                f.may_contain_batch(hashes, passed);
                FilterAnswer::MayContain
            }
        };
        let trailer = pack_trailer(snapshot_seq.min(MAX_SEQ), ValueKind::Value);
        let mut last: Option<(BlockHandle, Block)> = None;
        out.reserve(keys.len());
        for (&(key, _), &pass) in keys.iter().zip(passed.iter()) {
            let filter = if pass { answer } else { FilterAnswer::Absent };
            let mut lookup = Lookup { entry: None, filter, blocks_read: 0, bytes_read: 0 };
            if pass {
                let found = inner
                    .index
                    .find(key, trailer)
                    .map_err(|e| e.at_file(&inner.path, inner.footer.index.offset))?;
                if let Some((_, handle)) = found {
                    let block = match last.take() {
                        Some((h, block)) if h == handle => block,
                        _ => {
                            lookup.blocks_read = 1;
                            lookup.bytes_read = handle.size_with_trailer();
                            self.read_block_uncounted(handle)?
                        }
                    };
                    lookup.entry = self.entry_in(&block, handle, key, snapshot_seq)?;
                    last = Some((handle, block));
                }
            }
            out.push(lookup);
        }
        Ok(())
    }
}

/// The working buffers of [`Table::get_batch_into`]: the keys' hashes
/// under the table's seed, and the filter's answers.
#[derive(Debug, Default)]
pub struct BatchScratch {
    hashes: Vec<u64>,
    passed: Vec<bool>,
}
