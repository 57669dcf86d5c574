//! SIGKILL in the middle of writes: after reopening, the database equals
//! the model after the last acknowledged batch (or the one in flight after
//! it): every acknowledged write present, byte for byte, and no batch half
//! applied (`common/oracle.rs`).
//!
//! The test re-executes its own binary in a child mode (selected by an
//! environment variable). The child writes three-key batches and prints
//! `ack N` after each `write` returns; the parent kills it at a varying
//! moment, then checks the acknowledged batches.

use std::io::Write as _;
use std::path::Path;

use siftdb::{Db, Options};

#[path = "common/kill_child.rs"]
mod kill_child;
#[path = "common/oracle.rs"]
mod oracle;

use oracle::Write;

const CHILD_ENV: &str = "SIFTDB_CRASH_CHILD_DIR";
const START_ENV: &str = "SIFTDB_CRASH_CHILD_START";

fn opts() -> Options {
    Options { memtable_bytes: 8 << 10, hash_salt: Some(11), ..Options::default() }
}

fn batch_keys(n: u64) -> [Vec<u8>; 3] {
    [0, 1, 2].map(|j| format!("b{n:010}-{j}").into_bytes())
}

/// Batch `n`: three keys of its own.
fn writes(n: u64) -> Vec<Write> {
    let value = format!("value of batch {n} padded to make memtables fill").into_bytes();
    batch_keys(n).into_iter().map(|k| Write::Put(k, value.clone())).collect()
}

fn child(dir: &Path, start: u64) {
    let db = Db::open(dir, opts()).unwrap();
    let mut out = std::io::stdout().lock();
    for n in start.. {
        db.write(oracle::batch(&writes(n))).unwrap();
        writeln!(out, "ack {n}").unwrap();
        out.flush().unwrap();
    }
}

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
    let mut model = oracle::Model::new();
    for cycle in 0..cycles {
        let start = cycle * 1_000_000;
        let child = kill_child::Child {
            test: "sigkill_mid_writes_keeps_every_acknowledged_batch_whole",
            dir_env: CHILD_ENV,
            start_env: START_ENV,
        };
        let now = kill_child::run_and_kill(&child, dir.path(), start, kill_child::jitter(cycle, 20, 150));
        // One batch at a time: after the last ack, at most the next was issued.
        let next = now.last().map_or(start, |n| n + 1);
        let db = Db::open(dir.path(), opts()).unwrap();
        let done: Vec<Vec<Write>> = now.iter().map(|&n| writes(n)).collect();
        model = oracle::check(&db, &model, &done, &[writes(next)], &format!("cycle {cycle}"));
        db.close().unwrap();
        acked.extend(now);
    }
    assert!(!acked.is_empty(), "the child never acknowledged a write");
}
