//! Stress: writers, readers, snapshots, flushes and compactions at once,
//! every read checked against per-key expectations.
//!
//! Each writer owns its keys and writes versions 1, 2, 3, ... to each
//! (version `v` is a delete when `v % 7 == 0`, else the value `v`),
//! publishing `started[k] = v` before the call and `acked[k] = v` after it.
//! So a read of `k` must observe a version between `acked[k]` read before
//! the read and `started[k]` read after it (a delete observed as "absent"),
//! and a reader never sees a key go back in time. A snapshot must read the
//! same thing every time, at least what was acknowledged before it was
//! taken. At the end, and after a reopen, every key holds its last version.
//!
//! `SIFTDB_STRESS_OPS=N` sets each writer's op count (default 5000), and
//! `SIFTDB_STRESS_THREADS=N` the number of writer threads and of reader
//! threads (default 3 each).

#[path = "common/workload.rs"]
mod workload;

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use siftdb::{Db, Options, WriteBatch};
use workload::Rng;

const KEYS_PER_WRITER: u64 = 24;

/// Writer threads, and as many readers: `SIFTDB_STRESS_THREADS` (default 3).
fn threads() -> u64 {
    static THREADS: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| {
        std::env::var("SIFTDB_STRESS_THREADS").map_or(3, |s| s.parse().expect("SIFTDB_STRESS_THREADS"))
    })
}

fn keys() -> u64 {
    threads() * KEYS_PER_WRITER
}

fn key(i: u64) -> Vec<u8> {
    format!("k{i:04}").into_bytes()
}

fn is_delete(version: u64) -> bool {
    version.is_multiple_of(7)
}

fn value(version: u64) -> Vec<u8> {
    format!("{version:010}|{}", "v".repeat(30)).into_bytes()
}

/// The version a read result names; `None` for "absent" (never written, or
/// a delete).
fn version_of(got: Option<&[u8]>) -> Option<u64> {
    got.map(|v| std::str::from_utf8(&v[..10]).unwrap().parse().unwrap())
}

/// Whether a read result is possible for a version in `lo..=hi`.
fn plausible(got: Option<u64>, lo: u64, hi: u64) -> bool {
    match got {
        Some(v) => (lo..=hi).contains(&v) && !is_delete(v),
        None => (lo..=hi).any(|v| v == 0 || is_delete(v)),
    }
}

struct Shared {
    started: Vec<AtomicU64>,
    acked: Vec<AtomicU64>,
    done: AtomicBool,
}

fn options() -> Options {
    Options {
        memtable_bytes: 8 << 10,
        block_bytes: 512,
        table_target_bytes: 16 << 10,
        base_level_bytes: 32 << 10,
        l0_compaction_trigger: 2,
        hash_salt: Some(0x57E5),
        ..Options::default()
    }
}

fn writer(db: &Db, sh: &Shared, w: u64, ops: u64) {
    let mut rng = Rng::new(w + 1);
    let mut next = vec![1u64; KEYS_PER_WRITER as usize];
    for _ in 0..ops {
        // One key, or a batch of up to 3 of this writer's keys.
        let width = if rng.below(4) == 0 { 2 + rng.below(2) } else { 1 };
        let mut picked: Vec<u64> = (0..width).map(|_| rng.below(KEYS_PER_WRITER)).collect();
        picked.sort_unstable();
        picked.dedup();
        let mut batch = WriteBatch::new();
        let mut versions = Vec::new();
        for &i in &picked {
            let k = w * KEYS_PER_WRITER + i;
            let v = next[i as usize];
            next[i as usize] += 1;
            sh.started[k as usize].store(v, Ordering::SeqCst);
            if is_delete(v) {
                batch.delete(key(k));
            } else {
                batch.put(key(k), value(v));
            }
            versions.push((k, v));
        }
        db.write(batch).unwrap();
        for (k, v) in versions {
            sh.acked[k as usize].store(v, Ordering::SeqCst);
        }
    }
}

fn reader(db: &Db, sh: &Shared, r: u64) -> u64 {
    let mut rng = Rng::new(100 + r);
    let mut floor = vec![0u64; keys() as usize];
    let mut reads = 0;
    while !sh.done.load(Ordering::SeqCst) {
        let k = rng.below(keys()) as usize;
        let lo = sh.acked[k].load(Ordering::SeqCst).max(floor[k]);
        let got = version_of(db.get(key(k as u64)).unwrap().as_deref());
        let hi = sh.started[k].load(Ordering::SeqCst);
        assert!(plausible(got, lo, hi), "key {k}: read {got:?}, expected a version in {lo}..={hi}");
        // Never earlier than what was already seen. "Absent" is version 0
        // or a delete: at least the first such version the read allows.
        floor[k] = match got {
            Some(v) => v,
            None => (lo..=hi).find(|&v| v == 0 || is_delete(v)).unwrap_or(lo),
        };
        reads += 1;
    }
    reads
}

