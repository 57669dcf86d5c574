//! A group of writes applied atomically, and its WAL payload encoding.
//!
//! A batch is one WAL record. Its ops take consecutive sequence numbers
//! starting at the batch's base sequence number, in the order they were added.
//!
//! ```text
//!   +-------------+-----------+-------+-------+-----+
//!   | base_seq    | count     | op 0  | op 1  | ... |
//!   | u64 LE      | u32 LE    |       |       |     |
//!   +-------------+-----------+-------+-------+-----+
//!   op (Value):     | kind=1 u8 | varint klen | key | varint vlen | value |
//!   op (Tombstone): | kind=0 u8 | varint klen | key |
//!   op (DeleteRange): | kind=2 u8 | varint slen | start | varint elen | end |
//! ```
//!
//! A range delete (database format 8 on) deletes every key `k` with
//! `start <= k < end` written before it; its start sorts strictly before
//! its end (checked when written and when decoded).
//!
//! The payload carries no checksum of its own: the WAL frame's crc32 covers
//! it. [`WriteBatch::decode`] nevertheless validates every length against the
//! buffer, the op count against the bytes left, and the sequence range
//! against [`MAX_SEQ`], so garbage is `Corruption`, never a panic or a huge
//! allocation.

use crate::codec::{Reader, put_length_prefixed};
use crate::key::{MAX_SEQ, SeqNo, ValueKind};
use crate::{Error, Result};

/// The op byte of a range delete, beside [`ValueKind`]'s 0 and 1 (which
/// tables store too; this one only the WAL does).
const DELETE_RANGE: u8 = 2;

/// Bytes before the first op: base sequence number and op count.
const HEADER_LEN: usize = 12;
/// The smallest op: a kind byte and a zero key length.
const MIN_OP_LEN: usize = 2;

/// One write in a [`WriteBatch`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchOp<'a> {
    /// Set `key` to `value`.
    Put {
        /// The user key.
        key: &'a [u8],
        /// The value.
        value: &'a [u8],
    },
    /// Remove `key`.
    Delete {
        /// The user key.
        key: &'a [u8],
    },
    /// Remove every key `k` with `start <= k < end`.
    DeleteRange {
        /// The first key removed.
        start: &'a [u8],
        /// The first key past the range (kept).
        end: &'a [u8],
    },
}

impl<'a> BatchOp<'a> {
    /// The key written (a range delete's start).
    #[must_use]
    pub fn key(&self) -> &'a [u8] {
        match *self {
            BatchOp::Put { key, .. } | BatchOp::Delete { key } => key,
            BatchOp::DeleteRange { start, .. } => start,
        }
    }

    /// Whether this writes a value or a tombstone (a range delete is one).
    #[must_use]
    pub fn kind(&self) -> ValueKind {
        match self {
            BatchOp::Put { .. } => ValueKind::Value,
            BatchOp::Delete { .. } | BatchOp::DeleteRange { .. } => ValueKind::Tombstone,
        }
    }

    /// The value written (empty for a delete and a range delete).
    #[must_use]
    pub fn value(&self) -> &'a [u8] {
        match *self {
            BatchOp::Put { value, .. } => value,
            BatchOp::Delete { .. } | BatchOp::DeleteRange { .. } => &[],
        }
    }
}

/// A group of puts and deletes that become visible together.
///
/// ```
/// use siftdb::{BatchOp, WriteBatch};
/// let mut batch = WriteBatch::new();
/// batch.put(b"apple", b"red");
/// batch.delete(b"pear");
/// assert_eq!(batch.len(), 2);
/// let bytes = batch.encode(100);
/// let (base_seq, decoded) = WriteBatch::decode(&bytes).unwrap();
/// assert_eq!(base_seq, 100);
/// assert_eq!(decoded, batch);
/// assert_eq!(decoded.iter().nth(1), Some(BatchOp::Delete { key: b"pear" }));
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct WriteBatch {
    /// The ops as the payload encodes them (everything after the header):
    /// a put copies its key and value once, into this one buffer, and the
    /// WAL record is the header and these bytes. Only [`WriteBatch::push`]
    /// and a validating [`WriteBatch::decode`] write it, so it always parses.
    ops: Vec<u8>,
    count: usize,
    payload_bytes: usize,
}

impl std::fmt::Debug for WriteBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl WriteBatch {
    /// An empty batch.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a write of `value` under `key`.
    pub fn put(&mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) {
        self.push(ValueKind::Value, key.as_ref(), value.as_ref());
    }

    /// Adds a deletion of `key`.
    pub fn delete(&mut self, key: impl AsRef<[u8]>) {
        self.push(ValueKind::Tombstone, key.as_ref(), &[]);
    }

    /// Adds a deletion of every key `k` with `start <= k < end`: one op,
    /// however many keys the range holds. It hides only what was written
    /// before it (a later put in the range is visible), and a snapshot
    /// taken before it still sees the keys.
    ///
    /// `start` must sort strictly before `end`; writing a batch where it
    /// does not is an `InvalidArgument` error (an empty range is a caller's
    /// mistake far more often than an intended no-op).
    pub fn delete_range(&mut self, start: impl AsRef<[u8]>, end: impl AsRef<[u8]>) {
        self.push_op(DELETE_RANGE, start.as_ref(), Some(end.as_ref()));
    }

