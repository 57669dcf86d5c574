//! Bulk loading: four threads each build a table of 250,000 keys with
//! `TableWriter`, and one `Db::ingest` installs all four; every key is then
//! found. No write goes through the WAL or the memtable.
//!
//! `cargo run --release --example bulk_load`

use std::time::Instant;

use siftdb::{Db, Options, TableWriter};

const THREADS: u64 = 4;
const KEYS_PER_TABLE: u64 = 250_000;

fn key(i: u64) -> String {
    format!("user:{i:08}")
}

fn main() -> Result<(), siftdb::Error> {
    let root = std::env::temp_dir().join(format!("siftdb-bulk-load-{}", std::process::id()));
    let db = Db::open(root.join("db"), Options::default())?;
    std::fs::create_dir_all(root.join("staging"))?;
    // The database's options carry its hash salt, so the tables' filters
    // are ones it probes with the hash it already has.
    let opts = db.options().clone();

    let start = Instant::now();
    // Each thread takes a contiguous slice of the key space, so the tables
    // do not overlap and the ingest can place each as deep as it fits.
    let tables: Vec<_> = std::thread::scope(|s| {
        let builders: Vec<_> = (0..THREADS)
            .map(|t| {
                let (opts, path) = (&opts, root.join("staging").join(format!("part{t}.sst")));
                s.spawn(move || -> Result<std::path::PathBuf, siftdb::Error> {
                    let mut w = TableWriter::create(&path, opts)?;
                    for i in t * KEYS_PER_TABLE..(t + 1) * KEYS_PER_TABLE {
                        w.add(key(i), format!("profile of user {i}"))?; // keys in increasing order
                    }
                    let written = w.finish()?;
                    println!("thread {t}: {} keys, {} bytes", written.entries, written.file_bytes);
                    Ok(written.path)
                })
            })
            .collect();
        builders.into_iter().map(|b| b.join().expect("a builder thread panicked")).collect::<Result<_, _>>()
    })?;
    let built = start.elapsed();

    // One step: checked whole, all visible at once, or none if anything is wrong.
    let ingested = db.ingest(&tables)?;
    println!(
        "built in {built:.2?}, ingested in {:.2?} at sequence number {}",
        start.elapsed() - built,
        ingested.seq
    );
    for t in &ingested.tables {
        println!("  {} -> level {} ({} entries)", t.source.display(), t.level, t.entries);
    }

    for i in 0..THREADS * KEYS_PER_TABLE {
        let value = db.get(key(i))?;
        assert_eq!(value.as_deref(), Some(format!("profile of user {i}").as_bytes()), "key {i}");
    }
    println!("all {} keys found", THREADS * KEYS_PER_TABLE);

    // Later writes are newer than the ingest, as with any write.
    db.put(key(7), "updated")?;
    assert_eq!(db.get(key(7))?.as_deref(), Some(&b"updated"[..]));

    db.close()?;
    drop(db);
    std::fs::remove_dir_all(&root)?;
    Ok(())
}
