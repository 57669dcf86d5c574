//! `Db::multi_get` and `Snapshot::multi_get` against a loop of `get`: random
//! trees (puts, deletes, range deletes, flushes, compactions, tables small
//! enough that every level and level 0's overlaps come up), snapshots, and
//! key batches with duplicates, absent keys and keys still in a memtable.
//! Every batch equals its keys' `get`s, now and at every snapshot, and the
//! database's read counters move as the `get`s would move them.

use proptest::prelude::*;
use siftdb::{Db, FilterKind, FilterPolicy, Options, Snapshot};

#[derive(Debug, Clone)]
enum Op {
    Put(u16, u8),
    Delete(u16),
    DeleteRange(u16, u16),
    Flush,
    Compact,
    Snapshot,
    Batch(Vec<u16>),
    SnapshotBatch(usize, Vec<u16>),
}

/// Keys from a small space, so batches meet present, deleted and absent
/// keys alike; 0xffff is never written.
fn key(k: u16) -> Vec<u8> {
    format!("key{k:05}").into_bytes()
}

fn key_id() -> impl Strategy<Value = u16> {
    prop_oneof![9 => 0u16..400, 1 => Just(0xffff)]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        20 => (0u16..400, any::<u8>()).prop_map(|(k, v)| Op::Put(k, v)),
        3 => (0u16..400).prop_map(Op::Delete),
        1 => (0u16..400, 1u16..40).prop_map(|(a, n)| Op::DeleteRange(a, a + n)),
        2 => Just(Op::Flush),
        1 => Just(Op::Compact),
        1 => Just(Op::Snapshot),
        3 => prop::collection::vec(key_id(), 0..40).prop_map(Op::Batch),
        2 => (any::<usize>(), prop::collection::vec(key_id(), 0..40)).prop_map(|(i, b)| Op::SnapshotBatch(i, b)),
    ]
}

fn open(dir: &std::path::Path, ribbon: bool) -> Db {
    Db::open(dir, options(ribbon)).unwrap()
}

fn options(ribbon: bool) -> Options {
    let kind = if ribbon {
        FilterKind::Ribbon { bits_per_key: 8.0 }
    } else {
        FilterKind::BlockedBloom { bits_per_key: 10.0 }
    };
    Options {
        memtable_bytes: 2048,
        // Several data blocks a table, so a batch's keys fall in one block
        // or in neighbouring ones.
        block_bytes: 128,
        table_target_bytes: 1024,
        base_level_bytes: 4096,
        l0_compaction_trigger: 3,
        hash_salt: Some(11),
        filter_policy: Some(FilterPolicy::uniform(kind)),
        ..Options::default()
    }
}

fn check(db: &Db, snap: Option<&Snapshot>, ids: &[u16]) {
    let keys: Vec<Vec<u8>> = ids.iter().map(|&k| key(k)).collect();
    let (batch, singles): (Vec<_>, Vec<_>) = match snap {
        None => (db.multi_get(&keys).unwrap(), keys.iter().map(|k| db.get(k).unwrap()).collect()),
        Some(s) => (s.multi_get(&keys).unwrap(), keys.iter().map(|k| s.get(k).unwrap()).collect()),
    };
    assert_eq!(batch, singles, "keys {ids:?}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn multi_get_equals_a_loop_of_get(ops in prop::collection::vec(op(), 1..300), ribbon in any::<bool>()) {
        let dir = tempfile::tempdir().unwrap();
        let db = open(dir.path(), ribbon);
        let mut snaps: Vec<Snapshot> = Vec::new();
        for op in ops {
            match op {
                Op::Put(k, v) => db.put(key(k), [v; 20]).unwrap(),
                Op::Delete(k) => db.delete(key(k)).unwrap(),
                Op::DeleteRange(a, b) => db.delete_range(key(a), key(b)).unwrap(),
                Op::Flush => db.flush().unwrap(),
                Op::Compact => db.compact().unwrap(),
                Op::Snapshot => snaps.push(db.snapshot()),
                Op::Batch(ids) => check(&db, None, &ids),
                Op::SnapshotBatch(i, ids) => {
                    if !snaps.is_empty() {
                        check(&db, Some(&snaps[i % snaps.len()]), &ids);
                    }
                }
            }
        }
        // Once more over every key, with the tree as the ops left it.
        let all: Vec<u16> = (0..400).chain([0xffff, 7, 7]).collect();
        check(&db, None, &all);
        for s in &snaps {
            check(&db, Some(s), &all);
        }
    }
}

