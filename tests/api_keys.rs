//! Keys and values as users hold them (issue 29 step 1): byte slices,
//! arrays, `&str`, `String` and `Vec<u8>`, owned or borrowed, in every read
//! and write; ranges of any of them; `iter()` and `for … in &db` for the
//! whole database.

use siftdb::{Db, Options, WriteBatch};

#[test]
fn every_way_a_user_holds_a_key_compiles_and_works() -> Result<(), siftdb::Error> {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default())?;
    let key = String::from("user:1");
    let value: Vec<u8> = b"ada".to_vec();

    db.put("user:0", "grace")?;
    db.put(&key, &value)?;
    db.put(key.clone(), value.clone())?;
    db.put(b"user:2", [1u8, 2, 3])?;
    db.put(&b"user:3"[..], b"x".as_slice())?;
    assert_eq!(db.get(&key)?.as_deref(), Some(&b"ada"[..]));
    assert_eq!(db.get("user:0")?.as_deref(), Some(&b"grace"[..]));
    assert_eq!(db.get(b"user:2")?.as_deref(), Some(&[1u8, 2, 3][..]));
    let owned: Vec<u8> = b"user:1".to_vec();
    assert_eq!(db.get(owned)?.as_deref(), Some(&b"ada"[..]));

    let mut batch = WriteBatch::new();
    batch.put("k", "v");
    batch.delete(&key);
    db.write(batch)?;
    assert!(db.get(&key)?.is_none());
    db.delete("k")?;
    assert!(db.get("k")?.is_none());

    let keys = |it: siftdb::DbIter| -> Vec<String> {
        it.map(|r| String::from_utf8(r.unwrap().0.to_vec()).unwrap()).collect()
    };
    assert_eq!(keys(db.range("user:0".."user:2")), ["user:0"]);
    assert_eq!(keys(db.range(b"user:0"..b"user:3")), ["user:0", "user:2"]);
    assert_eq!(keys(db.range("user:2"..="user:3")), ["user:2", "user:3"]);
    assert_eq!(keys(db.range(String::from("user:3")..)), ["user:3"]);
    assert_eq!(keys(db.prefix("user:")), ["user:0", "user:2", "user:3"]);
    assert_eq!(keys(db.iter()), ["user:0", "user:2", "user:3"]);
    assert_eq!(keys(db.range(..)), ["user:0", "user:2", "user:3"]);
    assert_eq!(keys(db.range(..="user:2")), ["user:0", "user:2"]);
    let lo = std::ops::Bound::Excluded(b"user:0".as_slice());
    assert_eq!(keys(db.range((lo, std::ops::Bound::Unbounded))), ["user:2", "user:3"]);
    assert_eq!((&db).into_iter().count(), 3);
    let mut n = 0;
    for item in &db {
        item?;
        n += 1;
    }
    assert_eq!(n, 3);

    let snap = db.snapshot();
    db.put("user:4", "later")?;
    assert!(snap.get("user:4")?.is_none());
    assert_eq!(keys(snap.range("user:2"..)), ["user:2", "user:3"]);
    assert_eq!(keys(snap.prefix(b"user:")).len(), 3);
    assert_eq!(keys(snap.iter()).len(), 3);
    assert_eq!((&snap).into_iter().count(), 3);
    Ok(())
}
