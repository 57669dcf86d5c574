//! `Db::wait_for_background_work` returns once flushes and compactions are
//! done and the picker has nothing left, and returns an error, not a hang,
//! on a closed or failed database.

use std::sync::Arc;
use std::time::{Duration, Instant};

use siftdb::fs::{FaultFs, FaultOp};
use siftdb::{Db, Error, Options, Stats};

fn opts(auto_compaction: bool) -> Options {
    Options {
        memtable_bytes: 4 << 10,
        table_target_bytes: 8 << 10,
        base_level_bytes: 32 << 10,
        hash_salt: Some(5),
        auto_compaction,
        ..Options::default()
    }
}

fn put_range(db: &Db, from: u32, to: u32) {
    for i in from..to {
        db.put(format!("key{:08}", i.wrapping_mul(2_654_435_761) % 100_000), format!("value {i}")).unwrap();
    }
}

/// The picker's condition, as `Stats` shows it: no frozen memtable, level 0
/// under its trigger (at least `l0_compaction_trigger` tables holding level
/// 1's bytes, or its most tables, below the slowdown trigger), every deeper
/// level but the last within its target.
fn over_triggers(stats: &Stats, o: &Options) -> Vec<String> {
    let mut over = Vec::new();
    if stats.immutable_memtables > 0 {
        over.push(format!("{} frozen memtables", stats.immutable_memtables));
    }
    let least = o.l0_compaction_trigger as u64;
    let most = (o.l0_compaction_trigger_max.min(o.l0_slowdown_trigger - 1) as u64).max(least);
    let level1_bytes = stats.levels.get(1).map_or(0, |l| l.bytes);
    for l in stats.levels.iter().filter(|l| l.level + 1 < o.max_levels) {
        let over_target = if l.level == 0 {
            l.tables >= most || (l.tables >= least && l.bytes >= level1_bytes)
        } else {
            l.bytes >= o.level_target_bytes(l.level)
        };
        if over_target {
            over.push(format!("L{}: {} tables, {} bytes", l.level, l.tables, l.bytes));
        }
    }
    over
}

#[test]
fn a_fresh_database_is_settled_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts(true)).unwrap();
    let started = Instant::now();
    db.wait_for_background_work().unwrap();
    assert!(started.elapsed() < Duration::from_secs(2), "took {:?}", started.elapsed());
}

#[test]
fn after_the_wait_nothing_is_past_a_trigger() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts(true);
    let db = Db::open(dir.path(), o.clone()).unwrap();
    put_range(&db, 0, 20_000);
    db.wait_for_background_work().unwrap();
    let stats = db.stats();
    assert!(stats.flushes >= 8 && stats.compactions >= 2, "too little background work to tell\n{stats}");
    let over = over_triggers(&stats, &o);
    assert!(over.is_empty(), "still due after the wait: {over:?}\n{stats}");
}

#[test]
fn the_wait_finishes_work_the_thread_was_never_told_of() {
    // Level 0 past its trigger with no background compaction, then reopened
    // with it: opening wakes no thread, so only the wait can start the
    // merge. Without it the tree stays past the trigger.
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts(false)).unwrap();
    for round in 0..6 {
        put_range(&db, round * 100, round * 100 + 100);
        db.flush().unwrap();
    }
    let o = opts(true);
    let level0 = db.stats().levels[0].tables;
    assert!(level0 >= o.l0_compaction_trigger as u64, "{}", db.stats());
    // With auto_compaction off there is nothing to wait for but flushes.
    db.wait_for_background_work().unwrap();
    assert_eq!(db.stats().levels[0].tables, level0);
    db.close().unwrap();
    drop(db);
    let db = Db::open(dir.path(), o.clone()).unwrap();
    assert!(!over_triggers(&db.stats(), &o).is_empty(), "{}", db.stats());
    db.wait_for_background_work().unwrap();
    let stats = db.stats();
    assert!(over_triggers(&stats, &o).is_empty(), "{stats}");
    assert!(stats.compactions >= 1, "{stats}");
}

#[test]
fn a_closed_or_failed_database_is_an_error_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts(true)).unwrap();
    db.close().unwrap();
    assert!(matches!(db.wait_for_background_work(), Err(Error::Closed)));

    let dir = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    let db = Db::open(dir.path(), Options { fs: Arc::new(fs.clone()), ..opts(true) }).unwrap();
    put_range(&db, 0, 50);
    // Every write fails from here: the flush (its WAL rotation, or the
    // background table write) turns the database read-only, and the wait
    // reports it rather than wait for a flush that will never come.
    fs.fail_after(FaultOp::Write, 0);
    let _ = db.flush();
    assert!(matches!(db.wait_for_background_work(), Err(Error::WritesDisabled(_))));
}
