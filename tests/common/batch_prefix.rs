//! Checks shared by the tests that read a database while writers write
//! numbered batches (checkpoints, secondaries), and that compare a
//! directory before and after.

#![allow(dead_code, reason = "each test file uses a part")]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use siftdb::{Db, WriteBatch};

/// The key `j` of batch `batch` of writer `writer`.
pub fn batch_key(writer: usize, batch: u64, j: usize) -> String {
    format!("w{writer}-{batch:06}-{j}")
}

/// The batches of `writer` (of `per_batch` keys each) present in `db`:
/// each whole or absent, and present exactly for a prefix `0..n`; returns
/// `n`.
pub fn prefix_of(db: &Db, writer: usize, up_to: u64, per_batch: usize) -> u64 {
    let mut n = 0;
    for batch in 0..up_to {
        let present: Vec<bool> =
            (0..per_batch).map(|j| db.get(batch_key(writer, batch, j)).unwrap().is_some()).collect();
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

/// Every file in `dir` with its bytes, sorted by name.
pub fn dir_files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| (p.clone(), std::fs::read(&p).unwrap()))
        .collect();
    v.sort();
    v
}

/// Threads that each write numbered batches of `per_batch` keys into a
/// database until stopped, counting the batches acknowledged.
pub struct BatchWriters {
    acked: Arc<Vec<AtomicU64>>,
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl BatchWriters {
    /// Starts `writers` threads writing batches of `per_batch` keys with
    /// `value_len`-byte values.
    pub fn start(db: &Db, writers: usize, per_batch: usize, value_len: usize) -> Self {
        let acked: Arc<Vec<AtomicU64>> = Arc::new((0..writers).map(|_| AtomicU64::new(0)).collect());
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..writers)
            .map(|w| {
                let (db, acked, stop) = (db.clone(), Arc::clone(&acked), Arc::clone(&stop));
                std::thread::spawn(move || {
                    let mut batch_no = 0;
                    while !stop.load(Ordering::Relaxed) {
                        let mut b = WriteBatch::new();
                        for j in 0..per_batch {
                            b.put(batch_key(w, batch_no, j), vec![b'v'; value_len]);
                        }
                        db.write(b).unwrap();
                        batch_no += 1;
                        acked[w].store(batch_no, Ordering::Release);
                    }
                })
            })
            .collect();
        BatchWriters { acked, stop, threads }
    }

    /// Batches acknowledged so far, per writer.
    pub fn acked(&self) -> Vec<u64> {
        self.acked.iter().map(|a| a.load(Ordering::Acquire)).collect()
    }

    /// Stops the writers and waits for them.
    pub fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads {
            t.join().unwrap();
        }
    }
}
