//! Range deletes, part 2 (issue 61): compaction gives the space back. A
//! version a tombstone deletes for every reader is dropped, one a live
//! snapshot still sees is kept, a table a tombstone wholly deletes is
//! dropped unread, and tombstones go once nothing below needs them.

use siftdb::fs::StdFs;
use siftdb::table::Table;
use siftdb::{Db, Options};

fn opts() -> Options {
    Options { auto_compaction: false, hash_salt: Some(4), ..Options::default() }
}

fn key(i: u32) -> String {
    format!("k{i:04}")
}

/// 1,000 keys compacted into level 1.
fn loaded(dir: &std::path::Path) -> Db {
    let db = Db::open(dir, opts()).unwrap();
    for i in 0..1000 {
        db.put(key(i), format!("value {i}")).unwrap();
    }
    db.flush().unwrap();
    db.compact().unwrap();
    db
}

fn entries(db: &Db) -> u64 {
    db.tables().iter().map(|t| t.record.entries).sum()
}

fn range_tombstones(db: &Db) -> usize {
    db.tables()
        .iter()
        .map(|t| Table::open(&StdFs, &t.path).unwrap().range_dels().map_or(0, |d| d.len()))
        .sum()
}

fn live(db: &Db) -> usize {
    db.iter().count()
}

#[test]
fn compaction_drops_what_a_tombstone_deletes_and_then_the_tombstone() {
    let dir = tempfile::tempdir().unwrap();
    let db = loaded(dir.path());
    assert_eq!(entries(&db), 1000);
    db.delete_range(key(100), key(600)).unwrap();
    db.put(key(300), "written after the delete").unwrap();
    db.flush().unwrap();
    assert_eq!(range_tombstones(&db), 1);
    db.compact().unwrap();
    let stats = db.stats();
    assert_eq!(stats.range_deleted_entries, 500, "{stats}");
    // 500 kept below the range and above it, and the later put.
    assert_eq!(entries(&db), 501);
    assert_eq!(range_tombstones(&db), 0, "nothing below the last level needs the tombstone");
    assert_eq!(live(&db), 501);
    assert_eq!(db.get(key(300)).unwrap().as_deref(), Some(&b"written after the delete"[..]));
    assert_eq!(db.get(key(301)).unwrap(), None);
    assert_eq!(db.get(key(600)).unwrap().as_deref(), Some(&b"value 600"[..]));
}

#[test]
fn a_live_snapshot_keeps_what_it_sees_until_it_goes() {
    let dir = tempfile::tempdir().unwrap();
    let db = loaded(dir.path());
    let snap = db.snapshot();
    db.delete_range(key(0), key(1000)).unwrap();
    db.flush().unwrap();
    db.compact().unwrap();
    assert_eq!(db.stats().range_deleted_entries, 0);
    assert_eq!(entries(&db), 1000, "the snapshot still sees every key");
    assert_eq!(range_tombstones(&db), 1, "and the tombstone stays with them");
    assert_eq!((live(&db), snap.iter().count()), (0, 1000));
    drop(snap);
    // The next compaction over the range gives the space back.
    db.put(key(5), "new").unwrap();
    db.flush().unwrap();
    db.compact().unwrap();
    assert_eq!(db.stats().range_deleted_entries, 1000);
    assert_eq!((entries(&db), range_tombstones(&db), live(&db)), (1, 0, 1));
}

/// The table the tombstone wholly deletes has a damaged data block: a
/// compaction that read it would fail. It is dropped unread.
#[test]
fn a_table_a_tombstone_wholly_deletes_is_dropped_unread() {
    let dir = tempfile::tempdir().unwrap();
    let db = loaded(dir.path());
    let tables = db.tables();
    assert_eq!(tables.len(), 1);
    let path = tables[0].path.clone();
    db.close().unwrap();
    drop(db);
    let handles = Table::open(&StdFs, &path).unwrap().data_block_handles().unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[usize::try_from(handles[0].offset).unwrap() + 3] ^= 0x55;
    std::fs::write(&path, bytes).unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    assert!(db.get(key(0)).is_err(), "the damage is real");
    db.delete_range("k", "l").unwrap();
    db.flush().unwrap();
    db.compact().unwrap();
    assert_eq!(db.stats().range_deleted_entries, 1000);
    assert!(db.tables().is_empty(), "{:?}", db.tables());
    assert!(!path.exists());
    assert_eq!(db.get(key(0)).unwrap(), None);
}

