//! Model test: random sequences of operations against a `BTreeMap`, with a
//! tiny memtable so flushes happen constantly, plus explicit flushes,
//! snapshots read later, and close + reopen. Every read must match the model.

mod common;
#[path = "common/scan_model.rs"]
mod scan_model;

use std::ops::Bound;

use proptest::prelude::*;
use siftdb::{Db, Options, WriteBatch};

use scan_model::{Model, model_prefix, model_range, pairs};

#[derive(Debug, Clone)]
enum Op {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    Batch(Vec<(Vec<u8>, Option<Vec<u8>>)>),
    Get(Vec<u8>),
    Range(Vec<u8>, Vec<u8>, bool),
    Prefix(Vec<u8>),
    Snapshot,
    SnapshotGet(usize, Vec<u8>),
    SnapshotScan(usize),
    Flush,
    Compact,
    Reopen,
}

fn key() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(vec![b'a', b'b', b'c', 0xff]), 0..4)
}

fn value() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..40)
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (key(), value()).prop_map(|(k, v)| Op::Put(k, v)),
        3 => key().prop_map(Op::Delete),
        2 => prop::collection::vec((key(), prop::option::of(value())), 0..6).prop_map(Op::Batch),
        4 => key().prop_map(Op::Get),
        2 => (key(), key(), any::<bool>()).prop_map(|(a, b, inc)| Op::Range(a, b, inc)),
        2 => key().prop_map(Op::Prefix),
        1 => Just(Op::Snapshot),
        2 => (any::<usize>(), key()).prop_map(|(i, k)| Op::SnapshotGet(i, k)),
        1 => any::<usize>().prop_map(Op::SnapshotScan),
        1 => Just(Op::Flush),
        1 => Just(Op::Compact),
        1 => Just(Op::Reopen),
    ]
}

fn options() -> Options {
    Options {
        memtable_bytes: 300,
        hash_salt: Some(1),
        fs: common::no_sync_fs(),
        block_bytes: 64,
        ..Options::default()
    }
}

/// Synced writes go through the group-commit path.
fn synced_options() -> Options {
    Options { sync: true, ..options() }
}

/// Sizes so small that a few hundred writes build five or six levels.
fn deep_options() -> Options {
    Options {
        l0_compaction_trigger: 2,
        base_level_bytes: 200,
        level_size_ratio: 2,
        table_target_bytes: 150,
        max_levels: 6,
        ..options()
    }
}

fn run(ops: Vec<Op>, options: fn() -> Options) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let mut db = Db::open(dir.path(), options()).unwrap();
    let mut deepest = 0;
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
            Op::Batch(ops) => {
                let mut b = WriteBatch::new();
                for (k, v) in ops {
                    match v {
                        Some(v) => {
                            b.put(&k, &v);
                            model.insert(k, v);
                        }
                        None => {
                            b.delete(&k);
                            model.remove(&k);
                        }
                    }
                }
                db.write(b).unwrap();
            }
            Op::Get(k) => {
                assert_eq!(db.get(&k).unwrap().map(|v| v.to_vec()), model.get(&k).cloned(), "get {k:?}");
            }
            Op::Range(a, b, inclusive) => {
                let hi =
                    if inclusive { Bound::Included(b.as_slice()) } else { Bound::Excluded(b.as_slice()) };
                let want = if a > b { Vec::new() } else { model_range(&model, Bound::Included(&a), hi) };
                let got =
                    if a > b { Vec::new() } else { pairs(db.range((Bound::Included(a.as_slice()), hi))) };
                assert_eq!(got, want, "range {a:?}..{b:?}");
            }
            Op::Prefix(p) => {
                let want = model_prefix(&model, &p);
                assert_eq!(pairs(db.prefix(&p)), want, "prefix {p:?}");
            }
            Op::Snapshot => snaps.push((db.snapshot(), model.clone())),
            Op::SnapshotGet(i, k) => {
                if !snaps.is_empty() {
                    let (s, m) = &snaps[i % snaps.len()];
                    assert_eq!(s.get(&k).unwrap().map(|v| v.to_vec()), m.get(&k).cloned());
                }
            }
            Op::SnapshotScan(i) => {
                if !snaps.is_empty() {
                    let (s, m) = &snaps[i % snaps.len()];
                    assert_eq!(pairs(s.iter()), model_range(m, Bound::Unbounded, Bound::Unbounded));
                }
            }
            Op::Flush => db.flush().unwrap(),
            Op::Compact => {
                db.compact().unwrap();
                deepest = deepest.max(db.tables().iter().map(|t| t.level).max().unwrap_or(0));
            }
            Op::Reopen => {
                snaps.clear();
                db.close().unwrap();
                drop(db);
                db = Db::open(dir.path(), options()).unwrap();
            }
        }
    }
    assert_eq!(pairs(db.iter()), model_range(&model, Bound::Unbounded, Bound::Unbounded));
    deepest.max(db.tables().iter().map(|t| t.level).max().unwrap_or(0))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 28, ..ProptestConfig::default() })]
    #[test]
    fn db_matches_btreemap(ops in prop::collection::vec(op(), 1..150)) {
        run(ops, options);
    }

    #[test]
    fn synced_db_matches_btreemap(ops in prop::collection::vec(op(), 1..100)) {
        run(ops, synced_options);
    }

    /// Issue 5: small enough sizes that five levels form. A fixed preamble
    /// of writes over keys of the random ops' alphabet (and longer ones that
    /// ranges and prefixes cover) builds the tree, then the random ops run
    /// against it; the test asserts the depth it reached.
    #[test]
    fn deep_tree_with_compactions_matches_btreemap(ops in prop::collection::vec(op(), 1..300)) {
        let mut all = deep_preamble();
        all.extend(ops);
        let deepest = run(all, deep_options);
        prop_assert!(deepest >= 4, "only levels 0..={deepest} formed, not five");
    }
}

/// 240 puts over 320 keys from the random ops' alphabet, with a manual
/// compaction every 80: enough to fill levels 1 to 4 of `deep_options`.
fn deep_preamble() -> Vec<Op> {
    const ALPHABET: [u8; 4] = [b'a', b'b', b'c', 0xff];
    let mut ops = Vec::new();
    for i in 0..240usize {
        let n = (i * 97) % 320;
        let key: Vec<u8> = if n < 256 {
            (0..4).map(|d| ALPHABET[(n >> (2 * d)) & 3]).collect()
        } else {
            (0..3).map(|d| ALPHABET[((n - 256) >> (2 * d)) & 3]).collect()
        };
        ops.push(Op::Put(key, format!("preamble{i:012}").into_bytes()));
        if i % 80 == 79 {
            ops.push(Op::Compact);
        }
    }
    ops
}

/// The deep configuration really does build deep trees (so the model test
/// above exercises compaction into every level).
#[test]
fn deep_options_build_five_levels() {
    let mut ops = Vec::new();
    for i in 0..2000u32 {
        let k = format!("{:04}", (i * 7919) % 1000).into_bytes();
        ops.push(Op::Put(k, vec![b'v'; 20]));
        if i % 400 == 399 {
            ops.push(Op::Compact);
        }
    }
    // Larger memtables than the model runs use: the same depth with far
    // fewer (fsynced) flushes.
    let deepest = run(ops, || Options { memtable_bytes: 4096, ..deep_options() });
    assert!(deepest >= 4, "deepest level {deepest}");
}
