//! A WAL cut after it was synced is detected, never served as older data
//! (issue 37, step 2). Before, a clean close followed by a cut of the last
//! WAL opened without a word, and `get` returned values from before the
//! cut's lost writes, with deleted keys back.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use siftdb::fs::{FileSystem, StdFs};
use siftdb::{Db, Error, Options, RecoveryMode, WriteBatch};

fn strict() -> Options {
    Options { hash_salt: Some(11), ..Options::default() }
}

fn point_in_time() -> Options {
    Options { recovery: RecoveryMode::PointInTime, ..strict() }
}

/// The newest `.log` file in `dir`.
fn last_log(dir: &Path) -> PathBuf {
    let mut logs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    logs.pop().expect("a WAL")
}

/// What a database holds, key by key.
type State = BTreeMap<Vec<u8>, Vec<u8>>;

/// What the database holds.
fn contents(db: &Db) -> State {
    db.iter().map(|r| r.unwrap()).map(|(k, v)| (k.to_vec(), v.to_vec())).collect()
}

/// A database closed cleanly whose last WAL holds 30 batches of 3
/// operations each: overwrites and deletes of earlier keys, so that losing
/// the later batches would bring back older values and deleted keys.
/// Returns what it holds before the last batch and at the end.
fn build(dir: &Path) -> (State, State) {
    let db = Db::open(dir, strict()).unwrap();
    for i in 0..20u32 {
        db.put(format!("k{i:02}"), format!("first {i}")).unwrap();
    }
    db.flush().unwrap();
    let mut before_last = BTreeMap::new();
    for round in 0..30u32 {
        before_last = contents(&db);
        let mut b = WriteBatch::new();
        b.put(format!("k{:02}", round % 20), format!("round {round}"));
        b.delete(format!("k{:02}", (round * 7 + 3) % 20));
        b.put(format!("new{round:02}"), "x");
        db.write(b).unwrap();
    }
    let state = contents(&db);
    db.close().unwrap();
    (before_last, state)
}

#[test]
fn a_wal_cut_after_a_clean_close_is_corruption_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let _ = build(dir.path());
    let log = last_log(dir.path());
    let len = std::fs::metadata(&log).unwrap().len();
    StdFs.truncate(&log, len - 1).unwrap();
    let err = Db::open(dir.path(), strict()).unwrap_err();
    match &err {
        Error::Corruption { file, what, .. } => {
            assert_eq!(file.as_deref(), Some(log.as_path()));
            assert!(what.contains(&format!("synced through byte {len}")), "{what}");
            assert!(what.contains(&format!("file {} bytes", len - 1)), "{what}");
        }
        other => panic!("{other:?}"),
    }
    // Nothing was changed by the refusal: the same answer again, and a
    // read-only open refuses too.
    assert!(Db::open(dir.path(), strict()).unwrap_err().is_corruption());
    assert!(Db::open_read_only(dir.path(), strict()).unwrap_err().is_corruption());
    assert_eq!(std::fs::metadata(&log).unwrap().len(), len - 1);
}

#[test]
fn point_in_time_recovers_the_prefix_and_counts_the_synced_writes_lost() {
    let dir = tempfile::tempdir().unwrap();
    let (before_last, full) = build(dir.path());
    let log = last_log(dir.path());
    let len = std::fs::metadata(&log).unwrap().len();
    // Each batch is one record; cutting into the last one loses that batch.
    StdFs.truncate(&log, len - 1).unwrap();
    let db = Db::open(dir.path(), point_in_time()).unwrap();
    let report = db.stats().recovery;
    let cut = report.cut.as_ref().expect("the cut is reported");
    assert_eq!((cut.path.as_path(), cut.recorded.len), (log.as_path(), len));
    assert!(cut.found < len - 1, "the partial record is not kept");
    assert_eq!(report.synced_writes_lost, Some(3), "one batch of three operations");
    assert!(db.stats().to_string().contains("3 synced writes lost"), "{}", db.stats());
    // The state is the one before the last batch, which differs from the
    // full one in all three of that batch's keys.
    let got = contents(&db);
    assert_eq!(got, before_last);
    let differing = full.keys().chain(got.keys()).filter(|k| full.get(*k) != got.get(*k)).count();
    assert!(differing >= 3, "the lost batch changed three keys");
    // Writing on: the recorded end now describes what was kept, so the next
    // strict open accepts it and serves the new write too.
    db.put("after", "cut").unwrap();
    db.close().unwrap();
    let db = Db::open(dir.path(), strict()).unwrap();
    assert_eq!(db.get("after").unwrap().as_deref(), Some(&b"cut"[..]));
    assert_eq!(db.stats().recovery.cut, None);
    let mut expected = got;
    expected.insert(b"after".to_vec(), b"cut".to_vec());
    assert_eq!(contents(&db), expected);
}

