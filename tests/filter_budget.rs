//! A filter memory budget (`Options::filter_memory_bytes`, issue 65): after
//! `compact()` the tables' filters spend the budget to within 3%, a tight
//! budget strips the deepest level first and reads stay correct, the
//! budget is stored like the policy, and without one nothing changes;
//! `Stats` gives the filter bytes against it; and during a fill the
//! budget is passed by at most 1.5% (6% under background compaction) +
//! level 0's flushes (`the_budget_is_passed_during_a_fill_by_a_bounded_amount`
//! states the bound; `SIFTDB_BUDGET_FILL=10000000` runs both fills to 10^7
//! keys).

mod common;

use proptest::prelude::*;
use siftdb::policy::table_filter_bytes;
use siftdb::{CompressionPolicy, Db, Error, FilterKind, FilterPolicy, Options, Stats, WriteBatch};

const KEYS: u64 = 400_000;

/// The most the filters below level 0 may pass the budget during the fill
/// of `the_budget_is_passed_during_a_fill_by_a_bounded_amount`: 1.0% was
/// measured at 200,000 keys, 0.0% at 10^6, 1.1% at 10^7
/// (docs/measurements.md).
const FILL_OVER_BELOW_L0: f64 = 0.015;

/// As `FILL_OVER_BELOW_L0`, with the tree kept as the background thread
/// keeps it (`compact_due()` after every flush): past the background's
/// 5% slack (`BACKGROUND_BUDGET_SLACK`) by the table a flush adds before
/// the refresh that follows it. 4.8% was measured at 200,000 keys and 5.0%
/// at 10^6 (19.7% and 7.7% before background refreshes looked at bytes).
const DUE_OVER_BELOW_L0: f64 = 0.06;

/// The most filter bits per key a level-0 table takes in that fill: its
/// flushes are planned on top of the budget at the rate Monkey gives a
/// level every lookup probes run by run (19.77 measured at 200,000, 10^6
/// and 10^7 keys).
const L0_BITS_PER_KEY: f64 = 24.0;

