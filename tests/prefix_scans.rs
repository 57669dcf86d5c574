//! Prefix filters in scans: a model test against a `BTreeMap` with the
//! extractor changed across reopens, and the counters and the fail-open
//! behaviour of a damaged filter.

mod common;
#[path = "common/scan_model.rs"]
mod scan_model;

use std::ops::Bound;

use proptest::prelude::*;
use siftdb::filter::FilterKind;

use scan_model::{Model, model_range, pairs};
use siftdb::policy::FilterPolicy;
use siftdb::table::Footer;
use siftdb::{Db, Options, PrefixExtractor};

#[derive(Debug, Clone)]
enum Op {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    Prefix(Vec<u8>),
    /// A range from `a` to `a` with its last byte raised (a range within
    /// one prefix when `a` is long enough), or to `b`.
    Range(Vec<u8>, Option<Vec<u8>>, bool),
    Flush,
    Compact,
    Reopen(usize),
}

/// The extractors a reopen chooses from (index 0: none).
fn extractor(i: usize) -> Option<PrefixExtractor> {
    [
        None,
        Some(PrefixExtractor::fixed(1)),
        Some(PrefixExtractor::fixed(2)),
        Some(PrefixExtractor::up_to(b'b')),
    ][i % 4]
}

fn key() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(vec![b'a', b'b', b'c', 0xff]), 0..5)
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        10 => (key(), prop::collection::vec(any::<u8>(), 0..8)).prop_map(|(k, v)| Op::Put(k, v)),
        3 => key().prop_map(Op::Delete),
        5 => key().prop_map(Op::Prefix),
        4 => (key(), prop::option::of(key()), any::<bool>()).prop_map(|(a, b, inc)| Op::Range(a, b, inc)),
        2 => Just(Op::Flush),
        1 => Just(Op::Compact),
        1 => any::<usize>().prop_map(Op::Reopen),
    ]
}

fn options(e: Option<PrefixExtractor>) -> Options {
    Options {
        memtable_bytes: 200,
        hash_salt: Some(3),
        fs: common::no_sync_fs(),
        block_bytes: 64,
        l0_compaction_trigger: 3,
        base_level_bytes: 300,
        level_size_ratio: 2,
        table_target_bytes: 200,
        // Every table filtered, however small.
        filter_policy: Some(FilterPolicy::uniform(FilterKind::BlockedBloom { bits_per_key: 10.0 })),
        prefix_extractor: e,
        ..Options::default()
    }
}

/// `a` with its last byte raised: the end of a range within `a`'s prefix.
fn raised(a: &[u8]) -> Vec<u8> {
    let mut b = a.to_vec();
    match b.last_mut() {
        Some(x) if *x < u8::MAX => *x += 1,
        _ => b.push(0),
    }
    b
}

fn run(ops: Vec<Op>) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let mut e = extractor(1);
    let mut db = Db::open(dir.path(), options(e)).unwrap();
    let mut model = Model::new();
    let mut skipped = 0;
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
            Op::Prefix(p) => {
                let want: Vec<_> = model
                    .iter()
                    .filter(|(k, _)| k.starts_with(&p))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                assert_eq!(pairs(db.prefix(&p)), want, "prefix {p:?} under {e:?}");
                let back: Vec<_> = db.prefix(&p).rev().map(|r| r.unwrap().0.to_vec()).collect();
                assert_eq!(
                    back,
                    want.iter().rev().map(|(k, _)| k.clone()).collect::<Vec<_>>(),
                    "rev prefix {p:?}"
                );
            }
            Op::Range(a, b, inclusive) => {
                let b = b.unwrap_or_else(|| raised(&a));
                let hi =
                    if inclusive { Bound::Included(b.as_slice()) } else { Bound::Excluded(b.as_slice()) };
                if a <= b {
                    let want = model_range(&model, Bound::Included(&a), hi);
                    assert_eq!(
                        pairs(db.range((Bound::Included(a.as_slice()), hi))),
                        want,
                        "range {a:?}..{b:?}"
                    );
                }
            }
            Op::Flush => db.flush().unwrap(),
            Op::Compact => db.compact().unwrap(),
            Op::Reopen(i) => {
                db.close().unwrap();
                drop(db);
                e = extractor(i);
                db = Db::open(dir.path(), options(e)).unwrap();
            }
        }
        skipped = db.stats().levels.iter().map(|l| l.prefix_skipped).sum::<u64>().max(skipped);
    }
    assert_eq!(pairs(db.iter()), model_range(&model, Bound::Unbounded, Bound::Unbounded));
    skipped
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn scans_match_btreemap_with_extractors_changed_across_reopens(ops in prop::collection::vec(op(), 1..250)) {
        run(ops);
    }
}

