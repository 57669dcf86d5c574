//! A checkpoint of a live database: a writer thread keeps writing while the
//! main thread copies the database, opens the copy, and shows that the copy
//! and the source then live apart.
//!
//! `cargo run --example checkpoint`

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use siftdb::{Db, Options};

fn key(n: u64) -> String {
    format!("n:{n:08}")
}

fn main() -> Result<(), siftdb::Error> {
    let root = std::env::temp_dir().join(format!("siftdb-checkpoint-{}", std::process::id()));
    let db = Db::open(root.join("live"), Options::default())?;

    // Keys go in one after another, so a consistent copy holds exactly the
    // first k of them for some k: a hole would mean a write was lost.
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (db, stop) = (db.clone(), Arc::clone(&stop));
        std::thread::spawn(move || -> Result<u64, siftdb::Error> {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                db.put(key(n), n.to_string())?;
                n += 1;
            }
            Ok(n)
        })
    };
    std::thread::sleep(Duration::from_millis(100));

    // The writer is not paused: the checkpoint flushes the memtable and
    // hard-links the tables, so it costs a flush, not a copy of the data.
    let copy_path = root.join("copy");
    db.checkpoint(&copy_path)?;
    stop.store(true, Ordering::Relaxed);
    let written = writer.join().expect("the writer thread panicked")?;

    let copy = Db::open(&copy_path, Options::default())?;
    let mut held = 0;
    for item in copy.prefix("n:") {
        let (k, _) = item?;
        assert_eq!(&k[..], key(held).as_bytes(), "the copy has a hole");
        held += 1;
    }
    println!("the copy holds keys 0..{held} of the {written} written: a prefix, no hole");

    // Two databases from here on: a write to one is not in the other.
    db.put("only in the source", "s")?;
    copy.put("only in the copy", "c")?;
    assert!(copy.get("only in the source")?.is_none());
    assert!(db.get("only in the copy")?.is_none());
    println!("a put to the source is not in the copy, and one to the copy not in the source");

    copy.close()?;
    db.close()?;
    std::fs::remove_dir_all(&root).ok();
    Ok(())
}
