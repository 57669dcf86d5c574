//! The filter policy keeps its promises on every tree: skip-last strips
//! only the last level (issue 27), the policy is stored in the database and
//! one grammar serves everywhere (issue 25).

mod common;

use proptest::prelude::*;
use siftdb::policy::FilterPolicy;
use siftdb::{Db, FilterKind, Options, Stats, WriteBatch};

/// A tree shape: entries flushed per memtable, level-1 target and table
/// size in entries of ~60 bytes, and the size ratio.
#[derive(Debug, Clone, Copy)]
struct Shape {
    flush_keys: u64,
    base_tables: u64,
    table_keys: u64,
    ratio: u64,
}

const ENTRY: u64 = 60;

fn opts(policy: Option<FilterPolicy>, s: Shape, auto: bool) -> Options {
    Options {
        memtable_bytes: 64 << 20,
        hash_salt: Some(9),
        fs: common::no_sync_fs(),
        filter_policy: policy,
        block_bytes: 1024,
        base_level_bytes: s.base_tables * s.table_keys * ENTRY,
        level_size_ratio: s.ratio,
        table_target_bytes: s.table_keys * ENTRY,
        max_levels: 6,
        auto_compaction: auto,
        ..Options::default()
    }
}

fn key(i: u64) -> Vec<u8> {
    let x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i >> 7);
    format!("{x:016x}").into_bytes()
}

/// Loads `keys` keys a memtable at a time, compacting as a background
/// would (every fourth flush), then compacts.
fn load(db: &Db, keys: u64, s: Shape) {
    let mut flushes = 0;
    for start in (0..keys).step_by(usize::try_from(s.flush_keys).unwrap()) {
        let mut batch = WriteBatch::new();
        for i in start..(start + s.flush_keys).min(keys) {
            batch.put(key(i), format!("value-{i:08}-{:016x}", i * 7919).as_bytes());
        }
        db.write(batch).unwrap();
        db.flush().unwrap();
        flushes += 1;
        if flushes % 4 == 0 {
            db.compact().unwrap();
        }
    }
    db.compact().unwrap();
}

fn report(stats: &Stats) -> String {
    let lines: Vec<String> = stats
        .levels
        .iter()
        .filter(|l| l.tables > 0)
        .map(|l| {
            let kinds: Vec<String> = l.filter_kinds.iter().map(ToString::to_string).collect();
            format!(
                "L{} {} tables {} keys {kinds:?} {:.2} b/k",
                l.level,
                l.tables,
                l.keys,
                l.filter_bits_per_key()
            )
        })
        .collect();
    lines.join("\n")
}

/// Tables of `level` written without a filter (`LevelStats::filter_kinds`
/// lists each kind once, so it cannot count them).
fn unfiltered_tables(db: &Db, level: usize) -> u64 {
    db.tables().iter().filter(|t| t.level == level && t.filter == FilterKind::None).count() as u64
}

/// The deepest level holding tables.
fn last_level(stats: &Stats) -> usize {
    stats.levels.iter().rposition(|l| l.tables > 0).unwrap()
}

/// Checks what every policy form promises after `compact()`; the deepest
/// level the tree reached.
fn check_promises(policy: &str, keys: u64, s: Shape) -> usize {
    let policy: FilterPolicy = policy.parse().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts(Some(policy.clone()), s, false)).unwrap();
    load(&db, keys, s);
    let stats = db.stats();
    let why = format!("{policy} at {keys} keys, {s:?}\n{}", report(&stats));
    let last = last_level(&stats);
    let skips_last = policy.to_string().ends_with("+skip-last");
    if skips_last && last > 0 {
        assert_eq!(unfiltered_tables(&db, last), stats.levels[last].tables, "{why}");
    }
    let filtered_levels = if skips_last && last > 0 { 0..last } else { 0..last + 1 };
    for l in filtered_levels {
        assert_eq!(unfiltered_tables(&db, l), 0, "L{l} left unfiltered: {why}");
    }
    // Monkey's budget is its own issue (28); a fixed kind spends exactly
    // its own price, table by table.
    if !policy.to_string().starts_with("monkey:") {
        for t in db.tables() {
            let priced = siftdb::policy::table_filter_bytes(t.filter, t.entries);
            assert_eq!(t.filter_bytes, priced, "table {} {why}", t.file_number);
        }
    }
    last
}

