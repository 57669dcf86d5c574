//! Range filters in scans (issue 73): a model test against a `BTreeMap`,
//! with the range filter turned on, off and changed across reopens, over
//! point and range deletes; and the counters of scans that skip tables.

mod common;
#[path = "common/scan_model.rs"]
mod scan_model;

use std::ops::Bound;

use proptest::prelude::*;
use scan_model::{Model, model_range, pairs};
use siftdb::filter::FilterKind;
use siftdb::policy::FilterPolicy;
use siftdb::{Db, KeyImage, Options, RangeFilterPolicy};

#[derive(Debug, Clone)]
enum Op {
    Put(u64, Vec<u8>),
    Delete(u64),
    /// Deletes the keys whose images lie in `[a, a + len)`.
    DeleteRange(u64, u64),
    /// A scan from image `a + offset` over `len` more, either bound
    /// included or excluded or open, forwards and backwards.
    Scan {
        a: u64,
        offset: u64,
        len: u64,
        start: u8,
        end: u8,
    },
    Flush,
    Compact,
    Reopen(usize),
}

fn shifted(k: &[u8]) -> u64 {
    KeyImage::first_bytes().image(k) >> 12
}

/// The range filters a reopen chooses from (index 0: none).
fn range_filter(i: usize) -> Option<RangeFilterPolicy> {
    let default = RangeFilterPolicy::default();
    [
        None,
        Some(default),
        Some(RangeFilterPolicy { kind: FilterKind::BlockedBloom { bits_per_key: 6.0 }, ..default }),
        Some(RangeFilterPolicy { image: KeyImage::custom("be8>>12", shifted), ..default }),
    ][i % 4]
}

/// Images clustered in a few places, sparse and dense: `v << 32 | w`.
fn image() -> impl Strategy<Value = u64> {
    (0..24u64, prop::sample::select(vec![0u64, 1, 2, 3, 1000, 1 << 20, 1 << 31, 5 << 28]))
        .prop_map(|(v, w)| v << 32 | w)
}

/// An image's key: its 8 bytes big-endian, with a suffix one time in four
/// (keys sharing an image).
fn key_of(x: u64, suffix: bool) -> Vec<u8> {
    let mut k = x.to_be_bytes().to_vec();
    if suffix {
        k.push(7);
    }
    k
}

fn key(x: u64) -> Vec<u8> {
    key_of(x, x % 4 == 1)
}

fn op() -> impl Strategy<Value = Op> {
    let len = prop::sample::select(vec![0u64, 1, 15, 16, 255, 256, 4095, 1 << 20, 1 << 33]);
    prop_oneof![
        10 => (image(), prop::collection::vec(any::<u8>(), 0..6)).prop_map(|(x, v)| Op::Put(x, v)),
        3 => image().prop_map(Op::Delete),
        1 => (image(), len.clone()).prop_map(|(a, l)| Op::DeleteRange(a, l.max(1))),
        8 => (image(), 0..3000u64, len, 0..3u8, 0..3u8)
            .prop_map(|(a, offset, len, start, end)| Op::Scan { a, offset, len, start, end }),
        2 => Just(Op::Flush),
        1 => Just(Op::Compact),
        1 => any::<usize>().prop_map(Op::Reopen),
    ]
}

fn options(r: Option<RangeFilterPolicy>) -> Options {
    Options {
        memtable_bytes: 300,
        hash_salt: Some(3),
        fs: common::no_sync_fs(),
        block_bytes: 64,
        l0_compaction_trigger: 3,
        base_level_bytes: 400,
        level_size_ratio: 2,
        table_target_bytes: 300,
        filter_policy: Some(FilterPolicy::uniform(FilterKind::BlockedBloom { bits_per_key: 10.0 })),
        range_filter: r,
        ..Options::default()
    }
}

fn bound(kind: u8, k: &[u8]) -> Bound<&[u8]> {
    match kind {
        0 => Bound::Included(k),
        1 => Bound::Excluded(k),
        _ => Bound::Unbounded,
    }
}

