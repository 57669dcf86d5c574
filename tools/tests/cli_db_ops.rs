//! `siftdb db get|put|delete|scan|flush|compact`, and `db info|verify` on a
//! database written by `siftdb::Db`.

mod common;

use std::path::PathBuf;

use common::{p, run_json, siftdb, snapshot};
use serde_json::Value;
use siftdb::ValueKind;
use siftdb::table::{TableBuilder, TableOptions};
use siftdb::{Db, FilterKind, Options};

#[test]
fn put_get_delete_scan_flush_compact_round_trip() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let d = p(&dir);
    assert_eq!(siftdb(&["db", "put", d, "apple", "red"]).status.code(), Some(0));
    assert_eq!(siftdb(&["db", "put", d, "banana", "yellow"]).status.code(), Some(0));
    assert_eq!(siftdb(&["db", "put", d, "00ff", "0001", "--hex"]).status.code(), Some(0));
    let (code, v) = run_json(&["db", "get", d, "apple", "--json"]);
    assert_eq!((code, v["found"].as_bool(), v["value"].as_str()), (0, Some(true), Some("red")));
    let out = siftdb(&["db", "get", d, "00ff", "--hex"]);
    assert_eq!(String::from_utf8(out.stdout).unwrap().trim(), "0001");
    let (code, v) = run_json(&["db", "flush", d, "--json"]);
    assert_eq!(code, 0);
    assert_eq!(v["levels"][0]["tables"], 1);
    assert_eq!(siftdb(&["db", "delete", d, "apple"]).status.code(), Some(0));
    let (code, v) = run_json(&["db", "get", d, "apple", "--json"]);
    assert_eq!((code, v["found"].as_bool(), v["value"].is_null()), (1, Some(false), true));
    // Issue 30: a missing key exits 1, in text too, so scripts can test it.
    let out = siftdb(&["db", "get", d, "apple"]);
    assert_eq!((out.status.code(), String::from_utf8_lossy(&out.stdout).trim()), (Some(1), "(not found)"));
    let (_, v) = run_json(&["db", "scan", d, "--json"]);
    let keys: Vec<&str> =
        v["entries"].as_array().unwrap().iter().map(|e| e["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["\\x00\\xff", "banana"]);
    let (_, v) = run_json(&["db", "scan", d, "--prefix", "ban", "--json"]);
    assert_eq!(v["count"], 1);
    let (_, v) = run_json(&["db", "scan", d, "--from", "a", "--to", "b", "--json"]);
    assert_eq!(v["count"], 0);
    let (_, v) = run_json(&["db", "scan", d, "--limit", "1", "--json"]);
    assert_eq!((v["count"].as_u64(), v["truncated"].as_bool()), (Some(1), Some(true)));
    // Last first: the whole range reversed, and --limit takes its end.
    let (_, v) = run_json(&["db", "scan", d, "--reverse", "--json"]);
    let keys: Vec<&str> =
        v["entries"].as_array().unwrap().iter().map(|e| e["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["banana", "\\x00\\xff"]);
    let (_, v) = run_json(&["db", "scan", d, "--reverse", "--limit", "1", "--json"]);
    assert_eq!(v["entries"][0]["key"], "banana");
    let (_, v) = run_json(&["db", "scan", d, "--reverse", "--from", "a", "--to", "c", "--json"]);
    assert_eq!((v["count"].as_u64(), v["entries"][0]["key"].as_str()), (Some(1), Some("banana")));
    let (code, v) = run_json(&["db", "compact", d, "--json"]);
    assert_eq!((code, v["op"].as_str()), (0, Some("compact")));
    let (code, v) = run_json(&["db", "verify", d, "--json"]);
    assert_eq!(code, 0, "{v}");
}

#[test]
fn info_and_verify_read_a_database_written_by_the_engine() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    {
        let db = Db::open(&dir, Options { hash_salt: Some(7), ..Options::default() }).unwrap();
        for i in 0..3000u32 {
            db.put(format!("user:{i:06}").as_bytes(), b"some value bytes").unwrap();
        }
        db.flush().unwrap();
        for i in 3000..3100u32 {
            db.put(format!("user:{i:06}").as_bytes(), b"in the wal").unwrap();
        }
        db.close().unwrap();
    }
    let before = snapshot(&dir);
    let (code, v) = run_json(&["db", "info", p(&dir), "--json"]);
    assert_eq!(code, 0);
    assert_eq!(v["hash_salt"], 7);
    let keys: u64 = v["levels"].as_array().unwrap().iter().map(|l| l["keys"].as_u64().unwrap()).sum();
    assert!(keys >= 3000, "{keys}");
    assert!(v["filter_memory_bytes"].as_u64().unwrap() > 3000);
    assert!(v["last_seq"].as_u64().unwrap() >= 3100);
    let (code, v) = run_json(&["db", "verify", p(&dir), "--json"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(snapshot(&dir), before, "info and verify must not modify the database");

    // Damage a data block of the first live table: verify names file and offset.
    let table = PathBuf::from(v["tables"][0]["path"].as_str().unwrap());
    let mut bytes = std::fs::read(&table).unwrap();
    bytes[100] ^= 0x01;
    std::fs::write(&table, &bytes).unwrap();
    let (code, v) = run_json(&["db", "verify", p(&dir), "--json"]);
    assert_eq!(code, 1);
    assert!(
        v["problems"].as_array().unwrap().iter().any(|x| x["path"] == p(&table) && x["offset"] == 0),
        "{v}"
    );
}

/// Issue 60: one command deletes a key range, flushed or not, and a
/// reversed range is refused before anything is opened.
#[test]
fn delete_range_deletes_a_key_range_and_refuses_a_reversed_one() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let d = p(&dir);
    for k in ["a1", "b1", "b2", "c1"] {
        assert_eq!(siftdb(&["db", "put", d, k, "v"]).status.code(), Some(0));
    }
    assert_eq!(run_json(&["db", "flush", d, "--json"]).0, 0);
    let (code, v) = run_json(&["db", "delete-range", d, "b", "c", "--json"]);
    assert_eq!(
        (code, v["op"].as_str(), v["start"].as_str(), v["end"].as_str()),
        (0, Some("delete-range"), Some("b"), Some("c"))
    );
    let keys = |v: &Value| -> Vec<String> {
        v["entries"].as_array().unwrap().iter().map(|e| e["key"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(keys(&run_json(&["db", "scan", d, "--json"]).1), ["a1", "c1"]);
    assert_eq!(run_json(&["db", "get", d, "b2", "--json"]).0, 1, "a deleted key is not found");
    // Flushed and compacted, the tombstone still hides the range.
    assert_eq!(run_json(&["db", "flush", d, "--json"]).0, 0);
    assert_eq!(run_json(&["db", "compact", d, "--json"]).0, 0);
    assert_eq!(keys(&run_json(&["db", "scan", d, "--reverse", "--json"]).1), ["c1", "a1"]);
    for (start, end) in [("c", "b"), ("b", "b")] {
        let out = siftdb(&["db", "delete-range", d, start, end]);
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("must sort before END"), "{err}");
    }
    let missing = tmp.path().join("never");
    assert_eq!(siftdb(&["db", "delete-range", p(&missing), "b", "a"]).status.code(), Some(2));
    assert!(!missing.exists());
}

/// Issue 63: `db checkpoint` writes a copy that opens on its own; a
/// non-empty target is refused.
#[test]
fn ingest_installs_tables_built_outside_and_refuses_overlap() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let d = p(&dir);
    assert_eq!(siftdb(&["db", "put", d, "b05", "old"]).status.code(), Some(0));
    let table = |name: &str, keys: std::ops::Range<u32>| {
        let path = tmp.path().join(name);
        let mut b = TableBuilder::create(&path, TableOptions::default()).unwrap();
        for i in keys {
            b.add(format!("b{i:02}").as_bytes(), 0, ValueKind::Value, b"new").unwrap();
        }
        b.finish().unwrap();
        path
    };
    let (x, y) = (table("x.sst", 0..10), table("y.sst", 5..20));
    let out = siftdb(&["db", "ingest", d, p(&x), p(&y)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("overlap"), "{out:?}");
    let (code, v) = run_json(&["db", "get", d, "b05", "--json"]);
    assert_eq!((code, v["value"].as_str()), (0, Some("old")), "a refused ingest changes nothing");
    let (code, v) = run_json(&["db", "ingest", d, p(&x), "--move", "--json"]);
    assert_eq!(
        (code, v["tables"][0]["entries"].as_u64(), v["tables"][0]["rebuilt"].as_bool()),
        (0, Some(10), Some(true))
    );
    assert!(!x.exists(), "--move removes the source");
    let (_, v) = run_json(&["db", "get", d, "b05", "--json"]);
    assert_eq!(v["value"].as_str(), Some("new"), "newer than the earlier put");
    let (_, v) = run_json(&["db", "scan", d, "--json"]);
    assert_eq!(v["count"], 10);
    // The file holds sequence number 0 throughout; the manifest record
    // gives the number the whole table reads at. Not a mismatch.
    let out = siftdb(&["db", "verify", d]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn checkpoint_writes_a_copy_that_opens_on_its_own() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, copy) = (tmp.path().join("db"), tmp.path().join("copy"));
    let (d, c) = (p(&dir), p(&copy));
    for k in ["a", "b"] {
        assert_eq!(siftdb(&["db", "put", d, k, "v"]).status.code(), Some(0));
    }
    let (code, v) = run_json(&["db", "checkpoint", d, c, "--json"]);
    assert_eq!((code, v["op"].as_str(), v["dst"].as_str()), (0, Some("checkpoint"), Some(c)));
    assert_eq!(siftdb(&["db", "put", d, "source only", "v"]).status.code(), Some(0));
    let (_, v) = run_json(&["db", "scan", c, "--json"]);
    assert_eq!(v["count"], 2, "{v}");
    assert_eq!(run_json(&["db", "verify", c, "--json"]).0, 0);
    let out = siftdb(&["db", "checkpoint", d, c]);
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("not empty"), "{err}");
}

/// Issue 61: `db info` shows where range tombstones live, and `db compact`
/// what they gave back.
#[test]
fn info_counts_range_tombstones_and_compact_the_versions_they_dropped() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let d = p(&dir);
    // Built through the library with background compaction off: a writing
    // `siftdb` command would let the background thread take the flushed
    // tombstone down (and drop it) before `db info` could see it in level 0.
    let db = Db::open(&dir, Options { auto_compaction: false, ..Options::default() }).unwrap();
    for k in ["a1", "b1", "b2", "c1"] {
        db.put(k, "v").unwrap();
    }
    db.compact().unwrap();
    db.delete_range("b", "c").unwrap();
    db.flush().unwrap();
    db.close().unwrap();
    drop(db);
    let (code, info) = run_json(&["db", "info", d, "--json"]);
    assert_eq!(code, 0, "{info}");
    let levels = info["levels"].as_array().unwrap();
    let counts: Vec<u64> = levels.iter().map(|l| l["range_tombstones"].as_u64().unwrap()).collect();
    assert_eq!(counts.iter().sum::<u64>(), 1, "{info}");
    assert_eq!(counts[0], 1, "the flushed tombstone is in level 0: {info}");
    assert_eq!(levels[0]["table_list"][0]["range_tombstones"], 1, "{info}");
    let text = String::from_utf8(siftdb(&["db", "info", d]).stdout).unwrap();
    assert!(text.contains("range tombstones: L0 1\n"), "{text}");
    let (code, v) = run_json(&["db", "compact", d, "--json"]);
    assert_eq!((code, &v["range_deleted_entries"]), (0, &2.into()), "{v}");
    let (_, info) = run_json(&["db", "info", d, "--json"]);
    assert!(info["levels"].as_array().unwrap().iter().all(|l| l["range_tombstones"] == 0), "{info}");
    let text = String::from_utf8(siftdb(&["db", "info", d]).stdout).unwrap();
    assert!(!text.contains("range tombstones"), "{text}");
}

#[test]
fn commands_other_than_put_refuse_a_directory_without_a_database() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("missing");
    for args in [
        &["get", "k"][..],
        &["delete", "k"],
        &["delete-range", "a", "b"],
        &["scan"],
        &["flush"],
        &["compact"],
    ] {
        let mut a = vec!["db", args[0], p(&missing)];
        a.extend_from_slice(&args[1..]);
        let out = siftdb(&a);
        assert_eq!(out.status.code(), Some(2), "{a:?}");
        assert!(String::from_utf8(out.stderr).unwrap().contains(p(&missing)));
        assert!(!missing.exists(), "{a:?} created the directory");
    }
    let foreign = tmp.path().join("foreign");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("notes.txt"), "mine").unwrap();
    let out = siftdb(&["db", "put", p(&foreign), "k", "v"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read_dir(&foreign).unwrap().count(), 1, "nothing written into a foreign directory");
    for cmd in ["get", "put", "delete", "delete-range", "scan", "flush", "compact"] {
        assert_eq!(siftdb(&["db", cmd, "--help"]).status.code(), Some(0), "{cmd}");
    }
}

#[test]
fn read_commands_change_nothing_in_the_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let d = p(&dir);
    for i in 0..20 {
        assert_eq!(siftdb(&["db", "put", d, &format!("k{i:02}"), "v"]).status.code(), Some(0));
    }
    assert_eq!(siftdb(&["db", "flush", d]).status.code(), Some(0));
    assert_eq!(siftdb(&["db", "put", d, "in-wal", "w"]).status.code(), Some(0));
    let before = snapshot(&dir);
    let reads: [&[&str]; 8] = [
        &["get", d, "k03"],
        &["get", d, "in-wal", "--json"],
        &["get", d, "absent"],
        &["scan", d],
        &["scan", d, "--prefix", "k1", "--json"],
        &["info", d],
        &["verify", d, "--json"],
        &["scan", d, "--limit", "3"],
    ];
    for args in reads {
        let mut a = vec!["db"];
        a.extend_from_slice(args);
        let out = siftdb(&a);
        let expected = i32::from(args.get(2) == Some(&"absent"));
        assert_eq!(out.status.code(), Some(expected), "{a:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(snapshot(&dir), before, "{a:?} modified the database (CURRENT, MANIFEST or a log)");
    }
    let (_, v) = run_json(&["db", "get", d, "in-wal", "--json"]);
    assert_eq!(v["value"], "w", "read-only get replays the WAL");
    // A write still works afterwards, and then changes the directory.
    assert_eq!(siftdb(&["db", "put", d, "later", "x"]).status.code(), Some(0));
    assert_ne!(snapshot(&dir), before);
}

#[test]
fn db_scan_keeps_notes_off_stdout_and_escapes_invisible_characters() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let d = p(&dir);
    for k in ["a", "b", "c", "zero\u{200b}width"] {
        assert_eq!(siftdb(&["db", "put", d, k, "v\u{202e}"]).status.code(), Some(0));
    }
    let out = siftdb(&["db", "scan", d, "--limit", "2"]);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "a = v\\u{202e}\nb = v\\u{202e}\n");
    assert!(String::from_utf8(out.stderr).unwrap().contains("limit of 2 entries reached"));
    let out = siftdb(&["db", "get", d, "zero\u{200b}width"]);
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "v\\u{202e}\n");
    let (_, v) = run_json(&["db", "scan", d, "--json"]);
    assert_eq!(v["entries"][3]["key"], "zero\\u{200b}width");
    assert!(v["error"].is_null());
}

