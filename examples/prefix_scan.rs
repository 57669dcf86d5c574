//! Prefix scans over composite keys ("table:id"), and a bounded range.
//!
//! `cargo run --example prefix_scan`

use siftdb::{Db, Options};

fn main() -> Result<(), siftdb::Error> {
    let path = std::env::temp_dir().join(format!("siftdb-prefix-{}", std::process::id()));
    let db = Db::open(&path, Options::default())?;
    for (table, n) in [("order", 5), ("user", 3), ("usage", 2)] {
        for i in 0..n {
            db.put(format!("{table}:{i:04}"), format!("{table} row {i}"))?;
        }
    }
    // Every key starting with "user:" (not "usage:").
    for item in db.prefix("user:") {
        let (key, value) = item?;
        println!("{} -> {}", String::from_utf8_lossy(&key), String::from_utf8_lossy(&value));
    }
    // Orders 1 to 3, inclusive.
    let n = db.range("order:0001"..="order:0003").count();
    println!("{n} orders in range");
    db.close()?;
    std::fs::remove_dir_all(&path).ok();
    Ok(())
}
