//! Per-key expiry with a compaction filter: each value starts with the
//! second it expires (8 bytes, big-endian). Reads hide an expired value at
//! once; compaction drops it for good the next time it rewrites the key.
//!
//! `cargo run --example expiry`

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use siftdb::{CompactionFilter, Db, Decision, Options};

/// The expiry clock, in seconds. A real application reads the system
/// clock; this one is moved by hand so the example runs instantly.
static NOW: AtomicU64 = AtomicU64::new(1_000);

/// A value that expires at `at`.
fn expiring(at: u64, payload: &str) -> Vec<u8> {
    let mut v = at.to_be_bytes().to_vec();
    v.extend_from_slice(payload.as_bytes());
    v
}

/// The payload of `value`, or `None` once it has expired.
fn live(value: &[u8]) -> Option<&[u8]> {
    let (at, payload) = value.split_first_chunk::<8>()?;
    (u64::from_be_bytes(*at) > NOW.load(Ordering::Relaxed)).then_some(payload)
}

/// Removes expired values whenever compaction rewrites them.
#[derive(Debug)]
struct Expiry;

impl CompactionFilter for Expiry {
    fn filter(&self, _level: usize, _key: &[u8], value: &[u8]) -> Decision {
        if live(value).is_some() { Decision::Keep } else { Decision::Remove }
    }
}

fn get(db: &Db, key: &str) -> Result<Option<String>, siftdb::Error> {
    let value = db.get(key)?;
    Ok(value.as_deref().and_then(live).map(|p| String::from_utf8_lossy(p).into_owned()))
}

fn main() -> Result<(), siftdb::Error> {
    let dir = std::env::temp_dir().join(format!("siftdb-expiry-{}", std::process::id()));
    let opts = Options { compaction_filter: Some(Arc::new(Expiry)), ..Options::default() };
    let db = Db::open(&dir, opts)?;
    for i in 0..1_000u64 {
        // Sessions: the odd ones expire at second 1,100, the even ones at 2,000.
        let at = if i % 2 == 1 { 1_100 } else { 2_000 };
        db.put(format!("session:{i:04}"), expiring(at, &format!("user {i}")))?;
    }
    db.flush()?;
    println!("at second 1,000: session:0001 = {:?}", get(&db, "session:0001")?);

    NOW.store(1_500, Ordering::Relaxed);
    println!("at second 1,500: session:0001 = {:?} (hidden by the read)", get(&db, "session:0001")?);
    let stored =
        |db: &Db| (0..1_000).filter(|i| db.get(format!("session:{i:04}")).ok().flatten().is_some()).count();
    println!("stored before compaction: {}", stored(&db));

    // Compaction rewrites level 0 into level 1 and asks the filter.
    db.compact()?;
    println!(
        "stored after compaction: {} (the filter removed {})",
        stored(&db),
        db.stats().compaction_filter_removed
    );
    assert_eq!(stored(&db), 500);
    assert_eq!(get(&db, "session:0002")?.as_deref(), Some("user 2"));
    db.close()?;
    std::fs::remove_dir_all(&dir).ok();
    Ok(())
}
