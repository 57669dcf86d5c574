//! The prefix workloads' report: text, JSON and the problems a run found.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::super::scans::{self, RunFigures, ScanFilter, ScanRun};
use super::{PrefixResult, PrefixWorkload};
use crate::output;

/// Absent-prefix scans may read at most Σ (probed filter FPR) + this many
/// data blocks each (issue 40: 0.1%).
pub const BOUND_SLACK: f64 = 0.001;

/// The figures of `run`, counting prefix probes.
pub fn figures(run: &ScanRun) -> RunFigures {
    scans::figures(run, ScanFilter::Prefix)
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
    scans::run_json(run, ScanFilter::Prefix)
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
                    format!("{}/{}", w.skipped, w.probes),
                    w.false_positives.to_string(),
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
            let what = format!("{} {}", r.policy, r.workload.name());
            out.extend(scans::wrong_answers(&what, "prefix filtering", &r.with, &r.without));
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
