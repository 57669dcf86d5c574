//! Loading one database per policy and timing the lookup workloads on it.

use std::path::Path;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use siftdb::policy::FilterPolicy;
use siftdb::{Db, FilterKind, Options, Stats, WriteBatch};

use super::workload::{self, SplitMix, Workload};

/// What every policy is measured with.
#[derive(Debug, Clone)]
pub struct Config {
    /// Keys loaded.
    pub keys: u64,
    /// Lookups per workload.
    pub lookups: usize,
    /// Bytes per value.
    pub value_bytes: usize,
    /// Seed of keys, load order and lookups.
    pub seed: u64,
    /// Reader threads.
    pub threads: usize,
    /// Present fraction of the mixed workload.
    pub hit_ratio: f64,
    /// Draw progress bars (stderr).
    pub show_progress: bool,
    /// The filter memory budget, in bytes, the budgeted policies plan under
    /// (the others cannot take one: `Db::open` refuses it).
    pub filter_memory_bytes: Option<u64>,
}

/// One level of a loaded tree.
#[derive(Debug, Clone)]
pub struct LevelShape {
    /// Level number.
    pub level: usize,
    /// Tables.
    pub tables: u64,
    /// Entries.
    pub keys: u64,
    /// File bytes.
    pub bytes: u64,
    /// Filter kinds present, as names.
    pub filter_kinds: Vec<String>,
    /// Filter bytes.
    pub filter_bytes: u64,
    /// Rate the policy targets for the level now (as `Stats` reports it).
    pub target_fpr: f64,
    /// The theoretical false-positive rate of the level's filters as built:
    /// the highest among the kinds its tables carry (1 for a table without a
    /// filter, 0 for an empty level). A lookup that probes one of the level's
    /// tables for a key it lacks reads a data block with at most this chance.
    pub filter_fpr: f64,
    /// The level's built rate: its tables' real rates weighted by their
    /// keys (`LevelStats::built_fpr`); `None` for an empty level.
    pub built_fpr: Option<f64>,
    /// Tables whose xor or fuse build fell back (`LevelStats::filter_fallbacks`).
    pub filter_fallbacks: u64,
    /// Tables whose filter misses the planned rate (`LevelStats::tables_over_target`).
    pub tables_over_target: u64,
}

/// One workload's figures on one policy.
#[derive(Debug, Clone)]
pub struct WorkloadResult {
    /// The workload.
    pub workload: Workload,
    /// Lookups run.
    pub lookups: usize,
    /// Lookups of keys that were loaded (the rest were absent).
    pub present_lookups: u64,
    /// Engine counters over the lookups alone.
    pub stats: Stats,
    /// Wall time of the lookup phase.
    pub elapsed: Duration,
    /// Sorted per-lookup latencies in nanoseconds.
    pub latencies_ns: Vec<u64>,
    /// Lookups whose answer was not the one loaded.
    pub wrong_answers: u64,
    /// The chance that two lookups drawn from this run ask for the same
    /// key, Σ (share of the lookups on key k)²: 1/lookups when no key
    /// repeats, far more for a skewed workload (see `report::block_bound`).
    pub repeat_weight: f64,
}

/// Everything measured for one policy.
#[derive(Debug, Clone)]
pub struct PolicyResult {
    /// The policy's name as given.
    pub name: String,
    /// Time to load the keys and settle the tree: puts, flushes and
    /// compactions, all in the loader's thread (see `load`).
    pub build: Duration,
    /// Time in the puts alone (fillrandom: one batch of 1,000 keys per
    /// write, without fsync), summed over the writes.
    pub load: Duration,
    /// The tree after loading.
    pub levels: Vec<LevelShape>,
    /// Per point-lookup workload, in the order given.
    pub workloads: Vec<WorkloadResult>,
    /// The range-scan sanity check, when the `scan` workload was selected.
    pub scan: Option<ScanCheck>,
}

impl PolicyResult {
    /// Seconds spent in the lookup workloads and the scan check.
    #[must_use]
    pub fn lookup_seconds(&self) -> f64 {
        self.workloads.iter().map(|w| w.elapsed.as_secs_f64()).sum::<f64>()
            + self.scan.as_ref().map_or(0.0, |s| s.elapsed.as_secs_f64())
    }
}

