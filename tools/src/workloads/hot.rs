//! `scanhot`: short scans through a hot spot. One thread overwrites keys
//! drawn from a zipfian distribution for a while, then the readers seek to
//! keys drawn from the same distribution, with no settle between: the hot
//! keys' many versions are still in the memtables, where a scan that steps
//! through every version of each key it passes slows to a crawl.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use super::reads::{Read, reads};
use super::{Config, Phase, Values, Workload};
use crate::engine::Engine;
use crate::keys::{SplitMix, Zipf};

/// YCSB's skew: the hottest of 10^6 keys takes ~7% of the draws. Ranks
/// are key numbers as they are (not scattered as `bench readamp`'s are):
/// under `--key-format dbbench` the hot keys sit side by side, so a short
/// scan from one passes others.
const THETA: f64 = 0.99;

/// `cfg.hot_writes` of zipfian overwrites, then `cfg.ops` zipfian seeks of
/// `cfg.nexts` pairs; the phase times the seeks and records the overwrites.
pub(super) fn scan_hot<E: Engine>(cfg: &Config, e: &E, values: &Values) -> Result<Phase, String> {
    let zipf = Zipf::new(cfg.keys, THETA);
    let mut rng = SplitMix::new(cfg.seed ^ 0x407);
    let start = Instant::now();
    let mut writes = 0u64;
    while start.elapsed() < cfg.hot_writes {
        // The clock is read once per 64 puts: its cost stays out of the rate.
        for _ in 0..64 {
            let i = zipf.rank(&mut rng);
            e.put(&cfg.key(i), values.get(i ^ 0x407))?;
            writes += 1;
        }
    }
    let written = start.elapsed();
    let mut phase =
        reads(cfg, e, Workload::ScanHot, Read::ZipfSeek { zipf: &zipf }, &AtomicBool::new(false))?;
    phase.background_writes = Some((writes, written));
    Ok(phase)
}
