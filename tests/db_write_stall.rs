//! Writes slow down and stop when level 0 fills faster than compaction
//! empties it, and still all land.

mod common;

use siftdb::{Db, Options};

#[test]
fn full_level_zero_stalls_writes_without_losing_them() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        memtable_bytes: 1024,
        hash_salt: Some(6),
        fs: common::no_sync_fs(),
        l0_compaction_trigger: 2,
        l0_slowdown_trigger: 2,
        l0_stop_trigger: 3,
        base_level_bytes: 1 << 20,
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    for i in 0..3000u32 {
        db.put(format!("k{i:05}").as_bytes(), [b'v'; 40]).unwrap();
        assert!(
            db.tables().iter().filter(|t| t.level == 0).count() <= opts.l0_stop_trigger + 2,
            "flushes of at most two frozen memtables pass the stop"
        );
    }
    let s = db.stats();
    assert!(s.write_stalls > 0, "{s:?}");
    // Each slowed write sleeps a millisecond, so the stalls took at least
    // a millisecond each on the whole (stops may take less).
    assert!(s.write_stall_micros >= 1000, "{s:?}");
    assert!(s.to_string().contains(&format!("writes stalled {} times for ", s.write_stalls)), "{s}");
    assert!(s.compactions > 0);
    assert_eq!(db.iter().count(), 3000);
}
