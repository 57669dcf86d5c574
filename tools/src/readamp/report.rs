//! The benchmark's report: derived figures, and their renderings as text
//! tables, JSON, CSV and an SVG chart.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::measure::{
    Config, LevelShape, MIN_KEYS_FOR_LEVELS, MIN_LEVELS, PolicyResult, ScanCheck, WorkloadResult,
};
use super::svg;
use super::verdict::{self, Contender};
use super::workload::Workload;
use crate::output;

/// Lookups may read at most (present fraction) + Σ(probed filter FPR) + this
/// many data blocks each (issue 5: 0.1%).
pub const BOUND_SLACK: f64 = 0.001;

/// A policy name usable as a directory name.
pub fn file_safe(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '.' { c } else { '_' }).collect()
}

/// Figures derived from one workload run.
#[derive(Debug, Clone, Copy, Default)]
pub struct Figures {
    /// Data blocks read per lookup.
    pub blocks_per_lookup: f64,
    /// Filter probes per lookup.
    pub probes_per_lookup: f64,
    /// Table probes per lookup, with or without a filter (for `none`, the
    /// tables whose index was searched).
    pub table_probes_per_lookup: f64,
    /// False positives over probes of tables lacking the key.
    pub observed_fpr: Option<f64>,
    /// Lookups per second.
    pub lookups_per_second: f64,
    /// Mean latency, ns.
    pub mean_ns: f64,
    /// Median latency, ns.
    pub p50_ns: u64,
    /// 99th percentile, ns.
    pub p99_ns: u64,
    /// 99.9th percentile, ns.
    pub p999_ns: u64,
}

fn percentile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Derives the per-lookup figures of `w`.
pub fn figures(w: &WorkloadResult) -> Figures {
    let n = w.lookups.max(1) as f64;
    let blocks: u64 = w.stats.levels.iter().map(|l| l.data_blocks_read).sum();
    let probes: u64 = w.stats.levels.iter().map(|l| l.filter_probes).sum();
    let unfiltered: u64 = w.stats.levels.iter().map(|l| l.probes_without_filter).sum();
    let fp: u64 = w.stats.levels.iter().map(|l| l.filter_false_positives).sum();
    let asked: u64 =
        w.stats.levels.iter().map(|l| l.filter_probes.saturating_sub(l.filter_true_positives)).sum();
    let secs = w.elapsed.as_secs_f64();
    Figures {
        blocks_per_lookup: blocks as f64 / n,
        probes_per_lookup: probes as f64 / n,
        table_probes_per_lookup: (probes + unfiltered) as f64 / n,
        observed_fpr: (asked > 0).then(|| fp as f64 / asked as f64),
        lookups_per_second: if secs > 0.0 { n / secs } else { 0.0 },
        mean_ns: w.latencies_ns.iter().map(|&x| x as f64).sum::<f64>() / n,
        p50_ns: percentile(&w.latencies_ns, 0.5),
        p99_ns: percentile(&w.latencies_ns, 0.99),
        p999_ns: percentile(&w.latencies_ns, 0.999),
    }
}

/// Σ over the filters an absent-key lookup probes of each filter's
/// false-positive rate: every L0 table (L0 tables overlap, so a lookup probes
/// each of them), plus one table in each deeper level that holds tables (its
/// tables partition the key space; counting the level is an upper bound for
/// keys outside its range). This is what an absent key costs in data blocks,
/// in expectation; a table without a filter counts 1.
pub fn probed_fpr_sum(r: &PolicyResult) -> f64 {
    r.levels
        .iter()
        .map(|l| {
            let probed = if l.level == 0 { l.tables } else { l.tables.min(1) };
            probed as f64 * l.filter_fpr.min(1.0)
        })
        .sum()
}

/// The most data blocks per lookup `w` may read on `r`'s tree: each present
/// key costs one block where it is found plus false positives above it, each
/// absent key the false positives of every filter it may probe, so the bound
/// is (present fraction) + [`probed_fpr_sum`] + [`BOUND_SLACK`] +
/// [`repeat_slack`]. Holds for every policy (for `none` it is simply loose:
/// one block per probed table).
pub fn block_bound(r: &PolicyResult, w: &WorkloadResult) -> f64 {
    let present = w.present_lookups as f64 / w.lookups.max(1) as f64;
    present + probed_fpr_sum(r) + BOUND_SLACK + repeat_slack(r, w)
}

/// Extra room for a workload that asks for the same keys again and again.
///
/// Whether a filter gives a false positive for a key is fixed once the
/// table is built, so every lookup of a hot key repeats its outcome: under
/// Zipf (θ = 0.99) one key is ~7% of all lookups, and one false positive on
/// it moves blocks/lookup by 0.07 per filter. Over the filters' randomness,
/// blocks/lookup then has variance (Σ_k w_k²)·Σ p(1 − p) ≤ (Σ_k w_k²)·Σ FPR,
/// with w_k the share of lookups on key k. Σ_k w_k² is 1/lookups when no
/// key repeats, the sampling error the 0.1% slack already stands for
/// (`Report::warnings` says when it does not); this adds four standard
/// deviations of the excess over that, for the one workload that repeats
/// keys by design (`zipfian`). Uniform, absent and mixed lookups repeat a
/// key only by chance and keep the bound as it is.
pub fn repeat_slack(r: &PolicyResult, w: &WorkloadResult) -> f64 {
    if w.workload != Workload::Zipfian {
        return 0.0;
    }
    let excess = (w.repeat_weight - 1.0 / w.lookups.max(1) as f64).max(0.0);
    4.0 * (excess * probed_fpr_sum(r).min(1.0)).sqrt()
}

/// Whether `w` read no more data blocks per lookup than [`block_bound`].
pub fn within_bound(r: &PolicyResult, w: &WorkloadResult) -> bool {
    figures(w).blocks_per_lookup <= block_bound(r, w)
}

/// Levels (L0 included) holding at least one table.
pub fn levels_with_tables(r: &PolicyResult) -> usize {
    r.levels.iter().filter(|l| l.tables > 0).count()
}

