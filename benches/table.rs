//! Table benchmarks: build throughput per filter kind, and point lookups of
//! present and absent keys with and without a filter.
//!
//! Quick run: `cargo bench --bench table -- --warm-up-time 1 --measurement-time 2`

use std::hint::black_box;
use std::path::Path;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use siftdb::filter::FilterKind;
use siftdb::table::{Table, TableBuilder, TableOptions, ValueKind};

const N: u64 = 50_000;

/// Filter kinds benchmarked.
const KINDS: &[FilterKind] = &[
    FilterKind::None,
    FilterKind::Bloom { bits_per_key: 10.0 },
    FilterKind::BlockedBloom { bits_per_key: 10.0 },
    FilterKind::Xor8,
    FilterKind::Xor16,
    FilterKind::BinaryFuse8,
    FilterKind::BinaryFuse16,
];

fn key(i: u64) -> Vec<u8> {
    format!("bench-key-{:010}", i * 2).into_bytes()
}

fn build(path: &Path, filter: FilterKind) {
    let opts = TableOptions { filter, ..TableOptions::default() };
    let mut b = TableBuilder::create(path, opts).unwrap();
    let value = [7u8; 100];
    for i in 0..N {
        b.add(&key(i), i + 1, ValueKind::Value, &value).unwrap();
    }
    b.finish().unwrap();
}

fn bench_build(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut g = c.benchmark_group("table_build");
    g.sample_size(10);
    g.throughput(Throughput::Elements(N));
    for &kind in KINDS {
        let path = dir.path().join("build.sst");
        g.bench_function(BenchmarkId::from_parameter(kind), |b| b.iter(|| build(&path, kind)));
    }
    g.finish();
}

fn bench_get(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut g = c.benchmark_group("table_get");
    g.throughput(Throughput::Elements(1));
    for &kind in KINDS {
        let path = dir.path().join(format!("{kind}.sst"));
        build(&path, kind);
        let table = Table::open_path(&path).unwrap();
        let present: Vec<Vec<u8>> = (0..1024).map(|i| key(i * 37 % N)).collect();
        let absent: Vec<Vec<u8>> =
            (0..1024).map(|i| format!("bench-key-{:010}", (i * 37 % N) * 2 + 1).into_bytes()).collect();
        for (name, keys) in [("present", &present), ("absent", &absent)] {
            let mut i = 0usize;
            g.bench_function(BenchmarkId::new(name, kind), |b| {
                b.iter(|| {
                    i = (i + 1) & 1023;
                    black_box(table.get(&keys[i], u64::MAX).unwrap())
                });
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench_build, bench_get);
criterion_main!(benches);
