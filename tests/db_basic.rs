//! Basic behaviour of the public API: put/get/delete, batches, ranges,
//! prefixes, snapshots, flush and reopen.

use siftdb::{Db, Options, WriteBatch};

fn small() -> Options {
    Options { memtable_bytes: 2048, hash_salt: Some(7), ..Options::default() }
}

#[test]
fn put_get_delete_flush_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small()).unwrap();
    for i in 0..500u32 {
        db.put(format!("k{i:04}").as_bytes(), format!("v{i}").as_bytes()).unwrap();
    }
    db.delete(b"k0007").unwrap();
    let mut b = WriteBatch::new();
    b.put(b"a", b"1");
    b.delete(b"k0008");
    db.write(b).unwrap();
    db.flush().unwrap();
    assert!(db.stats().flushes > 0);
    assert_eq!(db.get(b"k0009").unwrap().as_deref(), Some(&b"v9"[..]));
    assert_eq!(db.get(b"k0007").unwrap(), None);
    assert_eq!(db.get(b"k0008").unwrap(), None);
    let keys: Vec<_> = db.prefix(b"k000").map(|r| r.unwrap().0).collect();
    assert_eq!(keys.len(), 8, "{keys:?}");
    let snap = db.snapshot();
    db.put(b"k0009", b"new").unwrap();
    assert_eq!(snap.get(b"k0009").unwrap().as_deref(), Some(&b"v9"[..]));
    assert_eq!(db.get(b"k0009").unwrap().as_deref(), Some(&b"new"[..]));
    drop(snap);
    db.close().unwrap();
    drop(db);
    let db = Db::open(dir.path(), small()).unwrap();
    assert_eq!(db.get(b"k0009").unwrap().as_deref(), Some(&b"new"[..]));
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(db.iter().count(), 500 - 2 + 1);
}