fn filter_bytes(r: &PolicyResult) -> u64 {
    r.levels.iter().map(|l| l.filter_bytes).sum()
}

fn bits_per_key(r: &PolicyResult) -> f64 {
    let keys: u64 = r.levels.iter().map(|l| l.keys).sum();
    if keys == 0 { 0.0 } else { filter_bytes(r) as f64 * 8.0 / keys as f64 }
}

/// A level's filter kinds for a table cell: all of them when few.
fn kinds_summary(kinds: &[String]) -> String {
    match kinds.len() {
        0..=3 => kinds.join(","),
        n => format!("{},{} +{} more", kinds[0], kinds[1], n - 2),
    }
}

/// The range-scan check in a few characters: "ok" with the entries
/// checked, or the mismatches ("-" when the `scan` workload was not run).
fn scan_brief(scan: Option<&ScanCheck>) -> String {
    scan.map_or("-".into(), |s| {
        if s.mismatches == 0 {
            format!("ok, {} entries", s.entries)
        } else {
            format!("{} MISMATCHES", s.mismatches)
        }
    })
}

/// The range-scan check for a table cell: ranges and entries checked, and
/// mismatched entries ("-" when the `scan` workload was not selected).
fn scan_cell(scan: Option<&ScanCheck>) -> String {
    scan.map_or("-".into(), |s| {
        format!("{} ranges, {} entries, {} mismatches", s.ranges, s.entries, s.mismatches)
    })
}

/// The CSV header. `theoretical_fpr` is Σ probed filter FPR on `all` rows
/// and the level's filter FPR on level rows; `target_fpr` is on level rows
/// only; the run-wide columns (bound, latency, throughput, build, ratios
/// other than `blocks_vs_none`) are on `all` rows only.
pub const CSV_COLUMNS: [&str; 40] = [
    "policy",
    "workload",
    "level",
    "lookups",
    "present_lookups",
    "blocks_per_lookup",
    "filter_probes_per_lookup",
    "table_probes_per_lookup",
    "observed_fpr",
    "theoretical_fpr",
    "target_fpr",
    "bound_blocks_per_lookup",
    "within_bound",
    "lookups_per_second",
    "mean_ns",
    "p50_ns",
    "p99_ns",
    "p999_ns",
    "tables",
    "keys",
    "table_bytes",
    "filter_bytes",
    "filter_bits_per_key",
    "build_seconds",
    "load_keys_per_second",
    "load_mb_per_second",
    "settle_seconds",
    "blocks_vs_none",
    "table_probes_vs_none",
    "observed_fpr_vs_none",
    "lookups_per_second_vs_none",
    "mean_vs_none",
    "p50_vs_none",
    "p99_vs_none",
    "p999_vs_none",
    "filter_bytes_vs_none",
    "table_bytes_vs_none",
    "build_seconds_vs_none",
    "load_keys_per_second_vs_none",
    "wrong_answers",
];

fn level_bits_per_key(l: &LevelShape) -> f64 {
    if l.keys == 0 { 0.0 } else { l.filter_bytes as f64 * 8.0 / l.keys as f64 }
}

fn ratio(a: f64, b: f64) -> Option<f64> {
    (b > 0.0).then(|| a / b)
}

/// Each figure of a (policy, workload) over the same figure of the `none`
/// baseline on the same workload; `None` where the baseline's figure is 0
/// or missing (or, for the FPR, where the policy probed no absent key).
#[derive(Debug, Clone, Copy, Default)]
pub struct Ratios {
    /// Data blocks read per lookup.
    pub blocks_per_lookup: Option<f64>,
    /// Table probes per lookup.
    pub table_probes_per_lookup: Option<f64>,
    /// Observed FPR over the baseline's (1 for a table without a filter:
    /// every probe of an absent key reads a block), i.e. the share of the
    /// baseline's wasted reads left.
    pub observed_fpr: Option<f64>,
    /// Lookups per second.
    pub lookups_per_second: Option<f64>,
    /// Latency, mean.
    pub mean: Option<f64>,
    /// Latency, p50.
    pub p50: Option<f64>,
    /// Latency, p99.
    pub p99: Option<f64>,
    /// Latency, p99.9.
    pub p999: Option<f64>,
}

impl Ratios {
    fn of(f: &Figures, b: &Figures) -> Ratios {
        let base_fpr = b.observed_fpr.or((b.table_probes_per_lookup > 0.0).then_some(1.0));
        Ratios {
            blocks_per_lookup: ratio(f.blocks_per_lookup, b.blocks_per_lookup),
            table_probes_per_lookup: ratio(f.table_probes_per_lookup, b.table_probes_per_lookup),
            observed_fpr: f.observed_fpr.zip(base_fpr).and_then(|(o, b)| ratio(o, b)),
            lookups_per_second: ratio(f.lookups_per_second, b.lookups_per_second),
            mean: ratio(f.mean_ns, b.mean_ns),
            p50: ratio(f.p50_ns as f64, b.p50_ns as f64),
            p99: ratio(f.p99_ns as f64, b.p99_ns as f64),
            p999: ratio(f.p999_ns as f64, b.p999_ns as f64),
        }
    }

    fn to_json(self) -> Value {
        json!({
            "blocks_per_lookup": self.blocks_per_lookup,
            "table_probes_per_lookup": self.table_probes_per_lookup,
            "observed_fpr": self.observed_fpr,
            "lookups_per_second": self.lookups_per_second,
            "latency_mean": self.mean,
            "latency_p50": self.p50,
            "latency_p99": self.p99,
            "latency_p999": self.p999,
            "p99": self.p99,
        })
    }
}

/// A policy's tree-wide figures over the `none` baseline's.
#[derive(Debug, Clone, Copy, Default)]
pub struct TreeRatios {
    /// Filter bytes (`None` against `none`, which has none).
    pub filter_bytes: Option<f64>,
    /// Table file bytes, filters included: the space filters cost.
    pub table_bytes: Option<f64>,
    /// Time to load and settle.
    pub build_seconds: Option<f64>,
    /// Load throughput, keys per second.
    pub load_keys_per_second: Option<f64>,
}

