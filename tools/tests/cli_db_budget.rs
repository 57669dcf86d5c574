//! `siftdb db info --budget BYTES` (issue 65): the plan a filter memory
//! budget would give the tree, writing nothing; refused for a policy a
//! budget cannot move.

mod common;

use common::{p, run_json, snapshot};
use siftdb::{Db, Options, WriteBatch};

#[test]
fn info_shows_the_plan_a_budget_would_give_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let opts = || Options { memtable_bytes: 256 << 10, hash_salt: Some(3), ..Options::default() };
    let db = Db::open(dir.path(), opts()).unwrap();
    for chunk in (0..60_000u32).collect::<Vec<_>>().chunks(5_000) {
        let mut batch = WriteBatch::new();
        for i in chunk {
            batch.put(format!("key{:08}", i.wrapping_mul(2_654_435_761)), i.to_le_bytes());
        }
        db.write(batch).unwrap();
        db.flush().unwrap();
    }
    db.compact().unwrap();
    db.close().unwrap();

    let before = snapshot(dir.path());
    let budget = 60_000 * 2 / 8;
    let (code, doc) =
        run_json(&["db", "info", p(dir.path()), "--json", "--probes", "0", "--budget", &budget.to_string()]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(snapshot(dir.path()), before, "db info --budget wrote something");
    assert_eq!(doc["filter_memory_budget"], serde_json::Value::Null);
    let plan = &doc["budget_plan"];
    assert_eq!(plan["budget_bytes"], budget);
    let spent = plan["filter_bytes"].as_f64().unwrap();
    assert!(spent <= budget as f64 * 1.03 && spent >= budget as f64 * 0.9, "{plan}");
    let levels = plan["levels"].as_array().unwrap();
    assert!(levels.len() >= 2, "{plan}");
    // Under the stored monkey:10 the same tree takes about five times more.
    let (_, unbudgeted) = run_json(&["db", "info", p(dir.path()), "--json", "--probes", "0"]);
    assert_eq!(unbudgeted["budget_plan"], serde_json::Value::Null);
    let deepest = levels.last().unwrap();
    assert!(deepest["bits_per_key"].as_f64().unwrap() < 3.0, "{plan}");

    let (code, _) = run_json(&[
        "db",
        "info",
        p(dir.path()),
        "--json",
        "--probes",
        "0",
        "--policy",
        "fuse8",
        "--budget",
        "1000",
    ]);
    assert_eq!(code, 2, "a budget cannot move a per-level policy");
}

/// A database opened under a budget: `db info` gives the filter bytes in
/// all and per level against it, in the JSON and the text, and the shares
/// add up to the whole.
#[test]
fn info_gives_the_filter_bytes_against_the_stored_budget() {
    let dir = tempfile::tempdir().unwrap();
    let budget: u64 = 60_000 * 4 / 8;
    let opts = Options {
        memtable_bytes: 256 << 10,
        hash_salt: Some(3),
        filter_memory_bytes: Some(budget),
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    for chunk in (0..60_000u32).collect::<Vec<_>>().chunks(5_000) {
        let mut batch = WriteBatch::new();
        for i in chunk {
            batch.put(format!("key{:08}", i.wrapping_mul(2_654_435_761)), i.to_le_bytes());
        }
        db.write(batch).unwrap();
        db.flush().unwrap();
    }
    db.compact().unwrap();
    let stats = db.stats();
    db.close().unwrap();

    let (code, doc) = run_json(&["db", "info", p(dir.path()), "--json", "--probes", "0"]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc["filter_memory_budget"], budget);
    assert_eq!(doc["filter_bytes"], stats.filter_bytes());
    let share = doc["filter_budget_share"].as_f64().unwrap();
    assert!((share - stats.filter_budget_share().unwrap()).abs() < 1e-9, "{share}");
    assert!((share - 1.0).abs() <= 0.05, "{share}");
    let levels = doc["levels"].as_array().unwrap();
    let by_level: f64 = levels.iter().map(|l| l["budget_share"].as_f64().unwrap()).sum();
    assert!((by_level - share).abs() < 1e-9, "{by_level} against {share}");
    for l in levels {
        let bytes = l["filter_bytes"].as_f64().unwrap();
        assert!((l["budget_share"].as_f64().unwrap() - bytes / budget as f64).abs() < 1e-12, "{l}");
    }
    let out = common::siftdb(&["db", "info", p(dir.path()), "--probes", "0"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let line =
        format!("{} bytes written, {:.1}% of the budget of {budget}", stats.filter_bytes(), share * 100.0);
    assert!(text.contains(&line), "{text}");

    // Without a budget: no shares, no budget line.
    let plain = tempfile::tempdir().unwrap();
    Db::open(plain.path(), Options::default()).unwrap().put(b"k", b"v").unwrap();
    let (_, doc) = run_json(&["db", "info", p(plain.path()), "--json", "--probes", "0"]);
    assert_eq!(doc["filter_budget_share"], serde_json::Value::Null, "{doc}");
}