/// Entries of ~40 bytes, uncompressed: a flush every 10,000 keys, tables
/// of ~2,400 keys and level targets of 384 KiB × 5^(i−1) with four levels
/// put 400k keys in levels 1–3, the last holding most of them. No
/// background work, so every run builds the same tree.
fn opts(budget: Option<u64>) -> Options {
    Options {
        memtable_bytes: 64 << 20,
        hash_salt: Some(65),
        fs: common::no_sync_fs(),
        filter_memory_bytes: budget,
        compression: CompressionPolicy::uniform(siftdb::table::Compression::None),
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

/// `keys` keys in flushes of `per_flush`, compacting every fourth flush
/// (the level-0 trigger), then `compact()`.
fn load(db: &Db, keys: u64, per_flush: u64) {
    for (n, chunk) in (0..keys).collect::<Vec<_>>().chunks(usize::try_from(per_flush).unwrap()).enumerate() {
        let mut batch = WriteBatch::new();
        for &i in chunk {
            batch.put(key(i), i.to_le_bytes());
        }
        db.write(batch).unwrap();
        db.flush().unwrap();
        if n % 4 == 3 {
            db.compact().unwrap();
        }
    }
    db.compact().unwrap();
}

fn filter_bytes(stats: &Stats) -> u64 {
    stats.levels.iter().map(|l| l.filter_bytes).sum()
}

fn report(stats: &Stats) -> Vec<String> {
    stats
        .levels
        .iter()
        .filter(|l| l.tables > 0)
        .map(|l| {
            format!(
                "L{} {} keys {} filter bytes {:?} target {:.4}%",
                l.level,
                l.keys,
                l.filter_bytes,
                l.filter_kinds.iter().map(ToString::to_string).collect::<Vec<_>>(),
                l.target_fpr * 100.0
            )
        })
        .collect()
}

fn bytes_at(bits_per_key: u64) -> u64 {
    KEYS * bits_per_key / 8
}

/// 6 bits/key of 400k keys under the default `monkey:10`: the filters of
/// the compacted tree take the budget to within 3%. Reopened at 1 bit/key,
/// `compact()` rewrites the filters to the new plan: the deepest level
/// keeps the fewest bits (a share of its tables filtered), at 0.4 bits/key
/// none; the others still fit, every key is found and absent keys are not.
/// The budget is kept by an open that names none, and lifted by
/// `u64::MAX`.
#[test]
fn a_compacted_tree_spends_its_budget() {
    let dir = tempfile::tempdir().unwrap();
    let budget = bytes_at(6);
    let db = Db::open(dir.path(), opts(Some(budget))).unwrap();
    load(&db, KEYS, 10_000);
    let stats = db.stats();
    let spent = filter_bytes(&stats);
    println!("6 bits/key: {spent} of {budget} bytes\n{:#?}", report(&stats));
    assert!(
        stats.levels.iter().filter(|l| l.level >= 1 && l.tables > 0).count() >= 3,
        "{:#?}",
        report(&stats)
    );
    assert_eq!(stats.levels[0].tables, 0);
    #[expect(clippy::cast_precision_loss, reason = "a ratio")]
    let ratio = spent as f64 / budget as f64;
    assert!((ratio - 1.0).abs() <= 0.03, "{spent} bytes for a budget of {budget}\n{:#?}", report(&stats));
    assert_eq!(stats.filter_memory_budget, Some(budget));
    assert_eq!(stats.filter_bytes(), spent);
    assert_eq!(stats.filter_budget_share(), Some(ratio));
    let text = stats.to_string();
    let line = format!("filter memory {spent} bytes (");
    assert!(text.contains(&line) && text.contains(&format!("of a budget of {budget}: ")), "{text}");
    for l in stats.levels.iter().filter(|l| l.filter_bytes > 0) {
        assert!(text.contains(&format!("L{} {}", l.level, l.filter_bytes)), "{text}");
    }
    db.close().unwrap();

    // 1 bit/key: the deepest level gives up bits first. It keeps the
    // fewest bits per key and the highest rate, and only a share of its
    // tables carry a filter (1-column Ribbon, the most rate a bit buys
    // from none): summed 0.94 where leaving it bare, as the planner did
    // before, summed 1.034 in the same bytes. 0.4 bits/key: bare.
    let mut tight = 0;
    for (tenths, bare) in [(10, false), (4, true)] {
        tight = KEYS * tenths / 80;
        let db = Db::open(dir.path(), opts(Some(tight))).unwrap();
        db.compact().unwrap();
        let stats = db.stats();
        let spent = filter_bytes(&stats);
        assert_eq!(stats.filter_memory_budget, Some(tight), "the budget in use, not the first");
        let summed: f64 = stats.levels.iter().filter_map(|l| l.built_fpr).sum();
        println!(
            "{tenths}/10 bits/key: {spent} of {tight} bytes, summed rate {summed:.4}\n{:#?}",
            report(&stats)
        );
        assert!(spent * 100 <= tight * 103, "{spent} bytes for a budget of {tight}\n{:#?}", report(&stats));
        let used: Vec<_> = stats.levels.iter().filter(|l| l.tables > 0).collect();
        let deepest = used.last().unwrap();
        assert!(used.iter().all(|l| l.keys <= deepest.keys), "{:#?}", report(&stats));
        let bits = |l: &siftdb::LevelStats| l.filter_bytes as f64 * 8.0 / l.keys as f64;
        for l in &used[..used.len() - 1] {
            assert!(
                bits(l) > bits(deepest),
                "L{} has fewer bits than the deepest\n{:#?}",
                l.level,
                report(&stats)
            );
            assert!(l.built_fpr < deepest.built_fpr, "{:#?}", report(&stats));
        }
        assert!(deepest.filter_kinds.contains(&FilterKind::None), "{:#?}", report(&stats));
        assert_eq!(deepest.filter_bytes == 0, bare, "{:#?}", report(&stats));
        assert!(stats.levels.iter().any(|l| l.filter_bytes > 0), "the budget pays for some filter");
        // The plan holds: after a small write and flush, compact() rewrites
        // at most the few tables the moved plan asks for (2 measured). A
        // filtered table on a partly filtered level was once taken for
        // drift, and all 45 were rewritten whenever the tree changed.
        db.put(b"z-one more", b"").unwrap();
        db.flush().unwrap();
        db.compact().unwrap();
        let again = db.stats().filter_refreshes - stats.filter_refreshes;
        println!("{tenths}/10: refreshed after one more key: {again}");
        assert!(again <= 3, "{again} refreshes\n{:#?}", report(&db.stats()));
        for i in 0..KEYS {
            assert_eq!(db.get(key(i)).unwrap().as_deref(), Some(&i.to_le_bytes()[..]), "key {i}");
        }
        for i in KEYS..KEYS + 20_000 {
            assert_eq!(db.get(key(i)).unwrap(), None, "absent key {i}");
        }
        db.close().unwrap();
    }

    let db = Db::open(dir.path(), opts(None)).unwrap();
    assert_eq!(db.options().filter_memory_bytes, Some(tight), "the stored budget is kept");
    db.close().unwrap();
    let db = Db::open(dir.path(), opts(Some(u64::MAX))).unwrap();
    assert_eq!(db.options().filter_memory_bytes, None, "u64::MAX lifts it");
    db.close().unwrap();
    let db = Db::open(dir.path(), opts(None)).unwrap();
    assert_eq!(db.options().filter_memory_bytes, None, "lifted for good");
}

/// A table built outside the database (`TableWriter`) takes the policy's
/// bits per key, not the budget's, which it cannot see: ingested into a
/// database under a budget a fifth of that, it is rewritten to the plan by
/// the background's over-budget refresh (`compact_due`, what the background
/// thread runs), and its keys still read.
#[test]
fn an_ingested_table_over_the_budget_is_brought_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let keys = 100_000_u64;
    let budget = keys * 2 / 8;
    let db = Db::open(dir.path().join("db"), opts(Some(budget))).unwrap();
    let path = dir.path().join("bulk.sst");
    let mut w = siftdb::TableWriter::create(&path, db.options()).unwrap();
    let mut sorted: Vec<[u8; 16]> = (0..keys).map(key).collect();
    sorted.sort_unstable();
    for k in &sorted {
        w.add(k, b"v").unwrap();
    }
    w.finish().unwrap();
    db.ingest([&path]).unwrap();
    let before = filter_bytes(&db.stats());
    assert!(before > budget * 3, "{before} bytes: the table came in at the policy's bits, over the budget");
    db.compact_due().unwrap();
    let stats = db.stats();
    let after = filter_bytes(&stats);
    assert!(after * 100 <= budget * 106, "{after} bytes for {budget}\n{:#?}", report(&stats));
    for k in sorted.iter().step_by(97) {
        assert_eq!(db.get(k).unwrap().as_deref(), Some(&b"v"[..]));
    }
}

/// A per-level policy has no bits for a budget to move: refused, naming
/// both, and a budget stored earlier is refused with it too.
#[test]
fn a_budget_needs_a_monkey_policy() {
    let dir = tempfile::tempdir().unwrap();
    let uniform = || Some(FilterPolicy::uniform(FilterKind::BinaryFuse8));
    match Db::open(dir.path(), Options { filter_policy: uniform(), ..opts(Some(1000)) }) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("1000 bytes") && m.contains("fuse8"), "{m}"),
        other => panic!("{other:?}"),
    }
    Db::open(dir.path(), opts(Some(1000))).unwrap().close().unwrap();
    assert!(matches!(
        Db::open(dir.path(), Options { filter_policy: uniform(), ..opts(None) }),
        Err(Error::InvalidArgument(_))
    ));
    let db = Db::open(dir.path(), Options { filter_policy: uniform(), ..opts(Some(u64::MAX)) }).unwrap();
    assert_eq!(db.options().filter_memory_bytes, None);
}

