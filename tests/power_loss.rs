//! Power loss and I/O errors, simulated by `FaultFs` under a real `Db`.
//!
//! - Sync mode: after a power loss (unsynced data dropped, or kept as a
//!   random torn prefix), every acknowledged write is present, exactly.
//! - Buffered mode: the recovered state is the state after some prefix of
//!   the writes (no holes), and at least every write before the last
//!   explicit `flush`.
//! - An I/O error injected at the N-th create / write / sync / rename /
//!   directory sync of a running database (every N up to 40 of them, a
//!   spread of 40 beyond that) reaches the caller; once a write fails, no
//!   later write is acknowledged (`WritesDisabled` until reopened); after
//!   reopening, every acknowledged write is present and the failed one is
//!   all-or-nothing. A failed delete (remove) of an obsolete file is
//!   harmless: every write is still acknowledged and nothing is lost (the
//!   next open deletes the file).
//! - An I/O error at every N-th operation of every kind the fault layer
//!   injects (create, open-append, write, sync, rename, remove, directory
//!   sync, truncate, directory create) while *opening* a crashed database
//!   makes the open fail with `Io` (a failed remove of an obsolete file
//!   excepted: the open succeeds), and the next open recovers exactly what
//!   an unfailed open recovers.

#[path = "common/oracle.rs"]
mod oracle;
#[path = "common/workload.rs"]
mod workload;

use std::path::Path;
use std::sync::Arc;

use oracle::Write;
use siftdb::fs::{CrashMode, FaultFs, FaultOp};
use siftdb::{Db, Error, Options};
use workload::{Model, Op};

const KEYS: u64 = 40;

/// The batches among `ops`, as the oracle (`common/oracle.rs`) takes them.
fn batches(ops: &[Op]) -> Vec<Vec<Write>> {
    ops.iter()
        .filter_map(|op| match op {
            Op::Write(entries) => Some(
                entries
                    .iter()
                    .map(|(k, v)| match v {
                        Some(v) => Write::Put(k.clone(), v.clone()),
                        None => Write::Delete(k.clone()),
                    })
                    .collect(),
            ),
            Op::Flush | Op::Compact => None,
        })
        .collect()
}

fn scratch() -> tempfile::TempDir {
    // fsync on tmpfs is free; the model, not the disk, decides durability.
    let shm = Path::new("/dev/shm");
    if shm.is_dir() { tempfile::tempdir_in(shm) } else { tempfile::tempdir() }.unwrap()
}

fn options(fs: &FaultFs, sync: bool) -> Options {
    Options {
        fs: Arc::new(fs.clone()),
        sync,
        memtable_bytes: 2048,
        block_bytes: 256,
        table_target_bytes: 4096,
        base_level_bytes: 8192,
        hash_salt: Some(0xFA17),
        auto_compaction: true,
        ..Options::default()
    }
}

/// Simulates a power loss while `db` is running: the disk stops accepting
/// anything (so neither the dying `Db`'s close nor its background threads
/// can make more durable), the process goes away, the machine reboots.
fn power_loss(fs: &FaultFs, db: Db, mode: CrashMode) {
    fs.fail_after(FaultOp::Any, 0);
    drop(db);
    fs.crash(mode).unwrap();
}

fn crash_modes(seed: u64) -> [CrashMode; 2] {
    [CrashMode::DropUnsynced, CrashMode::TornTails { seed }]
}

#[test]
fn sync_mode_keeps_every_acknowledged_write() {
    let ops = workload::ops(1, 240, KEYS, true);
    let mut trials = 0;
    for stop in (0..=ops.len()).step_by(20) {
        for mode in crash_modes(stop as u64) {
            let dir = scratch();
            let fs = FaultFs::new();
            let db = Db::open(dir.path(), options(&fs, true)).unwrap();
            for op in &ops[..stop] {
                workload::run(&db, op).unwrap();
            }
            power_loss(&fs, db, mode);
            let db = Db::open(dir.path(), options(&fs, true)).unwrap();
            oracle::check(
                &db,
                &Model::new(),
                &batches(&ops[..stop]),
                &[],
                &format!("after {stop} ops, {mode:?}"),
            );
            db.close().unwrap();
            trials += 1;
        }
    }
    eprintln!("sync power loss: {trials} trials, every acknowledged write present");
}

