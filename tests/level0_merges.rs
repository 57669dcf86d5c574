//! When level 0 merges, and where to (issue 69): it waits, between its two
//! triggers, until it holds as many bytes as level 1; and a merge that would
//! leave level 1 over its target above an empty level 2 writes to level 2.

use siftdb::{Compression, CompressionPolicy, Db, Options, Stats};

fn opts() -> Options {
    Options {
        memtable_bytes: 64 << 10,
        table_target_bytes: 32 << 10,
        hash_salt: Some(69),
        auto_compaction: false,
        compression: CompressionPolicy::uniform(Compression::None),
        l0_compaction_trigger: 2,
        l0_compaction_trigger_max: 5,
        ..Options::default()
    }
}

/// Keys spread over the key space, as a random fill writes them.
fn key(i: u64) -> String {
    format!("{:016x}", i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

fn value(i: u64) -> String {
    format!("value-{i:08}-{}", "y".repeat(60))
}

/// `n` keys from `from`, then a flush.
fn fill_and_flush(db: &Db, from: u64, n: u64) {
    for i in from..from + n {
        db.put(key(i), value(i)).unwrap();
    }
    db.flush().unwrap();
}

fn level(stats: &Stats, n: usize) -> (u64, u64) {
    stats.levels.get(n).map_or((0, 0), |l| (l.tables, l.bytes))
}

#[test]
fn level_0_merges_once_it_holds_level_1s_bytes_or_its_most_tables() {
    let tmp = tempfile::tempdir().unwrap();
    // Level 1's target far above what the test writes: only level 0 moves.
    let o = Options { base_level_bytes: 1 << 30, ..opts() };
    let db = Db::open(tmp.path(), o.clone()).unwrap();
    let per_flush = 400;
    let (mut next, mut merges, mut waited_past_least, mut merged_at_most_under_level_1) = (0, 0, 0, 0);
    for _ in 0..40 {
        fill_and_flush(&db, next, per_flush);
        next += per_flush;
        let before = db.stats();
        let ((n0, bytes0), (_, bytes1)) = (level(&before, 0), level(&before, 1));
        db.compact_due().unwrap();
        let after = db.stats();
        let n0 = usize::try_from(n0).unwrap();
        let merged = level(&after, 0).0 == 0;
        let due = n0 >= o.l0_compaction_trigger && (bytes0 >= bytes1 || n0 >= o.l0_compaction_trigger_max);
        assert_eq!(
            merged, due,
            "{n0} level-0 tables of {bytes0} bytes over {bytes1} bytes of level 1: merged {merged}"
        );
        if merged {
            merges += 1;
            if n0 == o.l0_compaction_trigger_max && bytes0 < bytes1 {
                merged_at_most_under_level_1 += 1;
            }
        } else if n0 >= o.l0_compaction_trigger {
            waited_past_least += 1;
        }
        assert!(level(&after, 2).0 == 0, "nothing reaches level 2: {:?}", after.levels);
    }
    assert!(merges >= 5, "{merges} merges");
    assert!(waited_past_least >= 5, "level 0 waited past its least trigger {waited_past_least} times");
    assert!(merged_at_most_under_level_1 >= 2, "{merged_at_most_under_level_1} merges at the cap");
    for i in (0..next).step_by(13) {
        assert_eq!(db.get(key(i)).unwrap().as_deref(), Some(value(i).as_bytes()), "key {i}");
    }
}

#[test]
fn a_fixed_trigger_when_the_most_is_the_least() {
    let tmp = tempfile::tempdir().unwrap();
    let o = Options { base_level_bytes: 1 << 30, l0_compaction_trigger_max: 0, ..opts() };
    let db = Db::open(tmp.path(), o).unwrap();
    for round in 0..12 {
        fill_and_flush(&db, round * 400, 400);
        db.compact_due().unwrap();
        let expected = if round % 2 == 1 { 0 } else { 1 };
        assert_eq!(level(&db.stats(), 0).0, expected, "round {round}");
    }
}

#[test]
fn a_merge_that_would_overfill_level_1_writes_to_an_empty_level_2() {
    let tmp = tempfile::tempdir().unwrap();
    // The default (Monkey) policy, whose levels differ in bits per key.
    let o = Options { base_level_bytes: 400 << 10, ..opts() };
    let db = Db::open(tmp.path(), o.clone()).unwrap();
    let per_flush = 400;
    let mut next = 0;
    let mut through = None;
    for round in 0..40 {
        fill_and_flush(&db, next, per_flush);
        next += per_flush;
        let before = db.stats();
        db.compact_due().unwrap();
        let after = db.stats();
        if level(&before, 2).0 == 0 && level(&after, 2).0 > 0 {
            through = Some((round, before, after));
            break;
        }
    }
    let (round, before, after) = through.expect("level 2 was reached");
    let ((_, bytes0), (_, bytes1)) = (level(&before, 0), level(&before, 1));
    assert!(bytes0 + bytes1 > o.base_level_bytes, "round {round}: {bytes0} + {bytes1} bytes");
    // Levels 0 and 1 went to level 2 in one merge, written once, moved
    // nowhere: level 1 is empty, and level 2 was merged into, not moved into.
    assert_eq!(level(&after, 0).0, 0, "{:?}", after.levels);
    assert_eq!(level(&after, 1).0, 0, "{:?}", after.levels);
    let l2 = &after.levels[2];
    assert_eq!(l2.write_jobs, 1, "{l2:?}");
    assert_eq!(l2.bytes_moved_in, 0, "{l2:?}");
    assert_eq!(after.tables_moved, 0);
    assert_eq!((l2.bytes_merged_in, l2.bytes_rewritten), (bytes0, bytes1));
    assert_eq!(after.levels[1].write_jobs, before.levels[1].write_jobs, "no job wrote level 1");
    // Its tables carry level 2's filter plan.
    assert_eq!(l2.tables_over_target, 0, "{l2:?}");

    // The next merge starts level 1 over, and every key reads back, also
    // after a reopen.
    fill_and_flush(&db, next, per_flush);
    fill_and_flush(&db, next + per_flush, per_flush);
    next += 2 * per_flush;
    db.compact_due().unwrap();
    let stats = db.stats();
    assert!(level(&stats, 1).0 > 0 && level(&stats, 0).0 == 0, "{:?}", stats.levels);
    db.close().unwrap();
    drop(db);
    let db = Db::open(tmp.path(), o).unwrap();
    let all: Vec<_> = db.iter().collect::<Result<_, _>>().unwrap();
    assert_eq!(all.len() as u64, next);
    for i in (0..next).step_by(7) {
        assert_eq!(db.get(key(i)).unwrap().as_deref(), Some(value(i).as_bytes()), "key {i}");
    }
}

/// Waiting for level 1's bytes stops below the slowdown trigger: with a
/// cap past the stop trigger, writes stopped for a level-0 merge that never
/// came (the stall test hung).
#[test]
fn the_wait_never_holds_level_0_where_writes_stop() {
    let tmp = tempfile::tempdir().unwrap();
    let o = Options {
        memtable_bytes: 4 << 10,
        auto_compaction: true,
        base_level_bytes: 1 << 30,
        l0_compaction_trigger: 2,
        l0_compaction_trigger_max: 50,
        l0_slowdown_trigger: 3,
        l0_stop_trigger: 4,
        ..opts()
    };
    let db = std::sync::Arc::new(Db::open(tmp.path(), o).unwrap());
    let (done, finished) = std::sync::mpsc::channel();
    let writer = std::sync::Arc::clone(&db);
    std::thread::spawn(move || {
        for i in 0..4_000 {
            writer.put(key(i), value(i)).unwrap();
        }
        done.send(()).unwrap();
    });
    finished.recv_timeout(std::time::Duration::from_secs(120)).expect("writes went on");
    db.wait_for_background_work().unwrap();
    assert!(db.stats().compactions > 0);
    for i in (0..4_000).step_by(11) {
        assert_eq!(db.get(key(i)).unwrap().as_deref(), Some(value(i).as_bytes()), "key {i}");
    }
}
