//! `Db::open_read_only`: the state `Db::open` would recover, read without
//! creating, changing or deleting a single file, with writes refused.

#[path = "common/batch_prefix.rs"]
mod batch_prefix;

use std::path::{Path, PathBuf};

use batch_prefix::dir_files as files;
use siftdb::wal::RecoveryMode;
use siftdb::{Db, Error, Options, WriteBatch};

fn opts() -> Options {
    Options { memtable_bytes: 4096, hash_salt: Some(5), auto_compaction: false, ..Options::default() }
}

/// 300 keys flushed to tables, then 50 more (and a delete) left in the WAL only.
fn make(dir: &Path) {
    let db = Db::open(dir, opts()).unwrap();
    for i in 0..300u32 {
        db.put(format!("key{i:05}").as_bytes(), format!("value{i}").as_bytes()).unwrap();
    }
    db.flush().unwrap();
    for i in 300..350u32 {
        db.put(format!("key{i:05}").as_bytes(), format!("value{i}").as_bytes()).unwrap();
    }
    db.delete(b"key00007").unwrap();
    db.close().unwrap();
}

fn newest_log(dir: &Path) -> PathBuf {
    let mut logs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    logs.sort();
    logs.pop().unwrap()
}

#[test]
fn reads_tables_and_the_wal_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    make(dir.path());
    let before = files(dir.path());
    let db = Db::open_read_only(dir.path(), opts()).unwrap();
    assert!(db.is_read_only());
    assert_eq!(db.hash_salt(), 5);
    assert_eq!(db.get(b"key00003").unwrap().as_deref(), Some(&b"value3"[..]), "from a table");
    assert_eq!(db.get(b"key00321").unwrap().as_deref(), Some(&b"value321"[..]), "from the WAL");
    assert_eq!(db.get(b"key00007").unwrap(), None, "a delete in the WAL hides the table's value");
    assert_eq!(db.iter().count(), 349);
    assert_eq!(db.prefix(b"key0034").count(), 10);
    let snap = db.snapshot();
    assert_eq!(snap.get(b"key00349").unwrap().as_deref(), Some(&b"value349"[..]));
    drop(snap);
    db.close().unwrap();
    drop(db);
    assert_eq!(files(dir.path()), before, "a read-only open changed the directory");
    // Opened for writing afterwards, it holds the same data.
    let db = Db::open(dir.path(), opts()).unwrap();
    assert_eq!(db.iter().count(), 349);
}

#[test]
fn every_write_is_refused_with_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    make(dir.path());
    let before = files(dir.path());
    let db = Db::open_read_only(dir.path(), opts()).unwrap();
    let mut batch = WriteBatch::new();
    batch.put(b"a", b"b");
    let refused =
        [db.put(b"new", b"v"), db.delete(b"key00001"), db.write(batch), db.flush(), db.compact(), db.sync()];
    for (i, r) in refused.into_iter().enumerate() {
        assert!(matches!(r, Err(Error::OpenedReadOnly)), "operation {i}: {r:?}");
    }
    assert_eq!(db.get(b"new").unwrap(), None);
    assert_eq!(db.get(b"key00001").unwrap().as_deref(), Some(&b"value1"[..]));
    assert!(Error::OpenedReadOnly.to_string().contains("read-only"));
    drop(db);
    assert_eq!(files(dir.path()), before);
}

#[test]
fn read_only_opens_share_the_lock_and_exclude_a_writer() {
    let dir = tempfile::tempdir().unwrap();
    make(dir.path());
    let a = Db::open_read_only(dir.path(), opts()).unwrap();
    let b = Db::open_read_only(dir.path(), opts()).unwrap();
    assert!(matches!(Db::open(dir.path(), opts()), Err(Error::Locked(_))));
    drop((a, b));
    let writer = Db::open(dir.path(), opts()).unwrap();
    assert!(matches!(Db::open_read_only(dir.path(), opts()), Err(Error::Locked(_))));
    writer.close().unwrap();
    Db::open_read_only(dir.path(), opts()).unwrap();
}

#[test]
fn a_missing_lock_file_is_not_created() {
    let dir = tempfile::tempdir().unwrap();
    make(dir.path());
    std::fs::remove_file(dir.path().join("LOCK")).unwrap();
    let before = files(dir.path());
    let db = Db::open_read_only(dir.path(), opts()).unwrap();
    assert_eq!(db.iter().count(), 349);
    drop(db);
    assert_eq!(files(dir.path()), before);
}

#[test]
fn a_torn_wal_tail_is_read_past_and_left_in_place() {
    let dir = tempfile::tempdir().unwrap();
    make(dir.path());
    let log = newest_log(dir.path());
    let mut bytes = std::fs::read(&log).unwrap();
    bytes.extend_from_slice(&[0x11, 0x22, 0x33]);
    std::fs::write(&log, &bytes).unwrap();
    let before = files(dir.path());
    let db = Db::open_read_only(dir.path(), opts()).unwrap();
    assert_eq!(db.get(b"key00349").unwrap().as_deref(), Some(&b"value349"[..]));
    drop(db);
    assert_eq!(files(dir.path()), before, "the torn tail must not be cut by a read-only open");
    // A writable open does cut it (and is the one allowed to).
    drop(Db::open(dir.path(), opts()).unwrap());
    assert!(std::fs::read(&log).map_or(true, |b| b.len() < bytes.len()));
}

#[test]
fn point_in_time_recovery_stops_at_damage_without_cutting_the_log() {
    let dir = tempfile::tempdir().unwrap();
    make(dir.path());
    let log = newest_log(dir.path());
    let mut bytes = std::fs::read(&log).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&log, &bytes).unwrap();
    let before = files(dir.path());
    let strict = Db::open_read_only(dir.path(), opts());
    assert!(matches!(strict, Err(Error::Corruption { .. })), "{strict:?}");
    let pit = Options { recovery: RecoveryMode::PointInTime, ..opts() };
    let db = Db::open_read_only(dir.path(), pit).unwrap();
    let n = db.iter().count();
    assert!((300..349).contains(&n), "{n} keys: the writes before the damage");
    assert_eq!(db.get(b"key00000").unwrap().as_deref(), Some(&b"value0"[..]));
    drop(db);
    assert_eq!(files(dir.path()), before);
}

#[test]
fn a_directory_without_a_database_is_refused_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("missing");
    match Db::open_read_only(&missing, opts()) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("no such directory"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert!(!missing.exists());
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    match Db::open_read_only(&empty, opts()) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("no CURRENT"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(std::fs::read_dir(&empty).unwrap().count(), 0);
    let file = tmp.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    assert!(matches!(Db::open_read_only(&file, opts()), Err(Error::InvalidArgument(_))));
}
