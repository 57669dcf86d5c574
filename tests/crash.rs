//! Crash loop with an oracle: a child process (this test binary re-run in
//! child mode) hammers a database from several threads — puts, deletes,
//! multi-key batches, flushes, compactions, with tiny memtables and tables
//! — and logs each op to an oracle file, fsynced, as an intent before the
//! call and an ack after it. The parent SIGKILLs the child at a random
//! moment, reopens the database, and checks every key:
//!
//! - every acknowledged write is present;
//! - an op in flight at the kill (intent, no ack) left old or new values;
//! - a batch is all-or-nothing;
//! - no key exists that the oracle does not explain;
//! - what `siftdb db verify` checks is clean, both on the killed child's
//!   files and after the reopen (every table verifies and matches its
//!   manifest record, every log replays strictly).
//!
//! Sizes are chosen so that compactions push data past L1: the test
//! asserts that a table reached level 2 or deeper in some cycle.
//!
//! The same database is carried through every cycle, so recovery runs on
//! the leftovers of earlier recoveries. `SIFTDB_CRASH_CYCLES=N` (default
//! 100) sets the number of cycles.

#[path = "common/db_verify.rs"]
mod db_verify;
#[path = "common/workload.rs"]
mod workload;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use siftdb::{Db, Options, WriteBatch};
use workload::Rng;

const CHILD_DIR: &str = "SIFTDB_CRASH_CHILD_DIR";
const CHILD_CYCLE: &str = "SIFTDB_CRASH_CHILD_CYCLE";
const WRITERS: u64 = 3;
const KEYS_PER_WRITER: u64 = 64;
/// A child left running this long (the parent died) stops by itself.
const CHILD_MAX_RUN: Duration = Duration::from_secs(20);

fn options(cycle: u64) -> Options {
    Options {
        // Odd cycles use buffered writes: those also survive a process kill.
        sync: cycle.is_multiple_of(2),
        memtable_bytes: 4096,
        block_bytes: 512,
        // About 3 × 64 keys × 100 bytes live: L1 (4 KiB) overflows into
        // L2 (16 KiB), and L2 at times into L3.
        table_target_bytes: 4096,
        base_level_bytes: 4 << 10,
        level_size_ratio: 4,
        l0_compaction_trigger: 2,
        hash_salt: Some(0xC0DE),
        ..Options::default()
    }
}

fn key(writer: u64, i: u64) -> Vec<u8> {
    format!("w{writer}k{i:02}").into_bytes()
}

fn oracle_path(dir: &Path, cycle: u64, writer: u64) -> PathBuf {
    dir.join(format!("oracle-c{cycle:05}-w{writer}"))
}

/// One writer thread of the child: random ops on its own keys, each logged
/// as intent then ack. Stops when `stop` is set or after `max_ops`.
fn writer(db: &Db, dir: &Path, cycle: u64, w: u64, stop: &AtomicBool, max_ops: u64) {
    let mut oracle = std::fs::File::create(oracle_path(dir, cycle, w)).unwrap();
    let mut rng = Rng::new(cycle * 1000 + w + 1);
    for op in 0..max_ops {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let width = if rng.below(4) == 0 { 2 + rng.below(4) } else { 1 };
        let entries: Vec<(Vec<u8>, Option<String>)> = (0..width)
            .map(|j| {
                let k = key(w, rng.below(KEYS_PER_WRITER));
                let v = (rng.below(5) != 0).then(|| format!("c{cycle}w{w}o{op}.{j}{}", "-".repeat(80)));
                (k, v)
            })
            .collect();
        let mut line = format!("I {op}");
        for (k, v) in &entries {
            line.push_str(&format!(" {}={}", String::from_utf8_lossy(k), v.as_deref().unwrap_or("-")));
        }
        line.push('\n');
        oracle.write_all(line.as_bytes()).unwrap();
        oracle.sync_data().unwrap();
        let result = if let [(k, v)] = entries.as_slice() {
            match v {
                Some(v) => db.put(k, v.as_bytes()),
                None => db.delete(k),
            }
        } else {
            let mut batch = WriteBatch::new();
            for (k, v) in &entries {
                match v {
                    Some(v) => batch.put(k, v.as_bytes()),
                    None => batch.delete(k),
                }
            }
            db.write(batch)
        };
        result.unwrap();
        oracle.write_all(format!("A {op}\n").as_bytes()).unwrap();
        oracle.sync_data().unwrap();
    }
}

