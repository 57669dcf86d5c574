//! `siftdb bench ingest`: loading N keys by building T tables in parallel
//! (`TableWriter`, one thread each) and installing them with one
//! `Db::ingest`, against `fillrandom` (one put per key, the write path) of
//! the same keys and values, in the same run, in rounds on fresh stores.
//!
//! Both paths are timed to a settled store (flushed, compacted, nothing
//! running): the ingest path from the unsorted keys (the sort is counted)
//! to the settled store; fillrandom from the first put to the settle's end.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use siftdb::{Db, Options, TableWriter};
use siftdb_cli::keys::{hex16, mix};
use siftdb_cli::summary::median;
use siftdb_cli::workloads::Values;

use crate::Outcome;
use crate::numbers;
use crate::output;

/// Options of `siftdb bench ingest`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Keys loaded by each path (1,000 to 10^9).
    #[arg(long, default_value_t = 1_000_000, value_parser = numbers::count(numbers::MIN_BENCH_KEYS, numbers::MAX_BENCH_KEYS))]
    keys: u64,
    /// Tables built in parallel, one thread each (1 to 256).
    #[arg(long, default_value_t = 8, value_parser = numbers::count_usize(1, numbers::MAX_THREADS))]
    tables: usize,
    /// Bytes per value (0 to 65,536).
    #[arg(long, default_value_t = 100, value_parser = numbers::count_usize(0, numbers::MAX_VALUE_BYTES))]
    value_bytes: usize,
    /// Rounds, each on fresh stores (1 to 99); rates are the medians.
    #[arg(long, default_value_t = 3, value_parser = numbers::count_usize(1, 99))]
    rounds: usize,
    /// Seed of the keys and values.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Directory for the stores and tables (must be empty or new; default: a temporary one, removed).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// One JSON document on stdout.
    #[arg(long)]
    json: bool,
}

/// One round's times.
struct Round {
    fill: Duration,
    build: Duration,
    ingest: Duration,
    ingest_total: Duration,
}

/// Runs `siftdb bench ingest`.
///
/// # Errors
/// A one-line message if a store or table cannot be written, or a check
/// after loading finds a key missing.
pub fn run(args: &Args) -> Result<Outcome, String> {
    let (root, _cleanup) = output::bench_dir(args.dir.as_deref(), "ingest")?;
    let values = Values::new(args.value_bytes, args.seed, 0.5);
    let load_start = load_average();
    let mut rounds = Vec::new();
    for r in 0..args.rounds {
        if !args.json {
            eprintln!("round {} of {}", r + 1, args.rounds);
        }
        let dir = root.join(format!("round{r}"));
        rounds.push(round(args, &dir, &values)?);
        std::fs::remove_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let med = |f: &dyn Fn(&Round) -> Duration| {
        median(rounds.iter().map(|r| f(r).as_secs_f64()).collect()).unwrap_or(0.0)
    };
    let (fill, ingest) = (med(&|r| r.fill), med(&|r| r.ingest_total));
    let (build, install) = (med(&|r| r.build), med(&|r| r.ingest));
    let rate = |secs: f64| if secs > 0.0 { args.keys as f64 / secs } else { 0.0 };
    let speedup = if ingest > 0.0 { fill / ingest } else { 0.0 };
    let load = [load_start, load_average()];
    if args.json {
        output::print_json(&json!({
            "keys": args.keys,
            "tables": args.tables,
            "value_bytes": args.value_bytes,
            "rounds": args.rounds,
            "load_average": load,
            "fillrandom": {"seconds": fill, "keys_per_second": rate(fill)},
            "ingest": {
                "seconds": ingest,
                "keys_per_second": rate(ingest),
                "build_seconds": build,
                "install_seconds": install,
            },
            "speedup": speedup,
            "round_seconds": rounds.iter().map(|r| json!({
                "fillrandom": r.fill.as_secs_f64(),
                "ingest": r.ingest_total.as_secs_f64(),
            })).collect::<Vec<Value>>(),
        }));
    } else {
        println!(
            "{} keys of {} bytes, {} rounds (medians); load average {:.2} -> {:.2}",
            args.keys,
            args.value_bytes,
            args.rounds,
            load[0].unwrap_or(f64::NAN),
            load[1].unwrap_or(f64::NAN)
        );
        println!("  fillrandom (puts, then settle):   {fill:>8.2} s  {:>12.0} keys/s", rate(fill));
        println!(
            "  ingest ({} tables built in parallel, one ingest, settle): {ingest:.2} s  {:.0} keys/s \
             (build {build:.2} s, ingest and settle {install:.2} s)",
            args.tables,
            rate(ingest)
        );
        println!("  ingest is {speedup:.1}x fillrandom's rate");
    }
    Ok(Outcome::Clean)
}

fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg").ok()?.split_whitespace().next()?.parse().ok()
}

