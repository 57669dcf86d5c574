//! The newest events first: keys that sort by time, read backwards.
//!
//! Every iterator runs both ways (`.rev()`, or `next` and `next_back` mixed
//! on one iterator), so "the last ten", "the last key before X" and paging
//! backwards need no full scan.
//!
//! `cargo run --example newest_first`

use siftdb::{Db, Options};

fn main() -> Result<(), siftdb::Error> {
    let path = std::env::temp_dir().join(format!("siftdb-newest-{}", std::process::id()));
    let db = Db::open(&path, Options::default())?;
    // Big-endian timestamps sort in time order.
    for t in 0..100u64 {
        let key = [&b"event:"[..], &(1_700_000_000 + t * 60).to_be_bytes()].concat();
        db.put(key, format!("event {t}"))?;
    }
    db.put("other:x", "not an event")?;
    db.flush()?; // some events in a table, the rest in the memtable: one answer
    for t in 100..110u64 {
        let key = [&b"event:"[..], &(1_700_000_000 + t * 60).to_be_bytes()].concat();
        db.put(key, format!("event {t}"))?;
    }

    println!("the three newest events:");
    for item in db.prefix("event:").rev().take(3) {
        let (_, value) = item?;
        println!("  {}", String::from_utf8_lossy(&value));
    }

    // The last event before a moment: a reverse range from it.
    let moment = [&b"event:"[..], &(1_700_000_000u64 + 50 * 60).to_be_bytes()].concat();
    if let Some(item) = db.range(&b"event:"[..]..&moment[..]).next_back() {
        println!("last before event 50: {}", String::from_utf8_lossy(&item?.1));
    }

    // Both ends of one iterator: oldest and newest together.
    let mut events = db.prefix("event:");
    let (oldest, newest) = (events.next().transpose()?, events.next_back().transpose()?);
    if let (Some((_, o)), Some((_, n))) = (oldest, newest) {
        println!("oldest {}, newest {}", String::from_utf8_lossy(&o), String::from_utf8_lossy(&n));
    }
    db.close()?;
    std::fs::remove_dir_all(&path).ok();
    Ok(())
}
