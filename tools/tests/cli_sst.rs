//! `siftdb sst ...` run as a process on tables built in a temp dir.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{p, run_json, siftdb};
use siftdb::FilterKind;
use siftdb::ValueKind;
use siftdb::table::{Table, TableBuilder, TableOptions};

/// 300 keys `key00000`.. (every 7th also has an older tombstone), plus a
/// key with a NUL byte, in 256-byte blocks.
fn build(dir: &Path, name: &str, filter: FilterKind) -> PathBuf {
    let path = dir.join(name);
    let opts = TableOptions { block_bytes: 256, filter, seed: 42, ..TableOptions::default() };
    let mut b = TableBuilder::create(&path, opts).unwrap();
    b.add(b"a\x00nul", 5, ValueKind::Value, b"v\x01").unwrap();
    for i in 0..300u32 {
        let key = format!("key{i:05}");
        b.add(key.as_bytes(), u64::from(i) + 1000, ValueKind::Value, format!("value{i}").as_bytes()).unwrap();
        if i % 7 == 0 {
            b.add(key.as_bytes(), u64::from(i) + 10, ValueKind::Tombstone, b"").unwrap();
        }
    }
    b.finish().unwrap();
    path
}

#[test]
fn info_reports_counts_ranges_and_filter_parameters() {
    let dir = tempfile::tempdir().unwrap();
    let kinds = FilterKind::ALL.iter().copied().chain([FilterKind::Bloom { bits_per_key: 12.0 }]);
    for kind in kinds {
        let name = kind.to_string();
        let path = build(dir.path(), &format!("{name}.sst").replace(':', "_"), kind);
        let before = std::fs::read(&path).unwrap();
        let (code, v) = run_json(&["sst", "info", p(&path), "--json"]);
        assert_eq!(code, 0);
        assert_eq!(v["entries"], 301 + 43);
        assert_eq!(v["tombstones"], 43);
        assert_eq!(v["distinct_keys"], 301);
        assert_eq!(v["smallest_key"], "a\\x00nul");
        assert_eq!(v["largest_key"], "key00299");
        assert_eq!(v["min_seq"], 5);
        assert_eq!(v["max_seq"], 1299);
        // Format 4: the filter's array is aligned in place.
        assert_eq!(v["format_version"], siftdb::table::format::FORMAT_VERSION_ALIGNED);
        assert_eq!(v["file_size"], before.len() as u64);
        assert!(v["blocks"]["data"]["count"].as_u64().unwrap() > 5);
        let f = &v["filter"];
        assert_eq!(f["status"], "loaded", "{f}");
        assert_eq!(f["kind"], name);
        assert_eq!(f["hash_seed"], 42);
        assert_eq!(f["keys"], 301);
        assert_eq!(f["fell_back"], false);
        // Every parameter the filter reports about itself, by its own name.
        for (param, _) in kind.build(&[1, 2, 3]).unwrap().parameters() {
            assert!(f["params"][param].is_u64(), "{name}: {param} in {f}");
        }
        assert!(f["params"]["encoded_bytes"].as_u64().unwrap() > 0, "{name}: {f}");
        let fpr = f["theoretical_fpr"].as_f64().unwrap();
        assert!(fpr > 0.0 && fpr < 0.05, "{name}: {fpr}");
        let bpk = f["bits_per_key"].as_f64().unwrap();
        let expected = f["bytes"].as_f64().unwrap() * 8.0 / 301.0;
        assert!((bpk - expected).abs() < 1e-9);
        assert_eq!(std::fs::read(&path).unwrap(), before, "info must not modify the file");
    }
    // The text form names the same things.
    let path = dir.path().join("fuse8.sst");
    let out = siftdb(&["sst", "info", p(&path)]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("fuse8") && text.contains("segment length") && text.contains("theoretical FPR"));
}

#[test]
fn info_explains_a_fallback_filter() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fb.sst");
    let opts = TableOptions {
        filter: FilterKind::Xor8,
        inject_filter_build_failure: true,
        ..TableOptions::default()
    };
    let mut b = TableBuilder::create(&path, opts).unwrap();
    b.add(b"k", 1, ValueKind::Value, b"v").unwrap();
    b.finish().unwrap();
    let (code, v) = run_json(&["sst", "info", p(&path), "--json"]);
    assert_eq!(code, 0);
    assert_eq!(v["filter"]["requested"], "xor8");
    assert_eq!(v["filter"]["fell_back"], true);
    assert!(v["filter"]["kind"].as_str().unwrap().starts_with("blocked-bloom"));
    assert!(v["filter"]["fallback_reason"].as_str().unwrap().contains("injected"));
}

