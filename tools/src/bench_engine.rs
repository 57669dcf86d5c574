//! `siftdb bench engine`: db_bench's workloads on siftdb, in rounds, with
//! rates, latency percentiles, write amplification and the tree's shape.
//! The driver is the library's [`siftdb_cli::workloads`], the one
//! `tools/benches/engine.rs` runs beside fjall.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use siftdb::{Compaction, CompressionPolicy, FilterPolicy};
use siftdb_cli::engine::Siftdb;
use siftdb_cli::keys::KeyFormat;
use siftdb_cli::summary::{RangeDeleteSummary, Spread, Summary, summarize};
use siftdb_cli::workloads::{self, Config, RangeDeletes, Rate, Round, Workload};

use crate::Outcome;
use crate::numbers;
use crate::output;

/// Options of `siftdb bench engine`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Keys loaded (1,000 to 10^9); reads draw from them.
    #[arg(long, default_value_t = 1_000_000, value_parser = numbers::count(numbers::MIN_BENCH_KEYS, numbers::MAX_BENCH_KEYS))]
    keys: u64,
    /// Bytes per value (0 to 65,536).
    #[arg(long, default_value_t = 100, value_parser = numbers::count_usize(0, numbers::MAX_VALUE_BYTES))]
    value_bytes: usize,
    /// Operations per read, seek and overwrite workload (1 to 10^8; default: --keys, at most 10^6).
    #[arg(long, value_parser = numbers::count(1, numbers::MAX_LOOKUPS))]
    ops: Option<u64>,
    /// Reader threads per read workload, and readers beside the writer of readwhilewriting (1 to 256).
    #[arg(long, default_value_t = 1, value_parser = numbers::count_usize(1, numbers::MAX_THREADS))]
    threads: usize,
    /// Pairs read after each seek in seekrandom (1 to 10,000).
    #[arg(long, default_value_t = 10, value_parser = numbers::count_usize(1, 10_000))]
    nexts: usize,
    /// Rounds, each on fresh stores (1 to 99); rates are the median round's, with the range.
    #[arg(long, default_value_t = 3, value_parser = numbers::count_usize(1, 99))]
    rounds: usize,
    /// Comma-separated workloads, run in this order whatever the order given: fillseq,
    /// fillrandom, readrandom, readmissing, multiget32, multiget256, multimissing32,
    /// multimissing256 (readrandom's and readmissing's keys read 32 or 256 a call, each key
    /// an operation; not by default), seekrandom, seekmix (seekrandom with every 20th
    /// operation an overwrite), scanhot (--hot-seconds of zipfian overwrites, then zipfian
    /// seeks; not by default), overwrite, readwhilewriting, deleterange (not by default: it
    /// deletes half the keys in ranges of 1,000, settles, and reports disk bytes before and
    /// after and gets of the deleted keys).
    #[arg(
        long,
        default_value = "fillseq,fillrandom,readrandom,readmissing,seekrandom,overwrite,readwhilewriting"
    )]
    workloads: String,
    /// Filter policy, in the library's grammar (`blocked-bloom:10`, `monkey:10`, …); default:
    /// the engine's default.
    #[arg(long, value_parser = crate::policy_arg::parse)]
    policy: Option<FilterPolicy>,
    /// Block compression, in the library's grammar: none, lz4, zstd, zstd:N, default (the
    /// engine's: lz4), per-level:C0,C1,..., each optionally followed by +last:C (the tree's
    /// last level); default: the engine's default.
    #[arg(long, value_parser = parse_compression)]
    compression: Option<CompressionPolicy>,
    /// Fraction of each value's bytes that repeat earlier ones (0 to 1): values are 100-byte
    /// pieces of 1 - F random bytes repeated to the piece's end, like db_bench's
    /// --compression_ratio (which is 1 - F).
    #[arg(long, default_value_t = 0.5, value_parser = parse_fraction)]
    value_compressibility: f64,
    /// Key layout: hex (16 hex digits of a mixed key number, the default) or dbbench
    /// (db_bench's: the number's 8 bytes big-endian, then eight '0's), so that figures set
    /// beside `db_bench`'s are of the same bytes.
    #[arg(long, default_value = "hex", value_parser = parse_key_format)]
    key_format: KeyFormat,
    /// Memtable size in MiB (1 to 4,096): how much a flush writes; default: the engine's (64 MiB).
    #[arg(long, value_parser = numbers::count_usize(1, 4096))]
    memtable_mib: Option<usize>,
    /// Target table size in MiB (1 to 4,096): where flushes and compactions cut their
    /// output; default: the engine's (8 MiB).
    #[arg(long, value_parser = numbers::count(1, 4096))]
    table_mib: Option<u64>,
    /// Target size of level 1 in MiB (1 to 65,536); deeper levels grow by the size ratio;
    /// default: the engine's (256 MiB).
    #[arg(long, value_parser = numbers::count(1, 65_536))]
    level1_mib: Option<u64>,
    /// Compaction strategy, in the library's grammar: leveled, fifo, or
    /// fifo:max_bytes=N,ttl=Ss; default: the engine's (leveled).
    #[arg(long, value_parser = parse_compaction)]
    compaction: Option<Compaction>,
    /// Fsync every write before it is acknowledged (`Options::sync`; concurrent writers share
    /// fsyncs); default: the engine's (writes reach the OS, fsynced at flush).
    #[arg(long)]
    sync: bool,
    /// Read the store as the load left it, without settling it first: recent keys still in
    /// the memtable and level 0, background compaction running (fillrandom then reports no
    /// settle).
    #[arg(long)]
    unsettled: bool,
    /// Seconds of zipfian overwrites before scanhot's scans (0.1 to 3,600).
    #[arg(long, default_value_t = 5.0, value_parser = parse_seconds)]
    hot_seconds: f64,
    /// Seed for keys, load order and every operation sequence.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Directory for the stores (it must be empty or absent; each round removes what it
    /// wrote); default: a temp dir.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Print one JSON document instead of a table.
    #[arg(long)]
    json: bool,
}