/// Runs `ops`; returns the tables scans skipped by range.
fn run(ops: Vec<Op>) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let mut r = range_filter(1);
    let mut db = Db::open(dir.path(), options(r)).unwrap();
    let mut model = Model::new();
    let mut skipped = 0;
    for op in ops {
        match op {
            Op::Put(x, v) => {
                db.put(key(x), &v).unwrap();
                model.insert(key(x), v);
            }
            Op::Delete(x) => {
                db.delete(key(x)).unwrap();
                model.remove(&key(x));
            }
            Op::DeleteRange(a, len) => {
                let (lo, hi) = (key_of(a, false), key_of(a.saturating_add(len), false));
                if lo < hi {
                    db.delete_range(&lo, &hi).unwrap();
                    model.retain(|k, _| !(lo <= *k && *k < hi));
                }
            }
            Op::Scan { a, offset, len, start, end } => {
                let lo_x = a.saturating_add(offset);
                let (lo, hi) = (key_of(lo_x, offset % 3 == 1), key_of(lo_x.saturating_add(len), false));
                let (s, e) = (bound(start, &lo), bound(end, &hi));
                if lo <= hi && !(lo == hi && (start == 1 || end == 1)) {
                    let want = model_range(&model, s, e);
                    assert_eq!(pairs(db.range((s, e))), want, "{s:?}..{e:?} under {r:?}");
                    let back: Vec<_> = pairs(db.range((s, e)).rev());
                    assert_eq!(back, want.into_iter().rev().collect::<Vec<_>>(), "rev {s:?}..{e:?}");
                }
            }
            Op::Flush => db.flush().unwrap(),
            Op::Compact => db.compact().unwrap(),
            Op::Reopen(i) => {
                db.close().unwrap();
                drop(db);
                r = range_filter(i);
                db = Db::open(dir.path(), options(r)).unwrap();
            }
        }
        skipped = db.stats().levels.iter().map(|l| l.range_skipped).sum::<u64>().max(skipped);
    }
    assert_eq!(pairs(db.iter()), model_range(&model, Bound::Unbounded, Bound::Unbounded));
    skipped
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    #[test]
    fn scans_match_btreemap_with_range_filters_changed_across_reopens(
        ops in prop::collection::vec(op(), 1..300)
    ) {
        run(ops);
    }
}

/// Tables whose keys leave wide empty gaps, and scans into those gaps, so
/// that the model above does skip tables by range, not only read them.
#[test]
fn the_model_skips_tables() {
    let mut ops: Vec<Op> = (0..80u64)
        .flat_map(|i| {
            let x = (i % 20) << 32 | (i / 20) << 20;
            let scan = Op::Scan { a: x, offset: 2000, len: 255, start: 0, end: 1 };
            [Op::Put(x, vec![1]), if i % 10 == 9 { Op::Flush } else { scan }]
        })
        .collect();
    ops.extend([
        Op::Scan { a: 5 << 32, offset: 1000, len: 4095, start: 1, end: 0 },
        Op::Compact,
        Op::Scan { a: 7 << 32, offset: 2999, len: 16, start: 0, end: 2 },
    ]);
    assert!(run(ops) > 0, "no table was ever skipped by range");
}

