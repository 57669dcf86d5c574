//! `siftdb bench filters`: every filter structure on the same key set.

use std::hint::black_box;
use std::time::Instant;

use serde_json::json;
use siftdb::filter::{
    BinaryFuse8, BinaryFuse16, BlockedBloom, Bloom, CountingBloom, CuckooFilter, Filter, Ribbon, Xor8, Xor16,
    hash_key,
};

use crate::Outcome;
use crate::numbers;
use crate::output;

/// Options of `siftdb bench filters`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Keys each filter is built from (1 to 10^8).
    #[arg(long, default_value_t = 1_000_000, value_parser = numbers::count_usize(1, numbers::MAX_FILTER_BENCH_KEYS))]
    keys: usize,
    /// Absent keys probed to measure the false-positive rate (1 to 10^8; default: as many as --keys).
    #[arg(long, value_parser = numbers::count_usize(1, numbers::MAX_PROBES))]
    probes: Option<usize>,
    /// Bits per key for the Bloom variants (1 to 64).
    #[arg(long, default_value_t = 10.0, value_parser = numbers::bits_per_key, allow_hyphen_values = true)]
    bits_per_key: f64,
    /// Seed for the key hashes.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Print one JSON document instead of a table.
    #[arg(long)]
    json: bool,
}

/// One structure's figures.
struct Row {
    name: String,
    bits_per_key: f64,
    fpr: f64,
    theoretical_fpr: f64,
    build_ns_per_key: f64,
    present_ns: f64,
    absent_ns: f64,
    /// Absent keys through `contains_batch`, 1024 at a time (the trait's
    /// default loop for every filter but Ribbon, which checks the CPU's
    /// features once a batch; timed so that an override shows, and its
    /// answers checked against `contains`).
    absent_batch_ns: f64,
}

fn ns_per(elapsed: std::time::Duration, n: usize) -> f64 {
    elapsed.as_secs_f64() * 1e9 / n.max(1) as f64
}

fn measure<F: Filter>(
    name: &str,
    present: &[u64],
    absent: &[u64],
    build: impl FnOnce(&[u64]) -> Result<F, String>,
) -> Result<Row, String> {
    let start = Instant::now();
    let filter = build(present).map_err(|e| format!("{name}: {e}"))?;
    let build_ns_per_key = ns_per(start.elapsed(), present.len());

    let start = Instant::now();
    let mut hits = 0usize;
    for &h in present {
        hits += usize::from(filter.contains(black_box(h)));
    }
    let present_ns = ns_per(start.elapsed(), present.len());
    if hits != present.len() {
        return Err(format!(
            "{name}: false negatives: {} of {} keys missing",
            present.len() - hits,
            present.len()
        ));
    }

    let start = Instant::now();
    let mut positives = 0usize;
    for &h in absent {
        positives += usize::from(filter.contains(black_box(h)));
    }
    let absent_ns = ns_per(start.elapsed(), absent.len());

    let start = Instant::now();
    let mut out = Vec::with_capacity(1024);
    let mut batch_positives = 0usize;
    for chunk in absent.chunks(1024) {
        filter.contains_batch(black_box(chunk), &mut out);
        batch_positives += out.iter().filter(|&&hit| hit).count();
    }
    let absent_batch_ns = ns_per(start.elapsed(), absent.len());
    if batch_positives != positives {
        return Err(format!(
            "{name}: contains_batch disagrees with contains ({batch_positives} vs {positives} positives)"
        ));
    }

    Ok(Row {
        name: name.to_string(),
        bits_per_key: filter.size_bytes() as f64 * 8.0 / present.len().max(1) as f64,
        fpr: positives as f64 / absent.len().max(1) as f64,
        theoretical_fpr: filter.theoretical_fpr(),
        build_ns_per_key,
        present_ns,
        absent_ns,
        absent_batch_ns,
    })
}

fn dynamic<F: Filter>(
    mut f: F,
    keys: &[u64],
    insert: impl Fn(&mut F, u64) -> Result<(), String>,
) -> Result<F, String> {
    for &h in keys {
        insert(&mut f, h)?;
    }
    Ok(f)
}

fn cuckoo(bits: u32) -> impl FnOnce(&[u64]) -> Result<CuckooFilter, String> {
    move |keys| {
        let f = CuckooFilter::new(keys.len(), bits).map_err(|e| e.to_string())?;
        dynamic(f, keys, |f, h| f.insert(h).map_err(|e| e.to_string()))
    }
}

