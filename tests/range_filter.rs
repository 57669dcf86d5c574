//! Range filters in a database (issue 73): every table a flush, a
//! compaction or an ingest writes carries one; tables from before range
//! filters still read; a scan's answers never change.

use std::path::{Path, PathBuf};

use siftdb::fs::StdFs;
use siftdb::table::{FORMAT_VERSION, FORMAT_VERSION_ALIGNED, FilterAnswer, Table, verify_table};
use siftdb::{Db, KeyImage, Options, RangeFilterPolicy, TableWriter};

fn tables(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sst"))
        .collect();
    v.sort();
    v
}

fn key(i: u64) -> [u8; 8] {
    (i << 24).to_be_bytes()
}

#[test]
fn flushes_compactions_and_ingests_write_range_filters() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = Options { range_filter: Some(RangeFilterPolicy::default()), ..Options::default() };
    let db = Db::open(tmp.path(), opts.clone()).unwrap();
    for round in 0..3u64 {
        for i in (round..3000).step_by(3) {
            db.put(key(i), b"v").unwrap();
        }
        db.flush().unwrap();
    }
    let ingested = tmp.path().join("ingest.tmp-sst");
    let mut w = TableWriter::create(&ingested, &opts).unwrap();
    for i in 5000..5100u64 {
        w.add(key(i), b"i").unwrap();
    }
    w.finish().unwrap();
    db.ingest([&ingested]).unwrap();
    let img = KeyImage::first_bytes();
    let check = |what: &str| {
        let found = tables(tmp.path());
        assert!(!found.is_empty());
        for path in found {
            let t = Table::open(&StdFs, &path).unwrap();
            assert_eq!(t.footer().version, FORMAT_VERSION, "{what}: {}", path.display());
            assert!(t.range_filter().is_some(), "{what}");
            assert!(verify_table(&StdFs, &path).unwrap().is_clean(), "{what}");
            // Its keys answer "maybe"; a range of 256 halfway between two
            // neighbours (2^24 or more apart) nearly always "empty".
            let first = img.image(t.properties().smallest_key.as_deref().unwrap());
            assert_eq!(t.range_answer(&img, first, first), FilterAnswer::MayContain);
            let gaps = (0..5100u64).map(|i| ((i << 24) + (1 << 23), (i << 24) + (1 << 23) + 255));
            let skipped =
                gaps.filter(|&(lo, hi)| t.range_answer(&img, lo, hi) == FilterAnswer::Absent).count();
            assert!(skipped > 5000, "{what}: {skipped} of 5100 skipped");
        }
    };
    check("flushed and ingested");
    db.compact().unwrap();
    check("compacted");
    for i in (0..3000u64).chain(5000..5100) {
        assert!(db.get(key(i)).unwrap().is_some(), "{i}");
    }
    db.close().unwrap();
}

/// A table an older build wrote (format 4, `fixtures/aligned_filter`, keys
/// `i * 1000` big-endian for `i < 2000`) reads as before, and is never
/// skipped by range: it has no range filter to ask.
#[test]
fn a_table_from_before_range_filters_still_reads() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/aligned_filter/t.sst");
    let t = Table::open(&StdFs, &path).unwrap();
    assert_eq!(t.footer().version, FORMAT_VERSION_ALIGNED);
    assert!(t.range_filter().is_none() && t.range_filter_dropped().is_none());
    assert_eq!(t.properties().range_filter_block, None);
    assert_eq!(t.range_answer(&KeyImage::first_bytes(), 1, 999), FilterAnswer::NoFilter);
    for i in 0..2000u64 {
        let e = t.get(&(i * 1000).to_be_bytes(), u64::MAX >> 8).unwrap().entry;
        assert!(e.is_some(), "{i}");
    }
    assert!(verify_table(&StdFs, &path).unwrap().is_clean());
}