#[test]
fn buffered_mode_recovers_a_prefix_without_holes() {
    let ops = workload::ops(2, 240, KEYS, true);
    let mut lost_total = 0;
    let mut trials = 0;
    for stop in (0..=ops.len()).step_by(20) {
        for mode in crash_modes(stop as u64 + 7) {
            let dir = scratch();
            let fs = FaultFs::new();
            let db = Db::open(dir.path(), options(&fs, false)).unwrap();
            let mut durable_floor = 0;
            for (i, op) in ops[..stop].iter().enumerate() {
                workload::run(&db, op).unwrap();
                if matches!(op, Op::Flush) {
                    durable_floor = i + 1;
                }
            }
            power_loss(&fs, db, mode);
            let db = Db::open(dir.path(), options(&fs, false)).unwrap();
            // Every write before the last flush, then a prefix of the rest.
            let unsynced = batches(&ops[durable_floor..stop]);
            let what = format!("after {stop} ops (flushed {durable_floor}), {mode:?}");
            let (_, landed) =
                oracle::check_prefix(&db, &Model::new(), &batches(&ops[..durable_floor]), &unsynced, &what);
            lost_total += unsynced.len() - landed;
            db.close().unwrap();
            trials += 1;
        }
    }
    eprintln!(
        "buffered power loss: {trials} trials, all prefixes; {lost_total} unsynced batches lost in all"
    );
}

/// Runs the workload with the `n`-th operation of kind `op` failing once,
/// checks what the caller saw, then reopens and checks what survived.
/// Returns whether the fault was reached.
fn fault_trial(ops: &[Op], kind: FaultOp, n: u64, sync: bool) -> bool {
    // Deleting an obsolete file is cleanup: its failure is no write failure.
    let harmless = kind == FaultOp::Remove;
    let dir = scratch();
    let fs = FaultFs::new();
    let db = Db::open(dir.path(), options(&fs, sync)).unwrap();
    fs.reset_counts();
    // Transient: later operations succeed again, so only the Db's own
    // bookkeeping can stop it acknowledging writes after the failure.
    fs.fail_once_after(kind, n);
    // `done` ops were acknowledged; the one after them (if any) failed.
    let mut done = ops.len();
    let mut flushed = 0;
    for (i, op) in ops.iter().enumerate() {
        match workload::run(&db, op) {
            Ok(()) => {
                assert!(done == ops.len(), "{kind:?}#{n}: {op:?} acknowledged after a failure");
                if matches!(op, Op::Flush) {
                    flushed = i + 1;
                }
            }
            Err(e) if done < ops.len() => {
                assert!(matches!(e, Error::WritesDisabled(_)), "{kind:?}#{n}: after a failure got {e}");
            }
            Err(e) => {
                assert!(
                    matches!(e, Error::Io(_) | Error::WritesDisabled(_)),
                    "{kind:?}#{n}: the first failure surfaced as {e}"
                );
                done = i;
            }
        }
    }
    let failed = done < ops.len();
    let reached = fs.counts().get(kind) > n;
    if harmless {
        assert!(!failed, "{kind:?}#{n}: a failed cleanup failed a write");
    } else if reached {
        // The failed operation must reach the caller: a later write, flush,
        // or close reports it.
        let surfaced =
            failed || db.flush().is_err() || db.put(b"probe", b"p").is_err() || db.close().is_err();
        assert!(surfaced, "{kind:?}#{n}: an injected failure never reached the caller");
    }
    drop(db);
    fs.disable_faults();
    fs.crash(CrashMode::DropUnsynced).unwrap();
    let db = Db::open(dir.path(), options(&fs, sync)).unwrap();
    // The recovered state is the state after some prefix of the ops up to
    // and including the failed one (and the probe): with sync, at least
    // every acknowledged op; buffered, at least every op before the last
    // acknowledged flush.
    let floor = if sync { done } else { flushed };
    let mut maybe = batches(&ops[floor..(done + 1).min(ops.len())]);
    maybe.push(vec![Write::Put(b"probe".to_vec(), b"p".to_vec())]);
    let what = format!("{kind:?}#{n} ({done} acked, floor {floor})");
    oracle::check(&db, &Model::new(), &batches(&ops[..floor]), &maybe, &what);
    // Reopened, the database accepts writes again.
    db.put(b"after", b"reopen").unwrap();
    db.close().unwrap();
    reached
}

