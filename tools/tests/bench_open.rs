//! `siftdb bench open` (issue 66): each round a fresh process opens the
//! database read-only and reports the open's time, the anonymous memory it
//! added and the filters' bytes; the parent reports rounds and medians.

mod common;

use common::{p, run_json, siftdb, snapshot};
use siftdb::{Db, FilterKind, FilterPolicy, Options};

/// A database of a few flushed tables under fuse8, closed.
fn make_db(dir: &std::path::Path) {
    let opts = Options {
        filter_policy: Some(FilterPolicy::uniform(FilterKind::BinaryFuse8)),
        memtable_bytes: 128 << 10,
        ..Options::default()
    };
    let db = Db::open(dir, opts).unwrap();
    for i in 0..20_000u32 {
        db.put(format!("key{i:08}"), "value").unwrap();
    }
    db.flush().unwrap();
    db.close().unwrap();
}

#[test]
fn each_round_reports_the_open_its_memory_and_the_filters() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    make_db(&dir);
    let before = snapshot(&dir);
    let (code, v) = run_json(&["bench", "open", p(&dir), "--rounds", "2", "--json"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["rounds"], 2);
    let rounds = v["per_round"].as_array().unwrap();
    assert_eq!(rounds.len(), 2);
    let filter_bytes = v["filter_bytes"].as_u64().unwrap();
    assert!(filter_bytes > 10_000, "{v}");
    assert!(v["tables"].as_u64().unwrap() >= 1, "{v}");
    for r in rounds.iter().chain([&v]) {
        assert!(r["open_seconds"].as_f64().unwrap() > 0.0, "{r}");
        let ratio = r["rss_anon_per_filter_byte"].as_f64().unwrap();
        assert!(ratio.is_finite() && ratio >= 0.0, "{r}");
        assert!(r["rss_anon_added_bytes"].is_u64(), "{r}");
        // Read in place, the filters hold their descriptors only.
        assert!(r["heap_bytes"]["filters"].as_u64().unwrap() * 10 < filter_bytes, "{r}");
        assert!(r["heap_bytes"]["indexes"].is_u64(), "{r}");
    }
    for r in rounds {
        assert_eq!(r["filter_bytes"], filter_bytes);
        assert!(r["rss_anon_before_bytes"].as_u64().unwrap() > 0, "{r}");
        let added = r["rss_anon_added_bytes"].as_u64().unwrap() as f64;
        let ratio = r["rss_anon_per_filter_byte"].as_f64().unwrap();
        assert!((ratio - added / filter_bytes as f64).abs() < 1e-9, "{r}");
    }
    assert!(v["machine"]["cores"].as_u64().unwrap() >= 1);
    assert!(v["machine"]["times_unreliable"].is_boolean());
    let out = siftdb(&["bench", "open", p(&dir), "--rounds", "1"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("RssAnon added") && text.contains("\nmedian ") && text.contains("load average"),
        "{text}"
    );
    assert_eq!(snapshot(&dir), before, "bench open must not modify the database");
}

#[test]
fn a_directory_that_is_no_database_is_a_usage_failure() {
    let tmp = tempfile::tempdir().unwrap();
    let out = siftdb(&["bench", "open", p(tmp.path()), "--rounds", "1"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    // The round's own message, as `db info` would say it.
    let last = err.lines().last().unwrap();
    assert!(last.starts_with("siftdb: ") && last.contains("not a siftdb database"), "{err}");
}
