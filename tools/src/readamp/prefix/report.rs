//! The prefix workloads' report: text, JSON and the problems a run found.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::super::report::percentile;
use super::{PrefixResult, PrefixWorkload, ScanRun};
use crate::output;

/// Absent-prefix scans may read at most Σ (probed filter FPR) + this many
/// data blocks each (issue 40: 0.1%).
pub const BOUND_SLACK: f64 = 0.001;

/// Figures of one run.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunFigures {
    pub blocks_per_scan: f64,
    pub tables_per_scan: f64,
    pub prefix_probes: u64,
    pub prefix_skipped: u64,
    pub prefix_false_positives: u64,
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
}

/// The figures of `run`.
pub fn figures(run: &ScanRun) -> RunFigures {
    let scans = run.scans.max(1) as f64;
    let sum = |f: fn(&siftdb::LevelStats) -> u64| run.levels.iter().map(f).sum::<u64>();
    RunFigures {
        blocks_per_scan: sum(|l| l.table_blocks_read) as f64 / scans,
        tables_per_scan: sum(|l| l.scan_tables_opened) as f64 / scans,
        prefix_probes: sum(|l| l.prefix_probes),
        prefix_skipped: sum(|l| l.prefix_skipped),
        prefix_false_positives: sum(|l| l.prefix_false_positives),
        mean_ns: run.latencies_ns.iter().sum::<u64>() as f64 / scans,
        p50_ns: percentile(&run.latencies_ns, 0.5),
        p99_ns: percentile(&run.latencies_ns, 0.99),
    }
}

/// Data blocks an absent-prefix scan with filtering should read at most:
/// each level's prefix probes per scan times its filters' built rate, plus
/// [`BOUND_SLACK`], plus three standard errors of that many false positives
/// sampled over the run's scans (a few thousand scans see a few dozen). `None` when the scans opened tables they could not ask
/// (written without a filter, or without the extractor): no filter bounds
/// those reads.
pub fn block_bound(r: &PrefixResult) -> Option<f64> {
    let scans = r.with.scans.max(1) as f64;
    let unasked: u64 = r
        .with
        .levels
        .iter()
        .map(|l| l.scan_tables_opened.saturating_sub(l.prefix_probes - l.prefix_skipped))
        .sum();
    if unasked > 0 {
        return None;
    }
    let expected: f64 = r
        .with
        .levels
        .iter()
        .zip(&r.built_fpr)
        .map(|(l, fpr)| l.prefix_probes as f64 / scans * fpr.unwrap_or(1.0))
        .sum();
    Some(expected + BOUND_SLACK + 3.0 * (expected / scans).sqrt())
}

/// Σ over levels holding tables of their built false-positive rate: what
/// an absent prefix costs when every level is asked once.
pub fn level_fpr_sum(r: &PrefixResult) -> f64 {
    r.built_fpr.iter().flatten().sum()
}

/// The prefix section of a `siftdb bench` run.
#[derive(Debug, Clone)]
pub struct PrefixReport {
    /// The extractor's name.
    pub extractor: String,
    /// Groups loaded.
    pub groups: u64,
    /// One per policy and workload.
    pub results: Vec<PrefixResult>,
}

fn run_json(run: &ScanRun) -> Value {
    let f = figures(run);
    json!({
        "scans": run.scans,
        "seconds": run.elapsed.as_secs_f64(),
        "data_blocks_per_scan": f.blocks_per_scan,
        "tables_opened_per_scan": f.tables_per_scan,
        "prefix_probes": f.prefix_probes,
        "prefix_skipped": f.prefix_skipped,
        "prefix_false_positives": f.prefix_false_positives,
        "mean_ns": f.mean_ns,
        "p50_ns": f.p50_ns,
        "p99_ns": f.p99_ns,
        "wrong_answers": run.wrong_answers,
        "levels": run.levels.iter().map(|l| json!({
            "level": l.level,
            "tables_opened": l.scan_tables_opened,
            "data_blocks": l.table_blocks_read,
            "prefix_probes": l.prefix_probes,
            "prefix_skipped": l.prefix_skipped,
            "prefix_false_positives": l.prefix_false_positives,
        })).collect::<Vec<_>>(),
    })
}

impl PrefixReport {
    /// The JSON form.
    pub fn to_json(&self) -> Value {
        json!({
            "extractor": self.extractor,
            "groups": self.groups,
            "results": self.results.iter().map(|r| {
                let (with, without) = (figures(&r.with), figures(&r.without));
                json!({
                    "policy": r.policy,
                    "workload": r.workload.name(),
                    "with_prefix_filter": run_json(&r.with),
                    "without_prefix_filter": run_json(&r.without),
                    "speedup": without.mean_ns / with.mean_ns.max(1.0),
                    "block_bound": block_bound(r),
                    "level_fpr_sum": level_fpr_sum(r),
                    "built_fpr": r.built_fpr,
                })
            }).collect::<Vec<_>>(),
        })
    }

    /// The text form.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "\nprefix scans: 16-byte keys in {} groups of 1-100 sharing an 8-byte prefix; extractor {}",
            self.groups, self.extractor
        );
        let _ = writeln!(
            s,
            "(\"without\": the same tree opened without an extractor, so no table is skipped by prefix)"
        );
        let us = |ns: f64| format!("{:.1}", ns / 1e3);
        let rows: Vec<Vec<String>> = self
            .results
            .iter()
            .map(|r| {
                let (w, o) = (figures(&r.with), figures(&r.without));
                vec![
                    r.policy.clone(),
                    r.workload.name().to_string(),
                    format!("{:.4}", w.blocks_per_scan),
                    format!("{:.4}", o.blocks_per_scan),
                    format!("{:.3}", w.tables_per_scan),
                    format!("{:.3}", o.tables_per_scan),
                    format!("{}/{}", w.prefix_skipped, w.prefix_probes),
                    w.prefix_false_positives.to_string(),
                    us(w.p50_ns as f64),
                    us(w.p99_ns as f64),
                    us(w.mean_ns),
                    us(o.mean_ns),
                    format!("{:.2}x", o.mean_ns / w.mean_ns.max(1.0)),
                ]
            })
            .collect();
        s.push_str(&output::table(
            &[
                "policy",
                "workload",
                "blocks/scan",
                "without",
                "tables/scan",
                "without",
                "skipped/probes",
                "prefix FP",
                "p50 us",
                "p99 us",
                "mean us",
                "without",
                "speedup",
            ],
            &rows,
        ));
        s
    }

    /// Wrong answers, and absent-prefix scans over their block bound.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        for r in &self.results {
            for (run, how) in [(&r.with, "with"), (&r.without, "without")] {
                if run.wrong_answers > 0 {
                    out.push(format!(
                        "{} {}: {} scans {how} prefix filtering returned the wrong keys",
                        r.policy,
                        r.workload.name(),
                        run.wrong_answers
                    ));
                }
            }
            let blocks = figures(&r.with).blocks_per_scan;
            if let Some(bound) =
                block_bound(r).filter(|&b| r.workload == PrefixWorkload::Absent && blocks > b)
            {
                out.push(format!(
                    "{} prefix-absent: {blocks:.4} data blocks per scan, above the bound {bound:.4}",
                    r.policy
                ));
            }
        }
        out
    }
}
