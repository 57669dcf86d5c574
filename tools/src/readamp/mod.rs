//! `siftdb bench`: read amplification of every filter policy against a
//! no-filter baseline, on identical data and identical lookups.
//!
//! For each policy the same seeded keys are loaded (in the same random
//! order) into a fresh database, flushing and compacting in the loader's
//! thread after every memtable, so one seed always gives the same tree;
//! then each workload runs the same lookup sequence. Block reads, filter probes
//! and false positives come from the engine's own counters (`Db::stats`),
//! never from estimates.

mod measure;
pub mod prefix;
pub mod range;
mod report;
pub mod scans;
pub(crate) use report::Machine;
pub mod svg;
mod verdict;
pub mod workload;

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};

use siftdb::policy::FilterPolicy;

use crate::Outcome;
use crate::numbers;
use crate::output::{PendingFile, RemoveOnDrop};
use prefix::{PrefixReport, PrefixWorkload};
use range::{RangeReport, RangeWorkload};
use siftdb::{FilterKind, PrefixExtractor, RangeFilterPolicy};
use workload::Workload;

/// The policies compared when `--policies` is not given: every kind at about
/// 10 bits per key or its fixed size, and the default policy, `monkey:10`
/// (Ribbon on the levels below the first), beside uniform Ribbon at the
/// same bits.
pub const DEFAULT_POLICIES: &str =
    "none,bloom:10,blocked-bloom:10,xor8,xor16,fuse8,fuse16,ribbon:10,monkey:10";

/// Options of `siftdb bench`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Keys loaded into each database (1,000 to 10^9; at least 20,000 for a tree of 4+ levels).
    #[arg(long, default_value_t = 1_000_000, value_parser = numbers::count(numbers::MIN_BENCH_KEYS, numbers::MAX_BENCH_KEYS))]
    keys: u64,
    /// Lookups per workload (1 to 10^8).
    #[arg(long, default_value_t = 100_000, value_parser = numbers::count_usize(1, numbers::MAX_LOOKUPS))]
    lookups: usize,
    /// Bytes per value (0 to 65,536).
    #[arg(long, default_value_t = 100, value_parser = numbers::count_usize(0, numbers::MAX_VALUE_BYTES))]
    value_bytes: usize,
    /// Seed for keys, load order and lookup sequences.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Reader threads during the lookup phase (1 to 256).
    #[arg(long, default_value_t = 1, value_parser = numbers::count_usize(1, numbers::MAX_THREADS))]
    threads: usize,
    /// Comma-separated policies: none, bloom:B, blocked-bloom:B, xor8, xor16, fuse8, fuse16,
    /// ribbon:B, monkey:B, per-level:K1,K2,… (use ';' between policies when a per-level spec has
    /// commas), each optionally ending in +skip-last.
    #[arg(long, default_value = DEFAULT_POLICIES, value_parser = parse_policies)]
    policies: Policies,
    /// Comma-separated workloads: absent, uniform, zipfian, mixed (point lookups), scan
    /// (the range-scan sanity check), prefix-absent, prefix-present (prefix scans on a
    /// tree of grouped keys of its own, with and without prefix filtering), and range-empty,
    /// range-present, range-near (scans of 16, 256 and 4,096 values on a tree of 64-bit keys,
    /// with and without the range filter).
    #[arg(long, default_value = "absent,uniform,zipfian,mixed,scan")]
    workloads: String,
    /// The prefix extractor of the prefix workloads: fixed:N or up-to:0xHH. Their keys are an
    /// 8-byte group prefix and an 8-byte suffix, and each scan asks for one group's prefix.
    #[arg(long, default_value = "fixed:8", value_parser = parse_extractor)]
    prefix_extractor: PrefixExtractor,
    /// The point filter of the range workloads' range filter, over the buckets of their keys'
    /// images (the first 8 bytes, big-endian).
    #[arg(long, default_value = "ribbon:10", value_parser = parse_range_kind)]
    range_filter: FilterKind,
    /// Fraction of present keys in the mixed workload (0 to 1).
    #[arg(long, default_value_t = 0.5, value_parser = numbers::fraction, allow_hyphen_values = true)]
    hit_ratio: f64,
    /// Directory for the databases, one subdirectory per policy (kept afterwards); default: a
    /// temp dir, removed at the end. A non-empty policy subdirectory is refused unless --force.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// With --dir: delete existing non-empty policy subdirectories instead of refusing.
    #[arg(long, alias = "overwrite")]
    force: bool,
    /// Print one JSON document instead of tables.
    #[arg(long)]
    json: bool,
    /// Also write the results as CSV to this file.
    #[arg(long)]
    csv: Option<PathBuf>,
    /// Write the chart (filter memory against blocks read, lookups/s) to this file instead of
    /// siftdb-bench.svg under --out.
    #[arg(long)]
    svg: Option<PathBuf>,
    /// Directory for the chart, siftdb-bench.svg (created if missing; default: the current one).
    #[arg(long, default_value = ".")]
    out: PathBuf,
    /// A filter memory budget in bytes for the budgeted policies (monkey:B), which plan their
    /// bits under it (`Options::filter_memory_bytes`); the report shows every policy's filter
    /// bytes against it, so uniform policies can be matched to it.
    #[arg(long, value_name = "BYTES", conflicts_with = "filter_budget_bits", value_parser = numbers::count(1, u64::MAX - 1))]
    filter_memory_bytes: Option<u64>,
    /// The same budget as bits per loaded key: --keys × B / 8 bytes.
    #[arg(long, value_name = "B", value_parser = numbers::bits_per_key)]
    filter_budget_bits: Option<f64>,
    /// Every column of the text report (mean, p50 and p99.9 latencies, their
    /// ratios, load throughput); the default fits 120 columns.
    #[arg(long)]
    wide: bool,
}

