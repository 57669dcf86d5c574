//! db_bench's workloads, run against any [`Engine`]: one round fills fresh
//! stores, settles them, and times reads, scans and overwrites on the
//! result. Every answer is checked (a present key must be found with its
//! value's length, an absent one must not), so a fast wrong engine fails.
//!
//! Each operation is timed on its own for the latency percentiles (two
//! clock reads, ~40 ns, paid alike by every engine in a comparison).

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::engine::{Engine, Shape, Written};
use crate::keys::{KeyFormat, SplitMix};
use crate::latency::Histogram;

mod delete_range;
mod hot;
mod reads;
mod values;
pub use delete_range::{RANGE_KEYS, RangeDeletes, Rate};
use reads::{Read, reads};
pub use values::Values;

/// One of the benchmark's workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Workload {
    /// Fresh store, keys put in ascending order, one put per write.
    FillSeq,
    /// Fresh store, every key put once in random order, one put per write;
    /// the store read by every later workload.
    FillRandom,
    /// Random present keys looked up (uniform).
    ReadRandom,
    /// Keys never written looked up: only filters keep these cheap.
    ReadMissing,
    /// `readrandom`'s keys read 32 a call (`Engine::multi_get`).
    MultiGet32,
    /// `readrandom`'s keys read 256 a call.
    MultiGet256,
    /// `readmissing`'s keys read 32 a call.
    MultiMissing32,
    /// `readmissing`'s keys read 256 a call.
    MultiMissing256,
    /// A seek to a random present key, then `nexts` pairs read.
    SeekRandom,
    /// `seekrandom` with 5% writes: each reader thread overwrites a random
    /// key in place of every 20th seek; op/s counts both.
    SeekMix,
    /// A hot spot: one thread overwrites zipfian-drawn keys (YCSB's skew,
    /// 0.99) for `Config::hot_writes`, then seeks to zipfian-drawn keys
    /// read `nexts` pairs each, with no settle between, so the hot keys'
    /// versions are still in the memtables ([`crate::keys::Zipf`]).
    ScanHot,
    /// Random present keys overwritten with new values, one put per write.
    Overwrite,
    /// Random present keys looked up by the reader threads while one more
    /// thread overwrites random keys as fast as it can.
    ReadWhileWriting,
    /// Last, since it empties half the store: range deletes of every other
    /// run of 1,000 keys in key order, then a settle, the disk bytes before
    /// and after, and gets of the deleted keys beside gets of keys never
    /// written ([`RangeDeletes`]).
    DeleteRange,
}

impl Workload {
    /// Every workload, in the order a round runs them.
    pub const ALL: [Workload; 14] = [
        Workload::FillSeq,
        Workload::FillRandom,
        Workload::ReadRandom,
        Workload::ReadMissing,
        Workload::MultiGet32,
        Workload::MultiGet256,
        Workload::MultiMissing32,
        Workload::MultiMissing256,
        Workload::SeekRandom,
        Workload::SeekMix,
        Workload::ScanHot,
        Workload::Overwrite,
        Workload::ReadWhileWriting,
        Workload::DeleteRange,
    ];

    /// The name db_bench gives it, used on the command line and in reports.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Workload::FillSeq => "fillseq",
            Workload::FillRandom => "fillrandom",
            Workload::ReadRandom => "readrandom",
            Workload::ReadMissing => "readmissing",
            Workload::MultiGet32 => "multiget32",
            Workload::MultiGet256 => "multiget256",
            Workload::MultiMissing32 => "multimissing32",
            Workload::MultiMissing256 => "multimissing256",
            Workload::SeekRandom => "seekrandom",
            Workload::SeekMix => "seekmix",
            Workload::ScanHot => "scanhot",
            Workload::Overwrite => "overwrite",
            Workload::ReadWhileWriting => "readwhilewriting",
            Workload::DeleteRange => "deleterange",
        }
    }

    /// The workload named `s`.
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        Workload::ALL.into_iter().find(|w| w.name() == s)
    }

    /// What seeds its operations' draws: its place in the list before the
    /// batched reads were added, so each workload draws the keys it drew in
    /// earlier runs (the batched reads come after).
    #[must_use]
    pub fn stream(self) -> u64 {
        match self {
            Workload::FillSeq => 0,
            Workload::FillRandom => 1,
            Workload::ReadRandom => 2,
            Workload::ReadMissing => 3,
            Workload::SeekRandom => 4,
            Workload::Overwrite => 5,
            Workload::ReadWhileWriting => 6,
            Workload::DeleteRange => 7,
            Workload::MultiGet32 => 8,
            Workload::MultiGet256 => 9,
            Workload::MultiMissing32 => 10,
            Workload::MultiMissing256 => 11,
            Workload::SeekMix => 12,
            Workload::ScanHot => 13,
        }
    }

    /// Whether it writes, and so has a write amplification and a settle time.
    #[must_use]
    pub fn writes(self) -> bool {
        matches!(self, Workload::FillSeq | Workload::FillRandom | Workload::Overwrite)
    }
}

