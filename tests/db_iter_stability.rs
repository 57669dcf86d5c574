//! An open iterator keeps reading the state it started on while flushes and
//! compactions replace (and delete) the tables under it.

mod common;

use siftdb::{Db, Options};

#[test]
fn iterator_survives_flush_and_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        memtable_bytes: 4096,
        hash_salt: Some(8),
        fs: common::no_sync_fs(),
        l0_compaction_trigger: 2,
        base_level_bytes: 8192,
        table_target_bytes: 4096,
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    for i in 0..2000u32 {
        db.put(format!("k{i:05}").as_bytes(), b"first").unwrap();
    }
    db.flush().unwrap();
    let mut it = db.iter();
    let head: Vec<_> = it.by_ref().take(10).map(|r| r.unwrap()).collect();
    let tables_before: Vec<_> = db.tables().into_iter().map(|t| t.path).collect();
    // Rewrite everything, flush and compact: the iterator's tables leave the tree.
    for i in 0..2000u32 {
        db.put(format!("k{i:05}").as_bytes(), b"second").unwrap();
    }
    db.delete(b"k01000").unwrap();
    db.flush().unwrap();
    db.compact().unwrap();
    let now: Vec<_> = db.tables().into_iter().map(|t| t.path).collect();
    assert!(tables_before.iter().any(|p| !now.contains(p)), "compaction replaced no table");
    let rest: Vec<_> = it.map(|r| r.unwrap()).collect();
    assert_eq!(head.len() + rest.len(), 2000);
    assert!(head.iter().chain(&rest).all(|(_, v)| &v[..] == b"first"));
    assert_eq!(db.get(b"k00001").unwrap().as_deref(), Some(&b"second"[..]));
    assert_eq!(db.iter().count(), 1999);
    // Once the iterator is gone, the replaced files are deleted.
    assert!(tables_before.iter().filter(|p| !now.contains(p)).all(|p| !p.exists()));
}
