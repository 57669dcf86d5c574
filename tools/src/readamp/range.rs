//! The range workloads of `siftdb bench`: short scans over 64-bit keys,
//! with and without the range filter.
//!
//! Key `i` is the 8 bytes, big-endian, of a bijective mix of `seed + i`:
//! spread evenly over the 64-bit space, so a range of a few thousand
//! values is almost always empty, and only a filter (never a table's key
//! range) can rule a table out for it. Each workload scans ranges of 16,
//! 256 and 4,096 image values:
//!
//! - `range-empty`: placed at random, and kept only if empty;
//! - `range-present`: placed to hold a loaded key (at a random position in
//!   the range);
//! - `range-near`: empty, starting 1 to 64 values past a loaded key, where
//!   a bucketed filter shares the key's bucket (the case Grafite's
//!   data-independent bound is for).
//!
//! Each runs twice on the same tree: opened with the range filter policy
//! the tables were written with, and opened without one, when no table is
//! skipped by range (key-range pruning still applies to both).

mod report;

use std::path::Path;

use siftdb::fs::StdFs;
use siftdb::policy::FilterPolicy;
use siftdb::table::Table;
use siftdb::{Db, Options, RangeFilterPolicy};

use super::measure::{self, Config};
use super::scans::{ScanRun, time_scans, without_and_with};
use super::workload::SplitMix;
pub use report::RangeReport;
use siftdb_cli::keys::mix;

/// A range workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeWorkload {
    /// Empty ranges placed at random.
    Empty,
    /// Ranges holding a loaded key.
    Present,
    /// Empty ranges starting just past a loaded key.
    Near,
}

impl RangeWorkload {
    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            RangeWorkload::Empty => "range-empty",
            RangeWorkload::Present => "range-present",
            RangeWorkload::Near => "range-near",
        }
    }

    /// Parses a `--workloads` name.
    pub fn parse(s: &str) -> Option<Self> {
        [RangeWorkload::Empty, RangeWorkload::Present, RangeWorkload::Near]
            .into_iter()
            .find(|w| w.name() == s)
    }
}

/// The range lengths every workload runs, in image values.
pub const LENGTHS: [u64; 3] = [16, 256, 4096];

/// The loaded keys, as images, and what ranges of them hold.
#[derive(Debug, Clone)]
pub struct RangeKeys {
    seed: u64,
    /// Every loaded image, ascending.
    sorted: Vec<u64>,
}

impl RangeKeys {
    /// The images of keys `0..keys` under `seed`.
    pub fn new(keys: u64, seed: u64) -> Self {
        let seed = seed ^ 0x7A_4E6E;
        let mut sorted: Vec<u64> = (0..keys).map(|i| mix(seed.wrapping_add(i))).collect();
        sorted.sort_unstable();
        RangeKeys { seed, sorted }
    }

    /// Key `i`: its image, big-endian.
    pub fn key(&self, i: u64) -> [u8; 8] {
        mix(self.seed.wrapping_add(i)).to_be_bytes()
    }

    /// Loaded images in `[lo, lo + len)`.
    pub fn count_in(&self, lo: u64, len: u64) -> u64 {
        let hi = lo.saturating_add(len);
        (self.sorted.partition_point(|&x| x < hi) - self.sorted.partition_point(|&x| x < lo)) as u64
    }

    /// `n` scans of `len` values for workload `w`, seeded: each its start
    /// and the keys it must return.
    pub fn scans(&self, w: RangeWorkload, len: u64, n: usize, seed: u64) -> Vec<(u64, u64)> {
        let mut rng = SplitMix::new(seed ^ 0x5CA7 ^ len);
        let mut out = Vec::with_capacity(n);
        // Each draw is kept with probability near 1 (ranges are short
        // against the gaps); the cap only stops a pathological key set.
        for _ in 0..n.saturating_mul(20) {
            if out.len() == n || self.sorted.is_empty() {
                break;
            }
            let key = self.sorted[rng.below(self.sorted.len() as u64) as usize];
            let lo = match w {
                RangeWorkload::Empty => rng.next_u64(),
                RangeWorkload::Present => key.saturating_sub(rng.below(len)),
                RangeWorkload::Near => key.saturating_add(1 + rng.below(64)),
            };
            if lo.checked_add(len).is_none() {
                continue;
            }
            let held = self.count_in(lo, len);
            if (held > 0) == (w == RangeWorkload::Present) {
                out.push((lo, held));
            }
        }
        out
    }
}

