//! A merge split by key range into pieces merged side by side
//! (`Options::subcompactions`) writes what one merge would: the same
//! contents, a level of disjoint key ranges, range deletes across the cuts
//! honoured.

mod common;

use std::collections::BTreeMap;

use siftdb::{Db, Options};

fn opts(subcompactions: usize) -> Options {
    Options {
        memtable_bytes: 16 << 10,
        table_target_bytes: 8 << 10,
        base_level_bytes: 64 << 10,
        hash_salt: Some(5),
        fs: common::no_sync_fs(),
        subcompactions,
        ..Options::default()
    }
}

/// Random puts, overwrites, deletes and range deletes, with the model.
fn load(db: &Db) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    for i in 0..20_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let key = format!("k{:05}", x % 6000).into_bytes();
        match i % 97 {
            0 => {
                db.delete(&key).unwrap();
                model.remove(&key);
            }
            1 => {
                let end = format!("k{:05}", x % 6000 + 40).into_bytes();
                db.delete_range(&key, &end).unwrap();
                model.retain(|k, _| *k < key || *k >= end);
            }
            _ => {
                let value = format!("v{i}-{}", "x".repeat((x % 60) as usize)).into_bytes();
                db.put(&key, &value).unwrap();
                model.insert(key, value);
            }
        }
    }
    model
}

fn assert_disjoint_levels(db: &Db) {
    let tables = db.tables();
    for level in 1..7 {
        let mut ranges: Vec<_> = tables
            .iter()
            .filter(|t| t.level == level)
            .map(|t| (t.record.smallest.clone(), t.record.largest.clone()))
            .collect();
        ranges.sort();
        for pair in ranges.windows(2) {
            assert!(pair[0].1 < pair[1].0, "level {level} overlaps: {pair:?}");
        }
    }
}

#[test]
fn split_merges_write_what_one_merge_writes() {
    let mut contents = Vec::new();
    for subcompactions in [1, 2, 4] {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), opts(subcompactions)).unwrap();
        // A snapshot held from the start keeps every range tombstone alive
        // through the merges, carried into outputs and clipped at the cuts.
        let snapshot = db.snapshot();
        let model = load(&db);
        db.compact().unwrap();
        assert!(db.stats().levels.iter().any(|l| l.level >= 1 && l.range_tombstones > 0), "{}", db.stats());
        assert_eq!(snapshot.iter().count(), 0);
        drop(snapshot);
        db.compact().unwrap();
        let stats = db.stats();
        if subcompactions == 1 {
            assert_eq!(stats.split_merges, 0, "{stats}");
        } else {
            assert!(stats.split_merges > 0, "{stats}");
            assert!(stats.split_pieces >= 2 * stats.split_merges, "{stats}");
            assert!(stats.split_pieces <= subcompactions as u64 * stats.split_merges, "{stats}");
            assert!(stats.to_string().contains("merges split by key range"), "{stats}");
        }
        assert_disjoint_levels(&db);
        let got: BTreeMap<Vec<u8>, Vec<u8>> =
            db.iter().map(|r| r.unwrap()).map(|(k, v)| (k.to_vec(), v.to_vec())).collect();
        assert_eq!(got.len(), model.len(), "subcompactions {subcompactions}");
        assert!(got == model, "subcompactions {subcompactions}: contents differ from the model");
        for (k, v) in model.iter().step_by(37) {
            assert_eq!(db.get(k).unwrap().as_deref(), Some(v.as_slice()));
        }
        drop(db);
        // And after a reopen, from the manifest.
        let db = Db::open(dir.path(), opts(subcompactions)).unwrap();
        assert_disjoint_levels(&db);
        assert_eq!(db.iter().count(), model.len());
        contents.push(got);
    }
    assert!(contents.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn zero_or_too_many_pieces_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for bad in [0, 65] {
        let err = Db::open(dir.path(), opts(bad)).unwrap_err();
        assert!(err.to_string().contains("subcompactions"), "{err}");
    }
}
