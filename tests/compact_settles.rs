//! `Db::compact` settles the tree fully: level 0 ends empty and the
//! memtable flushed, whatever the background flush and compaction threads
//! were doing when it was called (issue 35: three level-0 tables left
//! behind put three more filter probes on every absent-key lookup).

use siftdb::{Db, Options};

fn opts(memtable_bytes: usize) -> Options {
    Options {
        memtable_bytes,
        table_target_bytes: 16 << 10,
        base_level_bytes: 64 << 10,
        hash_salt: Some(3),
        ..Options::default()
    }
}

#[test]
fn compact_leaves_level_0_and_the_memtable_empty() {
    // Small memtables: many rotations, so frozen memtables are usually in
    // flight and background compactions running when compact() is called.
    for (round, memtable_bytes) in [(0u32, 4 << 10), (1, 8 << 10), (2, 16 << 10)] {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), opts(memtable_bytes)).unwrap();
        let n = 6_000u32;
        for i in 0..n {
            let k = (i.wrapping_mul(2_654_435_761) ^ round) % n;
            db.put(format!("key{k:08}"), format!("value {i} of round {round}")).unwrap();
        }
        db.compact().unwrap();
        let stats = db.stats();
        assert_eq!(
            stats.levels[0].tables, 0,
            "round {round}: level 0 kept {} tables\n{stats}",
            stats.levels[0].tables
        );
        // The memtables were flushed first: the active one too.
        assert_eq!((stats.immutable_memtables, stats.memtable_bytes), (0, 0), "round {round}");
        // Nothing was lost on the way: every key reads its last value.
        let mut last = std::collections::HashMap::new();
        for i in 0..n {
            last.insert((i.wrapping_mul(2_654_435_761) ^ round) % n, i);
        }
        for (k, i) in last {
            let got = db.get(format!("key{k:08}")).unwrap().unwrap();
            assert_eq!(got, format!("value {i} of round {round}").as_bytes(), "key {k}");
        }
        // A miss probes at most one table per deeper level.
        let before = db.stats();
        assert_eq!(db.get("absent key").unwrap(), None);
        let probes: u64 =
            db.stats().since(&before).levels.iter().map(|l| l.filter_probes + l.probes_without_filter).sum();
        let deeper = stats.levels.iter().skip(1).filter(|l| l.tables > 0).count() as u64;
        assert!(probes <= deeper, "round {round}: {probes} probes for {deeper} filled levels");
    }
}