#[test]
fn every_injected_io_error_reaches_the_caller_and_loses_nothing() {
    let ops = workload::ops(3, 60, KEYS, true);
    let mut trials = 0;
    for sync in [true, false] {
        for kind in [
            FaultOp::Create,
            FaultOp::Write,
            FaultOp::Sync,
            FaultOp::Rename,
            FaultOp::SyncDir,
            FaultOp::Remove,
        ] {
            // Count how many operations of this kind the workload makes.
            let dir = scratch();
            let fs = FaultFs::new();
            let db = Db::open(dir.path(), options(&fs, sync)).unwrap();
            fs.reset_counts();
            for op in &ops {
                workload::run(&db, op).unwrap();
            }
            let total = fs.counts().get(kind);
            db.close().unwrap();
            // Every N for small counts; a spread of them for large ones.
            let step = (total / 40).max(1);
            let mut n = 0;
            while n < total {
                fault_trial(&ops, kind, n, sync);
                trials += 1;
                n += step;
            }
        }
    }
    eprintln!("injected I/O errors: {trials} trials");
    assert!(trials > 100, "the workload reached too few operations");
}

/// A crashed database (buffered writes, a torn WAL tail) in `dir/db`,
/// through a fresh `FaultFs`.
fn crashed_db(dir: &Path, ops: &[Op]) -> FaultFs {
    let fs = FaultFs::new();
    let db = Db::open(dir.join("db"), options(&fs, false)).unwrap();
    for op in ops {
        workload::run(&db, op).unwrap();
    }
    power_loss(&fs, db, CrashMode::TornTails { seed: 11 });
    fs
}

#[test]
fn every_injected_io_error_while_opening_reaches_the_caller() {
    let ops = workload::ops(5, 60, KEYS, true);
    let floor = ops.iter().rposition(|op| matches!(op, Op::Flush)).map_or(0, |i| i + 1);
    // How many ops of each kind an unfailed open makes (a create in a
    // missing directory adds the directory's creation).
    let dir = scratch();
    let fs = crashed_db(dir.path(), &ops);
    fs.reset_counts();
    drop(Db::open(dir.path().join("db"), options(&fs, false)).unwrap());
    let counts = fs.counts();
    let mut trials = 0;
    for kind in FaultOp::ALL {
        let total = if kind == FaultOp::CreateDir { 1 } else { counts.get(kind) + 1 };
        for n in 0..total {
            let dir = scratch();
            let fs = crashed_db(dir.path(), &ops);
            let path =
                if kind == FaultOp::CreateDir { dir.path().join("new/db") } else { dir.path().join("db") };
            fs.reset_counts();
            fs.fail_once_after(kind, n);
            let result = Db::open(&path, options(&fs, false));
            let reached = fs.counts().get(kind) > n;
            let harmless = !reached || kind == FaultOp::Remove;
            fs.disable_faults();
            match result {
                Err(Error::Io(_)) if !harmless => {}
                Ok(db) if harmless => db.close().unwrap(),
                other => panic!("{kind:?}#{n} (reached: {reached}): open gave {:?}", other.map(|_| ())),
            }
            fs.crash(CrashMode::DropUnsynced).unwrap();
            let db = Db::open(&path, options(&fs, false)).unwrap();
            // Every op before the last flush, then a prefix of the rest;
            // a database opened in a new directory holds nothing.
            let (sure, maybe) =
                if kind == FaultOp::CreateDir { (&ops[..0], &ops[..0]) } else { ops.split_at(floor) };
            oracle::check(&db, &Model::new(), &batches(sure), &batches(maybe), &format!("{kind:?}#{n}"));
            db.put(b"after", b"reopen").unwrap();
            db.close().unwrap();
            trials += usize::from(reached);
        }
    }
    eprintln!("injected I/O errors while opening: {trials} trials reached the fault, {:?}", counts);
    assert!(trials > 10);
}

