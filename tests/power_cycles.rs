//! The power-loss loop (issue 72, step 2). One database is carried through
//! cycles. Each cycle opens it through a `FaultFs`, runs a random mix of
//! puts, deletes, range deletes, batches, flushes, compactions, syncs,
//! ingests and checkpoints (background flushes and compactions run too),
//! and cuts the power at a random file-system operation: from that one on,
//! the disk accepts nothing, so nothing later becomes durable. The workload
//! runs on against the dead disk, then the machine "reboots": un-synced
//! bytes are dropped whole or torn (`CrashMode::DropUnsynced`,
//! `TornTails`), un-synced renames and directory entries undone; one cycle
//! in four is a process kill instead (`KillProcess`: written bytes stay).
//! One reopen in four loses the power again, at one of its first 40
//! operations, before the reopen that is checked.
//!
//! After the reopen, `common/oracle.rs` checks the whole contents: every
//! write that was durable when acknowledged (sync mode: all of them;
//! buffered mode: every one before the last acknowledged flush, sync or
//! checkpoint; any mode: before an acknowledged ingest, which flushes what
//! it overlaps and is itself durable) is there, then a prefix of the rest,
//! each batch whole or absent. A write refused with `WritesDisabled` never
//! lands. A checkpoint either never appeared or opens on its own holding
//! exactly what was acknowledged before it (a prefix of what was in flight
//! before it, too): an acknowledged one must be there.
//!
//! `SIFTDB_POWER_CYCLES=N` (default 300) sets the number of cycles.

#[path = "common/oracle.rs"]
mod oracle;
#[path = "common/workload.rs"]
mod workload;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use oracle::{Model, Write};
use siftdb::fs::{CrashMode, FaultFs, FaultOp};
use siftdb::{Compaction, Compression, CompressionPolicy, Db, Error, Options};
use workload::Rng;

const KEYS: u64 = 160;
const OPS_PER_CYCLE: u64 = 60;

/// Each reopen writes its tables with one of these (tables keep their
/// own codec, so a database holds a mix).
const CODECS: [Compression; 3] = [Compression::None, Compression::Lz4, Compression::Zstd { level: 3 }];

fn options(fs: &FaultFs, sync: bool, codec: u64) -> Options {
    Options {
        fs: Arc::new(fs.clone()),
        sync,
        compression: CompressionPolicy::uniform(CODECS[codec as usize % CODECS.len()]),
        memtable_bytes: 2048,
        block_bytes: 256,
        table_target_bytes: 4096,
        base_level_bytes: 8192,
        l0_compaction_trigger: 2,
        hash_salt: Some(0x9A7E),
        // Range filters in two reopens of three, chosen apart from the codec
        // (`codec` is below 9): turned on and off across reopens.
        range_filter: (codec / 3 != 1).then(siftdb::RangeFilterPolicy::default),
        ..Options::default()
    }
}

fn key(i: u64) -> Vec<u8> {
    format!("k{i:04}").into_bytes()
}

fn value(cycle: u64, op: u64, j: usize) -> Vec<u8> {
    format!("c{cycle}o{op}.{j}:{}", "v".repeat(40)).into_bytes()
}

/// One write: a put mostly, a delete or a range delete of 1–16 keys at times.
fn write(rng: &mut Rng, cycle: u64, op: u64, j: usize) -> Write {
    let i = rng.below(KEYS);
    match rng.below(10) {
        0 => Write::DeleteRange(key(i), key(i + 1 + rng.below(16))),
        1 | 2 => Write::Delete(key(i)),
        _ => Write::Put(key(i), value(cycle, op, j)),
    }
}

/// What the workload asks of the database.
#[derive(Debug)]
enum Step {
    Write(Vec<Write>),
    Ingest(Vec<Write>),
    Flush,
    Compact,
    Sync,
    Checkpoint(PathBuf),
}

