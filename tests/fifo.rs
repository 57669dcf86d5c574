//! FIFO compaction (issue 68, step 1): tables are never merged; the oldest
//! are dropped whole past a TTL (read on the database's clock) or a byte
//! limit, from the bottom of the tree only, and the behaviour survives a
//! reopen.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use siftdb::{Clock, Compaction, CompressionPolicy, Db, Error, Options, TableWriter};

/// A clock the test moves by hand, in whole seconds.
#[derive(Debug)]
struct FakeClock(AtomicU64);

impl FakeClock {
    fn at(secs: u64) -> Arc<FakeClock> {
        Arc::new(FakeClock(AtomicU64::new(secs)))
    }
    fn set(&self, secs: u64) {
        self.0.store(secs, Ordering::SeqCst);
    }
}

impl Clock for FakeClock {
    fn now(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(self.0.load(Ordering::SeqCst))
    }
}

fn fifo(max_bytes: Option<u64>, ttl: Option<Duration>) -> Options {
    Options {
        memtable_bytes: 16 << 10,
        hash_salt: Some(68),
        compaction: Compaction::Fifo { max_bytes, ttl },
        ..Options::default()
    }
}

fn key(tag: &str, i: u32) -> String {
    format!("{tag}{i:06}")
}

fn put_all(db: &Db, tag: &str, n: u32) {
    for i in 0..n {
        db.put(key(tag, i), format!("{tag}-value-{i}")).unwrap();
    }
}

fn present(db: &Db, tag: &str, n: u32) -> usize {
    (0..n).filter(|&i| db.get(key(tag, i)).unwrap().is_some()).count()
}

/// Bytes of the table files in `dir`: what the tree holds on disk.
fn table_bytes_on_disk(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "sst"))
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum()
}

#[test]
fn tables_past_the_ttl_disappear_on_the_database_clock_and_after_a_reopen() {
    let tmp = tempfile::tempdir().unwrap();
    let clock = FakeClock::at(1_000_000);
    let opts = Options {
        memtable_bytes: 1 << 20,
        clock: clock.clone(),
        ..fifo(None, Some(Duration::from_secs(100)))
    };
    let db = Db::open(tmp.path(), opts.clone()).unwrap();
    put_all(&db, "a", 200);
    db.flush().unwrap();
    clock.set(1_000_050);
    put_all(&db, "b", 200);
    db.flush().unwrap();
    // Written at 1,000,000 (recorded in whole seconds): its newest write
    // may be up to a second later, so it is kept through 1,000,100.
    clock.set(1_000_100);
    db.compact_due().unwrap();
    assert_eq!((present(&db, "a", 200), present(&db, "b", 200)), (200, 200));
    assert_eq!(db.stats().fifo_dropped.tables, 0);

    clock.set(1_000_101);
    db.compact_due().unwrap();
    assert_eq!(present(&db, "a", 200), 0, "the expired table's keys are gone");
    assert_eq!(present(&db, "b", 200), 200, "newer data is untouched");
    let dropped = db.stats().fifo_dropped;
    assert_eq!(dropped.tables, 1);
    assert_eq!(dropped.entries, 200);
    assert!(dropped.bytes > 0);
    assert_eq!(db.stats().compaction_bytes_written, 0, "FIFO rewrites nothing");

    // Unflushed writes are not in any table: nothing expires them.
    put_all(&db, "c", 50);
    db.close().unwrap();

    let db = Db::open(tmp.path(), opts).unwrap();
    assert_eq!((present(&db, "a", 200), present(&db, "b", 200), present(&db, "c", 50)), (0, 200, 50));
    assert_eq!(db.stats().fifo_dropped.tables, 0, "counted since the open");
    assert_eq!(db.stats().lifetime_fifo_dropped, dropped, "kept by the manifest");
    // After the reopen the background drops expired tables by itself,
    // right after the next flush.
    clock.set(1_000_151);
    put_all(&db, "d", 50);
    db.flush().unwrap();
    db.wait_for_background_work().unwrap();
    assert_eq!(present(&db, "b", 200), 0, "expired across the reopen");
    assert_eq!((present(&db, "c", 50), present(&db, "d", 50)), (50, 50));
    assert_eq!(db.stats().fifo_dropped.tables, 1);
    let life = db.stats().lifetime_fifo_dropped;
    assert_eq!((life.tables, life.entries), (2, 400));
}

