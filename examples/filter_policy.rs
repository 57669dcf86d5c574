//! Choosing a filter policy and reading what it saves from `db.stats()`.
//!
//! `cargo run --release --example filter_policy`

use siftdb::{Db, FilterPolicy, Options};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::temp_dir().join(format!("siftdb-policy-{}", std::process::id()));
    // Monkey: an average of 10 filter bits per key, spread over the levels
    // to minimise the summed false-positive rate. The policy is stored in
    // the database; reopening with `filter_policy: None` keeps it.
    let policy: FilterPolicy = "monkey:10".parse()?;
    let opts = Options { filter_policy: Some(policy), memtable_bytes: 256 << 10, ..Options::default() };
    let db = Db::open(&path, opts)?;
    for i in 0..50_000u32 {
        db.put(format!("key{i:08}"), format!("value {i}"))?;
    }
    db.flush()?;
    db.compact()?;

    // Absent keys inside the tables' key ranges (so each reaches a filter):
    // the filters answer "no" without reading a block, but for the rare
    // false positive.
    let before = db.stats();
    for i in 0..10_000u32 {
        assert!(db.get(format!("key{:08}-absent", i * 5))?.is_none());
    }
    let spent = db.stats().since(&before);
    let probes: u64 = spent.levels.iter().map(|l| l.filter_probes).sum();
    let false_positives: u64 = spent.levels.iter().map(|l| l.filter_false_positives).sum();
    let blocks: u64 = spent.levels.iter().map(|l| l.data_blocks_read).sum();
    println!(
        "policy {}: {probes} filter probes, {false_positives} false positives, {blocks} data blocks read for 10,000 absent keys",
        db.filter_policy()
    );
    println!("{}", db.stats());
    db.close()?;
    std::fs::remove_dir_all(&path).ok();
    Ok(())
}
