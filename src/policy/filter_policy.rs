//! The policy value: a per-level list of filter kinds, or a Monkey budget,
//! and the plan either gives a tree shape. Its text form is in [`text`].

mod text;

pub use text::POLICY_FORMS;

use super::monkey::{LevelModel, monkey_plan, monkey_plan_flushes_only, monkey_plan_settling};
use super::plan::{LevelFilter, TreeShape};
use crate::filter::FilterKind;
use crate::{Error, Result};

#[derive(Debug, Clone, PartialEq)]
enum Rule {
    PerLevel(Vec<FilterKind>),
    Monkey { bits_per_key: f64 },
}

/// The filter kind for each level of the tree.
///
/// The default is `monkey:10`: 10 real bits per key over the tree, placed
/// level by level where they save the most reads, with Ribbon on the
/// long-lived levels at the bits each is given and a fast-building kind on
/// level 0's flushes. On the 10^6-key bench tree it reads a quarter of the
/// wasted blocks that blocked Bloom on level 0 and fuse8 below (the default
/// until issue 39) read, for 8% more filter memory (DESIGN.md, "Default
/// filter policy, and why").
#[derive(Debug, Clone, PartialEq)]
pub struct FilterPolicy {
    rule: Rule,
    skip_last_level: bool,
}

/// The default policy's budget, in real bits per key.
const DEFAULT_BITS_PER_KEY: f64 = 10.0;

impl Default for FilterPolicy {
    fn default() -> Self {
        FilterPolicy { rule: Rule::Monkey { bits_per_key: DEFAULT_BITS_PER_KEY }, skip_last_level: false }
    }
}

impl FilterPolicy {
    /// The same filter on every level.
    #[must_use]
    pub fn uniform(kind: FilterKind) -> Self {
        FilterPolicy::per_level(vec![kind])
    }

    /// Entry `i` is for level `i`; the last entry repeats for deeper levels.
    /// An empty list means no filters, and is the same policy as
    /// `uniform(FilterKind::None)` (so it prints and parses back as `none`).
    #[must_use]
    pub fn per_level(mut kinds: Vec<FilterKind>) -> Self {
        if kinds.is_empty() {
            kinds.push(FilterKind::None);
        }
        FilterPolicy { rule: Rule::PerLevel(kinds), skip_last_level: false }
    }

    /// Monkey-optimal allocation of an average of `bits_per_key` real
    /// filter bits (headers included, as `Stats` counts them) per key over
    /// the whole tree (Dayan et al., SIGMOD 2017): rates grow with level size,
    /// and each level gets the kind and parameters that minimise the summed
    /// rate within the budget, priced at real sizes (DESIGN.md, "Monkey").
    ///
    /// With [`FilterPolicy::with_skip_last_level`] the budget is per key of
    /// the *filtered* levels: the levels above the last share
    /// `bits_per_key × (their keys)` and the last level gets nothing, so
    /// skipping the last level saves its share of memory, as it does for a
    /// uniform policy, rather than moving it up.
    ///
    /// # Errors
    /// `InvalidArgument` unless `bits_per_key` is a finite number above 0
    /// and at most [`MAX_MONKEY_BITS_PER_KEY`].
    pub fn monkey(bits_per_key: f64) -> Result<Self> {
        if !(bits_per_key.is_finite() && bits_per_key > 0.0 && bits_per_key <= MAX_MONKEY_BITS_PER_KEY) {
            return Err(Error::InvalidArgument(format!(
                "monkey takes bits per key above 0 and at most {MAX_MONKEY_BITS_PER_KEY}, got {bits_per_key}"
            )));
        }
        Ok(FilterPolicy { rule: Rule::Monkey { bits_per_key }, skip_last_level: false })
    }

    /// Checks every parameter: each kind's (a Bloom kind's bits per key,
    /// [`FilterKind::validate`]) and Monkey's budget. [`FilterPolicy::uniform`]
    /// and [`FilterPolicy::per_level`] take kinds as given (their fields are
    /// public), so `Db::open` calls this and refuses a policy that fails it.
    ///
    /// # Errors
    /// `InvalidArgument` naming the first bad parameter.
    pub fn validate(&self) -> Result<()> {
        match &self.rule {
            Rule::PerLevel(kinds) => kinds.iter().try_for_each(FilterKind::validate),
            Rule::Monkey { bits_per_key } => FilterPolicy::monkey(*bits_per_key).map(|_| ()),
        }
    }

