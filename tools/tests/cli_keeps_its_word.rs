//! Issue 57, step 3: the CLI keeps its word. Each test pins something a
//! new user was told by `--help` or an error message that the command did
//! not do.

mod common;

use std::process::Output;

use common::{p, siftdb};
use serde_json::Value;

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
