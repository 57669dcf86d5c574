//! Seeded key sets and lookup sequences for the read-amplification benchmark.
//!
//! Present and absent keys are drawn from one distribution: key `i` is the
//! 16 hex digits of `splitmix64(seed + i)`, with `i < n` inserted and
//! `n ≤ i < 2n` never inserted. Absent keys therefore have the same length
//! and spread as present ones, and fall inside the tables' key ranges, so
//! only a filter (never a range check) can skip a table for them.

use siftdb_cli::keys::mix;
pub use siftdb_cli::keys::{SplitMix, key, value};

/// Zipfian draws of `0..n` ([`siftdb_cli::keys::Zipf`]), with ranks
/// scattered over the key space so hot keys are not neighbours.
#[derive(Debug, Clone)]
pub struct Zipf(siftdb_cli::keys::Zipf);

impl Zipf {
    /// Skew `theta` in (0, 1); YCSB uses 0.99.
    pub fn new(n: u64, theta: f64) -> Self {
        Zipf(siftdb_cli::keys::Zipf::new(n, theta))
    }

    /// The next item index in `0..n`.
    pub fn sample(&self, rng: &mut SplitMix) -> u64 {
        let rank = self.0.rank(rng);
        // Scatter ranks so the hottest keys are spread across tables.
        ((u128::from(mix(rank ^ 0xC0FFEE)) * u128::from(self.0.n())) >> 64) as u64
    }
}

/// What a lookup sequence asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// Keys never inserted.
    Absent,
    /// Inserted keys, uniformly.
    Uniform,
    /// Inserted keys, Zipfian (θ = 0.99).
    Zipfian,
    /// Inserted keys with probability `hit_ratio`, absent ones otherwise.
    Mixed,
    /// The range-scan sanity check: seeded ranges compared with the key set
    /// (no point lookups).
    Scan,
}

impl Workload {
    /// The workload's name in reports and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Absent => "absent",
            Workload::Uniform => "uniform",
            Workload::Zipfian => "zipfian",
            Workload::Mixed => "mixed",
            Workload::Scan => "scan",
        }
    }

    /// Every workload, in the default order.
    pub const ALL: [Workload; 5] =
        [Workload::Absent, Workload::Uniform, Workload::Zipfian, Workload::Mixed, Workload::Scan];

    /// Whether the workload is a sequence of point lookups.
    pub fn is_lookup(self) -> bool {
        self != Workload::Scan
    }

    /// Parses a name from `--workloads`.
    pub fn parse(s: &str) -> Option<Self> {
        Workload::ALL.into_iter().find(|w| w.name() == s)
    }
}

/// The key indices to look up: `< n` present, `≥ n` absent. The same seed
/// gives the same sequence, so every policy sees identical lookups. `Scan`
/// has none.
pub fn lookups(workload: Workload, n: u64, count: usize, hit_ratio: f64, seed: u64) -> Vec<u64> {
    if workload == Workload::Scan {
        return Vec::new();
    }
    let mut rng = SplitMix::new(seed ^ 0x0100_70C5);
    let zipf = (workload == Workload::Zipfian).then(|| Zipf::new(n, 0.99));
    (0..count)
        .map(|_| match workload {
            Workload::Absent | Workload::Scan => n + rng.below(n),
            Workload::Uniform => rng.below(n),
            Workload::Zipfian => zipf.as_ref().map_or(0, |z| z.sample(&mut rng)),
            Workload::Mixed => {
                if rng.unit() < hit_ratio {
                    rng.below(n)
                } else {
                    n + rng.below(n)
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_stay_in_their_half_of_the_key_space() {
        let n = 1000;
        assert!(lookups(Workload::Absent, n, 5000, 0.0, 1).iter().all(|&i| (n..2 * n).contains(&i)));
        assert!(lookups(Workload::Uniform, n, 5000, 0.0, 1).iter().all(|&i| i < n));
        assert!(lookups(Workload::Zipfian, n, 5000, 0.0, 1).iter().all(|&i| i < n));
        let mixed = lookups(Workload::Mixed, n, 10_000, 0.3, 1);
        let hits = mixed.iter().filter(|&&i| i < n).count();
        assert!((2700..3300).contains(&hits), "{hits}");
        assert_eq!(lookups(Workload::Uniform, n, 100, 0.0, 9), lookups(Workload::Uniform, n, 100, 0.0, 9));
    }

    #[test]
    fn zipfian_is_skewed() {
        let n = 10_000;
        let mut counts = std::collections::HashMap::new();
        for i in lookups(Workload::Zipfian, n, 100_000, 0.0, 3) {
            *counts.entry(i).or_insert(0u32) += 1;
        }
        let mut c: Vec<u32> = counts.into_values().collect();
        c.sort_unstable_by(|a, b| b.cmp(a));
        let top10: u32 = c.iter().take(10).sum();
        // Under θ = 0.99 the ten hottest of 10^4 keys draw roughly a quarter
        // of all lookups; uniform would give 0.1%.
        assert!(top10 > 15_000, "top 10 keys drew only {top10} of 100000");
    }
}
