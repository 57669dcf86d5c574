//! Trivial moves (issue 69): a table that meets nothing at the level below
//! goes down as it is, by a manifest edit alone; its file lives on through
//! the move, a close and a reopen, and what overlaps is still merged.

use siftdb::{Compression, CompressionPolicy, Db, FilterKind, FilterPolicy, Options};

fn opts() -> Options {
    Options {
        memtable_bytes: 32 << 10,
        table_target_bytes: 16 << 10,
        base_level_bytes: 64 << 10,
        hash_salt: Some(69),
        auto_compaction: false,
        compression: CompressionPolicy::uniform(Compression::None),
        // One filter on every level: a table on plan at one level is on
        // plan at the next (under Monkey each level's bits differ).
        filter_policy: Some(FilterPolicy::uniform(FilterKind::BinaryFuse8)),
        ..Options::default()
    }
}

fn key(i: u32) -> String {
    format!("key{i:08}")
}

fn value(i: u32, round: u32) -> String {
    format!("value-{round}-{i:08}-{}", "x".repeat(40))
}

#[test]
fn keys_written_in_order_go_down_without_being_rewritten_and_survive_a_reopen() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Db::open(tmp.path(), opts()).unwrap();
    let n = 20_000;
    for i in 0..n {
        db.put(key(i), value(i, 0)).unwrap();
        if i % 2_000 == 1_999 {
            db.flush().unwrap();
            db.compact_due().unwrap();
        }
    }
    db.compact().unwrap();
    let stats = db.stats();
    assert!(
        stats.levels.iter().skip(2).any(|l| l.tables > 0),
        "a tree of several levels: {:?}",
        stats.levels
    );
    assert!(stats.tables_moved >= 10, "flushes of keys in order go down whole: {}", stats.tables_moved);
    // Each byte is written by its flush and (almost) never again.
    assert!(
        stats.compaction_bytes_written * 10 < stats.flush_bytes_written,
        "compactions wrote {} bytes for {} flushed",
        stats.compaction_bytes_written,
        stats.flush_bytes_written
    );
    for i in (0..n).step_by(7) {
        assert_eq!(db.get(key(i)).unwrap().as_deref(), Some(value(i, 0).as_bytes()), "key {i}");
    }
    db.close().unwrap();
    drop(db);

    // The moved files were never deleted: the reopened tree reads them all.
    let db = Db::open(tmp.path(), opts()).unwrap();
    let all: Vec<_> = db.iter().collect::<Result<_, _>>().unwrap();
    assert_eq!(all.len(), n as usize);
    for (i, (k, v)) in (0..n).zip(&all) {
        assert_eq!((&k[..], &v[..]), (key(i).as_bytes(), value(i, 0).as_bytes()));
    }
}

#[test]
fn tables_that_overlap_what_is_below_are_merged_not_moved() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Db::open(tmp.path(), opts()).unwrap();
    let n = 6_000;
    for round in 0..3 {
        for i in 0..n {
            db.put(key(i), value(i, round)).unwrap();
        }
        db.flush().unwrap();
        db.compact_due().unwrap();
    }
    db.compact().unwrap();
    // Rounds 2 and 3 overwrite every key: whatever moved, the newest
    // version wins and every older one is gone after the settle.
    for i in 0..n {
        assert_eq!(db.get(key(i)).unwrap().as_deref(), Some(value(i, 2).as_bytes()), "key {i}");
    }
    let stats = db.stats();
    assert!(stats.compaction_bytes_written > stats.flush_bytes_written / 3, "{stats:?}");
}

#[test]
fn under_monkey_no_table_moves_off_its_new_levels_plan() {
    // Level 0's flushes carry a fast-building filter at more bits per key
    // than the levels below: moved down as they are, a load in key order
    // would keep them, and the filters below level 0 would outgrow the
    // policy's 10 bits/key. Background compaction alone (no refresh by
    // bytes) must keep levels 1 and deeper at the plan.
    let tmp = tempfile::tempdir().unwrap();
    let db = Db::open(tmp.path(), Options { filter_policy: None, ..opts() }).unwrap();
    for i in 0..20_000 {
        db.put(key(i), value(i, 0)).unwrap();
        if i % 2_000 == 1_999 {
            db.flush().unwrap();
            db.compact_due().unwrap();
        }
    }
    let stats = db.stats();
    let below: Vec<_> = stats.levels.iter().skip(1).collect();
    let (bytes, keys) = below.iter().fold((0, 0), |(b, k), l| (b + l.filter_bytes, k + l.keys));
    #[expect(clippy::cast_precision_loss, reason = "a ratio")]
    let bits_per_key = bytes as f64 * 8.0 / keys as f64;
    assert!(bits_per_key < 10.5, "levels 1+ at {bits_per_key:.2} bits/key under monkey:10");
}

#[test]
fn a_level_past_its_target_over_room_below_goes_down_whole() {
    // Keys in a scattered order: every level-0 merge meets all of level 1.
    // When level 1 first passes its target, level 2 is empty, so each of
    // its tables meets nothing below: the move takes them all at once,
    // where one table at a time would stop at the target and leave level 1
    // for every later level-0 merge to rewrite.
    let tmp = tempfile::tempdir().unwrap();
    let db = Db::open(tmp.path(), opts()).unwrap();
    let n = 12_000u32;
    let scattered = |i: u32| (i.wrapping_mul(7_919)) % n; // 7,919 is prime, coprime to n
    for i in 0..n {
        db.put(key(scattered(i)), value(scattered(i), 0)).unwrap();
        if i % 500 == 499 {
            db.flush().unwrap();
            db.compact_due().unwrap();
            let stats = db.stats();
            if stats.levels[2].tables > 0 {
                assert_eq!(stats.levels[1].tables, 0, "level 1 left behind: {:?}", stats.levels);
                assert!(stats.tables_moved >= stats.levels[2].tables, "{stats:?}");
                for j in 0..n.min(i + 1) {
                    let k = scattered(j);
                    assert_eq!(db.get(key(k)).unwrap().as_deref(), Some(value(k, 0).as_bytes()), "key {k}");
                }
                return;
            }
        }
    }
    panic!("level 2 never filled: {:?}", db.stats().levels);
}
