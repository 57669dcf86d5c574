//! Which filter each level's tables carry.
//!
//! A [`FilterPolicy`] is a small value: a per-level list of filter kinds in
//! which the last entry repeats for deeper levels, or a memory budget that
//! Monkey turns into such a list for the tree's current shape. Flushes write
//! level 0; compactions write the level they compact into.
//!
//! ```
//! use siftdb::policy::{FilterPolicy, TreeShape};
//! use siftdb::FilterKind;
//! let p = FilterPolicy::per_level(vec![FilterKind::BlockedBloom { bits_per_key: 10.0 }, FilterKind::BinaryFuse8]);
//! let shape = TreeShape::geometric(10.0, 4);
//! assert_eq!(p.for_level(0, &shape).kind, FilterKind::BlockedBloom { bits_per_key: 10.0 });
//! assert_eq!(p.for_level(3, &shape).kind, FilterKind::BinaryFuse8);
//! ```

mod monkey;

pub use monkey::{model_bits_per_key, model_fpr, monkey_rates};

use std::fmt;
use std::str::FromStr;

use crate::filter::{BlockedBloom, FilterKind};
use crate::{Error, Result};

/// Expected keys per level, level 0 first; the last entry is the last level.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeShape {
    level_keys: Vec<f64>,
}

impl TreeShape {
    /// A shape from explicit key counts per level.
    #[must_use]
    pub fn from_level_keys(level_keys: Vec<f64>) -> Self {
        TreeShape { level_keys }
    }

    /// `levels` levels whose sizes grow by `ratio`: 1, T, T², …
    #[must_use]
    pub fn geometric(ratio: f64, levels: usize) -> Self {
        let mut level_keys = Vec::with_capacity(levels);
        let mut n = 1.0;
        for _ in 0..levels {
            level_keys.push(n);
            n *= ratio;
        }
        TreeShape { level_keys }
    }

    /// Levels in the shape.
    #[must_use]
    pub fn levels(&self) -> usize {
        self.level_keys.len()
    }

    /// Expected keys per level.
    #[must_use]
    pub fn level_keys(&self) -> &[f64] {
        &self.level_keys
    }
}

/// The filter chosen for one level, and the false-positive rate it aims at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LevelFilter {
    /// The kind tables written to this level carry.
    pub kind: FilterKind,
    /// The rate the policy planned for this level (1 = no filter).
    pub target_fpr: f64,
}

#[derive(Debug, Clone, PartialEq)]
enum Rule {
    PerLevel(Vec<FilterKind>),
    Monkey { bits_per_key: f64 },
}

/// The filter kind for each level of the tree.
///
/// The default is blocked Bloom at 10 bits/key on level 0, whose tables are
/// short-lived and flushed on the write path (so build speed matters more
/// than space), and 8-bit binary fuse below (0.39% at ~9 bits/key: a lower
/// rate than Bloom at less space, for tables that live long).
#[derive(Debug, Clone, PartialEq)]
pub struct FilterPolicy {
    rule: Rule,
    skip_last_level: bool,
}

impl Default for FilterPolicy {
    fn default() -> Self {
        FilterPolicy::per_level(vec![
            FilterKind::BlockedBloom { bits_per_key: 10.0 },
            FilterKind::BinaryFuse8,
        ])
    }
}

/// Bits per key of 8- and 16-bit binary fuse filters at realistic sizes.
const FUSE8_BITS: f64 = 9.0;
const FUSE16_BITS: f64 = 18.0;

impl FilterPolicy {
    /// The same filter on every level.
    #[must_use]
    pub fn uniform(kind: FilterKind) -> Self {
        FilterPolicy::per_level(vec![kind])
    }

    /// Entry `i` is for level `i`; the last entry repeats for deeper levels.
    /// An empty list means no filters.
    #[must_use]
    pub fn per_level(kinds: Vec<FilterKind>) -> Self {
        FilterPolicy { rule: Rule::PerLevel(kinds), skip_last_level: false }
    }

    /// Monkey-optimal allocation of an average of `bits_per_key` over the
    /// whole tree (Dayan et al., SIGMOD 2017): each level's rate is
    /// proportional to its size, and each level gets the kind that meets its
    /// rate in the least space.
    #[must_use]
    pub fn monkey(bits_per_key: f64) -> Self {
        FilterPolicy { rule: Rule::Monkey { bits_per_key }, skip_last_level: false }
    }

    /// No filter on the last level ("optimise filters for hits"): for
    /// workloads whose lookups mostly find their key, the last level's filter
    /// (the largest) rarely saves a read.
    #[must_use]
    pub fn with_skip_last_level(mut self, skip: bool) -> Self {
        self.skip_last_level = skip;
        self
    }

