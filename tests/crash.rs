//! Crash loop with an oracle: a child process (this test binary re-run in
//! child mode) hammers a database from several threads — puts, deletes,
//! range deletes, multi-key batches, ingests of tables built beside it,
//! flushes, compactions and a checkpoint, with tiny memtables and tables —
//! and logs each write to an oracle file, fsynced, as an intent before the
//! call and an ack after it. The parent SIGKILLs the child at a random
//! moment, reopens the database, and checks it with `common/oracle.rs`:
//!
//! - the whole contents equal the model after every acknowledged write
//!   plus any subset of the writes in flight at the kill (one per writer;
//!   writers own disjoint keys, so those commute), each whole or absent;
//! - read by a forward scan, a reverse scan and a get of every key;
//! - what `siftdb db verify` checks is clean, both on the killed child's
//!   files and after the reopen (every table verifies and matches its
//!   manifest record, every log replays strictly), and on a checkpoint the
//!   child finished or left published.
//!
//! Sizes are chosen so that compactions push data past L1: the test
//! asserts that a table reached level 2 or deeper in some cycle.
//!
//! The same database is carried through every cycle, so recovery runs on
//! the leftovers of earlier recoveries. `SIFTDB_CRASH_CYCLES=N` (default
//! 100) sets the number of cycles.

#[path = "common/db_verify.rs"]
mod db_verify;
#[path = "common/oracle.rs"]
mod oracle;
#[path = "common/workload.rs"]
mod workload;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use oracle::{Model, Write};
use siftdb::{Db, Options};
use workload::Rng;

const CHILD_DIR: &str = "SIFTDB_CRASH_CHILD_DIR";
const CHILD_CYCLE: &str = "SIFTDB_CRASH_CHILD_CYCLE";
const WRITERS: u64 = 3;
/// This writer's ops are ingests two times in three.
const INGESTER: u64 = WRITERS - 1;
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
        // Range filters in two cycles of three: format-5 tables under kills.
        range_filter: (cycle % 3 != 2).then(siftdb::RangeFilterPolicy::default),
        ..Options::default()
    }
}

fn key(writer: u64, i: u64) -> Vec<u8> {
    format!("w{writer}k{i:02}").into_bytes()
}

fn oracle_path(dir: &Path, cycle: u64, writer: u64) -> PathBuf {
    dir.join(format!("oracle-c{cycle:05}-w{writer}"))
}

fn checkpoint_path(dir: &Path, cycle: u64) -> PathBuf {
    dir.join(format!("checkpoint-c{cycle:05}"))
}

fn value(cycle: u64, w: u64, op: u64, j: usize) -> Vec<u8> {
    format!("c{cycle}w{w}o{op}.{j}{}", "-".repeat(80)).into_bytes()
}

/// One batch on writer `w`'s keys: mostly one put or delete, at times
/// 2–5 writes, and one write in twenty a range delete of 1–12 keys.
fn writes(rng: &mut Rng, cycle: u64, w: u64, op: u64) -> Vec<Write> {
    let width = if rng.below(4) == 0 { 2 + rng.below(4) } else { 1 };
    (0..width as usize)
        .map(|j| {
            let i = rng.below(KEYS_PER_WRITER);
            match rng.below(20) {
                0 => Write::DeleteRange(key(w, i), key(w, i + 1 + rng.below(12))),
                1..=4 => Write::Delete(key(w, i)),
                _ => Write::Put(key(w, i), value(cycle, w, op, j)),
            }
        })
        .collect()
}

/// An ingest's table: 2–16 of writer `w`'s keys in order, one in eight a
/// deletion.
fn ingest_writes(rng: &mut Rng, cycle: u64, w: u64, op: u64) -> Vec<Write> {
    let mut keys: Vec<u64> = (0..2 + rng.below(15)).map(|_| rng.below(KEYS_PER_WRITER)).collect();
    keys.sort_unstable();
    keys.dedup();
    keys.iter()
        .enumerate()
        .map(|(j, &i)| {
            if rng.below(8) == 0 {
                Write::Delete(key(w, i))
            } else {
                Write::Put(key(w, i), value(cycle, w, op, j))
            }
        })
        .collect()
}

/// One line of the oracle: `P:key:value`, `D:key`, `R:start:end`.
fn encode(writes: &[Write]) -> String {
    let text = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
    let tokens: Vec<String> = writes
        .iter()
        .map(|w| match w {
            Write::Put(k, v) => format!("P:{}:{}", text(k), text(v)),
            Write::Delete(k) => format!("D:{}", text(k)),
            Write::DeleteRange(a, b) => format!("R:{}:{}", text(a), text(b)),
        })
        .collect();
    tokens.join(" ")
}

fn decode(tokens: std::str::Split<'_, char>) -> Vec<Write> {
    tokens
        .map(|t| {
            let parts: Vec<Vec<u8>> = t.split(':').map(|p| p.as_bytes().to_vec()).collect();
            match (parts[0].as_slice(), &parts[1..]) {
                (b"P", [k, v]) => Write::Put(k.clone(), v.clone()),
                (b"D", [k]) => Write::Delete(k.clone()),
                (b"R", [a, b]) => Write::DeleteRange(a.clone(), b.clone()),
                _ => panic!("bad oracle token {t:?}"),
            }
        })
        .collect()
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
        let ingesting = w == INGESTER && rng.below(3) != 0;
        let entries =
            if ingesting { ingest_writes(&mut rng, cycle, w, op) } else { writes(&mut rng, cycle, w, op) };
        let intent = if ingesting { "J" } else { "I" };
        oracle.write_all(format!("{intent} {op} {}\n", encode(&entries)).as_bytes()).unwrap();
        oracle.sync_data().unwrap();
        let result = if ingesting {
            oracle::ingest(db, &dir.join(format!("ingest-c{cycle:05}-o{op}.sst")), &entries)
        } else if let [Write::Put(k, v)] = entries.as_slice() {
            db.put(k, v)
        } else if let [Write::Delete(k)] = entries.as_slice() {
            db.delete(k)
        } else {
            db.write(oracle::batch(&entries))
        };
        result.unwrap();
        oracle.write_all(format!("A {op}\n").as_bytes()).unwrap();
        oracle.sync_data().unwrap();
    }
}