/// The child's work: writers plus a thread flushing and compacting, until
/// every writer has done `max_ops` ops or `max_run` has passed.
fn child_workload(dir: &Path, cycle: u64, max_ops: u64, max_run: Duration) {
    let db = Db::open(dir.join("db"), options(cycle)).unwrap();
    let stop = AtomicBool::new(false);
    let finished = AtomicU64::new(0);
    std::thread::scope(|s| {
        for w in 0..WRITERS {
            let (db, stop, finished) = (&db, &stop, &finished);
            s.spawn(move || {
                writer(db, dir, cycle, w, stop, max_ops);
                finished.fetch_add(1, Ordering::Relaxed);
            });
        }
        let mut rng = Rng::new(cycle);
        let start = Instant::now();
        while finished.load(Ordering::Relaxed) < WRITERS {
            std::thread::sleep(Duration::from_millis(2 + rng.below(8)));
            match rng.below(3) {
                0 => db.flush().unwrap(),
                1 => db.compact().unwrap(),
                _ => {}
            }
            if start.elapsed() > max_run {
                stop.store(true, Ordering::Relaxed);
            }
        }
    });
    db.close().unwrap();
}

/// One op as the oracle logs it: `(key, Some(value))` puts, `(key, None)` deletes.
type Entries = Vec<(Vec<u8>, Option<Vec<u8>>)>;

/// What one writer's oracle says: ops acknowledged, and the op in flight.
struct Oracle {
    acked: Vec<Entries>,
    in_flight: Option<Entries>,
}

fn read_oracle(path: &Path) -> Oracle {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut oracle = Oracle { acked: Vec::new(), in_flight: None };
    // A line cut by the kill has no newline: its op was never issued
    // (intent) or its ack never recorded (the op stays in flight).
    let complete = text.rfind('\n').map_or("", |end| &text[..end]);
    for line in complete.lines() {
        let mut parts = line.split(' ');
        match parts.next() {
            Some("I") => {
                assert!(oracle.in_flight.is_none(), "two ops in flight on one thread");
                parts.next();
                let entries = parts
                    .map(|kv| {
                        let (k, v) = kv.split_once('=').unwrap();
                        (k.as_bytes().to_vec(), (v != "-").then(|| v.as_bytes().to_vec()))
                    })
                    .collect();
                oracle.in_flight = Some(entries);
            }
            Some("A") => oracle.acked.push(oracle.in_flight.take().expect("ack without intent")),
            other => panic!("bad oracle line {other:?}"),
        }
    }
    oracle
}

type State = BTreeMap<Vec<u8>, Vec<u8>>;

fn apply(state: &mut State, entries: &[(Vec<u8>, Option<Vec<u8>>)]) {
    for (k, v) in entries {
        match v {
            Some(v) => state.insert(k.clone(), v.clone()),
            None => state.remove(k),
        };
    }
}

/// Checks the reopened database against the model and this cycle's
/// oracles; returns the state actually recovered (the new model). Returns
/// how many ops were acknowledged and how many were in flight.
fn verify(db: &Db, dir: &Path, cycle: u64, model: &mut State) -> (usize, usize) {
    let got: State = db.iter().map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap()).collect();
    let (mut acked, mut flying) = (0, 0);
    for w in 0..WRITERS {
        let oracle = read_oracle(&oracle_path(dir, cycle, w));
        for entries in &oracle.acked {
            apply(model, entries);
            acked += 1;
        }
        if let Some(entries) = oracle.in_flight {
            flying += 1;
            let mut new = model.clone();
            apply(&mut new, &entries);
            let keys: Vec<&Vec<u8>> = entries.iter().map(|(k, _)| k).collect();
            let matches = |s: &State| keys.iter().all(|k| s.get(*k) == got.get(*k));
            if matches(&new) {
                *model = new;
            } else {
                assert!(
                    matches(model),
                    "cycle {cycle}: in-flight op of writer {w} half applied: {entries:?}"
                );
            }
        }
    }
    for (k, v) in model.iter() {
        assert_eq!(got.get(k), Some(v), "cycle {cycle}: key {:?} lost or wrong", String::from_utf8_lossy(k));
        assert_eq!(
            db.get(k).unwrap().as_deref(),
            Some(v.as_slice()),
            "cycle {cycle}: get disagrees with scan"
        );
    }
    for k in got.keys() {
        assert!(
            model.contains_key(k),
            "cycle {cycle}: key {:?} the oracle never wrote",
            String::from_utf8_lossy(k)
        );
    }
    (acked, flying)
}

