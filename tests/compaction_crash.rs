//! SIGKILL while writes run and compactions rewrite the tree: after reopen,
//! the database equals the model after the last acknowledged batch (or the
//! one in flight after it), byte for byte (`common/oracle.rs`), and the
//! manifest names only files that exist.
//!
//! 100 kill cycles by default (issue 5 asks for 100+); `SIFTDB_CRASH_CYCLES=N` runs more.

use std::io::Write as _;
use std::path::Path;

use siftdb::{Db, Options};

#[path = "common/kill_child.rs"]
mod kill_child;
#[path = "common/oracle.rs"]
mod oracle;

use oracle::Write;

const CHILD_ENV: &str = "SIFTDB_COMPACTION_CRASH_DIR";
const START_ENV: &str = "SIFTDB_COMPACTION_CRASH_START";
const HOT_KEYS: u64 = 300;

fn opts() -> Options {
    Options {
        memtable_bytes: 4 << 10,
        hash_salt: Some(13),
        block_bytes: 256,
        l0_compaction_trigger: 2,
        l0_slowdown_trigger: 6,
        l0_stop_trigger: 10,
        base_level_bytes: 8 << 10,
        level_size_ratio: 3,
        table_target_bytes: 4 << 10,
        max_levels: 5,
        ..Options::default()
    }
}

fn hot_key(n: u64) -> Vec<u8> {
    format!("hot{:04}", (n * 7) % HOT_KEYS).into_bytes()
}

fn unique_key(n: u64) -> Vec<u8> {
    format!("uniq{n:012}").into_bytes()
}

/// Batch `n`: a hot key overwritten, a new key, every third batch the
/// previous batch's new key deleted, and every fiftieth a range of ten
/// earlier ones.
fn writes(n: u64) -> Vec<Write> {
    let mut w = vec![
        Write::Put(hot_key(n), n.to_string().into_bytes()),
        Write::Put(unique_key(n), format!("unique value {n} with some padding to fill tables").into_bytes()),
    ];
    if n.is_multiple_of(3) {
        w.push(Write::Delete(unique_key(n.saturating_sub(1))));
    }
    if n.is_multiple_of(50) {
        w.push(Write::DeleteRange(unique_key(n.saturating_sub(30)), unique_key(n.saturating_sub(20))));
    }
    w
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

fn check_files(db: &Db, cycle: u64) {
    for t in db.tables() {
        assert!(t.path.exists(), "cycle {cycle}: manifest names missing {}", t.path.display());
    }
}

#[test]
fn sigkill_during_compaction_loses_no_acknowledged_write() {
    if let Ok(dir) = std::env::var(CHILD_ENV) {
        let start = std::env::var(START_ENV).unwrap().parse().unwrap();
        child(Path::new(&dir), start);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cycles: u64 = std::env::var("SIFTDB_CRASH_CYCLES").ok().and_then(|s| s.parse().ok()).unwrap_or(100);
    let mut acked: Vec<u64> = Vec::new();
    let mut model = oracle::Model::new();
    let mut compactions_seen = false;
    for cycle in 0..cycles {
        let start = acked.last().map_or(0, |n| n + 1) + 1_000;
        let child = kill_child::Child {
            test: "sigkill_during_compaction_loses_no_acknowledged_write",
            dir_env: CHILD_ENV,
            start_env: START_ENV,
        };
        let now = kill_child::run_and_kill(&child, dir.path(), start, kill_child::jitter(cycle, 30, 170));
        // The child writes one batch at a time: after its last ack, at
        // most the next batch was issued.
        let next = now.last().map_or(start, |n| n + 1);
        let db = Db::open(dir.path(), opts()).unwrap();
        let done: Vec<Vec<Write>> = now.iter().map(|&n| writes(n)).collect();
        model = oracle::check(&db, &model, &done, &[writes(next)], &format!("cycle {cycle}"));
        check_files(&db, cycle);
        acked.extend(now);
        compactions_seen |= db.tables().iter().any(|t| t.level >= 2);
        db.close().unwrap();
    }
    assert!(!acked.is_empty(), "the child never acknowledged a write");
    assert!(compactions_seen || cycles < 5, "no compaction output ever reached level 2");
}