/// The child's work: writers plus a thread flushing and compacting (and
/// once taking a checkpoint), until every writer has done `max_ops` ops
/// or `max_run` has passed.
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
        let mut checkpointed = false;
        while finished.load(Ordering::Relaxed) < WRITERS {
            std::thread::sleep(Duration::from_millis(2 + rng.below(8)));
            match rng.below(3) {
                0 => db.flush().unwrap(),
                1 => db.compact().unwrap(),
                _ if !checkpointed && rng.below(2) == 0 => {
                    db.checkpoint(checkpoint_path(dir, cycle)).unwrap();
                    checkpointed = true;
                }
                _ => {}
            }
            if start.elapsed() > max_run {
                stop.store(true, Ordering::Relaxed);
            }
        }
    });
    db.close().unwrap();
}

/// What one writer's oracle says: batches acknowledged (`ingests` of them
/// ingested), and the one in flight. An intent line starts `I` for a
/// write, `J` for an ingest.
struct Log {
    acked: Vec<Vec<Write>>,
    in_flight: Option<Vec<Write>>,
    ingests: usize,
}

fn read_oracle(path: &Path) -> Log {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut log = Log { acked: Vec::new(), in_flight: None, ingests: 0 };
    let mut ingest = false;
    // A line cut by the kill has no newline: its op was never issued
    // (intent) or its ack never recorded (the op stays in flight).
    let complete = text.rfind('\n').map_or("", |end| &text[..end]);
    for line in complete.lines() {
        let mut parts = line.split(' ');
        match parts.next() {
            Some(intent @ ("I" | "J")) => {
                assert!(log.in_flight.is_none(), "two ops in flight on one thread");
                parts.next();
                log.in_flight = Some(decode(parts));
                ingest = intent == "J";
            }
            Some("A") => {
                log.acked.push(log.in_flight.take().expect("ack without intent"));
                log.ingests += usize::from(ingest);
            }
            other => panic!("bad oracle line {other:?}"),
        }
    }
    log
}

/// Checks the reopened database against the model and this cycle's
/// oracles, and makes the model what it was found to hold. Returns how
/// many ops were acknowledged and how many were in flight.
fn verify(db: &Db, dir: &Path, cycle: u64, model: &mut Model) -> Counts {
    let (mut acked, mut in_flight, mut ingests) = (Vec::new(), Vec::new(), 0);
    for w in 0..WRITERS {
        let log = read_oracle(&oracle_path(dir, cycle, w));
        acked.extend(log.acked);
        in_flight.extend(log.in_flight);
        ingests += log.ingests;
    }
    *model = oracle::check_subsets(db, model, &acked, &in_flight, &format!("cycle {cycle}"));
    Counts { acked: acked.len(), in_flight: in_flight.len(), ingests }
}

/// What a cycle checked: ops acknowledged (`ingests` of them ingests) and
/// ops in flight at the kill.
#[derive(Debug, Default, PartialEq, Eq)]
struct Counts {
    acked: usize,
    in_flight: usize,
    ingests: usize,
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
    let mut model = Model::new();
    let counts = verify(&db, dir.path(), 1, &mut model);
    assert_eq!((counts.acked, counts.in_flight), (200 * WRITERS as usize, 0));
    assert!(counts.ingests > 100, "the ingester ingested {} times in 200 ops", counts.ingests);
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
    let mut model = Model::new();
    let mut total = Counts::default();
    let mut checkpoints = 0;
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
        let c = verify(&db, dir.path(), cycle, &mut model);
        total.acked += c.acked;
        total.in_flight += c.in_flight;
        total.ingests += c.ingests;
        db.close().unwrap();
        deepest = deepest.max(assert_verified(&dir.path().join("db"), cycle, "after the reopen"));
        // A checkpoint the kill cut short was never published; one that
        // was is whole.
        let checkpoint = checkpoint_path(dir.path(), cycle);
        if checkpoint.exists() {
            assert_verified(&checkpoint, cycle, "of its checkpoint");
            Db::open(&checkpoint, options(cycle)).unwrap().close().unwrap();
            checkpoints += 1;
        }
        for entry in std::fs::read_dir(dir.path()).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name() != Some("db".as_ref()) {
                let _ =
                    if path.is_dir() { std::fs::remove_dir_all(&path) } else { std::fs::remove_file(&path) };
            }
        }
    }
    eprintln!(
        "crash loop: {cycles} cycles in {:.1}s, {} acknowledged ops ({} ingests) all present, {} in-flight ops \
         all-or-nothing, {} live keys, db verify clean twice per cycle, {checkpoints} checkpoints whole, deepest \
         level {deepest:?}",
        start.elapsed().as_secs_f64(),
        total.acked,
        total.ingests,
        total.in_flight,
        model.len()
    );
    assert!(total.ingests > 0, "no ingest was acknowledged");
    assert!(total.acked > cycles as usize, "children made too little progress to test anything");
    if cycles >= 20 {
        assert!(deepest >= Some(2), "no table ever reached level 2: compactions past L1 were not tested");
    }
}