fn parse_compression(s: &str) -> Result<CompressionPolicy, String> {
    // clap's line names the value already: keep the library's reason only.
    s.parse::<CompressionPolicy>().map_err(|e| match e {
        siftdb::Error::InvalidArgument(m) => {
            m.strip_prefix(&format!("compression '{}': ", s.trim())).unwrap_or(&m).to_owned()
        }
        other => other.to_string(),
    })
}

fn parse_compaction(s: &str) -> Result<Compaction, String> {
    s.parse::<Compaction>().map_err(|e| match e {
        siftdb::Error::InvalidArgument(m) => m,
        other => other.to_string(),
    })
}

fn parse_key_format(s: &str) -> Result<KeyFormat, String> {
    KeyFormat::parse(s).ok_or_else(|| format!("expected hex or dbbench, got {s:?}"))
}

fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if (0.1..=3600.0).contains(&f) => Ok(f),
        _ => Err(format!("expected seconds from 0.1 to 3600, got {s:?}")),
    }
}

fn parse_fraction(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
        _ => Err(format!("expected a fraction from 0 to 1, got {s:?}")),
    }
}

fn parse_workloads(s: &str) -> Result<Vec<Workload>, String> {
    let mut out = Vec::new();
    for name in s.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let w = Workload::parse(name).ok_or_else(|| {
            let known: Vec<&str> = Workload::ALL.iter().map(|w| w.name()).collect();
            format!("--workloads: unknown workload {name:?} (known: {})", known.join(", "))
        })?;
        if !out.contains(&w) {
            out.push(w);
        }
    }
    if out.is_empty() {
        return Err("--workloads: name at least one workload".into());
    }
    Ok(out)
}