/// Runs the filter benchmark.
pub fn run(args: &Args) -> Result<Outcome, String> {
    let n = args.keys;
    let probes = args.probes.unwrap_or(n).max(1);
    let key = |i: u64| hash_key(args.seed, &i.to_le_bytes());
    let present: Vec<u64> = (0..n as u64).map(key).collect();
    let absent: Vec<u64> = (n as u64..(n + probes) as u64).map(key).collect();
    let bpk = args.bits_per_key;

    let rows = vec![
        measure(&format!("bloom:{bpk}"), &present, &absent, |k| {
            dynamic(Bloom::try_new(k.len(), bpk).map_err(|e| e.to_string())?, k, |f, h| {
                f.insert(h);
                Ok(())
            })
        }),
        measure(&format!("blocked-bloom:{bpk}"), &present, &absent, |k| {
            dynamic(BlockedBloom::try_new(k.len(), bpk).map_err(|e| e.to_string())?, k, |f, h| {
                f.insert(h);
                Ok(())
            })
        }),
        measure(&format!("counting-bloom:{bpk}"), &present, &absent, |k| {
            dynamic(CountingBloom::try_new(k.len(), bpk).map_err(|e| e.to_string())?, k, |f, h| {
                f.insert(h);
                Ok(())
            })
        }),
        measure("cuckoo:8", &present, &absent, cuckoo(8)),
        measure("cuckoo:12", &present, &absent, cuckoo(12)),
        measure("cuckoo:16", &present, &absent, cuckoo(16)),
        measure("xor8", &present, &absent, |k| Xor8::build(k).map_err(|e| e.to_string())),
        measure("xor16", &present, &absent, |k| Xor16::build(k).map_err(|e| e.to_string())),
        measure("fuse8", &present, &absent, |k| BinaryFuse8::build(k).map_err(|e| e.to_string())),
        measure("fuse16", &present, &absent, |k| BinaryFuse16::build(k).map_err(|e| e.to_string())),
        measure(&format!("ribbon:{}", bpk.min(32.0)), &present, &absent, |k| {
            Ribbon::build(k, bpk).map_err(|e| e.to_string())
        }),
    ];
    let failures: Vec<String> = rows.iter().filter_map(|r| r.as_ref().err().cloned()).collect();
    let rows: Vec<Row> = rows.into_iter().filter_map(Result::ok).collect();

    if args.json {
        let filters: Vec<_> = rows
            .iter()
            .map(|r| {
                json!({
                    "name": r.name,
                    "bits_per_key": r.bits_per_key,
                    "fpr": r.fpr,
                    "theoretical_fpr": r.theoretical_fpr,
                    "build_ns_per_key": r.build_ns_per_key,
                    "contains_present_ns": r.present_ns,
                    "contains_absent_ns": r.absent_ns,
                    "contains_batch_absent_ns": r.absent_batch_ns,
                })
            })
            .collect();
        output::print_json(&json!({
            "keys": n, "probes": probes, "seed": args.seed, "ribbon_simd": Ribbon::simd(),
            "filters": filters, "errors": failures,
        }));
    } else {
        println!(
            "{n} keys, {probes} absent probes, seed {}; Ribbon queries use {}\n",
            args.seed,
            Ribbon::simd()
        );
        let body: Vec<Vec<String>> = rows
            .iter()
            .map(|r| {
                vec![
                    r.name.clone(),
                    format!("{:.2}", r.bits_per_key),
                    format!("{:.4}%", r.fpr * 100.0),
                    format!("{:.4}%", r.theoretical_fpr * 100.0),
                    format!("{:.1}", r.build_ns_per_key),
                    format!("{:.1}", r.present_ns),
                    format!("{:.1}", r.absent_ns),
                    format!("{:.1}", r.absent_batch_ns),
                ]
            })
            .collect();
        print!(
            "{}",
            output::table(
                &[
                    "filter",
                    "bits/key",
                    "fpr",
                    "theory",
                    "build ns/key",
                    "hit ns",
                    "miss ns",
                    "batch miss ns"
                ],
                &body
            )
        );
        for f in &failures {
            eprintln!("siftdb: {f}");
        }
    }
    Ok(if failures.is_empty() { Outcome::Clean } else { Outcome::ProblemsFound })
}
