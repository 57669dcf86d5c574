//! An owned, ordered cursor over a table's entries, for range scans and
//! compaction.

use bytes::Bytes;

use super::block::BlockIter;
use super::internal_key::{MAX_SEQ, ValueKind, pack_trailer, parse_internal_key};
use super::reader::Table;
use crate::{Error, Result};

/// One entry of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableEntry {
    /// The user key.
    pub user_key: Bytes,
    /// Sequence number of the write.
    pub seq: u64,
    /// Value or tombstone.
    pub kind: ValueKind,
    /// The value (empty for a tombstone), zero-copy from the table file.
    pub value: Bytes,
}

/// Yields a table's entries in internal-key order (user key ascending, then
/// newest first), checking each data block's checksum as it is read.
///
/// After an error the iterator yields `None`; errors are never panics.
///
/// ```no_run
/// # fn demo(table: &siftdb::table::Table) -> siftdb::Result<()> {
/// let mut it = table.iter();
/// it.seek(b"m")?;
/// for entry in it.take(10) {
///     let e = entry?;
///     println!("{:?}@{} = {:?}", e.user_key, e.seq, e.value);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct TableIter {
    table: Table,
    cur: Option<BlockIter>,
    cur_offset: u64,
    next_block: usize,
    pending_error: Option<Error>,
    done: bool,
}

impl TableIter {
    /// A cursor before the table's first entry.
    #[must_use]
    pub fn new(table: Table) -> Self {
        TableIter { table, cur: None, cur_offset: 0, next_block: 0, pending_error: None, done: false }
    }

    /// Repositions before the first entry.
    pub fn seek_to_first(&mut self) {
        self.cur = None;
        self.next_block = 0;
        self.pending_error = None;
        self.done = false;
    }

    /// Positions at the newest version of the first user key at or after
    /// `user_key`.
    ///
    /// # Errors
    /// `Corruption` if a block is damaged.
    pub fn seek(&mut self, user_key: &[u8]) -> Result<()> {
        self.seek_internal(user_key, MAX_SEQ)
    }

    /// Positions at the first entry at or after the internal key
    /// `(user_key, seq)`: the newest version of `user_key` with sequence
    /// number at most `seq`, or else the next user key.
    ///
    /// # Errors
    /// `Corruption` if a block is damaged.
    pub fn seek_internal(&mut self, user_key: &[u8], seq: u64) -> Result<()> {
        self.seek_to_first();
        let trailer = pack_trailer(seq.min(MAX_SEQ), ValueKind::Value);
        let result = self.seek_inner(user_key, trailer);
        if result.is_err() {
            self.done = true;
        }
        result
    }

    fn seek_inner(&mut self, user_key: &[u8], trailer: u64) -> Result<()> {
        let found = self.table.index().find(user_key, trailer).map_err(|e| self.in_file(e, 0))?;
        let Some((i, handle)) = found else {
            self.next_block = self.table.index().len();
            return Ok(());
        };
        let mut it = self.table.read_data_block(handle)?.cursor();
        it.seek(user_key, trailer).map_err(|e| self.in_file(e, handle.offset))?;
        self.cur = Some(it);
        self.cur_offset = handle.offset;
        self.next_block = i + 1;
        Ok(())
    }

    fn in_file(&self, e: Error, base: u64) -> Error {
        e.at_file(self.table.path(), base)
    }

    fn load_next_block(&mut self) -> Result<bool> {
        if self.next_block >= self.table.index().len() {
            return Ok(false);
        }
        let (_, handle) = self.table.index().entry(self.next_block).map_err(|e| self.in_file(e, 0))?;
        let mut it = self.table.read_data_block(handle)?.cursor();
        it.seek_to_first().map_err(|e| self.in_file(e, handle.offset))?;
        self.cur = Some(it);
        self.cur_offset = handle.offset;
        self.next_block += 1;
        Ok(true)
    }

    fn step(&mut self) -> Result<Option<TableEntry>> {
        loop {
            if let Some(it) = self.cur.as_mut().filter(|it| it.valid()) {
                let (user, seq, kind) = parse_internal_key(it.key())?;
                let seq = self.table.global_seq().unwrap_or(seq);
                let entry =
                    TableEntry { user_key: Bytes::copy_from_slice(user), seq, kind, value: it.value() };
                if let Err(e) = it.advance() {
                    self.pending_error = Some(e);
                }
                return Ok(Some(entry));
            }
            if !self.load_next_block()? {
                return Ok(None);
            }
        }
    }
}

impl Iterator for TableIter {
    type Item = Result<TableEntry>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if let Some(e) = self.pending_error.take() {
            self.done = true;
            return Some(Err(self.in_file(e, self.cur_offset)));
        }
        match self.step() {
            Ok(Some(entry)) => Some(Ok(entry)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(self.in_file(e, self.cur_offset)))
            }
        }
    }
}
