//! Issue 57, step 3: the CLI keeps its word. Each test pins something a
//! new user was told by `--help` or an error message that the command did
//! not do.

mod common;

use std::process::Output;

use std::path::{Path, PathBuf};

use common::{p, run_json, siftdb};
use serde_json::Value;
use siftdb::table::{TableBuilder, TableOptions};
use siftdb::{Db, FilterKind, Options, ValueKind};

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `siftdb ARGS --json` for a command line that does not run: exit 2 and
/// the `{error, kind}` document, whose message stderr carries too.
fn json_failure(args: &[&str]) -> (String, String) {
    let mut args = args.to_vec();
    args.push("--json");
    let out = siftdb(&args);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}"));
    let message = v["error"].as_str().unwrap().to_string();
    assert!(stderr(&out).contains(&message), "{args:?}: stderr {} lacks {message}", stderr(&out));
    (v["kind"].as_str().unwrap().to_string(), message)
}

#[test]
fn json_usage_errors_keep_the_whole_message() {
    let tmp = tempfile::tempdir().unwrap();
    let d = p(tmp.path());
    let (kind, message) = json_failure(&["db", "get", d]);
    assert_eq!(kind, "usage");
    assert!(
        message.contains("required arguments were not provided") && message.contains("<KEY>"),
        "{message}"
    );
    assert!(!message.contains("For more information"), "{message}");
    let (kind, message) = json_failure(&["db", "infoo", d]);
    assert_eq!(kind, "usage");
    assert!(
        message.contains("'infoo'") && message.contains("similar subcommand exists: 'info'"),
        "{message}"
    );
}

#[test]
fn a_bad_policy_is_a_usage_error_that_says_what_is_wrong_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let d = p(&dir);
    let commands: [&[&str]; 7] = [
        &["db", "put", d, "k", "v", "--policy"],
        &["db", "delete", d, "k", "--policy"],
        &["db", "flush", d, "--policy"],
        &["db", "compact", d, "--policy"],
        &["db", "info", d, "--policy"],
        &["bench", "engine", "--policy"],
        &["bench", "--policies"],
    ];
    for cmd in commands {
        for (bad, names_it) in [("fuse9", "unknown filter 'fuse9'"), ("monkey:0", "got '0'")] {
            let args: Vec<&str> = cmd.iter().copied().chain([bad]).collect();
            let (kind, message) = json_failure(&args);
            assert_eq!(kind, "usage", "{args:?}: {message}");
            assert!(
                message.contains(cmd[cmd.len() - 1]) && message.contains(names_it),
                "{args:?}: {message}"
            );
            // The kinds and the grammar, each listed once.
            assert_eq!(message.matches("blocked-bloom:B").count(), 1, "{args:?}: {message}");
            assert_eq!(message.matches("monkey:B").count(), 1, "{args:?}: {message}");
        }
    }
    assert!(!dir.exists(), "a refused policy created the database");
}

#[test]
fn read_only_commands_refuse_a_policy_they_would_not_store() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let d = p(&dir);
    assert_eq!(siftdb(&["db", "put", d, "a", "1"]).status.code(), Some(0));
    for cmd in [&["db", "get", d, "a"][..], &["db", "scan", d]] {
        let args: Vec<&str> = cmd.iter().copied().chain(["--policy", "fuse16"]).collect();
        let out = siftdb(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stdout(&out));
        assert!(stderr(&out).contains("unexpected argument '--policy'"), "{args:?}: {}", stderr(&out));
        let help = stdout(&siftdb(&[cmd[0], cmd[1], "--help"]));
        assert!(!help.contains("--policy"), "{help}");
    }
}

/// A table of 200 keys in 256-byte blocks.
fn table(dir: &Path) -> PathBuf {
    let path = dir.join("t.sst");
    let opts = TableOptions { block_bytes: 256, filter: FilterKind::BinaryFuse8, ..TableOptions::default() };
    let mut b = TableBuilder::create(&path, opts).unwrap();
    for i in 0..200u32 {
        b.add(format!("key{i:05}").as_bytes(), u64::from(i) + 1, ValueKind::Value, b"value").unwrap();
    }
    b.finish().unwrap();
    path
}

#[test]
fn sst_verify_exits_1_for_damage_wherever_it_is_found() {
    let tmp = tempfile::tempdir().unwrap();
    let good = std::fs::read(table(tmp.path())).unwrap();
    let path = tmp.path().join("damaged.sst");
    // A byte of the footer's index handle, of the first data block, and a
    // table cut short: each is damage found in a file that exists.
    let footer_at = good.len() - 48 + 1;
    let mut cut = good.clone();
    cut.truncate(good.len() - 20);
    for (what, bytes) in
        [("footer", flipped(&good, footer_at)), ("data block", flipped(&good, 10)), ("cut", cut)]
    {
        std::fs::write(&path, &bytes).unwrap();
        let (code, v) = run_json(&["sst", "verify", p(&path), "--json"]);
        assert_eq!(
            (code, v["ok"].as_bool(), v["problems"].as_u64()),
            (1, Some(false), Some(1)),
            "{what}: {v}"
        );
        let out = siftdb(&["sst", "verify", p(&path)]);
        assert_eq!(out.status.code(), Some(1), "{what}: {}", stderr(&out));
        assert!(stdout(&out).contains(p(&path)), "{what}: {}", stdout(&out));
    }
    // What cannot be opened at all is still exit 2.
    let missing = tmp.path().join("missing.sst");
    assert_eq!(siftdb(&["sst", "verify", p(&missing)]).status.code(), Some(2));
}

