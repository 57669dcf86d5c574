//! Files from a newer siftdb, and the smaller findings of issue 26: the
//! CLI says "written by a newer siftdb" (naming the path once), an unknown
//! filter kind is not called a false positive, a live log is not called
//! flushed, and a failed bench leaves earlier CSV and SVG files alone.

mod common;
#[path = "../../tests/common/format_patch.rs"]
mod format_patch;

use std::path::{Path, PathBuf};

use common::{p, run_json, siftdb};
use format_patch::{set_db_version, set_table_version};

/// A database of one flushed table (key `a`) made by the CLI; its table path.
fn db_with_table(dir: &Path) -> PathBuf {
    assert_eq!(siftdb(&["db", "put", p(dir), "a", "1"]).status.code(), Some(0));
    // A filter on a one-key table: `monkey:10`, the default, spends real
    // bits and leaves a table this small unfiltered.
    assert_eq!(siftdb(&["db", "flush", p(dir), "--policy", "blocked-bloom:10"]).status.code(), Some(0));
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "sst"))
        .unwrap()
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

#[test]
fn a_newer_table_is_named_once_as_written_by_a_newer_siftdb() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let table = db_with_table(&dir);
    // Version 2 is now a table with range tombstones: 3 is the newer one.
    let newer = siftdb::table::FORMAT_VERSION + 1;
    set_table_version(&table, newer);
    let t = p(&table);

    let out = siftdb(&["db", "verify", p(&dir)]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let line = text.lines().find(|l| l.contains("newer")).unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains(&format!("written by a newer siftdb (table format version {newer}")), "{line}");
    assert_eq!(line.matches(t).count(), 1, "the path is printed more than once: {line}");
    let (_, v) = run_json(&["db", "verify", p(&dir), "--json"]);
    let what = v["problems"][0]["what"].as_str().unwrap();
    assert!(!what.contains(t) && what.contains("written by a newer siftdb"), "{v}");

    for args in [&["sst", "info", t][..], &["sst", "verify", t][..], &["db", "info", p(&dir)][..]] {
        let out = siftdb(args);
        let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(all.contains("written by a newer siftdb"), "{args:?}: {all}");
        assert!(all.lines().all(|l| l.matches(t).count() <= 1), "{args:?} repeats the path: {all}");
        assert_ne!(out.status.code(), Some(0), "{args:?}");
    }
}

#[test]
fn a_newer_database_is_refused_with_its_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    db_with_table(&dir);
    set_db_version(&dir, u8::try_from(siftdb::manifest::DB_FORMAT_VERSION + 1).unwrap());

    for args in
        [&["db", "info", p(&dir)][..], &["db", "verify", p(&dir)][..], &["db", "get", p(&dir), "a"][..]]
    {
        let out = siftdb(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        let want = format!(
            "written by a newer siftdb (database format version {}",
            siftdb::manifest::DB_FORMAT_VERSION + 1
        );
        assert!(err.contains(&want), "{args:?}: {err}");
    }
}

/// `tests/fixtures/newer_kind_db` (tables of a kind this build does not
/// know, behind database format 127): every command that reads the
/// database says "newer", never "corrupt", and changes nothing.
#[test]
fn a_kind_from_a_newer_build_is_refused_as_newer() {
    let (_tmp, dir) = format_patch::fixture_copy("newer_kind_db");
    for args in [&["db", "info", p(&dir)][..], &["db", "verify", p(&dir)][..]] {
        let out = siftdb(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("written by a newer siftdb (database format version 127"), "{args:?}: {err}");
        assert!(!err.contains("corrupt"), "{args:?}: {err}");
        let (code, v) = run_json(&[args, &["--json"]].concat());
        assert_eq!(code, 2, "{args:?}: {v}");
        assert!(v.to_string().contains("written by a newer siftdb"), "{args:?}: {v}");
    }
}