#[test]
fn failed_fsync_makes_the_database_read_only_until_reopened() {
    let dir = scratch();
    let fs = FaultFs::new();
    let db = Db::open(dir.path(), options(&fs, true)).unwrap();
    db.put(b"before", b"1").unwrap();
    fs.fail_once_after(FaultOp::Sync, 0);
    let err = db.put(b"failed", b"2").unwrap_err();
    assert!(matches!(err, Error::Io(_) | Error::WritesDisabled(_)), "{err}");
    // The disk works again, but the database must not trust it.
    for _ in 0..3 {
        assert!(matches!(db.put(b"later", b"3").unwrap_err(), Error::WritesDisabled(_)));
    }
    assert_eq!(db.get(b"before").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(db.get(b"later").unwrap(), None);
    drop(db);
    fs.crash(CrashMode::DropUnsynced).unwrap();
    let db = Db::open(dir.path(), options(&fs, true)).unwrap();
    assert_eq!(db.get(b"before").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(db.get(b"later").unwrap(), None);
    db.put(b"later", b"4").unwrap();
    db.close().unwrap();
}

/// A crash between a WAL's fsync and the manifest edit that records how far
/// it was synced (issue 37): at `Db::sync` and at close, the edit's write
/// (torn: half of it reaches the file) or its fsync fails, then the power
/// goes. The WAL holds every write through the fsync that succeeded, while
/// the manifest still records an earlier end, or none: the log is longer
/// than its record, never shorter, so the open is no "cut" and loses
/// nothing the fsync made durable.
#[test]
fn a_crash_between_a_wal_sync_and_its_manifest_record_loses_nothing_synced() {
    let ops = workload::ops(3, 90, KEYS, false);
    let mut trials = 0;
    for (at_close, failing) in
        [(false, FaultOp::Write), (false, FaultOp::Sync), (true, FaultOp::Write), (true, FaultOp::Sync)]
    {
        for stop in [10, 45, 90] {
            for mode in crash_modes(stop as u64) {
                let dir = scratch();
                let fs = FaultFs::new();
                // One memtable holds it all: no flush, so the only syncs are
                // the ones this test asks for.
                let opts =
                    || Options { memtable_bytes: 1 << 20, auto_compaction: false, ..options(&fs, false) };
                let db = Db::open(dir.path(), opts()).unwrap();
                for (i, op) in ops[..stop].iter().enumerate() {
                    workload::run(&db, op).unwrap();
                    if i % 20 == 19 {
                        db.sync().unwrap();
                    }
                }
                // The WAL's fsync is the next sync and writes nothing; the
                // manifest edit after it is the next write and the sync after.
                let (kind, pass) =
                    if failing == FaultOp::Write { (FaultOp::Write, 0) } else { (FaultOp::Sync, 1) };
                fs.fail_after(kind, pass);
                let result = if at_close { db.close() } else { db.sync() };
                assert!(result.is_err(), "the manifest record failed, so the sync is not acknowledged");
                // The process dies: nothing more reaches the disk.
                fs.fail_after(FaultOp::Any, 0);
                drop(db);
                fs.crash(mode).unwrap();
                fs.disable_faults();
                // The scenario: the live WAL is longer than its record.
                let scan = siftdb::recovery::inspect_db(&siftdb::fs::StdFs, dir.path()).unwrap();
                let log = scan.logs.iter().rfind(|l| l.live).unwrap();
                assert!(log.recorded_end.is_none_or(|e| e.len < log.valid_len), "{log:?}");
                let db = Db::open(dir.path(), opts())
                    .unwrap_or_else(|e| panic!("{at_close} {failing:?} after {stop} ops, {mode:?}: {e}"));
                assert_eq!(db.stats().recovery.cut, None);
                let what = format!(
                    "{failing:?} at {}, after {stop} ops, {mode:?}: every write the WAL's fsync covered",
                    if at_close { "close" } else { "sync" }
                );
                let model = oracle::check(&db, &Model::new(), &batches(&ops[..stop]), &[], &what);
                db.close().unwrap();
                let db = Db::open(dir.path(), opts()).unwrap();
                oracle::check(&db, &model, &[], &[], &format!("{what}, reopened"));
                db.close().unwrap();
                trials += 1;
            }
        }
    }
    eprintln!("WAL sync then crash before its record: {trials} trials, nothing synced lost");
}
