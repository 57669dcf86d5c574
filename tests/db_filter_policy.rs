//! The filter policy is applied per level: flushes write level 0's kind,
//! compactions write the output level's kind, and the table files say so.

mod common;

use siftdb::fs::StdFs;
use siftdb::policy::{FilterPolicy, TreeShape};
use siftdb::table::Table;
use siftdb::{Db, FilterKind, Options};

#[test]
fn each_level_carries_the_policy_kind() {
    let kinds = FilterKind::ALL.to_vec();
    let policy = FilterPolicy::per_level(kinds.clone());
    let opts = Options {
        memtable_bytes: 2048,
        hash_salt: Some(31),
        fs: common::no_sync_fs(),
        l0_compaction_trigger: 2,
        base_level_bytes: 4096,
        level_size_ratio: 2,
        table_target_bytes: 2048,
        max_levels: 5,
        filter_policy: Some(policy.clone()),
        ..Options::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts).unwrap();
    for i in 0..4000u32 {
        db.put(format!("key{:06}", (i * 7919) % 3000).as_bytes(), format!("value{i}").as_bytes()).unwrap();
    }
    db.flush().unwrap();
    db.compact().unwrap();
    let tables = db.tables();
    let levels: std::collections::BTreeSet<usize> = tables.iter().map(|t| t.level).collect();
    assert!(levels.len() >= 3, "levels {levels:?}");
    let shape = TreeShape::geometric(2.0, 5);
    for t in &tables {
        let want = policy.for_level(t.level, &shape).kind;
        assert_eq!(t.filter, want, "L{} table {} (manifest)", t.level, t.file_number);
        let table = Table::open(&StdFs, &t.path).unwrap();
        let details = table.filter_details();
        assert_eq!(details.kind, Some(want), "L{} table {} (file)", t.level, t.file_number);
        assert_eq!(details.header.map(|h| h.seed), Some(31), "filters are seeded with the db salt");
    }
    let stats = db.stats();
    for l in stats.levels.iter().filter(|l| l.tables > 0) {
        assert_eq!(l.filter_kinds, vec![kinds[l.level]], "L{}", l.level);
        assert!(l.filter_bytes > 0);
    }
}
