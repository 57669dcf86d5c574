//! `siftdb db info` under FIFO compaction (issue 68): the strategy the
//! database was last opened with, and what FIFO dropped over its life.

mod common;

use std::time::Duration;

use common::{p, run_json};
use siftdb::{Compaction, Db, Options};

#[test]
fn info_names_the_strategy_and_what_fifo_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        memtable_bytes: 32 << 10,
        hash_salt: Some(68),
        compaction: Compaction::Fifo { max_bytes: Some(64 << 10), ttl: Some(Duration::from_secs(3600)) },
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    for i in 0..8_000u32 {
        db.put(format!("key{i:08}"), format!("value-{i:08}-{}", i.wrapping_mul(2_654_435_761))).unwrap();
    }
    db.flush().unwrap();
    db.wait_for_background_work().unwrap();
    let dropped = db.stats().lifetime_fifo_dropped;
    assert!(dropped.tables > 0, "{dropped:?}");
    db.close().unwrap();

    let (code, doc) = run_json(&["db", "info", p(dir.path()), "--json", "--probes", "0"]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc["compaction"], "fifo:max_bytes=65536,ttl=3600s");
    assert_eq!(doc["fifo_dropped"]["tables"], dropped.tables);
    assert_eq!(doc["fifo_dropped"]["entries"], dropped.entries);
    assert_eq!(doc["fifo_dropped"]["bytes"], dropped.bytes);
    let out = common::siftdb(&["db", "info", p(dir.path()), "--probes", "0"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.starts_with("compaction")).unwrap_or_default();
    assert!(line.contains("fifo:max_bytes=65536,ttl=3600s"), "{text}");
    assert!(line.contains(&format!("FIFO dropped {} tables", dropped.tables)), "{text}");
}
