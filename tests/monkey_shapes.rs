//! Monkey in real trees of many shapes (issue 28's "Done when"): after
//! `compact()`, `monkey:B` spends within 3% of B bits per key over the whole
//! tree (or is short only where not one table could take a stronger filter
//! with what is left), filters every level holding 5% of the keys, and no
//! uniform policy spending no more bytes on the same tables has a lower
//! summed false-positive rate.
//!
//! The uniform plans are priced on the Monkey tree's own tables
//! (`table_filter_bytes` is exactly what a table's filter block takes, as
//! `monkey_budget.rs` checks), so the comparison is the one Monkey makes:
//! the same tables, another choice of filter. The summed rate is what an
//! absent key meets: every level-0 table and one table per deeper level,
//! each level at its tables' key-weighted rate (`LevelStats::built_fpr`).
//!
//! Shapes are drawn so the biggest levels hold tables of at least 1,000
//! keys (the domain; below that a filter block's fixed bytes alone
//! can exceed a small budget), at budgets of 2 to 20 bits/key. At 2 bits/key
//! one 64-byte block is a quarter of a 1,000-key table's filter, so a level
//! of like-sized tables is kept on its price by a ledger that sizes each
//! Bloom filter a block either way (`policy::SizeLedger`); without it, 150
//! shapes from 2 bits/key found 2.95 spending 2.86 and 2.01 spending 2.09.
//! Rates are each table's real ones (`TableInfo::filter_fpr`), and a
//! uniform Bloom plan is priced exactly, table by table, with every bit of
//! its last blocks counted: the best it could do. Flushes and compactions
//! run at fixed points of the load, so a failing case replays exactly.

mod common;

use proptest::prelude::*;
use siftdb::filter::{BlockedBloom, Ribbon};
use siftdb::policy::{FilterPolicy, table_filter_bytes};
use siftdb::{Db, FilterKind, Options, TableInfo, WriteBatch};

/// Every kind a table could be upgraded to: each fixed-rate kind, and a
/// Bloom and a Ribbon filter past any plan's bits per key.
fn stronger() -> impl Iterator<Item = FilterKind> {
    fixed_rate_statics()
        .chain([FilterKind::BlockedBloom { bits_per_key: 48.0 }, FilterKind::Ribbon { bits_per_key: 32.0 }])
}

/// The static kinds at a fixed rate (xor, binary fuse); blocked Bloom and
/// Ribbon, sized by bits per key, are compared at the bits that fit.
fn fixed_rate_statics() -> impl Iterator<Item = FilterKind> {
    FilterKind::ALL.iter().copied().filter(|k| k.is_static() && k.bits_per_key().is_none())
}

/// A tree shape, in tables of level 1 and keys of ~48 bytes on disk.
#[derive(Debug, Clone, Copy)]
struct Shape {
    keys: u64,
    flush_keys: u64,
    table_kib: u64,
    multiplier: u64,
    l1_tables: u64,
    ratio: u64,
    trigger: usize,
}

fn opts(s: Shape, bits: f64) -> Options {
    let table = s.table_kib << 10;
    Options {
        memtable_bytes: 64 << 20,
        hash_salt: Some(11),
        fs: common::no_sync_fs(),
        filter_policy: Some(FilterPolicy::monkey(bits).unwrap()),
        l0_compaction_trigger: s.trigger,
        base_level_bytes: table * s.l1_tables,
        level_size_ratio: s.ratio,
        table_target_bytes: table,
        table_size_multiplier: s.multiplier,
        auto_compaction: false,
        ..Options::default()
    }
}

fn key(i: u64) -> [u8; 16] {
    let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 31;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 29;
    x.to_be_bytes().repeat(2).try_into().unwrap()
}

fn load(s: Shape, bits: f64) -> (Db, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts(s, bits)).unwrap();
    for chunk in (0..s.keys).collect::<Vec<_>>().chunks(usize::try_from(s.flush_keys).unwrap()) {
        let mut batch = WriteBatch::new();
        for &i in chunk {
            batch.put(key(i), i.to_le_bytes().repeat(2));
        }
        db.write(batch).unwrap();
        db.flush().unwrap();
        db.compact().unwrap();
    }
    (db, dir)
}

