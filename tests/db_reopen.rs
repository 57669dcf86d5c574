//! Reopening after a clean close and after a drop without close: every
//! write is there, and the directory holds no leftover files.

use siftdb::{Db, Options};

fn opts() -> Options {
    Options { memtable_bytes: 4096, hash_salt: Some(4), ..Options::default() }
}

fn write_some(db: &Db, from: u32) {
    for i in from..from + 300 {
        db.put(format!("key{i:05}").as_bytes(), format!("value{i}").as_bytes()).unwrap();
    }
}

fn check(db: &Db, upto: u32) {
    for i in 0..upto {
        let v = db.get(format!("key{i:05}").as_bytes()).unwrap();
        assert_eq!(v.as_deref(), Some(format!("value{i}").as_bytes()), "key{i:05}");
    }
    assert_eq!(db.iter().count(), upto as usize);
}

#[test]
fn reopen_after_close_and_after_drop() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    write_some(&db, 0);
    db.close().unwrap();
    drop(db);
    let db = Db::open(dir.path(), opts()).unwrap();
    check(&db, 300);
    write_some(&db, 300);
    drop(db); // no close
    let db = Db::open(dir.path(), opts()).unwrap();
    check(&db, 600);
    assert_eq!(db.hash_salt(), 4);
    drop(db);
    // A different salt option does not change an existing database's salt.
    let db = Db::open(dir.path(), Options { hash_salt: Some(99), ..opts() }).unwrap();
    assert_eq!(db.hash_salt(), 4);
    let tables = db.tables();
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");
    assert_eq!(names.iter().filter(|n| n.starts_with("MANIFEST-")).count(), 1, "{names:?}");
    assert_eq!(names.iter().filter(|n| n.ends_with(".sst")).count(), tables.len(), "{names:?}");
}

#[test]
fn random_salts_differ_between_databases() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let o = Options { hash_salt: None, ..opts() };
    let sa = Db::open(a.path(), o.clone()).unwrap().hash_salt();
    let sb = Db::open(b.path(), o.clone()).unwrap().hash_salt();
    assert_ne!(sa, sb);
    assert_eq!(Db::open(a.path(), o).unwrap().hash_salt(), sa, "the salt is kept across opens");
}
