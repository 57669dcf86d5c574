//! A crash or an I/O error at every point of `Db::checkpoint` (issue 63):
//! the source keeps exactly what it held, and the target is as it was
//! (missing, or an empty directory) or the whole copy, never a directory
//! that opens as a new, empty database. A later checkpoint to the same
//! target clears what the failed one left and succeeds.
//!
//! Each cut point `n` fails the `n`-th file-system operation of the
//! checkpoint (the flush it starts with included) and every later one, then
//! simulates a process kill or a power loss; or fails that operation alone
//! (a transient error) and lets the checkpoint clean up after itself.

use std::path::Path;
use std::sync::Arc;

use siftdb::fs::{CrashMode, FaultFs, FaultOp};
use siftdb::{Db, Options, WriteBatch};

#[path = "common/oracle.rs"]
mod oracle;

use oracle::Model;

const KEYS: u64 = 3000;
const BATCH: u64 = 100;
/// Range-deleted after the keys are flushed: `key(RANGE.0)..key(RANGE.1)`.
const RANGE: (u64, u64) = (500, 1200);
/// Written last, so only the memtable (and the WAL) holds them.
const UNFLUSHED: u64 = 20;

fn scratch() -> tempfile::TempDir {
    // fsync on tmpfs is free; the model, not the disk, decides durability.
    let shm = Path::new("/dev/shm");
    if shm.is_dir() { tempfile::tempdir_in(shm) } else { tempfile::tempdir() }.unwrap()
}

fn options(fs: &FaultFs) -> Options {
    Options {
        fs: Arc::new(fs.clone()),
        // Every acknowledged write is durable, so the source must come back
        // whole after any crash.
        sync: true,
        memtable_bytes: 16 << 10,
        block_bytes: 1024,
        table_target_bytes: 64 << 10,
        hash_salt: Some(63),
        // No background compaction moves the fault counter under the test.
        auto_compaction: false,
        ..Options::default()
    }
}

fn key(i: u64) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn value(i: u64) -> Vec<u8> {
    format!("value-{i}-{}", "v".repeat(20)).into_bytes()
}

/// A source with several level-0 tables, a range delete over flushed keys,
/// and a few keys only in the memtable; returns it and what it holds.
fn source(dir: &Path, fs: &FaultFs) -> (Db, Model) {
    let db = Db::open(dir, options(fs)).unwrap();
    let mut model = Model::new();
    for start in (0..KEYS).step_by(BATCH as usize) {
        let mut b = WriteBatch::new();
        for i in start..start + BATCH {
            b.put(key(i), value(i));
            model.insert(key(i), value(i));
        }
        db.write(b).unwrap();
    }
    db.flush().unwrap();
    db.delete_range(key(RANGE.0), key(RANGE.1)).unwrap();
    model.retain(|k, _| *k < key(RANGE.0) || *k >= key(RANGE.1));
    for i in KEYS..KEYS + UNFLUSHED {
        db.put(key(i), value(i)).unwrap();
        model.insert(key(i), value(i));
    }
    assert!(db.tables().len() >= 3, "several flushes: {} tables", db.tables().len());
    (db, model)
}

/// What the checkpoint under test meets and what it is cut by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    /// The disk dies at the cut, then a crash of this mode.
    Crash(CrashMode),
    /// Only the operation at the cut fails; the process lives on.
    Transient,
}

/// What the trials saw, for the totals.
#[derive(Debug, Default)]
struct Seen {
    trials: u64,
    copies: u64,
    stale_stages: u64,
    /// Transient faults the checkpoint got past (an obsolete file's failed
    /// removal is no failure).
    harmless: u64,
}

/// How many file-system operations an unfailed checkpoint of the source
/// takes, its flush included; checks the copy it makes.
fn ops_of_a_checkpoint() -> u64 {
    let dir = scratch();
    let fs = FaultFs::new();
    let (db, model) = source(&dir.path().join("db"), &fs);
    fs.reset_counts();
    db.checkpoint(dir.path().join("copy")).unwrap();
    let ops = fs.counts().get(FaultOp::Any);
    let copy = Db::open_read_only(dir.path().join("copy"), Options::default()).unwrap();
    oracle::check(&copy, &model, &[], &[], "the unfailed checkpoint");
    ops
}