fn snapshotter(db: &Db, sh: &Shared) -> u64 {
    let mut checks = 0;
    while !sh.done.load(Ordering::SeqCst) {
        let lo: Vec<u64> = sh.acked.iter().map(|a| a.load(Ordering::SeqCst)).collect();
        let snap = db.snapshot();
        let hi: Vec<u64> = sh.started.iter().map(|a| a.load(Ordering::SeqCst)).collect();
        let first: Vec<Option<Vec<u8>>> =
            (0..keys()).map(|k| snap.get(key(k)).unwrap().map(|b| b.to_vec())).collect();
        for (k, got) in first.iter().enumerate() {
            let v = version_of(got.as_deref());
            assert!(plausible(v, lo[k], hi[k]), "snapshot key {k}: {v:?} not in {}..={}", lo[k], hi[k]);
        }
        std::thread::sleep(std::time::Duration::from_millis(3));
        // Later reads of the same snapshot, by get and by scan, agree.
        let scanned: Vec<(Vec<u8>, Vec<u8>)> =
            snap.iter().map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap()).collect();
        let expected: Vec<(Vec<u8>, Vec<u8>)> =
            first.iter().enumerate().filter_map(|(k, v)| v.clone().map(|v| (key(k as u64), v))).collect();
        assert_eq!(scanned, expected, "a snapshot's scan disagrees with its gets");
        checks += 1;
    }
    checks
}

fn final_check(db: &Db, sh: &Shared) {
    for k in 0..keys() {
        let v = sh.acked[k as usize].load(Ordering::SeqCst);
        let got = version_of(db.get(key(k)).unwrap().as_deref());
        assert!(plausible(got, v, v), "key {k}: final {got:?}, last version {v}");
    }
}

#[test]
fn stress_readers_writers_snapshots_compaction() {
    let ops: u64 = std::env::var("SIFTDB_STRESS_OPS").map_or(5000, |s| s.parse().unwrap());
    let shm = Path::new("/dev/shm");
    let dir = if shm.is_dir() { tempfile::tempdir_in(shm) } else { tempfile::tempdir() }.unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let sh = Shared {
        started: (0..keys()).map(|_| AtomicU64::new(0)).collect(),
        acked: (0..keys()).map(|_| AtomicU64::new(0)).collect(),
        done: AtomicBool::new(false),
    };
    let start = Instant::now();
    let (reads, snaps, maint) = std::thread::scope(|s| {
        let writers: Vec<_> = (0..threads())
            .map(|w| {
                s.spawn({
                    let (db, sh) = (&db, &sh);
                    move || writer(db, sh, w, ops)
                })
            })
            .collect();
        let readers: Vec<_> = (0..threads())
            .map(|r| {
                s.spawn({
                    let (db, sh) = (&db, &sh);
                    move || reader(db, sh, r)
                })
            })
            .collect();
        let snapshots = s.spawn(|| snapshotter(&db, &sh));
        let maintenance = s.spawn(|| {
            let mut n = 0u64;
            while !sh.done.load(Ordering::SeqCst) {
                if n.is_multiple_of(2) {
                    db.flush().unwrap()
                } else {
                    db.compact().unwrap()
                }
                n += 1;
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            n
        });
        for w in writers {
            w.join().unwrap();
        }
        sh.done.store(true, Ordering::SeqCst);
        let reads: u64 = readers.into_iter().map(|r| r.join().unwrap()).sum();
        (reads, snapshots.join().unwrap(), maintenance.join().unwrap())
    });
    final_check(&db, &sh);
    let stats = db.stats();
    db.close().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    final_check(&db, &sh);
    db.close().unwrap();
    eprintln!(
        "stress: {} writes by {} writers, {reads} checked reads, {snaps} snapshot checks, {maint} \
         flush/compact calls in {:.1}s; {stats:?}",
        ops * threads(),
        threads(),
        start.elapsed().as_secs_f64()
    );
    assert!(reads > 0 && snaps > 0);
}
