//! Each policy against no filter and against the others: the ratios the
//! tables and the verdict quote.

use super::*;

pub(super) fn level_bits_per_key(l: &LevelShape) -> f64 {
    if l.keys == 0 { 0.0 } else { l.filter_bytes as f64 * 8.0 / l.keys as f64 }
}

pub(super) fn ratio(a: f64, b: f64) -> Option<f64> {
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
    pub(super) fn of(f: &Figures, b: &Figures) -> Ratios {
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

    pub(super) fn to_json(self) -> Value {
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

pub(super) fn table_bytes(r: &PolicyResult) -> u64 {
    r.levels.iter().map(|l| l.bytes).sum()
}