    /// Whether the last level goes without a filter.
    #[must_use]
    pub fn skips_last_level(&self) -> bool {
        self.skip_last_level
    }

    /// The filter for tables written to `level` of a tree shaped `shape`.
    #[must_use]
    pub fn for_level(&self, level: usize, shape: &TreeShape) -> LevelFilter {
        let levels = shape.levels().max(level + 1);
        if self.skip_last_level && level + 1 >= levels && levels > 1 {
            return LevelFilter { kind: FilterKind::None, target_fpr: 1.0 };
        }
        match &self.rule {
            Rule::PerLevel(kinds) => {
                let kind = kinds.get(level).or(kinds.last()).copied().unwrap_or(FilterKind::None);
                LevelFilter { kind, target_fpr: kind.theoretical_fpr() }
            }
            Rule::Monkey { bits_per_key } => {
                let mut keys = shape.level_keys().to_vec();
                keys.resize(levels, 0.0);
                if self.skip_last_level && levels > 1 {
                    keys.truncate(levels - 1);
                }
                let rate = monkey_rates(&keys, *bits_per_key).get(level).copied().unwrap_or(1.0);
                LevelFilter { kind: cheapest_kind_for(rate), target_fpr: rate }
            }
        }
    }

    /// [`FilterPolicy::for_level`] for every level of `shape`.
    #[must_use]
    pub fn plan(&self, shape: &TreeShape) -> Vec<LevelFilter> {
        (0..shape.levels()).map(|level| self.for_level(level, shape)).collect()
    }
}

impl fmt::Display for FilterPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.rule {
            Rule::PerLevel(kinds) if kinds.len() <= 1 => {
                write!(f, "{}", kinds.first().copied().unwrap_or(FilterKind::None))?;
            }
            Rule::PerLevel(kinds) => {
                let names: Vec<String> = kinds.iter().map(ToString::to_string).collect();
                write!(f, "per-level:{}", names.join(","))?;
            }
            Rule::Monkey { bits_per_key } => write!(f, "monkey:{bits_per_key}")?,
        }
        if self.skip_last_level {
            write!(f, "+skip-last")?;
        }
        Ok(())
    }
}

impl FromStr for FilterPolicy {
    type Err = Error;

    /// Parses the names the CLI uses: a filter kind applied uniformly
    /// (`none`, `bloom:10`, `blocked-bloom:10`, `xor8`, `fuse8`, …),
    /// `monkey:<bits per key>`, or `per-level:<kind>,<kind>,…`; any of them
    /// may end in `+skip-last`.
    fn from_str(s: &str) -> Result<Self> {
        let (body, skip) = match s.strip_suffix("+skip-last") {
            Some(body) => (body, true),
            None => (s, false),
        };
        let policy = if let Some(bits) = body.strip_prefix("monkey:") {
            match bits.parse::<f64>() {
                Ok(b) if b.is_finite() && b > 0.0 && b <= 64.0 => FilterPolicy::monkey(b),
                _ => {
                    return Err(Error::InvalidArgument(format!(
                        "policy '{s}': monkey takes an average bits per key from 0 to 64"
                    )));
                }
            }
        } else if let Some(spec) = body.strip_prefix("per-level:") {
            let kinds = spec.split(',').map(str::parse).collect::<Result<Vec<FilterKind>>>()?;
            FilterPolicy::per_level(kinds)
        } else {
            FilterPolicy::uniform(body.parse()?)
        };
        Ok(policy.with_skip_last_level(skip))
    }
}

