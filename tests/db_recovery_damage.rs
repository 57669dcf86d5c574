//! Damaged files on open: a torn WAL tail is dropped; mid-log WAL damage is
//! an error in strict mode and a clean stop in point-in-time mode; a damaged
//! manifest or a missing table is an error naming the file.

use std::path::{Path, PathBuf};

use siftdb::{Db, Error, Options, RecoveryMode};

fn opts(recovery: RecoveryMode) -> Options {
    Options {
        hash_salt: Some(5),
        recovery,
        filter_policy: Some(siftdb::policy::FilterPolicy::per_level(vec![])),
        ..Options::default()
    }
}

fn files_ending(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    v.sort();
    v
}

/// Ten puts, closed cleanly, all in one WAL.
fn ten_puts(dir: &Path) -> PathBuf {
    let db = Db::open(dir, opts(RecoveryMode::default())).unwrap();
    for i in 0..10u8 {
        db.put([b'k', i], [i; 100]).unwrap();
    }
    db.close().unwrap();
    let logs = files_ending(dir, ".log");
    assert_eq!(logs.len(), 1, "{logs:?}");
    logs[0].clone()
}

fn present(db: &Db) -> Vec<u8> {
    (0..10u8).filter(|&i| db.get([b'k', i]).unwrap().is_some()).collect()
}

#[test]
fn torn_tail_is_dropped_and_truncated_before_new_appends() {
    let dir = tempfile::tempdir().unwrap();
    let log = ten_puts(dir.path());
    // An eleventh put, written after the close's sync and cut short, as a
    // crash mid-write would leave it. (Cutting into the ten synced ones is
    // a cut, not a torn tail: `tests/wal_cut.rs`.)
    let mut batch = siftdb::WriteBatch::new();
    batch.put([b'k', 10], [10; 100]);
    let record = siftdb::wal::encode_record(siftdb::wal::RecordType::Batch, &batch.encode(11)).unwrap();
    let mut bytes = std::fs::read(&log).unwrap();
    bytes.extend_from_slice(&record[..record.len() - 30]);
    std::fs::write(&log, &bytes).unwrap();
    for mode in [RecoveryMode::AbsoluteConsistency, RecoveryMode::PointInTime] {
        let db = Db::open(dir.path(), opts(mode)).unwrap();
        assert_eq!(present(&db), (0..10).collect::<Vec<_>>());
        assert_eq!(db.get([b'k', 10]).unwrap(), None);
        db.close().unwrap();
    }
    // Appending after the truncation must not leave garbage mid-log.
    let db = Db::open(dir.path(), opts(RecoveryMode::default())).unwrap();
    db.put(b"after", b"tear").unwrap();
    db.close().unwrap();
    let db = Db::open(dir.path(), opts(RecoveryMode::default())).unwrap();
    assert_eq!(db.get(b"after").unwrap().as_deref(), Some(&b"tear"[..]));
    assert_eq!(present(&db).len(), 10);
}

#[test]
fn mid_log_damage_is_corruption_when_strict_and_a_stop_in_point_in_time() {
    let dir = tempfile::tempdir().unwrap();
    let log = ten_puts(dir.path());
    let mut bytes = std::fs::read(&log).unwrap();
    // Each record is ~125 bytes; damage the payload of the 4th.
    let rec = bytes.len() / 10;
    bytes[3 * rec + 40] ^= 0x55;
    std::fs::write(&log, &bytes).unwrap();
    match Db::open(dir.path(), opts(RecoveryMode::AbsoluteConsistency)) {
        Err(Error::Corruption { file: Some(f), .. }) => assert_eq!(f, log),
        other => panic!("{other:?}"),
    }
    let db = Db::open(dir.path(), opts(RecoveryMode::PointInTime)).unwrap();
    assert_eq!(present(&db), vec![0, 1, 2]);
    db.put(b"new", b"write").unwrap();
    db.close().unwrap();
    // The stop is permanent: a strict open now sees a clean log.
    let db = Db::open(dir.path(), opts(RecoveryMode::AbsoluteConsistency)).unwrap();
    assert_eq!(present(&db), vec![0, 1, 2]);
    assert!(db.get(b"new").unwrap().is_some());
}

#[test]
fn damaged_manifest_is_corruption_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    ten_puts(dir.path());
    let manifest = files_ending(dir.path(), "")
        .into_iter()
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("MANIFEST-"));
    let manifest = manifest.unwrap();
    let mut bytes = std::fs::read(&manifest).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&manifest, &bytes).unwrap();
    match Db::open(dir.path(), opts(RecoveryMode::default())) {
        Err(Error::Corruption { file: Some(f), .. }) => assert_eq!(f, manifest),
        other => panic!("{other:?}"),
    }
}

#[test]
fn missing_table_is_corruption_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts(RecoveryMode::default())).unwrap();
    db.put(b"k", b"v").unwrap();
    db.flush().unwrap();
    db.close().unwrap();
    let tables = files_ending(dir.path(), ".sst");
    assert_eq!(tables.len(), 1);
    std::fs::remove_file(&tables[0]).unwrap();
    match Db::open(dir.path(), opts(RecoveryMode::default())) {
        Err(e @ Error::Corruption { .. }) => {
            assert!(e.to_string().contains(&*tables[0].file_name().unwrap().to_string_lossy()), "{e}");
        }
        other => panic!("{other:?}"),
    }
}

/// Regression: a point-in-time stop in log k cut log k before the later
/// logs were deleted; a crash in between left a clean k beside an intact
/// k + 1, and the next open replayed k + 1 after the gap. Now the later logs
/// go first, and a failure to delete them fails the open with nothing cut.
#[test]
fn a_point_in_time_stop_never_leaves_a_later_log_to_replay_after_the_gap() {
    use siftdb::fs::{FaultFs, FaultOp};
    use siftdb::wal::{RecordType, encode_record};

    let dir = tempfile::tempdir().unwrap();
    let log = ten_puts(dir.path());
    // A later live log holding seq 11, as if the memtable had rotated.
    let number: u64 = log.file_stem().unwrap().to_str().unwrap().parse().unwrap();
    let mut later = siftdb::WriteBatch::new();
    later.put(b"later", b"after the damage");
    std::fs::write(
        dir.path().join(siftdb::manifest::log_file_name(number + 1)),
        encode_record(RecordType::Batch, &later.encode(11)).unwrap(),
    )
    .unwrap();
    let mut bytes = std::fs::read(&log).unwrap();
    let rec = bytes.len() / 10;
    bytes[3 * rec + 40] ^= 0x55;
    std::fs::write(&log, &bytes).unwrap();

    // Deleting the later log fails: the open fails, and the damaged log is
    // not cut (the next open must meet the same damage).
    let fs = FaultFs::new();
    fs.fail_after(FaultOp::Remove, 0);
    let faulty = Options { fs: std::sync::Arc::new(fs), ..opts(RecoveryMode::PointInTime) };
    assert!(Db::open(dir.path(), faulty).is_err());
    assert_eq!(std::fs::read(&log).unwrap(), bytes, "the damaged log was cut before the later one went");

    let db = Db::open(dir.path(), opts(RecoveryMode::PointInTime)).unwrap();
    assert_eq!(present(&db), vec![0, 1, 2]);
    assert!(db.get(b"later").unwrap().is_none(), "a write after the damage came back");
    db.close().unwrap();
    let db = Db::open(dir.path(), opts(RecoveryMode::AbsoluteConsistency)).unwrap();
    assert!(db.get(b"later").unwrap().is_none());
}
