//! Does siftdb answer point lookups, hits and misses, at least as fast as
//! fjall, at equal filter bits per key? And how fast does it load?
//!
//! `get-present` / `get-absent`: both engines load the same 200,000 distinct
//! keys (16-byte keys, 100-byte values, a seeded random permutation of key
//! numbers `0..200,000`), are flushed and fully compacted, and then answer
//! the same seeded sequence of present-key (numbers `< 200,000`, all loaded)
//! and absent-key (numbers `≥ 200,000`, never loaded) lookups. Both use a
//! 10 bits/key Bloom filter on every level and no compression.
//!
//! `fillrandom`: each iteration opens a fresh database and puts 50,000
//! distinct keys in random order, one put per write, without fsync (siftdb
//! `sync: false`; fjall's default, which does not fsync per write either).
//! Only the puts are timed: opening, and the flush and compaction that follow,
//! are not (the `siftdb bench` tool reports its load and settle separately).
//!
//! `scan-forward-100` / `scan-reverse-100`: on the same loaded databases,
//! 100 pairs from a seeded random key, ascending from it or descending
//! below it (values read in both engines).
//!
//! Run: `cargo bench --bench engine`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use fjall::KeyspaceCreateOptions;
use fjall::config::{BloomConstructionPolicy, FilterPolicy as FjallFilterPolicy, FilterPolicyEntry};
use siftdb::policy::FilterPolicy;
use siftdb::{Db, FilterKind, Options, WriteBatch};

