//! Stats count table probes exactly: for absent keys every filter probe is a
//! negative or a false positive; for present keys the table holding the key
//! counts a true positive; `since` isolates one phase.

mod common;

use siftdb::policy::FilterPolicy;
use siftdb::{Compression, CompressionPolicy, Db, FilterKind, Options};

fn opts(policy: FilterPolicy) -> Options {
    Options {
        memtable_bytes: 8 << 10,
        hash_salt: Some(41),
        fs: common::no_sync_fs(),
        l0_compaction_trigger: 3,
        base_level_bytes: 32 << 10,
        table_target_bytes: 16 << 10,
        max_levels: 4,
        filter_policy: Some(policy),
        ..Options::default()
    }
}

fn load(db: &Db) {
    for i in 0..5000u32 {
        db.put(format!("present{i:06}").as_bytes(), b"some value bytes").unwrap();
    }
    db.flush().unwrap();
    db.compact().unwrap();
}

#[test]
fn absent_keys_count_negatives_and_false_positives_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let db =
        Db::open(dir.path(), opts(FilterPolicy::uniform(FilterKind::BlockedBloom { bits_per_key: 10.0 })))
            .unwrap();
    load(&db);
    let before = db.stats();
    // Absent keys interleaved with present ones, so key ranges cover them.
    for i in 0..5000u32 {
        assert!(db.get(format!("present{i:06}x").as_bytes()).unwrap().is_none());
    }
    let d = db.stats().since(&before);
    assert_eq!(d.gets, 5000);
    assert_eq!(d.memtable_hits, 0);
    let (probes, negatives, fps) = d.filter_totals();
    assert_eq!(d.levels.iter().map(|l| l.filter_true_positives).sum::<u64>(), 0);
    assert_eq!(probes, negatives + fps);
    // Keys between two tables of a level (or past the last) probe nothing there.
    assert!(probes >= 4000, "most absent keys fall in some table's range: {probes}");
    for l in d.levels.iter().filter(|l| l.filter_probes > 0) {
        let fpr = l.observed_fpr().unwrap();
        assert!(fpr < 0.03, "L{} observed FPR {fpr} for a 10 bits/key blocked Bloom", l.level);
        // Only false positives read data blocks.
        assert_eq!(l.data_blocks_read, l.filter_false_positives, "L{}", l.level);
        assert!(l.target_fpr > 0.0 && l.target_fpr < 0.02);
    }
}

#[test]
fn present_keys_count_true_positives_and_unfiltered_tables_count_probes() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts(FilterPolicy::uniform(FilterKind::BinaryFuse8))).unwrap();
    load(&db);
    let before = db.stats();
    for i in (0..5000u32).step_by(5) {
        assert!(db.get(format!("present{i:06}").as_bytes()).unwrap().is_some());
    }
    let d = db.stats().since(&before);
    let tps: u64 = d.levels.iter().map(|l| l.filter_true_positives).sum();
    assert_eq!(tps, 1000, "exactly one table holds each key");

    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts(FilterPolicy::per_level(vec![]))).unwrap();
    load(&db);
    let before = db.stats();
    for i in 0..100u32 {
        db.get(format!("present{i:06}x").as_bytes()).unwrap();
    }
    let d = db.stats().since(&before);
    let unfiltered: u64 = d.levels.iter().map(|l| l.probes_without_filter).sum();
    assert!(unfiltered >= 100);
    assert_eq!(d.filter_totals().0, 0);
    assert!(d.levels.iter().all(|l| l.filter_bytes == 0 && l.target_fpr == 1.0));
}

