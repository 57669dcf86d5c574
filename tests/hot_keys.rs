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
