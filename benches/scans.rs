//! Short scans on a live database (issue 71): scans of 10 pairs from
//! random keys over 200,000 keys (db_bench's layout, 100-byte values) that
//! are all still in the memtable, and over the same keys flushed to one
//! level-0 table; and the memtable's own range read, without the engine
//! around it. Each iteration is one scan, from the next of a fixed sequence
//! of random start keys.
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
    db.flush().unwrap();
    g.bench_function("db/table", |b| {
        b.iter(|| db.range(next.next().unwrap().as_slice()..).take(SCAN).count());
    });
    g.finish();
}

criterion_group!(benches, scans);
criterion_main!(benches);