#[test]
fn an_unknown_filter_kind_is_not_a_false_positive() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let table = db_with_table(&dir);
    // Filter block tag 99, block crc recomputed.
    let mut b = std::fs::read(&table).unwrap();
    let f = b.len() - 56;
    let at = usize::try_from(u64::from_le_bytes(b[f + 12..f + 20].try_into().unwrap())).unwrap();
    let size = u32_at(&b, f + 20) as usize;
    b[at] = 99;
    let crc = crc32fast::hash(&b[at..=at + size]);
    b[at + size + 1..at + size + 5].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(&table, b).unwrap();

    let (code, v) = run_json(&["sst", "probe", p(&table), "zzz", "--json"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!((v["filter"].as_str(), v["false_positive"].as_bool()), (Some("unknown"), Some(false)), "{v}");
    let text = String::from_utf8(siftdb(&["sst", "probe", p(&table), "zzz"]).stdout).unwrap();
    assert!(text.contains("unknown filter kind 99") && text.contains("reads as may-contain"), "{text}");
    assert!(!text.contains("false positive"), "{text}");
}

#[test]
fn a_live_log_is_not_called_flushed() {
    // The finding: put, compact, verify said the live WAL was "already in
    // the tables" with no table at all.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("r1");
    assert_eq!(siftdb(&["db", "put", p(&dir), "k", "v"]).status.code(), Some(0));
    assert_eq!(siftdb(&["db", "compact", p(&dir)]).status.code(), Some(0));
    let (code, v) = run_json(&["db", "verify", p(&dir), "--json"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["notes"], serde_json::json!([]), "{v}");
}

#[test]
fn a_failed_bench_leaves_earlier_outputs_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let (csv, svg) = (tmp.path().join("old.csv"), tmp.path().join("old.svg"));
    std::fs::write(&csv, "earlier results\n").unwrap();
    std::fs::write(&svg, "<svg/>").unwrap();
    let dbs = tmp.path().join("dbs");
    std::fs::create_dir_all(dbs.join("none")).unwrap();
    std::fs::write(dbs.join("none/keep"), "x").unwrap();
    let bench = |extra: &[&str]| {
        let base =
            ["bench", "--keys", "1000", "--lookups", "10", "--policies", "none", "--workloads", "absent"];
        let outputs = ["--csv", p(&csv), "--svg", p(&svg)];
        siftdb(&[&base[..], &outputs[..], extra].concat())
    };
    // Refused (a non-empty policy directory without --force): exit 2.
    let out = bench(&["--dir", p(&dbs)]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), "earlier results\n");
    assert_eq!(std::fs::read_to_string(&svg).unwrap(), "<svg/>");
    // An unwritable output is still found before the run, and written nothing.
    let out = siftdb(&["bench", "--keys", "1000", "--csv", "/nonexistent-dir/x.csv"]);
    assert_eq!(out.status.code(), Some(2));
    // A run that succeeds replaces them, and leaves no temporary file.
    let out = bench(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(std::fs::read_to_string(&csv).unwrap().starts_with("policy,"));
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    let names: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.contains(".tmp")), "{names:?}");
}

/// Issue 59: a stored policy this build cannot parse. `db verify` and
/// `db info` agree with the library: damage of the manifest (exit 1 for the
/// check, 2 for the report that cannot be made), named once; behind a
/// newer format, "written by a newer siftdb" (exit 2).
#[test]
fn an_unparsable_stored_policy_is_reported_as_the_library_reports_it() {
    use siftdb::{Db, FilterKind, FilterPolicy, Options};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let with = |k| Options { filter_policy: Some(FilterPolicy::uniform(k)), ..Options::default() };
    let db = Db::open(&dir, with(FilterKind::BlockedBloom { bits_per_key: 10.0 })).unwrap();
    db.put(b"a", b"1").unwrap();
    db.flush().unwrap();
    db.close().unwrap();
    Db::open(&dir, with(FilterKind::BinaryFuse8)).unwrap().close().unwrap();
    format_patch::set_kind_name(&dir, "fuse8", "ribbon9:7");
    let library = Db::open(&dir, Options::default()).unwrap_err().to_string();

    let manifest = library.split(": corruption").next().unwrap().to_owned();
    assert!(manifest.contains("MANIFEST-") && library.contains("stored filter policy:"), "{library}");

    let (code, doc) = run_json(&["db", "verify", p(&dir), "--json"]);
    assert_eq!(code, 1, "{doc}");
    let problem = &doc["problems"][0];
    assert_eq!((problem["path"].as_str(), problem["offset"].as_u64()), (Some(&*manifest), Some(0)), "{doc}");
    assert!(library.ends_with(problem["what"].as_str().unwrap()), "{doc}\n{library}");
    let out = siftdb(&["db", "info", p(&dir), "--probes", "0"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!((out.status.code(), err.trim()), (Some(2), &*format!("siftdb: {library}")));

    // Behind a newer format: newer, not damaged, for both.
    set_db_version(&dir, u8::try_from(siftdb::manifest::DB_FORMAT_VERSION + 1).unwrap());
    for args in [&["db", "info", p(&dir)][..], &["db", "verify", p(&dir)][..]] {
        let out = siftdb(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("written by a newer siftdb") && !err.contains("policy"), "{args:?}: {err}");
    }
}