/// Tables whose key ranges span a prefix they lack (`a…` and `c…` keys, no
/// `b…`), so that the model's scans of `b` do skip tables by their filters:
/// the model test above exercises the skipping, not only the reading.
#[test]
fn the_model_skips_tables() {
    let mut ops: Vec<Op> = (0..60u8)
        .flat_map(|i| {
            let k = vec![if i % 2 == 0 { b'a' } else { b'c' }, b'a' + (i / 2) % 3, i];
            [Op::Put(k, vec![i]), if i % 10 == 9 { Op::Flush } else { Op::Prefix(vec![b'b', i]) }]
        })
        .collect();
    ops.extend([
        Op::Prefix(b"b".to_vec()),
        Op::Range(b"ba".to_vec(), None, false),
        Op::Compact,
        Op::Prefix(b"bc".to_vec()),
    ]);
    assert!(run(ops) > 0, "no table was ever skipped");
}

fn grouped_db(dir: &std::path::Path, e: Option<PrefixExtractor>) -> Db {
    let opts = Options {
        hash_salt: Some(5),
        auto_compaction: false,
        filter_policy: Some(FilterPolicy::uniform(FilterKind::BinaryFuse8)),
        prefix_extractor: e,
        ..Options::default()
    };
    let db = Db::open(dir, opts).unwrap();
    // Four level-0 tables, each with every tenth group of its own.
    for t in 0..4u32 {
        for g in 0..1000u32 {
            if g % 4 == t {
                for i in 0..3 {
                    db.put(format!("g{g:05}:{i}"), b"v").unwrap();
                }
            }
        }
        db.flush().unwrap();
    }
    db
}

#[test]
fn absent_prefixes_open_no_table_and_present_ones_one() {
    let dir = tempfile::tempdir().unwrap();
    let db = grouped_db(dir.path(), Some(PrefixExtractor::up_to(b':')));
    let before = db.stats();
    for g in 0..200u32 {
        assert_eq!(db.prefix(format!("g{:05}:", g * 5 + 1000)).count(), 0);
    }
    let absent = db.stats().since(&before);
    let l0 = &absent.levels[0];
    // Groups from 1000 on lie past every table's key range: the ranges
    // alone rule every table out, before any filter is asked.
    assert_eq!((l0.scan_tables_opened, l0.prefix_probes), (0, 0));
    let before = db.stats();
    // Groups 10 to 985 lie within every table's key range, so only the
    // filters rule tables out.
    for g in 0..190u32 {
        assert_eq!(db.prefix(format!("g{:05}:", g * 5 + 10)).count(), 3, "group {}", g * 5 + 10);
    }
    let present = db.stats().since(&before).levels[0].clone();
    // Each group lives in one of the four tables; the others are skipped
    // but for a false positive now and then.
    assert_eq!(present.prefix_probes, 760);
    assert!(present.prefix_skipped >= 570 - 20, "{present:?}");
    assert_eq!(present.scan_tables_opened, 760 - present.prefix_skipped);
    assert_eq!(present.prefix_false_positives, present.scan_tables_opened - 190);
    // Read from the other end, the same tables are asked, skipped and opened.
    let before = db.stats();
    for g in 0..190u32 {
        assert_eq!(db.prefix(format!("g{:05}:", g * 5 + 10)).rev().count(), 3);
    }
    let back = db.stats().since(&before).levels[0].clone();
    assert_eq!(
        (back.prefix_probes, back.prefix_skipped, back.scan_tables_opened, back.prefix_false_positives),
        (
            present.prefix_probes,
            present.prefix_skipped,
            present.scan_tables_opened,
            present.prefix_false_positives
        )
    );
    // Absent groups inside the tables' ranges: nothing opened but false positives.
    let before = db.stats();
    for g in 0..190u32 {
        assert_eq!(db.prefix(format!("g{:05}:x", g * 5 + 10)).count(), 0);
        let (a, b) = (format!("g{:05}:0", g * 5 + 11), format!("g{:05}:9", g * 5 + 11));
        assert_eq!(db.range(a.as_str()..b.as_str()).count(), 3);
    }
    let mid = db.stats().since(&before).levels[0].clone();
    assert_eq!(mid.prefix_probes, 1520);
    assert!(mid.prefix_skipped >= 1140 - 40, "{mid:?}");
    // The first loop's groups are all false positives in the tables that
    // hold them: no key `gNNNNN:x` exists.
    assert!(mid.prefix_false_positives >= 190, "{mid:?}");
}