fn step(rng: &mut Rng, dir: &Path, cycle: u64, op: u64) -> Step {
    match rng.below(100) {
        0..=69 => {
            let width = if rng.below(4) == 0 { 2 + rng.below(4) } else { 1 };
            Step::Write((0..width as usize).map(|j| write(rng, cycle, op, j)).collect())
        }
        70..=77 => {
            // A narrow run of keys, so that the memtable often holds none
            // of them (then the ingest flushes nothing first).
            let mut i = rng.below(KEYS);
            let keys: Vec<u64> = (0..1 + rng.below(8))
                .map(|_| {
                    i += 1 + rng.below(3);
                    i
                })
                .collect();
            let writes = keys.iter().enumerate().map(|(j, &i)| {
                if rng.below(8) == 0 {
                    Write::Delete(key(i))
                } else {
                    Write::Put(key(i), value(cycle, op, j))
                }
            });
            Step::Ingest(writes.collect())
        }
        78..=84 => Step::Flush,
        85..=89 => Step::Compact,
        90..=94 => Step::Sync,
        _ => Step::Checkpoint(dir.join(format!("checkpoint-c{cycle}-o{op}"))),
    }
}

/// What one cycle asked and what the database answered.
#[derive(Default)]
struct History {
    /// Every batch (write or ingest) that may have landed, in the order
    /// issued: acknowledged, or failed with an I/O error.
    batches: Vec<Vec<Write>>,
    /// How many of `batches` must be there after the crash.
    durable: usize,
    /// Each checkpoint: its directory, how many of `batches` it must hold
    /// and how many it may, and whether it was acknowledged.
    checkpoints: Vec<(PathBuf, usize, usize, bool)>,
    acked: usize,
    refused: usize,
    failed: usize,
    ingests: usize,
}

/// Runs one cycle's workload against `db`. The power may be cut anywhere
/// in it.
fn run_cycle(db: &Db, dir: &Path, cycle: u64, sync: bool, rng: &mut Rng) -> History {
    let mut h = History::default();
    // The first batch whose fate is unknown (it failed), if any: nothing
    // after it is durable for certain.
    let mut in_doubt: Option<usize> = None;
    for op in 0..OPS_PER_CYCLE {
        let step = step(rng, dir, cycle, op);
        let result = match &step {
            Step::Write(writes) if writes.len() == 1 => match &writes[0] {
                Write::Put(k, v) => db.put(k, v),
                Write::Delete(k) => db.delete(k),
                Write::DeleteRange(a, b) => db.delete_range(a, b),
            },
            Step::Write(writes) => db.write(oracle::batch(writes)),
            Step::Ingest(writes) => oracle::ingest(db, &dir.join(format!("ingest-o{op}.sst")), writes),
            Step::Flush => db.flush(),
            Step::Compact => db.compact(),
            Step::Sync => db.sync(),
            Step::Checkpoint(path) => db.checkpoint(path),
        };
        let issued = h.batches.len();
        let sure = in_doubt.unwrap_or(issued);
        match (result, step) {
            // Refused before anything was written: it never lands.
            (Err(Error::WritesDisabled(_)), _) => h.refused += 1,
            (Ok(()), Step::Write(writes)) => {
                h.batches.push(writes);
                h.acked += 1;
                if sync && in_doubt.is_none() {
                    h.durable = h.batches.len();
                }
            }
            // An ingest's manifest edit is synced, and it is newer than
            // every write before it: those must not be lost under it.
            (Ok(()), Step::Ingest(writes)) => {
                h.batches.push(writes);
                h.acked += 1;
                h.ingests += 1;
                if in_doubt.is_none() {
                    h.durable = h.batches.len();
                }
            }
            (Err(_), Step::Write(writes) | Step::Ingest(writes)) => {
                h.batches.push(writes);
                h.failed += 1;
                in_doubt.get_or_insert(issued);
            }
            (Ok(()), Step::Flush | Step::Sync) => h.durable = sure,
            (Ok(()), Step::Checkpoint(path)) => {
                h.checkpoints.push((path, sure, issued, true));
                h.durable = sure;
            }
            (Err(_), Step::Checkpoint(path)) => h.checkpoints.push((path, sure, issued, false)),
            (_, Step::Flush | Step::Sync | Step::Compact) => {}
        }
    }
    h
}

