//! A merge finishes each output table on a thread of its own while it goes
//! on into the next (issue 69): a failure in any of them fails the job
//! once every one has stopped, nothing of the job is installed, and every
//! key reads back after a reopen.

use std::sync::Arc;

use siftdb::fs::{FaultFs, FaultOp};
use siftdb::{Compression, CompressionPolicy, Db, Options};

fn opts(fs: &FaultFs) -> Options {
    Options {
        fs: Arc::new(fs.clone()),
        memtable_bytes: 64 << 10,
        table_target_bytes: 8 << 10,
        base_level_bytes: 1 << 30,
        hash_salt: Some(69),
        auto_compaction: false,
        compression: CompressionPolicy::uniform(Compression::None),
        ..Options::default()
    }
}

fn key(i: u64) -> String {
    format!("{:016x}", i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

fn value(i: u64) -> String {
    format!("value-{i:08}-{}", "z".repeat(60))
}

const KEYS: u64 = 1_200;

/// A database with two overlapping level-0 tables, ready to merge.
fn loaded(dir: &std::path::Path, fs: &FaultFs) -> Db {
    let db = Db::open(dir, opts(fs)).unwrap();
    for half in 0..2 {
        for i in (half..KEYS).step_by(2) {
            db.put(key(i), value(i)).unwrap();
        }
        db.flush().unwrap();
    }
    db
}

fn files_ending(dir: &std::path::Path, suffix: &str) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(suffix))
        .count()
}

#[test]
fn a_failure_in_any_output_fails_the_merge_after_all_have_stopped() {
    // A clean run: how many syncs the merge makes, and how many tables.
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    let db = loaded(dir.path(), &fs);
    fs.reset_counts();
    db.compact().unwrap();
    let syncs = fs.counts().get(FaultOp::Sync);
    let outputs = db.stats().levels[1].tables;
    assert!(outputs >= 8, "a merge of many outputs: {outputs}");
    assert!(syncs > outputs, "{syncs} syncs");
    drop(db);

    for fail_at in 0..syncs {
        let dir = tempfile::tempdir().unwrap();
        let fs = FaultFs::new();
        let db = loaded(dir.path(), &fs);
        let tables_before = db.tables().len();
        fs.fail_once_after(FaultOp::Sync, fail_at);
        let result = db.compact();
        // The outputs' threads were all joined: none is still writing.
        assert_eq!(files_ending(dir.path(), ".tmp"), 0, "sync {fail_at}: a table still being written");
        if result.is_ok() {
            // The failed sync was not the merge's (the manifest's was
            // retried by nothing, so every other is): the merge went in.
            assert_eq!(db.stats().levels[0].tables, 0, "sync {fail_at}");
        } else {
            assert_eq!(
                db.tables().len(),
                tables_before,
                "sync {fail_at}: nothing of the failed merge installed"
            );
        }
        drop(db);
        fs.disable_faults();
        let db = Db::open(dir.path(), opts(&fs)).unwrap();
        for i in 0..KEYS {
            assert_eq!(
                db.get(key(i)).unwrap().as_deref(),
                Some(value(i).as_bytes()),
                "sync {fail_at}, key {i}"
            );
        }
        // What the failed merge wrote was swept: one file per live table.
        assert_eq!(files_ending(dir.path(), ".sst"), db.tables().len(), "sync {fail_at}");
    }
}
