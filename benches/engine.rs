//! Does siftdb answer point lookups, hits and misses, at least as fast as
//! fjall, at equal filter bits per key?
//!
//! Both engines load the same 200,000 keys (16-byte keys, 100-byte values,
//! random order), are flushed and fully compacted, and then answer the same
//! seeded sequence of present-key and absent-key lookups. Both use a
//! 10 bits/key Bloom filter on every level and no compression.
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

fn lookups(present: bool) -> Vec<[u8; 16]> {
    (0..BATCH as u64 * 64)
        .map(|i| if present { key(mix(i) % KEYS) } else { key(KEYS + mix(i) % KEYS) })
        .collect()
}

fn lookups_bench(c: &mut Criterion) {
    let value = [b'v'; 100];
    let dir = tempfile::tempdir().expect("temp dir");

    let sift = Db::open(
        dir.path().join("siftdb"),
        Options {
            filter_policy: FilterPolicy::uniform(FilterKind::Bloom { bits_per_key: 10.0 }),
            hash_salt: Some(1),
            sync: false,
            ..Options::default()
        },
    )
    .expect("open siftdb");
    let mut batch = WriteBatch::new();
    for i in 0..KEYS {
        batch.put(key(mix(i) % KEYS), value);
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
    for i in 0..KEYS {
        ks.insert(key(mix(i) % KEYS), value).expect("insert");
    }
    ks.rotate_memtable_and_wait().expect("flush");
    ks.major_compact().expect("compact");

    for (name, present) in [("present", true), ("absent", false)] {
        let probes = lookups(present);
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
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(std::time::Duration::from_millis(500)).measurement_time(std::time::Duration::from_secs(3));
    targets = lookups_bench
}
criterion_main!(benches);
