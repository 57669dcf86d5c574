//! The manifest is rewritten once it passes `manifest_roll_bytes`, so it
//! stays small however many flushes and compactions run, and the database
//! reopens from the new one.

mod common;

use siftdb::{Db, Options};

fn manifests(dir: &std::path::Path) -> Vec<(String, u64)> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().starts_with("MANIFEST-"))
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.metadata().unwrap().len()))
        .collect()
}

#[test]
fn manifest_rolls_over_and_reopens() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        memtable_bytes: 1024,
        hash_salt: Some(12),
        fs: common::no_sync_fs(),
        manifest_roll_bytes: 2048,
        l0_compaction_trigger: 2,
        base_level_bytes: 8192,
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    let first = manifests(dir.path());
    for i in 0..1500u32 {
        db.put(format!("k{i:05}").as_bytes(), [b'x'; 30]).unwrap();
    }
    db.flush().unwrap();
    // compact() waits for a background compaction (and its manifest edit).
    db.compact().unwrap();
    let s = db.stats();
    assert!(s.flushes + s.compactions > 30, "{s:?}");
    let now = manifests(dir.path());
    assert_eq!(now.len(), 1, "{now:?}");
    assert_ne!(now[0].0, first[0].0, "the manifest was never rolled");
    let snapshot_bound = 2048.max(2 * 200 * db.tables().len() as u64);
    assert!(now[0].1 < 2 * snapshot_bound, "{now:?}");
    drop(db);
    let db = Db::open(dir.path(), opts).unwrap();
    assert_eq!(db.iter().count(), 1500);
}