fn flipped(bytes: &[u8], at: usize) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[at] ^= 0x20;
    b
}

#[test]
fn a_locked_database_is_named_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = Db::open(&dir, Options::default()).unwrap();
    let out = siftdb(&["db", "put", p(&dir), "k", "v"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("locked"), "{err}");
    assert_eq!(err.matches(p(&dir)).count(), 1, "{err}");
    db.close().unwrap();
}

#[test]
fn counts_of_one_are_singular() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let d = p(&dir);
    assert_eq!(siftdb(&["db", "put", d, "a", "1"]).status.code(), Some(0));
    let text = stdout(&siftdb(&["db", "flush", d]));
    assert!(text.contains("level 0: 1 table, 1 entry,"), "{text}");
    let t = table(tmp.path());
    let out = siftdb(&["sst", "scan", p(&t), "--limit", "1"]);
    assert!(stderr(&out).contains("limit of 1 entry reached"), "{}", stderr(&out));
    let out = siftdb(&["db", "scan", d, "--limit", "1"]);
    assert!(stdout(&out).contains("a = 1"), "{}", stdout(&out));
}

#[test]
fn flush_counts_entries_where_info_counts_keys() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let d = p(&dir);
    // Four entries (two versions of `a`, and a tombstone) over three keys:
    // a flush keeps `a`'s older version only while a snapshot may read it.
    let db = siftdb::Db::open(&dir, siftdb::Options::default()).unwrap();
    db.put(b"a", b"1").unwrap();
    let snap = db.snapshot();
    db.put(b"a", b"2").unwrap();
    db.put(b"b", b"1").unwrap();
    db.delete(b"c").unwrap();
    db.flush().unwrap();
    drop(snap);
    db.close().unwrap();
    // A flush with nothing to write reports the level as it is.
    let text = stdout(&siftdb(&["db", "flush", d]));
    assert!(text.contains("level 0: 1 table, 4 entries,") && !text.contains("keys"), "{text}");
    let (code, flush) = run_json(&["db", "flush", d, "--json"]);
    assert_eq!(code, 0, "{flush}");
    let entries = flush["levels"][0]["entries"].as_u64();
    let (_, info) = run_json(&["db", "info", d, "--json"]);
    let keys = info["levels"][0]["keys"].as_u64();
    assert_eq!((entries, keys), (Some(4), Some(3)), "{flush} {info}");
    assert!(flush["levels"][0].get("keys").is_none(), "{flush}");
}

#[test]
fn sst_info_names_each_count_once() {
    let tmp = tempfile::tempdir().unwrap();
    let text = stdout(&siftdb(&["sst", "info", p(&table(tmp.path()))]));
    // Two lines said `keys`: the key range, and the keys the filter holds.
    let label = |l: &str| l.split("  ").find(|s| !s.is_empty()).unwrap_or_default().trim().to_string();
    assert!(text.lines().all(|l| label(l) != "keys"), "a line is labelled just 'keys':\n{text}");
    assert!(text.contains("key range    key00000 .. key00199"), "{text}");
    for name in ["keys added", "keys encoded"] {
        assert!(text.lines().any(|l| label(l) == name && l.trim_end().ends_with(" 200")), "{name}: {text}");
    }
}

#[test]
fn rocksdb_names_lead_to_the_right_command() {
    let tmp = tempfile::tempdir().unwrap();
    let t = table(tmp.path());
    let dump = siftdb(&["sst", "dump", p(&t), "--limit", "3"]);
    let scan = siftdb(&["sst", "scan", p(&t), "--limit", "3"]);
    assert_eq!(dump.status.code(), Some(0), "{}", stderr(&dump));
    assert_eq!(stdout(&dump), stdout(&scan));
    let dir = tmp.path().join("db");
    let d = p(&dir);
    assert_eq!(siftdb(&["db", "put", d, "a", "1"]).status.code(), Some(0));
    let (code, stats) = run_json(&["db", "stats", d, "--json"]);
    assert_eq!(code, 0, "{stats}");
    assert_eq!(stats["last_seq"], run_json(&["db", "info", d, "--json"]).1["last_seq"]);
    // A typo gets a hint, and the help names the other spellings.
    let out = siftdb(&["sst", "scna", p(&t)]);
    assert!(stderr(&out).contains("similar subcommand exists: 'scan'"), "{}", stderr(&out));
    assert!(stdout(&siftdb(&["sst", "--help"])).contains("dump"));
    assert!(stdout(&siftdb(&["db", "--help"])).contains("stats"));
}
