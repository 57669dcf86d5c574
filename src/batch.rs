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
//! ```
//!
//! The payload carries no checksum of its own: the WAL frame's crc32 covers
//! it. [`WriteBatch::decode`] nevertheless validates every length against the
//! buffer, the op count against the bytes left, and the sequence range
//! against [`MAX_SEQ`], so garbage is `Corruption`, never a panic or a huge
//! allocation.

use crate::codec::{Reader, put_length_prefixed};
use crate::key::{MAX_SEQ, SeqNo, ValueKind};
use crate::{Error, Result};

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
}

impl<'a> BatchOp<'a> {
    /// The key written.
    #[must_use]
    pub fn key(&self) -> &'a [u8] {
        match *self {
            BatchOp::Put { key, .. } | BatchOp::Delete { key } => key,
        }
    }

    /// Whether this writes a value or a tombstone.
    #[must_use]
    pub fn kind(&self) -> ValueKind {
        match self {
            BatchOp::Put { .. } => ValueKind::Value,
            BatchOp::Delete { .. } => ValueKind::Tombstone,
        }
    }

    /// The value written (empty for a delete).
    #[must_use]
    pub fn value(&self) -> &'a [u8] {
        match *self {
            BatchOp::Put { value, .. } => value,
            BatchOp::Delete { .. } => &[],
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

    fn push(&mut self, kind: ValueKind, key: &[u8], value: &[u8]) {
        self.payload_bytes += key.len() + value.len();
        self.count += 1;
        self.ops.reserve(1 + 10 + key.len() + if kind == ValueKind::Value { 10 + value.len() } else { 0 });
        self.ops.push(kind.as_u8());
        put_length_prefixed(&mut self.ops, key);
        if kind == ValueKind::Value {
            put_length_prefixed(&mut self.ops, value);
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
            let kind = ValueKind::from_u8(r.u8()?, at)?;
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
        } else {
            Some(BatchOp::Delete { key })
        }
    }
}

impl ExactSizeIterator for Ops<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wal::{FrameReader, RecordType, RecoveryMode, encode_record};
    use proptest::prelude::*;

    fn sample() -> WriteBatch {
        let mut b = WriteBatch::new();
        b.put(b"k1", b"v1");
        b.delete(b"gone");
        b.put(b"", b"empty key");
        b.put(b"k2", b"");
        b
    }

    #[test]
    fn golden_bytes() {
        let mut b = WriteBatch::new();
        b.put(b"a", b"xy");
        b.delete(b"b");
        let mut want = 7u64.to_le_bytes().to_vec();
        want.extend_from_slice(&2u32.to_le_bytes());
        want.extend_from_slice(&[1, 1, b'a', 2, b'x', b'y', 0, 1, b'b']);
        assert_eq!(b.encode(7), want);
    }

    #[test]
    fn clear_and_accessors() {
        let mut b = sample();
        assert_eq!(b.len(), 4);
        assert_eq!(b.payload_bytes(), 2 + 2 + 4 + 9 + 2);
        let kinds: Vec<_> = b.iter().map(|op| op.kind()).collect();
        assert_eq!(kinds, [ValueKind::Value, ValueKind::Tombstone, ValueKind::Value, ValueKind::Value]);
        assert_eq!(b.iter().nth(1).unwrap().value(), b"");
        b.clear();
        assert!(b.is_empty());
        assert_eq!(b.payload_bytes(), 0);
        assert_eq!(WriteBatch::decode(&b.encode(3)).unwrap(), (3, WriteBatch::new()));
    }

    #[test]
    fn every_truncation_is_corruption() {
        let bytes = sample().encode(42);
        for len in 0..bytes.len() {
            assert!(WriteBatch::decode(&bytes[..len]).unwrap_err().is_corruption(), "cut at {len}");
        }
        let mut long = bytes.clone();
        long.push(0);
        assert!(WriteBatch::decode(&long).unwrap_err().is_corruption());
    }

    #[test]
    fn every_flip_is_caught_by_the_wal_frame_and_never_panics_bare() {
        let batch = sample();
        let bytes = batch.encode(42);
        let record = encode_record(RecordType::Batch, &bytes).unwrap();
        for i in 0..bytes.len() {
            for bit in 0..8 {
                let mut bad = bytes.clone();
                bad[i] ^= 1 << bit;
                // Bare, a flip may decode to another valid batch (only the
                // frame's crc can tell), but it never panics, and as decode
                // consumed every byte a re-encoding is never longer.
                if let Ok((seq, b)) = WriteBatch::decode(&bad) {
                    assert!(b.encode(seq).len() <= bad.len());
                }
                // Framed, the same flip never yields a record: the record is
                // complete, so the reader reports corruption.
                let mut framed = record.clone();
                framed[crate::wal::HEADER_LEN + i] ^= 1 << bit;
                let mut reader = FrameReader::new(&framed, RecordType::Batch, RecoveryMode::default());
                assert!(matches!(reader.next(), Some(Err(e)) if e.is_corruption()));
                assert!(reader.next().is_none());
            }
        }
    }

    #[test]
    fn absurd_counts_and_sequence_overflow_are_corruption() {
        let mut bytes = 0u64.to_le_bytes().to_vec();
        bytes.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(WriteBatch::decode(&bytes).unwrap_err().is_corruption());
        let b = sample();
        assert!(WriteBatch::decode(&b.encode(MAX_SEQ)).unwrap_err().is_corruption());
        assert!(WriteBatch::decode(&b.encode(MAX_SEQ - 3)).is_ok());
        let mut bad_kind = b.encode(1);
        bad_kind[HEADER_LEN] = 9;
        assert!(WriteBatch::decode(&bad_kind).unwrap_err().is_corruption());
    }

    proptest! {
        #[test]
        fn round_trip(
            ops in proptest::collection::vec(
                (any::<bool>(), proptest::collection::vec(any::<u8>(), 0..20),
                 proptest::collection::vec(any::<u8>(), 0..300)),
                0..40),
            base in 0..=MAX_SEQ - 64,
        ) {
            let mut b = WriteBatch::new();
            for (put, k, v) in &ops {
                if *put { b.put(k, v) } else { b.delete(k) }
            }
            let (seq, decoded) = WriteBatch::decode(&b.encode(base)).unwrap();
            prop_assert_eq!(seq, base);
            prop_assert_eq!(decoded.len(), ops.len());
            for (op, (put, k, v)) in decoded.iter().zip(&ops) {
                prop_assert_eq!(op.key(), k.as_slice());
                if *put {
                    prop_assert_eq!(op, BatchOp::Put { key: k, value: v });
                } else {
                    prop_assert_eq!(op, BatchOp::Delete { key: k });
                }
            }
            prop_assert_eq!(decoded, b);
        }
    }
}