#[test]
fn info_reports_a_filter_dropped_as_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path(), "t.sst", FilterKind::BinaryFuse8);
    let (_, v) = run_json(&["sst", "info", p(&path), "--json"]);
    let at = usize::try_from(v["footer"]["filter"]["offset"].as_u64().unwrap()).unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[at + 40] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();
    let (code, v) = run_json(&["sst", "info", p(&path), "--json"]);
    assert_eq!(code, 1);
    assert_eq!(v["filter"]["status"], "dropped");
    assert_eq!(v["filter"]["dropped_as_corrupt"], true);
    assert!(v["filter"]["dropped_reason"].as_str().unwrap().contains("checksum"));
    let (code, v) = run_json(&["sst", "verify", p(&path), "--json"]);
    assert_eq!(code, 1);
    assert_eq!(v["tables"][0]["problems"][0]["offset"], at as u64);
}

#[test]
fn scan_honours_range_limit_and_hex() {
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path(), "t.sst", FilterKind::BinaryFuse8);
    let (code, v) = run_json(&["sst", "scan", p(&path), "--from", "key00007", "--to", "key00009", "--json"]);
    assert_eq!(code, 0);
    let e = v["entries"].as_array().unwrap();
    // key00007 has a value and an older tombstone, key00008 one value.
    let got: Vec<(String, u64, String)> = e
        .iter()
        .map(|x| {
            (
                x["key"].as_str().unwrap().into(),
                x["seq"].as_u64().unwrap(),
                x["kind"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("key00007".into(), 1007, "value".into()),
            ("key00007".into(), 17, "tombstone".into()),
            ("key00008".into(), 1008, "value".into())
        ]
    );
    assert_eq!(e[0]["value"], "value7");
    assert!(e[1]["value"].is_null());
    let (_, v) = run_json(&["sst", "scan", p(&path), "--limit", "2", "--hex", "--json"]);
    assert_eq!(v["count"], 2);
    assert_eq!(v["truncated"], true);
    assert_eq!(v["entries"][0]["key"], "61006e756c");
    assert_eq!(v["entries"][0]["value"], "7601");
    let (_, v) = run_json(&["sst", "scan", p(&path), "--from", "6b6579303032393900", "--hex", "--json"]);
    assert_eq!(v["count"], 0);
    let out = siftdb(&["sst", "scan", p(&path), "--limit", "1"]);
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().next().unwrap(), "a\\x00nul @5 value v\\x01");
    assert_eq!(siftdb(&["sst", "scan", p(&path), "--hex", "--from", "xyz"]).status.code(), Some(2));
}

