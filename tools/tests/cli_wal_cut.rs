//! `db verify` and `db info` on a WAL cut after its sync (issue 37): exit 1,
//! the log named, and what a point-in-time open would lose; a torn tail past
//! the synced end stays a note.

mod common;

use std::path::{Path, PathBuf};

use common::{files_with_extension, p, run_json, siftdb, snapshot};
use siftdb::{Db, Options, WriteBatch};

/// A database closed cleanly, its last WAL holding 10 batches of 2 ops.
fn build(dir: &Path) -> PathBuf {
    let db = Db::open(dir, Options::default()).unwrap();
    for i in 0..10u32 {
        let mut b = WriteBatch::new();
        b.put(format!("k{i}"), "v");
        b.delete(format!("k{}", i / 2));
        db.write(b).unwrap();
    }
    db.close().unwrap();
    files_with_extension(dir, "log").pop().unwrap()
}

#[test]
fn verify_and_info_report_a_cut_wal_and_its_loss() {
    let dir = tempfile::tempdir().unwrap();
    let log = build(dir.path());
    let len = std::fs::metadata(&log).unwrap().len();
    let (code, doc) = run_json(&["db", "verify", "--json", p(dir.path())]);
    assert_eq!((code, doc["recovery"]["cut"].is_null()), (0, true), "{doc}");

    std::fs::write(&log, &std::fs::read(&log).unwrap()[..usize::try_from(len).unwrap() - 3]).unwrap();
    let before = snapshot(dir.path());
    let (code, doc) = run_json(&["db", "verify", "--json", p(dir.path())]);
    assert_eq!(code, 1, "{doc}");
    let problems = doc["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{doc}");
    assert_eq!(problems[0]["path"], log.display().to_string());
    let what = problems[0]["what"].as_str().unwrap();
    assert!(what.contains(&format!("synced through byte {len}")), "{what}");
    let cut = &doc["recovery"]["cut"];
    assert_eq!((cut["recorded_len"].as_u64(), cut["size"].as_u64()), (Some(len), Some(len - 3)));
    assert_eq!(doc["recovery"]["synced_writes_lost"], 2, "the last batch of two ops");
    let notes = doc["notes"].as_array().unwrap();
    assert!(
        !notes.iter().any(|n| n.as_str().unwrap().contains("torn tail")),
        "a cut is not a torn tail: {doc}"
    );

    let out = siftdb(&["db", "verify", p(dir.path())]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("lose 2 synced write(s)"), "{text}");

    let (code, doc) = run_json(&["db", "info", "--json", "--probes", "0", p(dir.path())]);
    assert_eq!(code, 1, "{doc}");
    assert_eq!(doc["recovery"]["synced_writes_lost"], 2);
    let out = siftdb(&["db", "info", "--probes", "0", p(dir.path())]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("PROBLEM: WAL") && text.contains("lose 2 synced write(s)"), "{text}");
    assert_eq!(snapshot(dir.path()), before, "inspection writes nothing");

    // A missing WAL is the same problem.
    std::fs::remove_file(&log).unwrap();
    let (code, doc) = run_json(&["db", "verify", "--json", p(dir.path())]);
    assert_eq!(code, 1, "{doc}");
    assert!(doc["recovery"]["cut"]["size"].is_null());
    assert_eq!(doc["recovery"]["synced_writes_lost"], 20);
}

#[test]
fn a_torn_tail_past_the_synced_end_is_a_note_not_a_problem() {
    let dir = tempfile::tempdir().unwrap();
    let log = build(dir.path());
    let mut bytes = std::fs::read(&log).unwrap();
    bytes.extend_from_slice(&[0x55; 9]);
    std::fs::write(&log, &bytes).unwrap();
    let (code, doc) = run_json(&["db", "verify", "--json", p(dir.path())]);
    assert_eq!(code, 0, "{doc}");
    assert!(doc["recovery"]["cut"].is_null());
    assert_eq!(doc["recovery"]["torn_bytes"], 9);
}

/// Issue 57, step 2: the operator's path. Cut a cleanly closed database's
/// WAL: `db verify` exits 1 and names the command; `db recover` without
/// `--point-in-time` says what it would lose and changes nothing (exit 2);
/// with it, recovers (exit 0); every later `db info` and `db verify` show
/// the recorded loss, and the database opens.
#[test]
fn recover_point_in_time_recovers_and_the_loss_is_remembered() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let log = build(dir);
    let (code, doc) = run_json(&["db", "recover", p(dir), "--json"]);
    assert_eq!((code, doc["needed"].as_bool()), (0, Some(false)), "a sound database: {doc}");
    let len = std::fs::metadata(&log).unwrap().len();
    std::fs::write(&log, &std::fs::read(&log).unwrap()[..usize::try_from(len).unwrap() - 3]).unwrap();

    let out = siftdb(&["db", "verify", p(dir)]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains(&format!("siftdb db recover {} --point-in-time", dir.display())), "{text}");

    let before = snapshot(dir);
    let out = siftdb(&["db", "recover", p(dir)]);
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("loses 2 synced write(s)") && err.contains("--point-in-time"), "{err}");
    assert_eq!(snapshot(dir), before, "refused without the flag: nothing changed");

    let out = siftdb(&["db", "recover", p(dir), "--point-in-time"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("loses 2 synced write(s)") && text.contains("recovered:"), "{text}");

    for round in 0..2 {
        let out = siftdb(&["db", "info", "--probes", "0", p(dir)]);
        let text = String::from_utf8(out.stdout).unwrap();
        assert_eq!(out.status.code(), Some(0), "round {round}: {text}");
        assert!(text.contains("LOST WRITES") && text.contains("lost 2 synced write(s)"), "{text}");
        let (code, doc) = run_json(&["db", "info", "--json", "--probes", "0", p(dir)]);
        assert_eq!(code, 0, "{doc}");
        let lost = doc["lost_writes"].as_array().unwrap();
        assert_eq!(lost.len(), 1, "{doc}");
        assert_eq!((lost[0]["writes_lost"].as_u64(), lost[0]["synced_len"].as_u64()), (Some(2), Some(len)));
        let (code, doc) = run_json(&["db", "verify", "--json", p(dir)]);
        assert_eq!(code, 0, "a remembered loss is not damage: {doc}");
        assert!(doc["notes"].to_string().contains("LOST WRITES"), "{doc}");
        // A write between the rounds: later opens rewrite the manifest.
        assert_eq!(siftdb(&["db", "put", p(dir), "after", "1"]).status.code(), Some(0));
    }
    let (code, doc) = run_json(&["db", "recover", p(dir), "--point-in-time", "--json"]);
    assert_eq!((code, doc["needed"].as_bool()), (0, Some(false)), "recovered once is enough: {doc}");
}
