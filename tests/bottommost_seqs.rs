//! A value every reader sees, merged where nothing deeper holds its key,
//! is written with sequence number 0 (`compaction::executor`'s
//! `bottommost`); versions a snapshot may still tell apart keep theirs, and
//! every read answers as before.

use siftdb::fs::StdFs;
use siftdb::table::Table;
use siftdb::{Compression, CompressionPolicy, Db, FilterKind, FilterPolicy, Options};

fn opts() -> Options {
    Options {
        memtable_bytes: 32 << 10,
        table_target_bytes: 16 << 10,
        // Level 1 holds everything: it is the deepest level, so every
        // merge into it writes where nothing lies below.
        base_level_bytes: 64 << 20,
        hash_salt: Some(69),
        auto_compaction: false,
        compression: CompressionPolicy::uniform(Compression::None),
        filter_policy: Some(FilterPolicy::uniform(FilterKind::BinaryFuse8)),
        ..Options::default()
    }
}

fn key(i: u32) -> String {
    format!("key{i:06}")
}

/// Every entry of every table: (level, key, seq).
fn entries(db: &Db) -> Vec<(usize, String, u64)> {
    let mut all = Vec::new();
    for t in db.tables() {
        let table = Table::open(&StdFs, &t.path).unwrap();
        for e in &table {
            let e = e.unwrap();
            all.push((t.level, String::from_utf8(e.user_key.to_vec()).unwrap(), e.seq));
        }
    }
    all
}

#[test]
fn settled_values_drop_their_sequence_numbers_but_not_what_a_snapshot_needs() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    for i in 0..3_000 {
        db.put(key(i), format!("v1-{i}")).unwrap();
    }
    db.delete_range(key(100), key(200)).unwrap();
    let snap = db.snapshot();
    let seen = snap.seq();
    // Newer than the snapshot: overwrites of every third key.
    for i in (0..3_000).step_by(3) {
        db.put(key(i), format!("v2-{i}")).unwrap();
    }
    db.flush().unwrap();
    db.compact().unwrap();

    let all = entries(&db);
    for (level, k, seq) in &all {
        assert_eq!(*level, 1, "{k}: one settled level");
        let i: u32 = k[3..].parse().unwrap();
        if *seq > seen {
            assert_eq!(i % 3, 0, "{k}: only the overwrites are newer than the snapshot");
        } else {
            // The newest version the snapshot sees, alone below it.
            assert_eq!(*seq, 0, "{k}: a version every reader sees keeps no sequence number");
        }
    }
    let overwritten = all.iter().filter(|e| e.2 > seen).count();
    assert_eq!(overwritten, 1_000, "every overwrite kept its number");
    // The snapshot's versions of the 2,900 keys it sees live (of the
    // overwritten ones too); the range tombstone and what it deleted are
    // gone.
    assert_eq!(all.len(), 1_000 + 2_900);

    for i in (0..3_000).step_by(7) {
        let deleted = (100..200).contains(&i);
        let old = (!deleted).then(|| format!("v1-{i}"));
        let new = if i % 3 == 0 { Some(format!("v2-{i}")) } else { old.clone() };
        assert_eq!(db.get(key(i)).unwrap().map(|v| String::from_utf8(v.to_vec()).unwrap()), new, "{i}");
        assert_eq!(
            snap.get(key(i)).unwrap().map(|v| String::from_utf8(v.to_vec()).unwrap()),
            old,
            "{i} at the snapshot"
        );
    }

    // With the snapshot gone, the next merge of the last level zeroes the
    // rest, and nothing reads differently; the numbers stay after a reopen.
    drop(snap);
    for i in (1..3_000).step_by(3) {
        db.put(key(i), format!("v3-{i}")).unwrap();
    }
    db.flush().unwrap();
    db.compact().unwrap();
    let before = db.snapshot().seq();
    drop(db);
    let db = Db::open(dir.path(), opts()).unwrap();
    assert_eq!(db.snapshot().seq(), before, "the sequence survives tables of zeros");
    assert!(entries(&db).iter().all(|e| e.2 == 0), "no snapshot: every settled version is at 0");
    for i in 0..3_000 {
        let want = match i % 3 {
            _ if (100..200).contains(&i) && i % 3 == 2 => None,
            0 => Some(format!("v2-{i}")),
            1 => Some(format!("v3-{i}")),
            _ => Some(format!("v1-{i}")),
        };
        assert_eq!(db.get(key(i)).unwrap().map(|v| String::from_utf8(v.to_vec()).unwrap()), want, "{i}");
    }
    db.put(key(5), "after").unwrap();
    assert_eq!(
        db.get(key(5)).unwrap().as_deref(),
        Some(&b"after"[..]),
        "a new write is newer than the zeros"
    );
}

#[test]
fn versions_above_a_deeper_level_keep_their_numbers() {
    let dir = tempfile::tempdir().unwrap();
    // Level 1 at 16 KiB: 3,000 keys spill into level 2.
    let db = Db::open(dir.path(), Options { base_level_bytes: 16 << 10, ..opts() }).unwrap();
    for i in 0..3_000 {
        db.put(key(i), format!("v1-{i}")).unwrap();
    }
    db.flush().unwrap();
    db.compact().unwrap();
    let levels = |db: &Db| db.tables().iter().map(|t| t.level).collect::<std::collections::BTreeSet<_>>();
    assert!(levels(&db).contains(&2), "the tree reaches level 2: {:?}", levels(&db));
    for i in (0..3_000).step_by(2) {
        db.put(key(i), format!("v2-{i}")).unwrap();
    }
    db.flush().unwrap();
    db.compact().unwrap();
    // The newer versions merged into level 1 over level 2's older ones:
    // zeroed, they would sort after them.
    let all = entries(&db);
    let deepest = all.iter().map(|e| e.0).max().unwrap();
    let zeroed_above: Vec<_> = all.iter().filter(|e| e.0 < deepest && e.2 == 0).take(3).collect();
    assert!(zeroed_above.is_empty(), "zeroed above level {deepest}: {zeroed_above:?}");
    let scanned: Vec<(String, String)> = db
        .range(..)
        .map(|kv| {
            let (k, v) = kv.unwrap();
            (String::from_utf8(k.to_vec()).unwrap(), String::from_utf8(v.to_vec()).unwrap())
        })
        .collect();
    let want: Vec<(String, String)> =
        (0..3_000).map(|i| (key(i), format!("{}-{i}", if i % 2 == 0 { "v2" } else { "v1" }))).collect();
    assert_eq!(scanned, want);
}