/// Without a budget the plan is the policy's alone: a tree of 60k keys
/// spends `monkey:10`'s bits per key, far above what a budget of 2 bits a
/// key would have allowed.
#[test]
fn no_budget_plans_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts(None)).unwrap();
    load(&db, 60_000, 10_000);
    let stats = db.stats();
    assert_eq!(db.options().filter_memory_bytes, None);
    assert_eq!((stats.filter_memory_budget, stats.filter_budget_share()), (None, None));
    let text = stats.to_string();
    assert!(text.contains(&format!("filter memory {} bytes", filter_bytes(&stats))), "{text}");
    assert!(!text.contains("budget"), "{text}");
    #[expect(clippy::cast_precision_loss, reason = "a ratio")]
    let bits = filter_bytes(&stats) as f64 * 8.0 / 60_000.0;
    assert!((bits - 10.0).abs() <= 0.3, "{bits} bits/key\n{:#?}", report(&stats));
}

/// The best summed rate of the levels below level 0 that one kind on every
/// level reaches within `bytes` for these tables (entries by level): each
/// fixed kind that fits, and Ribbon and blocked Bloom at the most bits per
/// key (to a hundredth) whose real filter blocks fit.
#[expect(clippy::cast_precision_loss, reason = "a level count")]
fn best_uniform(tables: &[(usize, u64)], bytes: u64) -> (f64, FilterKind) {
    let levels = {
        let mut l: Vec<usize> = tables.iter().map(|t| t.0).collect();
        l.dedup();
        l.len() as f64
    };
    let cost = |kind: FilterKind| tables.iter().map(|&(_, n)| table_filter_bytes(kind, n)).sum::<u64>();
    let sized = |make: fn(f64) -> FilterKind, top: f64| {
        let (mut lo, mut hi) = (100_u32, (top * 100.0) as u32);
        if cost(make(1.0)) > bytes {
            return None;
        }
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if cost(make(f64::from(mid) / 100.0)) <= bytes { lo = mid } else { hi = mid - 1 }
        }
        Some(make(f64::from(lo) / 100.0))
    };
    [FilterKind::Xor8, FilterKind::BinaryFuse8, FilterKind::Xor16, FilterKind::BinaryFuse16]
        .into_iter()
        .filter(|k| cost(*k) <= bytes)
        .chain(sized(|b| FilterKind::Ribbon { bits_per_key: b }, 32.0))
        .chain(sized(|b| FilterKind::BlockedBloom { bits_per_key: b }, 48.0))
        .map(|k| (k.theoretical_fpr() * levels, k))
        .fold((levels, FilterKind::None), |best, c| if c.0 < best.0 { c } else { best })
}

