//! Issue 37, step 3: a small database closed cleanly, its last WAL cut at
//! every length and each of its bytes flipped.
//!
//! - A strict open never serves a value older than the last synced write,
//!   never resurrects a deleted key: it opens with exactly the synced state
//!   or fails with `Corruption`, and `db verify` exits non-zero exactly
//!   where it fails.
//! - A point-in-time open always opens, with exactly the state after the
//!   batches the damage left whole (for a cut at length L, the batches that
//!   end at or before L; for a flip at byte b, the batches before the
//!   record that holds b), and counts exactly the synced operations of the
//!   rest as lost.

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
    /// `ends[i]`: the WAL's length after the first `i` batches.
    ends: Vec<u64>,
}

impl Built {
    /// How many batches end at or before byte `len` of the WAL.
    fn whole_before(&self, len: u64) -> usize {
        self.ends[1..].iter().take_while(|&&e| e <= len).count()
    }
}

fn build() -> Built {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), strict()).unwrap();
    for i in 0..12u32 {
        db.put(format!("k{i:02}"), format!("flushed {i}")).unwrap();
    }
    db.flush().unwrap();
    let wal_len = || {
        std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "log"))
            .max()
            .map(|p| std::fs::metadata(p).unwrap().len())
            .unwrap()
    };
    let mut states = vec![contents(&db)];
    let mut ops = Vec::new();
    let mut ends = vec![wal_len()];
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
        ends.push(wal_len());
    }
    db.close().unwrap();
    let log = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .max()
        .unwrap();
    assert!(ends.windows(2).all(|w| w[0] < w[1]), "each batch is a record of its own: {ends:?}");
    assert_eq!(*ends.last().unwrap(), std::fs::metadata(&log).unwrap().len(), "a clean close adds nothing");
    Built { dir, log, states, ops, ends }
}

fn copy_dir(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let path = e.unwrap().path();
        if path.is_file() {
            std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
        }
    }
}

/// Checks one damaged copy of the WAL, of which the first `kept` batches
/// are whole; returns whether a strict open refused it.
fn check(b: &Built, damaged: &[u8], kept: usize, case: &str) -> bool {
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

    // Point in time: exactly the state after the whole batches, and the
    // synced operations of the rest counted as lost.
    let db = Db::open(copy.path(), Options { recovery: RecoveryMode::PointInTime, ..strict() })
        .unwrap_or_else(|e| panic!("{case}: point-in-time open: {e}"));
    assert_eq!(contents(&db), b.states[kept], "{case}: a point-in-time open keeps the first {kept} batches");
    let report = db.stats().recovery;
    assert!(report.cut.is_some(), "{case}: a refused WAL after a clean close is a cut");
    let lost: u64 = b.ops[kept..].iter().sum();
    assert_eq!(
        report.synced_writes_lost,
        Some(lost),
        "{case}: the synced operations of the last {} batches",
        b.ops.len() - kept
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
        let kept = b.whole_before(len as u64);
        refused += usize::from(check(&b, &bytes[..len], kept, &format!("cut at {len} of {}", bytes.len())));
        cases += 1;
    }
    // Every cut short of the synced end loses synced writes: all refused.
    assert_eq!(refused, bytes.len(), "every cut but the whole log is refused");
    for i in 0..bytes.len() {
        let mut flipped = bytes.clone();
        flipped[i] ^= 0x20;
        // The record holding byte i is the first batch that ends after it.
        let kept = b.whole_before(i as u64);
        refused += usize::from(check(&b, &flipped, kept, &format!("flip at byte {i} of {}", bytes.len())));
        cases += 1;
    }
    // Every byte of a frame is covered by its crc (or its length): a flip
    // anywhere is damage to a synced record.
    assert_eq!(refused, cases - 1, "every flip is refused");
}
