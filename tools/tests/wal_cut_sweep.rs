//! Issue 37, step 3: a small database closed cleanly, its last WAL cut at
//! every length and each of its bytes flipped.
//!
//! - A strict open never serves a value older than the last synced write,
//!   never resurrects a deleted key: it opens with exactly the synced state
//!   or fails with `Corruption`, and `db verify` exits non-zero exactly
//!   where it fails.
//! - A point-in-time open always opens, with the state after some prefix of
//!   the WAL's batches (never a hole), and counts exactly the synced
//!   operations it lost.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{p, siftdb};
use siftdb::{Db, Options, RecoveryMode, WriteBatch};

type State = BTreeMap<Vec<u8>, Vec<u8>>;

fn strict() -> Options {
    Options { hash_salt: Some(37), ..Options::default() }
}

fn contents(db: &Db) -> State {
    db.iter().map(|r| r.unwrap()).map(|(k, v)| (k.to_vec(), v.to_vec())).collect()
}

/// The database after a flush of 12 keys and then 10 batches (overwrites,
/// deletes of flushed keys, new keys) that stay in the last WAL; its
/// state after each batch, and the operations in each.
struct Built {
    dir: tempfile::TempDir,
    log: PathBuf,
    /// `states[i]`: the state after the first `i` batches of the WAL.
    states: Vec<State>,
    /// Operations in each batch.
    ops: Vec<u64>,
}

fn build() -> Built {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), strict()).unwrap();
    for i in 0..12u32 {
        db.put(format!("k{i:02}"), format!("flushed {i}")).unwrap();
    }
    db.flush().unwrap();
    let mut states = vec![contents(&db)];
    let mut ops = Vec::new();
    for round in 0..10u32 {
        let mut b = WriteBatch::new();
        b.put(format!("k{:02}", round % 12), format!("round {round}"));
        b.delete(format!("k{:02}", (round * 5 + 7) % 12));
        if round % 3 == 0 {
            b.put(format!("n{round}"), "new");
        }
        ops.push(b.len() as u64);
        db.write(b).unwrap();
        states.push(contents(&db));
    }
    db.close().unwrap();
    let log = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .max()
        .unwrap();
    Built { dir, log, states, ops }
}

fn copy_dir(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let path = e.unwrap().path();
        if path.is_file() {
            std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
        }
    }
}

/// Checks one damaged copy of the WAL; returns whether a strict open
/// refused it.
fn check(b: &Built, damaged: &[u8], case: &str) -> bool {
    let synced = b.states.last().unwrap();
    let copy = tempfile::tempdir().unwrap();
    copy_dir(b.dir.path(), copy.path());
    let log = copy.path().join(b.log.file_name().unwrap());
    std::fs::write(&log, damaged).unwrap();

    let verify = siftdb(&["db", "verify", p(copy.path())]);
    let verify_ok = match verify.status.code() {
        Some(0) => true,
        Some(1) => false,
        other => panic!("{case}: verify exited {other:?}: {}", String::from_utf8_lossy(&verify.stderr)),
    };
    let opened = match Db::open(copy.path(), strict()) {
        Ok(db) => {
            assert_eq!(&contents(&db), synced, "{case}: a strict open must hold exactly the synced state");
            true
        }
        Err(e) => {
            assert!(e.is_corruption(), "{case}: {e}");
            false
        }
    };
    assert_eq!(verify_ok, opened, "{case}: verify says {}", String::from_utf8_lossy(&verify.stdout));
    if opened {
        return false;
    }

    // Point in time: the state after some prefix of the batches, and the
    // synced operations of the rest counted as lost.
    let db = Db::open(copy.path(), Options { recovery: RecoveryMode::PointInTime, ..strict() })
        .unwrap_or_else(|e| panic!("{case}: point-in-time open: {e}"));
    let got = contents(&db);
    let kept = b
        .states
        .iter()
        .rposition(|s| *s == got)
        .unwrap_or_else(|| panic!("{case}: the recovered state is no prefix of the writes: {got:?}"));
    let report = db.stats().recovery;
    assert!(report.cut.is_some(), "{case}: a refused WAL after a clean close is a cut");
    let lost: u64 = b.ops[kept..].iter().sum();
    // Prefixes can hold equal states (a batch that changes nothing visible),
    // so the count is checked against the latest prefix with this state and
    // every earlier one that matches.
    let matches: Vec<u64> =
        (0..b.states.len()).filter(|&i| b.states[i] == got).map(|i| b.ops[i..].iter().sum()).collect();
    assert!(
        report.synced_writes_lost.is_some_and(|n| matches.contains(&n)),
        "{case}: lost {:?}, expected {lost} (or {matches:?})",
        report.synced_writes_lost
    );
    true
}

#[test]
fn every_cut_and_every_flip_of_the_last_wal_is_refused_or_exact() {
    let b = build();
    let bytes = std::fs::read(&b.log).unwrap();
    assert!(bytes.len() > 100, "the WAL holds the batches: {} bytes", bytes.len());
    let (mut refused, mut cases) = (0, 0);
    for len in 0..=bytes.len() {
        refused += usize::from(check(&b, &bytes[..len], &format!("cut at {len} of {}", bytes.len())));
        cases += 1;
    }
    // Every cut short of the synced end loses synced writes: all refused.
    assert_eq!(refused, bytes.len(), "every cut but the whole log is refused");
    for i in 0..bytes.len() {
        let mut flipped = bytes.clone();
        flipped[i] ^= 0x20;
        refused += usize::from(check(&b, &flipped, &format!("flip at byte {i} of {}", bytes.len())));
        cases += 1;
    }
    // Every byte of a frame is covered by its crc (or its length): a flip
    // anywhere is damage to a synced record.
    assert_eq!(refused, cases - 1, "every flip is refused");
}
