//! Range filters in the command line (issue 73): `sst info`, `sst verify`
//! and `sst layout` show a table's range filter, and a damaged one is a
//! problem; `siftdb bench` runs the range workloads with and without it.

mod common;

use std::path::{Path, PathBuf};

use common::{p, run_json, siftdb};
use siftdb::table::{TableBuilder, TableOptions};
use siftdb::{RangeFilterPolicy, ValueKind};

/// 3,000 keys `i << 20`, big-endian, with a range filter.
fn build(dir: &Path) -> PathBuf {
    let path = dir.join("r.sst");
    let opts = TableOptions { range_filter: Some(RangeFilterPolicy::default()), ..TableOptions::default() };
    let mut b = TableBuilder::create(&path, opts).unwrap();
    for i in 0..3000u64 {
        b.add(&(i << 20).to_be_bytes(), i + 1, ValueKind::Value, b"v").unwrap();
    }
    b.finish().unwrap();
    path
}

#[test]
fn sst_commands_show_the_range_filter_and_flag_damage() {
    let dir = tempfile::tempdir().unwrap();
    let path = build(dir.path());
    let (code, v) = run_json(&["sst", "info", p(&path), "--json"]);
    assert_eq!(code, 0);
    assert_eq!(v["format_version"], siftdb::table::FORMAT_VERSION);
    let r = &v["range_filter"];
    assert_eq!(
        (r["status"].as_str(), r["image"].as_str(), r["kind"].as_str()),
        (Some("loaded"), Some("be8"), Some("ribbon:10"))
    );
    assert_eq!(r["buckets"], 3000);
    // Gaps of 2^20: buckets of 2^10.
    assert_eq!(r["bucket_shift"], 10);
    let bits = r["bits_per_key"].as_f64().unwrap();
    assert!((10.0..12.0).contains(&bits), "{r}");
    assert_eq!(v["blocks"]["range_filter"]["count"], 1);
    let text = String::from_utf8(siftdb(&["sst", "info", p(&path)]).stdout).unwrap();
    assert!(text.contains("range filter") && text.contains("over 3000 buckets of 2^10 images"), "{text}");
    let (code, v) = run_json(&["sst", "verify", p(&path), "--json"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["tables"][0]["range_keys_probed"], 3000, "{v}");
    // `sst probe --range`: keys are `i << 20`, 8 bytes big-endian, in hex.
    let hex = |x: u64| format!("{x:016x}");
    let probe = |a: u64, b: u64| {
        run_json(&["sst", "probe", p(&path), "--hex", "--range", &hex(a), &hex(b), "--json"])
    };
    let (code, v) = probe(5 << 20, (5 << 20) + 1);
    assert_eq!(
        (code, v["filter"].as_str(), v["keys_in_range"].as_u64()),
        (0, Some("may_contain"), Some(1)),
        "{v}"
    );
    assert_eq!(v["buckets_probed"], 1);
    let empty: Vec<_> = (0..200u64).map(|i| probe((i << 20) + 4096, (i << 20) + 4096 + 256).1).collect();
    assert!(empty.iter().all(|v| v["keys_in_range"] == 0 && v["false_negative"] == false), "{empty:?}");
    assert!(empty.iter().filter(|v| v["filter"] == "empty").count() >= 195);
    let (_, wide) = probe(0, 1 << 40);
    assert_eq!(
        (wide["filter"].as_str(), wide["keys_in_range"].as_u64()),
        (Some("too_wide"), Some(3000)),
        "{wide}"
    );
    let text = String::from_utf8(
        siftdb(&["sst", "probe", p(&path), "--hex", "--range", &hex(7 << 20), &hex((7 << 20) + 100)]).stdout,
    )
    .unwrap();
    assert!(
        text.contains("filter    may_contain")
            && text.contains("1 key in the range")
            && text.contains("1 bucket(s) of 2^10 images probed"),
        "{text}"
    );
    let reversed = siftdb(&["sst", "probe", p(&path), "--range", "b", "a"]);
    assert_eq!(reversed.status.code(), Some(2), "{reversed:?}");
    let layout = siftdb(&["sst", "layout", p(&path)]);
    let layout_text = String::from_utf8(layout.stdout).unwrap();
    assert!(layout.status.success() && layout_text.contains("range_filter"), "{layout_text}");
    // A flipped byte in the block: the table still reads, the filter is
    // dropped, and both commands say so with exit 1.
    let h = siftdb::table::Table::open_path(&path).unwrap().properties().range_filter_block.unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[usize::try_from(h.offset).unwrap() + 30] ^= 1;
    std::fs::write(&path, &bytes).unwrap();
    let (code, v) = run_json(&["sst", "info", p(&path), "--json"]);
    assert_eq!((code, v["range_filter"]["status"].as_str()), (1, Some("dropped")), "{v}");
    let (code, _) = run_json(&["sst", "verify", p(&path), "--json"]);
    assert_eq!(code, 1);
}

#[test]
fn bench_range_workloads_skip_tables_with_the_filter() {
    let dir = tempfile::tempdir().unwrap();
    let dbs = dir.path().join("dbs");
    let out = siftdb(&[
        "bench",
        "--keys",
        "30000",
        "--lookups",
        "2000",
        "--value-bytes",
        "20",
        "--policies",
        "ribbon:10",
        "--workloads",
        "range-empty,range-present",
        "--json",
        "--dir",
        p(&dbs),
    ]);
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let range = &report["range"];
    assert_eq!((range["image"].as_str(), range["kind"].as_str()), (Some("be8"), Some("ribbon:10")));
    let results = range["results"].as_array().unwrap();
    assert_eq!(results.len(), 6, "two workloads at three lengths");
    for r in results {
        for run in ["with_range_filter", "without_range_filter"] {
            assert_eq!(r[run]["wrong_answers"], 0, "{r}");
            assert_eq!(r[run]["scans"], 2000);
            assert!(r[run]["data_blocks_per_scan"].is_f64(), "{r}");
        }
        assert_eq!(r["without_range_filter"]["range_probes"], 0);
        let bits = r["range_filter_bits_per_key"].as_f64().unwrap();
        assert!((9.0..13.0).contains(&bits), "{r}");
    }
    let empty = results.iter().find(|r| r["workload"] == "range-empty" && r["length"] == 256).unwrap();
    let (with, without) = (&empty["with_range_filter"], &empty["without_range_filter"]);
    assert!(without["tables_opened_per_scan"].as_f64().unwrap() >= 1.0, "{without}");
    assert!(with["data_blocks_per_scan"].as_f64().unwrap() < 0.05, "{with}");
    assert!(
        (empty["grafite_bound_per_table"].as_f64().unwrap()
            - 256.0 / 2f64.powf(empty["range_filter_bits_per_key"].as_f64().unwrap() - 2.0))
        .abs()
            < 1e-9
    );
    let present = results.iter().find(|r| r["workload"] == "range-present" && r["length"] == 16).unwrap();
    assert!(present["with_range_filter"]["tables_opened_per_scan"].as_f64().unwrap() >= 1.0, "{present}");
}

#[test]
fn db_info_lists_range_filters_and_measures_short_scans() {
    let dir = tempfile::tempdir().unwrap();
    let opts = siftdb::Options {
        range_filter: Some(RangeFilterPolicy::default()),
        auto_compaction: false,
        ..siftdb::Options::default()
    };
    let db = siftdb::Db::open(dir.path(), opts).unwrap();
    for t in 0..3u64 {
        for i in (t..6000).step_by(3) {
            db.put((i << 24).to_be_bytes(), b"v").unwrap();
        }
        db.flush().unwrap();
    }
    db.close().unwrap();
    let (code, v) = run_json(&["db", "info", p(dir.path()), "--probes", "2000", "--json"]);
    assert_eq!(code, 0, "{v}");
    let l0 = &v["levels"][0];
    for t in l0["table_list"].as_array().unwrap() {
        assert_eq!(
            (t["range_filter"]["status"].as_str(), t["range_filter"]["image"].as_str()),
            (Some("loaded"), Some("be8"))
        );
    }
    let (probes, skipped) = (l0["range_probes"].as_u64().unwrap(), l0["range_skipped"].as_u64().unwrap());
    // Each scan lies within one table's range, and the three tables
    // interleave: all three asked, and nearly all skipped.
    assert!(probes >= 5000 && skipped * 100 >= probes * 98, "{probes} probes, {skipped} skipped");
    let text = String::from_utf8(siftdb(&["db", "info", p(dir.path()), "--probes", "500"]).stdout).unwrap();
    assert!(text.contains("short-range scans (256 values") && text.contains("level 0:"), "{text}");
}