    fn push(&mut self, kind: ValueKind, key: &[u8], value: &[u8]) {
        self.push_op(kind.as_u8(), key, (kind == ValueKind::Value).then_some(value));
    }

    fn push_op(&mut self, op: u8, key: &[u8], second: Option<&[u8]>) {
        let second_len = second.map_or(0, <[u8]>::len);
        self.payload_bytes += key.len() + second_len;
        self.count += 1;
        self.ops.reserve(1 + 10 + key.len() + second.map_or(0, |_| 10 + second_len));
        self.ops.push(op);
        put_length_prefixed(&mut self.ops, key);
        if let Some(second) = second {
            put_length_prefixed(&mut self.ops, second);
        }
    }

    /// Number of ops (and so of sequence numbers the batch consumes).
    #[must_use]
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether the batch holds no ops.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Removes every op.
    pub fn clear(&mut self) {
        self.ops.clear();
        self.count = 0;
        self.payload_bytes = 0;
    }

    /// Total bytes of keys and values, a cheap size estimate.
    #[must_use]
    pub fn payload_bytes(&self) -> usize {
        self.payload_bytes
    }

    /// The ops in the order they were added.
    #[must_use = "iterators are lazy"]
    pub fn iter(&self) -> impl ExactSizeIterator<Item = BatchOp<'_>> {
        Ops { rest: Reader::new(&self.ops), left: self.count }
    }

    /// Encodes the batch as a WAL payload whose ops take sequence numbers
    /// `base_seq`, `base_seq + 1`, ....
    #[must_use]
    pub fn encode(&self, base_seq: SeqNo) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_LEN + self.ops.len());
        self.encode_into(&mut out, base_seq);
        out
    }

    /// [`WriteBatch::encode`], appended to `out` (the WAL's reused buffer).
    #[expect(
        clippy::cast_possible_truncation,
        reason = "a batch of over 2^32 ops cannot fit the 1 GiB WAL record limit either; the WAL rejects it"
    )]
    pub(crate) fn encode_into(&self, out: &mut Vec<u8>, base_seq: SeqNo) {
        out.extend_from_slice(&base_seq.to_le_bytes());
        out.extend_from_slice(&(self.count as u32).to_le_bytes());
        out.extend_from_slice(&self.ops);
    }

    /// Decodes a payload written by [`WriteBatch::encode`], returning the base
    /// sequence number and the batch.
    ///
    /// # Errors
    /// `Corruption` (offsets relative to `bytes`) for truncated or trailing
    /// bytes, an unknown op kind, an op count the bytes cannot hold, or
    /// sequence numbers past 2^56 − 1.
    pub fn decode(bytes: &[u8]) -> Result<(SeqNo, WriteBatch)> {
        let mut r = Reader::new(bytes);
        let base_seq = r.u64()?;
        let count = r.u32()? as usize;
        if count > r.remaining() / MIN_OP_LEN {
            return Err(Error::corruption(
                8,
                format!("op count {count} exceeds what {} bytes hold", r.remaining()),
            ));
        }
        if count > 0 && base_seq.checked_add(count as u64 - 1).is_none_or(|last| last > MAX_SEQ) {
            return Err(Error::corruption(0, format!("{count} ops from sequence {base_seq} pass 2^56 - 1")));
        }
        let mut payload_bytes = 0;
        for _ in 0..count {
            let at = r.position() as u64;
            let op = r.u8()?;
            if op == DELETE_RANGE {
                let (start, end) = (r.length_prefixed()?, r.length_prefixed()?);
                if start >= end {
                    return Err(Error::corruption(
                        at,
                        "range delete whose start does not sort before its end",
                    ));
                }
                payload_bytes += start.len() + end.len();
                continue;
            }
            let kind = ValueKind::from_u8(op, at)?;
            payload_bytes += r.length_prefixed()?.len();
            if kind == ValueKind::Value {
                payload_bytes += r.length_prefixed()?.len();
            }
        }
        r.finish()?;
        // Every op parsed and nothing trails: the bytes are a valid op list.
        let ops = bytes.get(HEADER_LEN..).unwrap_or_default().to_vec();
        Ok((base_seq, WriteBatch { ops, count, payload_bytes }))
    }
}

/// The ops of a batch, parsed from its buffer as they are read.
struct Ops<'a> {
    rest: Reader<'a>,
    left: usize,
}

impl<'a> Iterator for Ops<'a> {
    type Item = BatchOp<'a>;

    fn next(&mut self) -> Option<BatchOp<'a>> {
        if self.left == 0 {
            return None;
        }
        // The buffer always parses (see `WriteBatch::ops`); were it ever
        // short, the iteration would end early rather than panic.
        let op = self.parse();
        self.left = if op.is_some() { self.left - 1 } else { 0 };
        op
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<'a> Ops<'a> {
    fn parse(&mut self) -> Option<BatchOp<'a>> {
        let kind = self.rest.u8().ok()?;
        let key = self.rest.length_prefixed().ok()?;
        if kind == ValueKind::Value.as_u8() {
            Some(BatchOp::Put { key, value: self.rest.length_prefixed().ok()? })
        } else if kind == DELETE_RANGE {
            Some(BatchOp::DeleteRange { start: key, end: self.rest.length_prefixed().ok()? })
        } else {
            Some(BatchOp::Delete { key })
        }
    }
}

impl ExactSizeIterator for Ops<'_> {}

#[cfg(test)]
mod tests;