#[test]
fn verify_passes_a_sound_table_and_names_the_offset_of_a_flipped_byte() {
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path(), "t.sst", FilterKind::BinaryFuse8);
    let (code, v) = run_json(&["sst", "verify", p(&path), "--json"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["ok"], true);
    assert_eq!(v["tables"][0]["entries_checked"], 344);
    assert_eq!(v["tables"][0]["keys_probed"], 301);
    // Flip a byte inside data block 2.
    let (_, layout) = run_json(&["sst", "layout", p(&path), "--json"]);
    let block2 = layout["regions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["kind"] == "data" && r["block"] == 2)
        .unwrap();
    let offset = block2["offset"].as_u64().unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[usize::try_from(offset).unwrap() + 10] ^= 0x20;
    std::fs::write(&path, &bytes).unwrap();
    let (code, v) = run_json(&["sst", "verify", p(&path), "--json"]);
    assert_eq!(code, 1);
    assert_eq!(v["ok"], false);
    let problems = v["tables"][0]["problems"].as_array().unwrap();
    assert!(problems.iter().any(|x| x["offset"] == offset), "{problems:?}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "verify must not modify the file");
    let out = siftdb(&["sst", "verify", p(&path)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8(out.stdout).unwrap().contains(&format!("offset {offset}")));
}

#[test]
fn verify_dir_checks_every_table_and_counts_unreadable_ones_as_problems() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path(), "000001.sst", FilterKind::BinaryFuse8);
    build(dir.path(), "000002.sst", FilterKind::Bloom { bits_per_key: 10.0 });
    std::fs::write(dir.path().join("notes.txt"), "ignored").unwrap();
    let (code, v) = run_json(&["sst", "verify", p(dir.path()), "--json"]);
    assert_eq!((code, v["tables_checked"].as_u64()), (0, Some(2)));
    std::fs::write(dir.path().join("000003.sst"), "not a table").unwrap();
    let (code, v) = run_json(&["sst", "verify", p(dir.path()), "--json"]);
    assert_eq!((code, v["tables_checked"].as_u64(), v["problems"].as_u64()), (1, Some(3), Some(1)));
    assert!(v["tables"][2]["error"].as_str().unwrap().contains("000003.sst"));
}

#[test]
fn bad_inputs_exit_2_with_the_path_and_leave_files_alone() {
    let dir = tempfile::tempdir().unwrap();
    let good = build(dir.path(), "t.sst", FilterKind::BinaryFuse8);
    let bytes = std::fs::read(&good).unwrap();
    let truncated = dir.path().join("truncated.sst");
    std::fs::write(&truncated, &bytes[..bytes.len() - 20]).unwrap();
    let foreign = dir.path().join("foreign.sst");
    std::fs::write(&foreign, vec![7u8; 500]).unwrap();
    let tiny = dir.path().join("tiny.sst");
    std::fs::write(&tiny, b"abc").unwrap();
    let missing = dir.path().join("missing.sst");
    for path in [&truncated, &foreign, &tiny, &missing] {
        let before = std::fs::read(path).ok();
        for cmd in [&["info"][..], &["scan"], &["verify"], &["fpr", "--probes", "10"], &["layout"]] {
            let mut args = vec!["sst"];
            args.extend_from_slice(&cmd[..1]);
            args.push(p(path));
            args.extend_from_slice(&cmd[1..]);
            let out = siftdb(&args);
            // What exists but is no sound table is damage `verify` found
            // (exit 1, reported on stdout); the other commands cannot open it.
            if cmd[0] == "verify" && path != &missing {
                assert_eq!(out.status.code(), Some(1), "{args:?}");
                assert!(String::from_utf8(out.stdout).unwrap().contains(p(path)), "{args:?}");
                continue;
            }
            assert_eq!(out.status.code(), Some(2), "{args:?}");
            let err = String::from_utf8(out.stderr).unwrap();
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(err.contains(p(path)), "{args:?}: {err}");
        }
        assert_eq!(std::fs::read(path).ok(), before);
    }
    let out = siftdb(&["sst", "info", p(dir.path())]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr).unwrap().contains("directory"));
    assert_eq!(siftdb(&["sst", "info"]).status.code(), Some(2), "missing argument is a usage error");
    assert_eq!(siftdb(&["sst", "bogus"]).status.code(), Some(2));
}