fn scratch() -> tempfile::TempDir {
    // fsync on tmpfs is free; the model, not the disk, decides durability.
    let shm = Path::new("/dev/shm");
    if shm.is_dir() { tempfile::tempdir_in(shm) } else { tempfile::tempdir() }.unwrap()
}

/// Totals over a run, for the log line.
#[derive(Debug, Default)]
struct Totals {
    cut: usize,
    acked: usize,
    failed: usize,
    refused: usize,
    ingests: usize,
    lost: usize,
    checkpoints: usize,
    checkpoints_kept: usize,
    fs_ops: u64,
    recovery_cuts: usize,
}

#[test]
fn power_cycles_keep_every_durable_write_and_lose_only_a_tail() {
    let cycles: u64 = std::env::var("SIFTDB_POWER_CYCLES").map_or(300, |s| s.parse().unwrap());
    let root = scratch();
    let db_dir = root.path().join("db");
    let fs = FaultFs::new();
    let mut rng = Rng::new(0x90E4);
    let mut sync = false;
    let mut codec = 0;
    let mut db = Db::open(&db_dir, options(&fs, sync, codec)).unwrap();
    let mut model = Model::new();
    let mut t = Totals::default();
    let start = std::time::Instant::now();
    for cycle in 0..cycles {
        let side = root.path().join(format!("side-{cycle}"));
        std::fs::create_dir(&side).unwrap();
        // The power goes at a random operation of this cycle (a few cycles
        // run to the end, and lose it as they shut down).
        let cut = rng.below(360);
        fs.reset_counts();
        fs.fail_after(FaultOp::Any, cut);
        let h = run_cycle(&db, &side, cycle, sync, &mut rng);
        let ops = fs.counts().get(FaultOp::Any);
        t.fs_ops += ops;
        t.cut += usize::from(ops > cut);
        drop(db);
        let mode = match rng.below(4) {
            0 => CrashMode::KillProcess,
            1 => CrashMode::DropUnsynced,
            _ => CrashMode::TornTails { seed: cycle },
        };
        fs.crash(mode).unwrap();
        let mut what =
            format!("cycle {cycle} ({mode:?}, sync {sync}, power cut at operation {cut} of {ops})");
        sync = rng.below(2) == 0;
        codec = rng.below(9);
        // One cycle in four loses the power again while recovering.
        if rng.below(4) == 0 {
            let cut = rng.below(40);
            fs.fail_after(FaultOp::Any, cut);
            let opened = Db::open(&db_dir, options(&fs, sync, codec)).is_ok();
            fs.crash(CrashMode::TornTails { seed: !cycle }).unwrap();
            what.push_str(&format!(", then at operation {cut} of the reopen (which opened: {opened})"));
            t.recovery_cuts += 1;
        }
        db = Db::open(&db_dir, options(&fs, sync, codec)).unwrap_or_else(|e| panic!("{what}: reopen: {e}"));
        let (sure, maybe) = h.batches.split_at(h.durable);
        let (next, landed) = oracle::check_prefix(&db, &model, sure, maybe, &what);
        for (path, must, may, acked) in &h.checkpoints {
            // Opened apart from the fault layer: it is a directory of its own now.
            let std_fs: Arc<dyn siftdb::fs::FileSystem> = Arc::new(siftdb::fs::StdFs);
            if !path.exists() {
                assert!(!acked, "{what}: the acknowledged checkpoint {} is gone", path.display());
                continue;
            }
            let copy = Db::open(path, Options { fs: std_fs, ..options(&fs, false, 0) })
                .unwrap_or_else(|e| panic!("{what}: checkpoint {}: {e}", path.display()));
            let what = format!("{what}: checkpoint {} (acknowledged: {acked})", path.display());
            oracle::check(&copy, &model, &h.batches[..*must], &h.batches[*must..*may], &what);
            copy.close().unwrap();
            t.checkpoints_kept += 1;
        }
        model = next;
        t.lost += maybe.len() - landed;
        t.acked += h.acked;
        t.failed += h.failed;
        t.refused += h.refused;
        t.ingests += h.ingests;
        t.checkpoints += h.checkpoints.iter().filter(|c| c.3).count();
        std::fs::remove_dir_all(&side).unwrap();
    }
    db.close().unwrap();
    eprintln!(
        "power cycles: {cycles} in {:.1}s, {} cut mid-cycle, {} again while recovering, {} file-system operations; \
         {} batches acknowledged \
         ({} ingests), {} failed, {} refused; {} unsynced or in-flight batches lost (allowed); {} checkpoints \
         acknowledged, {} found whole after the crash; {} live keys",
        start.elapsed().as_secs_f64(),
        t.cut,
        t.recovery_cuts,
        t.fs_ops,
        t.acked,
        t.ingests,
        t.failed,
        t.refused,
        t.lost,
        t.checkpoints,
        t.checkpoints_kept,
        model.len()
    );
    assert!(t.cut as u64 > cycles / 2, "the power was cut mid-cycle in too few cycles");
    assert!(
        t.acked as u64 > cycles * 10 && t.ingests > 0 && t.checkpoints > 0,
        "the workload did too little"
    );
}

