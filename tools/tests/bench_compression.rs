//! `siftdb bench engine --compression` and `--value-compressibility`: the
//! codec is applied and reported, and compressible values take less disk
//! under a codec than without one.

use std::process::Command;

use serde_json::Value;

fn bench(extra: &[&str]) -> Value {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_siftdb"))
        .current_dir(env!("CARGO_TARGET_TMPDIR"))
        .args(["bench", "engine", "--keys", "20000", "--rounds", "1", "--workloads", "fillrandom,readrandom"])
        .args(["--memtable-mib", "1", "--json", "--dir"])
        .arg(dir.path().join("stores"))
        .args(extra)
        .output()
        .unwrap();
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn disk_bytes(report: &Value) -> u64 {
    report["rounds"][0]["shape"]["disk_bytes"].as_u64().unwrap()
}

#[test]
fn a_codec_shrinks_compressible_values_on_disk_and_is_reported() {
    let none = bench(&["--compression", "none", "--value-compressibility", "0.75"]);
    assert_eq!(none["compression"], "none");
    assert_eq!(none["value_compressibility"], 0.75);
    for (flag, shown) in
        [("lz4", "lz4"), ("zstd", "zstd:3"), ("default", "lz4"), ("lz4+last:zstd:3", "lz4+last:zstd:3")]
    {
        let report = bench(&["--compression", flag, "--value-compressibility", "0.75"]);
        assert_eq!(report["compression"], shown);
        assert!(
            disk_bytes(&report) * 10 < disk_bytes(&none) * 7,
            "{flag}: {} vs {}",
            disk_bytes(&report),
            disk_bytes(&none)
        );
    }
    // Without a flag: the library's default policy, half-compressible values.
    let default = bench(&[]);
    assert_eq!(default["compression"], siftdb::CompressionPolicy::default().to_string());
    assert_eq!(default["value_compressibility"], 0.5);
}

#[test]
fn incompressible_values_gain_nothing_and_the_text_names_the_codec() {
    let raw = bench(&["--compression", "none", "--value-compressibility", "0"]);
    let lz4 = bench(&["--compression", "lz4", "--value-compressibility", "0"]);
    // Blocks that do not shrink by 1/8 are stored raw: about the same bytes.
    assert!(disk_bytes(&lz4) * 100 > disk_bytes(&raw) * 95, "{} vs {}", disk_bytes(&lz4), disk_bytes(&raw));

    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_siftdb"))
        .current_dir(env!("CARGO_TARGET_TMPDIR"))
        .args(["bench", "engine", "--keys", "20000", "--rounds", "1", "--workloads", "readrandom"])
        .args(["--compression", "per-level:none,lz4+last:zstd:1", "--dir"])
        .arg(dir.path().join("stores"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("compression per-level:none,lz4+last:zstd:1") && text.contains("0.5 compressible"),
        "{text}"
    );
}

#[test]
fn bad_codecs_and_fractions_are_usage_errors() {
    for args in [
        ["--compression", "gzip"],
        ["--compression", "zstd:99"],
        ["--value-compressibility", "1.5"],
        ["--value-compressibility", "x"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_siftdb"))
            .current_dir(env!("CARGO_TARGET_TMPDIR"))
            .args(["bench", "engine", "--keys", "20000"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(args[0]), "{args:?}: {err}");
    }
}