/// A tree with keys in the memtable, in several overlapping level-0
/// tables and on deeper levels: each key read as a batch counts as one get,
/// and the filters are asked as often as the `get`s ask them (each key's
/// candidate tables, in order, until one decides).
#[test]
fn a_batch_counts_what_its_gets_would() {
    let dir = tempfile::tempdir().unwrap();
    // Tables only where flushed: the gets and the batch see one tree.
    let opts = Options { auto_compaction: false, memtable_bytes: 1 << 20, ..options(true) };
    let db = Db::open(dir.path(), opts).unwrap();
    for round in 0..6u8 {
        for k in (0..400u16).filter(|k| k % 6 != u16::from(round)) {
            db.put(key(k), [round; 20]).unwrap();
        }
        db.flush().unwrap();
        if round == 2 {
            db.compact().unwrap();
        }
    }
    for k in 0..50u16 {
        db.put(key(k * 3), b"in the memtable").unwrap();
    }
    let stats = db.stats();
    assert!(stats.levels[0].tables >= 2 && stats.levels.iter().skip(1).any(|l| l.tables > 0), "{stats:?}");
    let ids: Vec<u16> = (0..400).chain(500..540).chain([3, 3, 0xffff]).collect();
    let keys: Vec<Vec<u8>> = ids.iter().map(|&k| key(k)).collect();

    let before = db.stats();
    let singles: Vec<_> = keys.iter().map(|k| db.get(k).unwrap()).collect();
    let by_get = db.stats().since(&before);
    let before = db.stats();
    let batch = db.multi_get(&keys).unwrap();
    let by_batch = db.stats().since(&before);

    assert_eq!(batch, singles);
    assert_eq!(by_batch.gets, keys.len() as u64);
    // Duplicates are answered once, so the memtable and the tables are
    // asked once a distinct key: the two repeats of key 3 cost nothing.
    assert_eq!(
        by_batch.memtable_hits + 2,
        by_get.memtable_hits,
        "key 3 twice more, found in the memtable once"
    );
    for (level, (b, g)) in by_batch.levels.iter().zip(&by_get.levels).enumerate() {
        assert_eq!(b.filter_probes, g.filter_probes, "level {level}");
        assert_eq!(b.filter_negatives, g.filter_negatives, "level {level}");
        assert_eq!(b.filter_false_positives, g.filter_false_positives, "level {level}");
    }
    // Neighbouring keys share data blocks: the batch reads fewer.
    let blocks = |s: &siftdb::Stats| s.levels.iter().map(|l| l.data_blocks_read).sum::<u64>();
    assert!(blocks(&by_batch) < blocks(&by_get), "{} against {}", blocks(&by_batch), blocks(&by_get));
}

/// `Table::get_batch` against `Table::get` key by key, on tables with and
/// without a filter and with several versions of a key: any order of keys,
/// duplicates, absent keys and snapshots between the versions give the same
/// lookups; a data block is read once for a run of keys in it.
#[test]
fn a_table_answers_a_batch_as_it_answers_each_key() {
    use siftdb::ValueKind;
    use siftdb::filter::KeyHash;
    use siftdb::table::{Table, TableBuilder, TableOptions};

    for filter in [FilterKind::None, FilterKind::Ribbon { bits_per_key: 8.0 }] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.sst");
        let opts = TableOptions { block_bytes: 256, filter, ..TableOptions::default() };
        let mut b = TableBuilder::create(&path, opts).unwrap();
        // Even keys; every third has an older version below the newer one,
        // and every fifth newest version is a tombstone.
        for k in (0..600u32).step_by(2) {
            let key = format!("k{k:04}");
            let kind = if k % 5 == 0 { ValueKind::Tombstone } else { ValueKind::Value };
            b.add(key.as_bytes(), 1000 + u64::from(k), kind, format!("new{k}").as_bytes()).unwrap();
            if k % 3 == 0 {
                b.add(key.as_bytes(), 10 + u64::from(k), ValueKind::Value, format!("old{k}").as_bytes())
                    .unwrap();
            }
        }
        b.finish().unwrap();
        let table = Table::open_path(&path).unwrap();
        let mut x = 7u64;
        for round in 0..40 {
            let n = 1 + round * 3;
            let mut ids: Vec<u32> = (0..n)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x % 620) as u32
                })
                .collect();
            if round % 2 == 0 {
                ids.sort_unstable();
            }
            let keys: Vec<String> = ids.iter().map(|k| format!("k{k:04}")).collect();
            let probes: Vec<(&[u8], KeyHash)> =
                keys.iter().map(|k| (k.as_bytes(), KeyHash::new(3, k.as_bytes()))).collect();
            for snapshot in [5, 500, 1300, u64::MAX] {
                let mut got = Vec::new();
                table.get_batch(&probes, snapshot, &mut got).unwrap();
                assert_eq!(got.len(), keys.len());
                for (&(key, hash), batch) in probes.iter().zip(&got) {
                    let single = table.get_hashed(key, hash, snapshot).unwrap();
                    assert_eq!(
                        batch.entry,
                        single.entry,
                        "{filter}: {:?} at {snapshot}",
                        std::str::from_utf8(key)
                    );
                    assert_eq!(batch.filter, single.filter);
                }
                let blocks: u32 = got.iter().map(|l| l.blocks_read).sum();
                let singles: u32 =
                    probes.iter().map(|&(k, h)| table.get_hashed(k, h, snapshot).unwrap().blocks_read).sum();
                assert!(blocks <= singles, "{blocks} blocks against {singles}");
                if round % 2 == 0 && n > 60 && snapshot == u64::MAX {
                    assert!(blocks < singles, "sorted neighbours share blocks: {blocks} against {singles}");
                }
            }
        }
    }
}
