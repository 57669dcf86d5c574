//! Monkey in a real tree: the filter blocks of all tables, as written,
//! spend the policy's bits per key, every table's filter takes the bytes
//! the policy priced it at, and deeper levels get looser filters.
//!
//! The budget counts what `Stats` counts: every table's filter block,
//! headers and trailer included, over every entry. The plan budgets for a
//! steady-state tree, with level 0 holding `l0_compaction_trigger / 2`
//! flushes and level 1 at its target. This tree ends with 2,000 keys in L0
//! (planned: 3,000) and 5,200 in L1 (planned: 6,600); those missing keys
//! would have carried the plan's strongest, dearest-per-key filters, and
//! the last level's tables were written as it grew, under plans a little
//! different from the final one. The result is 10.12 bits/key (it was 9.94
//! when this was written; the plan has changed since); the test allows 2%
//! either way.

mod common;

use siftdb::fs::StdFs;
use siftdb::policy::{FilterPolicy, table_filter_bytes};
use siftdb::table::Table;
use siftdb::{Db, FilterKind, Options, PrefixExtractor, Stats, WriteBatch};

const KEYS: u64 = 200_000;

/// Entries of ~60 bytes on disk: a flush every 1,500 keys, tables of
/// ~1,700, and level targets of 4 tables × 5^(i−1) put the 200k keys in
/// L0–L3, the last level holding about T × the one above. Flushes and
/// compactions run at fixed points of the load (no background compaction),
/// so the tree, and the figures, are the same on every run. ~2 s.
fn opts(policy: FilterPolicy) -> Options {
    Options {
        memtable_bytes: 64 << 20,
        hash_salt: Some(5),
        fs: common::no_sync_fs(),
        filter_policy: Some(policy),
        block_bytes: 1024,
        l0_compaction_trigger: 4,
        base_level_bytes: 384 << 10,
        level_size_ratio: 5,
        table_target_bytes: 96 << 10,
        max_levels: 4,
        auto_compaction: false,
        ..Options::default()
    }
}

fn key(i: u64) -> [u8; 16] {
    let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 29;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 32;
    let mut out = [0u8; 16];
    for (j, b) in out.iter_mut().enumerate() {
        *b = b"0123456789abcdef"[((x >> (4 * (j % 16))) & 0xf) as usize];
    }
    out
}

fn load(policy: FilterPolicy) -> (Db, tempfile::TempDir) {
    load_with(policy, None)
}

fn load_with(policy: FilterPolicy, prefixes: Option<PrefixExtractor>) -> (Db, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options { prefix_extractor: prefixes, ..opts(policy) }).unwrap();
    for chunk in (0..KEYS).collect::<Vec<_>>().chunks(1500) {
        let mut batch = WriteBatch::new();
        for &i in chunk {
            batch.put(key(i), format!("value-{i:08}-{:016x}", i * 7919).as_bytes());
        }
        db.write(batch).unwrap();
        db.flush().unwrap();
        db.compact().unwrap();
    }
    (db, dir)
}

#[expect(clippy::cast_precision_loss, reason = "ratios for assertions")]
fn bits_per_key(stats: &Stats) -> f64 {
    let bytes: u64 = stats.levels.iter().map(|l| l.filter_bytes).sum();
    let keys: u64 = stats.levels.iter().map(|l| l.keys).sum();
    bytes as f64 * 8.0 / keys as f64
}

