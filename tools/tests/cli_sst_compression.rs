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
    assert_eq!(raw["format_version"], 1);
    let raw_bytes = c["data_raw_bytes"].as_u64().unwrap();

    for codec in [Compression::Lz4, Compression::Zstd { level: 5 }] {
        let path = build(dir.path(), codec);
        let (code, v) = run_json(&["sst", "info", p(&path), "--json"]);
        assert_eq!(code, 0);
        assert_eq!(v["format_version"], 3);
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
