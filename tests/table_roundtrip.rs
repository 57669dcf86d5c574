//! Round trips through TableBuilder and Table for every filter kind.

mod table_common;

use std::collections::HashMap;

use siftdb::Error;
use siftdb::ValueKind;
use siftdb::filter::{FilterKind, KeyHash};
use siftdb::fs::StdFs;
use siftdb::table::{Entry, FilterAnswer, FilterStatus, Table, TableBuilder, TableOptions};
use table_common::{Row, absent_key, build, build_with, key, kinds, opts, rows, table_path};

/// The rows of each key, newest first.
fn by_key(rows: &[Row]) -> HashMap<Vec<u8>, Vec<Row>> {
    let mut m: HashMap<Vec<u8>, Vec<Row>> = HashMap::new();
    for r in rows {
        m.entry(r.key.clone()).or_default().push(r.clone());
    }
    m
}

fn expected_at(rows: &HashMap<Vec<u8>, Vec<Row>>, k: &[u8], snapshot: u64) -> Option<Entry> {
    rows.get(k)?.iter().filter(|r| r.seq <= snapshot).max_by_key(|r| r.seq).map(|r| match r.kind {
        ValueKind::Value => Entry::Value { seq: r.seq, value: r.value.clone().into() },
        ValueKind::Tombstone => Entry::Tombstone { seq: r.seq },
    })
}

fn check_round_trip(n: u64, filter: FilterKind) {
    let dir = tempfile::tempdir().unwrap();
    let path = table_path(&dir, "t.sst");
    let rows = rows(n);
    let meta = build(&path, filter, &rows);
    let versions = by_key(&rows);
    assert_eq!(meta.entries, rows.len() as u64);
    assert_eq!(meta.smallest, rows.first().map(|r| r.key.clone()).unwrap_or_default());
    assert_eq!(meta.largest, rows.last().map(|r| r.key.clone()).unwrap_or_default());
    assert_eq!(std::fs::metadata(&path).unwrap().len(), meta.file_size);
    let table = Table::open(&StdFs, &path).unwrap();
    assert_eq!(table.properties().entries, rows.len() as u64);
    assert_eq!(table.properties().distinct_keys, n);
    assert!(!table.filter_dropped());

    // Every present key, at the latest snapshot, through the filter.
    for i in 0..n {
        let k = key(i);
        let got = table.get(&k, u64::MAX).unwrap();
        assert_eq!(got.entry, expected_at(&versions, &k, u64::MAX), "key {i} with {filter}");
        assert_ne!(got.filter, FilterAnswer::Absent, "false negative for key {i} with {filter}");
        assert_eq!(table.filter_answer(&k), got.filter, "filter_answer agrees with get");
        assert_eq!(got.blocks_read, 1);
    }
    // Absent keys: never found, and the filter's "absent" costs no block.
    let mut negatives = 0;
    for i in 0..n.min(20_000) {
        let got = table.get(&absent_key(i), u64::MAX).unwrap();
        assert_eq!(got.entry, None);
        assert_eq!(table.filter_answer(&absent_key(i)), got.filter);
        if got.filter == FilterAnswer::Absent {
            negatives += 1;
            assert_eq!((got.blocks_read, got.bytes_read), (0, 0));
        }
    }
    if meta.filter != FilterKind::None && n >= 1000 {
        assert!(negatives * 10 > n.min(20_000) * 9, "{filter}: only {negatives} negatives");
    }
    // Lookups report their cost in each `Lookup` and count nothing in the
    // table: its counters are its iterators' alone.
    assert_eq!(table.counters().data_blocks_read, 0);
    // A hash computed once by the caller answers as the table's own does,
    // under the table's seed or (hashed again) under another.
    let seed = table.filter_details().header.map_or(0, |h| h.seed);
    for i in 0..n.min(2000) {
        for k in [key(i), absent_key(i)] {
            let own = table.filter_answer(&k);
            assert_eq!(table.filter_answer_hashed(&k, KeyHash::new(seed, &k)), own);
            assert_eq!(table.filter_answer_hashed(&k, KeyHash::new(seed ^ 1, &k)), own);
            assert_eq!(
                table.get_hashed(&k, KeyHash::new(seed, &k), u64::MAX).unwrap(),
                table.get(&k, u64::MAX).unwrap()
            );
        }
    }

    // Snapshots: every version of multi-version keys.
    for i in (0..n).step_by(7).take(200) {
        let k = key(i);
        for snap in [0, i + 99, i + 100, i + 150, i + 200, i + 250, i + 300, i + 301] {
            assert_eq!(
                table.get(&k, snap).unwrap().entry,
                expected_at(&versions, &k, snap),
                "key {i} at {snap}"
            );
        }
    }

    // Full scan matches the input exactly.
    let scanned: Vec<Row> = table
        .iter()
        .map(|e| {
            let e = e.unwrap();
            Row { key: e.user_key.to_vec(), seq: e.seq, kind: e.kind, value: e.value.to_vec() }
        })
        .collect();
    assert_eq!(scanned, rows);

    // Seek to present and absent keys lands on the right entry.
    for i in (0..n).step_by(97) {
        let mut it = table.iter();
        it.seek(&absent_key(i)).unwrap();
        let next = it.next().transpose().unwrap();
        assert_eq!(next.map(|e| e.user_key.to_vec()), (i + 1 < n).then(|| key(i + 1)));
        it.seek(&key(i)).unwrap();
        let e = it.next().unwrap().unwrap();
        assert_eq!((e.user_key.to_vec(), Some(e.seq)), (key(i), versions[&key(i)].first().map(|r| r.seq)));
    }
}

