//! A file from a newer siftdb is `Error::Unsupported`, not `Corruption`
//! (issue 26): a table whose footer declares a newer format, and a
//! database whose manifest does. Damage stays `Corruption`.

use std::path::{Path, PathBuf};

#[path = "common/format_patch.rs"]
mod format_patch;

use format_patch::{as_table_version_3, set_db_version, set_table_version};
use siftdb::fs::StdFs;
use siftdb::manifest::DB_FORMAT_VERSION;
use siftdb::table::{
    Entry, FORMAT_VERSION, FilterAnswer, FilterStatus, Table, TableBuilder, TableOptions, verify_table,
};
use siftdb::{Db, Error, Options};
use siftdb::{FilterKind, ValueKind};

/// A database with one table (holding `a`) and `b` in the live WAL.
fn db(dir: &Path) -> PathBuf {
    let db = Db::open(dir, Options::default()).unwrap();
    db.put(b"a", b"1").unwrap();
    db.flush().unwrap();
    db.put(b"b", b"2").unwrap();
    db.close().unwrap();
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "sst"))
        .unwrap()
}

#[test]
fn a_table_from_a_newer_build_is_unsupported() {
    let tmp = tempfile::tempdir().unwrap();
    let table = db(tmp.path());
    set_table_version(&table, FORMAT_VERSION + 1);
    for result in
        [Db::open(tmp.path(), Options::default()), Db::open_read_only(tmp.path(), Options::default())]
    {
        match result {
            Err(Error::Unsupported { file, format: "table", found, supported }) => {
                assert_eq!(
                    (file.as_deref(), found, supported),
                    (Some(&*table), FORMAT_VERSION + 1, FORMAT_VERSION)
                );
            }
            other => panic!("{other:?}"),
        }
    }
    let text = siftdb::table::Table::open_path(&table).unwrap_err().to_string();
    assert!(
        text.contains("written by a newer siftdb") && text.matches(table.to_str().unwrap()).count() == 1,
        "{text}"
    );

    // A version nobody wrote, or a damaged one, is damage.
    set_table_version(&table, 0);
    assert!(Db::open(tmp.path(), Options::default()).unwrap_err().is_corruption());
    let mut b = std::fs::read(&table).unwrap();
    let f = b.len() - 56;
    b[f + 36] = 7; // version 7, crc not recomputed
    std::fs::write(&table, b).unwrap();
    assert!(Db::open(tmp.path(), Options::default()).unwrap_err().is_corruption());
}

/// A table of format 3, from before filter blocks were aligned (issue 66):
/// it opens, its filter (copied, not read in place) answers, and it
/// verifies clean, with no gap before its filter block.
#[test]
fn a_version_3_table_still_opens_with_its_filter() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("000001.sst");
    let opts =
        TableOptions { filter: FilterKind::BlockedBloom { bits_per_key: 10.0 }, ..TableOptions::default() };
    let mut b = TableBuilder::create(&path, opts).unwrap();
    for i in 0..100u32 {
        b.add(format!("k{i:03}").as_bytes(), 1, ValueKind::Value, b"v").unwrap();
    }
    b.finish().unwrap();
    let before = std::fs::metadata(&path).unwrap().len();
    as_table_version_3(&path);
    let t = Table::open_path(&path).unwrap();
    assert_eq!(t.footer().version, 3);
    assert!(std::fs::metadata(&path).unwrap().len() <= before);
    assert_eq!(t.filter_details().status, FilterStatus::Loaded);
    assert_eq!(t.filter_in_place(), None, "a format-3 filter is copied");
    assert!((0..100u32).all(|i| t.filter_answer(format!("k{i:03}").as_bytes()) == FilterAnswer::MayContain));
    let absent = (0..100u32).filter(|i| t.filter_answer(format!("x{i}").as_bytes()) == FilterAnswer::Absent);
    assert!(absent.count() > 80, "the old table's filter rules keys out");
    assert_eq!(
        t.get(b"k042", 5).unwrap().entry,
        Some(Entry::Value { seq: 1, value: bytes::Bytes::from_static(b"v") })
    );
    assert!(verify_table(&StdFs, &path).unwrap().is_clean());
}

