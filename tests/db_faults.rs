//! Power loss and I/O errors, through the fault-injecting file system:
//! synced writes survive a power loss, a failed fsync turns the database
//! read-only, and failing any single operation of a workload never loses an
//! acknowledged write.

use std::sync::Arc;

use oracle::{Model, Write};
use siftdb::fs::{CrashMode, FaultFs, FaultOp};
use siftdb::{Db, Error, Options};

#[path = "common/oracle.rs"]
mod oracle;

fn opts(fs: &FaultFs, sync: bool) -> Options {
    Options {
        fs: Arc::new(fs.clone()),
        sync,
        memtable_bytes: 2048,
        hash_salt: Some(17),
        l0_compaction_trigger: 2,
        base_level_bytes: 4096,
        table_target_bytes: 2048,
        filter_policy: Some(siftdb::policy::FilterPolicy::per_level(vec![])),
        ..Options::default()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

/// Batch `i`: two keys of its own.
fn batch_writes(i: u32) -> Vec<Write> {
    vec![
        Write::Put(key(2 * i), format!("value {i}").into_bytes()),
        Write::Put(key(2 * i + 1), format!("twin {i}").into_bytes()),
    ]
}

/// Writes batches `from..from + n` until the first error; returns the
/// acknowledged ones and the one that failed, if any (it may have landed
/// whole, or not at all).
fn workload(db: &Db, from: u32, n: u32) -> (Vec<Vec<Write>>, Option<Vec<Write>>) {
    let mut acked = Vec::new();
    for i in from..from + n {
        let writes = batch_writes(i);
        if db.write(oracle::batch(&writes)).is_err() {
            return (acked, Some(writes));
        }
        acked.push(writes);
    }
    (acked, None)
}

#[test]
fn power_loss_keeps_every_synced_write() {
    for mode in [CrashMode::DropUnsynced, CrashMode::TornTails { seed: 1 }, CrashMode::TornTails { seed: 2 }]
    {
        let dir = tempfile::tempdir().unwrap();
        let fs = FaultFs::new();
        let db = Db::open(dir.path(), opts(&fs, true)).unwrap();
        let (acked, failed) = workload(&db, 0, 300);
        assert!(failed.is_none());
        fs.crash(mode).unwrap();
        drop(db);
        let db = Db::open(dir.path(), opts(&fs, true)).unwrap();
        oracle::check(&db, &Model::new(), &acked, &[], &format!("{mode:?}"));
    }
}

#[test]
fn buffered_writes_survive_power_loss_once_synced() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    let db = Db::open(dir.path(), opts(&fs, false)).unwrap();
    let (synced, _) = workload(&db, 0, 200);
    db.sync().unwrap();
    let (unsynced, failed) = workload(&db, 200, 100);
    assert_eq!((synced.len(), unsynced.len(), failed), (200, 100, None));
    fs.crash(CrashMode::TornTails { seed: 9 }).unwrap();
    drop(db);
    let db = Db::open(dir.path(), opts(&fs, false)).unwrap();
    // Every synced batch, then a prefix of the rest.
    oracle::check(&db, &Model::new(), &synced, &unsynced, "buffered, torn tails");
}

#[test]
fn failed_fsync_turns_the_database_read_only() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    let db = Db::open(dir.path(), opts(&fs, true)).unwrap();
    db.put(b"before", b"ok").unwrap();
    fs.fail_once_after(FaultOp::Sync, 0);
    assert!(matches!(db.put(b"failed", b"x"), Err(Error::Io(_))));
    // The disk recovered, but the database must not trust its log any more.
    assert!(matches!(db.put(b"after", b"x"), Err(Error::WritesDisabled(_))));
    assert!(matches!(db.flush(), Err(Error::WritesDisabled(_))));
    assert_eq!(db.get(b"before").unwrap().as_deref(), Some(&b"ok"[..]));
    assert_eq!(db.get(b"failed").unwrap(), None, "an unsynced write never becomes visible");
    drop(db);
    let db = Db::open(dir.path(), opts(&fs, true)).unwrap();
    assert_eq!(db.get(b"before").unwrap().as_deref(), Some(&b"ok"[..]));
    db.put(b"after", b"reopened").unwrap();
}

#[test]
fn failing_any_single_operation_loses_no_acknowledged_write() {
    // Count the operations of a clean run, then fail each (with a stride
    // that keeps the test fast) and power-cut after the failure.
    let probe_dir = tempfile::tempdir().unwrap();
    let probe = FaultFs::new();
    let db = Db::open(probe_dir.path(), opts(&probe, true)).unwrap();
    probe.reset_counts();
    workload(&db, 0, 120);
    db.flush().unwrap();
    let total = probe.counts().get(FaultOp::Any);
    drop(db);
    assert!(total > 100, "{total} operations");
    let stride = (total / 60).max(1);
    for n in (0..total).step_by(usize::try_from(stride).unwrap()) {
        let dir = tempfile::tempdir().unwrap();
        let fs = FaultFs::new();
        let db = Db::open(dir.path(), opts(&fs, true)).unwrap();
        fs.fail_after(FaultOp::Any, n);
        let (acked, failed) = workload(&db, 0, 120);
        let _ = db.flush();
        fs.crash(CrashMode::DropUnsynced).unwrap();
        drop(db);
        let db = Db::open(dir.path(), opts(&fs, true))
            .unwrap_or_else(|e| panic!("reopen after fault at op {n}: {e}"));
        let what = format!("fault at op {n}");
        oracle::check(&db, &Model::new(), &acked, failed.as_slice(), &what);
    }
}

#[test]
fn failed_deletes_of_obsolete_files_are_counted_and_swept_at_the_next_open() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    let db = Db::open(dir.path(), opts(&fs, false)).unwrap();
    fs.fail_after(FaultOp::Remove, 0);
    let (acked, failed) = workload(&db, 0, 300);
    assert_eq!((acked.len(), failed), (300, None), "a failed cleanup must not fail a write");
    db.flush().unwrap();
    db.compact().unwrap();
    let failures = db.stats().cleanup_failures;
    assert!(failures > 0, "obsolete logs and tables could not be deleted, and nothing counted it");
    let model = oracle::check(&db, &Model::new(), &acked, &[], "with failed deletes");
    db.close().unwrap();

    fs.disable_faults();
    let files = || std::fs::read_dir(dir.path()).unwrap().count();
    let before = files();
    let db = Db::open(dir.path(), opts(&fs, false)).unwrap();
    assert!(files() < before, "the open sweep left the obsolete files ({before} files)");
    assert_eq!(db.stats().cleanup_failures, 0);
    oracle::check(&db, &model, &[], &[], "reopened after failed deletes");
}