proptest! {
    // A fixed seed, as monkey_shapes.rs: CI runs the same cases each time
    // (a random draw once found the sub-2-bit gap on CI's clock, not ours).
    #![proptest_config(ProptestConfig {
        cases: 6,
        rng_seed: proptest::test_runner::RngSeed::Fixed(65),
        ..ProptestConfig::default()
    })]

    /// Over tree sizes and budgets (0.5 to 12 bits/key): after `compact()`
    /// the filters take at most the budget and 3% (and from 2 bits/key at
    /// least the budget less 3%), and the levels' summed rate is no worse than
    /// that of any one kind on every level in the bytes they take.
    #[test]
    fn a_budget_is_kept_and_spent_at_least_as_well_as_uniform(
        keys in 30_000_u64..160_000,
        tenths in 5_u64..120,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let budget = keys * tenths / 80;
        // monkey:16, so that every budget drawn binds.
        let policy = Some(FilterPolicy::monkey(16.0).unwrap());
        let db = Db::open(dir.path(), Options { filter_policy: policy, ..opts(Some(budget)) }).unwrap();
        load(&db, keys, 5_000);
        let stats = db.stats();
        let spent = filter_bytes(&stats);
        prop_assert!(spent * 100 <= budget * 103, "{spent} bytes for {budget}\n{:#?}", report(&stats));
        // From 2 bits/key every level holds a filter and the plan spends
        // the budget to within 3% the other way too.
        prop_assert!(tenths < 20 || spent * 100 >= budget * 97, "{spent} bytes for {budget}");
        let below_l0 = || stats.levels.iter().skip(1).filter(|l| l.tables > 0);
        let monkey: f64 = below_l0().map(|l| l.built_fpr.unwrap_or(1.0)).sum();
        let tables: Vec<(usize, u64)> =
            db.tables().iter().filter(|t| t.level > 0).map(|t| (t.level, t.record.entries)).collect();
        let (uniform, kind) = best_uniform(&tables, spent);
        // At every budget (below 2 bits/key the deepest level used to be
        // left bare where uniform Ribbon filtered it: 30,000 keys at 1.2
        // bits/key summed 1.000 against ribbon:1.04's 0.990).
        prop_assert!(
            monkey <= uniform * 1.000_001,
            "{keys} keys at {tenths}/10 bits/key: summed {monkey} against uniform {kind} {uniform}\n{:#?}",
            report(&stats)
        );
    }
}

/// The budget passed during a fill: `SIFTDB_BUDGET_FILL` keys (default
/// 200,000, CI-sized; the long mode is 10^7, README's testing section) in
/// flushes of 10,000 under 6 bits/key of the final count, `compact()`
/// after every fourth flush (the level-0 trigger); the filter bytes are
/// sampled after every flush and every compaction. Two things pass the
/// budget: level 0's flushes, whose filters the plan carries on top
/// (`TreeShape::settling`); and tables below level 0 written under an
/// earlier plan, for a smaller tree at more bits per key, until compaction
/// refreshes them. The bound asserted at every sample: levels 1 and deeper
/// within `FILL_OVER_BELOW_L0` (1.5%) of the budget, and level 0 at most
/// `l0_compaction_trigger` (4) flushes whose filters take at most
/// `L0_BITS_PER_KEY` each, so in all the filters pass the budget by at most
/// 1.5% + 4 × 10,000 × `L0_BITS_PER_KEY` / 8 bytes (at 6 bits/key of N
/// keys: 1.5% + 160,000 / N, so 81.5% at 200,000 keys, 17.5% at 10^6 and
/// 3.1% at 10^7).
/// Measured (docs/measurements.md, 2026-12-06): 43.6% at 200,000 keys,
/// 13.2% at 10^6, and the 10^7 run's figure there.
#[test]
fn the_budget_is_passed_during_a_fill_by_a_bounded_amount() {
    fill(Settle::CompactEveryTrigger, FILL_OVER_BELOW_L0);
}

