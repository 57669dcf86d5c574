//! The manifest records how far each live WAL was fsynced (issue 37,
//! step 1): at `Db::sync`, at close, and when a full memtable rotates to a
//! new WAL. Recovery can then tell a log cut after its sync from a torn tail.

use std::path::Path;

use siftdb::frame::{FrameReader, RecordType, RecoveryMode};
use siftdb::fs::StdFs;
use siftdb::manifest::{VersionSet, log_file_name, manifest_file_name, read_current, replay};
use siftdb::{Db, Options};

fn manifest_state(dir: &Path) -> VersionSet {
    let number = read_current(&StdFs, dir).unwrap();
    replay(&std::fs::read(dir.join(manifest_file_name(number))).unwrap()).unwrap().state
}

fn wal_len(dir: &Path, number: u64) -> u64 {
    std::fs::metadata(dir.join(log_file_name(number))).unwrap().len()
}

fn manifest_edits(dir: &Path) -> Vec<siftdb::manifest::VersionEdit> {
    let number = read_current(&StdFs, dir).unwrap();
    let bytes = std::fs::read(dir.join(manifest_file_name(number))).unwrap();
    FrameReader::new(&bytes, RecordType::Edit, RecoveryMode::AbsoluteConsistency)
        .map(|r| siftdb::manifest::VersionEdit::decode(r.unwrap().payload).unwrap())
        .collect()
}

fn live_log(state: &VersionSet) -> u64 {
    *state.wal_ends.keys().last().expect("a WAL end is recorded")
}

#[test]
fn sync_and_close_record_the_synced_length_of_the_live_wal() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    db.put(b"a", b"1").unwrap();
    db.sync().unwrap();
    let state = manifest_state(dir.path());
    let log = live_log(&state);
    assert!(log >= state.log_number);
    assert_eq!(state.wal_ends[&log].len, wal_len(dir.path(), log), "db.sync() records the synced end");
    let edits = manifest_edits(dir.path()).len();
    db.sync().unwrap();
    assert_eq!(manifest_edits(dir.path()).len(), edits, "a sync with nothing new appends no edit");

    db.put(b"b", b"2").unwrap();
    db.close().unwrap();
    let state = manifest_state(dir.path());
    assert_eq!(state.wal_ends[&log].len, wal_len(dir.path(), log), "close records the final end");
    assert!(state.wal_ends[&log].len > 0);
}

#[test]
fn a_rotation_records_the_frozen_wal_and_its_flush_drops_the_record() {
    let dir = tempfile::tempdir().unwrap();
    let opts = || Options { memtable_bytes: 4 << 10, hash_salt: Some(3), ..Options::default() };
    let db = Db::open(dir.path(), opts()).unwrap();
    db.put(b"first", vec![7u8; 100]).unwrap();
    db.sync().unwrap();
    let state = manifest_state(dir.path());
    let first = live_log(&state);
    let synced = state.wal_ends[&first].len;
    // Enough to fill the memtable and rotate to a new WAL.
    for i in 0..200u32 {
        db.put(i.to_be_bytes(), vec![1u8; 100]).unwrap();
    }
    db.flush().unwrap();
    db.close().unwrap();
    // The rotation synced the first WAL, now longer, and recorded it.
    let rotated = manifest_edits(dir.path())
        .iter()
        .flat_map(|e| e.wal_ends.clone())
        .filter(|&(n, end)| n == first && end.len > synced)
        .count();
    assert_eq!(rotated, 1, "the frozen WAL's end is recorded once, at rotation");
    let state = manifest_state(dir.path());
    // The first WAL was rotated away and flushed: its record went with it.
    assert!(state.wal_ends.keys().all(|&n| n >= state.log_number), "{:?}", state.wal_ends);
    assert!(!state.wal_ends.contains_key(&first));
    let log = live_log(&state);
    assert_eq!(state.wal_ends[&log].len, wal_len(dir.path(), log));
}
