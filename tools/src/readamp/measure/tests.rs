//! Tests of `measure`.

use super::*;

fn config(keys: u64, value_bytes: usize) -> Config {
    Config {
        keys,
        lookups: 1,
        value_bytes,
        seed: 1,
        threads: 1,
        hit_ratio: 0.5,
        show_progress: false,
        filter_memory_bytes: None,
    }
}

#[test]
fn sizes_leave_data_for_a_fourth_level_at_the_documented_minimum() {
    for value_bytes in [0, 10, 100, 1000] {
        for keys in [MIN_KEYS_FOR_LEVELS, 100_000, 1_000_000] {
            let c = config(keys, value_bytes);
            let o = options_for(&c, &FilterPolicy::default());
            let data = keys * (32 + value_bytes as u64);
            // L1..L3 together hold less than the data, so L4 gets some.
            let l1_to_l3 = (1..=3).map(|l| o.level_target_bytes(l)).sum::<u64>();
            assert!(l1_to_l3 < data * 9 / 10, "{keys} keys of {value_bytes} B: {l1_to_l3} vs {data}");
            // A table is half the L1 target, so L1 can keep one.
            assert!(o.table_target_bytes * 2 <= o.base_level_bytes, "{o:?}");
            // Enough flushes to feed compaction.
            assert!(o.memtable_bytes as u64 * 8 <= data, "{o:?}");
        }
    }
    // The default 10^6 keys of 100 B keep the sizes they always had.
    let o = options_for(&config(1_000_000, 100), &FilterPolicy::default());
    assert_eq!((o.memtable_bytes, o.base_level_bytes, o.table_target_bytes), (4_125_000, 440_000, 220_000));
}

#[test]
fn tables_grow_with_their_level_up_to_the_cap() {
    for (keys, value_bytes) in [(20_000, 100), (1_000_000, 100), (10_000_000, 100), (100_000_000, 1000)] {
        let o = options_for(&config(keys, value_bytes), &FilterPolicy::default());
        assert!(o.table_target_bytes_for(4) <= MAX_TABLE_BYTES, "{keys}: {o:?}");
        assert!(o.table_size_multiplier >= 1);
    }
    // Level 3 of the smallest documented tree holds tables of thousands of keys.
    let o = options_for(&config(MIN_KEYS_FOR_LEVELS, 100), &FilterPolicy::default());
    assert_eq!(o.table_size_multiplier, 10);
    assert!(o.table_target_bytes_for(3) / (32 + 100) >= 1000, "{o:?}");
}

/// Whether the larger trees run too (`SIFTDB_LONG_TESTS=1`): each costs
/// tens of seconds in a debug build, and the smallest tree already reaches
/// the four levels these tests need; the larger ones guard regressions seen
/// only there.
fn long_mode() -> bool {
    std::env::var_os("SIFTDB_LONG_TESTS").is_some()
}

/// A database of the bench's shape holding `keys` keys, loaded and
/// settled the bench's way.
fn settled(dir: &Path, keys: u64, policy: &str) -> Db {
    let c = config(keys, 100);
    let opts = options_for(&c, &policy.parse().unwrap());
    let db = Db::open(dir, opts.clone()).unwrap();
    load(&c, (policy, policy), &db, &opts, &|i| workload::key(c.seed, i)).unwrap();
    db
}

/// Loads `keys` the bench's way into a database of the bench's shape,
/// then `compact()`s; each level's filter kinds, level 0 first.
fn loaded(keys: u64, policy: &str) -> Vec<Vec<FilterKind>> {
    let dir = tempfile::tempdir().unwrap();
    let db = settled(dir.path(), keys, policy);
    let mut levels = vec![Vec::new(); 7];
    for t in db.tables() {
        levels[t.level].push(t.filter);
    }
    levels.truncate(levels.iter().rposition(|l| !l.is_empty()).unwrap() + 1);
    levels
}

