//! `deleterange`: half the store deleted in ranges, then settled, to show
//! whether range deletes give the disk back and whether a deleted key
//! costs a reader what a key never written costs.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use super::reads::{Read, reads};
use super::{Config, Phase, Workload, bar, dir_bytes};
use crate::engine::Engine;
use crate::latency::Histogram;

/// Keys each range delete covers: a run of this many consecutive keys in
/// key order, every other run deleted.
pub const RANGE_KEYS: usize = 1000;

/// Operations and the wall time they took.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Rate {
    /// Operations timed.
    pub ops: u64,
    /// Their wall time (all threads).
    pub elapsed: Duration,
}

impl Rate {
    /// Both passes' operations over both passes' time.
    #[must_use]
    pub fn and(self, other: Rate) -> Rate {
        Rate { ops: self.ops + other.ops, elapsed: self.elapsed + other.elapsed }
    }

    /// Operations per second.
    #[must_use]
    pub fn ops_per_sec(&self) -> f64 {
        self.ops as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// What `deleterange` measured beside the range deletes' own rate.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RangeDeletes {
    /// Keys the range deletes covered (of those loaded).
    pub keys_deleted: u64,
    /// Bytes of the store's files, settled, before the deletes.
    pub disk_bytes_before: Option<u64>,
    /// Bytes of the store's files after the deletes and the settle.
    pub disk_bytes_after: Option<u64>,
    /// Gets of deleted keys, after the settle: each must find nothing.
    pub deleted_gets: Rate,
    /// Gets of keys never written, beside them.
    pub absent_gets: Rate,
}

impl RangeDeletes {
    /// Disk bytes after over disk bytes before; `None` unless both were measured.
    #[must_use]
    pub fn disk_ratio(&self) -> Option<f64> {
        match (self.disk_bytes_before, self.disk_bytes_after) {
            (Some(b), Some(a)) if b > 0 => Some(a as f64 / b as f64),
            _ => None,
        }
    }
}

/// Runs `deleterange` on the store `e` keeps in `dir`.
///
/// # Errors
/// The engine's error, or a deleted key found.
pub(super) fn run<E: Engine>(cfg: &Config, e: &E, dir: &Path) -> Result<Phase, String> {
    // Earlier workloads may have left writes unflushed: the bytes before
    // are a settled store's, as the bytes after are.
    e.settle()?;
    let disk_bytes_before = dir_bytes(dir);
    // Key numbers scatter over the key space; a range covers consecutive keys in key order.
    let mut ids: Vec<u64> = (0..cfg.keys).collect();
    ids.sort_by_cached_key(|&i| cfg.key(i));
    // A store under 2,000 keys still gets half its keys deleted.
    let run = RANGE_KEYS.min(ids.len() / 2).max(1);
    let runs: Vec<&[u64]> = ids.chunks(run).collect();
    let progress = bar(cfg, runs.len() as u64 / 2, Workload::DeleteRange.name());
    let mut deleted = Vec::with_capacity(ids.len() / 2 + run);
    let mut latency = Histogram::new();
    let start = Instant::now();
    for (n, keys) in runs.iter().enumerate().skip(1).step_by(2) {
        let from = cfg.key(keys[0]);
        // Up to the next run's first key, which stays; after the last key, its successor.
        let to = match runs.get(n + 1) {
            Some(next) => cfg.key(next[0]).to_vec(),
            None => [&cfg.key(keys[keys.len() - 1])[..], &[0]].concat(),
        };
        let t = Instant::now();
        e.delete_range(&from, &to)?;
        latency.record(t.elapsed().as_nanos() as u64);
        deleted.extend_from_slice(keys);
        progress.inc(1);
    }
    let elapsed = start.elapsed();
    progress.finish_and_clear();
    drop(ids);
    let settling = Instant::now();
    e.settle()?;
    let settle = settling.elapsed();
    let disk_bytes_after = dir_bytes(dir);
    let never = AtomicBool::new(false);
    let rate = |p: Phase| Rate { ops: p.ops, elapsed: p.elapsed };
    // As many keys never written, drawn the same way.
    let never_written: Vec<u64> = (cfg.keys..cfg.keys + deleted.len() as u64).collect();
    let gets = |ids: &[u64], what, ops| -> Result<Rate, String> {
        if ids.is_empty() {
            return Ok(Rate::default());
        }
        let c = Config { ops, ..cfg.clone() };
        Ok(rate(reads(&c, e, Workload::DeleteRange, Read::Absent { ids, what }, &never)?))
    };
    let (deleted_what, never_what) = ("deleted by a range delete", "never written");
    // The settle left tables no reader has touched, and whatever runs first
    // pays for that (measured: a fifth of the rate): an untimed pass first,
    // then the two kinds in the order ABBA, so neither only leads or trails.
    gets(&never_written, never_what, cfg.ops.min(100_000))?;
    let half = cfg.ops.div_ceil(2);
    // The second passes draw other keys: the same seed picks the same places.
    let turned = |v: &[u64]| [&v[v.len() / 2..], &v[..v.len() / 2]].concat();
    let deleted_gets = gets(&deleted, deleted_what, half)?;
    let absent_gets = gets(&never_written, never_what, half)?;
    let absent_gets = absent_gets.and(gets(&turned(&never_written), never_what, half)?);
    let deleted_gets = deleted_gets.and(gets(&turned(&deleted), deleted_what, half)?);
    Ok(Phase {
        workload: Workload::DeleteRange,
        ops: latency.count(),
        elapsed,
        latency,
        settle: Some(settle),
        write_amplification: None,
        process_write_amplification: None,
        at_idle: None,
        background_writes: None,
        range_deletes: Some(RangeDeletes {
            keys_deleted: deleted.len() as u64,
            disk_bytes_before,
            disk_bytes_after,
            deleted_gets,
            absent_gets,
        }),
    })
}