#[test]
fn fpr_measures_close_to_theory_on_keys_the_table_lacks() {
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path(), "b.sst", FilterKind::Bloom { bits_per_key: 4.0 });
    let (code, v) = run_json(&["sst", "fpr", p(&path), "--probes", "20000", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(v["probes"], 20000);
    let measured = v["measured_fpr"].as_f64().unwrap();
    let theory = v["theoretical_fpr"].as_f64().unwrap();
    // 4 bits/key Bloom: ~15%; the measurement on 20k probes is within a few points.
    assert!((measured - theory).abs() < 0.04, "measured {measured}, theory {theory}");
    assert!(v["ci95_low"].as_f64().unwrap() <= measured && measured <= v["ci95_high"].as_f64().unwrap());
    let none = build(dir.path(), "n.sst", FilterKind::None);
    let (code, v) = run_json(&["sst", "fpr", p(&none), "--probes", "100", "--json"]);
    assert_eq!((code, v["filter_usable"].as_bool()), (0, Some(false)));
    assert!(v["measured_fpr"].is_null());
}

#[test]
fn probe_reports_the_filter_answer_and_the_truth() {
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path(), "t.sst", FilterKind::BinaryFuse8);
    let (code, v) = run_json(&["sst", "probe", p(&path), "key00014", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(v["filter"], "may_contain");
    assert_eq!(v["held"], true);
    assert_eq!(v["newest"]["seq"], 1014);
    assert_eq!(v["newest"]["value"], "value14");
    assert_eq!(v["versions"][1]["kind"], "tombstone");
    let (code, v) = run_json(&["sst", "probe", p(&path), "610000", "--hex", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(v["held"], false);
    let answer = v["filter"].as_str().unwrap();
    assert_eq!(v["false_positive"], answer == "may_contain");
    // Agrees with the library's own lookup.
    let t = Table::open_path(&path).unwrap();
    assert_eq!(t.get(b"a\x00\x00", u64::MAX >> 8).unwrap().entry, None);
}

#[test]
fn probe_prefix_asks_the_filter_for_the_tables_extracted_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.sst");
    let opts = TableOptions {
        filter: FilterKind::BinaryFuse8,
        prefix_extractor: Some(siftdb::PrefixExtractor::fixed(6)),
        ..TableOptions::default()
    };
    let mut b = TableBuilder::create(&path, opts).unwrap();
    for i in 0..300u32 {
        b.add(format!("key{:03}{i:03}", i / 10 * 2).as_bytes(), 1, ValueKind::Value, b"v").unwrap();
    }
    b.finish().unwrap();
    // Held: the prefix of `key004` is `key004`; 10 keys start with `key0040`.
    let (code, v) = run_json(&["sst", "probe", p(&path), "--prefix", "key0040", "--json"]);
    assert_eq!(code, 0);
    assert_eq!((v["extractor"].as_str(), v["extracted"].as_str()), (Some("fixed:6"), Some("key004")));
    assert_eq!(v["filter"], "may_contain");
    assert_eq!(v["keys_with_prefix"], 10);
    assert_eq!(v["keys"].as_array().unwrap().len(), 10);
    // Absent: odd groups. At fuse8's rate nearly all of 30 are ruled out,
    // and every "may contain" is reported as a false positive.
    let mut absent = 0;
    for g in 0..30 {
        let (code, v) =
            run_json(&["sst", "probe", p(&path), "--prefix", &format!("key{:03}", 2 * g + 1), "--json"]);
        assert_eq!(code, 0);
        assert_eq!(v["keys_with_prefix"], 0);
        assert_eq!(v["false_positive"], v["filter"] == "may_contain");
        absent += u32::from(v["filter"] == "absent");
    }
    assert!(absent >= 27, "{absent} of 30 absent prefixes ruled out");
    // Too short for the extractor: the filter cannot be asked.
    let (_, v) = run_json(&["sst", "probe", p(&path), "--prefix", "key", "--json"]);
    assert_eq!(v["filter"], "outside_domain");
    assert_eq!(v["keys_with_prefix"], 300);
    let out = siftdb(&["sst", "info", p(&path)]);
    assert!(stdout(&out).contains("extractor fixed:6"), "{}", stdout(&out));
    // A table without an extractor says so.
    let plain = build(dir.path(), "t.sst", FilterKind::BinaryFuse8);
    let (_, v) = run_json(&["sst", "probe", p(&plain), "--prefix", "key001", "--json"]);
    assert_eq!(v["filter"], "no_prefix_filter");
    assert_eq!(v["keys_with_prefix"], 100);
    // Exactly one of a key and --prefix.
    assert_eq!(siftdb(&["sst", "probe", p(&plain)]).status.code(), Some(2));
    assert_eq!(siftdb(&["sst", "probe", p(&plain), "k", "--prefix", "k"]).status.code(), Some(2));
}

#[test]
fn layout_tiles_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path(), "t.sst", FilterKind::Xor8);
    let (code, v) = run_json(&["sst", "layout", p(&path), "--json"]);
    assert_eq!(code, 0);
    assert_eq!(v["anomalies"], 0);
    let regions = v["regions"].as_array().unwrap();
    let mut at = 0;
    for r in regions {
        assert_eq!(r["offset"].as_u64().unwrap(), at, "{r}");
        at += r["size"].as_u64().unwrap();
    }
    assert_eq!(at, v["file_size"].as_u64().unwrap());
    // Format 4's padding before the filter block (none if already aligned)
    // is part of the file, under 64 bytes, and no anomaly.
    for pad in regions.iter().filter(|r| r["kind"] == "padding") {
        assert!(pad["size"].as_u64().unwrap() < 64, "{pad}");
    }
    let kinds: Vec<&str> = regions
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .filter(|k| *k != "trailer" && *k != "padding")
        .collect();
    let tail: Vec<&str> = kinds.iter().rev().take(4).rev().copied().collect();
    assert_eq!(tail, ["index", "filter", "properties", "footer"]);
    assert_eq!(regions.iter().filter(|r| r["kind"] == "trailer").count(), kinds.len() - 1);
}

#[test]
fn every_command_has_help() {
    for cmd in ["info", "scan", "verify", "fpr", "probe", "layout"] {
        let out = siftdb(&["sst", cmd, "--help"]);
        assert_eq!(out.status.code(), Some(0), "{cmd}");
        assert!(String::from_utf8(out.stdout).unwrap().contains("Usage"));
    }
}

#[test]
fn damaged_tables_never_crash_any_command() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("small.sst");
    let opts = TableOptions { block_bytes: 128, filter: FilterKind::BinaryFuse8, ..TableOptions::default() };
    let mut b = TableBuilder::create(&path, opts).unwrap();
    for i in 0..60u32 {
        b.add(format!("k{i:03}").as_bytes(), u64::from(i) + 1, ValueKind::Value, b"v").unwrap();
    }
    b.finish().unwrap();
    let good = std::fs::read(&path).unwrap();
    let (_, layout) = run_json(&["sst", "layout", p(&path), "--json"]);
    let in_data = |at: usize| {
        layout["regions"].as_array().unwrap().iter().any(|r| {
            let (o, n) = (r["offset"].as_u64().unwrap() as usize, r["size"].as_u64().unwrap() as usize);
            r["block"].is_u64() && (o..o + n).contains(&at)
        })
    };
    let bad = dir.path().join("bad.sst");
    let mut flips = 0;
    for i in (0..good.len()).step_by(29) {
        let mut bytes = good.clone();
        bytes[i] ^= 0x5a;
        std::fs::write(&bad, &bytes).unwrap();
        for cmd in
            [&["info", "--json"][..], &["scan"], &["verify"], &["probe", "--json", "k007"], &["layout"]]
        {
            let mut args = vec!["sst", cmd[0], p(&bad)];
            args.extend_from_slice(&cmd[1..]);
            let out = siftdb(&args);
            let code = out.status.code();
            assert!(matches!(code, Some(0..=2)), "{args:?} after a flip at {i}: {code:?}");
            if cmd[0] == "verify" {
                assert_ne!(code, Some(0), "verify missed a flip at {i}");
            }
            // Damage in a data block (or its trailer) is a problem found in
            // the data, not an open error.
            if cmd[0] == "scan" && in_data(i) {
                assert_eq!(code, Some(1), "scan after a flip in data at {i}");
            }
        }
        assert_eq!(std::fs::read(&bad).unwrap(), bytes);
        flips += 1;
    }
    assert!(flips > 20);
}