/// Filter bits per key over the whole tree, and the summed theoretical
/// rate an absent key meets (every level-0 table, one table per level
/// below), after loading `keys` the bench's way and `compact()`.
#[expect(clippy::cast_precision_loss, reason = "ratios for assertions")]
fn spend_and_sum(keys: u64, policy: &str) -> (f64, f64, Stats) {
    let dir = tempfile::tempdir().unwrap();
    let db = settled(dir.path(), keys, policy);
    let stats = db.stats();
    let bits: u64 = stats.levels.iter().map(|l| l.filter_bytes * 8).sum();
    let held: u64 = stats.levels.iter().map(|l| l.keys).sum();
    let sum: f64 = stats
        .levels
        .iter()
        .filter(|l| l.tables > 0)
        .map(|l| l.built_fpr.unwrap_or(1.0) * if l.level == 0 { l.tables as f64 } else { 1.0 })
        .sum();
    (bits as f64 / held as f64, sum, stats)
}

/// Issue 28: on the bench's trees, after `compact()`, monkey:10 spends
/// 9.7-10.3 bits/key, filters every level holding 5% of the keys, carries
/// its plan on every table, and no uniform policy spending no more bytes
/// has a lower summed rate. (At 100,000 keys a level-4 table once kept
/// blocked Bloom at 9.43 bits/key, 1.2%, under a plan of xor8: tables
/// written by a refresh were never refreshed again, and monkey:10 spent
/// 9.63 bits/key.) That regression shows in monkey:10's own spend and
/// plan, checked at 100,000 keys on every run; the five uniform trees beside
/// it, at that size, run in long mode.
#[test]
fn monkey_is_on_budget_and_never_loses_to_uniform_on_bench_trees() {
    for keys in [20_000, 100_000] {
        let (bits, sum, stats) = spend_and_sum(keys, "monkey:10");
        assert!((9.7..=10.3).contains(&bits), "monkey:10 at {keys}: {bits:.2} bits/key\n{stats}");
        let held: u64 = stats.levels.iter().map(|l| l.keys).sum();
        assert!(stats.levels.iter().all(|l| l.tables_over_target == 0), "at {keys}:\n{stats}");
        for l in stats.levels.iter().filter(|l| l.keys * 20 >= held) {
            assert!(
                !l.filter_kinds.contains(&FilterKind::None),
                "monkey:10 at {keys}: L{} bare\n{stats}",
                l.level
            );
        }
        if keys > 20_000 && !long_mode() {
            continue;
        }
        for uniform in ["xor8", "fuse8", "blocked-bloom:10", "bloom:10", "blocked-bloom:8"] {
            let (u_bits, u_sum, _) = spend_and_sum(keys, uniform);
            if u_bits <= bits {
                assert!(
                    sum <= u_sum * 1.03,
                    "at {keys}: monkey:10 {bits:.2} b/k sums {sum:.4}; {uniform} {u_bits:.2} b/k sums {u_sum:.4}"
                );
            }
        }
    }
}

/// Issue 27's finding: `fuse8+skip-last` left most of L3 unfiltered, and
/// `monkey:10+skip-last` L2 to L4. After `compact()` only the last level
/// may be unfiltered, at 20,000 keys, and 200,000 in long mode.
#[test]
fn skip_last_leaves_only_the_last_level_unfiltered_on_bench_trees() {
    let sizes: &[u64] = if long_mode() { &[20_000, 200_000] } else { &[20_000] };
    for &keys in sizes {
        for policy in ["fuse8+skip-last", "monkey:10+skip-last"] {
            let levels = loaded(keys, policy);
            let (last, above) = levels.split_last().unwrap();
            assert!(levels.len() >= 4, "{policy} at {keys}: {levels:?}");
            assert!(last.iter().all(|k| *k == FilterKind::None), "{policy} at {keys}: last level {last:?}");
            for (i, l) in above.iter().enumerate() {
                assert!(!l.contains(&FilterKind::None), "{policy} at {keys}: L{i} unfiltered: {levels:?}");
            }
        }
    }
}