/// Load throughput: keys per second and MB (10^6 bytes of keys and values)
/// per second over the puts alone, and the settle time (the flushes and
/// compactions the loader runs between memtables).
#[derive(Debug, Clone, Copy)]
pub struct LoadFigures {
    /// Keys put per second.
    pub keys_per_second: f64,
    /// User bytes (16-byte key + value) put per second, in MB.
    pub mb_per_second: f64,
    /// Seconds the loader spent flushing and compacting.
    pub settle_seconds: f64,
}

/// The load figures of `r` under `c`.
pub fn load_figures(c: &Config, r: &PolicyResult) -> LoadFigures {
    let secs = r.load.as_secs_f64();
    let per_second = |x: f64| if secs > 0.0 { x / secs } else { 0.0 };
    LoadFigures {
        keys_per_second: per_second(c.keys as f64),
        mb_per_second: per_second((c.keys * (16 + c.value_bytes as u64)) as f64 / 1e6),
        settle_seconds: r.build.saturating_sub(r.load).as_secs_f64(),
    }
}

fn table_bytes(r: &PolicyResult) -> u64 {
    r.levels.iter().map(|l| l.bytes).sum()
}

/// The width the default text report fits.
const TEXT_WIDTH: usize = 120;

/// What the lookup table's columns mean, printed under it.
const LOOKUP_LEGEND: &str = "  blocks/lookup: data blocks read per lookup; saved: share of no filter's reads saved; \
probes/lookup: tables whose filter or index was consulted;\n  obs fpr: false positives over probes of tables \
lacking the key; vs none: ratio to the no-filter run; bound: the most blocks/lookup the filters' theoretical rates \
allow (+0.1%).\n";

/// What the tree table's columns mean.
const TREE_LEGEND: &str = "  sum probed fpr: Σ of the theoretical rates of the filters an absent key meets (its expected wasted reads); \
build s: load, flushes and compactions;\n  settle s (--wide): the flushes and compactions alone.\n";

/// The full result of a run.
pub struct Report {
    /// What was run.
    pub config: Config,
    /// One entry per policy, in the order given.
    pub results: Vec<PolicyResult>,
    /// How busy the machine was.
    pub machine: Machine,
}

/// The machine's cores and load average around the run: times measured on
/// a machine busier than its cores are not the code's alone.
#[derive(Debug, Clone, Copy, Default)]
pub struct Machine {
    /// Cores available to the process.
    pub cores: usize,
    /// The 1-minute load average when the run started (`None` where
    /// `/proc/loadavg` does not exist).
    pub load_start: Option<f64>,
    /// The same when it ended.
    pub load_end: Option<f64>,
}

impl Machine {
    /// The 1-minute load average now, on Linux.
    #[must_use]
    pub fn load_average() -> Option<f64> {
        std::fs::read_to_string("/proc/loadavg").ok()?.split_whitespace().next()?.parse().ok()
    }

    /// The higher load average, if it exceeded the cores.
    #[must_use]
    pub fn overloaded(&self) -> Option<f64> {
        let worst = self.load_start.into_iter().chain(self.load_end).fold(f64::NAN, f64::max);
        (worst > self.cores as f64).then_some(worst)
    }
}

impl Report {
    /// The verdict: one line per lookup workload ([`verdict::line`]).
    pub fn verdict(&self) -> Vec<String> {
        let Some(first) = self.results.first() else { return Vec::new() };
        first
            .workloads
            .iter()
            .filter_map(|w| {
                let baseline = self.baseline(w.workload).map(|f| f.blocks_per_lookup);
                let contenders: Vec<Contender> = self
                    .results
                    .iter()
                    .filter(|r| r.name != "none")
                    .filter_map(|r| {
                        let run = r.workloads.iter().find(|x| x.workload == w.workload)?;
                        Some(Contender {
                            name: r.name.clone(),
                            blocks: figures(run).blocks_per_lookup,
                            bits_per_key: bits_per_key(r),
                        })
                    })
                    .collect();
                verdict::line(w.workload.name(), baseline, &contenders)
            })
            .collect()
    }

    fn baseline_policy(&self) -> Option<&PolicyResult> {
        self.results.iter().find(|r| r.name == "none")
    }

    fn baseline(&self, workload: Workload) -> Option<Figures> {
        self.baseline_policy().and_then(|r| r.workloads.iter().find(|w| w.workload == workload)).map(figures)
    }

    /// `w`'s figures over the baseline's on the same workload (all `None`
    /// without a `none` policy in the run).
    fn ratios(&self, w: &WorkloadResult) -> Ratios {
        self.baseline(w.workload).map(|b| Ratios::of(&figures(w), &b)).unwrap_or_default()
    }

    /// `w`'s blocks per lookup in each level over the baseline's.
    fn level_block_ratios(&self, w: &WorkloadResult) -> Vec<Option<f64>> {
        let base = self.baseline_policy().and_then(|r| r.workloads.iter().find(|b| b.workload == w.workload));
        w.stats
            .levels
            .iter()
            .map(|l| {
                let b = base?.stats.levels.iter().find(|b| b.level == l.level)?;
                ratio(l.data_blocks_read as f64, b.data_blocks_read as f64)
            })
            .collect()
    }

    fn tree_ratios(&self, r: &PolicyResult) -> TreeRatios {
        let Some(b) = self.baseline_policy() else { return TreeRatios::default() };
        TreeRatios {
            filter_bytes: ratio(filter_bytes(r) as f64, filter_bytes(b) as f64),
            table_bytes: ratio(table_bytes(r) as f64, table_bytes(b) as f64),
            build_seconds: ratio(r.build.as_secs_f64(), b.build.as_secs_f64()),
            load_keys_per_second: ratio(
                load_figures(&self.config, r).keys_per_second,
                load_figures(&self.config, b).keys_per_second,
            ),
        }
    }

