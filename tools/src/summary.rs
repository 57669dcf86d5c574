//! Rounds folded into one line per workload: the median round's rate with
//! the range of all rounds, latency percentiles over every operation of
//! every round, and the median settle time and write amplification.

use crate::latency::Histogram;
use crate::workloads::{Phase, Round, Workload};

/// One workload over all rounds.
#[derive(Debug, Clone)]
pub struct Summary {
    /// Which workload.
    pub workload: Workload,
    /// Rounds that ran it.
    pub rounds: usize,
    /// Operations per second: the median round's.
    pub ops_per_sec: f64,
    /// The slowest round's rate.
    pub min_ops_per_sec: f64,
    /// The fastest round's rate.
    pub max_ops_per_sec: f64,
    /// Every operation of every round.
    pub latency: Histogram,
    /// Median settle time after the workload, seconds (writing workloads).
    pub settle_secs: Option<f64>,
    /// Median write amplification (writing workloads, engines that count).
    pub write_amplification: Option<f64>,
    /// Median bytes handed to `write(2)` per user byte (Linux).
    pub process_write_amplification: Option<f64>,
    /// Medians of the two once background compaction idled, before the
    /// full settle (tables, `write(2)`).
    pub at_idle: (Option<f64>, Option<f64>),
    /// Median rate of the background writer (`readwhilewriting`) or of
    /// `scanhot`'s overwrites before its scans, puts/s.
    pub background_writes_per_sec: Option<f64>,
    /// `deleterange`'s figures over its rounds.
    pub range_deletes: Option<RangeDeleteSummary>,
}

/// A figure's median over rounds, with the lowest and highest round's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// The median round's (the mean of the middle two for an even count).
    pub median: f64,
    /// The lowest round's.
    pub min: f64,
    /// The highest round's.
    pub max: f64,
}

impl Spread {
    /// `v`'s median and extremes; `None` when it holds no finite value.
    #[must_use]
    pub fn of(v: Vec<f64>) -> Option<Self> {
        let min = v.iter().copied().filter(|x| x.is_finite()).fold(f64::INFINITY, f64::min);
        let max = v.iter().copied().filter(|x| x.is_finite()).fold(f64::NEG_INFINITY, f64::max);
        median(v).map(|median| Spread { median, min, max })
    }
}

/// `deleterange` over its rounds ([`crate::workloads::RangeDeletes`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RangeDeleteSummary {
    /// Keys the range deletes covered (the same every round).
    pub keys_deleted: u64,
    /// Disk bytes before the deletes.
    pub disk_bytes_before: Option<Spread>,
    /// Disk bytes after the deletes and the settle.
    pub disk_bytes_after: Option<Spread>,
    /// After over before, per round.
    pub disk_ratio: Option<Spread>,
    /// Gets of deleted keys per second.
    pub deleted_gets_per_sec: Option<Spread>,
    /// Gets of keys never written per second.
    pub absent_gets_per_sec: Option<Spread>,
}

fn range_deletes(phases: &[&Phase]) -> Option<RangeDeleteSummary> {
    let r: Vec<_> = phases.iter().filter_map(|p| p.range_deletes).collect();
    let of = |f: &dyn Fn(&crate::workloads::RangeDeletes) -> Option<f64>| {
        Spread::of(r.iter().filter_map(f).collect())
    };
    Some(RangeDeleteSummary {
        keys_deleted: r.first()?.keys_deleted,
        disk_bytes_before: of(&|d| d.disk_bytes_before.map(|b| b as f64)),
        disk_bytes_after: of(&|d| d.disk_bytes_after.map(|b| b as f64)),
        disk_ratio: of(&|d| d.disk_ratio()),
        deleted_gets_per_sec: of(&|d| (d.deleted_gets.ops > 0).then(|| d.deleted_gets.ops_per_sec())),
        absent_gets_per_sec: of(&|d| (d.absent_gets.ops > 0).then(|| d.absent_gets.ops_per_sec())),
    })
}

