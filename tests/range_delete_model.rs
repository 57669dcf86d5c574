//! Range deletes against a `BTreeMap` model: random puts, deletes, range
//! deletes (alone and in batches), snapshots, flushes, compactions, reopens
//! and power losses, with memtables and tables so small that tombstones
//! are flushed, compacted and cut between output tables all the time.
//! Every `get`, forward and reverse `range` and `prefix` equals the model,
//! now and at every snapshot.
//!
//! The key alphabet holds 0x00, so range ends like `b"a\0"` (the successor
//! a compaction cuts tombstones at) come up.

#[path = "common/scan_model.rs"]
mod scan_model;

use std::ops::Bound;
use std::sync::Arc;

use proptest::prelude::*;
use siftdb::fs::{CrashMode, FaultFs, FaultOp};
use siftdb::{Db, Options, PrefixExtractor, WriteBatch};

use scan_model::{Model, model_prefix, model_range, pairs};

#[derive(Debug, Clone)]
enum Op {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    DeleteRange(Vec<u8>, Vec<u8>),
    /// Puts (`Some`), deletes (`None`) and range deletes, in one batch.
    Batch(Vec<BatchItem>),
    Get(Vec<u8>),
    Range(Vec<u8>, Vec<u8>, bool),
    Prefix(Vec<u8>),
    Snapshot,
    SnapshotGet(usize, Vec<u8>),
    SnapshotScan(usize, bool),
    SnapshotPrefix(usize, Vec<u8>, bool),
    Flush,
    Compact,
    Reopen,
    PowerLoss,
}

#[derive(Debug, Clone)]
enum BatchItem {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    DeleteRange(Vec<u8>, Vec<u8>),
}

fn key() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(vec![0, b'a', b'b', b'c', 0xff]), 0..4)
}

fn value() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..24)
}

fn batch_item() -> impl Strategy<Value = BatchItem> {
    prop_oneof![
        3 => (key(), value()).prop_map(|(k, v)| BatchItem::Put(k, v)),
        1 => key().prop_map(BatchItem::Delete),
        1 => (key(), key()).prop_map(|(a, b)| BatchItem::DeleteRange(a, b)),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        10 => (key(), value()).prop_map(|(k, v)| Op::Put(k, v)),
        2 => key().prop_map(Op::Delete),
        3 => (key(), key()).prop_map(|(a, b)| Op::DeleteRange(a, b)),
        2 => prop::collection::vec(batch_item(), 0..6).prop_map(Op::Batch),
        4 => key().prop_map(Op::Get),
        2 => (key(), key(), any::<bool>()).prop_map(|(a, b, inc)| Op::Range(a, b, inc)),
        1 => key().prop_map(Op::Prefix),
        1 => Just(Op::Snapshot),
        2 => (any::<usize>(), key()).prop_map(|(i, k)| Op::SnapshotGet(i, k)),
        1 => (any::<usize>(), any::<bool>()).prop_map(|(i, rev)| Op::SnapshotScan(i, rev)),
        1 => (any::<usize>(), key(), any::<bool>()).prop_map(|(i, p, rev)| Op::SnapshotPrefix(i, p, rev)),
        2 => Just(Op::Flush),
        1 => Just(Op::Compact),
        1 => Just(Op::Reopen),
        1 => Just(Op::PowerLoss),
    ]
}

/// Synced writes, so a power loss keeps every acknowledged one and the
/// model stays the truth across it.
fn options(fs: &FaultFs) -> Options {
    Options {
        fs: Arc::new(fs.clone()),
        sync: true,
        memtable_bytes: 300,
        block_bytes: 64,
        hash_salt: Some(3),
        // Prefix filters skip tables in scans; their tombstones must not be.
        prefix_extractor: Some(PrefixExtractor::fixed(1)),
        ..Options::default()
    }
}

/// Levels deep enough that compactions merge tombstones from several
/// tables and split them between outputs.
fn deep_options(fs: &FaultFs) -> Options {
    Options {
        l0_compaction_trigger: 2,
        base_level_bytes: 200,
        level_size_ratio: 2,
        table_target_bytes: 150,
        max_levels: 6,
        ..options(fs)
    }
}

fn remove_range(model: &mut Model, a: &[u8], b: &[u8]) {
    model.retain(|k, _| !(a <= k.as_slice() && k.as_slice() < b));
}

/// Every pair of the whole key space, forwards or backwards.
fn scan(it: siftdb::DbIter, rev: bool) -> Vec<(Vec<u8>, Vec<u8>)> {
    if rev {
        let mut all = pairs(it.rev());
        all.reverse();
        all
    } else {
        pairs(it)
    }
}