/// The database directory of each policy under `root`. A directory that
/// exists and is not empty is refused (it may be someone's data), unless
/// `force`, in which case it is deleted. Checked for every policy before
/// anything is written.
fn prepare_dirs(root: &Path, names: &[&str], force: bool) -> Result<Vec<PathBuf>, String> {
    let dirs: Vec<PathBuf> = names.iter().map(|n| root.join(report::file_safe(n))).collect();
    for dir in &dirs {
        let non_empty = match std::fs::read_dir(dir) {
            Ok(mut entries) => entries.next().is_some(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => return Err(format!("{}: {e}", dir.display())),
        };
        if non_empty && !force {
            return Err(format!(
                "{}: exists and is not empty; remove it, choose another --dir, or pass --force to delete it",
                dir.display()
            ));
        }
    }
    if force {
        for dir in dirs.iter().filter(|d| d.exists()) {
            std::fs::remove_dir_all(dir).map_err(|e| format!("{}: cannot delete: {e}", dir.display()))?;
        }
    }
    Ok(dirs)
}

/// The policies of `--policies`, each with its name as given.
#[derive(Debug, Clone)]
pub struct Policies(Vec<(String, FilterPolicy)>);

/// Parses `--policies`: ';'-separated if any ';' is present, else ','-separated
/// with `per-level:` specs running to the end of the list.
fn parse_policies(spec: &str) -> Result<Policies, String> {
    let names: Vec<String> = if spec.contains(';') {
        spec.split(';').map(str::trim).map(String::from).collect()
    } else {
        let mut out = Vec::new();
        let mut rest = spec;
        while !rest.is_empty() {
            if rest.starts_with("per-level:") {
                out.push(rest.trim().to_string());
                break;
            }
            let (head, tail) = rest.split_once(',').unwrap_or((rest, ""));
            out.push(head.trim().to_string());
            rest = tail;
        }
        out
    };
    let names: Vec<String> = names.into_iter().filter(|n| !n.is_empty()).collect();
    let mut policies = Vec::new();
    for name in &names {
        // Clap's line names the whole list; in a list of several, say which one.
        let policy = crate::policy_arg::parse(name)
            .map_err(|why| if names.len() > 1 { format!("'{name}': {why}") } else { why })?;
        if policies.iter().any(|(n, _)| n == name) {
            return Err(format!("'{name}' is listed twice"));
        }
        policies.push((name.clone(), policy));
    }
    if policies.is_empty() {
        return Err("no policy given".into());
    }
    Ok(Policies(policies))
}

fn parse_extractor(s: &str) -> Result<PrefixExtractor, String> {
    s.parse().map_err(|e: siftdb::Error| e.to_string())
}

/// Parses a range filter's point-filter kind (`--range-filter`).
pub(crate) fn parse_range_kind(s: &str) -> Result<FilterKind, String> {
    let policy = RangeFilterPolicy {
        kind: s.parse().map_err(|e: siftdb::Error| e.to_string())?,
        ..Default::default()
    };
    policy.validate().map_err(|e| e.to_string())?;
    Ok(policy.kind)
}

/// The workloads of `--workloads`, by family.
type Workloads = (Vec<Workload>, Vec<PrefixWorkload>, Vec<RangeWorkload>);

/// Parses `--workloads` into the point workloads, the prefix ones and the
/// range ones.
fn parse_workloads(spec: &str) -> Result<Workloads, String> {
    let (mut point, mut prefix, mut range) = (Vec::new(), Vec::new(), Vec::new());
    for name in spec.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        if let Some(w) = PrefixWorkload::parse(name) {
            if !prefix.contains(&w) {
                prefix.push(w);
            }
            continue;
        }
        if let Some(w) = RangeWorkload::parse(name) {
            if !range.contains(&w) {
                range.push(w);
            }
            continue;
        }
        let w = Workload::parse(name).ok_or_else(|| {
            format!(
                "--workloads: unknown workload '{name}' (absent, uniform, zipfian, mixed, scan, prefix-absent, prefix-present, range-empty, range-present, range-near)"
            )
        })?;
        if !point.contains(&w) {
            point.push(w);
        }
    }
    if point.is_empty() && prefix.is_empty() && range.is_empty() {
        return Err("--workloads: no workload given".into());
    }
    Ok((point, prefix, range))
}