/// Runs the benchmark and prints its report.
///
/// # Errors
/// A bad flag, an unusable directory, an engine error or a wrong answer.
pub fn run(args: &Args) -> Result<Outcome, String> {
    let workloads = parse_workloads(&args.workloads)?;
    let policy = args.policy.clone();
    let (root, _cleanup) = output::bench_dir(args.dir.as_deref(), "engine")?;
    let cfg = Config {
        keys: args.keys,
        value_bytes: args.value_bytes,
        value_compressibility: args.value_compressibility,
        ops: args.ops.unwrap_or(args.keys.min(1_000_000)),
        threads: args.threads,
        nexts: args.nexts,
        seed: args.seed,
        key_format: args.key_format,
        workloads,
        unsettled: args.unsettled,
        hot_writes: Duration::from_secs_f64(args.hot_seconds),
        progress: !args.json,
    };
    let opts = siftdb::Options {
        filter_policy: policy.clone(),
        memtable_bytes: args.memtable_mib.map_or(siftdb::Options::default().memtable_bytes, |m| m << 20),
        table_target_bytes: args.table_mib.map_or(siftdb::Options::default().table_target_bytes, |m| m << 20),
        base_level_bytes: args.level1_mib.map_or(siftdb::Options::default().base_level_bytes, |m| m << 20),
        sync: args.sync,
        compression: args.compression.clone().unwrap_or_default(),
        compaction: args.compaction.unwrap_or_default(),
        ..siftdb::Options::default()
    };
    let open = |dir: &std::path::Path| Siftdb::open(dir, &opts);
    let policy_name =
        policy.as_ref().map_or_else(|| FilterPolicy::default().to_string(), ToString::to_string);
    let mut rounds = Vec::new();
    for r in 0..args.rounds {
        if cfg.progress {
            eprintln!("round {} of {}", r + 1, args.rounds);
        }
        rounds.push(workloads::round(&cfg, &root, &open)?);
    }
    let summaries = summarize(&rounds);
    if args.json {
        output::print_json(&document(&cfg, &policy_name, &opts, &rounds, &summaries));
    } else {
        print!(
            "{}",
            text(
                &cfg,
                &format!(
                    "{policy_name}, compression {}, compaction {}, memtable {} MiB, level 1 {} MiB, tables {} MiB",
                    opts.compression,
                    opts.compaction,
                    opts.memtable_bytes >> 20,
                    opts.base_level_bytes >> 20,
                    opts.table_target_bytes >> 20
                ),
                &rounds,
                &summaries
            )
        );
    }
    Ok(Outcome::Clean)
}

fn micros(h: &siftdb_cli::latency::Histogram, q: f64) -> Option<f64> {
    h.quantile(q).map(|ns| ns as f64 / 1000.0)
}

fn shape_text(r: &Round) -> String {
    let levels: Vec<String> = r
        .shape
        .per_level
        .iter()
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .map(|(l, n)| format!("L{l} {n}"))
        .collect();
    let mib = |b: Option<u64>| {
        b.map_or_else(|| "-".to_string(), |b| format!("{:.1} MiB", b as f64 / f64::from(1 << 20)))
    };
    let stalled = r.shape.write_stall_micros.map_or(String::new(), |m| {
        format!("; writes stalled {:.1} s", Duration::from_micros(m).as_secs_f64())
    });
    format!(
        "{} ({}), {} in level 0; filters {}, disk {}, heap {}{stalled}",
        output::count(r.shape.tables, "table", "tables"),
        levels.join(", "),
        r.shape.l0_tables,
        mib(r.shape.filter_bytes),
        mib(r.shape.disk_bytes),
        mib(r.shape.heap_bytes)
    )
}

