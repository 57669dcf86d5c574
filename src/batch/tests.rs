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

#[test]
fn range_delete_golden_bytes_and_accessors() {
    let mut b = WriteBatch::new();
    b.delete_range(b"a", b"c");
    let mut want = 7u64.to_le_bytes().to_vec();
    want.extend_from_slice(&1u32.to_le_bytes());
    want.extend_from_slice(&[DELETE_RANGE, 1, b'a', 1, b'c']);
    assert_eq!(b.encode(7), want);
    let op = b.iter().next().unwrap();
    assert_eq!(op, BatchOp::DeleteRange { start: b"a", end: b"c" });
    assert_eq!((op.key(), op.value(), op.kind()), (&b"a"[..], &b""[..], ValueKind::Tombstone));
    assert_eq!(b.payload_bytes(), 2);
    assert_eq!(WriteBatch::decode(&want).unwrap(), (7, b));
}

#[test]
fn a_decoded_range_delete_must_run_forwards() {
    for (start, end) in [(&b"c"[..], &b"a"[..]), (b"b", b"b"), (b"", b"")] {
        let mut bytes = 1u64.to_le_bytes().to_vec();
        bytes.extend_from_slice(&1u32.to_le_bytes());
        bytes.push(DELETE_RANGE);
        put_length_prefixed(&mut bytes, start);
        put_length_prefixed(&mut bytes, end);
        let err = WriteBatch::decode(&bytes).unwrap_err();
        assert!(err.is_corruption() && err.to_string().contains("start does not sort before"), "{err}");
    }
    // Truncated anywhere, a range delete is corruption too.
    let mut b = sample();
    b.delete_range(b"from", b"to");
    let bytes = b.encode(3);
    for len in 0..bytes.len() {
        assert!(WriteBatch::decode(&bytes[..len]).unwrap_err().is_corruption(), "cut at {len}");
    }
}

proptest! {
    #[test]
    fn range_deletes_round_trip_among_other_ops(
        ops in proptest::collection::vec(
            (0u8..3, proptest::collection::vec(any::<u8>(), 0..8), proptest::collection::vec(any::<u8>(), 0..8)),
            0..30),
    ) {
        let mut b = WriteBatch::new();
        let mut want = Vec::new();
        for (kind, x, y) in &ops {
            match kind {
                0 => { b.put(x, y); want.push(BatchOp::Put { key: x, value: y }); }
                1 => { b.delete(x); want.push(BatchOp::Delete { key: x }); }
                _ => {
                    // Decoding checks the order, so only forward ranges go in.
                    let (lo, hi) = if x < y { (x, y) } else { continue };
                    b.delete_range(lo, hi);
                    want.push(BatchOp::DeleteRange { start: lo, end: hi });
                }
            }
        }
        let (seq, decoded) = WriteBatch::decode(&b.encode(9)).unwrap();
        prop_assert_eq!(seq, 9);
        prop_assert_eq!(decoded.iter().collect::<Vec<_>>(), want);
        prop_assert_eq!(decoded, b);
    }
}
