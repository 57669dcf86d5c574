//! SIGKILL in the middle of writes: after reopening, every acknowledged
//! write is present and no batch is half applied.
//!
//! The test re-executes its own binary in a child mode (selected by an
//! environment variable). The child writes three-key batches and prints
//! `ack N` after each `write` returns; the parent kills it at a varying
//! moment, then checks the acknowledged batches.

use std::io::Write;
use std::path::Path;

use siftdb::{Db, Options, WriteBatch};

#[path = "common/kill_child.rs"]
mod kill_child;

const CHILD_ENV: &str = "SIFTDB_CRASH_CHILD_DIR";
const START_ENV: &str = "SIFTDB_CRASH_CHILD_START";

fn opts() -> Options {
    Options { memtable_bytes: 8 << 10, hash_salt: Some(11), ..Options::default() }
}

fn batch_keys(n: u64) -> [Vec<u8>; 3] {
    [0, 1, 2].map(|j| format!("b{n:010}-{j}").into_bytes())
}

fn child(dir: &Path, start: u64) {
    let db = Db::open(dir, opts()).unwrap();
    let mut out = std::io::stdout().lock();
    for n in start.. {
        let mut batch = WriteBatch::new();
        for k in batch_keys(n) {
            batch.put(&k, format!("value of batch {n} padded to make memtables fill").as_bytes());
        }
        db.write(batch).unwrap();
        writeln!(out, "ack {n}").unwrap();
        out.flush().unwrap();
    }
}

/// A pseudo-random delay from the clock, so cycles die at different points.

#[test]
fn sigkill_mid_writes_keeps_every_acknowledged_batch_whole() {
    if let Ok(dir) = std::env::var(CHILD_ENV) {
        let start = std::env::var(START_ENV).unwrap().parse().unwrap();
        child(Path::new(&dir), start);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cycles: u64 = std::env::var("SIFTDB_CRASH_CYCLES").ok().and_then(|s| s.parse().ok()).unwrap_or(8);
    let mut acked: Vec<u64> = Vec::new();
    for cycle in 0..cycles {
        let start = cycle * 1_000_000;
        let child = kill_child::Child {
            test: "sigkill_mid_writes_keeps_every_acknowledged_batch_whole",
            dir_env: CHILD_ENV,
            start_env: START_ENV,
        };
        acked.extend(kill_child::run_and_kill(&child, dir.path(), start, kill_child::jitter(cycle, 20, 150)));

        let db = Db::open(dir.path(), opts()).unwrap();
        for &n in &acked {
            for k in batch_keys(n) {
                assert!(db.get(&k).unwrap().is_some(), "cycle {cycle}: acknowledged batch {n} lost");
            }
        }
        // No half batch: every batch present has all three keys.
        let mut counts = std::collections::BTreeMap::<Vec<u8>, usize>::new();
        for item in db.iter() {
            let (k, _) = item.unwrap();
            *counts.entry(k[..11].to_vec()).or_default() += 1;
        }
        assert!(counts.values().all(|&c| c == 3), "cycle {cycle}: a batch is half applied");
        db.close().unwrap();
    }
    assert!(!acked.is_empty(), "the child never acknowledged a write");
}