#[test]
fn a_table_whose_filter_block_is_corrupt_is_counted_and_still_answers() {
    let dir = tempfile::tempdir().unwrap();
    let policy = FilterPolicy::uniform(FilterKind::BinaryFuse8);
    let db = Db::open(dir.path(), Options { auto_compaction: false, ..opts(policy.clone()) }).unwrap();
    for i in 0..500u32 {
        db.put(format!("present{i:06}").as_bytes(), b"v").unwrap();
    }
    db.flush().unwrap();
    assert!(db.stats().levels.iter().all(|l| l.filters_dropped == 0));
    db.close().unwrap();

    // Flip a byte inside the (only) table's filter block.
    let table = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "sst"))
        .unwrap();
    let filter = siftdb::table::Table::open_path(&table).unwrap().footer().filter;
    let mut bytes = std::fs::read(&table).unwrap();
    bytes[usize::try_from(filter.offset).unwrap() + 20] ^= 0x40;
    std::fs::write(&table, &bytes).unwrap();

    let db = Db::open(dir.path(), Options { auto_compaction: false, ..opts(policy) }).unwrap();
    let s = db.stats();
    assert_eq!(s.levels[0].filters_dropped, 1, "{s}");
    assert!(s.to_string().contains("filters dropped as corrupt: 1"), "{s}");
    // Fail open: every key still reads, through the data blocks.
    for i in (0..500u32).step_by(7) {
        assert_eq!(db.get(format!("present{i:06}").as_bytes()).unwrap().as_deref(), Some(&b"v"[..]));
    }
    assert!(db.stats().levels[0].probes_without_filter > 0);
}

/// Write amplification is what the tables cost per byte the application
/// wrote: the user bytes are exactly the keys and values handed over, the
/// flush bytes the level-0 files written, and after a full settle every
/// table file in the tree was written by one or the other.
#[test]
fn write_amplification_counts_user_flush_and_compaction_bytes() {
    let dir = tempfile::tempdir().unwrap();
    // Raw tables: the flush bytes bound the user bytes from above.
    let raw = Options {
        compression: CompressionPolicy::uniform(Compression::None),
        ..opts(FilterPolicy::uniform(FilterKind::BlockedBloom { bits_per_key: 10.0 }))
    };
    let db = Db::open(dir.path(), raw).unwrap();
    assert_eq!(db.stats().write_amplification(), None, "nothing written yet");
    let mut user = 0u64;
    for i in 0..5000u32 {
        let key = format!("present{i:06}");
        db.put(key.as_bytes(), b"some value bytes").unwrap();
        user += (key.len() + b"some value bytes".len()) as u64;
    }
    db.delete(b"present000001").unwrap();
    user += b"present000001".len() as u64;
    db.flush().unwrap();
    let flushed = db.stats();
    assert_eq!(flushed.user_bytes, user);
    assert!(flushed.flushes > 1, "the small memtable flushed several times");
    // Uncompressed tables hold every key and value flushed, and more.
    assert!(flushed.flush_bytes_written >= user, "{} < {user}", flushed.flush_bytes_written);

    db.compact().unwrap();
    let s = db.stats();
    let live: u64 = s.levels.iter().map(|l| l.bytes).sum();
    // Every live byte was written by a flush or a compaction (keys in
    // order: most tables go down by trivial moves, written once).
    let written = s.flush_bytes_written + s.compaction_bytes_written;
    assert!(written >= live, "{written} < {live}");
    let wa = s.write_amplification().unwrap();
    let expected = (s.flush_bytes_written + s.compaction_bytes_written) as f64 / user as f64;
    assert!((wa - expected).abs() < 1e-12);
    assert!(wa > 1.0, "raw flushes alone hold more than the user bytes: {wa}");
    assert!(s.to_string().contains("write amplification"), "{s}");
    // An interval counts only its own writes.
    let before = db.stats();
    db.put(b"one more", b"v").unwrap();
    let d = db.stats().since(&before);
    assert_eq!((d.user_bytes, d.flush_bytes_written), (9, 0));
}

