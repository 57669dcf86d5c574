//! `siftdb db info|verify` run as a process on databases built file by file
//! in a temp dir (the same files the engine writes), damaged ones included.

mod common;

use std::path::{Path, PathBuf};

use common::{files_with_extension, p, run_json, siftdb, snapshot};
use serde_json::Value;
use siftdb::FilterKind;
use siftdb::ValueKind;
use siftdb::WriteBatch;
use siftdb::fs::{FileSystem, StdFs};
use siftdb::manifest::{
    ManifestWriter, TableRecord, VersionEdit, log_file_name, manifest_file_name, set_current, table_file_name,
};
use siftdb::table::{TableBuilder, TableOptions};

fn table(dir: &Path, number: u64, level: u32, keys: std::ops::Range<u32>, filter: FilterKind) -> TableRecord {
    let opts =
        TableOptions { filter, level, block_bytes: 512, file_number: number, ..TableOptions::default() };
    let mut b = TableBuilder::create(dir.join(table_file_name(number)), opts).unwrap();
    for i in keys.clone() {
        b.add(format!("k{i:05}").as_bytes(), u64::from(i) + 1, ValueKind::Value, b"v").unwrap();
    }
    b.finish().unwrap()
}

/// Level 0: table 5 (blocked Bloom); level 1: tables 3 and 4 (fuse8);
/// manifest 2; live log 6 holding seqs 1001..=1003.
fn make_db(dir: &Path) -> PathBuf {
    let t3 = table(dir, 3, 1, 0..400, FilterKind::BinaryFuse8);
    let t4 = table(dir, 4, 1, 400..800, FilterKind::BinaryFuse8);
    let t5 = table(dir, 5, 0, 800..1000, FilterKind::BlockedBloom { bits_per_key: 10.0 });
    let edit = VersionEdit {
        added: vec![(1, t3), (1, t4), (0, t5)],
        next_file_number: Some(7),
        last_seq: Some(1000),
        log_number: Some(6),
        hash_salt: Some(1),
        ..VersionEdit::default()
    };
    ManifestWriter::create(&StdFs, dir, 2, &edit).unwrap();
    set_current(&StdFs, dir, 2).unwrap();
    let mut w = siftdb::wal::writer(StdFs.create(&dir.join(log_file_name(6))).unwrap());
    for seq in 1001..=1003u64 {
        let mut b = WriteBatch::new();
        b.put(format!("w{seq}"), "x");
        w.append(&b.encode(seq)).unwrap();
    }
    w.sync().unwrap();
    dir.to_path_buf()
}