/// Probes an absent key makes at each level: one per level-0 table, one
/// per deeper level holding tables.
fn probes(tables: &[TableInfo], level: usize) -> f64 {
    let n = tables.iter().filter(|t| t.level == level).count();
    if level == 0 { n as f64 } else { f64::from(u8::from(n > 0)) }
}

/// Σ probes × rate when every table carries `rate_of(table)`, each level's
/// rate weighted by its tables' entries.
#[expect(clippy::cast_precision_loss, reason = "rates")]
fn summed_fpr(tables: &[TableInfo], rate_of: &dyn Fn(&TableInfo) -> f64) -> f64 {
    let deepest = tables.iter().map(|t| t.level).max().unwrap_or(0);
    (0..=deepest)
        .map(|level| {
            let at: Vec<&TableInfo> = tables.iter().filter(|t| t.level == level).collect();
            let keys: u64 = at.iter().map(|t| t.entries).sum();
            if keys == 0 {
                return 0.0;
            }
            let weighted: f64 = at.iter().map(|t| rate_of(t) * t.entries as f64).sum();
            probes(tables, level) * weighted / keys as f64
        })
        .sum()
}

fn uniform_bytes(tables: &[TableInfo], kind: FilterKind) -> u64 {
    tables.iter().map(|t| table_filter_bytes(kind, t.entries)).sum()
}

/// The bits/key (to a hundredth) of a sized kind (`kind(b)`) whose filters
/// on `tables` take at most `bytes`, priced exactly ([`table_filter_bytes`]:
/// each table's last block whole), if even 1 bit/key fits.
fn bits_within(tables: &[TableInfo], bytes: u64, kind: fn(f64) -> FilterKind) -> Option<f64> {
    let fits = |b: f64| uniform_bytes(tables, kind(b)) <= bytes;
    if !fits(1.0) {
        return None;
    }
    let (mut lo, mut hi) = (1.0, 64.0);
    for _ in 0..40 {
        let mid = f64::midpoint(lo, hi);
        if fits(mid) { lo = mid } else { hi = mid }
    }
    Some((lo * 100.0).floor() / 100.0)
}

/// The rate of a blocked-Bloom filter at `b` bits/key over `entries` keys,
/// from its real size: every bit of its last block counts, at the best
/// number of probes for them (a lower bound for the uniform plan).
#[expect(clippy::cast_precision_loss, reason = "rates")]
fn bloom_rate(b: f64, entries: u64) -> f64 {
    let blocks = BlockedBloom::blocks_for(usize::try_from(entries).unwrap(), b);
    BlockedBloom::fpr_for_bits_per_key((blocks * 512) as f64 / entries.max(1) as f64)
}