fn run(ops: Vec<Op>, options: fn(&FaultFs) -> Options) {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    let mut db = Db::open(dir.path(), options(&fs)).unwrap();
    let mut model = Model::new();
    let mut snaps: Vec<(siftdb::Snapshot, Model)> = Vec::new();
    for op in ops {
        match op {
            Op::Put(k, v) => {
                db.put(&k, &v).unwrap();
                model.insert(k, v);
            }
            Op::Delete(k) => {
                db.delete(&k).unwrap();
                model.remove(&k);
            }
            Op::DeleteRange(a, b) => {
                let r = db.delete_range(&a, &b);
                if a < b {
                    r.unwrap();
                    remove_range(&mut model, &a, &b);
                } else {
                    assert!(matches!(r, Err(siftdb::Error::InvalidArgument(_))), "{a:?}..{b:?}: {r:?}");
                }
            }
            Op::Batch(items) => {
                let mut batch = WriteBatch::new();
                let mut after = model.clone();
                let mut valid = true;
                for item in items {
                    match item {
                        BatchItem::Put(k, v) => {
                            batch.put(&k, &v);
                            after.insert(k, v);
                        }
                        BatchItem::Delete(k) => {
                            batch.delete(&k);
                            after.remove(&k);
                        }
                        BatchItem::DeleteRange(a, b) => {
                            valid &= a < b;
                            batch.delete_range(&a, &b);
                            remove_range(&mut after, &a, &b);
                        }
                    }
                }
                let r = db.write(batch);
                if valid {
                    r.unwrap();
                    model = after;
                } else {
                    // One bad range refuses the whole batch: nothing of it applies.
                    assert!(matches!(r, Err(siftdb::Error::InvalidArgument(_))), "{r:?}");
                }
            }
            Op::Get(k) => {
                assert_eq!(db.get(&k).unwrap().map(|v| v.to_vec()), model.get(&k).cloned(), "get {k:?}");
            }
            Op::Range(a, b, rev) => {
                if a <= b {
                    let bounds = (Bound::Included(a.as_slice()), Bound::Excluded(b.as_slice()));
                    let want = model_range(&model, bounds.0, bounds.1);
                    let got = if rev {
                        let mut got = pairs(db.range(bounds).rev());
                        got.reverse();
                        got
                    } else {
                        pairs(db.range(bounds))
                    };
                    assert_eq!(got, want, "range {a:?}..{b:?} rev {rev}");
                }
            }
            Op::Prefix(p) => {
                let want = model_prefix(&model, &p);
                assert_eq!(pairs(db.prefix(&p)), want, "prefix {p:?}");
            }
            Op::Snapshot => snaps.push((db.snapshot(), model.clone())),
            Op::SnapshotGet(i, k) => {
                if !snaps.is_empty() {
                    let (s, m) = &snaps[i % snaps.len()];
                    assert_eq!(
                        s.get(&k).unwrap().map(|v| v.to_vec()),
                        m.get(&k).cloned(),
                        "snapshot get {k:?}"
                    );
                }
            }
            Op::SnapshotScan(i, rev) => {
                if !snaps.is_empty() {
                    let (s, m) = &snaps[i % snaps.len()];
                    assert_eq!(scan(s.iter(), rev), model_range(m, Bound::Unbounded, Bound::Unbounded));
                }
            }
            Op::SnapshotPrefix(i, p, rev) => {
                if !snaps.is_empty() {
                    let (s, m) = &snaps[i % snaps.len()];
                    let want = model_prefix(m, &p);
                    assert_eq!(scan(s.prefix(&p), rev), want, "snapshot prefix {p:?} rev {rev}");
                }
            }
            Op::Flush => db.flush().unwrap(),
            Op::Compact => db.compact().unwrap(),
            Op::Reopen => {
                snaps.clear();
                db.close().unwrap();
                drop(db);
                db = Db::open(dir.path(), options(&fs)).unwrap();
            }
            Op::PowerLoss => {
                snaps.clear();
                // The disk stops taking writes, the process goes, the
                // machine reboots with what was synced.
                fs.fail_after(FaultOp::Any, 0);
                drop(db);
                fs.crash(CrashMode::DropUnsynced).unwrap();
                fs.disable_faults();
                db = Db::open(dir.path(), options(&fs)).unwrap();
            }
        }
    }
    let all = model_range(&model, Bound::Unbounded, Bound::Unbounded);
    assert_eq!(scan(db.iter(), false), all);
    assert_eq!(scan(db.iter(), true), all);
    for k in model.keys() {
        assert_eq!(db.get(k).unwrap().map(|v| v.to_vec()), model.get(k).cloned());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    #[test]
    fn range_deletes_match_btreemap(ops in prop::collection::vec(op(), 1..160)) {
        run(ops, options);
    }

    #[test]
    fn range_deletes_in_a_deep_tree_match_btreemap(ops in prop::collection::vec(op(), 1..300)) {
        run(ops, deep_options);
    }
}