#[test]
fn info_prints_keys_as_hex_on_request() {
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path(), "t.sst", FilterKind::BinaryFuse8);
    let (_, v) = run_json(&["sst", "info", p(&path), "--hex", "--json"]);
    assert_eq!(v["smallest_key"], "61006e756c");
    assert_eq!(v["largest_key"], "6b65793030323939");
}

/// The offset of data block `n` of `path`, from `sst layout`.
fn data_block_offset(path: &Path, n: u64) -> u64 {
    let (_, layout) = run_json(&["sst", "layout", p(path), "--json"]);
    let r = layout["regions"].as_array().unwrap().iter().find(|r| r["kind"] == "data" && r["block"] == n);
    r.unwrap()["offset"].as_u64().unwrap()
}

fn flip(path: &Path, at: u64) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes[usize::try_from(at).unwrap()] ^= 0x20;
    std::fs::write(path, &bytes).unwrap();
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).unwrap()
}

#[test]
fn scan_prints_the_entries_before_a_damaged_block_then_the_problem_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path(), "t.sst", FilterKind::BinaryFuse8);
    let clean = stdout(&siftdb(&["sst", "scan", p(&path)]));
    let clean: Vec<&str> = clean.lines().collect();
    assert_eq!(clean.len(), 344);
    let at = data_block_offset(&path, 3);
    flip(&path, at + 10);

    let out = siftdb(&["sst", "scan", p(&path)]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    let shown: Vec<&str> = text.lines().collect();
    // Blocks 0..3 were read: a proper, non-empty prefix of the clean scan.
    assert!(shown.len() > 3 && shown.len() < clean.len(), "{} lines", shown.len());
    assert_eq!(shown, clean[..shown.len()]);
    let err = stderr(&out);
    assert!(err.contains(&format!("offset {at}")) && err.contains(p(&path)), "{err}");
    assert!(err.contains(&format!("stopped after {} entries", shown.len())), "{err}");

    let (code, v) = run_json(&["sst", "scan", p(&path), "--json"]);
    assert_eq!(code, 1);
    assert_eq!(v["count"].as_u64(), Some(shown.len() as u64));
    assert_eq!(v["entries"].as_array().unwrap().len(), shown.len());
    assert_eq!(v["error"]["offset"], at);
    assert!(v["error"]["what"].as_str().unwrap().contains("checksum"), "{v}");
    // A range that ends before the damage never reads it.
    let (code, v) = run_json(&["sst", "scan", p(&path), "--to", "key00003", "--json"]);
    assert_eq!((code, v["error"].is_null()), (0, true), "{v}");
}