#[test]
fn monkey_spends_its_budget_and_loosens_with_depth() {
    let (db, _dir) = load(FilterPolicy::monkey(10.0).unwrap());
    let stats = db.stats();
    let levels: Vec<_> = stats.levels.iter().filter(|l| l.tables > 0).collect();
    let report: Vec<String> = levels
        .iter()
        .map(|l| {
            format!(
                "L{} {} keys {:?} {:.2} b/k (plan {:.2}) built {:.4}% target {:.4}%",
                l.level,
                l.keys,
                l.filter_kinds.iter().map(ToString::to_string).collect::<Vec<_>>(),
                l.filter_bits_per_key(),
                l.target_bits_per_key,
                l.built_fpr.unwrap_or(1.0) * 100.0,
                l.target_fpr * 100.0
            )
        })
        .collect();
    assert!(levels.iter().filter(|l| l.level >= 1).count() >= 3, "{report:#?}");
    let bits = bits_per_key(&stats);
    println!("monkey:10 spent {bits:.3} bits/key\n{report:#?}");
    assert!((bits - 10.0).abs() <= 0.2, "{bits} bits/key\n{report:#?}");
    // Every table's filter block is what the policy priced it at: exactly
    // for a fixed-size kind; for blocked Bloom, within one 64-byte block of
    // the smallest filter at its bits per key (the budget's ledger moves a
    // table a block either way to keep its level on plan); for Ribbon, 8
    // bytes more for each key it bumped (at most one in 500, or 64). The
    // keys are distinct, so entries are the filter's keys.
    for t in db.tables() {
        let priced = table_filter_bytes(t.filter, t.entries);
        let (under, over) = match t.filter {
            FilterKind::BlockedBloom { .. } => (64, 64),
            FilterKind::Ribbon { .. } => (0, 8 * (t.entries / 500).max(64)),
            _ => (0, 0),
        };
        assert!(
            priced - under <= t.filter_bytes && t.filter_bytes <= priced + over,
            "L{} table {}: {} vs {priced}",
            t.level,
            t.file_number,
            t.filter_bytes
        );
    }
    // Below level 0 (flushes, planned per run), deeper levels carry looser
    // filters, and the deepest is the loosest.
    let built: Vec<f64> = levels.iter().filter(|l| l.level >= 1).map(|l| l.built_fpr.unwrap()).collect();
    assert!(built.windows(2).all(|w| w[0] <= w[1] * 1.0001), "{report:#?}");
    assert!(built[0] < *built.last().unwrap(), "{report:#?}");
    // Within the same real memory, a uniform blocked Bloom filter would
    // reach 0.96% or worse at every level.
    let uniform = siftdb::filter::BlockedBloom::fpr_for_bits_per_key(bits) * built.len() as f64;
    let monkey: f64 = built.iter().sum();
    assert!(monkey < uniform * 0.75, "monkey sum {monkey} vs uniform {uniform}\n{report:#?}");
}

/// Under a prefix extractor every filter also holds the table's distinct
/// prefixes, and the budget is still per key: the filters get fewer bits
/// per entry, not more memory. With 15 of the keys' 16 characters as the
/// prefix nearly every key brings its own prefix, and planned per entry the
/// filters took about twice the budget (20.0 bits/key); with 4 (65,536
/// prefixes over 200,000 keys) a third more.
#[test]
fn with_prefixes_monkey_still_spends_its_budget_per_key() {
    for (len, min_ratio) in [(15, 1.9), (4, 1.25)] {
        let (db, _dir) = load_with(FilterPolicy::monkey(10.0).unwrap(), Some(PrefixExtractor::fixed(len)));
        let stats = db.stats();
        let bits = bits_per_key(&stats);
        let tables: Vec<Table> = db.tables().iter().map(|t| Table::open(&StdFs, &t.path).unwrap()).collect();
        let entries: u64 = tables.iter().map(Table::filter_keys).sum();
        let keys: u64 = tables.iter().map(Table::distinct_keys).sum();
        #[expect(clippy::cast_precision_loss, reason = "a ratio")]
        let ratio = entries as f64 / keys as f64;
        println!("fixed({len}): {ratio:.3} filter entries a key, {bits:.3} bits/key");
        assert!(ratio >= min_ratio, "fixed({len}): {ratio} entries a key");
        assert!((bits - 10.0).abs() <= 0.25, "fixed({len}): {bits} bits/key");
        // What the stats say the plan spends is per key too.
        let planned: f64 =
            stats.levels.iter().skip(1).map(|l| l.target_bits_per_key * l.keys as f64).sum::<f64>()
                / stats.levels.iter().skip(1).map(|l| l.keys as f64).sum::<f64>();
        assert!((planned - bits).abs() <= 0.5, "fixed({len}): planned {planned} against {bits} bits/key");
        // Every key still passes its table's filter.
        for i in (0..KEYS).step_by(97) {
            assert!(db.get(key(i)).unwrap().is_some(), "key {i}");
        }
    }
}