/// What a round runs.
#[derive(Debug, Clone)]
pub struct Config {
    /// Keys loaded (and the key space reads draw from).
    pub keys: u64,
    /// Bytes per value.
    pub value_bytes: usize,
    /// The fraction of each value's bytes that repeat earlier ones (0 to 1; `values.rs`).
    pub value_compressibility: f64,
    /// Operations per read, seek and overwrite workload.
    pub ops: u64,
    /// Threads sharing each read workload's operations (and readers beside `readwhilewriting`'s writer).
    pub threads: usize,
    /// Pairs read after each seek.
    pub nexts: usize,
    /// Seed of the keys and of every operation sequence.
    pub seed: u64,
    /// How key numbers become keys.
    pub key_format: KeyFormat,
    /// The workloads to time, in [`Workload::ALL`]'s order whatever the order given; the store is
    /// loaded untimed when `fillrandom` is not among them.
    pub workloads: Vec<Workload>,
    /// Reads run on the store as the load left it: no settle after the
    /// fill, so recent keys are still in memtables and level 0 while
    /// background compaction runs, as in a database in normal running.
    pub unsettled: bool,
    /// How long `scanhot` overwrites its hot keys before it scans.
    pub hot_writes: Duration,
    /// A progress line on stderr while a phase runs.
    pub progress: bool,
}

impl Config {
    /// Key number `i` (`i ≥ keys`: absent keys).
    #[must_use]
    pub fn key(&self, i: u64) -> [u8; 16] {
        self.key_format.key(self.seed, self.keys, i)
    }
}

/// One workload's figures in one round.
#[derive(Debug, Clone)]
pub struct Phase {
    /// Which workload.
    pub workload: Workload,
    /// Operations timed.
    pub ops: u64,
    /// Wall time of those operations (all threads).
    pub elapsed: Duration,
    /// Each operation's latency.
    pub latency: Histogram,
    /// For writing workloads: the time the store took to settle afterwards.
    pub settle: Option<Duration>,
    /// For writing workloads: table bytes written per user byte, from the
    /// first put through the settle, when the engine counts them.
    pub write_amplification: Option<f64>,
    /// For writing workloads: bytes the process handed to `write(2)` (WAL,
    /// tables, manifest) per user byte over the same span, on Linux: how
    /// every engine can be counted alike.
    pub process_write_amplification: Option<f64>,
    /// For writing workloads: the same two figures, tables then `write(2)`,
    /// once background compaction had nothing due (`Engine::wait_idle`),
    /// before the full settle: what `RocksDB`'s `waitforcompaction` leaves.
    pub at_idle: Option<(Option<f64>, Option<f64>)>,
    /// For `readwhilewriting`: the puts the writer thread made meanwhile;
    /// for `scanhot`: the overwrites before the scans. Each with the span
    /// they were made over.
    pub background_writes: Option<(u64, Duration)>,
    /// For `deleterange`: what the deletes gave back and what reads of the
    /// deleted keys cost.
    pub range_deletes: Option<RangeDeletes>,
}

impl Phase {
    /// A phase of `ops` operations timed over `elapsed`, with nothing else
    /// measured.
    #[must_use]
    pub fn timed(workload: Workload, ops: u64, elapsed: Duration, latency: Histogram) -> Self {
        Phase {
            workload,
            ops,
            elapsed,
            latency,
            settle: None,
            write_amplification: None,
            process_write_amplification: None,
            at_idle: None,
            background_writes: None,
            range_deletes: None,
        }
    }