#[test]
fn info_shows_levels_filters_wal_and_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = make_db(tmp.path());
    let before = snapshot(&dir);
    let (code, v) = run_json(&["db", "info", p(&dir), "--json"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["tables"], 3);
    assert_eq!(v["next_file_number"], 7);
    assert_eq!(v["manifest_last_seq"], 1000);
    assert_eq!(v["last_seq"], 1003);
    assert_eq!(v["log_number"], 6);
    assert_eq!(v["manifest"]["number"], 2);
    assert_eq!(v["manifest"]["end"], "clean");
    let l0 = &v["levels"][0];
    let l1 = &v["levels"][1];
    assert_eq!((l0["tables"].as_u64(), l0["keys"].as_u64()), (Some(1), Some(200)));
    assert_eq!((l1["tables"].as_u64(), l1["keys"].as_u64()), (Some(2), Some(800)));
    assert_eq!(l1["filter_kinds"]["fuse8"], 2);
    assert_eq!(l0["filter_kinds"]["blocked-bloom:10"], 1);
    // The default policy, monkey:10, plans a kind that builds fast on the
    // flush level (never Ribbon) and Ribbon below, at the rate its bits give.
    let t0 = l0["target_filter_kind"].as_str().unwrap();
    assert!(!t0.starts_with("ribbon") && t0 != "none", "{t0}");
    let k1: FilterKind = l1["target_filter_kind"].as_str().unwrap().parse().unwrap();
    assert!(matches!(k1, FilterKind::Ribbon { .. }), "{k1}");
    assert!((l1["target_fpr"].as_f64().unwrap() - k1.theoretical_fpr()).abs() < 1e-9);
    let mem: u64 = [l0, l1].iter().map(|l| l["filter_bytes"].as_u64().unwrap()).sum();
    assert_eq!(v["filter_memory_bytes"], mem);
    let bpk = l1["bits_per_key"].as_f64().unwrap();
    assert!(bpk > 8.0 && bpk < 14.0, "{bpk}");
    // One absent lookup probes the L0 table and one L1 table.
    let expected = v["expected_false_positive_reads"].as_f64().unwrap();
    let want = l0["mean_theoretical_fpr"].as_f64().unwrap() + l1["mean_theoretical_fpr"].as_f64().unwrap();
    assert!((expected - want).abs() < 1e-12);
    let wal = &v["wal"][0];
    assert_eq!(
        (wal["records"].as_u64(), wal["last_seq"].as_u64(), wal["live"].as_bool()),
        (Some(3), Some(1003), Some(true))
    );
    assert_eq!(wal["end"], "clean");
    assert_eq!(v["levels"][1]["table_list"][0]["smallest_key"], "k00000");
    // The default 10 000 absent-key probes reach both levels' filters, and
    // the observed rates are false positives over those probes.
    assert_eq!(v["probes"], 10_000);
    for l in [l0, l1] {
        let probes = l["observed_probes"].as_u64().unwrap();
        assert!(probes >= 1000, "{l}");
        let fpr = l["observed_fpr"].as_f64().unwrap();
        let theory = l["mean_theoretical_fpr"].as_f64().unwrap();
        assert!(fpr < 4.0 * theory + 0.005, "observed {fpr} against theory {theory}");
    }
    let (_, skipped) = run_json(&["db", "info", p(&dir), "--probes", "0", "--json"]);
    assert_eq!(skipped["probes"], 0);
    assert!(
        skipped["levels"][1]["observed_fpr"].is_null() && skipped["levels"][1]["observed_probes"].is_null()
    );
    let text = String::from_utf8(siftdb(&["db", "info", p(&dir), "--tables"]).stdout).unwrap();
    assert!(
        text.contains("fuse8") && text.contains("000006.log") && text.contains("k00400 .. k00799"),
        "{text}"
    );
    let (_, m) = run_json(&["db", "info", p(&dir), "--policy", "monkey:10", "--json"]);
    assert!(m["levels"][0]["target_fpr"].as_f64().unwrap() < 1.0);
    assert_eq!(siftdb(&["db", "info", p(&dir), "--policy", "nonsense"]).status.code(), Some(2));
    assert_eq!(snapshot(&dir), before, "info must not modify the database");
    // Another process holding the database: the probes run on a secondary
    // (issue 63), which says so.
    let held = siftdb::Db::open(&dir, siftdb::Options::default()).unwrap();
    let out = siftdb(&["db", "info", p(&dir), "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((out.status.code(), v["probes"].as_u64()), (Some(0), Some(10_000)), "{v}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("reading it as a secondary"), "{out:?}");
    drop(held);
}

#[test]
fn verify_passes_a_sound_database_and_finds_each_kind_of_damage() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = make_db(tmp.path());
    let before = snapshot(&dir);
    let (code, v) = run_json(&["db", "verify", p(&dir), "--json"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!((v["tables_checked"].as_u64(), v["logs_checked"].as_u64()), (Some(3), Some(1)));
    assert_eq!(snapshot(&dir), before, "verify must not modify the database");

    // A flipped byte in a table's first data block.
    let t4 = dir.join(table_file_name(4));
    let mut bytes = std::fs::read(&t4).unwrap();
    bytes[20] ^= 0x08;
    std::fs::write(&t4, &bytes).unwrap();
    let (code, v) = run_json(&["db", "verify", p(&dir), "--json"]);
    assert_eq!(code, 1);
    let problems = v["problems"].as_array().unwrap();
    assert!(problems.iter().any(|x| x["path"] == p(&t4) && x["offset"] == 0), "{problems:?}");
    // A get that lands on the damaged block reports it (exit 1), never "not found".
    let (code, v) = run_json(&["db", "get", p(&dir), "k00400", "--json"]);
    assert_eq!(code, 1, "{v}");
    assert!(v["found"].is_null() && v["value"].is_null(), "{v}");
    assert_eq!(v["error"]["offset"], 0, "{v}");
    let out = siftdb(&["db", "get", p(&dir), "k00400"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty() && String::from_utf8_lossy(&out.stderr).contains("000004.sst"), "{out:?}");
    // db info's probes reach the damaged block through a filter false
    // positive: a problem found (exit 1, one document), not an open error.
    let (code, v) = run_json(&["db", "info", p(&dir), "--json"]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["ok"], false);
    assert!(
        v["problems"].as_array().unwrap().iter().any(|x| x.as_str().unwrap().contains("000004.sst")),
        "{v}"
    );
    // A key in an undamaged table still reads.
    let (code, v) = run_json(&["db", "get", p(&dir), "k00001", "--json"]);
    assert_eq!((code, v["found"].as_bool()), (0, Some(true)), "{v}");
    bytes[20] ^= 0x08;
    std::fs::write(&t4, &bytes).unwrap();

    // A damaged WAL record with a valid one after it.
    let log = dir.join(log_file_name(6));
    let good_log = std::fs::read(&log).unwrap();
    let mut bad = good_log.clone();
    bad[10] ^= 0xff;
    std::fs::write(&log, &bad).unwrap();
    let (code, v) = run_json(&["db", "verify", p(&dir), "--json"]);
    assert_eq!(code, 1);
    assert!(v["problems"][0]["what"].as_str().unwrap().contains("WAL"), "{v}");
    // A torn tail is only a note.
    let mut torn = good_log.clone();
    torn.extend_from_slice(&[1, 2, 3]);
    std::fs::write(&log, &torn).unwrap();
    let (code, v) = run_json(&["db", "verify", p(&dir), "--json"]);
    assert_eq!(code, 0, "{v}");
    assert!(v["notes"][0].as_str().unwrap().contains("torn"));
    std::fs::write(&log, &good_log).unwrap();

    // A table the manifest names is missing.
    let t3 = dir.join(table_file_name(3));
    let t3_bytes = std::fs::read(&t3).unwrap();
    std::fs::remove_file(&t3).unwrap();
    let out = siftdb(&["db", "verify", p(&dir)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8(out.stdout).unwrap().contains("missing"));
    std::fs::write(&t3, &t3_bytes).unwrap();

    // A damaged manifest.
    let m = dir.join(manifest_file_name(2));
    let mut mb = std::fs::read(&m).unwrap();
    let last = mb.len() / 2;
    mb[last] ^= 0x55;
    std::fs::write(&m, &mb).unwrap();
    let (code, v) = run_json(&["db", "verify", p(&dir), "--json"]);
    assert_eq!((code, v["manifest_ok"].as_bool()), (1, Some(false)), "{v}");
}

#[test]
fn non_databases_exit_2_naming_the_path() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let file = tmp.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    let missing = tmp.path().join("missing");
    for path in [&empty, &file, &missing] {
        for cmd in ["info", "verify"] {
            let out = siftdb(&["db", cmd, p(path)]);
            assert_eq!(out.status.code(), Some(2), "{cmd} {path:?}");
            let err = String::from_utf8(out.stderr).unwrap();
            assert_eq!(err.lines().count(), 1);
            assert!(err.contains(p(path)), "{err}");
        }
    }
    assert!(std::fs::read_dir(&empty).unwrap().next().is_none(), "nothing created");
    assert!(!missing.exists());
}

#[test]
fn every_db_command_has_help() {
    for cmd in ["info", "verify"] {
        let out = siftdb(&["db", cmd, "--help"]);
        assert_eq!(out.status.code(), Some(0), "{cmd}");
    }
}

#[test]
fn verify_flags_tables_newer_than_the_manifest_says() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let t3 = table(dir, 3, 1, 0..400, FilterKind::BinaryFuse8);
    let edit = VersionEdit {
        added: vec![(1, t3)],
        next_file_number: Some(5),
        last_seq: Some(100),
        log_number: Some(4),
        hash_salt: Some(1),
        ..VersionEdit::default()
    };
    ManifestWriter::create(&StdFs, dir, 2, &edit).unwrap();
    set_current(&StdFs, dir, 2).unwrap();
    let (code, v) = run_json(&["db", "verify", p(dir), "--json"]);
    assert_eq!(code, 1);
    assert!(v["problems"][0]["what"].as_str().unwrap().contains("beyond the manifest's last seq 100"), "{v}");
}

fn table_doc(v: &Value, number: u64) -> Value {
    let levels = v["levels"].as_array().unwrap();
    let mut tables = levels.iter().flat_map(|l| l["table_list"].as_array().unwrap().iter());
    tables.find(|t| t["number"] == number).unwrap().clone()
}

#[test]
fn info_reports_a_missing_table_and_leaves_it_out_of_filter_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = make_db(tmp.path());
    let (code, v) = run_json(&["db", "info", p(&dir), "--json"]);
    assert_eq!((code, v["ok"].as_bool()), (0, Some(true)), "{v}");
    assert_eq!(v["problems"].as_array().unwrap().len(), 0);
    let full = v["filter_memory_bytes"].as_u64().unwrap();
    let t3_filter = table_doc(&v, 3)["filter_bytes"].as_u64().unwrap();
    assert!(t3_filter > 0);

    let t3 = dir.join(table_file_name(3));
    std::fs::remove_file(&t3).unwrap();
    let before = snapshot(&dir);
    let (code, v) = run_json(&["db", "info", p(&dir), "--json"]);
    assert_eq!((code, v["ok"].as_bool()), (1, Some(false)), "{v}");
    let problems = v["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].as_str().unwrap().contains("table 3 (level 1) named by the manifest is missing"));
    let t = table_doc(&v, 3);
    assert_eq!((t["missing"].as_bool(), t["filter_memory_bytes"].as_u64()), (Some(true), Some(0)));
    assert_eq!(v["filter_memory_bytes"].as_u64(), Some(full - t3_filter));
    assert_eq!(
        v["levels"][1]["filter_memory_bytes"].as_u64(),
        Some(table_doc(&v, 4)["filter_bytes"].as_u64().unwrap())
    );
    let out = siftdb(&["db", "info", p(&dir), "--tables"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("PROBLEM: table 3 (level 1) named by the manifest is missing"), "{text}");
    assert!(text.contains("(TABLE MISSING)"), "{text}");
    assert_eq!(snapshot(&dir), before, "info must not modify the database");
}

#[test]
fn info_reports_a_dropped_filter_and_leaves_it_out_of_filter_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = make_db(tmp.path());
    let (_, v) = run_json(&["db", "info", p(&dir), "--json"]);
    let full = v["filter_memory_bytes"].as_u64().unwrap();
    let t5 = dir.join(table_file_name(5));
    let (_, info) = run_json(&["sst", "info", p(&t5), "--json"]);
    let at = usize::try_from(info["footer"]["filter"]["offset"].as_u64().unwrap()).unwrap();
    let mut bytes = std::fs::read(&t5).unwrap();
    bytes[at + 30] ^= 0x02;
    std::fs::write(&t5, &bytes).unwrap();

    let (code, v) = run_json(&["db", "info", p(&dir), "--json"]);
    assert_eq!((code, v["ok"].as_bool()), (1, Some(false)), "{v}");
    let t = table_doc(&v, 5);
    assert_eq!((t["filter_status"].as_str(), t["filter_memory_bytes"].as_u64()), (Some("dropped"), Some(0)));
    assert!(t["dropped_reason"].as_str().unwrap().contains("checksum"), "{t}");
    assert_eq!(v["filter_memory_bytes"].as_u64(), Some(full - t["filter_bytes"].as_u64().unwrap()));
    let problem = v["problems"][0].as_str().unwrap();
    assert!(problem.contains("table 5 (level 0): filter dropped as corrupt"), "{problem}");
    // A dropped filter passes every key: the level's expected rate is 1.
    assert_eq!(v["levels"][0]["mean_theoretical_fpr"].as_f64(), Some(1.0));
    let out = siftdb(&["db", "info", p(&dir), "--tables"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("PROBLEM: table 5 (level 0): filter dropped as corrupt") && text.contains("(DROPPED)")
    );
}

#[test]
fn a_missing_directory_is_named_as_missing() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nodir");
    let file = tmp.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    // Every command that reads a database words it the same way (issue 30:
    // `db scan` said "no such database directory").
    let run = |cmd: &str, path: &str| {
        if cmd == "get" { siftdb(&["db", cmd, path, "k"]) } else { siftdb(&["db", cmd, path]) }
    };
    for cmd in ["info", "verify", "scan", "get"] {
        let out = run(cmd, p(&missing));
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.trim(), format!("siftdb: {}: no such directory", p(&missing)), "{cmd}");
        let out = run(cmd, p(&file));
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.trim(), format!("siftdb: {}: not a directory", p(&file)), "{cmd}");
    }
}

