//! Which filter each level's tables carry.
//!
//! A [`FilterPolicy`] is a small value: a per-level list of filter kinds in
//! which the last entry repeats for deeper levels, or a memory budget that
//! Monkey turns into such a list for the tree's shape. Flushes write level
//! 0; compactions write the level they compact into. The engine plans
//! against the tree's settled shape (see DESIGN.md, "Monkey"), and
//! [`table_filter_bytes`] prices every filter at the bytes a table really
//! stores for it. `Stats` shows each level's plan and what its tables carry.
//!
//! ```
//! use siftdb::{FilterKind, FilterPolicy};
//! // Blocked Bloom on level 0 (flushed often, built fast), fuse8 below.
//! let p: FilterPolicy = "per-level:blocked-bloom:10,fuse8".parse()?;
//! assert_eq!(
//!     p,
//!     FilterPolicy::per_level(vec![FilterKind::BlockedBloom { bits_per_key: 10.0 }, FilterKind::BinaryFuse8])
//! );
//! // Or a budget: 10 bits per key over the tree, placed where it saves most.
//! let m = FilterPolicy::monkey(10.0)?;
//! assert_eq!(m.to_string(), "monkey:10");
//! # Ok::<(), siftdb::Error>(())
//! ```
//!
//! # A memory budget
//!
//! `monkey:B` spends B bits per key, so its filters grow with the data.
//! `Options::filter_memory_bytes` caps them: the plan spends B bits per key
//! or the budget, whichever is less, over the keys the tree holds once
//! settled (levels 1 and deeper: the settling shape of `crate::planner`), and
//! Monkey places the bits it can afford as ever: the deepest levels
//! give up bits first, down to no filter. Right after `Db::compact` the
//! filters take the budget to within 3% (`tests/filter_budget.rs`).
//! Between compactions it is passed by what the plan does not charge:
//! level 0's flushes carry filters on top (at most `l0_compaction_trigger`
//! flushes' worth), and tables written under an earlier plan (for a
//! smaller tree, at more bits per key) keep theirs until compaction
//! refreshes them. Filling to N keys under 6 bits/key of that, with a
//! flush every 10,000 keys, `tests/filter_budget.rs` holds levels 1 and
//! deeper within 1.5% of the budget and level 0 to at most
//! `l0_compaction_trigger` flushes at up to 24 bits/key (19.77 measured),
//! so the filters pass the budget by at most 1.5% + 160,000 / N. Measured
//! (docs/measurements.md, 2026-12-06): 43.6% at 200,000 keys, 13.2% at
//! 10^6 and 2.4% at 10^7, levels 1 and deeper by at most 1.1%; level 0's
//! share falls as the tree grows against the memtable. Charging level 0's
//! filters to the plan of the levels below was tried and did not pay
//! (43.6% to 39.4% at 200,000 keys, unchanged at 10^6; the same entry).

mod bloom_ledger;
mod compression_policy;
mod cost;
mod filter_policy;
mod mix;
mod monkey;
mod plan;
mod writing;

pub use compression_policy::{COMPRESSION_FORMS, CompressionPolicy};
pub use cost::{
    TABLE_FILTER_OVERHEAD, cheapest_kind_for, filter_encoding_bytes, table_filter_bits_per_key,
    table_filter_bytes,
};
pub use filter_policy::{FilterPolicy, MAX_MONKEY_BITS_PER_KEY, POLICY_FORMS};
pub use monkey::{model_bits_per_key, model_fpr, monkey_rates};
pub(crate) use writing::Writing;

// The planning machinery: the CLI's what-if plans and the project's tests
// use it; an application sets a `FilterPolicy` and reads `Stats`.
internal_use! {
    bloom_ledger::BloomLedger,
    cost::expected_blocked_bloom_bits,
    mix::Mix,
    mix::MixLedger,
    monkey::LevelModel,
    monkey::monkey_plan,
    monkey::monkey_plan_flushes_only,
    monkey::monkey_plan_settling,
    plan::LevelFilter,
    plan::PLAN_DRIFT,
    plan::TreeShape,
}