/// Child mode runs the workload until killed. Run directly by `cargo test`,
/// it runs a short workload to completion and checks the database against
/// the oracle with nothing in flight.
#[test]
fn crash_child_workload() {
    if let Some(dir) = std::env::var_os(CHILD_DIR) {
        let cycle = std::env::var(CHILD_CYCLE).unwrap().parse().unwrap();
        child_workload(Path::new(&dir), cycle, u64::MAX, CHILD_MAX_RUN);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    child_workload(dir.path(), 1, 200, CHILD_MAX_RUN);
    let db = Db::open(dir.path().join("db"), options(1)).unwrap();
    let mut model = State::new();
    let (acked, flying) = verify(&db, dir.path(), 1, &mut model);
    assert_eq!((acked, flying), (200 * WRITERS as usize, 0));
    db.close().unwrap();
    assert_verified(&dir.path().join("db"), 1, "after a clean run");
}

/// Fails if `db verify` would report a problem; returns the deepest level
/// holding a table.
fn assert_verified(db_dir: &Path, cycle: u64, when: &str) -> Option<usize> {
    let (problems, deepest) = db_verify::db_problems(db_dir);
    assert!(problems.is_empty(), "cycle {cycle}: db verify {when}: {problems:#?}");
    deepest
}

#[test]
fn crash_loop() {
    let cycles: u64 = std::env::var("SIFTDB_CRASH_CYCLES").map_or(100, |s| s.parse().unwrap());
    let shm = Path::new("/dev/shm");
    let dir = if shm.is_dir() { tempfile::tempdir_in(shm) } else { tempfile::tempdir() }.unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut rng = Rng::new(0xC4A5);
    let mut model = State::new();
    let (mut acked, mut flying) = (0, 0);
    let mut deepest = None;
    let start = Instant::now();
    for cycle in 0..cycles {
        let stderr = std::fs::File::create(dir.path().join("child-stderr")).unwrap();
        let mut child = Command::new(&exe)
            .args(["crash_child_workload", "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD_DIR, dir.path())
            .env(CHILD_CYCLE, cycle.to_string())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(20 + rng.below(100)));
        if let Some(status) = child.try_wait().unwrap() {
            let log = std::fs::read_to_string(dir.path().join("child-stderr")).unwrap_or_default();
            panic!("cycle {cycle}: child exited by itself ({status}):\n{log}");
        }
        child.kill().unwrap(); // SIGKILL on unix
        child.wait().unwrap();
        deepest = deepest.max(assert_verified(&dir.path().join("db"), cycle, "after the kill"));
        let db = Db::open(dir.path().join("db"), options(cycle)).unwrap();
        let (a, f) = verify(&db, dir.path(), cycle, &mut model);
        acked += a;
        flying += f;
        db.close().unwrap();
        deepest = deepest.max(assert_verified(&dir.path().join("db"), cycle, "after the reopen"));
        for w in 0..WRITERS {
            let _ = std::fs::remove_file(oracle_path(dir.path(), cycle, w));
        }
    }
    eprintln!(
        "crash loop: {cycles} cycles in {:.1}s, {acked} acknowledged ops all present, {flying} in-flight ops \
         all-or-nothing, {} live keys, db verify clean twice per cycle, deepest level {deepest:?}",
        start.elapsed().as_secs_f64(),
        model.len()
    );
    assert!(acked > cycles as usize, "children made too little progress to test anything");
    if cycles >= 20 {
        assert!(deepest >= Some(2), "no table ever reached level 2: compactions past L1 were not tested");
    }
}