#[test]
fn an_idle_database_drops_expired_tables_on_its_own() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Db::open(tmp.path(), fifo(None, Some(Duration::from_secs(1)))).unwrap();
    put_all(&db, "a", 100);
    db.flush().unwrap();
    // Expiry within 1 + 1 s of the write, looked for every second.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while db.stats().fifo_dropped.tables == 0 {
        assert!(std::time::Instant::now() < deadline, "the expired table was never dropped");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(present(&db, "a", 100), 0);
}

#[test]
fn a_long_fill_stays_within_one_table_of_max_bytes_and_keeps_the_newest_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let max_bytes = 256 << 10;
    let db = Db::open(tmp.path(), fifo(Some(max_bytes), None)).unwrap();
    let n = 40_000;
    let mut largest_table = 0;
    let mut worst = 0;
    for i in 0..n {
        db.put(key("k", i), format!("value-{i:06}-{}", "x".repeat(64))).unwrap();
        if i % 250 == 0 {
            let on_disk = table_bytes_on_disk(tmp.path());
            let tables = db.tables();
            largest_table = largest_table.max(tables.iter().map(|t| t.record.file_size).max().unwrap_or(0));
            worst = worst.max(on_disk);
            assert!(
                on_disk <= max_bytes + largest_table,
                "after {i} puts: {on_disk} table bytes on disk, limit {max_bytes} + one table {largest_table}"
            );
        }
    }
    db.flush().unwrap();
    db.wait_for_background_work().unwrap();
    let stats = db.stats();
    let tables: u64 = stats.levels.iter().map(|l| l.tables).sum();
    assert!(
        stats.user_bytes > 8 * max_bytes && stats.fifo_dropped.tables > 20,
        "the fill must pass the limit many times over: {stats:?}"
    );
    assert!(tables > 12, "more level-0 tables than the stop trigger, and no stall: {tables}");
    assert!(worst > max_bytes / 2);
    assert_eq!(stats.compaction_bytes_written, 0, "FIFO rewrites nothing");
    // What is kept is the newest writes, without a gap.
    let kept: Vec<bool> = (0..n).map(|i| db.get(key("k", i)).unwrap().is_some()).collect();
    let first = kept.iter().position(|&k| k).unwrap();
    assert!(first > 0, "the oldest writes were dropped");
    assert!(kept[first..].iter().all(|&k| k), "every write newer than the oldest kept is kept");
    assert_eq!(u64::from(n - first as u32), stats.levels.iter().map(|l| l.keys).sum::<u64>());
}

#[test]
fn fifo_plans_every_table_at_the_policy_budget() {
    // Leveled planning gives level 0's flushes up to 24 bits/key on top of
    // the budget (their keys are counted again below); under FIFO level 0
    // is all there is, so its tables must keep to the policy's 10.
    let tmp = tempfile::tempdir().unwrap();
    let opts = Options {
        memtable_bytes: 128 << 10,
        compression: CompressionPolicy::uniform(siftdb::Compression::None),
        ..fifo(None, None)
    };
    let db = Db::open(tmp.path(), opts).unwrap();
    put_all(&db, "k", 40_000);
    db.flush().unwrap();
    let stats = db.stats();
    let l0 = &stats.levels[0];
    assert!(l0.tables > 8, "{l0:?}");
    #[expect(clippy::cast_precision_loss, reason = "a ratio")]
    let bits_per_key = l0.filter_bytes as f64 * 8.0 / l0.keys as f64;
    assert!(l0.target_bits_per_key <= 10.0 + 1e-9, "{l0:?}");
    // Ribbon's own overhead in tables of about 1,100 keys: 10.48 measured.
    assert!(bits_per_key < 10.75, "level 0 at {bits_per_key:.2} bits/key under monkey:10: {l0:?}");
}