fn text(cfg: &Config, policy: &str, rounds: &[Round], summaries: &[Summary]) -> String {
    let mut out = format!(
        "siftdb bench engine: {} keys of 16 bytes ({}), {}-byte values ({} compressible), {} ops per read workload, {} reader thread(s), {} round(s), filter policy {policy}\n",
        cfg.keys,
        cfg.key_format.name(),
        cfg.value_bytes,
        cfg.value_compressibility,
        cfg.ops,
        cfg.threads,
        rounds.len()
    );
    for (i, r) in rounds.iter().enumerate() {
        out.push_str(&format!("round {}: reads began on {}\n", i + 1, shape_text(r)));
    }
    out.push('\n');
    let fmt = |x: Option<f64>, digits: usize| x.map_or_else(|| "-".to_string(), |v| format!("{v:.digits$}"));
    let rows: Vec<Vec<String>> = summaries
        .iter()
        .map(|s| {
            vec![
                s.workload.name().to_string(),
                format!("{:.0}", s.ops_per_sec),
                format!("{:.0}-{:.0}", s.min_ops_per_sec, s.max_ops_per_sec),
                format!("{:.1}%", 100.0 * s.spread()),
                fmt(micros(&s.latency, 0.5), 2),
                fmt(micros(&s.latency, 0.99), 2),
                fmt(micros(&s.latency, 0.999), 2),
                fmt(s.write_amplification, 2),
                fmt(s.process_write_amplification, 2),
                fmt(s.settle_secs, 2),
                fmt(s.background_writes_per_sec, 0),
            ]
        })
        .collect();
    out.push_str(&output::table(
        &[
            "workload",
            "op/s",
            "range",
            "spread",
            "p50 us",
            "p99 us",
            "p99.9 us",
            "write amp",
            "write(2) amp",
            "settle s",
            "writes/s",
        ],
        &rows,
    ));
    out.push_str(
        "\nop/s: the median round's; range: slowest and fastest rounds; spread: their difference over the median.\n\
         Latencies over every operation of every round. write amp: table bytes written by flushes and\n\
         compactions per key and value byte written, through the settle that follows; write(2) amp: every\n\
         byte the process handed to write(2) (WAL, tables, manifest) per key and value byte, the same\n\
         span (Linux); writes/s: the readwhilewriting writer's puts, and scanhot's overwrites before its scans.\n",
    );
    for s in summaries {
        if let (Some(t), w) = s.at_idle {
            out.push_str(&format!(
                "{}: write amp {t:.2}, write(2) amp {} once background compaction had nothing due (before the full settle)\n",
                s.workload.name(),
                fmt(w, 2)
            ));
        }
        if let Some(d) = &s.range_deletes {
            out.push_str(&range_delete_text(d));
        }
    }
    out
}

/// `deleterange`'s figures beyond its row: the disk it gave back and what
/// the deleted keys cost a reader.
fn range_delete_text(d: &RangeDeleteSummary) -> String {
    let mib = |s: Option<Spread>| {
        s.map_or_else(|| "-".to_string(), |s| format!("{:.1} MiB", s.median / f64::from(1 << 20)))
    };
    let rate = |s: Option<Spread>| {
        s.map_or_else(|| "-".to_string(), |s| format!("{:.0} op/s ({:.0}-{:.0})", s.median, s.min, s.max))
    };
    let ratio = d.disk_ratio.map_or_else(
        || "-".to_string(),
        |s| format!("{:.1}% ({:.1}-{:.1}%)", 100.0 * s.median, 100.0 * s.min, 100.0 * s.max),
    );
    format!(
        "\ndeleterange: {} keys deleted in ranges of up to {} (op/s: the range deletes; settle s: flush and\n\
         compaction after them). Disk {} before the deletes, {} after the settle: {ratio} of it.\n\
         Gets of deleted keys {}, of keys never written {} (medians, rounds' range).\n",
        d.keys_deleted,
        workloads::RANGE_KEYS,
        mib(d.disk_bytes_before),
        mib(d.disk_bytes_after),
        rate(d.deleted_gets_per_sec),
        rate(d.absent_gets_per_sec),
    )
}

fn rate_json(r: &Rate) -> Value {
    json!({ "ops": r.ops, "seconds": r.elapsed.as_secs_f64(), "ops_per_sec": r.ops_per_sec() })
}

fn round_range_deletes_json(d: &RangeDeletes) -> Value {
    json!({
        "keys_deleted": d.keys_deleted,
        "disk_bytes_before": d.disk_bytes_before,
        "disk_bytes_after": d.disk_bytes_after,
        "disk_ratio": d.disk_ratio(),
        "deleted_gets": rate_json(&d.deleted_gets),
        "absent_gets": rate_json(&d.absent_gets),
    })
}

fn spread_json(s: Option<Spread>) -> Value {
    s.map_or(Value::Null, |s| json!({ "median": s.median, "min": s.min, "max": s.max }))
}

