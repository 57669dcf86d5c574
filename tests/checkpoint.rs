//! `Db::checkpoint` (issue 63, step 1): copies taken while writers run open
//! clean, hold a prefix of each writer's acknowledged batches (every batch
//! whole), and then live apart from the source.

#[path = "common/batch_prefix.rs"]
mod batch_prefix;
#[path = "common/db_verify.rs"]
mod db_verify;

use batch_prefix::{BatchWriters, prefix_of};
use siftdb::{Db, Error, Options};

const WRITERS: usize = 2;
const KEYS_PER_BATCH: usize = 3;

fn opts() -> Options {
    Options {
        memtable_bytes: 8 << 10,
        table_target_bytes: 16 << 10,
        hash_salt: Some(63),
        ..Options::default()
    }
}

#[test]
fn checkpoints_taken_under_writes_hold_a_prefix_of_whole_batches() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Db::open(tmp.path().join("db"), opts()).unwrap();
    let writers = BatchWriters::start(&db, WRITERS, KEYS_PER_BATCH, 40);
    // Every copy must be taken while every writer is at work; on a loaded
    // machine a thread can take longer than the pause below to start.
    while writers.acked().contains(&0) {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let mut copies = Vec::new();
    for i in 0..3 {
        std::thread::sleep(std::time::Duration::from_millis(150));
        let before: Vec<u64> = writers.acked();
        let dst = tmp.path().join(format!("copy{i}"));
        db.checkpoint(&dst).unwrap();
        let after: Vec<u64> = writers.acked();
        copies.push((dst, before, after));
    }
    writers.stop();
    for (dst, before, after) in &copies {
        let (problems, _) = db_verify::db_problems(dst);
        assert!(problems.is_empty(), "{}: {problems:?}", dst.display());
        let copy = Db::open(dst, opts()).unwrap();
        for w in 0..WRITERS {
            // A writer counts a batch only after `write` returns, so one more
            // may already be in the database: acknowledged or not, whole.
            let n = prefix_of(&copy, w, after[w] + 2, KEYS_PER_BATCH);
            assert!(
                (before[w]..=after[w] + 1).contains(&n),
                "{}: writer {w} has {n}, acked {before:?}..{after:?}",
                dst.display()
            );
        }
        assert!(before.iter().all(|&b| b > 0), "the writers wrote before the checkpoint: {before:?}");
    }
}

#[test]
fn a_copy_and_its_source_live_apart() {
    let tmp = tempfile::tempdir().unwrap();
    let (src, dst) = (tmp.path().join("db"), tmp.path().join("copy"));
    let db = Db::open(&src, opts()).unwrap();
    for i in 0..2000 {
        db.put(format!("k{i:05}"), vec![b'v'; 40]).unwrap();
    }
    db.checkpoint(&dst).unwrap();
    // The source rewrites and deletes every table the copy links to.
    db.delete_range("k00000", "k01000").unwrap();
    db.put("source only", "s").unwrap();
    db.compact().unwrap();
    db.close().unwrap();
    drop(db);
    let copy = Db::open(&dst, opts()).unwrap();
    assert_eq!(copy.iter().count(), 2000);
    assert_eq!(copy.get("source only").unwrap(), None);
    copy.put("copy only", "c").unwrap();
    copy.compact().unwrap();
    drop(copy);
    let db = Db::open(&src, opts()).unwrap();
    assert_eq!((db.iter().count(), db.get("copy only").unwrap()), (1001, None));
    assert!(db_verify::db_problems(&dst).0.is_empty());
}

#[test]
fn a_checkpoint_refuses_a_directory_that_holds_anything() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Db::open(tmp.path().join("db"), opts()).unwrap();
    db.put("k", "v").unwrap();
    let dst = tmp.path().join("busy");
    std::fs::create_dir(&dst).unwrap();
    std::fs::write(dst.join("notes.txt"), "mine").unwrap();
    assert!(matches!(db.checkpoint(&dst), Err(Error::InvalidArgument(_))));
    assert_eq!(std::fs::read_dir(&dst).unwrap().count(), 1, "nothing written into it");
    // An empty directory is fine.
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    db.checkpoint(&empty).unwrap();
    assert_eq!(Db::open(&empty, opts()).unwrap().get("k").unwrap().as_deref(), Some(&b"v"[..]));
}

#[test]
fn a_stale_staging_directory_is_cleared_before_the_copy() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Db::open(tmp.path().join("db"), opts()).unwrap();
    db.put("k", "v").unwrap();
    // What a crashed checkpoint leaves: a half-built copy whose names a
    // copy built over it would take for its own.
    let stage = tmp.path().join("copy.checkpoint-tmp");
    std::fs::create_dir(&stage).unwrap();
    std::fs::write(stage.join("000999.sst"), "torn table").unwrap();
    std::fs::write(stage.join("CURRENT"), "MANIFEST-000999 00000000\n").unwrap();
    let dst = tmp.path().join("copy");
    db.checkpoint(&dst).unwrap();
    assert!(!stage.exists(), "the staging directory is renamed or removed");
    assert!(!dst.join("000999.sst").exists(), "nothing of the stale copy in the new one");
    let (problems, _) = db_verify::db_problems(&dst);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(Db::open(&dst, opts()).unwrap().get("k").unwrap().as_deref(), Some(&b"v"[..]));
}