/// `db info` reports the write totals the manifest keeps over the
/// database's life, after the process that wrote them has closed it.
#[test]
fn info_shows_write_amplification_over_the_databases_life() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    // Uncompressed, every table is larger than the user bytes it holds, so
    // the figure is above 1 however the background jobs fall: with lz4 it
    // hung on how much the merges rewrote, and a run on a loaded machine
    // measured 0.91.
    let opts = || siftdb::Options {
        memtable_bytes: 8 << 10,
        compression: siftdb::CompressionPolicy::uniform(siftdb::Compression::None),
        ..siftdb::Options::default()
    };
    let db = siftdb::Db::open(&dir, opts()).unwrap();
    let mut user = 0u64;
    for i in 0..3000u32 {
        let key = format!("key{i:05}");
        db.put(key.as_bytes(), b"a value of some bytes").unwrap();
        user += (key.len() + 21) as u64;
    }
    db.flush().unwrap();
    db.compact().unwrap();
    let s = db.stats();
    db.close().unwrap();
    let (code, v) = run_json(&["db", "info", p(&dir), "--probes", "0", "--json"]);
    assert_eq!(code, 0, "{v}");
    let w = &v["writes"];
    assert_eq!(w["user_bytes"], user);
    assert_eq!(w["flush_bytes"], s.flush_bytes_written);
    assert_eq!(w["compaction_bytes"], s.compaction_bytes_written);
    let wa = w["write_amplification"].as_f64().unwrap();
    assert!((wa - s.write_amplification().unwrap()).abs() < 1e-9 && wa > 1.0, "{wa}");
    let text = String::from_utf8(siftdb(&["db", "info", p(&dir), "--probes", "0"]).stdout).unwrap();
    assert!(text.contains(&format!("write amplification {wa:.2}")), "{text}");

    // A manifest that never recorded totals says so instead of dividing by zero.
    let old = tmp.path().join("old");
    std::fs::create_dir(&old).unwrap();
    make_db(&old);
    let (_, v) = run_json(&["db", "info", p(&old), "--probes", "0", "--json"]);
    assert!(v["writes"]["write_amplification"].is_null(), "{v}");
    let text = String::from_utf8(siftdb(&["db", "info", p(&old), "--probes", "0"]).stdout).unwrap();
    assert!(text.contains("none flushed yet"), "{text}");
}