const SMALL: Shape = Shape { flush_keys: 500, base_tables: 4, table_keys: 400, ratio: 10 };

#[test]
fn skip_last_strips_only_the_last_level() {
    // The case: a level that was the deepest when its tables were
    // written stays filtered once a deeper one appears.
    check_promises("fuse8+skip-last", 40_000, SMALL);
    check_promises("monkey:10+skip-last", 40_000, SMALL);
}

/// The five forms the property test draws from, each pinned on a tree of
/// four levels or more (issue 59: six random cases over five policies may
/// never meet a deep tree), so each promise is checked where a level sits
/// between level 0 and the last.
const FORMS: [&str; 5] = [
    "monkey:10+skip-last",
    "xor16",
    "fuse8+skip-last",
    "per-level:blocked-bloom:10,xor8",
    "blocked-bloom:10+skip-last",
];

#[test]
fn every_policy_form_keeps_its_promise_on_a_deep_tree() {
    for policy in FORMS {
        let last = check_promises(policy, 40_000, SMALL);
        assert!(last >= 3, "{policy}: the tree reached only L{last}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    #[test]
    fn every_policy_form_keeps_its_promise(
        keys in 1_000u64..300_000,
        flush_keys in 800u64..3_000,
        base_tables in 2u64..6,
        table_keys in 300u64..1_500,
        ratio in 4u64..11,
        which in 0usize..5,
    ) {
        check_promises(FORMS[which], keys, Shape { flush_keys, base_tables, table_keys, ratio });
    }
}

#[test]
fn background_compaction_settles_with_no_unfiltered_level_above_the_last() {
    let dir = tempfile::tempdir().unwrap();
    let policy: FilterPolicy = "xor8+skip-last".parse().unwrap();
    let db = Db::open(dir.path(), opts(Some(policy), SMALL, true)).unwrap();
    for start in (0..40_000).step_by(500) {
        let mut batch = WriteBatch::new();
        for i in start..start + 500 {
            batch.put(key(i), format!("value-{i:08}").as_bytes());
        }
        db.write(batch).unwrap();
        db.flush().unwrap();
    }
    db.wait_for_background_work().unwrap();
    let stats = db.stats();
    let last = last_level(&stats);
    let bad: Vec<usize> = (1..last).filter(|&l| unfiltered_tables(&db, l) > 0).collect();
    assert!(bad.is_empty(), "levels {bad:?} stay unfiltered\n{}", report(&stats));
    assert!(last >= 2, "the tree reached only L{last}\n{}", report(&stats));
    // Settled means the background loop has stopped, not merely that the
    // promise holds at this instant: nothing moves without new writes.
    let tables = table_set(&db);
    std::thread::sleep(std::time::Duration::from_millis(200));
    let later = db.stats();
    assert_eq!(
        (table_set(&db), later.compactions, later.filter_refreshes),
        (tables, stats.compactions, stats.filter_refreshes),
        "the tree moved after the wait\n{}\nthen\n{}",
        report(&stats),
        report(&later)
    );
}

/// Each table's file number and level, in order.
fn table_set(db: &Db) -> Vec<(u64, usize)> {
    let mut set: Vec<(u64, usize)> = db.tables().iter().map(|t| (t.file_number, t.level)).collect();
    set.sort_unstable();
    set
}

#[test]
fn the_policy_is_stored_and_kept_until_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let xor16: FilterPolicy = "xor16".parse().unwrap();
    let db = Db::open(dir.path(), opts(Some(xor16.clone()), SMALL, false)).unwrap();
    db.put(b"a", b"1").unwrap();
    db.close().unwrap();
    drop(db);
    // Reopened with no policy named: the stored one, not the default.
    let db = Db::open(dir.path(), opts(None, SMALL, false)).unwrap();
    assert_eq!(db.filter_policy(), &xor16);
    db.flush().unwrap();
    assert_eq!(db.tables()[0].filter, FilterKind::Xor16);
    assert_eq!(db.stats().replaced_policy, None);
    db.close().unwrap();
    drop(db);
    // A read-only open keeps it too.
    let ro = Db::open_read_only(dir.path(), opts(None, SMALL, false)).unwrap();
    assert_eq!(ro.filter_policy(), &xor16);
    drop(ro);
    // An explicit, different policy replaces it, says so, and is kept.
    let fuse: FilterPolicy = "fuse8+skip-last".parse().unwrap();
    let db = Db::open(dir.path(), opts(Some(fuse.clone()), SMALL, false)).unwrap();
    let stats = db.stats();
    assert_eq!(
        (stats.filter_policy.as_str(), stats.replaced_policy.as_deref()),
        ("fuse8+skip-last", Some("xor16"))
    );
    assert!(stats.to_string().contains("replaced xor16"), "{stats}");
    db.close().unwrap();
    drop(db);
    let db = Db::open(dir.path(), opts(None, SMALL, false)).unwrap();
    assert_eq!(db.filter_policy(), &fuse);
    assert_eq!(db.stats().replaced_policy.as_deref(), Some("xor16"));
}

#[test]
fn a_new_database_stores_the_default() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts(None, SMALL, false)).unwrap();
    assert_eq!(db.filter_policy(), &FilterPolicy::default());
    db.close().unwrap();
    drop(db);
    let db = Db::open(dir.path(), opts(Some(FilterPolicy::default()), SMALL, false)).unwrap();
    assert_eq!(db.stats().replaced_policy, None, "the same policy replaces nothing");
}

