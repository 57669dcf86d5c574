//! A table's filter is read in place from its mapping, not copied to the
//! heap (issue 66): its array lies inside the filter block of the file,
//! on a 64-byte boundary, and answers as the copy does.

use siftdb::filter::FilterKind;
use siftdb::fs::StdFs;
use siftdb::table::{FORMAT_VERSION, FilterAnswer, Table, TableBuilder, TableOptions, verify_table};
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
    ];
    for kind in kinds {
        let t = table(dir.path(), kind);
        assert_eq!(t.footer().version, FORMAT_VERSION, "{kind}");
        let range = t.filter_in_place().unwrap_or_else(|| panic!("{kind}: the filter is a copy"));
        let block = t.footer().filter;
        assert!(block.offset < range.start && range.end < block.offset + u64::from(block.size), "{kind}");
        assert_eq!(range.start % 64, 0, "{kind}: the writer aligned the array");
        assert!(
            (0..5000u32).all(|i| t.filter_answer(format!("k{i:05}").as_bytes()) == FilterAnswer::MayContain)
        );
        let absent =
            (0..1000u32).filter(|i| t.filter_answer(format!("x{i}").as_bytes()) == FilterAnswer::Absent);
        assert!(absent.count() > 950, "{kind}: the filter rules keys out");
        assert!(verify_table(&StdFs, t.path()).unwrap().is_clean(), "{kind}");
    }
    // Ribbon's queries read past its solution, into zeros a copy appends:
    // still copied.
    assert_eq!(table(dir.path(), FilterKind::Ribbon { bits_per_key: 10.0 }).filter_in_place(), None);
}

/// Through the database: the tables a flush writes are read in place.
#[test]
fn a_database_reads_its_tables_filters_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let opts = || Options {
        filter_policy: Some(FilterPolicy::uniform(FilterKind::BinaryFuse16)),
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts()).unwrap();
    for i in 0..2000u32 {
        db.put(format!("k{i:05}").as_bytes(), b"v").unwrap();
    }
    db.flush().unwrap();
    db.close().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    assert_eq!(db.get(b"k00042").unwrap().as_deref(), Some(&b"v"[..]));
    let sst = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "sst"))
        .unwrap();
    assert!(Table::open_path(&sst).unwrap().filter_in_place().is_some());
}