/// One workload at one length on one policy, with and without the range
/// filter.
#[derive(Debug, Clone)]
pub struct RangeResult {
    /// The policy's name.
    pub policy: String,
    /// The workload.
    pub workload: RangeWorkload,
    /// Range length, in image values.
    pub length: u64,
    /// Opened with the range filter policy.
    pub with: ScanRun,
    /// Opened without one.
    pub without: ScanRun,
    /// Range-filter bits per key over the tree's tables.
    pub bits_per_key: f64,
}

/// Range-filter bits per distinct key over the tables in `dir`.
#[expect(clippy::cast_precision_loss, reason = "a ratio for display")]
fn bits_per_key(dir: &Path) -> Result<f64, String> {
    let (mut bytes, mut keys) = (0u64, 0u64);
    for entry in std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.extension().is_some_and(|e| e == "sst") {
            let t = Table::open(&StdFs, &path).map_err(|e| e.to_string())?;
            bytes += t.properties().range_filter_block.map_or(0, |h| u64::from(h.size) + 5);
            keys += t.distinct_keys();
        }
    }
    Ok(if keys == 0 { 0.0 } else { bytes as f64 * 8.0 / keys as f64 })
}

/// Loads the 64-bit keys under `policy`, with range filters of
/// `range_filter`, into a fresh database at `dir`, then runs each workload
/// at each length without the range filter and with it.
pub fn run_policy(
    config: &Config,
    (name, label): (&str, &str),
    policy: &FilterPolicy,
    range_filter: RangeFilterPolicy,
    dir: &Path,
    workloads: &[RangeWorkload],
) -> Result<Vec<RangeResult>, String> {
    let keys = RangeKeys::new(config.keys, config.seed);
    let opts =
        |r: Option<RangeFilterPolicy>| Options { range_filter: r, ..measure::options_for(config, policy) };
    let db = Db::open(dir, opts(Some(range_filter))).map_err(|e| format!("{}: {e}", dir.display()))?;
    measure::load(config, (name, &format!("{label} (64-bit keys)")), &db, &opts(Some(range_filter)), &|i| {
        keys.key(i)
    })?;
    db.close().map_err(|e| format!("{name}: close: {e}"))?;
    let bits = bits_per_key(dir)?;
    let mut out = Vec::new();
    for &w in workloads {
        for len in LENGTHS {
            let seq = keys.scans(w, len, config.lookups, config.seed);
            let bar = measure::progress(config, 2, &format!("{label}: {} of {len}", w.name()));
            let scan = |db: &Db| {
                time_scans(db, seq.len(), |i| {
                    let (lo, want) = seq[i];
                    let (a, b) = (lo.to_be_bytes(), (lo + len).to_be_bytes());
                    (db.range(a.as_slice()..b.as_slice()), want)
                })
            };
            let (without, with) =
                without_and_with(dir, name, |on| opts(on.then_some(range_filter)), scan, || bar.inc(1))?;
            bar.finish_and_clear();
            out.push(RangeResult {
                policy: name.to_string(),
                workload: w,
                length: len,
                with,
                without,
                bits_per_key: bits,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scans_are_empty_or_hold_keys_as_asked() {
        let k = RangeKeys::new(20_000, 7);
        assert_eq!(k.sorted.len(), 20_000);
        assert_eq!(u64::from_be_bytes(k.key(3)), mix(k.seed + 3));
        assert_eq!(k.count_in(u64::from_be_bytes(k.key(3)), 1), 1);
        for len in LENGTHS {
            let empty = k.scans(RangeWorkload::Empty, len, 500, 1);
            assert_eq!(empty.len(), 500);
            assert!(empty.iter().all(|&(lo, n)| n == 0 && k.count_in(lo, len) == 0));
            let present = k.scans(RangeWorkload::Present, len, 500, 1);
            assert!(
                present.len() == 500 && present.iter().all(|&(lo, n)| n >= 1 && k.count_in(lo, len) == n)
            );
            let near = k.scans(RangeWorkload::Near, len, 500, 1);
            assert_eq!(near.len(), 500);
            assert!(near.iter().all(|&(lo, n)| n == 0 && k.count_in(lo - 64, 64) >= 1));
        }
        assert_eq!(k.scans(RangeWorkload::Empty, 16, 100, 3), k.scans(RangeWorkload::Empty, 16, 100, 3));
        assert_eq!(RangeWorkload::parse("range-near"), Some(RangeWorkload::Near));
    }
}