#[test]
fn a_missing_synced_wal_is_corruption_and_point_in_time_loses_all_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let _ = build(dir.path());
    let log = last_log(dir.path());
    std::fs::remove_file(&log).unwrap();
    match Db::open(dir.path(), strict()).unwrap_err() {
        Error::Corruption { file, what, .. } => {
            assert_eq!(file.as_deref(), Some(log.as_path()));
            assert!(what.contains("missing"), "{what}");
        }
        other => panic!("{other:?}"),
    }
    let db = Db::open(dir.path(), point_in_time()).unwrap();
    let report = db.stats().recovery;
    assert_eq!(report.synced_writes_lost, Some(90), "all 30 batches of 3");
    assert!(report.cut.as_ref().is_some_and(|c| c.size.is_none()));
    // The flushed table is what is left.
    assert_eq!(db.get("k19").unwrap().as_deref(), Some(&b"first 19"[..]));
    assert_eq!(db.get("new00").unwrap(), None);
    db.close().unwrap();
    Db::open(dir.path(), strict()).unwrap().close().unwrap();
}

#[test]
fn a_torn_tail_past_the_synced_end_is_still_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let (_, full) = build(dir.path());
    let log = last_log(dir.path());
    let synced = std::fs::metadata(&log).unwrap().len();
    // A write appended after the last sync, then torn by a crash: half of
    // its record reached the file.
    let mut batch = WriteBatch::new();
    batch.put("unsynced", "write");
    let record = siftdb::wal::encode_record(siftdb::wal::RecordType::Batch, &batch.encode(1_000)).unwrap();
    let mut bytes = std::fs::read(&log).unwrap();
    bytes.extend_from_slice(&record[..record.len() / 2]);
    std::fs::write(&log, &bytes).unwrap();
    let db = Db::open(dir.path(), strict()).unwrap();
    assert_eq!(contents(&db), full);
    let report = db.stats().recovery;
    assert_eq!((report.cut, report.torn_bytes), (None, (record.len() / 2) as u64));
    drop(db);
    assert!(std::fs::metadata(&log).unwrap().len() >= synced);
}

/// Issue 57, step 2: the loss outlives the open that took it. Before, only
/// that open's `Stats::recovery` said so; the next open said nothing.
#[test]
fn a_point_in_time_loss_is_remembered_by_every_later_open() {
    let dir = tempfile::tempdir().unwrap();
    let _ = build(dir.path());
    let log = last_log(dir.path());
    let len = std::fs::metadata(&log).unwrap().len();
    StdFs.truncate(&log, len - 1).unwrap();
    let start = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let db = Db::open(dir.path(), point_in_time()).unwrap();
    let lost = db.stats().lost_writes;
    assert_eq!(lost.len(), 1, "{lost:?}");
    let number = log.file_stem().and_then(|s| s.to_str()).and_then(|s| s.parse::<u64>().ok()).unwrap();
    assert_eq!((lost[0].log_number, lost[0].synced_len, lost[0].writes_lost), (number, len, Some(3)));
    assert!(lost[0].found_len < len - 1 && lost[0].recovered_at >= start, "{lost:?}");
    db.put("after", "cut").unwrap();
    db.flush().unwrap();
    db.close().unwrap();
    // Later opens, strict or not, read-only too, after flushes and a
    // compaction have rewritten the manifest: the same record.
    for round in 0..3 {
        let db = if round == 2 {
            Db::open_read_only(dir.path(), strict()).unwrap()
        } else {
            Db::open(dir.path(), strict()).unwrap()
        };
        let stats = db.stats();
        assert_eq!(stats.lost_writes, lost, "open {round}");
        assert_eq!(stats.recovery.cut, None, "this open lost nothing");
        let text = stats.to_string();
        assert!(text.contains("LOST WRITES") && text.contains("lost 3 synced write(s)"), "{text}");
        if round == 0 {
            db.compact().unwrap();
        }
        db.close().unwrap();
    }
}
