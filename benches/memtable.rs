//! Memtable benchmarks: a 64 MiB memtable's worth of puts (300,000 16-byte
//! keys in random order, 100-byte values, one batch each as the engine
//! applies them), gets of present and absent keys, a full scan (what a
//! flush reads) and the drop that frees it all (what a flush pays last).
//!
//! Quick run: `cargo bench --bench memtable -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;
use std::ops::Bound;
use std::sync::Arc;

#[path = "common/dbbench_keys.rs"]
mod dbbench_keys;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use siftdb::WriteBatch;
use siftdb::memtable::Memtable;

const N: usize = 300_000;
const VALUE_BYTES: usize = 100;
const SEE_ALL: u64 = (1 << 56) - 1;

fn fill(keys: &[[u8; 16]]) -> Arc<Memtable> {
    let m = Arc::new(Memtable::new());
    let value = [7u8; VALUE_BYTES];
    let mut batch = WriteBatch::new();
    for (seq, k) in (1..).zip(keys) {
        batch.clear();
        batch.put(k, value);
        m.apply_batch(seq, &batch).unwrap();
    }
    m
}

fn memtable(c: &mut Criterion) {
    let present = dbbench_keys::keys(N, b'0');
    let absent = dbbench_keys::keys(N, b'1');
    let mut g = c.benchmark_group("memtable");
    g.sample_size(10);
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("put", |b| b.iter_batched(|| (), |()| fill(&present), BatchSize::PerIteration));
    let m = fill(&present);
    g.bench_function("get_present", |b| {
        b.iter(|| present.iter().filter(|k| m.get(k.as_slice(), SEE_ALL).is_some()).count())
    });
    g.bench_function("get_absent", |b| {
        b.iter(|| absent.iter().filter(|k| m.get(k.as_slice(), SEE_ALL).is_some()).count())
    });
    g.bench_function("scan", |b| b.iter(|| m.range(Bound::Unbounded, Bound::Unbounded, SEE_ALL).count()));
    g.bench_function("drop", |b| {
        b.iter_batched(|| fill(&present), |m| drop(black_box(m)), BatchSize::PerIteration)
    });
    g.finish();
}

criterion_group!(benches, memtable);
criterion_main!(benches);