#[test]
fn without_an_extractor_or_with_another_nothing_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    drop(grouped_db(dir.path(), None));
    for e in [None, Some(PrefixExtractor::up_to(b':')), Some(PrefixExtractor::fixed(7))] {
        let opts = Options { prefix_extractor: e, auto_compaction: false, ..Options::default() };
        let db = Db::open(dir.path(), opts).unwrap();
        let before = db.stats();
        for g in 10..110u32 {
            assert_eq!(db.prefix(format!("g{g:05}:")).count(), 3);
        }
        let l0 = db.stats().since(&before).levels[0].clone();
        assert_eq!((l0.prefix_probes, l0.prefix_skipped), (0, 0), "{e:?}");
        assert_eq!(l0.scan_tables_opened, 400, "{e:?}");
    }
}

#[test]
fn a_corrupt_prefix_filter_fails_open() {
    let dir = tempfile::tempdir().unwrap();
    let e = Some(PrefixExtractor::up_to(b':'));
    let db = grouped_db(dir.path(), e);
    let tables: Vec<_> = db.tables().into_iter().map(|t| t.path).collect();
    db.close().unwrap();
    drop(db);
    // Damage the middle of every table's filter block.
    for path in &tables {
        let mut bytes = std::fs::read(path).unwrap();
        let footer = Footer::decode(&bytes).unwrap();
        let at = usize::try_from(footer.filter.offset + footer.filter.size_with_trailer() / 2).unwrap();
        bytes[at] ^= 0x5a;
        std::fs::write(path, bytes).unwrap();
    }
    let opts = Options { prefix_extractor: e, auto_compaction: false, ..Options::default() };
    let db = Db::open(dir.path(), opts).unwrap();
    let before = db.stats();
    for g in 0..1000u32 {
        assert_eq!(db.prefix(format!("g{g:05}:")).count(), 3, "group {g}");
    }
    let l0 = db.stats().since(&before).levels[0].clone();
    assert_eq!(l0.filters_dropped, 4);
    assert_eq!((l0.prefix_probes, l0.prefix_skipped), (0, 0));
}

#[test]
fn range_scans_open_only_the_tables_they_meet() {
    let dir = tempfile::tempdir().unwrap();
    // Small tables: these entries, of equal values and (settled) sequence
    // number 0, compress to a few bytes each.
    let opts = Options {
        table_target_bytes: 4 << 10,
        auto_compaction: false,
        hash_salt: Some(1),
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    for i in 0..20_000u32 {
        db.put(format!("k{i:06}"), [7u8; 20]).unwrap();
    }
    db.flush().unwrap();
    db.compact().unwrap();
    let tables = db.tables();
    let deep: Vec<_> = tables.iter().filter(|t| t.level > 0).collect();
    assert!(deep.len() >= 8, "{} tables below level 0", deep.len());
    let level = deep[0].level;
    // A range inside one table opens that table alone, and stops there.
    let mid = deep[deep.len() / 2];
    let (a, b) = (mid.record.smallest.clone(), mid.record.largest.clone());
    let before = db.stats();
    let n = db.range((Bound::Included(a.as_slice()), Bound::Included(b.as_slice()))).count();
    assert_eq!(n as u64, mid.record.entries);
    let s = db.stats().since(&before);
    assert_eq!(s.levels[level].scan_tables_opened, 1, "{:?}", s.levels[level]);
    // A range past every key opens nothing.
    let before = db.stats();
    assert_eq!(db.range("l".."m").count(), 0);
    assert_eq!(db.stats().since(&before).levels.iter().map(|l| l.scan_tables_opened).sum::<u64>(), 0);
}