/// A tombstone over keys a deeper level holds is taken down level by level
/// (the picker moves tables holding tombstones every reader sees) until
/// what it deletes is dropped, and then it goes too.
#[test]
fn a_tombstone_goes_down_to_the_keys_it_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let o = || Options { max_levels: 4, base_level_bytes: 1 << 10, table_target_bytes: 1 << 10, ..opts() };
    let db = Db::open(dir.path(), o()).unwrap();
    for i in 0..1000 {
        db.put(key(i), [b'v'; 50]).unwrap();
    }
    db.compact().unwrap();
    let depth = |db: &Db| db.tables().iter().map(|t| t.level).max().unwrap();
    assert!(depth(&db) >= 2, "{}", db.stats());
    let before = entries(&db);
    db.delete_range(key(200), key(300)).unwrap();
    db.flush().unwrap();
    db.compact().unwrap();
    let stats = db.stats();
    assert_eq!(stats.range_deleted_entries, 100, "{stats}");
    assert_eq!(entries(&db), before - 100);
    assert_eq!(range_tombstones(&db), 0, "{:?}", db.tables());
    for i in [0, 199, 200, 299, 300, 999] {
        let want = (!(200..300).contains(&i)).then(|| vec![b'v'; 50]);
        assert_eq!(db.get(key(i)).unwrap().map(|v| v.to_vec()), want, "{}", key(i));
    }
    assert_eq!(live(&db), 900);
}

/// Background compaction does the same, without `Db::compact`: a database
/// that took a range delete and went quiet gives the space back.
#[test]
fn background_compaction_gives_the_space_back_too() {
    let dir = tempfile::tempdir().unwrap();
    let o = || Options {
        auto_compaction: true,
        max_levels: 4,
        base_level_bytes: 1 << 10,
        table_target_bytes: 1 << 10,
        ..opts()
    };
    let db = Db::open(dir.path(), o()).unwrap();
    for i in 0..1000 {
        db.put(key(i), [b'v'; 50]).unwrap();
    }
    db.flush().unwrap();
    db.wait_for_background_work().unwrap();
    db.delete_range(key(0), key(500)).unwrap();
    db.flush().unwrap();
    db.wait_for_background_work().unwrap();
    assert_eq!(db.stats().range_deleted_entries, 500, "{}", db.stats());
    assert_eq!((entries(&db), range_tombstones(&db)), (500, 0), "{:?}", db.tables());
}

/// `Stats` shows where range tombstones live and what they gave back:
/// a flushed one at level 0, none once a compaction has dropped it.
#[test]
fn stats_count_range_tombstones_per_level_and_the_versions_they_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let db = loaded(dir.path());
    let text = db.stats().to_string();
    assert!(!text.contains("range tombstones") && !text.contains("range deletes"), "{text}");
    db.delete_range(key(100), key(200)).unwrap();
    db.delete_range(key(300), key(400)).unwrap();
    db.flush().unwrap();
    let stats = db.stats();
    let counts: Vec<u64> = stats.levels.iter().map(|l| l.range_tombstones).collect();
    assert_eq!(counts[..2], [2, 0], "{stats}");
    assert!(stats.to_string().contains("range tombstones: L0 2\n"), "{stats}");
    // A shape field: `since` keeps it.
    assert_eq!(db.stats().since(&stats).levels[0].range_tombstones, 2);
    db.compact().unwrap();
    let stats = db.stats();
    assert!(stats.levels.iter().all(|l| l.range_tombstones == 0), "{stats}");
    assert_eq!(stats.range_deleted_entries, 200);
    let text = stats.to_string();
    assert!(!text.contains("range tombstones:"), "{text}");
    assert!(text.contains("(versions dropped by range deletes 200)"), "{text}");
}
