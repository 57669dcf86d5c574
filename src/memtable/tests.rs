use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use proptest::prelude::*;

use super::*;

/// The model: for each key, its versions as (seq, kind, value).
type Model = BTreeMap<Vec<u8>, Vec<(SeqNo, ValueKind, Vec<u8>)>>;

fn model_get(model: &Model, key: &[u8], snapshot: SeqNo) -> Option<(ValueKind, Vec<u8>)> {
    let versions = model.get(key)?;
    versions.iter().filter(|v| v.0 <= snapshot).max_by_key(|v| v.0).map(|v| (v.1, v.2.clone()))
}

fn model_range(model: &Model, lo: Bound<&[u8]>, hi: Bound<&[u8]>, snapshot: SeqNo) -> Vec<(Vec<u8>, SeqNo)> {
    let mut out = Vec::new();
    for (k, versions) in model {
        let above = match lo {
            Bound::Included(b) => k.as_slice() >= b,
            Bound::Excluded(b) => k.as_slice() > b,
            Bound::Unbounded => true,
        };
        let below = match hi {
            Bound::Included(b) => k.as_slice() <= b,
            Bound::Excluded(b) => k.as_slice() < b,
            Bound::Unbounded => true,
        };
        if !(above && below) {
            continue;
        }
        let mut seqs: Vec<SeqNo> = versions.iter().map(|v| v.0).filter(|&s| s <= snapshot).collect();
        seqs.sort_unstable_by(|a, b| b.cmp(a));
        out.extend(seqs.into_iter().map(|s| (k.clone(), s)));
    }
    out
}

/// Short keys, and keys of 6 to 10 bytes over two byte values: these share
/// their 8-byte inline prefix often and straddle its end, so the set's
/// prefix shortcut and its tie fallback both decide orders.
fn key_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![proptest::collection::vec(0u8..4, 0..3), proptest::collection::vec(0u8..2, 6..11)]
}

fn bound_strategy() -> impl Strategy<Value = Bound<Vec<u8>>> {
    prop_oneof![
        Just(Bound::Unbounded),
        key_strategy().prop_map(Bound::Included),
        key_strategy().prop_map(Bound::Excluded),
    ]
}

