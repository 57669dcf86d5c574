//! The range workloads' report: text, JSON and the problems a run found.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::super::prefix::ScanRun;
use super::super::report::percentile;
use super::RangeResult;
use crate::output;

/// Figures of one run.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunFigures {
    pub blocks_per_scan: f64,
    pub tables_per_scan: f64,
    pub range_probes: u64,
    pub range_skipped: u64,
    pub range_false_positives: u64,
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
        range_probes: sum(|l| l.range_probes),
        range_skipped: sum(|l| l.range_skipped),
        range_false_positives: sum(|l| l.range_false_positives),
        mean_ns: run.latencies_ns.iter().sum::<u64>() as f64 / scans,
        p50_ns: percentile(&run.latencies_ns, 0.5),
        p99_ns: percentile(&run.latencies_ns, 0.99),
    }
}

/// Grafite's bound on one table's false-positive rate for ranges of
/// `length` at `bits_per_key` (Costa et al., SIGMOD 2024): `ℓ / 2^(B-2)`,
/// at most 1. What a data-independent filter of the same size guarantees.
pub fn grafite_bound(length: u64, bits_per_key: f64) -> f64 {
    (length as f64 / (bits_per_key - 2.0).exp2()).min(1.0)
}

/// The range section of a `siftdb bench` run.
#[derive(Debug, Clone)]
pub struct RangeReport {
    /// The key image's name.
    pub image: String,
    /// The range filter's point-filter kind.
    pub kind: String,
    /// One per policy, workload and length.
    pub results: Vec<RangeResult>,
}

fn run_json(run: &ScanRun) -> Value {
    let f = figures(run);
    json!({
        "scans": run.scans,
        "seconds": run.elapsed.as_secs_f64(),
        "data_blocks_per_scan": f.blocks_per_scan,
        "tables_opened_per_scan": f.tables_per_scan,
        "range_probes": f.range_probes,
        "range_skipped": f.range_skipped,
        "range_false_positives": f.range_false_positives,
        "mean_ns": f.mean_ns,
        "p50_ns": f.p50_ns,
        "p99_ns": f.p99_ns,
        "wrong_answers": run.wrong_answers,
        "levels": run.levels.iter().map(|l| json!({
            "level": l.level,
            "tables_opened": l.scan_tables_opened,
            "data_blocks": l.table_blocks_read,
            "range_probes": l.range_probes,
            "range_skipped": l.range_skipped,
            "range_false_positives": l.range_false_positives,
        })).collect::<Vec<_>>(),
    })
}

impl RangeReport {
    /// The JSON form.
    pub fn to_json(&self) -> Value {
        json!({
            "image": self.image,
            "kind": self.kind,
            "results": self.results.iter().map(|r| {
                let (with, without) = (figures(&r.with), figures(&r.without));
                json!({
                    "policy": r.policy,
                    "workload": r.workload.name(),
                    "length": r.length,
                    "with_range_filter": run_json(&r.with),
                    "without_range_filter": run_json(&r.without),
                    "speedup": without.mean_ns / with.mean_ns.max(1.0),
                    "range_filter_bits_per_key": r.bits_per_key,
                    "grafite_bound_per_table": grafite_bound(r.length, r.bits_per_key),
                    "false_positive_rate": with.range_false_positives as f64 / with.range_probes.max(1) as f64,
                })
            }).collect::<Vec<_>>(),
        })
    }

    /// The text form.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let bits = self.results.first().map_or(0.0, |r| r.bits_per_key);
        let _ = writeln!(
            s,
            "\nrange scans: 8-byte keys spread over 64 bits; range filter {} over image {}, {bits:.2} bits/key",
            self.kind, self.image
        );
        let _ = writeln!(
            s,
            "(\"without\": the same tree opened without a range filter; FP rate per table probed, beside Grafite's bound)"
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
                    r.length.to_string(),
                    format!("{:.4}", w.blocks_per_scan),
                    format!("{:.4}", o.blocks_per_scan),
                    format!("{:.3}", w.tables_per_scan),
                    format!("{:.3}", o.tables_per_scan),
                    format!("{}/{}", w.range_skipped, w.range_probes),
                    format!("{:.4}", w.range_false_positives as f64 / w.range_probes.max(1) as f64),
                    format!("{:.4}", grafite_bound(r.length, r.bits_per_key)),
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
                "length",
                "blocks/scan",
                "without",
                "tables/scan",
                "without",
                "skipped/probes",
                "FP rate",
                "Grafite",
                "mean us",
                "without",
                "speedup",
            ],
            &rows,
        ));
        s
    }

    /// Scans that returned the wrong keys.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        for r in &self.results {
            for (run, how) in [(&r.with, "with"), (&r.without, "without")] {
                if run.wrong_answers > 0 {
                    out.push(format!(
                        "{} {} of {}: {} scans {how} the range filter returned the wrong keys",
                        r.policy,
                        r.workload.name(),
                        r.length,
                        run.wrong_answers
                    ));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grafites_bound_is_the_papers() {
        assert!((grafite_bound(16, 12.0) - 16.0 / 1024.0).abs() < 1e-12);
        assert!((grafite_bound(256, 12.0) - 0.25).abs() < 1e-12);
        assert_eq!(grafite_bound(4096, 12.0), 1.0);
    }
}
