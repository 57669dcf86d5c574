//! After `compact()`: levels 1+ are sorted and non-overlapping, every level
//! is within its target, no key is lost, the last level holds no tombstone,
//! and each level's tables carry the filter the policy names for it.

mod common;

use std::collections::BTreeMap;

use siftdb::ValueKind;
use siftdb::fs::StdFs;
use siftdb::policy::FilterPolicy;
use siftdb::table::Table;
use siftdb::{Compression, CompressionPolicy, Db, FilterKind, Options};

fn raw() -> CompressionPolicy {
    CompressionPolicy::uniform(Compression::None)
}

fn opts() -> Options {
    Options {
        memtable_bytes: 1024,
        hash_salt: Some(21),
        fs: common::no_sync_fs(),
        block_bytes: 128,
        l0_compaction_trigger: 2,
        l0_slowdown_trigger: 100,
        l0_stop_trigger: 200,
        base_level_bytes: 2048,
        level_size_ratio: 2,
        table_target_bytes: 1024,
        max_levels: 6,
        filter_policy: Some(FilterPolicy::per_level(vec![FilterKind::None])),
        ..Options::default()
    }
}

fn fill(db: &Db, model: &mut BTreeMap<Vec<u8>, Vec<u8>>) {
    let mut x: u64 = 12345;
    for i in 0..6000u64 {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        let k = format!("key{:05}", (x >> 33) % 2000).into_bytes();
        if i % 5 == 4 {
            db.delete(&k).unwrap();
            model.remove(&k);
        } else {
            let v = format!("value-{i}").into_bytes();
            db.put(&k, &v).unwrap();
            model.insert(k, v);
        }
    }
}

#[test]
fn compact_leaves_sorted_levels_within_target_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts();
    let db = Db::open(dir.path(), o.clone()).unwrap();
    let mut model = BTreeMap::new();
    fill(&db, &mut model);
    db.flush().unwrap();
    db.compact().unwrap();

    let tables = db.tables();
    let deepest = tables.iter().map(|t| t.level).max().unwrap();
    assert!(deepest >= 4, "expected a deep tree, got levels up to {deepest}");
    let l0 = tables.iter().filter(|t| t.level == 0).count();
    assert!(l0 < o.l0_compaction_trigger, "L0 still has {l0} tables");
    for level in 1..o.max_levels {
        let run: Vec<_> = tables.iter().filter(|t| t.level == level).collect();
        for pair in run.windows(2) {
            assert!(pair[0].largest < pair[1].smallest, "L{level} overlaps: {:?} / {:?}", pair[0], pair[1]);
        }
        if level + 1 < o.max_levels {
            let bytes: u64 = run.iter().map(|t| t.file_size).sum();
            assert!(bytes <= o.level_target_bytes(level), "L{level} holds {bytes} bytes");
        }
    }
    let stats = db.stats();
    assert!(stats.compactions > 0);
    for l in &stats.levels {
        assert_eq!(l.tables as usize, tables.iter().filter(|t| t.level == l.level).count());
    }
    let got: BTreeMap<Vec<u8>, Vec<u8>> =
        db.iter().map(|r| r.unwrap()).map(|(k, v)| (k.to_vec(), v.to_vec())).collect();
    assert_eq!(got, model);
    for (k, v) in &model {
        assert_eq!(db.get(k).unwrap().as_deref(), Some(v.as_slice()));
    }
    // The last level holds no tombstone and (no snapshot being live) one
    // version per key.
    for t in tables.iter().filter(|t| t.level == deepest) {
        let table = Table::open(&StdFs, &t.path).unwrap();
        let mut prev: Option<bytes::Bytes> = None;
        for e in table.iter() {
            let e = e.unwrap();
            assert_eq!(e.kind, ValueKind::Value, "tombstone for {:?} in the last level", e.user_key);
            assert_ne!(prev.as_ref(), Some(&e.user_key), "two versions of {:?}", e.user_key);
            prev = Some(e.user_key);
        }
    }
    db.close().unwrap();
    let db = Db::open(dir.path(), o).unwrap();
    assert_eq!(db.iter().count(), model.len());
}