#[test]
fn the_limit_note_is_not_an_entry() {
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path(), "t.sst", FilterKind::BinaryFuse8);
    let out = siftdb(&["sst", "scan", p(&path), "--limit", "5"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out).lines().count(), 5, "stdout holds the 5 entries only");
    assert!(stderr(&out).contains("limit of 5 entries reached"), "{}", stderr(&out));
    // Exactly as many entries as there are: no note.
    let out = siftdb(&["sst", "scan", p(&path), "--limit", "344"]);
    assert_eq!((stdout(&out).lines().count(), stderr(&out).as_str()), (344, ""));
    let (code, v) = run_json(&["sst", "scan", p(&path), "--limit", "5", "--json"]);
    assert_eq!((code, v["count"].as_u64(), v["truncated"].as_bool()), (0, Some(5), Some(true)));
    assert!(v["error"].is_null());
}

#[test]
fn probe_reports_a_damaged_block_and_what_the_filter_said() {
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path(), "t.sst", FilterKind::BinaryFuse8);
    // The first key of data block 3.
    let (_, v) = run_json(&["sst", "scan", p(&path), "--json"]);
    let at = data_block_offset(&path, 3);
    flip(&path, at + 10);
    let (_, partial) = run_json(&["sst", "scan", p(&path), "--json"]);
    let n = partial["count"].as_u64().unwrap() as usize;
    let victim = v["entries"][n]["key"].as_str().unwrap().to_string();
    let (code, d) = run_json(&["sst", "probe", p(&path), &victim, "--json"]);
    assert_eq!(code, 1, "{d}");
    assert_eq!(d["filter"], "may_contain");
    assert!(d["held"].is_null(), "the truth is unknown: {d}");
    assert_eq!(d["error"]["offset"], at);
    let out = siftdb(&["sst", "probe", p(&path), &victim]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains(&format!("offset {at}")), "{}", stdout(&out));
    // A key in an intact block is still answered, exit 0.
    let (code, d) = run_json(&["sst", "probe", p(&path), "key00001", "--json"]);
    assert_eq!((code, d["held"].as_bool()), (0, Some(true)), "{d}");
}

#[test]
fn info_text_shows_the_footer_handles_version_and_magic() {
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path(), "t.sst", FilterKind::Xor8);
    let (_, v) = run_json(&["sst", "info", p(&path), "--json"]);
    assert_eq!(v["footer"]["magic"], "0x5349465453535401");
    let text = stdout(&siftdb(&["sst", "info", p(&path)]));
    let f = &v["footer"];
    assert!(
        text.contains(&format!(
            "footer       at offset {}, 56 bytes, magic 0x5349465453535401, format version 4",
            f["offset"]
        )),
        "{text}"
    );
    for block in ["index", "filter", "properties"] {
        let h = &f[block];
        let line = format!(
            "  {block:<11}offset {}, size {} ({} with trailer)",
            h["offset"], h["size"], h["size_with_trailer"]
        );
        assert!(text.contains(&line), "{line:?} not in\n{text}");
    }
    let none = build(dir.path(), "n.sst", FilterKind::None);
    let text = stdout(&siftdb(&["sst", "info", p(&none)]));
    assert!(text.contains("  filter     none"), "{text}");
}