#[test]
fn empty_table_round_trips_with_every_filter() {
    for k in kinds() {
        check_round_trip(0, k);
    }
}

#[test]
fn one_entry_round_trips_with_every_filter() {
    for k in kinds() {
        check_round_trip(1, k);
    }
}

#[test]
fn hundred_thousand_keys_round_trip_with_every_filter() {
    for k in kinds() {
        check_round_trip(100_000, k);
    }
}

#[test]
fn seek_internal_respects_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let path = table_path(&dir, "t.sst");
    let rows = rows(50);
    build(&path, FilterKind::None, &rows);
    let table = Table::open_path(&path).unwrap();
    let mut it = table.iter();
    it.seek_internal(&key(7), 250).unwrap();
    let e = it.next().unwrap().unwrap();
    assert_eq!((e.user_key.to_vec(), e.seq), (key(7), 207));
    let e = it.next().unwrap().unwrap();
    assert_eq!((e.user_key.to_vec(), e.seq), (key(7), 107));
    // Below every version of key 7: lands on key 8.
    it.seek_internal(&key(7), 5).unwrap();
    assert_eq!(it.next().unwrap().unwrap().user_key.to_vec(), key(8));
}

#[test]
fn out_of_order_adds_are_invalid_arguments_and_leave_the_builder_usable() {
    let dir = tempfile::tempdir().unwrap();
    let path = table_path(&dir, "t.sst");
    let mut b = TableBuilder::create(&path, opts(FilterKind::None)).unwrap();
    b.add(b"b", 5, ValueKind::Value, b"1").unwrap();
    assert!(matches!(b.add(b"a", 9, ValueKind::Value, b"x"), Err(Error::InvalidArgument(_))));
    // Same key, newer seq must come first: an older-first order is rejected.
    assert!(matches!(b.add(b"b", 6, ValueKind::Value, b"x"), Err(Error::InvalidArgument(_))));
    // An exact duplicate is rejected too.
    assert!(matches!(b.add(b"b", 5, ValueKind::Value, b"x"), Err(Error::InvalidArgument(_))));
    assert!(matches!(b.add(b"c", 1 << 56, ValueKind::Value, b"x"), Err(Error::InvalidArgument(_))));
    b.add(b"b", 4, ValueKind::Tombstone, b"").unwrap();
    b.add(b"c", 1, ValueKind::Value, b"3").unwrap();
    let meta = b.finish().unwrap();
    assert_eq!(meta.entries, 3);
    let t = Table::open_path(&path).unwrap();
    assert_eq!(t.get(b"b", 100).unwrap().entry, Some(Entry::Value { seq: 5, value: "1".into() }));
    assert_eq!(t.get(b"a", 100).unwrap().entry, None);
}

#[test]
fn properties_record_what_was_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = table_path(&dir, "t.sst");
    let rows = rows(1000);
    let o = TableOptions { level: 3, ..opts(FilterKind::None) };
    let meta = build_with(&path, o, &rows);
    let t = Table::open_path(&path).unwrap();
    let p = t.properties();
    assert_eq!(p.entries, rows.len() as u64);
    assert_eq!(p.distinct_keys, 1000);
    assert_eq!(p.tombstones, rows.iter().filter(|r| r.kind == ValueKind::Tombstone).count() as u64);
    assert_eq!(p.min_seq, rows.iter().map(|r| r.seq).min().unwrap());
    assert_eq!(p.max_seq, rows.iter().map(|r| r.seq).max().unwrap());
    assert_eq!(p.level, 3);
    assert_eq!(p.filter_kind, "none");
    assert!(p.created_unix_secs > 1_600_000_000);
    let handles = t.data_block_handles().unwrap();
    assert_eq!(handles.len() as u64, p.data_blocks);
    assert!(handles.len() > 10, "512-byte blocks should split 1000 keys");
    assert_eq!(handles.iter().map(|h| h.size_with_trailer()).sum::<u64>(), p.data_bytes);
    assert_eq!(t.filter_details().status, FilterStatus::None);
    assert_eq!(meta.filter_bytes, 0);
    // Each data block stays near its target size.
    assert!(handles.iter().all(|h| h.size < 512 + 64), "{handles:?}");
}

