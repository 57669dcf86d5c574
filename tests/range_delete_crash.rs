//! SIGKILL while compactions drop what range tombstones delete: after each
//! kill and reopen, nothing deleted comes back, nothing live is lost, and
//! the op in flight at the kill is whole or absent (issue 61; checked by
//! `common/oracle.rs` since issue 72).
//!
//! The child runs a fixed schedule of ops, numbered, so the parent knows
//! the one in flight when the kill came as well as the acknowledged ones:
//! round `r` writes a block of 200 keys, range-deletes the middle of it,
//! writes part of the deleted middle again, range-deletes across the
//! previous round's block every 3rd round, and every 4th round settles the
//! tree with `compact()`; each round ends by printing how many versions
//! compactions dropped under tombstones so far. The tiny memtables, tables and levels keep
//! background compactions running all the while, so kills land inside
//! compactions that drop covered versions and tombstones.
//!
//! 30 kill cycles by default; `SIFTDB_CRASH_CYCLES=N` runs more.

use std::collections::BTreeSet;
use std::io::Write as _;
use std::path::Path;

use siftdb::{Db, Options};

#[path = "common/kill_child.rs"]
mod kill_child;
#[path = "common/oracle.rs"]
mod oracle;

use oracle::Write;

const CHILD_ENV: &str = "SIFTDB_RANGE_DELETE_CRASH_DIR";
const START_ENV: &str = "SIFTDB_RANGE_DELETE_CRASH_START";
const TEST: &str = "sigkill_while_compactions_drop_range_deleted_entries";
const BLOCK: u32 = 200;
const STEPS: u64 = 15;