/// The kind that reaches `target` false positives in the least space.
///
/// Candidates are blocked Bloom (any bits/key, one cache miss per probe) and
/// binary fuse with 8 or 16-bit fingerprints; classic Bloom is left out (it
/// saves ~5% space over blocked Bloom at k cache misses per lookup), and xor
/// is dominated by binary fuse. When nothing reaches the target, the lowest
/// rate on offer wins.
#[must_use]
pub fn cheapest_kind_for(target: f64) -> FilterKind {
    if target.is_nan() || target >= 1.0 {
        return FilterKind::None;
    }
    let mut options: Vec<(f64, FilterKind)> = Vec::with_capacity(3);
    let bloom_bits = (BlockedBloom::bits_per_key_for_fpr(target) * 10.0).ceil() / 10.0;
    if bloom_bits.is_finite() && bloom_bits <= 64.0 {
        options.push((bloom_bits.max(1.0), FilterKind::BlockedBloom { bits_per_key: bloom_bits.max(1.0) }));
    }
    if FilterKind::BinaryFuse8.theoretical_fpr() <= target {
        options.push((FUSE8_BITS, FilterKind::BinaryFuse8));
    }
    if FilterKind::BinaryFuse16.theoretical_fpr() <= target {
        options.push((FUSE16_BITS, FilterKind::BinaryFuse16));
    }
    options
        .into_iter()
        .filter(|(_, kind)| kind.theoretical_fpr() <= target * 1.0001)
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map_or(FilterKind::BinaryFuse16, |(_, kind)| kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_names_round_trip() {
        for name in
            ["none", "bloom:10", "fuse8", "monkey:10", "per-level:blocked-bloom:10,fuse8", "xor16+skip-last"]
        {
            let p: FilterPolicy = name.parse().unwrap();
            assert_eq!(p.to_string(), name);
        }
        for bad in ["monkey:", "monkey:-1", "per-level:", "per-level:xor8,,fuse8", "bogus"] {
            assert!(matches!(bad.parse::<FilterPolicy>(), Err(Error::InvalidArgument(_))), "{bad}");
        }
    }

    #[test]
    fn per_level_repeats_its_last_entry() {
        let p = FilterPolicy::per_level(vec![FilterKind::Xor8, FilterKind::Xor16]);
        let shape = TreeShape::geometric(10.0, 6);
        let kinds: Vec<_> = p.plan(&shape).iter().map(|l| l.kind).collect();
        assert_eq!(
            kinds,
            [
                FilterKind::Xor8,
                FilterKind::Xor16,
                FilterKind::Xor16,
                FilterKind::Xor16,
                FilterKind::Xor16,
                FilterKind::Xor16
            ]
        );
        assert_eq!(FilterPolicy::per_level(vec![]).for_level(3, &shape).kind, FilterKind::None);
    }

    #[test]
    fn skip_last_level_removes_only_the_last_filter() {
        let p = FilterPolicy::uniform(FilterKind::BinaryFuse8).with_skip_last_level(true);
        let plan = p.plan(&TreeShape::geometric(10.0, 4));
        assert_eq!(plan[3].kind, FilterKind::None);
        assert!(plan[..3].iter().all(|l| l.kind == FilterKind::BinaryFuse8));
        // A one-level tree keeps its filter: its only level is also the first.
        assert_eq!(p.for_level(0, &TreeShape::geometric(10.0, 1)).kind, FilterKind::BinaryFuse8);
    }

    #[test]
    fn monkey_gives_small_levels_stronger_filters() {
        let p = FilterPolicy::monkey(10.0);
        let plan = p.plan(&TreeShape::geometric(10.0, 5));
        for w in plan.windows(2) {
            assert!(w[0].target_fpr < w[1].target_fpr, "{plan:?}");
            assert!(w[0].kind.theoretical_fpr() <= w[1].kind.theoretical_fpr() * 1.0001, "{plan:?}");
        }
        // Every level's chosen kind meets its planned rate, or is the
        // strongest filter on offer.
        for l in &plan {
            assert!(
                l.kind.theoretical_fpr() <= l.target_fpr * 1.0001 || l.kind == FilterKind::BinaryFuse16,
                "{l:?}"
            );
        }
    }

    #[test]
    fn monkey_realised_plan_stays_near_budget_and_beats_uniform() {
        // T = 10, 5 levels, 10 bits/key: the kinds Monkey picks spend within
        // 10% of the budget and their summed rates beat a uniform blocked
        // Bloom at 10 bits/key by more than 2x.
        let shape = TreeShape::geometric(10.0, 5);
        let plan = FilterPolicy::monkey(10.0).plan(&shape);
        let keys = shape.level_keys();
        let total: f64 = keys.iter().sum();
        let bits: f64 = plan.iter().zip(keys).map(|(l, n)| l.kind.nominal_bits_per_key() * n).sum();
        assert!((bits / total - 10.0).abs() < 1.0, "realised {} bits/key: {plan:?}", bits / total);
        let realised: f64 = plan.iter().map(|l| l.kind.theoretical_fpr()).sum();
        let uniform = 5.0 * FilterKind::BlockedBloom { bits_per_key: 10.0 }.theoretical_fpr();
        assert!(realised < uniform / 2.0, "{realised} vs {uniform}");
    }

    #[test]
    fn cheapest_kind_prefers_fuse8_near_its_rate_and_bloom_for_loose_rates() {
        assert_eq!(cheapest_kind_for(1.0), FilterKind::None);
        assert_eq!(cheapest_kind_for(0.005), FilterKind::BinaryFuse8);
        assert!(
            matches!(cheapest_kind_for(0.05), FilterKind::BlockedBloom { bits_per_key } if bits_per_key < 7.0)
        );
        assert_eq!(cheapest_kind_for(1e-9), FilterKind::BinaryFuse16);
    }
}