#[test]
fn tables_left_below_level_0_by_leveled_go_first_and_nothing_older_comes_back() {
    let tmp = tempfile::tempdir().unwrap();
    let leveled = Options {
        memtable_bytes: 16 << 10,
        hash_salt: Some(68),
        auto_compaction: false,
        ..Options::default()
    };
    let db = Db::open(tmp.path(), leveled.clone()).unwrap();
    for i in 0..2000 {
        db.put(key("k", i), format!("old-{i}")).unwrap();
    }
    db.compact().unwrap();
    for i in 0..1000 {
        db.put(key("k", i), format!("new-{i}")).unwrap();
    }
    db.flush().unwrap();
    let before = db.stats();
    assert!(before.levels[0].tables > 0 && before.levels.iter().skip(1).any(|l| l.tables > 0));
    let l0_bytes = before.levels[0].bytes;
    db.close().unwrap();

    // Room for level 0 and nothing more: everything below goes.
    let opts = Options { auto_compaction: false, ..fifo(Some(l0_bytes + 1), None) };
    let db = Db::open(tmp.path(), opts).unwrap();
    db.compact_due().unwrap();
    let after = db.stats();
    assert!(after.levels.iter().skip(1).all(|l| l.tables == 0), "{:?}", after.levels);
    assert_eq!(after.levels[0].tables, before.levels[0].tables, "level 0 is newer: kept");
    for i in 0..2000 {
        let got = db.get(key("k", i)).unwrap().map(|v| String::from_utf8(v.to_vec()).unwrap());
        let want = (i < 1000).then(|| format!("new-{i}"));
        assert_eq!(got, want, "key {i}: an older version must never come back");
    }
}

#[test]
fn ingested_tables_stay_on_level_0_under_fifo() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = fifo(Some(1 << 30), None);
    let db = Db::open(tmp.path().join("db"), opts.clone()).unwrap();
    let path = tmp.path().join("in.sst");
    let mut w = TableWriter::create(&path, &opts).unwrap();
    for i in 0..1000 {
        w.add(key("i", i), "v").unwrap();
    }
    w.finish().unwrap();
    let ingested = db.ingest([&path]).unwrap();
    assert_eq!(ingested.tables[0].level, 0);
    assert_eq!(present(&db, "i", 1000), 1000);
}

#[test]
fn fifo_limits_of_zero_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    for bad in [fifo(Some(0), None), fifo(None, Some(Duration::ZERO))] {
        match Db::open(tmp.path(), bad) {
            Err(Error::InvalidArgument(m)) => assert!(m.contains("FIFO"), "{m}"),
            other => panic!("expected InvalidArgument, got {:?}", other.map(|_| ())),
        }
    }
}

#[test]
fn the_strategy_reads_back_from_its_text_and_bad_text_is_refused() {
    for c in [
        Compaction::Leveled,
        Compaction::Fifo { max_bytes: None, ttl: None },
        Compaction::Fifo { max_bytes: Some(1 << 30), ttl: None },
        Compaction::Fifo { max_bytes: None, ttl: Some(Duration::from_millis(1500)) },
        Compaction::Fifo { max_bytes: Some(7), ttl: Some(Duration::from_secs(86_400)) },
    ] {
        assert_eq!(c.to_string().parse::<Compaction>().unwrap(), c, "{c}");
    }
    for bad in [
        "",
        "fifo:",
        "fifo:max_bytes=",
        "fifo:max_bytes=0",
        "fifo:ttl=0s",
        "fifo:ttl=-1s",
        "fifo:ttl=forever",
        "fifo:max_bytes=1,max_bytes=2",
        "fifo:size=1",
        "leveled:max_bytes=1",
        "universal",
    ] {
        match bad.parse::<Compaction>() {
            Err(Error::InvalidArgument(m)) => {
                assert!(m.contains("compaction") || m.contains("FIFO"), "{bad}: {m}")
            }
            other => panic!("{bad:?} gave {other:?}"),
        }
    }
}
