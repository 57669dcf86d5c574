//! A file from a newer siftdb is `Error::Unsupported`, not `Corruption`
//! (issue 26): a table whose footer declares a newer format, and a
//! database whose manifest does. Damage stays `Corruption`.

use std::path::{Path, PathBuf};

#[path = "common/format_patch.rs"]
mod format_patch;

use format_patch::{set_db_version, set_table_version};
use siftdb::manifest::DB_FORMAT_VERSION;
use siftdb::table::FORMAT_VERSION;
use siftdb::{Db, Error, Options};

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