fn report(tables: &[TableInfo]) -> String {
    let deepest = tables.iter().map(|t| t.level).max().unwrap_or(0);
    (0..=deepest)
        .map(|level| {
            let at: Vec<&TableInfo> = tables.iter().filter(|t| t.level == level).collect();
            let keys: u64 = at.iter().map(|t| t.entries).sum();
            let bytes: u64 = at.iter().map(|t| t.filter_bytes).sum();
            let mut kinds: Vec<String> = at.iter().map(|t| t.filter.to_string()).collect();
            kinds.dedup();
            #[expect(clippy::cast_precision_loss, reason = "a report")]
            let bpk = if keys == 0 { 0.0 } else { bytes as f64 * 8.0 / keys as f64 };
            format!("L{level}: {} tables, {keys} keys, {bpk:.2} b/k, {kinds:?}", at.len())
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[expect(clippy::cast_precision_loss, reason = "ratios for assertions")]
fn check(s: Shape, bits: f64) -> Result<(), TestCaseError> {
    let (db, _dir) = load(s, bits);
    let tables = db.tables();
    let keys: u64 = tables.iter().map(|t| t.entries).sum();
    prop_assert_eq!(keys, s.keys);
    let spent_bytes: u64 = tables.iter().map(|t| t.filter_bytes).sum();
    let spent = spent_bytes as f64 * 8.0 / keys as f64;
    let shape = report(&tables);
    prop_assert!(spent <= bits * 1.03, "monkey:{bits} spent {spent:.3} b/k\n{shape}");
    // Short of the budget only when not one table can take a stronger
    // filter with what is left, in a step of at most 2% of the budget (a
    // level of two big tables at fuse8 cannot give one of them fuse16 for
    // 3% of the budget, and nothing else would lower its rate; a step much
    // bigger than the budget's precision is not taken, since the engine
    // builds a level's share of stronger tables only to within half a table).
    let budget_bytes = bits * keys as f64 / 8.0;
    let slack_bytes = budget_bytes - spent_bytes as f64;
    // Each table priced at its level's mean size, as the plan sees it (a
    // compaction's short last table is no step the plan can take).
    let mean_size = |level: usize| {
        let at: Vec<&TableInfo> = tables.iter().filter(|t| t.level == level).collect();
        at.iter().map(|t| t.entries).sum::<u64>() / at.len() as u64
    };
    let one_table_fits = tables.iter().any(|t| {
        let n = mean_size(t.level);
        let built = table_filter_bytes(t.filter, n) as f64;
        stronger().any(|k| {
            let step = table_filter_bytes(k, n) as f64 - built;
            k.theoretical_fpr() < t.filter.theoretical_fpr()
                && step <= slack_bytes
                && step <= 0.02 * budget_bytes
        })
    });
    if one_table_fits {
        prop_assert!(spent >= bits * 0.97, "monkey:{bits} spent {spent:.3} b/k\n{shape}");
    }

    let deepest = tables.iter().map(|t| t.level).max().unwrap_or(0);
    for level in 0..=deepest {
        let at = tables.iter().filter(|t| t.level == level);
        let level_keys: u64 = at.clone().map(|t| t.entries).sum();
        if level_keys * 20 >= keys {
            prop_assert!(at.clone().all(|t| t.filter != FilterKind::None), "L{level} unfiltered\n{shape}");
        }
    }

    let monkey = summed_fpr(&tables, &|t: &TableInfo| t.filter_fpr);
    let mut uniforms: Vec<(String, f64)> = fixed_rate_statics()
        .filter(|k| uniform_bytes(&tables, *k) <= spent_bytes)
        .map(|k| (k.to_string(), summed_fpr(&tables, &|_| k.theoretical_fpr())))
        .collect();
    if let Some(b) = bits_within(&tables, spent_bytes, |b| FilterKind::BlockedBloom { bits_per_key: b }) {
        uniforms.push((format!("blocked-bloom:{b}"), summed_fpr(&tables, &|t| bloom_rate(b, t.entries))));
    }
    let ribbon = |b| FilterKind::Ribbon { bits_per_key: b };
    if let Some(b) = bits_within(&tables, spent_bytes, ribbon) {
        // Each table's rate at its own size: its column mix over whole
        // blocks, the last holding one start (what a uniform plan builds).
        let rate = |t: &TableInfo| Ribbon::expected_fpr(usize::try_from(t.entries).unwrap(), b).unwrap();
        uniforms.push((format!("ribbon:{b}"), summed_fpr(&tables, &rate)));
    }
    for (name, sum) in uniforms {
        prop_assert!(
            monkey <= sum * 1.03,
            "monkey:{bits} Σ {monkey:.4e} loses to {name} Σ {sum:.4e}\n{shape}"
        );
    }
    Ok(())
}

proptest! {
    // A fixed seed: the same twelve shapes on every run, so CI is
    // deterministic, and every shape a wider search found off the bar is
    // replayed first (`monkey_shapes.proptest-regressions`).
    #![proptest_config(ProptestConfig {
        cases: 12,
        rng_seed: proptest::test_runner::RngSeed::Fixed(28),
        ..ProptestConfig::default()
    })]

    /// Issue 28: on budget and never worse than uniform, across shapes.
    #[test]
    fn monkey_is_on_budget_and_never_loses_to_uniform_on_any_shape(
        keys in 40_000u64..120_000,
        flush_keys in 1_000u64..4_000,
        table_kib in 48u64..128,
        multiplier in 1u64..4,
        l1_tables in 1u64..4,
        ratio in 4u64..10,
        trigger in 2usize..6,
        bits in 2.0f64..20.0,
    ) {
        check(Shape { keys, flush_keys, table_kib, multiplier, l1_tables, ratio, trigger }, bits)?;
    }
}

