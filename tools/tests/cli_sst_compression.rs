//! `siftdb sst info` on compressed tables: the codec, how many data blocks
//! were stored compressed, and the data bytes raw and stored.

mod common;

use std::path::{Path, PathBuf};

use common::{p, run_json, siftdb};
use siftdb::ValueKind;
use siftdb::table::{Compression, TableBuilder, TableOptions};

/// 300 keys with repetitive values, in 1 KiB blocks.
fn build(dir: &Path, compression: Compression) -> PathBuf {
    let path = dir.join(format!("{compression}.sst").replace(':', "_"));
    let opts = TableOptions { block_bytes: 1024, compression, ..TableOptions::default() };
    let mut b = TableBuilder::create(&path, opts).unwrap();
    for i in 0..300u32 {
        let value = format!("value of key {i}, ").repeat(4);
        b.add(format!("key{i:05}").as_bytes(), u64::from(i) + 1, ValueKind::Value, value.as_bytes()).unwrap();
    }
    b.finish().unwrap();
    path
}

#[test]
fn info_shows_the_codec_and_the_data_bytes_raw_and_stored() {
    let dir = tempfile::tempdir().unwrap();
    let (_, raw) = run_json(&["sst", "info", p(&build(dir.path(), Compression::None)), "--json"]);
    let c = &raw["compression"];
    assert_eq!((c["codec"].as_str(), c["data_blocks_compressed"].as_u64()), (Some("none"), Some(0)), "{c}");
    assert_eq!(c["data_raw_bytes"], c["data_stored_bytes"]);
    assert_eq!(c["ratio"], 1.0);
    // Its filter, aligned to be read in place, makes it format 4 either way.
    assert_eq!(raw["format_version"], siftdb::table::format::FORMAT_VERSION_ALIGNED);
    let raw_bytes = c["data_raw_bytes"].as_u64().unwrap();

    for codec in [Compression::Lz4, Compression::Zstd { level: 5 }] {
        let path = build(dir.path(), codec);
        let (code, v) = run_json(&["sst", "info", p(&path), "--json"]);
        assert_eq!(code, 0);
        assert_eq!(v["format_version"], siftdb::table::format::FORMAT_VERSION_ALIGNED);
        let c = &v["compression"];
        assert_eq!(c["codec"], codec.to_string(), "{c}");
        assert_eq!(c["data_blocks_compressed"], v["blocks"]["data"]["count"], "{c}");
        assert_eq!(c["data_raw_bytes"], raw_bytes, "{c}");
        assert_eq!(c["data_stored_bytes"], v["blocks"]["data"]["bytes"], "{c}");
        assert!(c["ratio"].as_f64().unwrap() > 2.0, "{c}");
        assert!(c["max_block_bytes"].as_u64().unwrap() >= 1024, "{c}");

        let out = siftdb(&["sst", "info", p(&path)]);
        let text = String::from_utf8(out.stdout).unwrap();
        let line = text.lines().find(|l| l.starts_with("compression")).unwrap();
        let blocks = v["blocks"]["data"]["count"].as_u64().unwrap();
        assert!(line.contains(&format!("{codec}: {blocks} of {blocks} data blocks compressed")), "{line}");
        assert!(line.contains(&format!("{raw_bytes} bytes raw")), "{line}");
        // The table reads back in full through the tool.
        let verify = siftdb(&["sst", "verify", p(&path)]);
        assert_eq!(verify.status.code(), Some(0), "{}", String::from_utf8_lossy(&verify.stdout));
    }
}

/// A database written under one compression policy and compacted under
/// another: `db info` counts each level's tables per codec, and `sst info`
/// names the codec of a table the policy wrote to the last level.
#[test]
fn db_info_counts_tables_per_codec() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let opts = |policy: &str| siftdb::Options {
        memtable_bytes: 16 << 10,
        base_level_bytes: 64 << 10,
        table_target_bytes: 16 << 10,
        auto_compaction: false,
        compression: policy.parse().unwrap(),
        ..siftdb::Options::default()
    };
    let put_all = |db: &siftdb::Db, round: u32| {
        for i in 0..3000u32 {
            let value = format!("value of key {i} in round {round}, ").repeat(3);
            db.put(format!("key{:06}", (i * 7919) % 3000).as_bytes(), value.as_bytes()).unwrap();
        }
    };
    let db = siftdb::Db::open(&dir, opts("none")).unwrap();
    put_all(&db, 0);
    db.compact().unwrap();
    db.close().unwrap();
    let db = siftdb::Db::open(&dir, opts("per-level:none,lz4+last:zstd:1")).unwrap();
    put_all(&db, 1);
    db.compact().unwrap();
    let last = db.tables().into_iter().find(|t| t.compression == Compression::Zstd { level: 1 });
    db.close().unwrap();
    let last = last.expect("a table on the last level");

    let (code, info) = run_json(&["db", "info", p(&dir), "--probes", "0", "--json"]);
    assert_eq!(code, 0, "{info}");
    let level = &info["levels"][last.level];
    assert!(level["compression"]["zstd:1"].as_u64().is_some_and(|n| n > 0), "{level}");
    let listed = level["table_list"].as_array().unwrap();
    assert!(listed.iter().any(|t| t["compression"] == "zstd:1"), "{level}");
    let text = String::from_utf8(siftdb(&["db", "info", p(&dir), "--probes", "0"]).stdout).unwrap();
    assert!(text.contains(&format!("L{} zstd:1 ", last.level)), "{text}");
    let (_, sst) = run_json(&["sst", "info", p(&last.path), "--json"]);
    assert_eq!(sst["compression"]["codec"], "zstd:1", "{sst}");
}