#[test]
fn info_shows_which_tables_hold_prefixes_and_plans_by_filter_entries() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let opts = |e| siftdb::Options {
        memtable_bytes: 8 << 10,
        prefix_extractor: e,
        auto_compaction: false,
        ..siftdb::Options::default()
    };
    let db = siftdb::Db::open(&dir, opts(None)).unwrap();
    for i in 0..500u32 {
        db.put(format!("g{:03}:{i}", i / 5), b"v").unwrap();
    }
    db.flush().unwrap();
    db.close().unwrap();
    let db = siftdb::Db::open(&dir, opts(Some(siftdb::PrefixExtractor::up_to(b':')))).unwrap();
    for i in 500..1000u32 {
        db.put(format!("g{:03}:{i}", i / 5), b"v").unwrap();
    }
    db.flush().unwrap();
    db.close().unwrap();
    let (code, v) = run_json(&["db", "info", p(&dir), "--probes", "0", "--json"]);
    assert_eq!(code, 0, "{v}");
    let l0 = &v["levels"][0];
    let with: u64 = l0["prefix_extractors"]["up-to:0x3a"].as_u64().unwrap();
    let without: u64 = l0["prefix_extractors"]["none"].as_u64().unwrap();
    assert!(with >= 1 && without >= 1, "{l0}");
    // The second half's 100 groups are filter entries beside its 500 keys
    // (a group split over two flushes counts in each table).
    assert_eq!(l0["keys"], 1000);
    let prefixes = l0["filter_keys"].as_u64().unwrap() - 1000;
    assert!((100..100 + with).contains(&prefixes), "{prefixes} prefixes in {with} tables");
    let text = String::from_utf8(siftdb(&["db", "info", p(&dir), "--probes", "0"]).stdout).unwrap();
    assert!(text.contains(&format!("prefixes up-to:0x3a in {with}")), "{text}");

    // With probes, absent prefixes are scanned under the tables' extractor:
    // the tables written with it are asked, and most skipped.
    let (code, v) = run_json(&["db", "info", p(&dir), "--probes", "2000", "--json"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["prefix_extractor"], "up-to:0x3a");
    let l0 = &v["levels"][0];
    let (probes, skipped) = (l0["prefix_probes"].as_u64().unwrap(), l0["prefix_skipped"].as_u64().unwrap());
    assert!(probes > 0 && skipped * 10 >= probes * 8, "{l0}");
    assert!(l0["prefix_false_positives"].as_u64().unwrap() <= probes - skipped, "{l0}");
    let text = String::from_utf8(siftdb(&["db", "info", p(&dir), "--probes", "2000"]).stdout).unwrap();
    assert!(text.contains("absent-prefix scans (extractor up-to:0x3a)"), "{text}");

    // Verification counts the prefixes in the filter and probes each one.
    let (code, v) = run_json(&["db", "verify", p(&dir), "--json"]);
    assert_eq!(code, 0, "{v}");
    // The newest table was written with the extractor.
    let table = files_with_extension(&dir, "sst").pop().unwrap();
    let (code, v) = run_json(&["sst", "verify", p(&table), "--json"]);
    assert_eq!(code, 0, "{v}");
    let probed: u64 =
        v["tables"].as_array().unwrap().iter().map(|t| t["prefixes_probed"].as_u64().unwrap()).sum();
    let want = siftdb::table::Table::open_path(&table).unwrap().properties().distinct_prefixes;
    assert!(want > 0);
    assert_eq!(probed, want);
}

