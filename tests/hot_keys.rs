//! A key overwritten many times (a hot key): a scan passes its older
//! versions in the memtable with a seek (`MemtableRange::newest_only`), and
//! still sees, at every snapshot, the version that snapshot should.

use bytes::Bytes;
use siftdb::{Db, Options};

fn pairs(it: impl Iterator<Item = siftdb::Result<(Bytes, Bytes)>>) -> Vec<(String, String)> {
    it.map(|r| {
        let (k, v) = r.unwrap();
        (String::from_utf8(k.to_vec()).unwrap(), String::from_utf8(v.to_vec()).unwrap())
    })
    .collect()
}

fn kv(k: &str, v: &str) -> (String, String) {
    (k.to_owned(), v.to_owned())
}

#[test]
fn scans_pass_a_hot_keys_versions_at_every_snapshot() {
    for flush_midway in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), Options::default()).unwrap();
        db.put(b"a", b"a").unwrap();
        db.put(b"hh", b"first").unwrap();
        let mut snaps = Vec::new();
        for i in 0..100 {
            db.put(b"h", format!("{i}")).unwrap();
            if i == 30 || i == 75 {
                snaps.push((i, db.snapshot()));
            }
            if flush_midway && i == 50 {
                db.flush().unwrap();
            }
        }
        db.put(b"z", b"z").unwrap();

        let now = [kv("a", "a"), kv("h", "99"), kv("hh", "first"), kv("z", "z")];
        assert_eq!(pairs(db.iter()), now, "flush midway: {flush_midway}");
        assert_eq!(pairs(db.iter().rev()), now.iter().rev().cloned().collect::<Vec<_>>());
        assert_eq!(pairs(db.range(&b"h"[..]..)), now[1..]);
        assert_eq!(pairs(db.range(&b"b"[..]..&b"y"[..])), now[1..3]);
        for (i, snap) in &snaps {
            let then = [kv("a", "a"), kv("h", &i.to_string()), kv("hh", "first")];
            assert_eq!(pairs(snap.iter()), then, "snapshot after write {i}, flush midway: {flush_midway}");
            assert_eq!(pairs(snap.iter().rev()), then.iter().rev().cloned().collect::<Vec<_>>());
            assert_eq!(pairs(snap.range(&b"h"[..]..)), then[1..]);
        }
    }
}

/// A flush writes of a hot key only what some reader may still read: the
/// newest version, and the versions newer than the oldest live snapshot
/// with the one that snapshot sees. Before, every version went to level 0
/// and each scan passing the key stepped through them all. Tombstones stay
/// (only a compaction knows what lies deeper).
#[test]
fn a_flush_keeps_only_the_versions_a_reader_may_read() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    db.put(b"a", b"a").unwrap();
    db.put(b"x", b"x").unwrap();
    db.delete(b"x").unwrap();
    for i in 0..100 {
        db.put(b"h", format!("{i}")).unwrap();
    }
    db.flush().unwrap();
    let entries = |db: &Db| db.tables().iter().map(|t| t.record.entries).collect::<Vec<_>>();
    // a, x's tombstone (its value dropped), h's newest.
    assert_eq!(entries(&db), [3]);
    assert_eq!(db.get(b"x").unwrap(), None);
    assert_eq!(db.get(b"h").unwrap().as_deref(), Some(&b"99"[..]));

    let mut snap = None;
    for i in 0..100 {
        db.put(b"g", format!("{i}")).unwrap();
        if i == 30 {
            snap = Some(db.snapshot());
        }
    }
    db.flush().unwrap();
    // Level 0, newest first: g's versions 30 (what the snapshot sees) to 99.
    assert_eq!(entries(&db), [70, 3]);
    let snap = snap.unwrap();
    assert_eq!(snap.get(b"g").unwrap().as_deref(), Some(&b"30"[..]));
    assert_eq!(db.get(b"g").unwrap().as_deref(), Some(&b"99"[..]));
    assert_eq!(pairs(snap.iter()), [kv("a", "a"), kv("g", "30"), kv("h", "99")]);
    assert_eq!(pairs(db.iter().rev()), [kv("h", "99"), kv("g", "99"), kv("a", "a")]);
}