    /// What the reader should know but does not fail the run: a tree with
    /// fewer than [`MIN_LEVELS`] levels holding tables measures less than
    /// the benchmark means to.
    pub fn warnings(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .results
            .iter()
            .filter(|r| levels_with_tables(r) < MIN_LEVELS)
            .map(|r| {
                format!(
                    "{}: the tree has {} level(s) holding tables, fewer than {MIN_LEVELS}; use --keys {MIN_KEYS_FOR_LEVELS} or more",
                    r.name,
                    levels_with_tables(r)
                )
            })
            .collect();
        // False positives are Poisson: at n lookups blocks/lookup has a
        // standard error of about sqrt(Σ FPR / n). Past the 0.1% slack an
        // EXCEEDED may be chance, so say how many lookups would settle it.
        let worst = self.results.iter().map(probed_fpr_sum).filter(|&s| s < 1.0).fold(0.0, f64::max);
        let needed = (worst / (BOUND_SLACK * BOUND_SLACK)).ceil();
        if (self.config.lookups as f64) < needed {
            out.push(format!(
                "with {} lookups the sampling error of blocks/lookup exceeds the bound's 0.1% slack; use --lookups {needed} or more for a firm bound check",
                self.config.lookups
            ));
        }
        if let Some(load) = self.machine.overloaded() {
            out.push(format!(
                "the load average reached {load:.2} on {} cores: the times (lookups/s, latencies, build and load seconds) are not the code's alone; the counts are unaffected",
                self.machine.cores
            ));
        }
        out
    }

