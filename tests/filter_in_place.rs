//! A table's filter is read in place from its mapping, not copied to the
//! heap (issue 66): its array lies inside the filter block of the file,
//! on a 64-byte boundary, and answers as the copy does.

use siftdb::filter::FilterKind;
use siftdb::fs::StdFs;
use siftdb::table::{FORMAT_VERSION_ALIGNED, FilterAnswer, Table, TableBuilder, TableOptions, verify_table};
use siftdb::{Db, FilterPolicy, Options, ValueKind};

fn table(dir: &std::path::Path, filter: FilterKind) -> Table {
    let path = dir.join(format!("{}.sst", filter.to_string().replace(':', "_")));
    let mut b = TableBuilder::create(&path, TableOptions { filter, ..TableOptions::default() }).unwrap();
    for i in 0..5000u32 {
        b.add(format!("k{i:05}").as_bytes(), 1, ValueKind::Value, b"v").unwrap();
    }
    b.finish().unwrap();
    Table::open_path(&path).unwrap()
}

#[test]
fn a_fresh_table_reads_its_filter_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let kinds = [
        FilterKind::Bloom { bits_per_key: 10.0 },
        FilterKind::BlockedBloom { bits_per_key: 10.0 },
        FilterKind::Xor8,
        FilterKind::Xor16,
        FilterKind::BinaryFuse8,
        FilterKind::BinaryFuse16,
        FilterKind::Ribbon { bits_per_key: 10.0 },
        FilterKind::Ribbon { bits_per_key: 1.0 },
        FilterKind::Ribbon { bits_per_key: 23.7 },
    ];
    for kind in kinds {
        let t = table(dir.path(), kind);
        assert_eq!(t.footer().version, FORMAT_VERSION_ALIGNED, "{kind}");
        let range = t.filter_in_place().unwrap_or_else(|| panic!("{kind}: the filter is a copy"));
        let block = t.footer().filter;
        assert!(block.offset < range.start && range.end < block.offset + u64::from(block.size), "{kind}");
        assert_eq!(range.start % 64, 0, "{kind}: the writer aligned the array");
        assert!(
            (0..5000u32).all(|i| t.filter_answer(format!("k{i:05}").as_bytes()) == FilterAnswer::MayContain)
        );
        let absent =
            (0..1000u32).filter(|i| t.filter_answer(format!("x{i}").as_bytes()) == FilterAnswer::Absent);
        let want = (1000.0 * (1.0 - kind.theoretical_fpr()) * 0.9) as usize;
        assert!(absent.count() > want, "{kind}: the filter rules keys out");
        assert!(verify_table(&StdFs, t.path()).unwrap().is_clean(), "{kind}");
    }
}

/// Through the database: the tables a flush writes are read in place,
/// under the default policy (Monkey over Ribbon below level 0) too.
#[test]
fn a_database_reads_its_tables_filters_in_place() {
    for policy in [Some(FilterPolicy::uniform(FilterKind::BinaryFuse16)), None] {
        database_reads_in_place(policy);
    }
}

fn database_reads_in_place(policy: Option<FilterPolicy>) {
    let dir = tempfile::tempdir().unwrap();
    let opts = || Options { filter_policy: policy.clone(), ..Options::default() };
    let db = Db::open(dir.path(), opts()).unwrap();
    for i in 0..20_000u32 {
        db.put(format!("k{i:05}").as_bytes(), b"v").unwrap();
    }
    db.compact().unwrap();
    db.close().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    assert_eq!(db.get(b"k00042").unwrap().as_deref(), Some(&b"v"[..]));
    let kinds: Vec<FilterKind> = db.stats().levels.iter().flat_map(|l| l.filter_kinds.clone()).collect();
    if policy.is_none() {
        assert!(kinds.iter().any(|k| matches!(k, FilterKind::Ribbon { .. })), "{kinds:?}");
    }
    let tables: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sst"))
        .collect();
    assert!(!tables.is_empty());
    for sst in tables {
        assert!(Table::open_path(&sst).unwrap().filter_in_place().is_some(), "{kinds:?}: {}", sst.display());
    }
}
