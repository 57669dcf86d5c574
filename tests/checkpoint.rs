//! `Db::checkpoint` (issue 63, step 1): copies taken while writers run open
//! clean, hold a prefix of each writer's acknowledged batches (every batch
//! whole), and then live apart from the source.

#[path = "common/db_verify.rs"]
mod db_verify;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use siftdb::{Db, Error, Options, WriteBatch};

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

fn key(writer: usize, batch: u64, j: usize) -> String {
    format!("w{writer}-{batch:06}-{j}")
}

/// The batches of `writer` present in `db`: each whole or absent, and
/// present exactly for a prefix `0..n`; returns `n`.
fn prefix_of(db: &Db, writer: usize, up_to: u64) -> u64 {
    let mut n = 0;
    for batch in 0..up_to {
        let present: Vec<bool> =
            (0..KEYS_PER_BATCH).map(|j| db.get(key(writer, batch, j)).unwrap().is_some()).collect();
        assert!(
            present.iter().all(|&p| p == present[0]),
            "writer {writer} batch {batch} half there: {present:?}"
        );
        if present[0] {
            assert_eq!(n, batch, "writer {writer}: batch {batch} present after a missing one");
            n += 1;
        }
    }
    n
}

#[test]
fn checkpoints_taken_under_writes_hold_a_prefix_of_whole_batches() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Db::open(tmp.path().join("db"), opts()).unwrap();
    let acked: Arc<Vec<AtomicU64>> = Arc::new((0..WRITERS).map(|_| AtomicU64::new(0)).collect());
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (db, acked, stop) = (db.clone(), Arc::clone(&acked), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut batch_no = 0;
                while !stop.load(Ordering::Relaxed) {
                    let mut b = WriteBatch::new();
                    for j in 0..KEYS_PER_BATCH {
                        b.put(key(w, batch_no, j), vec![b'v'; 40]);
                    }
                    db.write(b).unwrap();
                    batch_no += 1;
                    acked[w].store(batch_no, Ordering::Release);
                }
            })
        })
        .collect();
    let mut copies = Vec::new();
    for i in 0..3 {
        std::thread::sleep(std::time::Duration::from_millis(150));
        let before: Vec<u64> = acked.iter().map(|a| a.load(Ordering::Acquire)).collect();
        let dst = tmp.path().join(format!("copy{i}"));
        db.checkpoint(&dst).unwrap();
        let after: Vec<u64> = acked.iter().map(|a| a.load(Ordering::Acquire)).collect();
        copies.push((dst, before, after));
    }
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().unwrap();
    }
    for (dst, before, after) in &copies {
        let (problems, _) = db_verify::db_problems(dst);
        assert!(problems.is_empty(), "{}: {problems:?}", dst.display());
        let copy = Db::open(dst, opts()).unwrap();
        for w in 0..WRITERS {
            let n = prefix_of(&copy, w, after[w] + 1);
            assert!(
                (before[w]..=after[w]).contains(&n),
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