#[test]
fn invisible_and_reordering_characters_are_escaped_in_text_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("u.sst");
    let mut b = TableBuilder::create(&path, TableOptions::default()).unwrap();
    let keys = ["a\u{200b}b", "b\u{202e}c", "c\u{2028}d", "d\u{feff}e", "e\u{2066}f", "\u{65e5}\u{672c}"];
    for (i, k) in keys.iter().enumerate() {
        b.add(k.as_bytes(), i as u64 + 1, ValueKind::Value, "v\u{2029}".as_bytes()).unwrap();
    }
    b.finish().unwrap();
    let want =
        ["a\\u{200b}b", "b\\u{202e}c", "c\\u{2028}d", "d\\u{feff}e", "e\\u{2066}f", "\u{65e5}\u{672c}"];
    let text = stdout(&siftdb(&["sst", "scan", p(&path)]));
    let lines: Vec<&str> = text.lines().collect();
    for (i, w) in want.iter().enumerate() {
        assert_eq!(lines[i], format!("{w} @{} value v\\u{{2029}}", i + 1));
    }
    let (_, v) = run_json(&["sst", "scan", p(&path), "--json"]);
    let got: Vec<&str> =
        v["entries"].as_array().unwrap().iter().map(|e| e["key"].as_str().unwrap()).collect();
    assert_eq!(got, want);
    assert_eq!(v["entries"][0]["value"], "v\\u{2029}");
    // Nothing invisible reaches the terminal.
    for c in ['\u{200b}', '\u{202e}', '\u{2028}', '\u{2029}', '\u{feff}', '\u{2066}'] {
        assert!(!text.contains(c), "{c:?} printed raw");
    }
    let (_, i) = run_json(&["sst", "info", p(&path), "--json"]);
    assert_eq!(i["smallest_key"], "a\\u{200b}b");
}

#[test]
fn verify_of_a_directory_without_tables_is_a_problem() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not a table").unwrap();
    let out = siftdb(&["sst", "verify", p(dir.path())]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("no table files (*.sst)"), "{}", stdout(&out));
    let (code, v) = run_json(&["sst", "verify", p(dir.path()), "--json"]);
    assert_eq!((code, v["ok"].as_bool(), v["tables_checked"].as_u64()), (1, Some(false), Some(0)));
    assert!(v["error"].as_str().unwrap().contains("nothing verified"), "{v}");
    let missing = dir.path().join("nope");
    let out = siftdb(&["sst", "verify", p(&missing)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains(p(&missing)));
}

#[test]
fn verify_reports_one_damaged_block_once_and_skips_the_property_comparison() {
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path(), "t.sst", FilterKind::BinaryFuse8);
    let at = data_block_offset(&path, 2);
    flip(&path, at + 10);
    let (code, v) = run_json(&["sst", "verify", p(&path), "--json"]);
    assert_eq!(code, 1);
    let t = &v["tables"][0];
    let problems = t["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0]["offset"], at);
    assert_eq!(
        (t["unreadable_data_blocks"].as_u64(), t["properties_compared"].as_bool()),
        (Some(1), Some(false))
    );
    let text = stdout(&siftdb(&["sst", "verify", p(&path)]));
    assert!(!text.contains("properties:"), "{text}");
    assert!(text.contains("1 data block(s) unreadable, so the properties were not compared"), "{text}");
    // A sound table compares them.
    let good = build(dir.path(), "g.sst", FilterKind::BinaryFuse8);
    let (_, v) = run_json(&["sst", "verify", p(&good), "--json"]);
    assert_eq!(v["tables"][0]["properties_compared"], true);
}

#[test]
fn fpr_rejects_zero_probes_as_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path(), "t.sst", FilterKind::BinaryFuse8);
    let out = siftdb(&["sst", "fpr", p(&path), "--probes", "0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--probes"), "{}", stderr(&out));
    assert!(stdout(&out).is_empty());
    let out = siftdb(&["sst", "fpr", p(&path), "--probes", "1"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!stdout(&out).contains("no usable filter") && stdout(&out).contains("probes           1 absent"));
}