/// Compaction widens its output to neighbouring tables of the output level
/// while the job fits one output table, so a young tree's deep levels hold
/// tables near their target instead of one small table per slice compacted
/// into them (each of which pays a filter's fixed bytes).
/// Writes between the flushes and compactions of
/// `deep_levels_hold_tables_near_their_target`: about one 32 KiB memtable.
/// (With the widening turned off the test fails at 300 and 700; at 1,500
/// it did not, so the interval is part of what it tests.)
const COMPACT_EVERY: u64 = 700;

/// Loads 30,000 keys into a deep tree, calling `settle` every `every`
/// writes, then `compact()`s, and checks that every level from 2 down holds
/// tables averaging at least a quarter of their target.
fn deep_levels_after(every: u64, settle: impl Fn(&Db)) -> Db {
    let dir = tempfile::tempdir().unwrap();
    let o = Options {
        // Flushes much larger than level 1, as in the bench's trees: each
        // level-0 compaction cuts level 1 into many small slices.
        memtable_bytes: 32 << 10,
        hash_salt: Some(5),
        fs: common::no_sync_fs(),
        block_bytes: 512,
        base_level_bytes: 4096,
        level_size_ratio: 10,
        table_target_bytes: 2048,
        table_size_multiplier: 10,
        max_levels: 5,
        filter_policy: Some(FilterPolicy::uniform(FilterKind::BinaryFuse8)),
        // Raw tables: the targets here are a few 512-byte blocks, and under
        // LZ4 the repeated values shrink a merge's output below what its
        // remainder estimate expects, so L2 kept one table under a quarter
        // of its target (2 tables, 24.6 KB, target 20 KB).
        compression: raw(),
        // Flushes and the compactions then due at fixed points of the load,
        // so the tree is the same on every run: in the background they raced
        // the writes, and on a loaded 2-core machine about one run in
        // fifteen left level 2 in slices the widening never met again
        // (CI failed on it once, 2026-12-05).
        auto_compaction: false,
        ..Options::default()
    };
    let db = Db::open(dir.path(), o.clone()).unwrap();
    let mut x: u64 = 99;
    for i in 0..30_000u64 {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        db.put(format!("{:016x}", x >> 8).as_bytes(), b"value-value-value").unwrap();
        if i % every == every - 1 {
            settle(&db);
        }
    }
    db.flush().unwrap();
    db.compact().unwrap();
    let tables = db.tables();
    let deepest = tables.iter().map(|t| t.level).max().unwrap();
    assert!(deepest >= 3, "expected a deep tree, got levels up to {deepest}");
    for level in 2..=deepest {
        let sizes: Vec<u64> = tables.iter().filter(|t| t.level == level).map(|t| t.file_size).collect();
        let mean = sizes.iter().sum::<u64>() / sizes.len() as u64;
        let target = o.table_target_bytes_for(level);
        let level_bytes: u64 = sizes.iter().sum();
        // A level smaller than one table holds one table; otherwise its
        // tables average at least a quarter of the target.
        let expected = target.min(level_bytes) / 4;
        assert!(mean >= expected, "L{level}: {sizes:?}, mean {mean} bytes, target {target}");
    }
    // Not one table under a quarter of its level's target. (Under the
    // coarse settling, level 3 held five before merges' last tables took
    // their remainders; at 700 writes level 2 kept one of 4,916 bytes of
    // 20,480 while the remainder was estimated from the inputs' bytes,
    // the versions the merge dropped included.)
    let stats = db.stats();
    assert!(stats.levels.iter().all(|l| l.small_tables == 0), "{stats}");
    db
}

#[test]
fn deep_levels_hold_tables_near_their_target() {
    // `Db::compact_due`: what the background thread would run.
    deep_levels_after(COMPACT_EVERY, |db| {
        db.flush().unwrap();
        db.compact_due().unwrap();
    })
    .close()
    .unwrap();
}

