//! Table benchmarks: build throughput per filter kind (keys/s and MB/s), and point lookups of
//! present and absent keys with and without a filter.
//!
//! Quick run: `cargo bench --bench table -- --warm-up-time 1 --measurement-time 2`

use std::hint::black_box;
use std::path::Path;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use siftdb::ValueKind;
use siftdb::filter::FilterKind;
use siftdb::table::{Table, TableBuilder, TableOptions};

const N: u64 = 50_000;
const VALUE_BYTES: usize = 100;

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
    let value = [7u8; VALUE_BYTES];
    for i in 0..N {
        b.add(&key(i), i + 1, ValueKind::Value, &value).unwrap();
    }
    b.finish().unwrap();
}

/// User bytes (key + value) one build writes.
fn input_bytes() -> u64 {
    (0..N).map(|i| key(i).len() as u64 + VALUE_BYTES as u64).sum()
}

/// Build time per filter kind, reported as keys/s (`table_build/keys`) and
/// as MB/s of user data (`table_build/bytes`): criterion gives one
/// throughput unit per group, so the two are separate groups.
fn bench_build(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    for (unit, throughput) in [("keys", Throughput::Elements(N)), ("bytes", Throughput::Bytes(input_bytes()))]
    {
        let mut g = c.benchmark_group(format!("table_build/{unit}"));
        g.sample_size(10);
        g.throughput(throughput);
        for &kind in KINDS {
            let path = dir.path().join("build.sst");
            g.bench_function(BenchmarkId::from_parameter(kind), |b| b.iter(|| build(&path, kind)));
        }
        g.finish();
    }
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
