//! Every numeric flag of every command rejects NaN, infinities, zero where
//! zero means nothing, and values past its documented maximum: exit 2 and
//! one line naming the flag and its range, never an abort (issue 26).

mod common;

use common::siftdb;

/// Runs `args` and checks the rejection of `value` for `flag`.
fn rejected(args: &[&str], flag: &str, range: &str) {
    let out = siftdb(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(flag) && err.contains(range), "{args:?} should name {flag} and {range}: {err}");
}

#[test]
fn bits_per_key_of_the_filter_bench() {
    // The finding: inf and 1e15 aborted on a huge allocation (exit
    // 134); 0 and NaN were accepted.
    for v in ["inf", "-inf", "1e15", "0", "NaN", "0.5", "64.5", "-3", "ten"] {
        rejected(
            &["bench", "filters", "--keys", "1000", "--bits-per-key", v],
            "--bits-per-key",
            "from 1 to 64",
        );
    }
}

#[test]
fn counts_of_every_command() {
    let cases: [(&[&str], &str, &str); 12] = [
        (&["bench", "filters", "--keys", "0"], "--keys", "from 1 to 100,000,000"),
        (&["bench", "filters", "--keys", "100000001"], "--keys", "from 1 to 100,000,000"),
        (&["bench", "filters", "--probes", "0"], "--probes", "from 1 to 100,000,000"),
        (&["bench", "filters", "--probes", "1e20"], "--probes", "from 1 to 100,000,000"),
        (&["bench", "--keys", "999"], "--keys", "from 1,000 to 1,000,000,000"),
        (&["bench", "--keys", "1000000000000"], "--keys", "from 1,000 to 1,000,000,000"),
        (&["bench", "--lookups", "0"], "--lookups", "from 1 to 100,000,000"),
        (&["bench", "--threads", "0"], "--threads", "from 1 to 256"),
        (&["bench", "--threads", "100000"], "--threads", "from 1 to 256"),
        (&["bench", "--value-bytes", "1000000"], "--value-bytes", "from 0 to 65,536"),
        (&["sst", "fpr", "x.sst", "--probes", "0"], "--probes", "from 1 to 100,000,000"),
        (&["db", "info", "d", "--probes", "NaN"], "--probes", "from 0 to 100,000,000"),
    ];
    for (args, flag, range) in cases {
        rejected(args, flag, range);
    }
    for v in ["NaN", "inf", "-0.1", "1.5"] {
        rejected(&["bench", "--hit-ratio", v], "--hit-ratio", "from 0 to 1");
    }
    for cmd in [&["sst", "scan", "x.sst"][..], &["db", "scan", "d"][..]] {
        let args: Vec<&str> = cmd.iter().copied().chain(["--limit", "0"]).collect();
        rejected(&args, "--limit", "at least 1");
    }
}

/// Issue 30: with `--json`, a failure is a JSON document on stdout as well
/// as a line on stderr, with the same exit code.
#[test]
fn json_errors_are_json() {
    let missing = tempfile::tempdir().unwrap().path().join("nodir");
    let cases: [(Vec<String>, &str); 3] = [
        (vec!["db".into(), "info".into(), missing.display().to_string(), "--json".into()], "failed"),
        (vec!["bench".into(), "--keys".into(), "5".into(), "--json".into()], "usage"),
        (vec!["sst".into(), "info".into(), "--json".into(), "--no-such-flag".into()], "usage"),
    ];
    for (args, kind) in cases {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_siftdb")).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let v: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}"));
        assert_eq!(v["kind"], kind, "{args:?}: {v}");
        let message = v["error"].as_str().unwrap();
        assert!(!message.is_empty());
        assert!(String::from_utf8_lossy(&out.stderr).contains(message), "{args:?}");
    }
}
