//! The benchmark's report: derived figures, and their renderings as text
//! tables, JSON, CSV and an SVG chart.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::measure::{
    Config, LevelShape, MIN_KEYS_FOR_LEVELS, MIN_LEVELS, PolicyResult, ScanCheck, WorkloadResult,
};
use super::svg;
use super::verdict::{self, Contender, Verdict};
use super::workload::Workload;
use crate::output;

mod chart;
mod csv;
mod figures;
mod json;
mod ratios;
mod text;

pub use figures::*;
pub use ratios::*;

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
    /// The instructions Ribbon queries use here ([`siftdb::filter::Ribbon::simd`]).
    pub ribbon_simd: &'static str,
}

/// Hidden, for tests: a load average that replaces the one observed, so
/// a test can see how the report marks times from a busy machine (or from
/// a quiet one, on a busy test machine) without making it busy.
pub const LOAD_OVERRIDE_ENV: &str = "SIFTDB_BENCH_LOAD_AVERAGE";

impl Machine {
    /// The 1-minute load average now, on Linux, or [`LOAD_OVERRIDE_ENV`]'s
    /// value when it is set to a number.
    #[must_use]
    pub fn load_average() -> Option<f64> {
        if let Some(load) = std::env::var(LOAD_OVERRIDE_ENV).ok().and_then(|v| v.parse().ok()) {
            return Some(load);
        }
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
    /// The verdict: per lookup workload, the pick at the default policy's
    /// memory and the default's standing ([`verdict::judge`]).
    pub fn verdict(&self) -> Vec<Verdict> {
        let default = self.results.iter().map(|r| r.name.as_str()).find(|n| is_default_policy(n));
        self.point_workloads()
            .into_iter()
            .filter_map(|w| {
                let baseline = self.baseline(w).map(|f| f.blocks_per_lookup);
                let contenders: Vec<Contender> = self
                    .contenders(w)
                    .map(|(r, run)| Contender {
                        name: r.name.clone(),
                        read: blocks_read(run),
                        lookups: run.lookups as u64,
                        present: run.present_lookups,
                        repeat_weight: run.repeat_weight,
                        bits_per_key: bits_per_key(r),
                    })
                    .collect();
                verdict::judge(w.name(), baseline, &contenders, default)
            })
            .collect()
    }

    /// The verdict's long form, behind `--wide`: every policy on each
    /// workload ([`verdict::detail::line`]).
    pub fn verdict_detail(&self) -> Vec<String> {
        self.point_workloads()
            .into_iter()
            .filter_map(|w| {
                let baseline = self.baseline(w).map(|f| f.blocks_per_lookup);
                let contenders: Vec<verdict::detail::Contender> = self
                    .contenders(w)
                    .map(|(r, run)| verdict::detail::Contender {
                        name: r.name.clone(),
                        blocks: figures(run).blocks_per_lookup,
                        read: blocks_read(run),
                        bits_per_key: bits_per_key(r),
                    })
                    .collect();
                verdict::detail::line(w.name(), baseline, &contenders)
            })
            .collect()
    }

    /// The workloads of the first policy, in the order run.
    fn point_workloads(&self) -> Vec<Workload> {
        self.results.first().map(|r| r.workloads.iter().map(|w| w.workload).collect()).unwrap_or_default()
    }

    /// Every policy with a filter, with its run of `workload`.
    fn contenders(&self, workload: Workload) -> impl Iterator<Item = (&PolicyResult, &WorkloadResult)> {
        self.results
            .iter()
            .filter(|r| r.name != "none")
            .filter_map(move |r| Some((r, r.workloads.iter().find(|x| x.workload == workload)?)))
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
        // standard error of about sqrt(Σ FPR / n), and the bound decides
        // alone once three of them fit in the 0.1% slack, from
        // 9·Σ FPR / slack² lookups. Below that only a figure within the
        // excess of the bound is in doubt (`bound_unsettled`): say so then,
        // and not for a run whose every figure is clear of its bound.
        let worst = self
            .results
            .iter()
            .filter(|r| r.workloads.iter().any(|w| bound_unsettled(r, w)))
            .map(probed_fpr_sum)
            .fold(0.0, f64::max);
        if worst > 0.0 {
            out.push(format!(
                "with {} lookups three standard errors of blocks/lookup exceed the bound's 0.1% slack, and a figure this near its bound may be chance; use --lookups {} or more for a firm bound check",
                self.config.lookups,
                firm_lookups(worst)
            ));
        }
        for r in &self.results {
            for w in r.workloads.iter().filter(|w| !within_bound(r, w) && !breaks_bound(r, w)) {
                out.push(format!(
                    "{} {}: read {:.4} data blocks per lookup, above the bound {:.4} but within three standard errors of its false positives at {} lookups: not a failure; rerun with more lookups to settle it",
                    r.name,
                    w.workload.name(),
                    figures(w).blocks_per_lookup,
                    block_bound(r, w),
                    w.lookups
                ));
            }
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
                if breaks_bound(r, w) {
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
}

/// Whether `name` (as given to `--policies`) is the engine's default policy.
fn is_default_policy(name: &str) -> bool {
    crate::policy_arg::parse(name).is_ok_and(|p| p == siftdb::policy::FilterPolicy::default())
}

/// Data blocks `w` read over the run.
fn blocks_read(w: &WorkloadResult) -> u64 {
    w.stats.levels.iter().map(|l| l.data_blocks_read).sum()
}

#[cfg(test)]
mod tests;