/// `heap_bytes` per table, per level and in all: a filter read in place
/// from the mapping holds its descriptor only, a copied one its decoded
/// size (issue 66). Which kind is read in place is asked of the table.
#[test]
fn info_reports_the_heap_bytes_filters_and_indexes_hold() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let fuse = table(dir, 3, 1, 0..2000, FilterKind::BinaryFuse8);
    let ribbon = table(dir, 4, 1, 2000..4000, FilterKind::Ribbon { bits_per_key: 10.0 });
    let edit = VersionEdit {
        added: vec![(1, fuse), (1, ribbon)],
        next_file_number: Some(5),
        last_seq: Some(4000),
        log_number: Some(0),
        hash_salt: Some(1),
        ..VersionEdit::default()
    };
    ManifestWriter::create(&StdFs, dir, 2, &edit).unwrap();
    set_current(&StdFs, dir, 2).unwrap();
    let (code, v) = run_json(&["db", "info", p(dir), "--probes", "0", "--json"]);
    assert_eq!(code, 0, "{v}");
    let level = &v["levels"][1];
    let mut sum = 0;
    for t in level["table_list"].as_array().unwrap() {
        let opened = siftdb::table::Table::open_path(t["path"].as_str().unwrap()).unwrap();
        let heap = t["heap_bytes"]["filters"].as_u64().unwrap();
        let block = t["filter_bytes"].as_u64().unwrap();
        if opened.filter_in_place().is_some() {
            assert!(heap <= 256, "{}: {heap} heap bytes read in place", t["filter_kind"]);
        } else {
            assert!(heap >= block * 9 / 10, "{}: {heap} heap bytes for {block}", t["filter_kind"]);
        }
        assert_eq!(heap, opened.filter_heap_bytes());
        assert_eq!(t["heap_bytes"]["indexes"], 0, "a raw index is read in place");
        sum += heap;
    }
    assert_eq!(level["heap_bytes"]["filters"], sum);
    assert_eq!(v["heap_bytes"]["filters"], sum);
    assert_eq!(v["heap_bytes"]["indexes"], 0);
    let text = String::from_utf8(siftdb(&["db", "info", p(dir), "--probes", "0"]).stdout).unwrap();
    assert!(text.contains(&format!("heap            filters {sum} bytes, indexes 0 bytes")), "{text}");
    assert!(text.contains(&format!("L1 {sum}/0")), "{text}");
}