/// A rough forecast of the run's length, from this machine's rates on the
/// default sizes (about 1 s to open and close a database, 11 s to load and
/// settle 10^6 keys, 250,000 lookups per second): enough to tell a coffee
/// from a lunch.
fn expected_duration(config: &measure::Config, policies: usize, workloads: &[Workload]) -> String {
    let lookups = workloads.iter().filter(|w| w.is_lookup()).count() as f64 * config.lookups as f64;
    let per_policy = 1.0 + config.keys as f64 * 11e-6 + lookups / 250_000.0;
    let secs = per_policy * policies as f64;
    if secs < 90.0 { format!("{secs:.0} s") } else { format!("{:.0} min", secs / 60.0) }
}

/// The chart's path: `--svg`, else siftdb-bench.svg under `--out` (made if
/// missing); `None` when no point workload runs, as there is nothing to chart.
fn chart_path(args: &Args, workloads: &[Workload]) -> Result<Option<PathBuf>, String> {
    if workloads.is_empty() {
        return Ok(None);
    }
    if let Some(svg) = &args.svg {
        return Ok(Some(svg.clone()));
    }
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    Ok(Some(args.out.join("siftdb-bench.svg")))
}

/// The run's last line: where its files went.
fn files_written(svg: Option<&Path>, csv: Option<&Path>, dir: Option<&Path>) -> String {
    let mut parts: Vec<String> = Vec::new();
    parts.extend(svg.map(|p| format!("chart {}", p.display())));
    parts.extend(csv.map(|p| format!("CSV {}", p.display())));
    parts.extend(dir.map(|p| format!("databases in {}", p.display())));
    if parts.is_empty() {
        "siftdb bench: no files written".into()
    } else {
        format!("siftdb bench: wrote {}", parts.join(", "))
    }
}

/// The budget `--filter-memory-bytes` or `--filter-budget-bits` gives, in
/// bytes (bits rounded down to a whole byte).
#[expect(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "a positive byte count")]
fn budget_bytes(args: &Args) -> Option<u64> {
    args.filter_memory_bytes.or_else(|| args.filter_budget_bits.map(|b| (args.keys as f64 * b / 8.0) as u64))
}

