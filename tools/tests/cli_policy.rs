//! The filter policy on the command line (issue 25): one grammar for `db`
//! and `bench`, the policy kept by the database between commands, and
//! `db info` showing what is stored and what it replaced.

mod common;

use std::path::Path;

use common::{p, run_json, siftdb, snapshot};
use serde_json::Value;

/// Filter kind → table count on level 0, from `db info --json`.
fn level0_kinds(dir: &str) -> Value {
    let (code, v) = run_json(&["db", "info", dir, "--probes", "0", "--json"]);
    assert_eq!(code, 0, "{v}");
    v["levels"][0]["filter_kinds"].clone()
}

#[test]
fn a_policy_given_once_is_kept_by_later_commands() {
    // The finding: the flush ran without --policy and wrote the
    // default (blocked-bloom:10) instead of the xor16 the put asked for.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let d = p(&dir);
    assert_eq!(siftdb(&["db", "put", d, "a", "1", "--policy", "xor16"]).status.code(), Some(0));
    assert_eq!(siftdb(&["db", "flush", d]).status.code(), Some(0));
    assert_eq!(level0_kinds(d), serde_json::json!({"xor16": 1}));

    let (_, info) = run_json(&["db", "info", d, "--probes", "0", "--json"]);
    assert_eq!(info["policy"], "xor16");
    assert_eq!(info["policy_source"], "stored");
    assert_eq!(info["format_version"], siftdb::manifest::DB_FORMAT_VERSION);
    assert_eq!(info["stored_policy"], "xor16");
    assert!(info["replaced_policy"].is_null(), "{info}");

    // A new policy replaces it from then on, and db info says what it replaced.
    assert_eq!(siftdb(&["db", "put", d, "b", "2", "--policy", "fuse8"]).status.code(), Some(0));
    assert_eq!(siftdb(&["db", "flush", d]).status.code(), Some(0));
    assert_eq!(level0_kinds(d), serde_json::json!({"fuse8": 1, "xor16": 1}));
    let (_, info) = run_json(&["db", "info", d, "--probes", "0", "--json"]);
    assert_eq!(
        (info["stored_policy"].as_str(), info["replaced_policy"].as_str()),
        (Some("fuse8"), Some("xor16"))
    );
    let text = String::from_utf8(siftdb(&["db", "info", d, "--probes", "0"]).stdout).unwrap();
    assert!(text.contains("filter policy   fuse8 (stored; replaced xor16"), "{text}");
}

#[test]
fn what_if_and_read_only_commands_store_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let d = p(&dir);
    assert_eq!(siftdb(&["db", "put", d, "a", "1", "--policy", "xor8"]).status.code(), Some(0));
    let before = snapshot(&dir);
    let (code, info) = run_json(&["db", "info", d, "--policy", "monkey:10", "--json"]);
    assert_eq!(code, 0, "{info}");
    assert_eq!((info["policy"].as_str(), info["policy_source"].as_str()), (Some("monkey:10"), Some("given")));
    assert_eq!(info["stored_policy"], "xor8");
    // The read-only commands refuse a policy they would not store.
    assert_eq!(siftdb(&["db", "get", d, "a", "--policy", "fuse16"]).status.code(), Some(2));
    assert_eq!(siftdb(&["db", "scan", d, "--policy", "fuse16"]).status.code(), Some(2));
    assert_eq!(siftdb(&["db", "get", d, "a"]).status.code(), Some(0));
    assert_eq!(snapshot(&dir), before, "a what-if or a read-only open wrote to the database");
    let (_, info) = run_json(&["db", "info", d, "--probes", "0", "--json"]);
    assert_eq!(info["stored_policy"], "xor8");
}

