//! The quick start: open, write, read, batch, scan, snapshot, flush, stats.
//!
//! `cargo run --example quickstart`

use siftdb::{Db, Options, WriteBatch};

fn main() -> Result<(), siftdb::Error> {
    let path = std::env::temp_dir().join(format!("siftdb-quickstart-{}", std::process::id()));
    let db = Db::open(&path, Options::default())?; // creates the directory if missing

    // Keys and values are anything that is bytes: &str, String, Vec<u8>, arrays.
    db.put("user:1", "ada")?;
    let name = String::from("user:2");
    db.put(&name, b"grace")?;
    assert_eq!(db.get("user:1")?.as_deref(), Some(&b"ada"[..]));

    // A batch is applied atomically.
    let mut batch = WriteBatch::new();
    batch.put("user:3", "barbara");
    batch.delete("user:1");
    db.write(batch)?;

    // Ordered scans: a range, a prefix, or everything.
    for item in db.range("user:2".."user:9") {
        let (key, value) = item?;
        println!("{} = {}", String::from_utf8_lossy(&key), String::from_utf8_lossy(&value));
    }
    println!("{} keys start with user:", db.prefix("user:").count());

    // A snapshot does not see later writes.
    let snap = db.snapshot();
    db.put("user:4", "edsger")?;
    assert!(snap.get("user:4")?.is_none());

    db.flush()?; // the memtable becomes a level-0 table, durable on return
    println!("{}", db.stats());
    db.close()?;
    std::fs::remove_dir_all(&path).ok();
    Ok(())
}
