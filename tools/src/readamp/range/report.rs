//! The range workloads' report: text, JSON and the problems a run found.

use std::fmt::Write as _;

use serde_json::{Value, json};

use super::super::scans::{self, RunFigures, ScanFilter, ScanRun};
use super::RangeResult;
use crate::output;

/// The figures of `run`, counting range probes.
pub fn figures(run: &ScanRun) -> RunFigures {
    scans::figures(run, ScanFilter::Range)
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
                    "with_range_filter": scans::run_json(&r.with, ScanFilter::Range),
                    "without_range_filter": scans::run_json(&r.without, ScanFilter::Range),
                    "speedup": without.mean_ns / with.mean_ns.max(1.0),
                    "range_filter_bits_per_key": r.bits_per_key,
                    "grafite_bound_per_table": grafite_bound(r.length, r.bits_per_key),
                    "false_positive_rate": with.false_positives as f64 / with.probes.max(1) as f64,
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
                    format!("{}/{}", w.skipped, w.probes),
                    format!("{:.4}", w.false_positives as f64 / w.probes.max(1) as f64),
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
        let what = |r: &RangeResult| format!("{} {} of {}", r.policy, r.workload.name(), r.length);
        self.results
            .iter()
            .flat_map(|r| scans::wrong_answers(&what(r), "the range filter", &r.with, &r.without))
            .collect()
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