#[test]
fn a_database_from_a_newer_build_is_unsupported_and_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    db(tmp.path());
    let manifest = set_db_version(tmp.path(), u8::try_from(DB_FORMAT_VERSION + 1).unwrap());
    let before: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().path()).collect();
    for result in
        [Db::open(tmp.path(), Options::default()), Db::open_read_only(tmp.path(), Options::default())]
    {
        match result {
            Err(Error::Unsupported { file, format: "database", found, supported }) => {
                assert_eq!(
                    (file.as_deref(), found, supported),
                    (Some(&*manifest), DB_FORMAT_VERSION + 1, DB_FORMAT_VERSION)
                );
            }
            other => panic!("{other:?}"),
        }
    }
    let after: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(before, after, "a refused open changed the directory");

    // Back to this build's version: it opens, nothing lost.
    set_db_version(tmp.path(), u8::try_from(DB_FORMAT_VERSION).unwrap());
    let db = Db::open(tmp.path(), Options::default()).unwrap();
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(db.get(b"b").unwrap().as_deref(), Some(&b"2"[..]));
}

/// The fuzz corpus keeps an edit from a newer build (version 127, then a
/// tag this build has never heard of): it must stay newer than this build
/// as the format grows, and read as `Unsupported`, not as damage.
#[test]
fn the_corpus_edit_from_a_newer_build_is_unsupported() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/version_edit/newer-format");
    let bytes = std::fs::read(path).unwrap();
    match siftdb::manifest::VersionEdit::decode(&bytes) {
        Err(Error::Unsupported { format: "database", found, .. }) => assert!(found > DB_FORMAT_VERSION),
        other => panic!("{other:?}"),
    }
}

/// A copy of `tests/fixtures/newer_kind_db`: what a newer build would
/// leave, made from this build's files by `format_patch` (`fuse8` renamed
/// `grafite:12` in the manifest's policy and table record, the table's filter block tagged 99, the
/// database format declared 127): one level-0 table holding `a`, and `b`
/// in the live WAL.
fn newer_kind_copy() -> (tempfile::TempDir, PathBuf) {
    format_patch::fixture_copy("newer_kind_db")
}

#[test]
fn a_table_of_a_kind_from_a_newer_build_is_unsupported() {
    let (_tmp, dir) = newer_kind_copy();
    let manifest = std::fs::read(dir.join("MANIFEST-000002")).unwrap();
    let named = manifest.windows(10).filter(|w| w == b"grafite:12").count();
    assert_eq!(named, 2, "the fixture's policy and table record name the unknown kind");
    let before: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    for result in [Db::open(&dir, Options::default()), Db::open_read_only(&dir, Options::default())] {
        match result {
            Err(Error::Unsupported { format: "database", found: 127, supported, .. }) => {
                assert_eq!(supported, DB_FORMAT_VERSION);
            }
            other => panic!("{other:?}"),
        }
    }
    let mut after: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    after.retain(|p| p.file_name().is_some_and(|n| n != "LOCK"));
    assert_eq!(before, after, "a refused open changed the directory");

    // The same name under a version this build reads is damage: a build
    // that writes this version knows every kind it allows.
    set_db_version(&dir, u8::try_from(DB_FORMAT_VERSION).unwrap());
    let err = Db::open(&dir, Options::default()).unwrap_err();
    assert!(err.is_corruption() && err.to_string().contains("unknown filter"), "{err}");
}

/// A kind's version is what a database holding it records: a database
/// with a Ribbon table declares a version at least Ribbon's, so a build
/// from before Ribbon refuses it as newer.
#[test]
fn a_database_records_the_version_its_kinds_need() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = Options {
        filter_policy: Some(siftdb::FilterPolicy::uniform(siftdb::FilterKind::Ribbon { bits_per_key: 7.0 })),
        ..Options::default()
    };
    let db = Db::open(tmp.path(), opts).unwrap();
    db.put(b"a", b"1").unwrap();
    db.flush().unwrap();
    db.close().unwrap();
    let fs = siftdb::fs::StdFs;
    let current = siftdb::manifest::read_current(&fs, tmp.path()).unwrap();
    let bytes = std::fs::read(tmp.path().join(siftdb::manifest::manifest_file_name(current))).unwrap();
    let state = siftdb::manifest::replay(&bytes).unwrap().state;
    let ribbon = siftdb::FilterKind::Ribbon { bits_per_key: 7.0 }.first_db_format();
    assert!(ribbon > 5, "builds at format 5 without Ribbon exist");
    assert!(state.version.tables().any(|(_, t)| matches!(t.filter, siftdb::FilterKind::Ribbon { .. })));
    assert!(state.format_version.unwrap_or(1) >= ribbon, "{:?}", state.format_version);
}