/// Four level-0 tables of interleaved ids 2^20 apart: an empty range of 256
/// between two ids asks every table and opens (almost) none; a range
/// holding an id opens its table; without the policy nothing is asked.
#[test]
fn empty_ranges_skip_tables_and_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let opts =
        |r| Options { auto_compaction: false, hash_salt: Some(5), range_filter: r, ..Options::default() };
    let db = Db::open(dir.path(), opts(Some(RangeFilterPolicy::default()))).unwrap();
    for t in 0..4u64 {
        for i in (t..4000).step_by(4) {
            db.put((i << 20).to_be_bytes(), b"v").unwrap();
        }
        db.flush().unwrap();
    }
    let scan = |db: &Db, lo: u64, len: u64| {
        let (a, b) = (lo.to_be_bytes(), (lo + len).to_be_bytes());
        db.range(a.as_slice()..b.as_slice()).count()
    };
    let before = db.stats();
    for i in 0..1000u64 {
        assert_eq!(scan(&db, (i << 20) + 5000, 256), 0);
    }
    let l0 = &db.stats().since(&before).levels[0];
    // Every table meeting the bounds asked once a scan (the first scans lie
    // below the smallest key of three tables: skipped by key range).
    assert!((3990..=4000).contains(&l0.range_probes), "{l0:?}");
    assert!(l0.range_skipped + 10 >= l0.range_probes, "{} of {} skipped", l0.range_skipped, l0.range_probes);
    assert_eq!(l0.scan_tables_opened, l0.range_probes - l0.range_skipped);
    assert_eq!(l0.range_false_positives, l0.scan_tables_opened, "none held a key");
    let before = db.stats();
    for i in 0..100u64 {
        assert_eq!(scan(&db, (i << 20) - u64::from(i > 0) * 100, 256), 1);
    }
    let l0 = &db.stats().since(&before).levels[0];
    assert!(l0.scan_tables_opened >= 100 && l0.range_false_positives <= 2, "{l0:?}");
    db.close().unwrap();
    // The same tables without the policy: nothing asked, every table read.
    let db = Db::open(dir.path(), opts(None)).unwrap();
    let before = db.stats();
    for i in 0..100u64 {
        assert_eq!(scan(&db, (i << 20) + 5000, 256), 0);
    }
    let l0 = &db.stats().since(&before).levels[0];
    assert_eq!(l0.range_probes, 0);
    assert!(l0.scan_tables_opened >= 390, "{l0:?}");
}

/// With both scan filters, a table the prefix rules out is not asked by
/// range (each skip counted once, by the filter that made it), and a scan
/// the prefix cannot rule out may still be skipped by range.
#[test]
fn prefix_and_range_filters_work_together() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        auto_compaction: false,
        prefix_extractor: Some(siftdb::PrefixExtractor::fixed(4)),
        range_filter: Some(RangeFilterPolicy::default()),
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    // One table: prefixes "aaaa" and "cccc", each with ids 4,096 apart.
    for p in [b"aaaa", b"cccc"] {
        for i in 0..2000u32 {
            let mut k = p.to_vec();
            k.extend_from_slice(&(i << 12).to_be_bytes());
            db.put(k, b"v").unwrap();
        }
    }
    db.flush().unwrap();
    let scan = |lo: &[u8], hi: &[u8]| db.range(lo..hi).count();
    let before = db.stats();
    // Within "cccc", halfway between two ids (4,096 apart: buckets of 32).
    let at = |x: u32| [&b"cccc"[..], &x.to_be_bytes()[..]].concat();
    for i in 0..100u32 {
        assert_eq!(scan(&at((i << 12) + 2000), &at((i << 12) + 2100)), 0);
    }
    let l0 = &db.stats().since(&before).levels[0];
    // The "cccc" table: the prefix passes, the range rules it out.
    assert_eq!((l0.prefix_probes, l0.prefix_skipped), (100, 0), "{l0:?}");
    assert_eq!(l0.range_probes, 100, "{l0:?}");
    assert!(l0.range_skipped >= 98 && l0.scan_tables_opened <= 2, "{l0:?}");
    let before = db.stats();
    for i in 0..100u32 {
        let (a, b) =
            ([b"bbbb", &i.to_be_bytes()[..]].concat(), [b"bbbb", &(i + 1).to_be_bytes()[..]].concat());
        assert_eq!(scan(&a, &b), 0);
    }
    let l0 = &db.stats().since(&before).levels[0];
    // "bbbb" lies inside the table's key range and no key has it: the
    // prefix rules the table out (a false positive at most once or twice),
    // and the range filter is asked only where the prefix passed.
    assert!(l0.prefix_probes == 100 && l0.prefix_skipped >= 98, "{l0:?}");
    assert_eq!(l0.range_probes, l0.prefix_probes - l0.prefix_skipped, "{l0:?}");
}
