//! Short scans on a live database (issue 71): scans of 10 pairs from
//! random keys over 200,000 keys (db_bench's layout, 100-byte values) that
//! are all still in the memtable, and over the same keys flushed to one
//! level-0 table; and the memtable's own range read, without the engine
//! around it; and scans of 10 that each pass a hot key with 1,000 versions
//! in the memtable, forward and in reverse. Each iteration is one scan,
//! from the next of a fixed sequence of start (or end) keys.
//!
//! Quick run: `cargo bench --bench scans -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;
use std::ops::Bound;

#[path = "common/dbbench_keys.rs"]
mod dbbench_keys;

use criterion::{Criterion, criterion_group, criterion_main};
use siftdb::{Db, Options, WriteBatch};

const N: usize = 200_000;
const SCAN: usize = 10;
const SEE_ALL: u64 = (1 << 56) - 1;

fn filled(dir: &std::path::Path, keys: &[[u8; 16]]) -> Db {
    let db = Db::open(dir, Options::default()).unwrap();
    for chunk in keys.chunks(1000) {
        let mut batch = WriteBatch::new();
        for k in chunk {
            batch.put(k, [7u8; 100]);
        }
        db.write(batch).unwrap();
    }
    db
}

fn scans(c: &mut Criterion) {
    let keys = dbbench_keys::keys(N, b'0');
    let mut g = c.benchmark_group("scan10");
    let dir = tempfile::tempdir().unwrap();
    let db = filled(dir.path(), &keys);
    let mut next = keys.iter().cycle();
    g.bench_function("db/memtable", |b| {
        b.iter(|| db.range(next.next().unwrap().as_slice()..).take(SCAN).count());
    });
    let m = std::sync::Arc::new(siftdb::memtable::Memtable::new());
    let mut batch = WriteBatch::new();
    for (seq, k) in (1..).zip(&keys) {
        batch.clear();
        batch.put(k, [7u8; 100]);
        m.apply_batch(seq, &batch).unwrap();
    }
    g.bench_function("memtable_range", |b| {
        b.iter(|| {
            let from = next.next().unwrap().as_slice();
            black_box(m.range(Bound::Included(from), Bound::Unbounded, SEE_ALL).take(SCAN).count())
        });
    });
    // Hot keys: every 2,000th key overwritten 1,000 times, all in the
    // memtable; each scan starts a few keys before one, so it passes one
    // hot key's versions.
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    let hot: Vec<[u8; 16]> = sorted.iter().step_by(2000).copied().collect();
    let hot_dir = tempfile::tempdir().unwrap();
    let hot_db = filled(hot_dir.path(), &keys);
    for round in 0..1000u32 {
        let mut batch = WriteBatch::new();
        for k in &hot {
            batch.put(k, round.to_be_bytes());
        }
        hot_db.write(batch).unwrap();
    }
    let starts: Vec<&[u8; 16]> = sorted.iter().skip(1995).step_by(2000).collect();
    let mut next_hot = starts.iter().cycle();
    g.bench_function("db/memtable_hot_key", |b| {
        b.iter(|| hot_db.range(next_hot.next().unwrap().as_slice()..).take(SCAN).count());
    });
    // The same from the back: each reverse scan ends a few keys past a
    // hot key, so it meets the key's versions oldest first.
    let ends: Vec<&[u8; 16]> = sorted.iter().skip(5).step_by(2000).collect();
    let mut next_end = ends.iter().cycle();
    g.bench_function("db/memtable_hot_key_rev", |b| {
        b.iter(|| hot_db.range(..=next_end.next().unwrap().as_slice()).rev().take(SCAN).count());
    });
    db.flush().unwrap();
    g.bench_function("db/table", |b| {
        b.iter(|| db.range(next.next().unwrap().as_slice()..).take(SCAN).count());
    });
    g.finish();
}

criterion_group!(benches, scans);
criterion_main!(benches);