/// The same under coarse settling: `compact()` every 3,000 writes. Its
/// merges reach deep levels in large jobs, and splitting their outputs at
/// the target left a remainder table after each, as small as a few keys:
/// level 3 held six tables averaging 44 KB against a 205 KB target, a
/// fifth of it (the eleventh session's note). A merge's last output now
/// takes a remainder under a quarter of the target
/// (`compaction::writer::split_here`).
#[test]
fn deep_levels_hold_tables_near_their_target_under_coarse_compactions() {
    deep_levels_after(3_000, |db| db.compact().unwrap()).close().unwrap();
}

/// `Stats` counts a level's small tables: a few keys merged into level 1
/// beyond every table there, beside a table too large to widen into, make
/// a table of their own, under a quarter of the target.
#[test]
fn stats_count_a_levels_small_tables() {
    let dir = tempfile::tempdir().unwrap();
    // One flush per `compact()`, so that a merge's input bytes are its
    // output's and the table splits as planned.
    let o = Options {
        memtable_bytes: 1 << 20,
        fs: common::no_sync_fs(),
        base_level_bytes: 1 << 20,
        table_target_bytes: 2048,
        auto_compaction: false,
        filter_policy: Some(FilterPolicy::per_level(vec![FilterKind::None])),
        // Sizes in raw bytes: LZ4 stores the 20 values of 100 `v`s in 401.
        compression: raw(),
        ..Options::default()
    };
    let db = Db::open(dir.path(), o.clone()).unwrap();
    // About 2.3 KB of entries: one level-1 table just over the 2,048-byte
    // target (a remainder under a quarter of it stays in the table), too
    // large for a merge beside it to take in.
    for i in 0..20u32 {
        db.put(format!("a{i:04}").as_bytes(), [b'v'; 100]).unwrap();
    }
    db.compact().unwrap();
    let one = db.stats();
    let first: Vec<u64> = db.tables().iter().filter(|t| t.level == 1).map(|t| t.file_size).collect();
    assert_eq!(one.levels[1].tables, 1, "{first:?}");
    assert_eq!(one.levels[1].small_tables, 0);
    for i in 0..3u32 {
        db.put(format!("z{i:04}").as_bytes(), b"value-value").unwrap();
    }
    db.compact().unwrap();
    let two = db.stats();
    let sizes: Vec<u64> = db.tables().iter().filter(|t| t.level == 1).map(|t| t.file_size).collect();
    assert_eq!(sizes.len(), 2, "{sizes:?}");
    let small = sizes.iter().filter(|&&b| b < o.table_target_bytes_for(1) / 4).count() as u64;
    assert_eq!(small, 1, "{sizes:?}");
    assert_eq!(two.levels[1].small_tables, 1, "{sizes:?}");
    assert!(
        two.to_string().contains("tables under a quarter of their level's target size: L1 1 of 2"),
        "{two}"
    );
}

/// Issue 35 step 1, and issue 28's budget after `compact()`: level 0 ends
/// empty even when it holds fewer tables than its trigger (before, one to
/// trigger − 1 flushes stayed there and every absent key probed them).
#[test]
fn compact_empties_level_0_below_its_trigger() {
    let dir = tempfile::tempdir().unwrap();
    let o = Options { l0_compaction_trigger: 8, auto_compaction: false, ..opts() };
    let db = Db::open(dir.path(), o).unwrap();
    let mut model = BTreeMap::new();
    for round in 0..3u32 {
        for i in 0..40u32 {
            let (k, v) = (format!("k{i:03}").into_bytes(), format!("v{round}-{i}").into_bytes());
            db.put(&k, &v).unwrap();
            model.insert(k, v);
        }
        db.flush().unwrap();
    }
    assert!(db.tables().iter().filter(|t| t.level == 0).count() >= 3);
    db.compact().unwrap();
    let tables = db.tables();
    assert!(tables.iter().all(|t| t.level > 0), "{:?}", tables.iter().map(|t| t.level).collect::<Vec<_>>());
    let got: BTreeMap<Vec<u8>, Vec<u8>> =
        db.iter().map(|r| r.unwrap()).map(|(k, v)| (k.to_vec(), v.to_vec())).collect();
    assert_eq!(got, model);
    // A second call finds nothing to do.
    let before = db.stats().compactions;
    db.compact().unwrap();
    assert_eq!(db.stats().compactions, before);
}