fn as_slice(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match b {
        Bound::Included(k) => Bound::Included(k.as_slice()),
        Bound::Excluded(k) => Bound::Excluded(k.as_slice()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

proptest! {
    #[test]
    fn the_inline_prefix_orders_as_the_keys_do(
        a in proptest::collection::vec(prop_oneof![Just(0u8), Just(1), Just(0xff)], 0..12),
        b in proptest::collection::vec(prop_oneof![Just(0u8), Just(1), Just(0xff)], 0..12),
    ) {
        let (pa, pb) = (super::key_prefix(&a), super::key_prefix(&b));
        if pa != pb {
            prop_assert_eq!(pa.cmp(&pb), a.cmp(&b));
        }
        let (ka, kb) = (Probe { prefix: pa, key: &a, seq: 5 }, Probe { prefix: pb, key: &b, seq: 7 });
        prop_assert_eq!(super::compare(&ka, &kb), crate::key::compare_internal(&a, 5, &b, 7));
    }

    #[test]
    fn matches_a_model_at_every_snapshot(
        ops in proptest::collection::vec((key_strategy(), any::<bool>(), proptest::collection::vec(any::<u8>(), 0..4)), 0..200),
        lo in bound_strategy(),
        hi in bound_strategy(),
        chunk in 1usize..8,
        growth in 0u32..4,
        ends in proptest::collection::vec(any::<bool>(), 0..64),
    ) {
        let m = Arc::new(Memtable::new());
        let mut model = Model::new();
        let mut bytes = 0;
        for (i, (k, put, v)) in ops.iter().enumerate() {
            let seq = i as u64 + 1;
            let (kind, v) = if *put { (ValueKind::Value, v.clone()) } else { (ValueKind::Tombstone, Vec::new()) };
            m.insert(k, seq, kind, &v).unwrap();
            bytes += k.len() + v.len() + ENTRY_OVERHEAD;
            model.entry(k.clone()).or_default().push((seq, kind, v));
        }
        prop_assert_eq!(m.len(), ops.len());
        prop_assert_eq!(m.approximate_bytes(), bytes);
        let n = ops.len() as u64;
        for snapshot in [0, n / 3, n / 2, n, MAX_SEQ] {
            for k in model.keys().chain([vec![9u8]].iter()) {
                let got = m.get(k, snapshot).map(|(kind, v)| (kind, v.to_vec()));
                prop_assert_eq!(got, model_get(&model, k, snapshot));
            }
            let (l, h) = (as_slice(&lo), as_slice(&hi));
            let got: Vec<(Vec<u8>, SeqNo)> =
                m.range(l, h, snapshot).with_chunks(chunk, chunk << growth).map(|e| (e.user_key.to_vec(), e.seq)).collect();
            let want = model_range(&model, l, h, snapshot);
            prop_assert_eq!(&got, &want);
            // Newest only: each key's first version of those.
            let newest: Vec<(Vec<u8>, SeqNo)> = m
                .range(l, h, snapshot)
                .with_chunks(chunk, chunk << growth)
                .newest_only()
                .map(|e| (e.user_key.to_vec(), e.seq))
                .collect();
            let mut want_newest = want.clone();
            want_newest.dedup_by(|later, first| later.0 == first.0);
            prop_assert_eq!(&newest, &want_newest);
            // And from the back, where a key's versions come oldest first.
            let newest_back: Vec<(Vec<u8>, SeqNo)> = m
                .range(l, h, snapshot)
                .with_chunks(chunk, chunk << growth)
                .newest_only()
                .rev()
                .map(|e| (e.user_key.to_vec(), e.seq))
                .collect();
            prop_assert_eq!(newest_back, want_newest.iter().rev().cloned().collect::<Vec<_>>());
            // Backwards: the same entries in reverse internal-key order.
            let back: Vec<(Vec<u8>, SeqNo)> =
                m.range(l, h, snapshot).with_chunks(chunk, chunk << growth).rev().map(|e| (e.user_key.to_vec(), e.seq)).collect();
            prop_assert_eq!(back, want.iter().rev().cloned().collect::<Vec<_>>());
            // Both ends mixed meet in the middle: each entry once, the front
            // ones in order, the back ones in reverse.
            let mut it = m.range(l, h, snapshot).with_chunks(chunk, chunk << growth);
            let (mut front, mut rear) = (Vec::new(), Vec::new());
            for &from_front in ends.iter().chain(std::iter::repeat(&true)) {
                let e = if from_front { it.next() } else { it.next_back() };
                let Some(e) = e else { break };
                if from_front { front.push((e.user_key.to_vec(), e.seq)) } else { rear.push((e.user_key.to_vec(), e.seq)) }
            }
            prop_assert!(it.next().is_none() && it.next_back().is_none());
            front.extend(rear.into_iter().rev());
            prop_assert_eq!(front, want);
        }
    }
}

#[test]
fn batches_take_consecutive_sequence_numbers() {
    let m = Memtable::new();
    let mut b = WriteBatch::new();
    b.put(b"a", b"1");
    b.put(b"a", b"2");
    b.delete(b"b");
    m.apply_batch(10, &b).unwrap();
    assert_eq!(m.get(b"a", 10).unwrap(), (ValueKind::Value, Bytes::from_static(b"1")));
    assert_eq!(m.get(b"a", 11).unwrap(), (ValueKind::Value, Bytes::from_static(b"2")));
    assert_eq!(m.get(b"b", 12).unwrap().0, ValueKind::Tombstone);
    assert_eq!(m.get(b"b", 11), None);
    assert!(m.apply_batch(MAX_SEQ - 1, &b).is_err());
    assert!(m.insert(b"x", MAX_SEQ + 1, ValueKind::Value, b"").is_err());
    assert_eq!(m.len(), 3);
}

#[test]
fn reinserting_a_version_replaces_it_and_charges_both() {
    let m = Memtable::new();
    m.insert(b"k", 1, ValueKind::Value, b"long value").unwrap();
    m.insert(b"k", 1, ValueKind::Value, b"v").unwrap();
    assert_eq!(m.len(), 1);
    // The first one's bytes stay in its arena chunk until the memtable goes.
    assert_eq!(m.approximate_bytes(), 11 + 2 + 2 * ENTRY_OVERHEAD);
    assert_eq!(m.get(b"k", 1).unwrap().1.as_ref(), b"v");
}

#[test]
fn readers_run_while_one_thread_writes() {
    const WRITES: u64 = 20_000;
    let m = Arc::new(Memtable::new());
    let published = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let key = |i: u64| format!("key{:05}", i % 5_000).into_bytes();

    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (m, published, done) = (Arc::clone(&m), Arc::clone(&published), Arc::clone(&done));
            std::thread::spawn(move || {
                let mut checks = 0u64;
                while !done.load(Ordering::Acquire) || checks == 0 {
                    let snap = published.load(Ordering::Acquire);
                    if snap > 0 {
                        // The newest write visible at the snapshot holds its own seq.
                        let (kind, v) = m.get(&key(snap), snap).unwrap();
                        assert_eq!((kind, v.as_ref()), (ValueKind::Value, snap.to_le_bytes().as_slice()));
                    }
                    // A scan at the snapshot is sorted and sees exactly min(snap, 5000) keys' newest versions.
                    let mut prev: Option<MemEntry> = None;
                    let mut newest = 0;
                    for e in m.range(Bound::Unbounded, Bound::Unbounded, snap) {
                        assert!(e.seq <= snap);
                        if let Some(p) = &prev {
                            assert!(compare_internal(&p.user_key, p.seq, &e.user_key, e.seq).is_lt());
                            newest += usize::from(p.user_key != e.user_key);
                        } else {
                            newest = 1;
                        }
                        prev = Some(e);
                    }
                    assert_eq!(newest as u64, snap.min(5_000));
                    checks += 1;
                }
                checks
            })
        })
        .collect();

    for seq in 1..=WRITES {
        m.insert(&key(seq), seq, ValueKind::Value, &seq.to_le_bytes()).unwrap();
        published.store(seq, Ordering::Release);
    }
    done.store(true, Ordering::Release);
    for r in readers {
        assert!(r.join().unwrap() > 0);
    }
    assert_eq!(m.len() as u64, WRITES);
}

#[test]
fn replaying_a_torn_wal_rebuilds_exactly_the_complete_batches() {
    use crate::wal::{RecordType, RecoveryMode, FrameReader, encode_record};
    let mut batches = Vec::new();
    let mut log = Vec::new();
    let mut ends = Vec::new();
    let mut seq = 1;
    for i in 0..3u8 {
        let mut b = WriteBatch::new();
        b.put([i], [i; 3]);
        b.put(b"shared", [i]);
        if i == 2 {
            b.delete(b"shared");
        }
        log.extend(encode_record(RecordType::Batch, &b.encode(seq)).unwrap());
        ends.push(log.len());
        seq += b.len() as u64;
        batches.push(b);
    }
    for cut in 0..=log.len() {
        let replayed = Memtable::new();
        let mut reader = FrameReader::new(&log[..cut], RecordType::Batch, RecoveryMode::default());
        for r in reader.by_ref() {
            let (base, batch) = WriteBatch::decode(r.unwrap().payload).unwrap();
            replayed.apply_batch(base, &batch).unwrap();
        }
        let expected = Memtable::new();
        let mut seq = 1;
        for b in batches.iter().take(ends.iter().filter(|&&e| e <= cut).count()) {
            expected.apply_batch(seq, b).unwrap();
            seq += b.len() as u64;
        }
        let all = |m: Memtable| -> Vec<MemEntry> {
            Arc::new(m).range(Bound::Unbounded, Bound::Unbounded, MAX_SEQ).collect()
        };
        assert_eq!(all(replayed), all(expected), "cut at {cut}");
    }
}

#[test]
fn range_tombstones_sit_beside_the_entries_and_count() {
    let m = Memtable::new();
    assert!(m.range_dels().is_none(), "a memtable without one answers without building a set");
    m.delete_range(b"b", b"d", 5).unwrap();
    assert!(!m.unwritten() && !m.is_empty() && m.len() == 1, "a range delete alone is something to flush");
    assert_eq!(m.approximate_bytes(), 2 + ENTRY_OVERHEAD);
    let first = m.range_dels().unwrap();
    assert_eq!(first.covering(b"c", 9), Some(5));
    assert!(Arc::ptr_eq(&first, &m.range_dels().unwrap()), "the set is built once per change");
    let mut batch = WriteBatch::new();
    batch.put(b"c", b"v");
    batch.delete_range(b"c", b"e");
    m.apply_batch(7, &batch).unwrap();
    let second = m.range_dels().unwrap();
    assert_eq!((second.len(), second.covering(b"c", 9), second.covering(b"d", 8)), (2, Some(8), Some(8)));
    assert_eq!(second.covering(b"d", 7), None, "d is past the first range, and 7 does not see the second");
    assert_eq!(m.range_del_count(), 2);
    // The put at 7 is older than the batch's own range delete at 8.
    assert_eq!(m.get_version(b"c", 9).map(|(s, k, _)| (s, k)), Some((7, ValueKind::Value)));
    assert!(m.delete_range(b"x", b"x", 9).is_err());
    assert!(m.delete_range(b"a", b"b", MAX_SEQ + 1).is_err());
}

#[test]
fn a_version_is_a_16_byte_key_over_its_arena_bytes() {
    // The set's node density is what ENTRY_OVERHEAD charges for.
    assert_eq!(std::mem::size_of::<MemKey>(), 16);
    let m = Memtable::new();
    m.insert(b"key", 3, ValueKind::Tombstone, b"").unwrap();
    m.insert(b"key", 2, ValueKind::Value, b"value").unwrap();
    let map = m.read_map();
    let [newest, older] = [map.set.first().unwrap(), map.set.last().unwrap()];
    assert_eq!((newest.user_key(), newest.seq(), newest.kind(), newest.value_slice()), (&b"key"[..], 3, ValueKind::Tombstone, &b""[..]));
    assert_eq!((older.user_key(), older.seq(), older.kind(), older.value_slice()), (&b"key"[..], 2, ValueKind::Value, &b"value"[..]));
    // Both sit in one chunk, one after the other.
    assert_eq!(older.addr(), newest.addr() + arena::HEADER + 3, "inserted oldest last");
    assert_eq!(map.arena.chunks(), 1);
}

#[test]
fn versions_span_chunks_and_a_large_one_gets_its_own() {
    let m = Arc::new(Memtable::new());
    let value = |i: u32| vec![(i % 251) as u8; if i == 500 { 3 * Arena::CHUNK } else { 100 + i as usize % 7 }];
    for i in 0..1000u32 {
        m.insert(&i.to_be_bytes(), u64::from(i) + 1, ValueKind::Value, &value(i)).unwrap();
    }
    let check = |what: &str| {
        for i in 0..1000u32 {
            assert_eq!(m.get(&i.to_be_bytes(), MAX_SEQ).unwrap().1, value(i), "{what}: key {i}");
        }
        let all: Vec<MemEntry> = m.range(Bound::Unbounded, Bound::Unbounded, MAX_SEQ).collect();
        assert_eq!(all.len(), 1000, "{what}");
        for (i, e) in (0..1000u32).zip(&all) {
            assert_eq!((e.user_key.as_ref(), e.seq, e.value.as_ref()), (&i.to_be_bytes()[..], u64::from(i) + 1, &value(i)[..]), "{what}");
        }
    };
    check("written");
    // About 110 KiB of small versions in 32 KiB chunks, the large one in
    // a chunk of its own between them.
    assert_eq!(m.read_map().arena.chunks(), 5);
    // Values handed out outlive the memtable: a sealed chunk's are slices
    // that keep it alive, the open chunk's are copies.
    let (early, late) = (m.get(&1u32.to_be_bytes(), MAX_SEQ).unwrap().1, m.get(&999u32.to_be_bytes(), MAX_SEQ).unwrap().1);
    let big = m.get(&500u32.to_be_bytes(), MAX_SEQ).unwrap().1;
    check("read again");
    drop(m);
    assert_eq!((early.to_vec(), late.to_vec(), big.to_vec()), (value(1), value(999), value(500)));
}