#[test]
fn probe_and_fpr_say_when_the_filter_was_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path(), "t.sst", FilterKind::BinaryFuse8);
    let (_, v) = run_json(&["sst", "info", p(&path), "--json"]);
    flip(&path, v["footer"]["filter"]["offset"].as_u64().unwrap() + 40);
    let (code, d) = run_json(&["sst", "probe", p(&path), "key00014", "--json"]);
    assert_eq!(code, 1, "{d}");
    assert_eq!((d["filter"].as_str(), d["filter_status"].as_str()), (Some("dropped"), Some("dropped")));
    assert!(d["dropped_reason"].as_str().unwrap().contains("checksum"));
    assert_eq!(d["held"], true, "the data is still read");
    let out = siftdb(&["sst", "probe", p(&path), "key00014"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("DROPPED as corrupt"), "{}", stdout(&out));

    let (code, f) = run_json(&["sst", "fpr", p(&path), "--probes", "100", "--json"]);
    assert_eq!(code, 1, "{f}");
    assert_eq!((f["filter_status"].as_str(), f["filter_usable"].as_bool()), (Some("dropped"), Some(false)));
    assert!(f["measured_fpr"].is_null() && f["dropped_reason"].as_str().unwrap().contains("checksum"));
    let out = siftdb(&["sst", "fpr", p(&path), "--probes", "100"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.contains("DROPPED") && !text.contains("no usable filter"), "{text}");
}

/// `sst info`, `scan` (`dump`), `verify` and `layout` on a table with
/// range tombstones: twelve of them, so the text lists ten and counts the
/// rest; keys printed as everywhere else (escaped, or hex).
#[test]
fn range_tombstones_are_shown_by_info_and_dump() {
    use siftdb::range_del::RangeTombstone;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("000001.sst");
    let mut b = TableBuilder::create(&path, TableOptions::default()).unwrap();
    b.add(b"c", 1, ValueKind::Value, b"v").unwrap();
    b.add_range_tombstone(&RangeTombstone::new(&b"a\x00"[..], &b"b"[..], 9)).unwrap();
    for i in 0..11u64 {
        let (start, end) = (format!("k{i:02}"), format!("k{i:02}z"));
        b.add_range_tombstone(&RangeTombstone::new(start.into_bytes(), end.into_bytes(), 20 + i)).unwrap();
    }
    b.finish().unwrap();

    let (code, v) = run_json(&["sst", "info", p(&path), "--json"]);
    assert_eq!(code, 0, "{v}");
    // Range tombstones need format 2; this table's filter, read in place, 4.
    assert_eq!(v["format_version"], siftdb::table::format::FORMAT_VERSION_ALIGNED);
    assert_eq!(v["range_tombstone_count"], 12);
    let ts = v["range_tombstones"].as_array().unwrap();
    assert_eq!(ts.len(), 12);
    assert_eq!(ts[0], serde_json::json!({ "start": "a\\x00", "end": "b", "seq": 9 }));
    assert_eq!(v["smallest_key"], "a\\x00");
    assert_eq!(v["largest_key"], "k10z");
    assert_eq!((v["min_seq"].as_u64(), v["max_seq"].as_u64()), (Some(1), Some(30)));
    assert_eq!(v["blocks"]["range_del"]["count"], 1);
    let (_, v) = run_json(&["sst", "info", p(&path), "--json", "--hex"]);
    assert_eq!(v["range_tombstones"][0]["start"], "6100");

    let text = stdout(&siftdb(&["sst", "info", p(&path)]));
    assert!(text.contains("range dels   12"), "{text}");
    assert!(text.contains("  [a\\x00, b) @9\n") && text.contains("  [k08, k08z) @28\n"), "{text}");
    assert!(!text.contains("[k09, k09z)") && text.contains("  … 2 more\n"), "{text}");

    let (code, v) = run_json(&["sst", "dump", p(&path), "--json", "--from", "k05", "--to", "k06"]);
    assert_eq!(code, 0);
    assert_eq!(v["range_tombstones"], serde_json::json!([{ "start": "k05", "end": "k05z", "seq": 25 }]));
    assert_eq!(v["count"], 0);
    let out = stdout(&siftdb(&["sst", "dump", p(&path)]));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 13, "{out}");
    assert_eq!(lines[0], "[a\\x00, b) @9 range tombstone");
    assert_eq!(lines[12], "c @1 value v");

    let (code, v) = run_json(&["sst", "verify", p(&path), "--json"]);
    assert_eq!(code, 0, "{v}");
    let (code, v) = run_json(&["sst", "layout", p(&path), "--json"]);
    assert_eq!((code, &v["anomalies"]), (0, &serde_json::json!(0)), "{v}");
    // A table without any keeps version 1 and shows none.
    let plain = build(dir.path(), "plain.sst", FilterKind::BinaryFuse8);
    let (_, v) = run_json(&["sst", "info", p(&plain), "--json"]);
    assert_eq!(
        (&v["range_tombstone_count"], &v["range_tombstones"]),
        (&serde_json::json!(0), &serde_json::json!([]))
    );
    let (_, v) = run_json(&["sst", "dump", p(&plain), "--json", "--limit", "1"]);
    assert!(v.get("range_tombstones").is_none(), "{v}");
}