    /// Operations per second.
    #[must_use]
    pub fn ops_per_sec(&self) -> f64 {
        self.ops as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// One round's phases, and the shape of the tree the reads ran on.
#[derive(Debug, Clone)]
pub struct Round {
    /// One per timed workload, in run order.
    pub phases: Vec<Phase>,
    /// The store's shape when the reads began (after the fill settled, unless
    /// [`Config::unsettled`]).
    pub shape: Shape,
}

/// Key numbers `0..n` in a seeded random order (Fisher–Yates).
fn permutation(n: u64, seed: u64) -> Vec<u64> {
    let mut order: Vec<u64> = (0..n).collect();
    let mut rng = SplitMix::new(seed ^ 0xF111);
    for i in (1..order.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    order
}

fn bar(cfg: &Config, len: u64, what: &str) -> ProgressBar {
    if !cfg.progress {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    if let Ok(style) = ProgressStyle::with_template("{msg:<24} [{bar:30}] {pos}/{len} ({eta})") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(what.to_string());
    bar
}

/// Progress is reported every this many operations, so the bar costs nothing.
const TICK: u64 = 1 << 14;

/// Puts `order`'s keys one per write, timing each; the phase without its settle.
fn fill<E: Engine>(
    cfg: &Config,
    e: &E,
    workload: Workload,
    n: u64,
    key_of: impl Fn(u64) -> [u8; 16],
    values: &Values,
) -> Result<Phase, String> {
    let progress = bar(cfg, n, workload.name());
    let mut latency = Histogram::new();
    let start = Instant::now();
    for i in 0..n {
        let k = key_of(i);
        let t = Instant::now();
        e.put(&k, values.get(i))?;
        latency.record(t.elapsed().as_nanos() as u64);
        if i % TICK == TICK - 1 {
            progress.inc(TICK);
        }
    }
    let elapsed = start.elapsed();
    progress.finish_and_clear();
    Ok(Phase::timed(workload, n, elapsed, latency))
}

/// Settles `e` and completes a writing phase with its settle time and write
/// amplification since `before`.
fn settle<E: Engine>(
    cfg: &Config,
    e: &E,
    mut phase: Phase,
    before: Option<Written>,
) -> Result<Phase, String> {
    let spinner = if cfg.progress { ProgressBar::new_spinner() } else { ProgressBar::hidden() };
    spinner.set_message(format!("{} settling", phase.workload.name()));
    spinner.enable_steady_tick(Duration::from_millis(120));
    let start = Instant::now();
    e.wait_idle()?;
    if let (Some(b), Some(a)) = (before, e.written()) {
        phase.at_idle = Some((a.amplification_since(&b), a.process_amplification_since(&b)));
    }
    e.settle()?;
    phase.settle = Some(start.elapsed());
    spinner.finish_and_clear();
    if let (Some(b), Some(a)) = (before, e.written()) {
        phase.write_amplification = a.amplification_since(&b);
        phase.process_write_amplification = a.process_amplification_since(&b);
    }
    Ok(phase)
}

/// `readwhilewriting`: the readers of `readrandom`, plus one thread
/// overwriting random keys until they finish.
fn read_while_writing<E: Engine>(cfg: &Config, e: &E, values: &Values) -> Result<Phase, String> {
    let stop = AtomicBool::new(false);
    let writes = AtomicU64::new(0);
    let (phase, written) = std::thread::scope(|s| {
        let writer = s.spawn(|| -> Result<(), String> {
            let mut rng = SplitMix::new(cfg.seed ^ 0x3717E);
            while !stop.load(Ordering::Acquire) {
                let i = rng.below(cfg.keys);
                e.put(&cfg.key(i), values.get(i ^ 0xACE))?;
                writes.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        });
        let phase = reads(cfg, e, Workload::ReadWhileWriting, Read::Present, &stop);
        stop.store(true, Ordering::Release);
        (phase, writer.join().unwrap_or_else(|_| Err("writer panicked".into())))
    });
    written?;
    let mut phase = phase?;
    phase.background_writes = Some((writes.load(Ordering::Relaxed), phase.elapsed));
    Ok(phase)
}

/// Runs one round of `cfg.workloads` on fresh stores under `dir` (one
/// subdirectory per store, `fillseq` and `fillrandom`, which must not hold
/// anything yet, removed when the round ends), opened by `open`.
///
/// # Errors
/// The first engine error or wrong answer, or a directory that could not
/// be made or removed.
pub fn round<E: Engine>(
    cfg: &Config,
    dir: &Path,
    open: &dyn Fn(&Path) -> Result<E, String>,
) -> Result<Round, String> {
    let wants = |w: Workload| cfg.workloads.contains(&w);
    let values = Values::new(cfg.value_bytes, cfg.seed, cfg.value_compressibility);
    let mut phases = Vec::new();
    if wants(Workload::FillSeq) {
        let path = fresh(dir, "fillseq")?;
        let e = open(&path)?;
        let before = e.written();
        let phase = fill(cfg, &e, Workload::FillSeq, cfg.keys, |i| cfg.key_format.sequential(i), &values)?;
        phases.push(settle(cfg, &e, phase, before)?);
        e.close()?;
        remove(&path)?;
    }

    let path = fresh(dir, "fillrandom")?;
    let heap_before = anonymous_resident_bytes();
    let e = open(&path)?;
    let order = permutation(cfg.keys, cfg.seed);
    let before = e.written();
    if wants(Workload::FillRandom) {
        let phase = fill(cfg, &e, Workload::FillRandom, cfg.keys, |i| cfg.key(order[i as usize]), &values)?;
        phases.push(if cfg.unsettled { phase } else { settle(cfg, &e, phase, before)? });
    } else {
        let progress = bar(cfg, cfg.keys, "load (untimed)");
        for chunk in order.chunks(1000) {
            let pairs: Vec<_> = chunk.iter().map(|&i| (cfg.key(i), values.get(i).to_vec())).collect();
            e.put_many(&pairs)?;
            progress.inc(chunk.len() as u64);
        }
        progress.finish_and_clear();
        if !cfg.unsettled {
            e.settle()?;
        }
    }
    drop(order);
    let mut shape = e.shape();
    shape.disk_bytes = dir_bytes(&path);
    shape.heap_bytes = anonymous_resident_bytes().zip(heap_before).map(|(now, was)| now.saturating_sub(was));

    let never = AtomicBool::new(false);
    for (w, read) in [
        (Workload::ReadRandom, Read::Present),
        (Workload::ReadMissing, Read::Missing),
        (Workload::MultiGet32, Read::Batch { size: 32, missing: false }),
        (Workload::MultiGet256, Read::Batch { size: 256, missing: false }),
        (Workload::MultiMissing32, Read::Batch { size: 32, missing: true }),
        (Workload::MultiMissing256, Read::Batch { size: 256, missing: true }),
        (Workload::SeekRandom, Read::Seek),
        (Workload::SeekMix, Read::SeekMix { values: &values }),
    ] {
        if wants(w) {
            phases.push(reads(cfg, &e, w, read, &never)?);
        }
    }
    if wants(Workload::ScanHot) {
        phases.push(hot::scan_hot(cfg, &e, &values)?);
    }
    if wants(Workload::Overwrite) {
        let mut rng = SplitMix::new(cfg.seed ^ 0x0BE5);
        let draws: Vec<u64> = (0..cfg.ops).map(|_| rng.below(cfg.keys)).collect();
        let before = e.written();
        let phase = fill(cfg, &e, Workload::Overwrite, cfg.ops, |j| cfg.key(draws[j as usize]), &values)?;
        phases.push(settle(cfg, &e, phase, before)?);
    }
    if wants(Workload::ReadWhileWriting) {
        phases.push(read_while_writing(cfg, &e, &values)?);
    }
    if wants(Workload::DeleteRange) {
        phases.push(delete_range::run(cfg, &e, &path)?);
    }
    e.close()?;
    remove(&path)?;
    Ok(Round { phases, shape })
}

/// The process's resident anonymous memory (`RssAnon` in
/// `/proc/self/status`): heap and stacks, not mapped files; `None` off Linux.
pub fn anonymous_resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib = status.lines().find_map(|l| l.strip_prefix("RssAnon:"))?.trim().strip_suffix("kB")?.trim();
    kib.parse::<u64>().ok().map(|k| k * 1024)
}

/// Bytes of the files under `dir`, subdirectories included; `None` if it
/// cannot be read.
fn dir_bytes(dir: &Path) -> Option<u64> {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).ok()? {
        let entry = entry.ok()?;
        let meta = entry.metadata().ok()?;
        total += if meta.is_dir() { dir_bytes(&entry.path())? } else { meta.len() };
    }
    Some(total)
}

fn fresh(dir: &Path, name: &str) -> Result<std::path::PathBuf, String> {
    let path = dir.join(name);
    // Never someone's data: a round only ever removes what it made.
    if std::fs::read_dir(&path).is_ok_and(|mut d| d.next().is_some()) {
        return Err(format!("{}: exists and is not empty; choose another directory", path.display()));
    }
    std::fs::create_dir_all(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

fn remove(path: &Path) -> Result<(), String> {
    std::fs::remove_dir_all(path).map_err(|e| format!("{}: {e}", path.display()))
}