/// The range-scan sanity check.
#[derive(Debug, Clone, Default)]
pub struct ScanCheck {
    /// Ranges scanned.
    pub ranges: u64,
    /// Entries returned.
    pub entries: u64,
    /// Entries missing, extra, out of order or with a wrong value.
    pub mismatches: u64,
    /// Time spent scanning.
    pub elapsed: Duration,
}

pub(super) fn progress(config: &Config, len: u64, what: &str) -> ProgressBar {
    if !config.show_progress {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    if let Ok(style) = ProgressStyle::with_template("{msg:<32} [{bar:30}] {pos}/{len} ({eta})") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(what.to_string());
    bar
}

/// A spinner for work of unknown length (the final compaction), so the
/// screen does not sit on a full, frozen bar.
fn spinner(config: &Config, what: &str) -> ProgressBar {
    if !config.show_progress {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new_spinner();
    if let Ok(style) = ProgressStyle::with_template("{msg:<32} {spinner} {elapsed}") {
        bar.set_style(style);
    }
    bar.set_message(what.to_string());
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

/// The smallest `--keys` for which [`options_for`] promises at least
/// [`MIN_LEVELS`] levels holding tables (at any `--value-bytes`).
pub const MIN_KEYS_FOR_LEVELS: u64 = 20_000;

/// Levels (L0 included) the tree should hold tables in.
pub const MIN_LEVELS: usize = 4;

/// Sizes the tree so `keys` entries spread over L1..L4 (plus L0), whatever
/// the key count at or above [`MIN_KEYS_FOR_LEVELS`].
pub fn options_for(config: &Config, policy: &FilterPolicy) -> Options {
    let entry = 16 + config.value_bytes as u64 + 16;
    let data = config.keys * entry;
    // Level targets of data/300 × 10^(i-1) spread the keys over L1..L4
    // (L1..L3 hold at most 37% of the data, so L4 gets the rest); tables of
    // half the L1 target let L1 keep one after compaction. The floors (one
    // 4 KiB data block per table, two per level-1 target) only bind below
    // ~19,000 keys of 100 bytes.
    let base = (data / 300).max(2 << 10);
    let table = (base / 2).min(8 << 20);
    Options {
        filter_policy: Some(policy.clone()),
        filter_memory_bytes: config.filter_memory_bytes.filter(|_| policy.is_budgeted()),
        hash_salt: Some(config.seed),
        sync: false,
        memtable_bytes: usize::try_from((data / 32).clamp(16 << 10, 16 << 20)).unwrap_or(16 << 20),
        base_level_bytes: base,
        table_target_bytes: table,
        table_size_multiplier: table_size_multiplier(table),
        level_size_ratio: 10,
        // The loader compacts between memtables itself (see `load`), so the
        // tree is the same on every run with one seed.
        auto_compaction: false,
        // The levels above are sized in raw entry bytes, and the values
        // (random letters) give LZ4 nothing to shrink: raw tables keep the
        // tree the sizing plans and spare the load a compression per block.
        compression: siftdb::CompressionPolicy::uniform(siftdb::Compression::None),
        ..Options::default()
    }
}

/// The largest table the bench's level 4 is split into.
pub const MAX_TABLE_BYTES: u64 = 256 << 20;

/// Tables grow ×10 per level, as the levels do, so every level holds about
/// as many tables as level 1 and the big levels hold big tables (with
/// compaction's widening): at 20,000 keys level 3 held 3 tables for 6,723
/// keys, against 52 tables of 36–124 keys before, whose fuse8 filters cost
/// 19.2 bits/key (33 at levels 1–2), more than a budget near 10 can pay.
/// Smaller where
/// ×10 would make level 4's tables larger than [`MAX_TABLE_BYTES`].
fn table_size_multiplier(level1_table_bytes: u64) -> u64 {
    (1..=10u64).rev().find(|m| level1_table_bytes.saturating_mul(m.pow(3)) <= MAX_TABLE_BYTES).unwrap_or(1)
}

/// The order every policy loads the keys in: a seeded shuffle of `0..keys`.
fn load_order(config: &Config) -> Vec<u64> {
    let mut order: Vec<u64> = (0..config.keys).collect();
    let mut rng = SplitMix::new(config.seed ^ 0x10AD);
    for i in (1..order.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    order
}

/// Keys the loader writes between two flushes: what one memtable of
/// `opts` holds, so the memtable never fills on its own and every flush
/// happens where the loader calls it.
fn keys_per_flush(config: &Config, opts: &Options) -> usize {
    let entry = 16 + config.value_bytes + 16;
    (opts.memtable_bytes / entry).max(1)
}

/// The time a load took, split the way the report shows it.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct LoadTimes {
    /// In `db.write` alone.
    puts: Duration,
    /// Everything: puts, flushes and compactions.
    total: Duration,
}

/// Loads the keys (batches of 1,000, without fsync) and settles the tree
/// the same way on every run with one seed: background compaction is off
/// (`options_for`), after every memtable's worth of keys the loader
/// flushes and runs the compactions the background thread would
/// (`Db::compact_due`), and at the end it settles with `Db::compact`. The
/// tree's shape, and so every count the bench reports, then depends only on
/// the seed and the options, never on how the background thread was
/// scheduled. (Calling `compact` after every memtable instead made
/// monkey:10 rewrite its Bloom tables at every small change of plan: its
/// load took 1.25× fuse8's.)
pub(super) fn load<K: AsRef<[u8]>>(
    config: &Config,
    (name, label): (&str, &str),
    db: &Db,
    opts: &Options,
    key_of: &dyn Fn(u64) -> K,
) -> Result<LoadTimes, String> {
    let order = load_order(config);
    let bar = progress(config, config.keys, &format!("{label}: load"));
    let start = Instant::now();
    let mut puts = Duration::ZERO;
    for memtable in order.chunks(keys_per_flush(config, opts)) {
        for chunk in memtable.chunks(1000) {
            let mut batch = WriteBatch::new();
            for &i in chunk {
                batch.put(key_of(i), workload::value(i, config.value_bytes));
            }
            let t = Instant::now();
            db.write(batch).map_err(|e| format!("{name}: load: {e}"))?;
            puts += t.elapsed();
            bar.inc(chunk.len() as u64);
        }
        db.flush().map_err(|e| format!("{name}: flush: {e}"))?;
        db.compact_due().map_err(|e| format!("{name}: compact: {e}"))?;
    }
    bar.finish_and_clear();
    let spin = spinner(config, &format!("{label}: compact"));
    db.compact().map_err(|e| format!("{name}: compact: {e}"))?;
    spin.finish_and_clear();
    Ok(LoadTimes { puts, total: start.elapsed() })
}

fn run_lookups(
    config: &Config,
    name: &str,
    label: &str,
    db: &Db,
    workload: Workload,
) -> Result<WorkloadResult, String> {
    let seq = workload::lookups(workload, config.keys, config.lookups, config.hit_ratio, config.seed);
    let bar = progress(config, seq.len() as u64, &format!("{label}: {}", workload.name()));
    let before = db.stats();
    let start = Instant::now();
    let chunk = seq.len().div_ceil(config.threads);
    let outcomes: Vec<Result<(Vec<u64>, u64), String>> = std::thread::scope(|s| {
        let handles: Vec<_> = seq
            .chunks(chunk.max(1))
            .map(|part| {
                let bar = bar.clone();
                s.spawn(move || {
                    let mut lat = Vec::with_capacity(part.len());
                    let mut wrong = 0u64;
                    for (n, &i) in part.iter().enumerate() {
                        let key = workload::key(config.seed, i);
                        let t = Instant::now();
                        let got = db.get(key).map_err(|e| format!("{name}: get: {e}"))?;
                        lat.push(u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX));
                        let right = if i < config.keys {
                            got.as_deref() == Some(workload::value(i, config.value_bytes).as_slice())
                        } else {
                            got.is_none()
                        };
                        wrong += u64::from(!right);
                        if n % 4096 == 4095 {
                            bar.inc(4096);
                        }
                    }
                    Ok((lat, wrong))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("a reader thread panicked".into())))
            .collect()
    });
    let elapsed = start.elapsed();
    let stats = db.stats().since(&before);
    bar.finish_and_clear();
    let mut latencies_ns = Vec::with_capacity(seq.len());
    let mut wrong_answers = 0;
    for o in outcomes {
        let (lat, wrong) = o?;
        latencies_ns.extend(lat);
        wrong_answers += wrong;
    }
    latencies_ns.sort_unstable();
    let present_lookups = seq.iter().filter(|&&i| i < config.keys).count() as u64;
    Ok(WorkloadResult {
        workload,
        lookups: seq.len(),
        present_lookups,
        stats,
        elapsed,
        latencies_ns,
        wrong_answers,
        repeat_weight: repeat_weight(&seq),
    })
}

/// Σ over distinct keys of (that key's share of `seq`)².
pub fn repeat_weight(seq: &[u64]) -> f64 {
    let mut sorted = seq.to_vec();
    sorted.sort_unstable();
    let total = sorted.len().max(1) as f64;
    sorted.chunk_by(|a, b| a == b).map(|run| (run.len() as f64 / total).powi(2)).sum()
}

/// Scans a few seeded ranges and checks them against the sorted key set.
fn scan_check(config: &Config, db: &Db, sorted: &[([u8; 16], u64)]) -> ScanCheck {
    let mut check = ScanCheck::default();
    let mut rng = SplitMix::new(config.seed ^ 0x5CA7);
    let start = Instant::now();
    for _ in 0..20 {
        let from = rng.below(sorted.len() as u64) as usize;
        let to = (from + 500).min(sorted.len() - 1);
        let (lo, hi) = (sorted[from].0, sorted[to].0);
        let mut expected = sorted[from..to].iter();
        for item in db.range(lo.as_slice()..hi.as_slice()) {
            check.entries += 1;
            let ok = match (item, expected.next()) {
                (Ok((k, v)), Some((want_k, i))) => {
                    k.as_ref() == want_k.as_slice()
                        && v.as_ref() == workload::value(*i, config.value_bytes).as_slice()
                }
                _ => false,
            };
            check.mismatches += u64::from(!ok);
        }
        check.mismatches += expected.count() as u64;
        check.ranges += 1;
    }
    check.elapsed = start.elapsed();
    check
}

fn shape(stats: &Stats) -> Vec<LevelShape> {
    stats
        .levels
        .iter()
        .map(|l| LevelShape {
            level: l.level,
            tables: l.tables,
            keys: l.keys,
            bytes: l.bytes,
            filter_kinds: {
                // Monkey re-plans as the tree grows, so one level can hold
                // tables of several kinds; list each kind once.
                let mut kinds: Vec<String> = l.filter_kinds.iter().map(ToString::to_string).collect();
                kinds.sort();
                kinds.dedup();
                kinds
            },
            filter_bytes: l.filter_bytes,
            target_fpr: l.target_fpr,
            filter_fpr: l.filter_kinds.iter().map(FilterKind::theoretical_fpr).fold(0.0, f64::max),
            built_fpr: l.built_fpr,
            filter_fallbacks: l.filter_fallbacks,
            tables_over_target: l.tables_over_target,
        })
        .collect()
}

/// Loads `policy` into a fresh database at `dir` (absent or empty: see
/// `prepare_dirs`) and runs every workload; `label` names it in progress
/// lines (e.g. "[policy 3/8] fuse8").
pub fn run_policy(
    config: &Config,
    name: &str,
    label: &str,
    policy: &FilterPolicy,
    dir: &Path,
    workloads: &[Workload],
) -> Result<PolicyResult, String> {
    let opts = options_for(config, policy);
    let db = Db::open(dir, opts.clone()).map_err(|e| format!("{}: {e}", dir.display()))?;
    let times = load(config, (name, label), &db, &opts, &|i| workload::key(config.seed, i))?;
    let levels = shape(&db.stats());
    let mut results = Vec::with_capacity(workloads.len());
    let mut scan = None;
    for &w in workloads {
        if w.is_lookup() {
            results.push(run_lookups(config, name, label, &db, w)?);
        } else {
            let mut sorted: Vec<([u8; 16], u64)> =
                (0..config.keys).map(|i| (workload::key(config.seed, i), i)).collect();
            sorted.sort_unstable();
            scan = Some(scan_check(config, &db, &sorted));
        }
    }
    db.close().map_err(|e| format!("{name}: close: {e}"))?;
    Ok(PolicyResult {
        name: name.to_string(),
        build: times.total,
        load: times.puts,
        levels,
        workloads: results,
        scan,
    })
}

#[cfg(test)]
mod tests;