/// A buffered write, then an ingest of keys no memtable holds, then a
/// power loss: the ingest is durable, so the write before it must be too.
#[test]
fn an_ingest_makes_the_buffered_writes_before_it_durable() {
    for mode in [CrashMode::DropUnsynced, CrashMode::TornTails { seed: 7 }] {
        let root = scratch();
        let fs = FaultFs::new();
        let db = Db::open(root.path().join("db"), options(&fs, false, 0)).unwrap();
        let before = vec![Write::Put(b"a".to_vec(), b"before".to_vec())];
        db.put(b"a", b"before").unwrap();
        let ingested = vec![Write::Put(b"z".to_vec(), b"ingested".to_vec())];
        oracle::ingest(&db, &root.path().join("z.sst"), &ingested).unwrap();
        fs.fail_after(FaultOp::Any, 0);
        drop(db);
        fs.crash(mode).unwrap();
        let db = Db::open(root.path().join("db"), options(&fs, false, 0)).unwrap();
        oracle::check(&db, &Model::new(), &[before, ingested], &[], &format!("{mode:?}"));
    }
}

/// FIFO under power loss: an append-only stream (keys numbered in the
/// order written, in batches of 1–4) into a database that drops whole
/// tables, oldest first, past 12 KiB. After every reboot the database
/// holds a contiguous run of the stream: it starts at or after where the
/// last one started (nothing dropped comes back), holds every write that
/// was durable unless FIFO dropped it (the newest durable one always
/// survives: FIFO never drops the newest table), and ends with a prefix of
/// the writes in doubt.
#[test]
fn fifo_power_cycles_keep_a_contiguous_run_of_the_stream() {
    let cycles: u64 = std::env::var("SIFTDB_POWER_CYCLES").map_or(300, |s| s.parse().unwrap()) / 3;
    let root = scratch();
    let db_dir = root.path().join("db");
    let fs = FaultFs::new();
    let opts = |sync: bool| Options {
        compaction: Compaction::Fifo { max_bytes: Some(12 << 10), ttl: None },
        ..options(&fs, sync, 1)
    };
    let stream_key = |n: u64| format!("s{n:08}").into_bytes();
    let stream_value = |n: u64| format!("v{n}:{}", "x".repeat(60)).into_bytes();
    let mut rng = Rng::new(0xF1F0);
    let mut sync = true;
    let mut db = Db::open(&db_dir, opts(sync)).unwrap();
    // Every stream number that ever landed, in order, and how many of the
    // oldest FIFO has dropped.
    let mut landed: Vec<u64> = Vec::new();
    let mut dropped = 0;
    let mut next = 0;
    let (mut cut_total, mut dropped_max) = (0, 0);
    for cycle in 0..cycles {
        let cut = rng.below(300);
        fs.reset_counts();
        fs.fail_after(FaultOp::Any, cut);
        // Batches issued this cycle (stream numbers), how many are durable.
        let (mut batches, mut durable, mut in_doubt) = (Vec::<Vec<u64>>::new(), 0, false);
        for _ in 0..OPS_PER_CYCLE {
            let result = match rng.below(10) {
                0 => db.flush(),
                1 => db.sync(),
                _ => {
                    let numbers: Vec<u64> = (next..next + 1 + rng.below(4)).collect();
                    next += numbers.len() as u64;
                    let writes: Vec<Write> =
                        numbers.iter().map(|&n| Write::Put(stream_key(n), stream_value(n))).collect();
                    let result = db.write(oracle::batch(&writes));
                    if !matches!(result, Err(Error::WritesDisabled(_))) {
                        batches.push(numbers);
                        in_doubt |= result.is_err();
                        if result.is_ok() && sync && !in_doubt {
                            durable = batches.len();
                        }
                    }
                    continue;
                }
            };
            if result.is_ok() && !in_doubt {
                durable = batches.len();
            }
        }
        cut_total += usize::from(fs.counts().get(FaultOp::Any) > cut);
        drop(db);
        fs.crash(if cycle % 2 == 0 { CrashMode::DropUnsynced } else { CrashMode::TornTails { seed: cycle } })
            .unwrap();
        sync = rng.below(2) == 0;
        db = Db::open(&db_dir, opts(sync)).unwrap_or_else(|e| panic!("cycle {cycle}: reopen: {e}"));
        let got = oracle::contents(&db);
        let numbers: Vec<u64> = got
            .iter()
            .map(|(k, v)| {
                let n: u64 = std::str::from_utf8(&k[1..]).unwrap().parse().unwrap();
                assert_eq!(v, &stream_value(n), "cycle {cycle}: the value of stream write {n}");
                n
            })
            .collect();
        // The batches of this cycle that landed: a prefix, every durable one included.
        let new: Vec<u64> = batches.iter().flatten().copied().collect();
        let kept = numbers.iter().filter(|n| new.contains(n)).count();
        let landed_batches = (0..=batches.len())
            .find(|&b| batches[..b].iter().map(Vec::len).sum::<usize>() == kept)
            .unwrap_or_else(|| {
                panic!("cycle {cycle}: {kept} of this cycle's writes landed, not whole batches")
            });
        let mut all = landed.clone();
        all.extend(batches[..landed_batches].iter().flatten());
        // Contiguous, from no earlier than the last start.
        let start = all.len() - numbers.len();
        assert_eq!(numbers, all[start..], "cycle {cycle}: not a contiguous run of what landed");
        assert!(start >= dropped, "cycle {cycle}: writes FIFO dropped came back ({start} < {dropped})");
        assert!(
            landed_batches >= durable,
            "cycle {cycle}: {landed_batches} batches landed, {durable} were durable"
        );
        if durable > 0 {
            assert!(!numbers.is_empty(), "cycle {cycle}: FIFO dropped the newest durable write");
        }
        landed = all;
        dropped = start;
        dropped_max = dropped_max.max(dropped);
    }
    db.close().unwrap();
    eprintln!(
        "fifo power cycles: {cycles}, {cut_total} cut mid-cycle; {} stream writes landed, {dropped_max} dropped by FIFO",
        landed.len()
    );
    assert!(dropped_max > 0, "FIFO never dropped a table: its drops were not tested");
}
