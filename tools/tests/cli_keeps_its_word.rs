//! Issue 57, step 3: the CLI keeps its word. Each test pins something a
//! new user was told by `--help` or an error message that the command did
//! not do.

mod common;

use std::process::Output;

use std::path::{Path, PathBuf};

use common::{p, run_json, siftdb};
use serde_json::Value;
use siftdb::FilterKind;
use siftdb::ValueKind;
use siftdb::table::{TableBuilder, TableOptions};

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