fn opts() -> Options {
    Options {
        memtable_bytes: 4 << 10,
        hash_salt: Some(17),
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

fn key(round: u64, i: u32) -> Vec<u8> {
    format!("r{round:06}-{i:04}").into_bytes()
}

fn value(round: u64, i: u32, generation: u32) -> Vec<u8> {
    format!("{round}-{i}-v{generation} padded so that the tiny memtables fill").into_bytes()
}

fn put_key(w: &Write) -> Option<Vec<u8>> {
    if let Write::Put(k, _) = w { Some(k.clone()) } else { None }
}

enum Op {
    /// One atomic batch.
    Write(Vec<Write>),
    /// `compact()`, then report the count of versions dropped under tombstones.
    Compact,
    /// Report the count only (what background compactions dropped).
    Report,
}

fn puts(round: u64, lo: u32, hi: u32, generation: u32) -> impl Iterator<Item = Write> {
    (lo..hi).map(move |i| Write::Put(key(round, i), value(round, i, generation)))
}

/// Op `n` of the schedule: step `n % STEPS` of round `n / STEPS`.
fn op(n: u64) -> Op {
    let (r, step) = (n / STEPS, n % STEPS);
    match step {
        0..=9 => {
            let lo = u32::try_from(step).unwrap() * 20;
            Op::Write(puts(r, lo, lo + 20, 0).collect())
        }
        10 => Op::Write(vec![Write::DeleteRange(key(r, 50), key(r, 150))]),
        // Newer than the tombstone: a compaction that drops under it must keep these.
        11 => Op::Write(puts(r, 90, 110, 1).collect()),
        12 if r % 3 == 0 && r > 0 => Op::Write(vec![Write::DeleteRange(key(r - 1, 180), key(r, 20))]),
        12 => Op::Write(vec![Write::DeleteRange(key(r, 190), key(r, BLOCK))]),
        // A tombstone and a put over it in one batch: both or neither.
        13 => Op::Write(
            std::iter::once(Write::DeleteRange(key(r, 20), key(r, 30))).chain(puts(r, 25, 27, 2)).collect(),
        ),
        14 if r % 4 == 3 => Op::Compact,
        _ => Op::Report,
    }
}

fn child(dir: &Path, start: u64) {
    let db = Db::open(dir, opts()).unwrap();
    let mut out = std::io::stdout().lock();
    for n in start.. {
        match op(n) {
            Op::Write(writes) => db.write(oracle::batch(&writes)).unwrap(),
            Op::Compact => db.compact().unwrap(),
            Op::Report => {}
        }
        if !matches!(op(n), Op::Write(_)) {
            writeln!(out, "dropped {}", db.stats().range_deleted_entries).unwrap();
        }
        writeln!(out, "ack {n}").unwrap();
        out.flush().unwrap();
    }
}

/// Each round's block read by a bounded scan, forward and in reverse,
/// against the model: a scan's bounds clip the range tombstones it meets.
fn check_rounds(db: &Db, model: &oracle::Model, rounds: &BTreeSet<u64>, cycle: u64) {
    fn pairs(
        it: impl Iterator<Item = siftdb::Result<(bytes::Bytes, bytes::Bytes)>>,
    ) -> Vec<(Vec<u8>, Vec<u8>)> {
        it.map(|p| p.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap()).collect()
    }
    for &r in rounds {
        let (lo, hi) = (key(r, 0), key(r, BLOCK));
        let want: Vec<(Vec<u8>, Vec<u8>)> =
            model.range(lo.clone()..hi.clone()).map(|(k, v)| (k.clone(), v.clone())).collect();
        assert_eq!(pairs(db.range(lo.clone()..hi.clone())), want, "cycle {cycle}: round {r}'s scan");
        let mut reverse = pairs(db.range(lo..hi).rev());
        reverse.reverse();
        assert_eq!(reverse, want, "cycle {cycle}: round {r}'s reverse scan");
    }
}

/// The writes of op `n`, none for a compaction or a report.
fn writes(n: u64) -> Vec<Write> {
    if let Op::Write(w) = op(n) { w } else { Vec::new() }
}

#[test]
fn sigkill_while_compactions_drop_range_deleted_entries() {
    if let Ok(dir) = std::env::var(CHILD_ENV) {
        let start = std::env::var(START_ENV).unwrap().parse().unwrap();
        child(Path::new(&dir), start);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cycles: u64 = std::env::var("SIFTDB_CRASH_CYCLES").ok().and_then(|s| s.parse().ok()).unwrap_or(30);
    let mut model = oracle::Model::new();
    let mut rounds = BTreeSet::new();
    let mut next_round = 0;
    let mut acked_ops = 0;
    let mut dropped_in_children = 0;
    let mut acked_keys = BTreeSet::new();
    for cycle in 0..cycles {
        let start = next_round * STEPS;
        let child = kill_child::Child { test: TEST, dir_env: CHILD_ENV, start_env: START_ENV };
        let lines =
            kill_child::run_and_kill_lines(&child, dir.path(), start, kill_child::jitter(cycle, 40, 200));
        let mut expected = start;
        let mut dropped = 0;
        let mut done = Vec::new();
        for line in &lines {
            if let Some(n) = line.strip_prefix("ack ") {
                assert_eq!(n.parse::<u64>().unwrap(), expected, "cycle {cycle}: acks out of order");
                let acked = writes(expected);
                acked_keys.extend(acked.iter().filter_map(put_key));
                done.push(acked);
                expected += 1;
            } else if let Some(n) = line.strip_prefix("dropped ") {
                dropped = n.parse::<u64>().unwrap();
            }
        }
        acked_ops += expected - start;
        dropped_in_children += dropped;
        // A round a kill cut short is never resumed: the next cycle starts
        // on fresh keys, so what the kill left of that round stays checked.
        next_round = expected / STEPS + 1;
        let db = Db::open(dir.path(), opts()).unwrap();
        // The op in flight at the kill: applied whole or not at all.
        model = oracle::check(&db, &model, &done, &[writes(expected)], &format!("cycle {cycle}"));
        rounds.extend(start / STEPS..next_round);
        check_rounds(&db, &model, &rounds, cycle);
        db.close().unwrap();
    }
    assert!(acked_ops > 0, "the child never acknowledged an op");

    // Without dropping under tombstones, every key whose put was
    // acknowledged keeps a version in some table after a flush and compaction.
    let db = Db::open(dir.path(), opts()).unwrap();
    db.compact().unwrap();
    assert_eq!(oracle::check(&db, &model, &[], &[], "after the last compaction"), model);
    let entries: u64 = db.tables().iter().map(|t| t.record.entries).sum();
    let written = acked_keys.len() as u64;
    assert!(
        entries < written,
        "{entries} table entries for {written} keys put: no covered version was dropped"
    );
    assert!(
        dropped_in_children > 0 || cycles < 5,
        "no compaction in a killed child dropped a covered version (final compact dropped {})",
        db.stats().range_deleted_entries
    );
    db.close().unwrap();
}