    /// No filter on the last level ("optimise filters for hits"): for
    /// workloads whose lookups mostly find their key, the last level's filter
    /// (the largest) rarely saves a read.
    #[must_use]
    pub fn with_skip_last_level(mut self, skip: bool) -> Self {
        self.skip_last_level = skip;
        self
    }

    /// Whether the policy is a memory budget (Monkey), whose levels' blocked
    /// Bloom filters are sized to spend it (a ledger of the bits spent so
    /// far) rather than to at least their bits per key each, and whose bits
    /// move a little with every plan.
    #[must_use]
    pub fn is_budgeted(&self) -> bool {
        matches!(self.rule, Rule::Monkey { .. })
    }

    /// The filter for a table built outside the database to be loaded into
    /// it (`TableWriter`): such a table lands on the last level, so a per-level
    /// policy gives its last entry. A Monkey budget has no fixed kind
    /// without a tree to plan for; Ribbon at the budget's bits per key
    /// (1 to 32) is what it gives the long-lived levels, a little more than
    /// the last level's share, so never a worse filter than planned.
    /// Skipping the last level gives no filter.
    pub(crate) fn last_level_kind(&self) -> FilterKind {
        if self.skip_last_level {
            return FilterKind::None;
        }
        match &self.rule {
            Rule::PerLevel(kinds) => kinds.last().copied().unwrap_or(FilterKind::None),
            Rule::Monkey { bits_per_key } => {
                FilterKind::Ribbon { bits_per_key: bits_per_key.clamp(1.0, 32.0) }
            }
        }
    }

    internal_fn! {
        /// The filter for tables written to `level` of a tree shaped `shape`
        /// (levels beyond the shape plan as if the shape reached them).
        #[must_use]
        fn for_level(&self, level: usize, shape: &TreeShape) -> LevelFilter {
            let mut levels = shape.level_models().to_vec();
            if levels.len() <= level {
                let last =
                    levels.last().copied().unwrap_or(LevelModel { run_keys: 1.0, runs: 1.0, table_keys: 1.0 });
                levels.resize(level + 1, last);
            }
            let plan = self.plan(&shape.with_levels(levels));
            plan.get(level).copied().unwrap_or(LevelFilter::NONE)
        }
    }

    internal_fn! {
        /// The filter of every level of `shape`.
        #[must_use]
        fn plan(&self, shape: &TreeShape) -> Vec<LevelFilter> {
            let levels = shape.level_models();
            let skipped = if self.skip_last_level && levels.len() > 1 { Some(levels.len() - 1) } else { None };
            let mut plan: Vec<LevelFilter> = match &self.rule {
                Rule::PerLevel(kinds) => levels
                    .iter()
                    .enumerate()
                    .map(|(i, l)| {
                        let kind = kinds.get(i).or(kinds.last()).copied().unwrap_or(FilterKind::None);
                        LevelFilter::for_kind(kind, l.table_keys)
                    })
                    .collect(),
                Rule::Monkey { bits_per_key } => {
                    let filtered = &levels[..skipped.unwrap_or(levels.len())];
                    // The levels count filter entries; the budget is per key.
                    let per_entry = bits_per_key / shape.entries_per_key();
                    // A memory budget caps the bits, whatever the key count.
                    #[expect(clippy::cast_precision_loss, reason = "a budget in bits, to plan with")]
                    let cap = shape.filter_memory_bytes().map_or(f64::INFINITY, |b| b as f64 * 8.0);
                    let all = (per_entry * filtered.iter().map(LevelModel::keys).sum::<f64>()).min(cap);
                    if shape.is_settling() && filtered.len() > 1 {
                        let budget = per_entry * filtered.iter().skip(1).map(LevelModel::keys).sum::<f64>();
                        monkey_plan_settling(filtered, budget.min(cap))
                    } else if shape.is_settling() {
                        monkey_plan_flushes_only(filtered, all)
                    } else {
                        monkey_plan(filtered, all)
                    }
                }
            };
            plan.resize(levels.len(), LevelFilter::NONE);
            if let Some(last) = skipped.and_then(|i| plan.get_mut(i)) {
                *last = LevelFilter::NONE;
            }
            plan
        }
    }
}

/// The largest average budget [`FilterPolicy::monkey`] takes, in bits per
/// key: as for a single filter, more is no use and a typo must not pass.
pub const MAX_MONKEY_BITS_PER_KEY: f64 = 64.0;

#[cfg(test)]
mod tests;
