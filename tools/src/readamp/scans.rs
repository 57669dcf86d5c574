//! What the scan workloads (prefix and range) share: a run's counters and
//! latencies, timing the scans, running them on one tree without its scan
//! filter and with it, and the figures and JSON drawn from a run.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use siftdb::{Db, DbIter, LevelStats, Options};

use super::report::percentile;

/// One run of one workload: with the scan filter or without.
#[derive(Debug, Clone)]
pub struct ScanRun {
    /// Scans run.
    pub scans: usize,
    /// Engine counters over the scans alone.
    pub levels: Vec<LevelStats>,
    /// Wall time.
    pub elapsed: Duration,
    /// Sorted per-scan latencies, ns.
    pub latencies_ns: Vec<u64>,
    /// Scans that did not return exactly the keys they should.
    pub wrong_answers: u64,
}

/// Runs `n` scans on `db`, scan `i` being `scan(i)`: the iterator and how
/// many keys it must yield, each timed from its making to its end.
///
/// # Errors
/// A scan's error, as text.
pub fn time_scans(db: &Db, n: usize, scan: impl Fn(usize) -> (DbIter, u64)) -> Result<ScanRun, String> {
    let before = db.stats();
    let start = Instant::now();
    let mut latencies_ns = Vec::with_capacity(n);
    let mut wrong_answers = 0;
    for i in 0..n {
        let t = Instant::now();
        let (it, want) = scan(i);
        let mut got = 0u64;
        for item in it {
            item.map_err(|e| format!("scan: {e}"))?;
            got += 1;
        }
        latencies_ns.push(u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX));
        wrong_answers += u64::from(got != want);
    }
    let elapsed = start.elapsed();
    latencies_ns.sort_unstable();
    Ok(ScanRun { scans: n, levels: db.stats().since(&before).levels, elapsed, latencies_ns, wrong_answers })
}

/// Opens the tree at `dir` with `opts(false)` (the scan filter off), runs
/// `run`, closes it, and does the same with `opts(true)`: (without, with).
/// `tick` follows each run.
///
/// # Errors
/// An open, close or run error, naming `name`.
pub fn without_and_with(
    dir: &Path,
    name: &str,
    opts: impl Fn(bool) -> Options,
    run: impl Fn(&Db) -> Result<ScanRun, String>,
    tick: impl Fn(),
) -> Result<(ScanRun, ScanRun), String> {
    let mut runs = Vec::with_capacity(2);
    for on in [false, true] {
        let db = Db::open(dir, opts(on)).map_err(|e| format!("{}: {e}", dir.display()))?;
        runs.push(run(&db).map_err(|e| format!("{name}: {e}"))?);
        db.close().map_err(|e| format!("{name}: close: {e}"))?;
        tick();
    }
    let with = runs.pop().ok_or("no run")?;
    let without = runs.pop().ok_or("no run")?;
    Ok((without, with))
}

/// Which scan filter a workload measures, and so which counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanFilter {
    /// Prefix entries in the point filter.
    Prefix,
    /// The range filter.
    Range,
}

impl ScanFilter {
    /// The filter's probes, skips and false positives at one level.
    fn counts(self, l: &LevelStats) -> [u64; 3] {
        match self {
            ScanFilter::Prefix => [l.prefix_probes, l.prefix_skipped, l.prefix_false_positives],
            ScanFilter::Range => [l.range_probes, l.range_skipped, l.range_false_positives],
        }
    }

    /// The JSON names of those counters.
    fn names(self) -> [&'static str; 3] {
        match self {
            ScanFilter::Prefix => ["prefix_probes", "prefix_skipped", "prefix_false_positives"],
            ScanFilter::Range => ["range_probes", "range_skipped", "range_false_positives"],
        }
    }
}

/// Figures of one run.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunFigures {
    pub blocks_per_scan: f64,
    pub tables_per_scan: f64,
    /// The scan filter's probes, skips and false positives.
    pub probes: u64,
    pub skipped: u64,
    pub false_positives: u64,
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
}

/// The figures of `run`, counting `filter`'s probes.
pub fn figures(run: &ScanRun, filter: ScanFilter) -> RunFigures {
    let scans = run.scans.max(1) as f64;
    let sum = |f: &dyn Fn(&LevelStats) -> u64| run.levels.iter().map(f).sum::<u64>();
    RunFigures {
        blocks_per_scan: sum(&|l| l.table_blocks_read) as f64 / scans,
        tables_per_scan: sum(&|l| l.scan_tables_opened) as f64 / scans,
        probes: sum(&|l| filter.counts(l)[0]),
        skipped: sum(&|l| filter.counts(l)[1]),
        false_positives: sum(&|l| filter.counts(l)[2]),
        mean_ns: run.latencies_ns.iter().sum::<u64>() as f64 / scans,
        p50_ns: percentile(&run.latencies_ns, 0.5),
        p99_ns: percentile(&run.latencies_ns, 0.99),
    }
}

/// A run as JSON, its filter counters named for `filter`.
pub fn run_json(run: &ScanRun, filter: ScanFilter) -> Value {
    let f = figures(run, filter);
    let [probes, skipped, fps] = filter.names();
    let mut doc = json!({
        "scans": run.scans,
        "seconds": run.elapsed.as_secs_f64(),
        "data_blocks_per_scan": f.blocks_per_scan,
        "tables_opened_per_scan": f.tables_per_scan,
        "mean_ns": f.mean_ns,
        "p50_ns": f.p50_ns,
        "p99_ns": f.p99_ns,
        "wrong_answers": run.wrong_answers,
        "levels": run.levels.iter().map(|l| {
            let [p, s, x] = filter.counts(l);
            json!({
                "level": l.level,
                "tables_opened": l.scan_tables_opened,
                "data_blocks": l.table_blocks_read,
                probes: p,
                skipped: s,
                fps: x,
            })
        }).collect::<Vec<_>>(),
    });
    doc[probes] = json!(f.probes);
    doc[skipped] = json!(f.skipped);
    doc[fps] = json!(f.false_positives);
    doc
}

/// The problem lines of a pair of runs that returned wrong keys: `what`
/// names the policy and workload, `filtering` the filter ("prefix
/// filtering").
pub fn wrong_answers(what: &str, filtering: &str, with: &ScanRun, without: &ScanRun) -> Vec<String> {
    [(with, "with"), (without, "without")]
        .into_iter()
        .filter(|(run, _)| run.wrong_answers > 0)
        .map(|(run, how)| {
            format!("{what}: {} scans {how} {filtering} returned the wrong keys", run.wrong_answers)
        })
        .collect()
}
