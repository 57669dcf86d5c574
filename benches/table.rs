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

/// Filter kinds benchmarked: none, then every kind a table can carry.
fn kinds() -> impl Iterator<Item = FilterKind> {
    std::iter::once(FilterKind::None).chain(FilterKind::ALL.iter().copied())
}

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
        for kind in kinds() {
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
    for kind in kinds() {
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

/// Reading one data block backwards (issue 32): decoding the whole block
/// once and walking it back (what `TableRevIter` does), against decoding
/// one restart run at a time from the last, for the last 1, 8 and all
/// entries. A 4 KiB block of 16-byte keys and 100-byte values, restart
/// every 16 entries.
fn bench_block_reverse(c: &mut Criterion) {
    use siftdb::table::block::{Block, BlockIter};
    use siftdb::table::block_builder::BlockBuilder;
    use siftdb::table::internal_key::internal_key;

    let mut b = BlockBuilder::new(16);
    let mut i = 0u64;
    while b.estimated_size() < 4096 {
        b.add(&internal_key(&key(i), 7, ValueKind::Value), &[b'v'; VALUE_BYTES]);
        i += 1;
    }
    let block = Block::new(bytes::Bytes::from(b.finish())).expect("block");
    let entry = |it: &BlockIter| (bytes::Bytes::copy_from_slice(it.key()), it.value());
    let whole = |take: usize| {
        let mut it = block.cursor();
        it.seek_to_first().expect("first");
        let mut all = Vec::new();
        while it.valid() {
            all.push(entry(&it));
            it.advance().expect("advance");
        }
        all.into_iter().rev().take(take).count()
    };
    let by_run = |take: usize| {
        let mut it = block.cursor();
        let mut run = Vec::new();
        let mut got = 0;
        for r in (0..block.num_restarts()).rev() {
            run.clear();
            it.seek_to_restart(r).expect("restart");
            loop {
                run.push(entry(&it));
                if it.ends_run(r).expect("run end") {
                    break;
                }
                it.advance().expect("advance");
            }
            while let Some(e) = run.pop() {
                black_box(e);
                got += 1;
                if got == take {
                    return got;
                }
            }
        }
        got
    };
    let mut g = c.benchmark_group(format!("block_reverse/{i}"));
    for take in [1, 8, usize::MAX] {
        let label = if take == usize::MAX { "all".to_string() } else { take.to_string() };
        g.bench_function(BenchmarkId::new("whole", &label), |b| b.iter(|| whole(black_box(take))));
        g.bench_function(BenchmarkId::new("by_run", &label), |b| b.iter(|| by_run(black_box(take))));
    }
    g.finish();
}

criterion_group!(benches, bench_build, bench_get, bench_block_reverse);
criterion_main!(benches);