/// The bench's budget on a tree like the bench's, as a fixed case.
#[test]
fn monkey_10_on_a_bench_like_tree() {
    let s = Shape {
        keys: 100_000,
        flush_keys: 3_000,
        table_kib: 64,
        multiplier: 2,
        l1_tables: 2,
        ratio: 8,
        trigger: 4,
    };
    check(s, 10.0).unwrap();
}

/// Found by the property test. Level 0 kept 423 keys planned as 1,130 (it
/// was charged at its average residency while `compact()` left it part
/// full), and monkey:4.5 spent 4.30 bits/key.
#[test]
fn level_0_residency_does_not_leave_the_budget_short() {
    let s = Shape {
        keys: 59_183,
        flush_keys: 1_130,
        table_kib: 69,
        multiplier: 1,
        l1_tables: 2,
        ratio: 5,
        trigger: 2,
    };
    check(s, 4.505_683_088_490_349).unwrap();
}

/// Found by the property test. Level 3 held 35 tables at xor8 and levels 2
/// and 4 xor16; xor16 on all of level 3 cost more than the budget left, so
/// monkey:13.7 spent 13.19 bits/key until some of level 3's tables could
/// take xor16 (a mixed level). Since Monkey plans over Ribbon, whose bits
/// per key are continuous, the budget falls between no two kinds: it is
/// spent to within 2% (13.53 of 13.68 measured: the plan prices each
/// table's rounding to whole blocks at its average) with no mixing needed.
#[test]
#[expect(clippy::cast_precision_loss, reason = "a ratio")]
fn a_budget_between_two_fixed_kinds_is_spent() {
    let s = Shape {
        keys: 96_715,
        flush_keys: 1_898,
        table_kib: 81,
        multiplier: 1,
        l1_tables: 1,
        ratio: 6,
        trigger: 2,
    };
    let bits = 13.682_233_120_208_764;
    check(s, bits).unwrap();
    let (db, _dir) = load(s, bits);
    let tables = db.tables();
    let spent = tables.iter().map(|t| t.filter_bytes).sum::<u64>() as f64 * 8.0 / s.keys as f64;
    assert!((spent / bits - 1.0).abs() < 0.02, "spent {spent}\n{}", report(&tables));
}

/// Found by a wider search (150 shapes from 2 bits/key): level 3's 43
/// tables of ~1,600 keys at ~1.1 bits/key each rounded up to 4 blocks
/// where the plan priced 3.6, and monkey:2.01 spent 2.09 bits/key (4% over).
#[test]
fn like_sized_bloom_tables_spend_their_price_at_2_bits_per_key() {
    let s = Shape {
        keys: 108_735,
        flush_keys: 2_455,
        table_kib: 66,
        multiplier: 1,
        l1_tables: 3,
        ratio: 8,
        trigger: 5,
    };
    check(s, 2.013_014).unwrap();
}

/// Found by the same search: monkey:2.95 spent 2.86 bits/key (3% short).
#[test]
fn like_sized_bloom_tables_spend_their_price_at_3_bits_per_key() {
    let s = Shape {
        keys: 89_974,
        flush_keys: 2_491,
        table_kib: 84,
        multiplier: 1,
        l1_tables: 1,
        ratio: 8,
        trigger: 5,
    };
    check(s, 2.949_698).unwrap();
}

/// Found by the property test: at 2 bits/key Monkey left level 3, 48% of
/// the keys, without a filter (its optimum: bare, the summed rate is 1.37
/// against ~1.6 with every level filtered). From 2 bits/key on, every level
/// holding 5% of the keys gets one.
#[test]
fn from_2_bits_per_key_no_big_level_is_bare() {
    let s = Shape {
        keys: 42_632,
        flush_keys: 1_061,
        table_kib: 56,
        multiplier: 1,
        l1_tables: 1,
        ratio: 4,
        trigger: 2,
    };
    for bits in [2.0, 2.4] {
        let (db, _dir) = load(s, bits);
        let tables = db.tables();
        let shape = report(&tables);
        let keys: u64 = tables.iter().map(|t| t.entries).sum();
        for level in 1..=4 {
            let at: Vec<&TableInfo> = tables.iter().filter(|t| t.level == level).collect();
            if at.iter().map(|t| t.entries).sum::<u64>() * 20 >= keys {
                assert!(
                    at.iter().all(|t| t.filter != FilterKind::None),
                    "monkey:{bits}: L{level} bare\n{shape}"
                );
            }
        }
    }
}