impl Summary {
    /// (fastest − slowest) / median: how far apart the rounds were.
    #[must_use]
    pub fn spread(&self) -> f64 {
        (self.max_ops_per_sec - self.min_ops_per_sec) / self.ops_per_sec.max(f64::MIN_POSITIVE)
    }
}

/// The median of `v` (the mean of the middle two for an even count);
/// `None` when empty.
#[must_use]
pub fn median(mut v: Vec<f64>) -> Option<f64> {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    Some(if v.len() % 2 == 1 { v[mid] } else { f64::midpoint(v[mid - 1], v[mid]) })
}

/// One summary per workload that ran, in run order.
#[must_use]
pub fn summarize(rounds: &[Round]) -> Vec<Summary> {
    let mut out = Vec::new();
    for w in Workload::ALL {
        let phases: Vec<&Phase> =
            rounds.iter().flat_map(|r| r.phases.iter().filter(move |p| p.workload == w)).collect();
        if phases.is_empty() {
            continue;
        }
        let rates: Vec<f64> = phases.iter().map(|p| p.ops_per_sec()).collect();
        let mut latency = Histogram::new();
        for p in &phases {
            latency.merge(&p.latency);
        }
        let of = |f: &dyn Fn(&Phase) -> Option<f64>| median(phases.iter().filter_map(|p| f(p)).collect());
        out.push(Summary {
            workload: w,
            rounds: phases.len(),
            ops_per_sec: median(rates.clone()).unwrap_or(0.0),
            min_ops_per_sec: rates.iter().copied().fold(f64::INFINITY, f64::min),
            max_ops_per_sec: rates.iter().copied().fold(0.0, f64::max),
            latency,
            settle_secs: of(&|p| p.settle.map(|d| d.as_secs_f64())),
            write_amplification: of(&|p| p.write_amplification),
            process_write_amplification: of(&|p| p.process_write_amplification),
            at_idle: (of(&|p| p.at_idle.and_then(|a| a.0)), of(&|p| p.at_idle.and_then(|a| a.1))),
            background_writes_per_sec: of(&|p| {
                p.background_writes.map(|(n, over)| n as f64 / over.as_secs_f64().max(1e-9))
            }),
            range_deletes: range_deletes(&phases),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::engine::Shape;

    fn phase(w: Workload, ops: u64, millis: u64, wa: Option<f64>) -> Phase {
        let mut latency = Histogram::new();
        latency.record(millis * 1000);
        Phase {
            workload: w,
            ops,
            elapsed: Duration::from_millis(millis),
            latency,
            settle: wa.map(|_| Duration::from_millis(millis)),
            write_amplification: wa,
            process_write_amplification: None,
            at_idle: None,
            background_writes: None,
            range_deletes: None,
        }
    }

    #[test]
    fn medians_and_ranges_over_rounds() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(vec![]), None);
        let rounds: Vec<Round> = [(100, 2.0), (50, 3.0), (200, 4.0)]
            .into_iter()
            .map(|(ms, wa)| Round {
                phases: vec![
                    phase(Workload::FillRandom, 1000, ms, Some(wa)),
                    phase(Workload::ReadMissing, 1000, ms, None),
                ],
                shape: Shape::default(),
            })
            .collect();
        let s = summarize(&rounds);
        assert_eq!(
            s.iter().map(|s| s.workload).collect::<Vec<_>>(),
            [Workload::FillRandom, Workload::ReadMissing]
        );
        let fill = &s[0];
        assert_eq!(fill.rounds, 3);
        assert_eq!(
            (fill.min_ops_per_sec, fill.ops_per_sec, fill.max_ops_per_sec),
            (5_000.0, 10_000.0, 20_000.0)
        );
        assert!((fill.spread() - 1.5).abs() < 1e-12);
        assert_eq!(fill.write_amplification, Some(3.0));
        assert_eq!(fill.settle_secs, Some(0.1));
        assert_eq!(fill.latency.count(), 3);
        assert_eq!(s[1].write_amplification, None);
    }
}