#[test]
fn every_policy_form_round_trips() {
    for name in [
        "none",
        "fuse8",
        "blocked-bloom:10",
        "bloom:7.5+skip-last",
        "per-level:blocked-bloom:10,fuse8",
        "per-level:xor8,fuse16+skip-last",
        "monkey:10",
        "monkey:2.5+skip-last",
    ] {
        let p: FilterPolicy = name.parse().unwrap();
        assert_eq!(p.to_string(), name);
        assert_eq!(p.to_string().parse::<FilterPolicy>().unwrap(), p);
    }
}

/// Loads keys `from..to` a memtable at a time, then compacts.
fn load_range(db: &Db, from: u64, to: u64) {
    for start in (from..to).step_by(500) {
        let mut batch = WriteBatch::new();
        for i in start..(start + 500).min(to) {
            batch.put(key(i), format!("value-{i:08}").as_bytes());
        }
        db.write(batch).unwrap();
        db.flush().unwrap();
    }
    db.compact().unwrap();
}

#[test]
fn a_tree_that_grows_a_level_leaves_no_level_above_the_last_unfiltered() {
    for policy in ["fuse8+skip-last", "monkey:10+skip-last", "xor8+skip-last"] {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), opts(Some(policy.parse().unwrap()), SMALL, false)).unwrap();
        load_range(&db, 0, 4_000);
        let before = last_level(&db.stats());
        // Ten times the keys: the tree needs a deeper level, and the old
        // last level's tables (written without filters) sit above it.
        load_range(&db, 4_000, 40_000);
        let stats = db.stats();
        let last = last_level(&stats);
        assert!(last > before, "{policy}: the tree did not grow (L{before} -> L{last})\n{}", report(&stats));
        for l in 0..last {
            assert_eq!(unfiltered_tables(&db, l), 0, "{policy}: L{l} unfiltered\n{}", report(&stats));
        }
        assert_eq!(unfiltered_tables(&db, last), stats.levels[last].tables, "{policy}\n{}", report(&stats));
    }
}
