//! With `sync`, concurrent writers share fsyncs, and every acknowledged
//! write is visible.

use siftdb::{Db, Options};

#[test]
fn concurrent_synced_writers_share_fsyncs() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        sync: true,
        hash_salt: Some(2),
        filter_policy: Some(siftdb::policy::FilterPolicy::per_level(vec![])),
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    let threads: Vec<_> = (0..8u32)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                for i in 0..100u32 {
                    let k = format!("t{t}-{i}");
                    db.put(k.as_bytes(), b"v").unwrap();
                    assert!(db.get(k.as_bytes()).unwrap().is_some(), "acknowledged write {k} not visible");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let s = db.stats();
    assert_eq!(s.writes, 800);
    assert!(s.wal_syncs >= 1 && s.wal_syncs < s.writes, "syncs {} for {} writes", s.wal_syncs, s.writes);
    assert_eq!(db.iter().count(), 800);
}
