//! The compaction filter (issue 68, step 2): leveled merges remove exactly
//! the entries it says (as deletes: no older version comes back), change
//! the values it says, and never touch an entry a snapshot can see, even a
//! snapshot taken while the merge runs.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};

use parking_lot::Mutex;
use siftdb::{CompactionFilter, Db, Decision, Options};

/// `drop:` values are removed, `upper:` values upper-cased, the rest kept.
#[derive(Debug, Default)]
struct ByPrefix {
    /// Once, at the first call: say so, then wait to be let go.
    handshake: Mutex<Option<(Sender<()>, Receiver<()>)>>,
}

impl CompactionFilter for ByPrefix {
    fn filter(&self, _level: usize, _key: &[u8], value: &[u8]) -> Decision {
        if let Some((started, go)) = self.handshake.lock().take() {
            started.send(()).unwrap();
            go.recv().unwrap();
        }
        if value.starts_with(b"drop:") {
            Decision::Remove
        } else if value.starts_with(b"upper:") {
            Decision::ChangeValue(value.to_ascii_uppercase())
        } else {
            Decision::Keep
        }
    }
}

fn opts(filter: Arc<ByPrefix>) -> Options {
    Options {
        memtable_bytes: 16 << 10,
        base_level_bytes: 16 << 10,
        table_target_bytes: 8 << 10,
        hash_salt: Some(68),
        auto_compaction: false,
        compaction_filter: Some(filter),
        ..Options::default()
    }
}

fn key(i: u32) -> String {
    format!("key{i:06}")
}

fn get(db: &Db, i: u32) -> Option<String> {
    db.get(key(i)).unwrap().map(|v| String::from_utf8(v.to_vec()).unwrap())
}

#[test]
fn merges_remove_and_change_exactly_what_the_filter_says_and_nothing_older_returns() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Db::open(tmp.path(), opts(Arc::default())).unwrap();
    let n = 3000;
    for i in 0..n {
        db.put(key(i), format!("old-{i}")).unwrap();
    }
    db.compact().unwrap();
    assert_eq!(db.stats().compaction_filter_removed + db.stats().compaction_filter_changed, 0);
    for i in (0..n).filter(|i| i % 3 != 2) {
        let value = if i % 3 == 0 { format!("drop:{i}") } else { format!("upper:{i}") };
        db.put(key(i), value).unwrap();
    }
    // Still readable before any merge: the filter acts only in compaction.
    assert_eq!(get(&db, 0).as_deref(), Some("drop:0"));
    db.compact().unwrap();
    assert!(db.stats().levels.iter().skip(2).any(|l| l.tables > 0), "a tree of several levels");
    for i in 0..n {
        let want = match i % 3 {
            0 => None,
            1 => Some(format!("UPPER:{i}")),
            _ => Some(format!("old-{i}")),
        };
        assert_eq!(get(&db, i), want, "key {i}");
    }
    let stats = db.stats();
    assert_eq!((stats.compaction_filter_removed, stats.compaction_filter_changed), (1000, 1000));
    // The same after a reopen, and a scan agrees with the gets.
    db.close().unwrap();
    let db = Db::open(tmp.path(), opts(Arc::default())).unwrap();
    let scanned: Vec<_> = db.iter().collect::<Result<_, _>>().unwrap();
    assert_eq!(scanned.len(), 2000);
    assert_eq!(get(&db, 3), None);
}

#[test]
fn an_entry_a_snapshot_can_see_is_never_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Db::open(tmp.path(), opts(Arc::default())).unwrap();
    for i in 0..1000 {
        db.put(key(i), format!("drop:a{i}")).unwrap();
    }
    let snap = db.snapshot();
    for i in 1000..2000 {
        db.put(key(i), format!("drop:b{i}")).unwrap();
    }
    db.compact().unwrap();
    for i in 0..1000 {
        let want = Some(format!("drop:a{i}"));
        assert_eq!(snap.get(key(i)).unwrap().map(|v| String::from_utf8(v.to_vec()).unwrap()), want);
        assert_eq!(get(&db, i), want, "written before the snapshot: kept for everyone");
    }
    for i in 1000..2000 {
        assert_eq!(get(&db, i), None, "newer than every snapshot: removed");
        assert!(snap.get(key(i)).unwrap().is_none());
    }
    assert_eq!(db.stats().compaction_filter_removed, 1000);
}

#[test]
fn a_snapshot_taken_while_the_merge_runs_keeps_what_it_saw() {
    let tmp = tempfile::tempdir().unwrap();
    let filter = Arc::new(ByPrefix::default());
    let (started_tx, started_rx) = channel();
    let (go_tx, go_rx) = channel();
    *filter.handshake.lock() = Some((started_tx, go_rx));
    let db = Db::open(tmp.path(), opts(Arc::clone(&filter))).unwrap();
    for i in 0..1000 {
        db.put(key(i), format!("drop:{i}")).unwrap();
    }
    let compacting = {
        let db = db.clone();
        std::thread::spawn(move || db.compact())
    };
    // The merge has asked the filter about its first entry: a snapshot
    // now sees every entry, and must go on seeing them.
    started_rx.recv().unwrap();
    let snap = db.snapshot();
    assert_eq!(snap.get(key(7)).unwrap().as_deref(), Some(&b"drop:7"[..]));
    go_tx.send(()).unwrap();
    compacting.join().unwrap().unwrap();
    for i in 0..1000 {
        assert_eq!(snap.get(key(i)).unwrap().as_deref(), Some(format!("drop:{i}").as_bytes()), "key {i}");
    }
    assert_eq!(db.stats().compaction_filter_removed, 0, "the merge that removed them was not installed");
    drop(snap);
}