/// Format 7 added tag 13 (lost writes) and nothing else: a database from
/// the build before (format 6, which wrote the same bytes but for the
/// version) opens, keeps its data, and is rewritten as format 7.
#[test]
fn a_format_6_database_opens_and_is_upgraded() {
    let tmp = tempfile::tempdir().unwrap();
    db(tmp.path());
    set_db_version(tmp.path(), 6);
    let db = Db::open(tmp.path(), Options::default()).unwrap();
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(db.get(b"b").unwrap().as_deref(), Some(&b"2"[..]));
    assert!(db.stats().lost_writes.is_empty());
    db.close().unwrap();
    let fs = siftdb::fs::StdFs;
    let current = siftdb::manifest::read_current(&fs, tmp.path()).unwrap();
    let bytes = std::fs::read(tmp.path().join(siftdb::manifest::manifest_file_name(current))).unwrap();
    assert_eq!(siftdb::manifest::replay(&bytes).unwrap().state.format_version, Some(DB_FORMAT_VERSION));
}

/// Format 9 gave a table record of one sequence number to every entry of
/// its file (ingest) and changed nothing else a format 8 build wrote: a
/// database from the build before opens, keeps its data, and is rewritten
/// as format 9 or later. (An older build meets format 9 first, as `Unsupported`.)
#[test]
fn a_format_8_database_opens_and_is_upgraded() {
    let tmp = tempfile::tempdir().unwrap();
    db(tmp.path());
    set_db_version(tmp.path(), 8);
    let db = Db::open(tmp.path(), Options::default()).unwrap();
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(db.get(b"b").unwrap().as_deref(), Some(&b"2"[..]));
    db.close().unwrap();
    let fs = siftdb::fs::StdFs;
    let current = siftdb::manifest::read_current(&fs, tmp.path()).unwrap();
    let bytes = std::fs::read(tmp.path().join(siftdb::manifest::manifest_file_name(current))).unwrap();
    assert_eq!(siftdb::manifest::replay(&bytes).unwrap().state.format_version, Some(DB_FORMAT_VERSION));
}

/// Format 10 added the filter memory budget (tag 14) and nothing else: a
/// format-9 database (which never has one) opens, keeps its data and its
/// unbudgeted plan, and is rewritten as format 10; a budget given then is
/// stored. (An older build meets format 10 first, as `Unsupported`, before
/// the tag it does not know.)
#[test]
fn a_format_9_database_opens_and_is_upgraded() {
    let tmp = tempfile::tempdir().unwrap();
    db(tmp.path());
    set_db_version(tmp.path(), 9);
    let db = Db::open(tmp.path(), Options::default()).unwrap();
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(db.get(b"b").unwrap().as_deref(), Some(&b"2"[..]));
    assert_eq!(db.options().filter_memory_bytes, None);
    db.close().unwrap();
    let state = || {
        let current = siftdb::manifest::read_current(&siftdb::fs::StdFs, tmp.path()).unwrap();
        let bytes = std::fs::read(tmp.path().join(siftdb::manifest::manifest_file_name(current))).unwrap();
        siftdb::manifest::replay(&bytes).unwrap().state
    };
    assert_eq!(state().format_version, Some(DB_FORMAT_VERSION));
    let db = Db::open(tmp.path(), Options { filter_memory_bytes: Some(4096), ..Options::default() }).unwrap();
    db.close().unwrap();
    assert_eq!(state().filter_memory_bytes, Some(4096));
}

/// Format 11 added the compaction strategy (tag 15) and what FIFO dropped
/// (tag 16), and nothing else: a format-10 database (which has neither)
/// opens, keeps its data, reports no drops, and is rewritten as format 11
/// naming the strategy it was opened with. (An older build meets format 11
/// first, as `Unsupported`, before the tags it does not know.)
#[test]
fn a_format_10_database_opens_and_is_upgraded() {
    let tmp = tempfile::tempdir().unwrap();
    db(tmp.path());
    set_db_version(tmp.path(), 10);
    let state = || {
        let current = siftdb::manifest::read_current(&siftdb::fs::StdFs, tmp.path()).unwrap();
        let bytes = std::fs::read(tmp.path().join(siftdb::manifest::manifest_file_name(current))).unwrap();
        siftdb::manifest::replay(&bytes).unwrap().state
    };
    assert_eq!(state().format_version, Some(10));
    let fifo = siftdb::Compaction::Fifo { max_bytes: Some(1 << 30), ttl: None };
    let db = Db::open(tmp.path(), Options { compaction: fifo, ..Options::default() }).unwrap();
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(db.get(b"b").unwrap().as_deref(), Some(&b"2"[..]));
    assert_eq!(db.stats().lifetime_fifo_dropped, siftdb::records::DropTotals::default());
    db.close().unwrap();
    assert_eq!(DB_FORMAT_VERSION, 11);
    assert_eq!(state().format_version, Some(11));
    assert_eq!(state().compaction.as_deref(), Some("fifo:max_bytes=1073741824"));
    let db = Db::open(tmp.path(), Options::default()).unwrap();
    db.close().unwrap();
    assert_eq!(state().compaction.as_deref(), Some("leveled"), "each open records its own");
}
