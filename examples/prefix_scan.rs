//! Prefix scans over composite keys ("table:id"), a bounded range, and
//! prefix filters that skip the tables holding no key of a prefix.
//!
//! `cargo run --example prefix_scan`

use siftdb::{Db, Options, PrefixExtractor};

fn main() -> Result<(), siftdb::Error> {
    let path = std::env::temp_dir().join(format!("siftdb-prefix-{}", std::process::id()));
    // Each table's filter also holds the prefixes "order:", "user:", ...:
    // everything through the first ':'.
    let opts = Options { prefix_extractor: Some(PrefixExtractor::up_to(b':')), ..Options::default() };
    let db = Db::open(&path, opts)?;
    for (table, n) in [("order", 5000), ("user", 3), ("usage", 2000)] {
        for i in 0..n {
            db.put(format!("{table}:{i:04}"), format!("{table} row {i}"))?;
        }
    }
    // One table, from "order:0000" to "user:0002" (big enough that the
    // default policy gives it a filter: monkey:10 spends bits where they
    // save reads, and a table of a few keys may get none).
    db.flush()?;
    // Every key starting with "user:" (not "usage:").
    for item in db.prefix("user:") {
        let (key, value) = item?;
        println!("{} -> {}", String::from_utf8_lossy(&key), String::from_utf8_lossy(&value));
    }
    // Orders 1 to 3, inclusive: within the prefix "order:", so filtered too.
    let n = db.range("order:0001"..="order:0003").count();
    println!("{n} orders in range");
    // A prefix inside the table's key range that no key has: the filter
    // rules the table out without opening it (a false positive, at about
    // 1%, would open it and find nothing).
    let before = db.stats();
    assert_eq!(db.prefix("session:").count(), 0);
    let l0 = &db.stats().since(&before).levels[0];
    println!(
        "session: {} of {} tables skipped by their filters, {} opened",
        l0.prefix_skipped, l0.prefix_probes, l0.scan_tables_opened
    );
    db.close()?;
    std::fs::remove_dir_all(&path).ok();
    Ok(())
}