#[test]
fn db_and_bench_accept_the_same_forms() {
    let tmp = tempfile::tempdir().unwrap();
    for (i, form) in
        ["fuse8+skip-last", "per-level:xor8,fuse8", "monkey:10+skip-last", "blocked-bloom:10", "default"]
            .iter()
            .enumerate()
    {
        let dir = tmp.path().join(format!("db{i}"));
        let out = siftdb(&["db", "put", p(&dir), "k", "v", "--policy", form]);
        assert_eq!(out.status.code(), Some(0), "{form}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let dir = tmp.path().join("bench");
    let out = siftdb(&[
        "bench",
        "--keys",
        "2000",
        "--lookups",
        "100",
        "--workloads",
        "absent",
        "--policies",
        "fuse8+skip-last;per-level:xor8,fuse8;monkey:10+skip-last",
        "--dir",
        p(&dir),
        "--out",
        p(&dir),
        "--json",
    ]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> =
        report["policies"].as_array().unwrap().iter().map(|x| x["policy"].as_str().unwrap()).collect();
    assert_eq!(names, ["fuse8+skip-last", "per-level:xor8,fuse8", "monkey:10+skip-last"]);
}

#[test]
fn db_and_bench_reject_the_same_forms_with_one_message() {
    let tmp = tempfile::tempdir().unwrap();
    // (`xor8,fuse8` is no policy, but for `bench --policies` it is a list of two.)
    for bad in [
        "monkey:1000",
        "monkey:0",
        "monkey:NaN",
        "per-level:",
        "per-level:xor8,,fuse8",
        "bogus",
        "fuse8+skip-last+skip-last",
    ] {
        let dir = tmp.path().join("db");
        let db = siftdb(&["db", "put", p(&dir), "k", "v", "--policy", bad]);
        let bench = siftdb(&["bench", "--keys", "1000", "--policies", bad]);
        for (what, out) in [("db put", &db), ("bench", &bench)] {
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{what} {bad}: {err}");
            assert!(err.contains("per-level:K0,K1") && err.contains("monkey:B"), "{what} {bad}: {err}");
        }
        assert!(!dir.exists(), "a rejected policy created the database");
    }
    let dir = tmp.path().join("db");
    let out = siftdb(&["db", "put", p(&dir), "k", "v", "--policy", "xor8,fuse8"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("per-level:xor8,fuse8"), "the error should suggest the per-level form: {err}");
}

#[test]
fn a_database_from_before_stored_policies_shows_format_1_and_the_default() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/pre_policy_db");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    std::fs::create_dir(&dir).unwrap();
    for e in std::fs::read_dir(fixture).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
    }
    let (code, info) = run_json(&["db", "info", p(&dir), "--json"]);
    assert_eq!(code, 0, "{info}");
    assert_eq!(
        (info["format_version"].as_u64(), info["policy_source"].as_str()),
        (Some(1), Some("default (none stored)"))
    );
    assert!(info["stored_policy"].is_null());
    let (code, v) = run_json(&["db", "get", p(&dir), "banana", "--json"]);
    assert_eq!((code, v["value"].as_str()), (0, Some("yellow")));
}

#[test]
fn db_info_names_fallbacks_and_tables_over_target() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let opts = siftdb::Options {
        filter_policy: Some("xor8".parse().unwrap()),
        inject_filter_build_failure: true,
        ..siftdb::Options::default()
    };
    let db = siftdb::Db::open(&dir, opts).unwrap();
    for i in 0..2000 {
        db.put(format!("key{i:06}").as_bytes(), b"v").unwrap();
    }
    db.flush().unwrap();
    db.close().unwrap();
    drop(db);
    let (code, info) = run_json(&["db", "info", p(&dir), "--probes", "0", "--json"]);
    assert_eq!(code, 0, "{info}");
    let l0 = &info["levels"][0];
    assert_eq!(
        (l0["filter_fallbacks"].as_u64(), l0["tables_over_target"].as_u64()),
        (Some(1), Some(1)),
        "{l0}"
    );
    assert!(l0["table_list"][0]["fallback_reason"].as_str().is_some_and(|r| r.contains("injected")), "{l0}");
    let text = String::from_utf8(siftdb(&["db", "info", p(&dir), "--probes", "0"]).stdout).unwrap();
    assert!(text.contains("(1 fell back, 1 over target)"), "{text}");
}

/// `db info` gives each level's table sizes, and notes a level whose
/// smallest table is a quarter of its median or less: here a merge of
/// three keys beyond a full level-1 table, which it was too large to join.
#[test]
fn db_info_shows_the_spread_of_table_sizes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let opts = siftdb::Options {
        memtable_bytes: 1 << 20,
        base_level_bytes: 1 << 20,
        table_target_bytes: 2048,
        auto_compaction: false,
        filter_policy: Some("none".parse().unwrap()),
        // Sizes in raw bytes: LZ4 stores the 20 values of 100 `v`s in 393.
        compression: "none".parse().unwrap(),
        ..siftdb::Options::default()
    };
    let db = siftdb::Db::open(&dir, opts).unwrap();
    for i in 0..20u32 {
        db.put(format!("a{i:04}").as_bytes(), [b'v'; 100]).unwrap();
    }
    db.compact().unwrap();
    for i in 0..3u32 {
        db.put(format!("z{i:04}").as_bytes(), [b'v'; 100]).unwrap();
    }
    db.compact().unwrap();
    let sizes: Vec<u64> = db.tables().iter().filter(|t| t.level == 1).map(|t| t.file_size).collect();
    db.close().unwrap();
    drop(db);
    let (code, info) = run_json(&["db", "info", p(&dir), "--probes", "0", "--json"]);
    assert_eq!(code, 0, "{info}");
    let spread = &info["levels"][1]["table_bytes"];
    let (min, max) = (*sizes.iter().min().unwrap(), *sizes.iter().max().unwrap());
    assert_eq!((spread["min"].as_u64(), spread["max"].as_u64()), (Some(min), Some(max)), "{sizes:?}");
    assert!(info["levels"][0]["table_bytes"].is_null(), "{info}");
    let text = String::from_utf8(siftdb(&["db", "info", p(&dir), "--probes", "0"]).stdout).unwrap();
    assert!(text.contains(&format!("smallest table {min} bytes, median {max}")), "{sizes:?}\n{text}");
}
