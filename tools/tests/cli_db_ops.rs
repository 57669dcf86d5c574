//! `siftdb db get|put|delete|scan|flush|compact`, and `db info|verify` on a
//! database written by `siftdb::Db`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use siftdb::{Db, Options};

fn siftdb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_siftdb")).args(args).output().unwrap()
}

fn run_json(args: &[&str]) -> (i32, Value) {
    let out = siftdb(args);
    let text = String::from_utf8(out.stdout).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    (out.status.code().unwrap(), v)
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| (p.clone(), std::fs::read(p).unwrap()))
        .collect();
    v.sort();
    v
}

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
    let (_, v) = run_json(&["db", "get", d, "apple", "--json"]);
    assert_eq!((v["found"].as_bool(), v["value"].is_null()), (Some(false), true));
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

#[test]
fn commands_other_than_put_refuse_a_directory_without_a_database() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("missing");
    for args in [&["get", "k"][..], &["delete", "k"], &["scan"], &["flush"], &["compact"]] {
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
    for cmd in ["get", "put", "delete", "scan", "flush", "compact"] {
        assert_eq!(siftdb(&["db", cmd, "--help"]).status.code(), Some(0), "{cmd}");
    }
}