/// Runs one checkpoint cut at its `n`-th operation and checks what is left.
fn trial(n: u64, cut: Cut, dst_was_empty_dir: bool, seen: &mut Seen) {
    let dir = scratch();
    let fs = FaultFs::new();
    let (src, dst) = (dir.path().join("db"), dir.path().join("copy"));
    let stage = dir.path().join("copy.checkpoint-tmp");
    let (db, model) = source(&src, &fs);
    if dst_was_empty_dir {
        std::fs::create_dir(&dst).unwrap();
    }
    match cut {
        Cut::Crash(_) => fs.fail_after(FaultOp::Any, n),
        Cut::Transient => fs.fail_once_after(FaultOp::Any, n),
    }
    let at = format!("cut at op {n}, {cut:?}, dst an empty dir before: {dst_was_empty_dir}");
    let result = db.checkpoint(&dst);
    match cut {
        Cut::Crash(mode) => {
            assert!(result.is_err(), "{at}: the disk died, yet the checkpoint succeeded");
            // As a power loss: nothing more reaches the disk, not even the
            // dying database's close.
            drop(db);
            fs.crash(mode).unwrap();
        }
        Cut::Transient => {
            assert!(!stage.exists(), "{at}: a failed checkpoint removes its staging directory");
            seen.harmless += u64::from(result.is_ok());
            fs.disable_faults();
            drop(db);
        }
    }
    seen.trials += 1;
    let db = Db::open(&src, options(&fs)).unwrap();
    oracle::check(&db, &model, &[], &[], &format!("{at}: the source"));

    match std::fs::read_dir(&dst).map(Iterator::count) {
        Err(_) => assert!(!dst_was_empty_dir, "{at}: the empty dst was removed"),
        Ok(0) => assert!(dst_was_empty_dir, "{at}: an empty dst left behind opens as a new database"),
        Ok(_) => {
            let copy = Db::open_read_only(&dst, Options::default())
                .unwrap_or_else(|e| panic!("{at}: a dst with files must be the whole copy: {e}"));
            oracle::check(&copy, &model, &[], &[], &format!("{at}: the copy"));
            drop(copy);
            seen.copies += 1;
            // A complete copy is in the way of the next checkpoint.
            std::fs::remove_dir_all(&dst).unwrap();
        }
    }

    seen.stale_stages += u64::from(stage.exists());
    db.checkpoint(&dst).unwrap_or_else(|e| panic!("{at}: the next checkpoint: {e}"));
    assert!(!stage.exists(), "{at}: the next checkpoint leaves no staging directory");
    let copy = Db::open_read_only(&dst, Options::default()).unwrap();
    oracle::check(&copy, &model, &[], &[], &format!("{at}: the next checkpoint's copy"));
}

#[test]
fn a_checkpoint_cut_anywhere_leaves_the_source_whole_and_no_wrong_copy() {
    let ops = ops_of_a_checkpoint();
    assert!(ops > 20, "a flush, links, a manifest, CURRENT, a rename: only {ops} operations?");
    let mut seen = Seen::default();
    for cut in [Cut::Crash(CrashMode::KillProcess), Cut::Crash(CrashMode::DropUnsynced), Cut::Transient] {
        for n in 0..ops {
            // Alternating a missing dst and an empty one covers both at
            // every stage of the checkpoint, at half the cost of each.
            trial(n, cut, n % 2 == 1, &mut seen);
        }
    }
    eprintln!("{ops} operations per checkpoint; {seen:?}");
    assert!(seen.copies > 0, "some cut comes after the rename: {seen:?}");
    assert!(seen.stale_stages > 0, "some crash leaves a staging directory: {seen:?}");
}