/// Every key path of `v` (`a`, `a.b`, `a.b.c` for objects in lists), but
/// not the keys of maps whose keys are data (`filter_kinds`).
fn key_paths(v: &Value, prefix: &str, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                out.push((path.clone(), k.clone()));
                if k != "filter_kinds" {
                    key_paths(x, &path, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| key_paths(x, prefix, out)),
        _ => {}
    }
}

/// The field names the reference documents: every `name` in backticks in
/// `docs/reference.md` (the README keeps to what a newcomer needs and links
/// there).
fn readme_names() -> std::collections::HashSet<String> {
    let section =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/reference.md")).unwrap();
    assert!(section.contains("## JSON output"), "the JSON reference moved");
    let mut names = std::collections::HashSet::new();
    for code in section.split('`').skip(1).step_by(2) {
        for part in code.split(['.', '[', ']', ' ', ',']) {
            names.insert(part.to_string());
        }
    }
    names
}

#[test]
fn every_json_field_is_documented_in_the_reference() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let d = p(&dir);
    let mut docs: Vec<(String, Value)> = Vec::new();
    let mut run = |args: &[&str]| {
        let out = siftdb(args);
        let v: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
        docs.push((args[..2].join(" "), v));
    };
    for i in 0..40 {
        run(&["db", "put", d, &format!("k{i:02}"), "v", "--json"]);
    }
    run(&["db", "flush", d, "--json"]);
    run(&["db", "delete", d, "k01", "--json"]);
    run(&["db", "compact", d, "--json"]);
    run(&["db", "get", d, "k02", "--json"]);
    run(&["db", "scan", d, "--json"]);
    run(&["db", "info", d, "--json"]);
    run(&["bench", "open", d, "--rounds", "1", "--json"]);
    let outside = tmp.path().join("outside.sst");
    let mut b = TableBuilder::create(&outside, TableOptions::default()).unwrap();
    b.add(b"z1", 0, ValueKind::Value, b"v").unwrap();
    b.finish().unwrap();
    run(&["db", "ingest", d, p(&outside), "--json"]);
    let table = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "sst"))
        .unwrap();
    let t = p(&table);
    // One table per filter family, for the kind-specific filter.params.
    for kind in [FilterKind::BinaryFuse8, FilterKind::Xor8, FilterKind::Bloom { bits_per_key: 8.0 }] {
        let path = tmp.path().join(format!("{}.sst", kind.to_string().replace(':', "_")));
        let opts = TableOptions { filter: kind, ..TableOptions::default() };
        let mut b = TableBuilder::create(&path, opts).unwrap();
        b.add(b"k", 1, ValueKind::Value, b"v").unwrap();
        b.add(b"k", 0, ValueKind::Tombstone, b"").unwrap();
        b.finish().unwrap();
        run(&["sst", "info", p(&path), "--json"]);
    }
    run(&["sst", "info", t, "--json"]);
    run(&["sst", "scan", t, "--json"]);
    run(&["sst", "verify", t, "--json"]);
    run(&["sst", "fpr", t, "--probes", "50", "--json"]);
    run(&["sst", "probe", t, "k05", "--json"]);
    run(&["sst", "layout", t, "--json"]);
    // Damage, so that problem objects appear too.
    let mut bytes = std::fs::read(&table).unwrap();
    bytes[3] ^= 1;
    std::fs::write(&table, &bytes).unwrap();
    run(&["sst", "verify", t, "--json"]);
    run(&["db", "verify", d, "--json"]);
    run(&["bench", "filters", "--keys", "2000", "--probes", "2000", "--json"]);
    let bench_dir = tmp.path().join("bench");
    let b = p(&bench_dir);
    run(&[
        "bench",
        "--keys",
        "3000",
        "--lookups",
        "300",
        "--policies",
        "none,fuse8",
        "--workloads",
        "absent",
        "--dir",
        b,
        "--out",
        b,
        "--json",
    ]);

    let documented = readme_names();
    let mut missing = Vec::new();
    let mut seen = 0;
    for (cmd, v) in &docs {
        let mut paths = Vec::new();
        key_paths(v, "", &mut paths);
        for (path, name) in paths {
            seen += 1;
            if !documented.contains(&name) {
                missing.push(format!("{cmd}: {path}"));
            }
        }
    }
    missing.sort();
    missing.dedup();
    assert!(seen > 300, "{seen} fields");
    assert!(missing.is_empty(), "JSON fields not named in docs/reference.md: {missing:#?}");
}