#[test]
fn golden_bytes_of_a_one_entry_table() {
    let dir = tempfile::tempdir().unwrap();
    let path = table_path(&dir, "t.sst");
    let rows = vec![Row { key: b"k".to_vec(), seq: 1, kind: ValueKind::Value, value: b"v".to_vec() }];
    build(&path, FilterKind::None, &rows);
    let file = std::fs::read(&path).unwrap();
    let data: &[u8] = &[
        0, 9, 1, // shared, unshared, value len
        b'k', 0x01, 0x01, 0, 0, 0, 0, 0, 0,    // "k" + trailer (1 << 8 | 1) LE
        b'v', // value
        0, 0, 0, 0, // restart 0 at offset 0
        1, 0, 0, 0, // one restart
    ];
    assert_eq!(&file[..data.len()], data);
    let mut crc = crc32fast::Hasher::new();
    crc.update(data);
    crc.update(&[1]);
    assert_eq!(file[data.len()], 1, "data block type");
    assert_eq!(file[data.len() + 1..data.len() + 5], crc.finalize().to_le_bytes());
    let tail = &file[file.len() - 56..];
    // Index handle follows the data block; the filter handle is null.
    assert_eq!(u64::from_le_bytes(tail[..8].try_into().unwrap()), (data.len() + 5) as u64);
    assert_eq!(tail[12..24], [0u8; 12]);
    assert_eq!(u32::from_le_bytes(tail[36..40].try_into().unwrap()), 1, "format version");
    assert_eq!(u64::from_le_bytes(tail[48..].try_into().unwrap()), 0x5349_4654_5353_5401, "magic");
}

#[test]
fn tables_are_send_sync_and_clones_share_counters() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Table>();
    let dir = tempfile::tempdir().unwrap();
    let path = table_path(&dir, "t.sst");
    build(&path, FilterKind::None, &rows(100));
    let t = Table::open_path(&path).unwrap();
    let t2 = t.clone();
    let blocks = t.data_block_handles().unwrap().len() as u64;
    std::thread::spawn(move || {
        for i in 0..100 {
            assert!(t2.get(&key(i), u64::MAX).unwrap().entry.is_some());
        }
        assert_eq!(t2.iter().count() as u64, t2.properties().entries);
    })
    .join()
    .unwrap();
    // The scan's blocks, counted in the shared counters; the gets report theirs in each Lookup.
    assert_eq!(t.counters().data_blocks_read, blocks);
}

/// Rewrites the filter block of `file` through `edit`, fixing its crc.
fn rewrite_filter(file: &mut [u8], edit: impl Fn(&mut [u8])) {
    let n = file.len();
    let footer = &file[n - 56..];
    let off = u64::from_le_bytes(footer[12..20].try_into().unwrap()) as usize;
    let size = u32::from_le_bytes(footer[20..24].try_into().unwrap()) as usize;
    edit(&mut file[off..off + size]);
    let mut crc = crc32fast::Hasher::new();
    crc.update(&file[off..off + size + 1]);
    let crc = crc.finalize().to_le_bytes();
    file[off + size + 1..off + size + 5].copy_from_slice(&crc);
}

#[test]
fn unknown_filter_kinds_and_versions_read_as_may_contain() {
    let dir = tempfile::tempdir().unwrap();
    let rows = rows(500);
    for kind in kinds().into_iter().filter(|k| *k != FilterKind::None) {
        let path = table_path(&dir, "t.sst");
        build(&path, kind, &rows);
        let good = std::fs::read(&path).unwrap();
        for (what, at, value) in [("kind", 0, 200u8), ("version", 1, 99u8)] {
            let mut bad = good.clone();
            rewrite_filter(&mut bad, |f| f[at] = value);
            std::fs::write(&path, &bad).unwrap();
            let t = Table::open_path(&path).unwrap();
            assert_eq!(t.filter_details().status, FilterStatus::Unknown, "{kind}: unknown {what}");
            for i in 0..500 {
                let l = t.get(&key(i), u64::MAX).unwrap();
                assert_eq!(l.filter, FilterAnswer::MayContain);
                assert!(l.entry.is_some(), "{kind}: key {i} lost under unknown {what}");
                assert_eq!(t.get(&absent_key(i), u64::MAX).unwrap().filter, FilterAnswer::MayContain);
            }
        }
    }
}
