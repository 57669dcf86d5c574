//! `siftdb bench ingest` (issue 64): both paths load the same keys to a
//! settled store, are checked, and are reported side by side.

use std::process::Command;

#[test]
fn both_paths_load_every_key_and_are_reported_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_siftdb"))
        .args(["bench", "ingest", "--keys", "3000", "--tables", "3", "--rounds", "2", "--json"])
        .args(["--dir", dir.path().join("b").to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["keys"].as_u64(), v["tables"].as_u64(), v["rounds"].as_u64()),
        (Some(3000), Some(3), Some(2))
    );
    for path in ["fillrandom", "ingest"] {
        let secs = v[path]["seconds"].as_f64().unwrap();
        let rate = v[path]["keys_per_second"].as_f64().unwrap();
        assert!(secs > 0.0 && (rate * secs - 3000.0).abs() < 1.0, "{path}: {v}");
    }
    let ingest = &v["ingest"];
    let parts = ingest["build_seconds"].as_f64().unwrap() + ingest["install_seconds"].as_f64().unwrap();
    assert!(parts <= ingest["seconds"].as_f64().unwrap() * 1.5, "{v}");
    assert_eq!(v["round_seconds"].as_array().unwrap().len(), 2);
    // The rounds' stores are removed; the directory is left empty.
    assert_eq!(std::fs::read_dir(dir.path().join("b")).unwrap().count(), 0);
}

#[test]
fn a_directory_that_holds_anything_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("mine"), "x").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_siftdb"))
        .args(["bench", "ingest", "--keys", "1000", "--dir", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not empty"));
}