/// As `the_budget_is_passed_during_a_fill_by_a_bounded_amount`, but the
/// tree is kept as the background thread keeps it: after every flush,
/// `compact_due()` runs the merges past their triggers and targets and
/// the refreshes where a level's plan and its tables disagree on having a
/// filter, and no more (tables written under an earlier plan keep their
/// bytes until a merge rewrites them). Bound: levels 1 and deeper within
/// `DUE_OVER_BELOW_L0` of the budget.
#[test]
fn the_budget_is_passed_under_background_compaction_by_a_bounded_amount() {
    fill(Settle::Due, DUE_OVER_BELOW_L0);
}

/// How a fill keeps its tree.
#[derive(Clone, Copy, Debug)]
enum Settle {
    /// `compact()` after every fourth flush (the level-0 trigger).
    CompactEveryTrigger,
    /// `compact_due()` after every flush: what the background thread runs.
    Due,
}

#[expect(clippy::cast_precision_loss, reason = "ratios")]
fn fill(settle: Settle, over_below_l0: f64) {
    const PER_FLUSH: u64 = 10_000;
    let keys: u64 = std::env::var("SIFTDB_BUDGET_FILL").ok().and_then(|v| v.parse().ok()).unwrap_or(200_000);
    let budget = keys * 6 / 8;
    let trigger = opts(None).l0_compaction_trigger as u64;
    let l0_bound = (trigger * PER_FLUSH) as f64 * L0_BITS_PER_KEY / 8.0 / budget as f64;
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts(Some(budget))).unwrap();
    // (worst share over the budget, keys written then), for all levels and
    // for levels 1 and deeper; the most bits per key a level-0 table took.
    let (mut all, mut below, mut l0_bits) = ((0.0_f64, 0), (0.0_f64, 0), 0.0_f64);
    let mut sample = |db: &Db, written: u64| {
        let stats = db.stats();
        let total = filter_bytes(&stats) as f64 / budget as f64 - 1.0;
        // Level 0's flushes count in the share the stats report.
        let share = stats.filter_budget_share().unwrap();
        assert!((share - (total + 1.0)).abs() < 1e-9, "{share} at {written} keys");
        let l0 = &stats.levels[0];
        let deeper = (filter_bytes(&stats) - l0.filter_bytes) as f64 / budget as f64 - 1.0;
        assert!(l0.tables <= trigger, "{} level-0 tables at {written} keys", l0.tables);
        assert!(deeper <= over_below_l0, "{:.2}% over below level 0 at {written} keys", deeper * 100.0);
        assert!(
            total <= over_below_l0 + l0_bound,
            "{:.2}% over at {written} keys, past {:.1}% + {:.2}%\n{:#?}",
            total * 100.0,
            over_below_l0 * 100.0,
            l0_bound * 100.0,
            report(&stats)
        );
        for t in db.tables().iter().filter(|t| t.level == 0) {
            l0_bits = l0_bits.max(t.record.filter_bytes as f64 * 8.0 / t.record.entries.max(1) as f64);
        }
        if total > all.0 {
            all = (total, written);
        }
        if deeper > below.0 {
            below = (deeper, written);
        }
    };
    for (n, chunk) in (0..keys).collect::<Vec<_>>().chunks(PER_FLUSH as usize).enumerate() {
        let mut batch = WriteBatch::new();
        for &i in chunk {
            batch.put(key(i), i.to_le_bytes());
        }
        db.write(batch).unwrap();
        db.flush().unwrap();
        let written = chunk[chunk.len() - 1] + 1;
        sample(&db, written);
        match settle {
            Settle::CompactEveryTrigger if n % 4 == 3 => db.compact().unwrap(),
            Settle::CompactEveryTrigger => continue,
            Settle::Due => db.compact_due().unwrap(),
        }
        sample(&db, written);
    }
    db.compact().unwrap();
    sample(&db, keys);
    let end = db.stats();
    println!(
        "{settle:?}, {keys} keys: over the budget by at most {:.1}% (at {} keys), {:.1}% below level 0 (at {} keys); \
         level-0 tables at most {l0_bits:.2} bits/key; after compact {:.2}% of it, write amplification {:.2}",
        all.0 * 100.0,
        all.1,
        below.0 * 100.0,
        below.1,
        end.filter_budget_share().unwrap() * 100.0,
        end.write_amplification().unwrap()
    );
    assert!(l0_bits <= L0_BITS_PER_KEY, "a level-0 table took {l0_bits:.2} bits/key");
}