/// The manifest keeps write totals over the database's life: they survive
/// a reopen, and a write the WAL replays at open counts once, when its
/// memtable is flushed.
#[test]
fn lifetime_write_totals_survive_reopen_and_count_a_replayed_write_once() {
    let dir = tempfile::tempdir().unwrap();
    let o = || opts(FilterPolicy::uniform(FilterKind::BlockedBloom { bits_per_key: 10.0 }));
    let db = Db::open(dir.path(), o()).unwrap();
    assert_eq!(db.stats().lifetime_writes, siftdb::WriteTotals::default());
    let mut user = 0u64;
    for i in 0..5000u32 {
        let key = format!("present{i:06}");
        db.put(key.as_bytes(), b"some value bytes").unwrap();
        user += (key.len() + 16) as u64;
    }
    db.flush().unwrap();
    db.compact().unwrap();
    let s = db.stats();
    let first = siftdb::WriteTotals {
        user_bytes: user,
        flush_bytes: s.flush_bytes_written,
        compaction_bytes: s.compaction_bytes_written,
    };
    assert_eq!(s.lifetime_writes, first, "everything was flushed in this open");
    assert_eq!(s.lifetime_writes.write_amplification(), s.write_amplification());
    // Written but not flushed: the WAL holds it, the totals do not yet.
    for i in 0..100u32 {
        db.put(format!("later{i:04}").as_bytes(), b"v").unwrap();
        user += 10;
    }
    db.close().unwrap();

    let db = Db::open(dir.path(), o()).unwrap();
    assert_eq!(db.stats().flush_bytes_written, 0, "a new open counts from zero");
    let totals = db.stats().lifetime_writes;
    assert!(totals.covers(&first), "{totals:?} lost some of {first:?}");
    db.flush().unwrap();
    let after = db.stats().lifetime_writes;
    assert_eq!(after.user_bytes, user, "the replayed writes count once");
    assert!(after.flush_bytes > first.flush_bytes);
    assert!(db.stats().to_string().contains("over the database's life"), "{}", db.stats());
    db.close().unwrap();

    let db = Db::open(dir.path(), o()).unwrap();
    assert_eq!(db.stats().lifetime_writes, after, "a clean reopen keeps the totals");
}

/// Issue 58: level-0 tables under the default policy (Monkey, a budget)
/// keep the filter planned at their flush, and the plan moves as the tree
/// grows: the first tiny flush gets none, a later one more bits. That is
/// the budget at work, not a filter missing its plan, so the text does
/// not report it as one, and says in one line why small tables look odd.
#[test]
fn small_level0_tables_under_the_default_policy_do_not_miss_their_plan() {
    for keys in [3u32, 50, 2000] {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), Options { fs: common::no_sync_fs(), ..Options::default() }).unwrap();
        for flush in 0..2u32 {
            for i in 0..keys {
                db.put(format!("user:{flush}:{i}"), "ada").unwrap();
            }
            db.flush().unwrap();
        }
        let s = db.stats();
        assert_eq!(s.filter_policy, "monkey:10");
        assert_eq!(s.levels[0].tables, 2, "{s}");
        assert_eq!(s.levels[0].tables_over_target, 0, "{keys} keys a flush:\n{s}");
        let text = s.to_string();
        assert!(!text.contains("misses the level's planned rate"), "{text}");
        if s.levels[0].filter_kinds.contains(&FilterKind::None) {
            assert!(text.contains("L0: a small table's filter is sized for its few keys"), "{text}");
        }
    }
}

/// A uniform policy's tiny table carries a whole block of filter for three
/// keys: more bits/k than any kind is sized at, on its plan's rate (the
/// plan sizes it the same way), and explained.
#[test]
fn a_tiny_table_under_a_uniform_policy_is_explained_not_counted() {
    let dir = tempfile::tempdir().unwrap();
    let policy = FilterPolicy::uniform(FilterKind::BlockedBloom { bits_per_key: 10.0 });
    let db = Db::open(dir.path(), Options { auto_compaction: false, ..opts(policy) }).unwrap();
    for key in ["a", "b", "c"] {
        db.put(key, "v").unwrap();
    }
    db.flush().unwrap();
    let s = db.stats();
    let l0 = &s.levels[0];
    assert!(l0.filter_bits_per_key() > 64.0, "{s}");
    assert_eq!(l0.tables_over_target, 0, "{s}");
    assert!(s.to_string().contains("L0: a small table's filter is sized for its few keys"), "{s}");
}

/// The table's columns are spelled out under it, every one of them.
#[test]
fn the_stats_text_has_a_legend_for_every_column() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts(FilterPolicy::uniform(FilterKind::BinaryFuse8))).unwrap();
    load(&db);
    let text = db.stats().to_string();
    let header = text.lines().find(|l| l.starts_with("level ")).unwrap();
    let columns = ["bits/k", "plan", "target", "built", "probes", "negative", "false+", "obs.fpr"];
    for column in columns {
        assert!(header.contains(column), "{header}");
        assert!(text.contains(&format!("{column}: ")), "no legend for {column}:\n{text}");
    }
    // A big table on its plan has nothing to explain.
    assert!(!text.contains("small table's filter"), "{text}");
}