/// Runs the benchmark.
pub fn run(args: &Args) -> Result<Outcome, String> {
    let policies = &args.policies.0;
    let (workloads, prefix_workloads, range_workloads) = parse_workloads(&args.workloads)?;
    if workloads.is_empty() && (args.csv.is_some() || args.svg.is_some()) {
        return Err("--csv and --svg chart the point workloads, and none was given".into());
    }
    // An unwritable --csv or --svg is found now, not after a long run; the
    // files themselves are replaced only when the run has its results.
    let csv = args.csv.as_deref().map(PendingFile::create).transpose()?;
    let svg_path = chart_path(args, &workloads)?;
    let svg = svg_path.as_deref().map(PendingFile::create).transpose()?;
    let (root, _cleanup) = match &args.dir {
        Some(dir) => (dir.clone(), None),
        None => {
            let dir = std::env::temp_dir().join(format!("siftdb-bench-{}-{}", std::process::id(), args.seed));
            (dir.clone(), Some(RemoveOnDrop(dir)))
        }
    };
    let names: Vec<&str> = policies.iter().map(|(n, _)| n.as_str()).collect();
    let dirs = prepare_dirs(&root, &names, args.force)?;
    let prefix_names: Vec<String> = names.iter().map(|n| format!("{n}.prefix")).collect();
    let prefix_dirs =
        prepare_dirs(&root, &prefix_names.iter().map(String::as_str).collect::<Vec<_>>(), args.force)?;
    let range_names: Vec<String> = names.iter().map(|n| format!("{n}.range")).collect();
    let range_dirs =
        prepare_dirs(&root, &range_names.iter().map(String::as_str).collect::<Vec<_>>(), args.force)?;
    std::fs::create_dir_all(&root).map_err(|e| format!("{}: {e}", root.display()))?;
    let config = measure::Config {
        keys: args.keys,
        lookups: args.lookups,
        value_bytes: args.value_bytes,
        seed: args.seed,
        threads: args.threads,
        hit_ratio: args.hit_ratio,
        show_progress: !args.json,
        filter_memory_bytes: budget_bytes(args),
    };
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let load_start = report::Machine::load_average();
    let total = policies.len();
    if config.show_progress {
        eprintln!(
            "siftdb bench: {} keys, seed {}: {total} policies x {} workload(s); expect roughly {}",
            args.keys,
            args.seed,
            workloads.len() + prefix_workloads.len() + range_workloads.len(),
            expected_duration(&config, total, &workloads)
        );
    }
    // Progress bars draw only on a terminal; elsewhere (a log, CI) one line
    // per finished policy says the run is alive.
    let lines = config.show_progress && !std::io::stderr().is_terminal();
    let mut results = Vec::with_capacity(policies.len());
    let (mut prefix_results, mut range_results) = (Vec::new(), Vec::new());
    let range_filter = RangeFilterPolicy { kind: args.range_filter, ..RangeFilterPolicy::default() };
    for (i, ((name, policy), ((dir, prefix_dir), range_dir))) in
        policies.iter().zip(dirs.iter().zip(&prefix_dirs).zip(&range_dirs)).enumerate()
    {
        let label = format!("[policy {}/{total}] {name}", i + 1);
        if !workloads.is_empty() {
            let r = measure::run_policy(&config, name, &label, policy, dir, &workloads)?;
            if lines {
                eprintln!(
                    "{label}: built in {:.1} s, lookups in {:.1} s",
                    r.build.as_secs_f64(),
                    r.lookup_seconds()
                );
            }
            results.push(r);
        }
        if !prefix_workloads.is_empty() {
            let extractor = args.prefix_extractor;
            let r = prefix::run_policy(
                &config,
                (name, &label),
                policy,
                extractor,
                prefix_dir,
                &prefix_workloads,
            )?;
            if lines {
                eprintln!("{label}: prefix workloads done");
            }
            prefix_results.extend(r);
        }
        if !range_workloads.is_empty() {
            let r = range::run_policy(
                &config,
                (name, &label),
                policy,
                range_filter,
                range_dir,
                &range_workloads,
            )?;
            if lines {
                eprintln!("{label}: range workloads done");
            }
            range_results.extend(r);
        }
    }
    let range_report = (!range_workloads.is_empty()).then(|| RangeReport {
        image: range_filter.image.name().to_string(),
        kind: range_filter.kind.to_string(),
        results: range_results,
    });
    let prefix_report = (!prefix_workloads.is_empty()).then(|| PrefixReport {
        extractor: args.prefix_extractor.name(),
        groups: prefix::Groups::new(config.keys, config.seed).count(),
        results: prefix_results,
    });
    let machine = report::Machine {
        cores,
        load_start,
        load_end: report::Machine::load_average(),
        ribbon_simd: siftdb::filter::Ribbon::simd(),
    };
    let report = (!workloads.is_empty()).then(|| report::Report { config: config.clone(), results, machine });
    if args.json {
        // The text report carries its warnings; with --json they go to stderr too.
        for w in report.iter().flat_map(report::Report::warnings) {
            eprintln!("siftdb: bench: warning: {w}");
        }
        let mut doc = match &report {
            Some(r) => r.to_json(),
            None => {
                serde_json::json!({ "keys": config.keys, "lookups": config.lookups, "seed": config.seed })
            }
        };
        if let (Some(p), Some(obj)) = (&prefix_report, doc.as_object_mut()) {
            obj.insert("prefix".into(), p.to_json());
        }
        if let (Some(r), Some(obj)) = (&range_report, doc.as_object_mut()) {
            obj.insert("range".into(), r.to_json());
        }
        crate::output::print_json(&doc);
    } else {
        if let Some(r) = &report {
            print!("{}", r.to_text(args.wide));
        }
        if let Some(p) = &prefix_report {
            print!("{}", p.to_text());
        }
        if let Some(r) = &range_report {
            print!("{}", r.to_text());
        }
    }
    if let (Some(csv), Some(r)) = (csv, &report) {
        csv.publish(r.to_csv().as_bytes())?;
    }
    if let (Some(svg), Some(r)) = (svg, &report) {
        svg.publish(r.to_svg()?.as_bytes())?;
    }
    let mut problems = report.as_ref().map(report::Report::problems).unwrap_or_default();
    problems.extend(prefix_report.iter().flat_map(PrefixReport::problems));
    problems.extend(range_report.iter().flat_map(RangeReport::problems));
    for p in &problems {
        eprintln!("siftdb: bench: {p}");
    }
    // Last, so the files are the last thing a reader sees; beside --json, on
    // stderr, so stdout stays one JSON document.
    let written = files_written(svg_path.as_deref(), args.csv.as_deref(), args.dir.as_deref());
    if args.json {
        eprintln!("{written}")
    } else {
        println!("{written}")
    }
    Ok(if problems.is_empty() { Outcome::Clean } else { Outcome::ProblemsFound })
}

#[cfg(test)]
mod tests;
