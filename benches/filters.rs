//! Filter benchmarks. Each group answers one question, with the peer crates
//! (`xorf`, `fastbloom`) in the same group so ratios come from one run:
//!
//! - `build/N`: how many ns/key does each structure take to build, and does
//!   our binary fuse build beat xorf's (target ≤ 60 ns/key at 10^6)?
//! - `absent/N` and `present/N`: what does one `contains` cost? Does blocked
//!   Bloom beat fastbloom on absent keys (≥ 2× at 10^7: one cache miss
//!   instead of k)? Do our xor and fuse filters query as fast as xorf's?
//!
//! Space and false-positive rate are printed once per structure (to stderr)
//! before the timings; `siftdb bench filters` prints the same table.
//!
//! Run: `cargo bench --bench filters` (add `-- absent` to run one group).

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use siftdb::filter::{
    BinaryFuse8, BinaryFuse16, Bloom, CountingBloom, CuckooFilter, Filter, Ribbon, Xor8, Xor16,
};
use xorf::Filter as _;

mod common;
use common::{BPK, QuerySet, blocked_build, fastbloom_build, keys};

const SIZES: [usize; 2] = [1_000_000, 10_000_000];
const BATCH: usize = 1024;

fn bloom_build(k: &[u64]) -> Bloom {
    let mut f = Bloom::new(k.len(), BPK);
    for &h in k {
        f.insert(h);
    }
    f
}

fn counting_build(k: &[u64]) -> CountingBloom {
    let mut f = CountingBloom::new(k.len(), BPK);
    for &h in k {
        f.insert(h);
    }
    f
}

fn cuckoo_build(k: &[u64]) -> CuckooFilter {
    let mut f = CuckooFilter::new(k.len(), 12).expect("valid width");
    for &h in k {
        f.insert(h).expect("sized for the key count");
    }
    f
}

fn report(name: &str, n: usize, bytes: usize, contains: impl Fn(u64) -> bool, absent: &[u64]) {
    let fp = absent.iter().filter(|&&h| contains(h)).count();
    eprintln!(
        "{name:>14} n={n:>9}: {:6.3} bits/key, fpr {:.4}%",
        bytes as f64 * 8.0 / n as f64,
        fp as f64 * 100.0 / absent.len() as f64
    );
}

fn build(c: &mut Criterion) {
    for &n in &SIZES {
        let present = keys(0, n);
        let mut g = c.benchmark_group(format!("build/{n}"));
        g.sample_size(10).throughput(Throughput::Elements(n as u64));
        g.bench_function("siftdb::BinaryFuse8", |b| b.iter(|| BinaryFuse8::build(black_box(&present))));
        g.bench_function("xorf::BinaryFuse8", |b| {
            b.iter(|| xorf::BinaryFuse8::try_from(black_box(&present)).expect("builds"))
        });
        g.bench_function("siftdb::Xor8", |b| b.iter(|| Xor8::build(black_box(&present))));
        g.bench_function("xorf::Xor8", |b| b.iter(|| xorf::Xor8::from(black_box(&present))));
        g.bench_function("siftdb::BinaryFuse16", |b| b.iter(|| BinaryFuse16::build(black_box(&present))));
        g.bench_function("siftdb::Xor16", |b| b.iter(|| Xor16::build(black_box(&present))));
        g.bench_function("siftdb::Ribbon7", |b| b.iter(|| Ribbon::build(black_box(&present), 7.0)));
        g.bench_function("siftdb::BlockedBloom", |b| b.iter(|| blocked_build(black_box(&present))));
        g.bench_function("fastbloom", |b| b.iter(|| fastbloom_build(black_box(&present))));
        g.bench_function("siftdb::Bloom", |b| b.iter(|| bloom_build(black_box(&present))));
        if n <= 1_000_000 {
            g.bench_function("siftdb::CountingBloom", |b| b.iter(|| counting_build(black_box(&present))));
            g.bench_function("siftdb::CuckooFilter12", |b| b.iter(|| cuckoo_build(black_box(&present))));
        }
        g.finish();
    }
}

fn run<M: criterion::measurement::Measurement>(
    g: &mut criterion::BenchmarkGroup<'_, M>,
    name: &str,
    probes: &[u64],
    contains: impl Fn(u64) -> bool,
) {
    let mut at = 0;
    g.bench_function(BenchmarkId::from_parameter(name), |b| {
        b.iter(|| {
            at = (at + BATCH) % probes.len();
            probes[at..at + BATCH].iter().filter(|&&h| contains(black_box(h))).count()
        });
    });
}

/// Times `contains` over batches of `BATCH` hashes, for present or absent keys.
fn query(c: &mut Criterion, group: &str, absent_keys: bool) {
    for &n in &SIZES {
        let present = keys(0, n);
        let probes = if absent_keys {
            keys(1 << 40, BATCH * 64)
        } else {
            present.iter().step_by(7).take(BATCH * 64).copied().collect()
        };
        let fpr_probes = keys(1 << 41, 1_000_000);
        let mut g = c.benchmark_group(format!("{group}/{n}"));
        g.throughput(Throughput::Elements(BATCH as u64));
        let QuerySet { fuse8, xorf_fuse8, xor8, xorf_xor8, blocked, fastbloom } = QuerySet::new(&present);
        let bloom = bloom_build(&present);
        let ribbon = Ribbon::build(&present, 7.0).expect("builds");
        if absent_keys {
            report("Ribbon7", n, ribbon.size_bytes(), |h| ribbon.contains(h), &fpr_probes);
            report("BinaryFuse8", n, fuse8.size_bytes(), |h| fuse8.contains(h), &fpr_probes);
            report("Xor8", n, xor8.size_bytes(), |h| xor8.contains(h), &fpr_probes);
            report("BlockedBloom", n, blocked.size_bytes(), |h| blocked.contains(h), &fpr_probes);
            report("fastbloom", n, fastbloom.num_bits() / 8, |h| fastbloom.contains_hash(h), &fpr_probes);
            report("Bloom", n, bloom.size_bytes(), |h| bloom.contains(h), &fpr_probes);
        }
        run(&mut g, "siftdb::BinaryFuse8", &probes, |h| fuse8.contains(h));
        run(&mut g, "xorf::BinaryFuse8", &probes, |h| xorf_fuse8.contains(&h));
        run(&mut g, "siftdb::Xor8", &probes, |h| xor8.contains(h));
        run(&mut g, "xorf::Xor8", &probes, |h| xorf_xor8.contains(&h));
        run(&mut g, "siftdb::BlockedBloom", &probes, |h| blocked.contains(h));
        run(&mut g, "fastbloom", &probes, |h| fastbloom.contains_hash(h));
        run(&mut g, "siftdb::Bloom", &probes, |h| bloom.contains(h));
        run(&mut g, "siftdb::Ribbon7", &probes, |h| ribbon.contains(h));
        g.finish();
    }
}

fn absent(c: &mut Criterion) {
    query(c, "absent", true);
}

fn present(c: &mut Criterion) {
    query(c, "present", false);
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(std::time::Duration::from_millis(500)).measurement_time(std::time::Duration::from_secs(2));
    targets = build, absent, present
}
criterion_main!(benches);