const KEYS: u64 = 200_000;
const BATCH: usize = 256;
const FILL_KEYS: u64 = 50_000;
/// Pairs per short scan.
const SCAN: usize = 100;

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn key(i: u64) -> [u8; 16] {
    let v = mix(i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut out = [0u8; 16];
    for (j, b) in out.iter_mut().enumerate() {
        let n = ((v >> (60 - 4 * j)) & 0xf) as u8;
        *b = if n < 10 { b'0' + n } else { b'a' + n - 10 };
    }
    out
}

/// Key numbers `0..n` in a seeded random order (Fisher–Yates): every key
/// exactly once.
fn permutation(n: u64, seed: u64) -> Vec<u64> {
    let mut order: Vec<u64> = (0..n).collect();
    let mut state = seed;
    for i in (1..order.len()).rev() {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let j = ((u128::from(mix(state)) * (i as u128 + 1)) >> 64) as usize;
        order.swap(i, j);
    }
    order
}

fn lookups(present: bool) -> Vec<[u8; 16]> {
    (0..BATCH as u64 * 64)
        .map(|i| if present { key(mix(i) % KEYS) } else { key(KEYS + mix(i) % KEYS) })
        .collect()
}

fn lookups_bench(c: &mut Criterion) {
    let value = [b'v'; 100];
    let dir = tempfile::tempdir().expect("temp dir");
    let order = permutation(KEYS, 7);

    let sift = Db::open(
        dir.path().join("siftdb"),
        Options {
            filter_policy: Some(FilterPolicy::uniform(FilterKind::Bloom { bits_per_key: 10.0 })),
            hash_salt: Some(1),
            sync: false,
            ..Options::default()
        },
    )
    .expect("open siftdb");
    let mut batch = WriteBatch::new();
    for &i in &order {
        batch.put(key(i), value);
        if batch.len() == 1000 {
            sift.write(std::mem::take(&mut batch)).expect("write");
        }
    }
    sift.write(batch).expect("write");
    sift.flush().expect("flush");
    sift.compact().expect("compact");

    let fj = fjall::Database::builder(dir.path().join("fjall")).open().expect("open fjall");
    let ks = fj
        .keyspace("bench", || {
            KeyspaceCreateOptions::default().filter_policy(FjallFilterPolicy::all(FilterPolicyEntry::Bloom(
                BloomConstructionPolicy::BitsPerKey(10.0),
            )))
        })
        .expect("keyspace");
    for &i in &order {
        ks.insert(key(i), value).expect("insert");
    }
    ks.rotate_memtable_and_wait().expect("flush");
    ks.major_compact().expect("compact");

    for (name, present) in [("present", true), ("absent", false)] {
        let probes = lookups(present);
        // Every present key was loaded and no absent one was, in both engines.
        for k in &probes {
            assert_eq!(sift.get(k).expect("get").is_some(), present);
            assert_eq!(ks.get(k).expect("get").is_some(), present);
        }
        let mut g = c.benchmark_group(format!("get-{name}/{KEYS}"));
        g.throughput(Throughput::Elements(BATCH as u64));
        let mut at = 0;
        g.bench_function("siftdb", |b| {
            b.iter(|| {
                at = (at + BATCH) % probes.len();
                probes[at..at + BATCH]
                    .iter()
                    .filter(|k| sift.get(black_box(k.as_slice())).expect("get").is_some())
                    .count()
            });
        });
        let mut at = 0;
        g.bench_function("fjall", |b| {
            b.iter(|| {
                at = (at + BATCH) % probes.len();
                probes[at..at + BATCH]
                    .iter()
                    .filter(|k| ks.get(black_box(k.as_slice())).expect("get").is_some())
                    .count()
            });
        });
        g.finish();
    }

    // Short scans from seeded random points, forwards and backwards, in
    // both engines: the same keys in each direction.
    let starts: Vec<[u8; 16]> = (0..256u64).map(|i| key(mix(i ^ 0x5eed) % KEYS)).collect();
    for k in starts.iter().take(8) {
        let fwd = sift.range(&k[..]..).take(SCAN).count();
        assert_eq!(fwd, ks.range(&k[..]..).take(SCAN).count());
        assert_eq!(
            sift.range(..&k[..]).rev().take(SCAN).count(),
            ks.range(..&k[..]).rev().take(SCAN).count()
        );
    }
    for (name, reverse) in [("forward", false), ("reverse", true)] {
        let mut g = c.benchmark_group(format!("scan-{name}-{SCAN}/{KEYS}"));
        g.throughput(Throughput::Elements(SCAN as u64));
        let mut at = 0;
        g.bench_function("siftdb", |b| {
            b.iter(|| {
                at = (at + 1) % starts.len();
                let k = &starts[at][..];
                let it = if reverse { sift.range(..k) } else { sift.range(k..) };
                if reverse {
                    it.rev().take(SCAN).filter_map(Result::ok).count()
                } else {
                    it.take(SCAN).filter_map(Result::ok).count()
                }
            });
        });
        let mut at = 0;
        g.bench_function("fjall", |b| {
            b.iter(|| {
                at = (at + 1) % starts.len();
                let k = &starts[at][..];
                if reverse {
                    ks.range(..k).rev().take(SCAN).filter_map(|g| g.into_inner().ok()).count()
                } else {
                    ks.range(k..).take(SCAN).filter_map(|g| g.into_inner().ok()).count()
                }
            });
        });
        g.finish();
    }
}

fn fill_bench(c: &mut Criterion) {
    let value = [b'v'; 100];
    let keys: Vec<[u8; 16]> = permutation(FILL_KEYS, 11).into_iter().map(key).collect();
    let mut g = c.benchmark_group(format!("fillrandom/{FILL_KEYS}"));
    g.throughput(Throughput::Elements(FILL_KEYS));
    g.sample_size(10);
    g.bench_function("siftdb", |b| {
        b.iter_custom(|iters| {
            let mut total = std::time::Duration::ZERO;
            for _ in 0..iters {
                let dir = tempfile::tempdir().expect("temp dir");
                let db = Db::open(
                    dir.path(),
                    Options {
                        filter_policy: Some(FilterPolicy::uniform(FilterKind::Bloom { bits_per_key: 10.0 })),
                        sync: false,
                        ..Options::default()
                    },
                )
                .expect("open siftdb");
                let start = std::time::Instant::now();
                for k in &keys {
                    db.put(black_box(k), value).expect("put");
                }
                total += start.elapsed();
                db.close().expect("close");
            }
            total
        });
    });
    g.bench_function("fjall", |b| {
        b.iter_custom(|iters| {
            let mut total = std::time::Duration::ZERO;
            for _ in 0..iters {
                let dir = tempfile::tempdir().expect("temp dir");
                let fj = fjall::Database::builder(dir.path()).open().expect("open fjall");
                let ks = fj
                    .keyspace("bench", || {
                        KeyspaceCreateOptions::default().filter_policy(FjallFilterPolicy::all(
                            FilterPolicyEntry::Bloom(BloomConstructionPolicy::BitsPerKey(10.0)),
                        ))
                    })
                    .expect("keyspace");
                let start = std::time::Instant::now();
                for k in &keys {
                    ks.insert(black_box(k), value).expect("insert");
                }
                total += start.elapsed();
            }
            total
        });
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(std::time::Duration::from_millis(500)).measurement_time(std::time::Duration::from_secs(3));
    targets = lookups_bench, fill_bench
}
criterion_main!(benches);