/// Issue 69: `LevelStats` says where the written bytes went, level by
/// level: level 0 holds the flushes, a merge counts the bytes it brought
/// down from the level above apart from those of its own level it
/// rewrote, a move counts the bytes it took down unwritten, and the levels
/// add up to the totals.
#[test]
fn writes_are_counted_by_the_level_they_went_to() {
    let dir = tempfile::tempdir().unwrap();
    let o = Options {
        auto_compaction: false,
        base_level_bytes: 1 << 30,
        compression: CompressionPolicy::uniform(Compression::None),
        // A fixed trigger: every third flush merges (tests/level0_merges.rs
        // has the trigger that waits for level 1's bytes).
        l0_compaction_trigger_max: 0,
        ..opts(FilterPolicy::uniform(FilterKind::BinaryFuse8))
    };
    let db = Db::open(dir.path(), o).unwrap();
    let scattered = |i: u32| format!("key{:08}", i.wrapping_mul(7_919) % 100_000);
    let mut expected_in = 0;
    let mut expected_rewritten = 0;
    for round in 0..3u32 {
        for i in round * 600..(round + 1) * 600 {
            db.put(scattered(i), b"a value of some bytes").unwrap();
            if i % 200 == 199 {
                db.flush().unwrap();
            }
        }
        // Three level-0 tables, the trigger: one merge, of all of them and
        // of all of level 1 (scattered keys meet every table there).
        let before = db.stats();
        expected_in += before.levels[0].bytes;
        expected_rewritten += before.levels[1].bytes;
        db.compact_due().unwrap();
        let after = db.stats();
        assert_eq!(after.compactions, before.compactions + 1, "{after}");
        assert_eq!(after.levels[0].tables, 0);
        assert_eq!(after.levels[1].write_jobs, u64::from(round) + 1);
        assert_eq!(after.levels[1].bytes_merged_in, expected_in, "{after}");
        assert_eq!(after.levels[1].bytes_rewritten, expected_rewritten, "{after}");
    }
    let s = db.stats();
    assert_eq!((s.levels[0].write_jobs, s.levels[0].bytes_written), (s.flushes, s.flush_bytes_written));
    assert_eq!(s.levels[0].bytes_merged_in + s.levels[0].bytes_rewritten, 0);
    let below: u64 = s.levels.iter().skip(1).map(|l| l.bytes_written).sum();
    assert_eq!(below, s.compaction_bytes_written);
    let read: u64 = s.levels.iter().map(|l| l.bytes_merged_in + l.bytes_rewritten).sum();
    assert_eq!(read, s.compaction_bytes_read);
    let w = s.levels[1].write_amplification().unwrap();
    assert!((w - s.levels[1].bytes_written as f64 / expected_in as f64).abs() < 1e-12);
    assert!(w > 1.0, "level 1 rewritten twice over: {w}");
    assert_eq!(s.levels[0].write_amplification(), None);
    assert!(s.to_string().contains("written by level since the open: L0 "), "{s}");
    // An interval counts only its own jobs.
    let d = s.since(&s);
    assert_eq!((d.levels[1].write_jobs, d.levels[1].bytes_merged_in, d.levels[1].bytes_written), (0, 0, 0));
    drop(db);

    // Keys in order, over room below: level-0 tables go down unwritten.
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(
        dir.path(),
        Options { auto_compaction: false, ..opts(FilterPolicy::uniform(FilterKind::BinaryFuse8)) },
    )
    .unwrap();
    for i in 0..600u32 {
        db.put(format!("key{i:08}"), b"a value of some bytes").unwrap();
        if i % 200 == 199 {
            db.flush().unwrap();
        }
    }
    let l0 = db.stats().levels[0].bytes;
    db.compact_due().unwrap();
    let s = db.stats();
    assert_eq!(
        (s.levels[1].bytes_moved_in, s.levels[1].bytes_written, s.compaction_bytes_written),
        (l0, 0, 0),
        "{s}"
    );
    assert!(s.to_string().contains(&format!("L1 0 by 0 jobs, {l0} moved in")), "{s}");
}
