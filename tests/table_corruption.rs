//! Damaged table files: every flipped byte and every truncation must end in
//! `Corruption` or in correct answers, never a panic, a wrong value, or a
//! present key reported absent.

mod table_common;

use std::collections::HashMap;
use std::os::unix::fs::FileExt as _;
use std::path::Path;

use siftdb::ValueKind;
use siftdb::filter::FilterKind;
use siftdb::fs::StdFs;
use siftdb::table::{Entry, FilterAnswer, FilterStatus, Table, TableOptions};
use table_common::{Row, absent_key, build_with, key, kinds, rows, table_path};

const KEYS: u64 = 24;

fn small_opts(filter: FilterKind) -> TableOptions {
    TableOptions { filter, block_bytes: 128, seed: 9, ..TableOptions::default() }
}

fn newest(rows: &[Row]) -> HashMap<Vec<u8>, Entry> {
    let mut m = HashMap::new();
    for r in rows {
        m.entry(r.key.clone()).or_insert_with(|| match r.kind {
            ValueKind::Value => Entry::Value { seq: r.seq, value: r.value.clone().into() },
            ValueKind::Tombstone => Entry::Tombstone { seq: r.seq },
        });
    }
    m
}

/// Checks a possibly damaged file. Returns whether every read succeeded.
fn check_damaged(path: &Path, rows: &[Row], expect: &HashMap<Vec<u8>, Entry>, what: &str) -> bool {
    let table = match Table::open(&StdFs, path) {
        Ok(t) => t,
        Err(e) => {
            assert!(e.is_corruption(), "{what}: open failed with non-corruption {e}");
            assert!(e.to_string().contains("t.sst"), "{what}: error does not name the file: {e}");
            return false;
        }
    };
    let mut all_ok = true;
    for i in 0..KEYS {
        match table.get(&key(i), u64::MAX) {
            Ok(l) => assert_eq!(l.entry.as_ref(), expect.get(&key(i)), "{what}: key {i} read wrong"),
            Err(e) => {
                assert!(e.is_corruption(), "{what}: {e}");
                all_ok = false;
            }
        }
        match table.get(&absent_key(i), u64::MAX) {
            Ok(l) => assert_eq!(l.entry, None, "{what}: absent key {i} found"),
            Err(e) => assert!(e.is_corruption(), "{what}: {e}"),
        }
    }
    let mut scanned = Vec::new();
    for e in table.iter() {
        match e {
            Ok(e) => scanned.push(Row {
                key: e.user_key.to_vec(),
                seq: e.seq,
                kind: e.kind,
                value: e.value.to_vec(),
            }),
            Err(e) => {
                assert!(e.is_corruption(), "{what}: {e}");
                all_ok = false;
                break;
            }
        }
    }
    // Whatever was scanned before an error is a correct prefix.
    assert_eq!(scanned[..], rows[..scanned.len()], "{what}: scan returned wrong entries");
    all_ok
}

#[test]
fn every_flipped_byte_is_detected_or_harmless() {
    let dir = tempfile::tempdir().unwrap();
    for kind in kinds() {
        let good_path = table_path(&dir, "good.sst");
        let rows = rows(KEYS);
        build_with(&good_path, small_opts(kind), &rows);
        let good = std::fs::read(&good_path).unwrap();
        let footer = Table::open_path(&good_path).unwrap().footer();
        let filter_range = if footer.filter.is_null() {
            0..0
        } else {
            footer.filter.offset as usize..(footer.filter.offset + footer.filter.size_with_trailer()) as usize
        };
        let expect = newest(&rows);
        let path = table_path(&dir, "t.sst");
        std::fs::write(&path, &good).unwrap();
        // Flip in place: rewriting the whole file per trial is slow on a busy disk.
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        let mut detected = 0;
        for i in 0..good.len() {
            file.write_all_at(&[good[i] ^ 0x5a], i as u64).unwrap();
            let what = format!("{kind}: flip at {i} of {}", good.len());
            let ok = check_damaged(&path, &rows, &expect, &what);
            if filter_range.contains(&i) {
                // A damaged filter is dropped: the table still answers everything.
                assert!(ok, "{what}: filter damage must not fail reads");
                let t = Table::open_path(&path).unwrap();
                assert!(t.filter_dropped(), "{what}");
                assert!(matches!(t.filter_details().status, FilterStatus::Dropped(_)));
                assert_eq!(t.get(&key(1), u64::MAX).unwrap().filter, FilterAnswer::NoFilter);
            } else if !ok {
                detected += 1;
            }
            file.write_all_at(&[good[i]], i as u64).unwrap();
        }
        // Outside the filter every byte is covered by a checksum.
        assert_eq!(detected, good.len() - filter_range.len(), "{kind}: some flips went unnoticed");
    }
}

#[test]
fn every_truncation_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    for kind in kinds() {
        let good_path = table_path(&dir, "good.sst");
        build_with(&good_path, small_opts(kind), &rows(KEYS));
        let good = std::fs::read(&good_path).unwrap();
        let path = table_path(&dir, "t.sst");
        // Every length near the end (footer, properties, filter), a sample before.
        let lens = (0..good.len()).filter(|&l| l + 300 >= good.len() || l % 7 == 0);
        for len in lens {
            std::fs::write(&path, &good[..len]).unwrap();
            match Table::open(&StdFs, &path) {
                Err(e) => assert!(e.is_corruption(), "{kind}: truncated to {len}: {e}"),
                Ok(_) => panic!("{kind}: table truncated to {len} of {} opened", good.len()),
            }
        }
    }
}