fn range_deletes_json(d: &RangeDeleteSummary) -> Value {
    json!({
        "keys_deleted": d.keys_deleted,
        "disk_bytes_before": spread_json(d.disk_bytes_before),
        "disk_bytes_after": spread_json(d.disk_bytes_after),
        "disk_ratio": spread_json(d.disk_ratio),
        "deleted_gets_per_sec": spread_json(d.deleted_gets_per_sec),
        "absent_gets_per_sec": spread_json(d.absent_gets_per_sec),
    })
}

fn document(
    cfg: &Config,
    policy: &str,
    opts: &siftdb::Options,
    rounds: &[Round],
    summaries: &[Summary],
) -> Value {
    json!({
        "keys": cfg.keys,
        "key_bytes": 16,
        "key_format": cfg.key_format.name(),
        "value_bytes": cfg.value_bytes,
        "value_compressibility": cfg.value_compressibility,
        "compression": opts.compression.to_string(),
        "compaction": opts.compaction.to_string(),
        "ops": cfg.ops,
        "threads": cfg.threads,
        "nexts": cfg.nexts,
        "seed": cfg.seed,
        "unsettled": cfg.unsettled,
        "hot_write_seconds": cfg.hot_writes.as_secs_f64(),
        "filter_policy": policy,
        "memtable_bytes": opts.memtable_bytes,
        "level1_bytes": opts.base_level_bytes,
        "sync": opts.sync,
        "table_target_bytes": opts.table_target_bytes,
        "rounds": rounds.iter().map(|r| json!({
            "shape": {
                "l0_tables": r.shape.l0_tables,
                "tables": r.shape.tables,
                "tables_per_level": r.shape.per_level,
                "filter_bytes": r.shape.filter_bytes,
                "disk_bytes": r.shape.disk_bytes,
                "heap_bytes": r.shape.heap_bytes,
                // Since the store opened, through the fill's settle.
                "writes_by_level": r.shape.writes_by_level.iter().map(|w| json!({
                    "jobs": w.jobs,
                    "merged_in": w.merged_in,
                    "rewritten": w.rewritten,
                    "written": w.written,
                    "moved_in": w.moved_in,
                })).collect::<Vec<_>>(),
                "write_stall_seconds": r.shape.write_stall_micros.map(|m| Duration::from_micros(m).as_secs_f64()),
            },
            "phases": r.phases.iter().map(|p| json!({
                "workload": p.workload.name(),
                "ops": p.ops,
                "seconds": p.elapsed.as_secs_f64(),
                "ops_per_sec": p.ops_per_sec(),
                "settle_seconds": p.settle.map(|d| d.as_secs_f64()),
                "write_amplification": p.write_amplification,
                "process_write_amplification": p.process_write_amplification,
                "at_idle": p.at_idle.map(|(t, w)| json!({
                    "write_amplification": t,
                    "process_write_amplification": w,
                })),
                "background_writes": p.background_writes.map(|(n, _)| n),
                "background_write_seconds": p.background_writes.map(|(_, over)| over.as_secs_f64()),
                "range_deletes": p.range_deletes.as_ref().map(round_range_deletes_json),
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "workloads": summaries.iter().map(|s| json!({
            "workload": s.workload.name(),
            "rounds": s.rounds,
            "ops_per_sec": s.ops_per_sec,
            "min_ops_per_sec": s.min_ops_per_sec,
            "max_ops_per_sec": s.max_ops_per_sec,
            "spread": s.spread(),
            "latency_us": {
                "p50": micros(&s.latency, 0.5),
                "p99": micros(&s.latency, 0.99),
                "p99_9": micros(&s.latency, 0.999),
                "max": s.latency.max() as f64 / 1000.0,
            },
            "settle_seconds": s.settle_secs,
            "write_amplification": s.write_amplification,
            "process_write_amplification": s.process_write_amplification,
            "at_idle": {
                "write_amplification": s.at_idle.0,
                "process_write_amplification": s.at_idle.1,
            },
            "background_writes_per_sec": s.background_writes_per_sec,
            "range_deletes": s.range_deletes.as_ref().map(range_deletes_json),
        })).collect::<Vec<_>>(),
    })
}
