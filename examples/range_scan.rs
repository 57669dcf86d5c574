//! Range filters: short scans of time ("anything in this second?") that
//! skip, without opening them, the tables holding no key in the range.
//!
//! `cargo run --example range_scan`

use siftdb::{Db, Options, RangeFilterPolicy};

fn main() -> Result<(), siftdb::Error> {
    let path = std::env::temp_dir().join(format!("siftdb-range-{}", std::process::id()));
    // Keys are event times in milliseconds, 8 bytes big-endian: the
    // default key image (the first 8 bytes) is the time itself.
    let opts = Options { range_filter: Some(RangeFilterPolicy::default()), ..Options::default() };
    let db = Db::open(&path, opts)?;
    let day_ms: u64 = 86_400_000;
    // Four tables, each a day of sparse events (one every ~17 minutes,
    // spread by a hash), whose key ranges overlap: only a range filter can
    // tell them apart inside that day.
    for table in 0..4u64 {
        for i in 0..5000u64 {
            let t = (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ table) % day_ms;
            db.put(t.to_be_bytes(), format!("event {i} of batch {table}"))?;
        }
        db.flush()?;
    }
    // The first hour, second by second. Most seconds hold no event, and
    // each table's range filter says so: a range of 1,000 values is 16
    // probes of buckets of 64 ms, sized from the table's own density. (A
    // range much wider than the gaps between keys is answered "maybe"
    // unprobed: it is rarely empty anyway.)
    let before = db.stats();
    let mut empty = 0;
    for s in 0..3600u64 {
        let (a, b) = ((s * 1000).to_be_bytes(), ((s + 1) * 1000).to_be_bytes());
        if db.range(a.as_slice()..b.as_slice()).next().is_none() {
            empty += 1;
        }
    }
    // Summed over the levels (compaction may have merged the four tables).
    let levels = db.stats().since(&before).levels;
    let sum = |f: fn(&siftdb::LevelStats) -> u64| levels.iter().map(f).sum::<u64>();
    println!(
        "{empty} of 3600 seconds empty; {} of {} table probes skipped, {} tables opened",
        sum(|l| l.range_skipped),
        sum(|l| l.range_probes),
        sum(|l| l.scan_tables_opened)
    );
    db.close()?;
    std::fs::remove_dir_all(&path).ok();
    Ok(())
}