fn round(args: &Args, dir: &Path, values: &Values) -> Result<Round, String> {
    let fail = |what: &str, e: &dyn std::fmt::Display| format!("{what}: {e}");
    // fillrandom: the keys in the order of their index, which is random in
    // key order (`mix`), one put each.
    let fill_dir = dir.join("fillrandom");
    let db = Db::open(&fill_dir, Options::default()).map_err(|e| fail("open", &e))?;
    let start = Instant::now();
    for i in 0..args.keys {
        db.put(hex16(mix(args.seed ^ i)), values.get(i)).map_err(|e| fail("put", &e))?;
    }
    settle(&db)?;
    let fill = start.elapsed();
    db.close().map_err(|e| fail("close", &e))?;
    drop(db);

    let ingest_dir = dir.join("ingest");
    let tables_dir = dir.join("tables");
    std::fs::create_dir_all(&tables_dir).map_err(|e| fail("tables", &e))?;
    let db = Db::open(&ingest_dir, Options::default()).map_err(|e| fail("open", &e))?;
    let opts = db.options().clone();
    let start = Instant::now();
    let mut order: Vec<(u64, u64)> = (0..args.keys).map(|i| (mix(args.seed ^ i), i)).collect();
    order.sort_unstable();
    let chunk = order.len().div_ceil(args.tables);
    let paths: Vec<PathBuf> = std::thread::scope(|s| {
        let handles: Vec<_> = order
            .chunks(chunk)
            .enumerate()
            .map(|(t, part)| {
                let (path, opts) = (tables_dir.join(format!("part{t}.sst")), &opts);
                s.spawn(move || -> Result<PathBuf, String> {
                    let mut w = TableWriter::create(&path, opts).map_err(|e| fail("create", &e))?;
                    for &(k, i) in part {
                        w.add(hex16(k), values.get(i)).map_err(|e| fail("add", &e))?;
                    }
                    w.finish().map_err(|e| fail("finish", &e))?;
                    Ok(path)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().map_err(|_| "a builder thread panicked".to_string())?)
            .collect::<Result<Vec<PathBuf>, String>>()
    })?;
    let build = start.elapsed();
    drop(order);
    let installed = Instant::now();
    db.ingest_with(&paths, &siftdb::IngestOptions { move_files: true, ..Default::default() })
        .map_err(|e| fail("ingest", &e))?;
    settle(&db)?;
    let ingest = installed.elapsed();
    let ingest_total = start.elapsed();
    // Both stores hold every key: spot checks, untimed.
    for i in (0..args.keys).step_by(usize::try_from(args.keys / 1000).unwrap_or(1).max(1)) {
        let k = hex16(mix(args.seed ^ i));
        if db.get(k).map_err(|e| fail("get", &e))?.as_deref() != Some(values.get(i)) {
            return Err(format!(
                "ingest: key {} missing or wrong after the ingest",
                String::from_utf8_lossy(&k)
            ));
        }
    }
    db.close().map_err(|e| fail("close", &e))?;
    Ok(Round { fill, build, ingest, ingest_total })
}

/// Flushed, compacted, nothing running.
fn settle(db: &Db) -> Result<(), String> {
    db.flush()
        .and_then(|()| db.compact())
        .and_then(|()| db.wait_for_background_work())
        .map_err(|e| format!("settle: {e}"))
}
