//! What the engine chose is visible (issue 27 step 3): a table whose xor or
//! fuse build fell back, and a table whose filter misses its level's
//! planned rate, are counted per level in `Stats` and named in its text.

use siftdb::{Db, FilterKind, FilterPolicy, Options};

fn opts(policy: &str, inject: bool) -> Options {
    Options {
        filter_policy: Some(policy.parse::<FilterPolicy>().unwrap()),
        auto_compaction: false,
        inject_filter_build_failure: inject,
        ..Options::default()
    }
}

fn load(db: &Db, from: u32) {
    for i in from..from + 2000 {
        db.put(format!("key{i:06}").as_bytes(), b"v").unwrap();
    }
    db.flush().unwrap();
}

#[test]
fn a_fallback_is_counted_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts("xor8", true)).unwrap();
    load(&db, 0);
    let stats = db.stats();
    let l0 = &stats.levels[0];
    assert!(matches!(db.tables()[0].filter, FilterKind::BlockedBloom { .. }));
    assert_eq!((l0.tables, l0.filter_fallbacks), (1, 1), "{stats}");
    // The fallback's blocked Bloom (~1%) misses xor8's 0.39%.
    assert_eq!(l0.tables_over_target, 1, "{stats}");
    let text = stats.to_string();
    assert!(text.contains("fell back to blocked Bloom: L0 1"), "{text}");
    assert!(text.contains("misses the level's planned rate: L0 1 of 1"), "{text}");
}

#[test]
fn a_table_from_an_older_plan_is_counted_until_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts("blocked-bloom:4", false)).unwrap();
    load(&db, 0);
    assert_eq!(db.stats().levels[0].tables_over_target, 0, "a table on its own plan");
    db.close().unwrap();
    drop(db);
    let db = Db::open(dir.path(), opts("xor16", false)).unwrap();
    load(&db, 10_000);
    let stats = db.stats();
    assert_eq!((stats.levels[0].tables, stats.levels[0].tables_over_target), (2, 1), "{stats}");
    assert_eq!(stats.levels[0].filter_fallbacks, 0);
    // Compaction rewrites it under the new plan once level 0 is merged
    // down (its trigger is 4 tables; level 0 tables are never refreshed in
    // place, they are short-lived).
    for from in [20_000, 30_000] {
        load(&db, from);
    }
    db.compact().unwrap();
    assert_eq!(db.stats().levels[0].tables, 0);
    let stats = db.stats();
    assert!(stats.levels.iter().all(|l| l.tables_over_target == 0), "{stats}");
}

#[test]
fn the_plan_is_made_once_per_shape_not_per_call() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts("monkey:10", false)).unwrap();
    for from in [0, 10_000, 20_000, 30_000, 40_000] {
        load(&db, from);
    }
    db.compact().unwrap();
    let before = db.stats().filter_plans;
    assert!(before > 0);
    for _ in 0..100 {
        let _ = db.stats();
    }
    assert!(
        db.stats().filter_plans <= before + 1,
        "{} plans for 100 stats() calls",
        db.stats().filter_plans - before
    );
}
