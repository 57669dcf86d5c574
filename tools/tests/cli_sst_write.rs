//! `siftdb sst write` run as a process: sorted lines on stdin become a
//! table that `sst scan` and `sst info` read back exactly; bad input exits
//! 2 naming its line and leaves no file.

mod common;

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::{p, run_json};
use serde_json::{Value, json};

/// Runs `siftdb ARGS` with `input` on stdin.
fn write_with(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_siftdb"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A run that refuses before reading (an existing OUT) may exit first:
    // the write then meets a closed pipe, which is no failure of the test.
    let _ = child.stdin.take().unwrap().write_all(input);
    child.wait_with_output().unwrap()
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// `sst scan --json`'s entries as (key, seq, kind, value).
fn scan(path: &Path, hex: bool) -> Vec<Value> {
    let mut args = vec!["sst", "scan", p(path), "--json"];
    if hex {
        args.push("--hex");
    }
    let (code, v) = run_json(&args);
    assert_eq!(code, 0, "{v}");
    v["entries"].as_array().unwrap().clone()
}

#[test]
fn lines_become_exactly_the_entries_sst_scan_shows() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("load.sst");
    // A value, a deletion (no tab), an empty value, escaped bytes in a key
    // and a value, a backslash, and a tab inside a value.
    let input = "apple\tred\nbanana\ncherry\t\nd\\x09tab\\xff\tv\\\\1\\u{200b}\ne\tx\ty\n";
    let o = write_with(
        &["sst", "write", p(&out), "--json", "--policy", "xor8", "--salt", "77"],
        input.as_bytes(),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["entries"], 5);
    assert_eq!(v["deletions"], 1);
    assert_eq!(v["smallest"], "apple");
    assert_eq!(v["largest"], "e");
    assert_eq!(v["filter"], "xor8");
    assert_eq!(v["salt"], 77);
    assert_eq!(v["file_bytes"], std::fs::metadata(&out).unwrap().len());
    let entry = |k: &str, kind: &str, val: Value| json!({ "key": k, "seq": 0, "kind": kind, "value": val });
    assert_eq!(
        scan(&out, false),
        [
            entry("apple", "value", json!("red")),
            entry("banana", "tombstone", Value::Null),
            entry("cherry", "value", json!("")),
            entry("d\\x09tab\\xff", "value", json!("v\\\\1\\u{200b}")),
            entry("e", "value", json!("x\\x09y")),
        ]
    );
    let (code, info) = run_json(&["sst", "info", p(&out), "--json"]);
    assert_eq!(code, 0);
    assert_eq!(info["filter"]["kind"], "xor8");
    assert_eq!(info["filter"]["hash_seed"], 77);
    assert_eq!(files_in(dir.path()), ["load.sst"]);
}

#[test]
fn hex_lines_are_read_as_hex_and_the_default_policy_gives_ribbon() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("h.sst");
    let o = write_with(&["sst", "write", p(&out), "--hex"], b"00ff\t0a0b\n0100\n");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("2 entries (1 deletion)") && text.contains("filter ribbon:10"), "{text}");
    let entries = scan(&out, true);
    assert_eq!(entries.len(), 2);
    assert_eq!((&entries[0]["key"], &entries[0]["value"]), (&json!("00ff"), &json!("0a0b")));
    assert_eq!((&entries[1]["key"], &entries[1]["kind"]), (&json!("0100"), &json!("tombstone")));
}

#[test]
fn a_range_filter_is_written_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let input: Vec<u8> = (0..500u64).flat_map(|i| format!("{:016x}\t76\n", i << 30).into_bytes()).collect();
    for (args, kind) in
        [(&["--range-filter"][..], "ribbon:10"), (&["--range-filter", "bloom:8"][..], "bloom:8")]
    {
        let out = dir.path().join(format!("{kind}.sst").replace(':', "_"));
        let o = write_with(&[&["sst", "write", p(&out), "--hex"][..], args].concat(), &input);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let t = siftdb::table::Table::open_path(&out).unwrap();
        assert_eq!(t.properties().range_filter_kind, kind);
        assert_eq!(t.range_filter().unwrap().layout().shift, 20, "gaps of 2^30: buckets of 2^20");
    }
    let refused =
        write_with(&["sst", "write", p(&dir.path().join("n.sst")), "--range-filter", "none"], b"a\tb\n");
    assert_eq!(refused.status.code(), Some(2));
}

/// Runs `sst write` on `input` expecting exit 2 and no file: its stderr.
fn refused(input: &[u8], extra: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.sst");
    let mut args = vec!["sst", "write", p(&out)];
    args.extend_from_slice(extra);
    let o = write_with(&args, input);
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(files_in(dir.path()).is_empty(), "{:?} left after {err}", files_in(dir.path()));
    err
}

#[test]
fn unsorted_or_repeated_keys_are_refused_naming_the_line_and_leave_no_file() {
    let err = refused(b"a\t1\nc\t2\nb\t3\nd\t4\n", &[]);
    assert!(err.contains("line 3") && err.contains("key b") && err.contains("key c (line 2)"), "{err}");
    let err = refused(b"a\t1\na\n", &[]);
    assert!(err.contains("line 2") && err.contains("key a does not sort after key a"), "{err}");
    let err = refused(b"0b\t01\n0a\t02\n", &["--hex"]);
    assert!(err.contains("line 2") && err.contains("key 0a") && err.contains("key 0b"), "{err}");
}

#[test]
fn bad_lines_and_empty_input_are_refused() {
    let err = refused(b"a\t1\n\nb\t2\n", &[]);
    assert!(err.contains("line 2: empty line"), "{err}");
    let err = refused(b"a\\q\t1\n", &[]);
    assert!(err.contains("line 1") && err.contains("not an escape"), "{err}");
    let err = refused(b"zz\t01\n", &["--hex"]);
    assert!(err.contains("line 1") && err.contains("not hex"), "{err}");
    let err = refused(b"", &[]);
    assert!(err.contains("no entries"), "{err}");
}

#[test]
fn an_existing_file_is_refused_and_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.sst");
    std::fs::write(&out, b"mine").unwrap();
    let o = write_with(&["sst", "write", p(&out)], b"a\t1\n");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("exists"));
    assert_eq!(std::fs::read(&out).unwrap(), b"mine");
}
