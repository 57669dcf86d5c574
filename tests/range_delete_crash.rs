//! SIGKILL while compactions drop what range tombstones delete: after each
//! kill and reopen, nothing deleted comes back and nothing live is lost
//! (issue 61).
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

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::Path;

use siftdb::{Db, Options, WriteBatch};

#[path = "common/kill_child.rs"]
mod kill_child;

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

enum Item {
    Put(Vec<u8>, Vec<u8>),
    Del(Vec<u8>, Vec<u8>),
}

impl Item {
    fn put_key(&self) -> Option<Vec<u8>> {
        if let Item::Put(k, _) = self { Some(k.clone()) } else { None }
    }
}

enum Op {
    /// One atomic batch.
    Write(Vec<Item>),
    /// `compact()`, then report the count of versions dropped under tombstones.
    Compact,
    /// Report the count only (what background compactions dropped).
    Report,
}

fn puts(round: u64, lo: u32, hi: u32, generation: u32) -> impl Iterator<Item = Item> {
    (lo..hi).map(move |i| Item::Put(key(round, i), value(round, i, generation)))
}

/// Op `n` of the schedule: step `n % STEPS` of round `n / STEPS`.
fn op(n: u64) -> Op {
    let (r, step) = (n / STEPS, n % STEPS);
    match step {
        0..=9 => {
            let lo = u32::try_from(step).unwrap() * 20;
            Op::Write(puts(r, lo, lo + 20, 0).collect())
        }
        10 => Op::Write(vec![Item::Del(key(r, 50), key(r, 150))]),
        // Newer than the tombstone: a compaction that drops under it must keep these.
        11 => Op::Write(puts(r, 90, 110, 1).collect()),
        12 if r % 3 == 0 && r > 0 => Op::Write(vec![Item::Del(key(r - 1, 180), key(r, 20))]),
        12 => Op::Write(vec![Item::Del(key(r, 190), key(r, BLOCK))]),
        // A tombstone and a put over it in one batch: both or neither.
        13 => {
            Op::Write(std::iter::once(Item::Del(key(r, 20), key(r, 30))).chain(puts(r, 25, 27, 2)).collect())
        }
        14 if r % 4 == 3 => Op::Compact,
        _ => Op::Report,
    }
}

fn child(dir: &Path, start: u64) {
    let db = Db::open(dir, opts()).unwrap();
    let mut out = std::io::stdout().lock();
    for n in start.. {
        match op(n) {
            Op::Write(items) => {
                let mut batch = WriteBatch::new();
                for item in items {
                    match item {
                        Item::Put(k, v) => batch.put(k, v),
                        Item::Del(s, e) => batch.delete_range(s, e),
                    }
                }
                db.write(batch).unwrap();
            }
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

/// Every state each key written may be in: one state once the op that set
/// it was acknowledged, two while the op in flight at a kill may or may
/// not have been applied.
#[derive(Default, Clone)]
struct Model(BTreeMap<Vec<u8>, Vec<Option<Vec<u8>>>>);

impl Model {
    fn apply(&mut self, op: &Op) {
        let Op::Write(items) = op else { return };
        for item in items {
            match item {
                Item::Put(k, v) => {
                    self.0.insert(k.clone(), vec![Some(v.clone())]);
                }
                Item::Del(s, e) => {
                    for states in self.0.range_mut(s.clone()..e.clone()).map(|(_, v)| v) {
                        *states = vec![None];
                    }
                }
            }
        }
    }

    /// The op in flight at the kill: applied whole or not at all.
    fn apply_maybe(&mut self, op: &Op) {
        let mut after = self.clone();
        after.apply(op);
        for (k, states) in after.0 {
            let now = self.0.entry(k).or_insert_with(|| vec![None]);
            for s in states {
                if !now.contains(&s) {
                    now.push(s);
                }
            }
        }
    }

    fn allows(&self, k: &[u8], got: Option<&[u8]>) -> bool {
        self.0.get(k).is_some_and(|states| states.iter().any(|s| s.as_deref() == got))
    }
}

fn show(k: &[u8]) -> String {
    String::from_utf8_lossy(k).into_owned()
}

fn check(db: &Db, model: &Model, cycle: u64) {
    for k in model.0.keys() {
        let got = db.get(k).unwrap();
        assert!(
            model.allows(k, got.as_deref()),
            "cycle {cycle}: get {} = {got:?}, model {:?}",
            show(k),
            model.0[k]
        );
    }
    let mut rounds: Vec<u64> = model.0.keys().map(|k| show(&k[1..7]).parse().unwrap()).collect();
    rounds.dedup();
    for r in rounds {
        let (lo, hi) = (key(r, 0), key(r, BLOCK));
        let forward: Vec<(Vec<u8>, Vec<u8>)> = db
            .range(lo.clone()..hi.clone())
            .map(|p| p.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap())
            .collect();
        let mut reverse: Vec<(Vec<u8>, Vec<u8>)> = db
            .range(lo.clone()..hi.clone())
            .rev()
            .map(|p| p.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap())
            .collect();
        reverse.reverse();
        assert_eq!(forward, reverse, "cycle {cycle}: round {r} scans forward and reverse differ");
        assert!(forward.windows(2).all(|w| w[0].0 < w[1].0), "cycle {cycle}: round {r} scan out of order");
        let scanned: BTreeMap<&[u8], &[u8]> =
            forward.iter().map(|(k, v)| (k.as_slice(), v.as_slice())).collect();
        for (k, v) in &scanned {
            assert!(model.allows(k, Some(v)), "cycle {cycle}: scan yields {} = {}", show(k), show(v));
        }
        for k in model.0.range(lo..hi).map(|(k, _)| k) {
            if !scanned.contains_key(k.as_slice()) {
                assert!(model.allows(k, None), "cycle {cycle}: scan misses live {}", show(k));
            }
        }
    }
    for item in db.iter() {
        let (k, _) = item.unwrap();
        assert!(model.0.contains_key(k.as_ref()), "cycle {cycle}: {} was never written", show(&k));
    }
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
    let mut model = Model::default();
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
        for line in &lines {
            if let Some(n) = line.strip_prefix("ack ") {
                assert_eq!(n.parse::<u64>().unwrap(), expected, "cycle {cycle}: acks out of order");
                let acked = op(expected);
                if let Op::Write(items) = &acked {
                    acked_keys.extend(items.iter().filter_map(Item::put_key));
                }
                model.apply(&acked);
                expected += 1;
            } else if let Some(n) = line.strip_prefix("dropped ") {
                dropped = n.parse::<u64>().unwrap();
            }
        }
        acked_ops += expected - start;
        dropped_in_children += dropped;
        model.apply_maybe(&op(expected));
        // A round a kill cut short is never resumed: the next cycle starts
        // on fresh keys, so what the kill left of that round stays checked.
        next_round = expected / STEPS + 1;
        let db = Db::open(dir.path(), opts()).unwrap();
        check(&db, &model, cycle);
        db.close().unwrap();
    }
    assert!(acked_ops > 0, "the child never acknowledged an op");

    // Without dropping under tombstones, every key whose put was
    // acknowledged keeps a version in some table after a flush and compaction.
    let db = Db::open(dir.path(), opts()).unwrap();
    db.compact().unwrap();
    check(&db, &model, cycles);
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
