//! What an open table holds on the heap (issue 66): a filter read in place
//! from the mapping holds only its descriptor there (112 bytes for fuse8
//! on x86-64), a copied one its decoded size; an index holds its
//! decompressed contents, or nothing when it is a view of the mapping.
//! Which kinds are read in place is asked of the table
//! (`filter_in_place`), not assumed, so these hold as kinds move from
//! copied to in place.

use siftdb::filter::FilterKind;
use siftdb::table::{Compression, Table, TableBuilder, TableOptions};
use siftdb::{Db, FilterPolicy, Options, ValueKind};

/// The most a filter read in place may hold on the heap: its descriptor.
const DESCRIPTOR_BYTES: u64 = 256;

fn tables(dir: &std::path::Path) -> Vec<Table> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sst"))
        .collect();
    paths.sort();
    paths.iter().map(|p| Table::open_path(p).unwrap()).collect()
}

/// Writes 20,000 keys under `kind` on every level, and checks each table's
/// filter heap bytes against whether it is read in place; the database's
/// stats sum the same. Returns the filter bytes, the filter heap bytes
/// and the tables, in all, and whether the filters are read in place.
fn database_under(kind: FilterKind) -> (u64, u64, u64, bool) {
    let dir = tempfile::tempdir().unwrap();
    let opts = || Options {
        filter_policy: Some(FilterPolicy::uniform(kind)),
        memtable_bytes: 256 << 10,
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts()).unwrap();
    for i in 0..20_000u32 {
        db.put(format!("key{i:08}").as_bytes(), [7u8; 32]).unwrap();
    }
    db.flush().unwrap();
    db.wait_for_background_work().unwrap();
    db.close().unwrap();
    drop(db);
    // Read-only: no compaction changes the tables under the comparison.
    let db = Db::open_read_only(dir.path(), opts()).unwrap();
    let (mut heap, mut in_place) = (0, None);
    let list = tables(dir.path());
    assert!(!list.is_empty());
    for t in &list {
        let block = u64::from(t.footer().filter.size);
        let here = t.filter_in_place().is_some();
        assert!(*in_place.get_or_insert(here) == here, "{kind}: every table of one kind reads alike");
        if here {
            // Its descriptor, and any small part a kind may still copy.
            let most = DESCRIPTOR_BYTES + block / 10;
            assert!(t.filter_heap_bytes() <= most, "{kind}: {} of {block}", t.filter_heap_bytes());
        } else {
            // The decoded filter holds at least its block's array.
            assert!(t.filter_heap_bytes() >= block * 9 / 10, "{kind}: {} of {block}", t.filter_heap_bytes());
        }
        heap += t.filter_heap_bytes();
    }
    let stats = db.stats();
    assert_eq!(stats.heap_bytes().0, heap, "{kind}: the stats sum the tables");
    let filter_bytes = stats.filter_bytes();
    assert!(filter_bytes > 10_000, "{kind}: {filter_bytes}");
    (filter_bytes, heap, list.len() as u64, in_place.unwrap_or(false))
}

#[test]
fn filters_read_in_place_hold_only_a_descriptor_and_copies_their_size() {
    let (bytes, heap, tables, in_place) = database_under(FilterKind::BinaryFuse8);
    assert!(in_place, "fuse8 is read in place");
    assert!(heap <= tables * DESCRIPTOR_BYTES, "fuse8: {heap} heap bytes for {bytes} filter bytes");
    // Ribbon is copied at the time of writing; whichever it is, the heap
    // bytes say so.
    let (bytes, heap, _, in_place) = database_under(FilterKind::Ribbon { bits_per_key: 10.0 });
    if in_place {
        assert!(heap * 4 < bytes, "ribbon in place: {heap} heap bytes for {bytes} filter bytes");
    } else {
        assert!(heap >= bytes * 9 / 10, "ribbon copied: {heap} heap bytes for {bytes} filter bytes");
    }
}

#[test]
fn a_table_without_a_filter_holds_none() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("none.sst");
    let opts = TableOptions { filter: FilterKind::None, ..TableOptions::default() };
    let mut b = TableBuilder::create(&path, opts).unwrap();
    b.add(b"k", 1, ValueKind::Value, b"v").unwrap();
    b.finish().unwrap();
    assert_eq!(Table::open_path(&path).unwrap().filter_heap_bytes(), 0);
}

/// A raw index is a view of the mapping, whatever the data's codec (the
/// writer stores indexes raw); an older table's compressed index is
/// decompressed into a buffer of its own, whose bytes count.
#[test]
fn an_index_counts_only_a_decompressed_copy() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, compression: Compression| {
        let path = dir.path().join(name);
        let opts = TableOptions { compression, block_bytes: 256, ..TableOptions::default() };
        let mut b = TableBuilder::create(&path, opts).unwrap();
        for i in 0..5000u32 {
            b.add(format!("a-long-and-repetitive-key-{i:08}").as_bytes(), 1, ValueKind::Value, b"value")
                .unwrap();
        }
        b.finish().unwrap();
        Table::open_path(&path).unwrap()
    };
    assert_eq!(write("raw.sst", Compression::None).index_heap_bytes(), 0);
    assert_eq!(write("lz4.sst", Compression::Lz4).index_heap_bytes(), 0);
    // tests/fixtures/compressed_index/t.sst: written before indexes were
    // stored raw, its index lz4-compressed.
    let old = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/compressed_index/t.sst");
    let t = Table::open_path(&old).unwrap();
    let stored = u64::from(t.footer().index.size);
    let held = t.index_heap_bytes();
    assert!(held > stored, "index: {held} bytes held, {stored} stored");
}