    /// What makes the run fail (exit 1), one line each: wrong answers, a
    /// workload that read more blocks than its bound, a range-scan mismatch.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        for r in &self.results {
            for w in &r.workloads {
                if w.wrong_answers > 0 {
                    out.push(format!(
                        "{} {}: {} lookups returned a wrong answer",
                        r.name,
                        w.workload.name(),
                        w.wrong_answers
                    ));
                }
                if !within_bound(r, w) {
                    out.push(format!(
                        "{} {}: read {:.4} data blocks per lookup, above the bound {:.4} (present fraction + sum of probed filter FPRs + 0.1%)",
                        r.name,
                        w.workload.name(),
                        figures(w).blocks_per_lookup,
                        block_bound(r, w)
                    ));
                }
            }
            if let Some(scan) = r.scan.as_ref().filter(|s| s.mismatches > 0) {
                out.push(format!(
                    "{} scan: {} mismatched entries in {} ranges",
                    r.name, scan.mismatches, scan.ranges
                ));
            }
        }
        out
    }

    /// Human-readable tables.
    pub fn to_text(&self, wide: bool) -> String {
        let c = &self.config;
        let mut s = format!(
            "siftdb read-amplification benchmark: {} keys, {}-byte values, {} lookups per workload, {} thread(s), seed {}\n",
            c.keys, c.value_bytes, c.lookups, c.threads, c.seed
        );
        s.push_str(&output::wrap(
            "Every tree is loaded and compacted in one thread, so one seed gives the same trees and the same counts \
             on every run; only times vary.",
            TEXT_WIDTH,
            "",
            "",
        ));
        let m = &self.machine;
        let load = |l: Option<f64>| l.map_or_else(|| "unknown".to_string(), |v| format!("{v:.2}"));
        let _ = writeln!(
            s,
            "Machine: {} cores, load average {} at start and {} at end.\n",
            m.cores,
            load(m.load_start),
            load(m.load_end)
        );
        let verdict = self.verdict();
        if !verdict.is_empty() {
            s.push_str("Verdict (data-block reads saved against no filter, at the filter memory each policy spends):\n");
            for line in &verdict {
                s.push_str(&output::wrap(line, TEXT_WIDTH, "  ", "    "));
            }
            s.push('\n');
        }
        for w in self.warnings() {
            s.push_str(&output::wrap(&format!("warning: {w}"), TEXT_WIDTH, "", "  "));
            s.push('\n');
        }
        let vs = |x: Option<f64>| {
            x.map_or("-".to_string(), |v| if v < 0.01 { format!("{v:.5}x") } else { format!("{v:.3}x") })
        };
        let us = |ns: f64| format!("{:.1}", ns / 1000.0);
        let mut rows = Vec::new();
        for r in &self.results {
            for w in &r.workloads {
                let f = figures(w);
                let x = self.ratios(w);
                let saved = self
                    .baseline(w.workload)
                    .and_then(|b| verdict::saved(f.blocks_per_lookup, b.blocks_per_lookup))
                    .unwrap_or_else(|| "-".into());
                let bound = format!(
                    "{} {:.4}",
                    if within_bound(r, w) { "ok, <=" } else { "EXCEEDED" },
                    block_bound(r, w)
                );
                let obs = f.observed_fpr.map_or("-".into(), |v| format!("{:.3}%", v * 100.0));
                rows.push(if wide {
                    vec![
                        r.name.clone(),
                        w.workload.name().to_string(),
                        format!("{:.4}", f.blocks_per_lookup),
                        vs(x.blocks_per_lookup),
                        saved,
                        format!("{:.2}", f.table_probes_per_lookup),
                        obs,
                        format!("{:.0}", f.lookups_per_second),
                        vs(x.lookups_per_second),
                        us(f.mean_ns),
                        vs(x.mean),
                        us(f.p50_ns as f64),
                        us(f.p99_ns as f64),
                        vs(x.p99),
                        us(f.p999_ns as f64),
                        bound,
                    ]
                } else {
                    vec![
                        r.name.clone(),
                        w.workload.name().to_string(),
                        format!("{:.4}", f.blocks_per_lookup),
                        saved,
                        format!("{:.2}", f.table_probes_per_lookup),
                        obs,
                        format!("{:.0}", f.lookups_per_second),
                        vs(x.lookups_per_second),
                        us(f.p99_ns as f64),
                        bound,
                    ]
                });
            }
        }
        let header: &[&str] = if wide {
            &[
                "policy",
                "workload",
                "blocks/lookup",
                "vs none",
                "saved",
                "probes/lookup",
                "obs fpr",
                "lookups/s",
                "vs none",
                "mean us",
                "vs none",
                "p50 us",
                "p99 us",
                "vs none",
                "p99.9 us",
                "bound (blocks/lookup)",
            ]
        } else {
            &[
                "policy",
                "workload",
                "blocks/lookup",
                "saved",
                "probes/lookup",
                "obs fpr",
                "lookups/s",
                "vs none",
                "p99 us",
                "bound",
            ]
        };
        s.push_str(&output::table(header, &rows));
        s.push_str(&output::wrap(LOOKUP_LEGEND, TEXT_WIDTH, "  ", "  "));
        if !wide {
            s.push_str(
                "  (--wide adds mean, p50 and p99.9 latencies, every ratio to none, and load throughput)\n",
            );
        }
        s.push_str("\nFilter memory, build and tree (after load and compaction):\n");
        let rows: Vec<Vec<String>> = self
            .results
            .iter()
            .map(|r| {
                let x = self.tree_ratios(r);
                let mut row = vec![
                    r.name.clone(),
                    format!("{:.2}", filter_bytes(r) as f64 / (1 << 20) as f64),
                    format!("{:.2}", bits_per_key(r)),
                    format!("{:.3}%", probed_fpr_sum(r) * 100.0),
                    format!("{:.1}", r.build.as_secs_f64()),
                    vs(x.build_seconds),
                ];
                if wide {
                    row.extend([
                        vs(x.table_bytes),
                        format!("{:.0}", load_figures(c, r).keys_per_second),
                        format!("{:.1}", load_figures(c, r).mb_per_second),
                        format!("{:.1}", load_figures(c, r).settle_seconds),
                    ]);
                }
                row.push(
                    r.levels
                        .iter()
                        .filter(|l| l.tables > 0)
                        .map(|l| format!("L{}:{}", l.level, l.tables))
                        .collect::<Vec<_>>()
                        .join(" "),
                );
                row.push(if wide { scan_cell(r.scan.as_ref()) } else { scan_brief(r.scan.as_ref()) });
                row
            })
            .collect();
        let mut header = vec!["policy", "filter MiB", "bits/key", "sum probed fpr", "build s", "vs none"];
        if wide {
            header.extend(["bytes vs none", "load keys/s", "load MB/s", "settle s"]);
        }
        header.extend(["tables per level", "scan check"]);
        s.push_str(&output::table(&header, &rows));
        s.push_str(&output::wrap(TREE_LEGEND, TEXT_WIDTH, "  ", "  "));
        let levels: Vec<usize> = {
            let mut l: Vec<usize> = self
                .results
                .iter()
                .flat_map(|r| r.levels.iter().filter(|l| l.tables > 0).map(|l| l.level))
                .collect();
            l.sort_unstable();
            l.dedup();
            l
        };
        s.push_str("\nData blocks read per lookup, by level:\n");
        let mut rows = Vec::new();
        for r in &self.results {
            for w in &r.workloads {
                let mut row = vec![r.name.clone(), w.workload.name().to_string()];
                for &level in &levels {
                    let blocks =
                        w.stats.levels.iter().find(|l| l.level == level).map_or(0, |l| l.data_blocks_read);
                    row.push(format!("{:.4}", blocks as f64 / w.lookups.max(1) as f64));
                }
                rows.push(row);
            }
        }
        let header: Vec<String> = ["policy".to_string(), "workload".to_string()]
            .into_iter()
            .chain(levels.iter().map(|l| format!("L{l}")))
            .collect();
        s.push_str(&output::table(&header.iter().map(String::as_str).collect::<Vec<_>>(), &rows));
        s.push_str("\nPer level, absent keys (blocks read per lookup; observed vs targeted FPR):\n");
        let mut rows = Vec::new();
        for r in &self.results {
            let Some(w) = r.workloads.iter().find(|w| w.workload == Workload::Absent) else { continue };
            for (shape, l) in r.levels.iter().zip(&w.stats.levels).filter(|(s, _)| s.tables > 0) {
                let mut filter = kinds_summary(&shape.filter_kinds);
                let mut notes = Vec::new();
                if shape.filter_fallbacks > 0 {
                    notes.push(format!("{} fell back", shape.filter_fallbacks));
                }
                if shape.tables_over_target > 0 {
                    notes.push(format!("{} over target", shape.tables_over_target));
                }
                if !notes.is_empty() {
                    filter = format!("{filter} ({})", notes.join(", "));
                }
                rows.push(vec![
                    r.name.clone(),
                    format!("L{}", shape.level),
                    shape.keys.to_string(),
                    filter,
                    format!("{:.2}", level_bits_per_key(shape)),
                    format!("{:.4}%", shape.target_fpr * 100.0),
                    format!("{:.4}%", shape.filter_fpr * 100.0),
                    l.observed_fpr().map_or("-".into(), |v| format!("{:.4}%", v * 100.0)),
                    format!("{:.4}", l.data_blocks_read as f64 / w.lookups.max(1) as f64),
                ]);
            }
        }
        s.push_str(&output::table(
            &[
                "policy",
                "level",
                "keys",
                "filter",
                "bits/key",
                "target fpr",
                "filter fpr",
                "observed fpr",
                "blocks/lookup",
            ],
            &rows,
        ));
        s
    }

    /// One JSON document; field names are documented in the README.
    pub fn to_json(&self) -> Value {
        let c = &self.config;
        let policies: Vec<Value> = self
            .results
            .iter()
            .map(|r| {
                let workloads: Vec<Value> = r
                    .workloads
                    .iter()
                    .map(|w| {
                        let f = figures(w);
                        let per_lookup = |x: u64| x as f64 / w.lookups.max(1) as f64;
                        json!({
                            "workload": w.workload.name(),
                            "lookups": w.lookups,
                            "present_lookups": w.present_lookups,
                            "blocks_per_lookup": f.blocks_per_lookup,
                            "blocks_per_lookup_by_level": w.stats.levels.iter().map(|l| per_lookup(l.data_blocks_read)).collect::<Vec<_>>(),
                            "blocks_vs_baseline_by_level": self.level_block_ratios(w),
                            "filter_probes_per_lookup": f.probes_per_lookup,
                            "filter_probes_per_lookup_by_level": w.stats.levels.iter().map(|l| per_lookup(l.filter_probes)).collect::<Vec<_>>(),
                            "table_probes_per_lookup": f.table_probes_per_lookup,
                            "observed_fpr": f.observed_fpr,
                            "observed_fpr_by_level": w.stats.levels.iter().map(|l| l.observed_fpr()).collect::<Vec<_>>(),
                            "theoretical_fpr_sum": probed_fpr_sum(r),
                            "repeat_weight": w.repeat_weight,
                            "repeat_slack": repeat_slack(r, w),
                            "bound_blocks_per_lookup": block_bound(r, w),
                            "within_bound": within_bound(r, w),
                            "lookups_per_second": f.lookups_per_second,
                            "latency_ns": { "mean": f.mean_ns, "p50": f.p50_ns, "p99": f.p99_ns, "p999": f.p999_ns },
                            "vs_baseline": self.ratios(w).to_json(),
                            "wrong_answers": w.wrong_answers,
                        })
                    })
                    .collect();
                let x = self.tree_ratios(r);
                json!({
                    "policy": r.name,
                    "build_seconds": r.build.as_secs_f64(),
                    "load_seconds": r.load.as_secs_f64(),
                    "load_keys_per_second": load_figures(c, r).keys_per_second,
                    "load_mb_per_second": load_figures(c, r).mb_per_second,
                    "settle_seconds": load_figures(c, r).settle_seconds,
                    "filter_bytes": filter_bytes(r),
                    "filter_bits_per_key": bits_per_key(r),
                    "table_bytes": table_bytes(r),
                    "vs_baseline": {
                        "filter_bytes": x.filter_bytes,
                        "table_bytes": x.table_bytes,
                        "build_seconds": x.build_seconds,
                        "load_keys_per_second": x.load_keys_per_second,
                    },
                    "levels_with_tables": levels_with_tables(r),
                    "fewer_than_4_levels": levels_with_tables(r) < MIN_LEVELS,
                    "levels": r.levels.iter().map(|l| json!({
                        "level": l.level, "tables": l.tables, "keys": l.keys, "bytes": l.bytes,
                        "filter_kinds": l.filter_kinds, "filter_bytes": l.filter_bytes,
                        "filter_bits_per_key": level_bits_per_key(l),
                        "target_fpr": l.target_fpr, "filter_fpr": l.filter_fpr,
                        "filter_fallbacks": l.filter_fallbacks, "tables_over_target": l.tables_over_target,
                    })).collect::<Vec<_>>(),
                    "workloads": workloads,
                    "scan": r.scan.as_ref().map(|s| json!({ "ranges": s.ranges, "entries": s.entries, "mismatches": s.mismatches, "seconds": s.elapsed.as_secs_f64() })),
                })
            })
            .collect();
        json!({
            "config": {
                "keys": c.keys, "lookups": c.lookups, "value_bytes": c.value_bytes,
                "seed": c.seed, "threads": c.threads, "hit_ratio": c.hit_ratio,
            },
            "machine": {
                "cores": self.machine.cores,
                "load_average_start": self.machine.load_start,
                "load_average_end": self.machine.load_end,
            },
            "policies": policies,
            "verdict": self.verdict(),
            "warnings": self.warnings(),
        })
    }

    /// Long-format CSV: for each (policy, workload) one row with `level` =
    /// `all` (whole-tree figures), then one row per level holding tables
    /// (per-level figures; whole-run columns left empty). The schema is in
    /// the README.
    pub fn to_csv(&self) -> String {
        let mut s = CSV_COLUMNS.join(",");
        s.push('\n');
        let opt = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v}"));
        for r in &self.results {
            let t = self.tree_ratios(r);
            let load = load_figures(&self.config, r);
            for w in &r.workloads {
                let f = figures(w);
                let x = self.ratios(w);
                let n = w.lookups.max(1) as f64;
                let policy = r.name.replace(',', ";");
                let all = [
                    policy.clone(),
                    w.workload.name().into(),
                    "all".into(),
                    w.lookups.to_string(),
                    w.present_lookups.to_string(),
                    f.blocks_per_lookup.to_string(),
                    f.probes_per_lookup.to_string(),
                    f.table_probes_per_lookup.to_string(),
                    opt(f.observed_fpr),
                    probed_fpr_sum(r).to_string(),
                    String::new(),
                    block_bound(r, w).to_string(),
                    within_bound(r, w).to_string(),
                    f.lookups_per_second.to_string(),
                    f.mean_ns.to_string(),
                    f.p50_ns.to_string(),
                    f.p99_ns.to_string(),
                    f.p999_ns.to_string(),
                    r.levels.iter().map(|l| l.tables).sum::<u64>().to_string(),
                    r.levels.iter().map(|l| l.keys).sum::<u64>().to_string(),
                    table_bytes(r).to_string(),
                    filter_bytes(r).to_string(),
                    bits_per_key(r).to_string(),
                    r.build.as_secs_f64().to_string(),
                    load.keys_per_second.to_string(),
                    load.mb_per_second.to_string(),
                    load.settle_seconds.to_string(),
                    opt(x.blocks_per_lookup),
                    opt(x.table_probes_per_lookup),
                    opt(x.observed_fpr),
                    opt(x.lookups_per_second),
                    opt(x.mean),
                    opt(x.p50),
                    opt(x.p99),
                    opt(x.p999),
                    opt(t.filter_bytes),
                    opt(t.table_bytes),
                    opt(t.build_seconds),
                    opt(t.load_keys_per_second),
                    w.wrong_answers.to_string(),
                ];
                s.push_str(&all.join(","));
                s.push('\n');
                let level_ratios = self.level_block_ratios(w);
                for ((shape, l), blocks_vs) in r.levels.iter().zip(&w.stats.levels).zip(level_ratios) {
                    if shape.tables == 0 {
                        continue;
                    }
                    let mut row = vec![String::new(); CSV_COLUMNS.len()];
                    let mut set = |name: &str, v: String| {
                        if let Some(i) = CSV_COLUMNS.iter().position(|c| *c == name) {
                            row[i] = v;
                        }
                    };
                    set("policy", policy.clone());
                    set("workload", w.workload.name().into());
                    set("level", shape.level.to_string());
                    set("lookups", w.lookups.to_string());
                    set("present_lookups", w.present_lookups.to_string());
                    set("blocks_per_lookup", (l.data_blocks_read as f64 / n).to_string());
                    set("filter_probes_per_lookup", (l.filter_probes as f64 / n).to_string());
                    set(
                        "table_probes_per_lookup",
                        ((l.filter_probes + l.probes_without_filter) as f64 / n).to_string(),
                    );
                    set("observed_fpr", opt(l.observed_fpr()));
                    set("theoretical_fpr", shape.filter_fpr.to_string());
                    set("target_fpr", shape.target_fpr.to_string());
                    set("tables", shape.tables.to_string());
                    set("keys", shape.keys.to_string());
                    set("table_bytes", shape.bytes.to_string());
                    set("filter_bytes", shape.filter_bytes.to_string());
                    set("filter_bits_per_key", level_bits_per_key(shape).to_string());
                    set("blocks_vs_none", opt(blocks_vs));
                    s.push_str(&row.join(","));
                    s.push('\n');
                }
            }
        }
        s
    }

    /// A chart: for each workload, data blocks read per lookup (log axis)
    /// and lookups per second, a labelled bar per policy.
    pub fn to_svg(&self) -> String {
        let policies: Vec<String> = self.results.iter().map(|r| r.name.clone()).collect();
        let mut workloads: Vec<Workload> = Vec::new();
        for w in self.results.iter().flat_map(|r| &r.workloads) {
            if !workloads.contains(&w.workload) {
                workloads.push(w.workload);
            }
        }
        let values = |workload: Workload, pick: fn(&Figures) -> f64| -> Vec<Option<f64>> {
            self.results
                .iter()
                .map(|r| r.workloads.iter().find(|w| w.workload == workload).map(|w| pick(&figures(w))))
                .collect()
        };
        let blocks = workloads.iter().map(|&w| svg::Panel {
            title: format!("{} keys: data blocks read per lookup", w.name()),
            better: svg::Better::Lower,
            log: true,
            values: values(w, |f| f.blocks_per_lookup),
        });
        let speed = workloads.iter().map(|&w| svg::Panel {
            title: format!("{} keys: lookups per second", w.name()),
            better: svg::Better::Higher,
            log: false,
            values: values(w, |f| f.lookups_per_second),
        });
        let panels: Vec<svg::Panel> = blocks.chain(speed).collect();
        let c = &self.config;
        svg::render(
            &format!("siftdb read amplification: {} keys, {} lookups per workload", c.keys, c.lookups),
            &policies,
            &panels,
            workloads.len(),
        )
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use siftdb::{LevelStats, Stats};

    use super::*;

    /// A tree of `(level, tables, filter fpr)`.
    fn policy(name: &str, levels: &[(usize, u64, f64)]) -> PolicyResult {
        PolicyResult {
            name: name.into(),
            build: Duration::from_secs(1),
            load: Duration::from_millis(600),
            levels: levels
                .iter()
                .map(|&(level, tables, filter_fpr)| LevelShape {
                    level,
                    tables,
                    keys: tables * 100,
                    bytes: tables * 10_000,
                    filter_kinds: vec![],
                    filter_bytes: 0,
                    target_fpr: filter_fpr,
                    filter_fpr,
                    filter_fallbacks: 0,
                    tables_over_target: 0,
                })
                .collect(),
            workloads: vec![],
            scan: None,
        }
    }

    /// A run of `lookups` lookups (`present` of them present); per level
    /// `(data blocks read, filter probes, of which true positives)`.
    fn run(workload: Workload, lookups: usize, present: u64, levels: &[(u64, u64, u64)]) -> WorkloadResult {
        WorkloadResult {
            workload,
            lookups,
            present_lookups: present,
            stats: Stats {
                levels: levels
                    .iter()
                    .enumerate()
                    .map(|(level, &(blocks, probes, hits))| LevelStats {
                        level,
                        data_blocks_read: blocks,
                        filter_probes: probes,
                        filter_true_positives: hits,
                        ..LevelStats::default()
                    })
                    .collect(),
                ..Stats::default()
            },
            elapsed: Duration::from_secs(1),
            latencies_ns: vec![1000; lookups],
            wrong_answers: 0,
            repeat_weight: 1.0 / lookups.max(1) as f64,
        }
    }

    #[test]
    fn every_l0_table_counts_in_the_bound_but_one_table_per_deeper_level() {
        // Three overlapping L0 tables, then levels of 4 and 9 tables: at
        // worst an absent key probes 3 + 1 + 1 filters.
        let r = policy("bloom:10", &[(0, 3, 0.01), (1, 4, 0.01), (2, 9, 0.01), (3, 0, 0.01)]);
        assert!((probed_fpr_sum(&r) - 0.05).abs() < 1e-12, "{}", probed_fpr_sum(&r));
        // The repro: L0:3 alone at 0.82% each, 0.0201 blocks/lookup
        // observed; counting L0 once (0.0092) called that EXCEEDED.
        let l0 = policy("bloom:10", &[(0, 3, 0.0082)]);
        let absent = run(Workload::Absent, 50_000, 0, &[(1005, 150_000, 0)]);
        assert!(within_bound(&l0, &absent));
        assert!((block_bound(&l0, &absent) - (3.0 * 0.0082 + BOUND_SLACK)).abs() < 1e-12);
        let too_many = run(Workload::Absent, 50_000, 0, &[(1400, 150_000, 0)]);
        assert!(!within_bound(&l0, &too_many));
    }

    /// The regression: `zipfian` on blocked-bloom:10 read 1.0829 blocks per
    /// lookup against a bound of 1.0584 in a default run, because a hot key
    /// that one filter mistook repeats that false positive on every lookup.
    #[test]
    fn repeated_keys_widen_the_bound_by_their_sampling_error() {
        let r = policy("blocked-bloom:10", &[(0, 2, 0.0095), (1, 1, 0.0095), (2, 1, 0.0095), (3, 1, 0.0095)]);
        let mut zipfian = run(Workload::Zipfian, 100_000, 100_000, &[(108_290, 100_000, 100_000)]);
        zipfian.repeat_weight = 0.008;
        // 1 + 5·0.95% + 0.1% = 1.0485 before; the excess variance adds
        // 4·sqrt((0.008 − 10^-5)·0.0475) ≈ 0.0779.
        let want = 1.0 + 0.0475 + BOUND_SLACK + 4.0 * ((0.008f64 - 1e-5) * 0.0475).sqrt();
        assert!((block_bound(&r, &zipfian) - want).abs() < 1e-9, "{}", block_bound(&r, &zipfian));
        assert!(within_bound(&r, &zipfian));
        // The same reads with no key repeated are over the bound.
        zipfian.repeat_weight = 1e-5;
        assert!(!within_bound(&r, &zipfian));
        assert_eq!(repeat_slack(&r, &zipfian), 0.0);
        // Other workloads keep the bound whatever they repeat.
        let mut uniform = run(Workload::Uniform, 100_000, 100_000, &[(108_290, 100_000, 100_000)]);
        uniform.repeat_weight = 0.008;
        assert_eq!(repeat_slack(&r, &uniform), 0.0);
        assert!(!within_bound(&r, &uniform));
    }

    #[test]
    fn repeat_weight_is_the_chance_two_lookups_share_a_key() {
        use super::super::measure::repeat_weight;
        assert!((repeat_weight(&[1, 2, 3, 4]) - 0.25).abs() < 1e-12);
        assert!((repeat_weight(&[7, 7, 7, 7]) - 1.0).abs() < 1e-12);
        // Shares 1/2, 1/4, 1/4.
        assert!((repeat_weight(&[5, 9, 5, 3]) - 0.375).abs() < 1e-12);
        assert_eq!(repeat_weight(&[]), 0.0);
    }

    #[test]
    fn present_keys_may_read_one_block_more_and_mixed_runs_their_fraction() {
        let r = policy("fuse8", &[(0, 1, 0.004), (1, 1, 0.004), (2, 5, 0.004)]);
        let sum = 0.012;
        let uniform = run(Workload::Uniform, 1000, 1000, &[(0, 0, 0), (0, 0, 0), (1010, 1000, 1000)]);
        assert!((block_bound(&r, &uniform) - (1.0 + sum + BOUND_SLACK)).abs() < 1e-12);
        assert!(within_bound(&r, &uniform));
        // 1.02 blocks per present-key lookup breaks 1 + 1.2% + 0.1%.
        let extra = run(Workload::Zipfian, 1000, 1000, &[(0, 0, 0), (10, 1000, 0), (1010, 1000, 1000)]);
        assert!(!within_bound(&r, &extra));
        let mixed = run(Workload::Mixed, 1000, 300, &[(0, 0, 0), (0, 0, 0), (310, 1000, 300)]);
        assert!((block_bound(&r, &mixed) - (0.3 + sum + BOUND_SLACK)).abs() < 1e-12);
        assert!(within_bound(&r, &mixed));
        assert!(!within_bound(
            &r,
            &run(Workload::Mixed, 1000, 300, &[(0, 0, 0), (0, 0, 0), (320, 1000, 300)])
        ));
    }

    #[test]
    fn a_broken_bound_a_wrong_answer_or_a_scan_mismatch_is_a_problem() {
        let mut r = policy("xor8", &[(0, 1, 0.004), (1, 2, 0.004)]);
        r.workloads = vec![
            run(Workload::Absent, 1000, 0, &[(4, 1000, 0), (4, 1000, 0)]),
            run(Workload::Uniform, 1000, 1000, &[(0, 1000, 0), (1000, 1000, 1000)]),
        ];
        let clean = Report { config: config(), results: vec![r.clone()], machine: Machine::default() };
        assert_eq!(clean.problems(), Vec::<String>::new());

        let mut broken = r.clone();
        broken.workloads[0] = run(Workload::Absent, 1000, 0, &[(10, 1000, 0), (10, 1000, 0)]);
        let p = Report { config: config(), results: vec![broken], machine: Machine::default() }.problems();
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(p[0].contains("xor8 absent") && p[0].contains("above the bound"), "{p:?}");

        let mut wrong = r.clone();
        wrong.workloads[1].wrong_answers = 2;
        wrong.scan = Some(ScanCheck { ranges: 20, entries: 10_000, mismatches: 3, elapsed: Duration::ZERO });
        let p = Report { config: config(), results: vec![wrong], machine: Machine::default() }.problems();
        assert_eq!(p.len(), 2, "{p:?}");
        assert!(p[0].contains("2 lookups returned a wrong answer"), "{p:?}");
        assert!(p[1].contains("3 mismatched entries in 20 ranges"), "{p:?}");
    }

    #[test]
    fn load_throughput_counts_the_puts_alone() {
        let r = policy("none", &[(1, 1, 1.0)]);
        let f = load_figures(&config(), &r);
        // 1,000 keys of 16 + 10 bytes in 0.6 s of puts, 0.4 s settling.
        assert!((f.keys_per_second - 1000.0 / 0.6).abs() < 1e-6, "{f:?}");
        assert!((f.mb_per_second - 0.026 / 0.6).abs() < 1e-9, "{f:?}");
        assert!((f.settle_seconds - 0.4).abs() < 1e-9, "{f:?}");
    }

    fn config() -> Config {
        Config {
            keys: 1000,
            lookups: 1000,
            value_bytes: 10,
            seed: 1,
            threads: 1,
            hit_ratio: 0.5,
            show_progress: false,
        }
    }

    #[test]
    fn percentiles_pick_the_right_rank() {
        let v: Vec<u64> = (1..=1000).collect();
        assert_eq!(percentile(&v, 0.5), 501);
        assert_eq!(percentile(&v, 0.99), 990);
        assert_eq!(percentile(&v, 0.999), 999);
        assert_eq!(percentile(&[], 0.5), 0);
    }

    #[test]
    fn file_safe_names_have_no_separators() {
        assert_eq!(file_safe("per-level:bloom:10,fuse8+skip-last"), "per-level_bloom_10_fuse8_skip-last");
    }
}
