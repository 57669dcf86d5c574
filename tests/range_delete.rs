//! Range deletes, case by case: what one hides and what it does not, in
//! the memtable, after a crash, in tables behind filters, and in a
//! database an older build made. (`range_delete_model.rs` runs them at
//! random against a model.)

#[path = "common/format_patch.rs"]
mod format_patch;
#[path = "common/oracle.rs"]
mod oracle;

use std::sync::Arc;

use siftdb::fs::{CrashMode, FaultFs, StdFs};
use siftdb::table::{FilterAnswer, Table};
use siftdb::{Db, Error, FilterKind, FilterPolicy, Options, WriteBatch};

fn opts() -> Options {
    Options {
        auto_compaction: false,
        hash_salt: Some(9),
        // A filter on every table, however small.
        filter_policy: Some(FilterPolicy::uniform(FilterKind::BlockedBloom { bits_per_key: 10.0 })),
        ..Options::default()
    }
}

fn keys(db: &Db) -> Vec<String> {
    db.iter().map(|kv| String::from_utf8(kv.unwrap().0.to_vec()).unwrap()).collect()
}

fn keys_rev(db: &Db) -> Vec<String> {
    db.iter().rev().map(|kv| String::from_utf8(kv.unwrap().0.to_vec()).unwrap()).collect()
}

#[test]
fn an_empty_or_reversed_range_is_an_error_and_refuses_its_whole_batch() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    db.put("b", "1").unwrap();
    for (start, end) in [("b", "b"), ("c", "a")] {
        let err = db.delete_range(start, end).unwrap_err();
        assert!(matches!(&err, Error::InvalidArgument(m) if m.contains("must sort before end")), "{err}");
    }
    let mut batch = WriteBatch::new();
    batch.put("a", "1");
    batch.delete_range("z", "y");
    assert!(matches!(db.write(batch), Err(Error::InvalidArgument(_))));
    assert_eq!(keys(&db), ["b"], "nothing of the refused batch applied");
    let huge = vec![b'k'; siftdb::MAX_KEY_BYTES + 1];
    assert!(matches!(db.delete_range("a", &huge), Err(Error::InvalidArgument(_))));
}

#[test]
fn a_range_delete_hides_only_what_was_written_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    for k in ["a", "b", "b\0", "ba", "c", "d"] {
        db.put(k, "old").unwrap();
    }
    let before = db.snapshot();
    db.delete_range("b", "c").unwrap();
    db.put("bb", "new").unwrap();
    assert_eq!(keys(&db), ["a", "bb", "c", "d"]);
    assert_eq!(keys_rev(&db), ["d", "c", "bb", "a"]);
    assert_eq!(db.get("b").unwrap(), None);
    assert_eq!(db.get("c").unwrap().as_deref(), Some(&b"old"[..]), "the end is not deleted");
    assert_eq!(db.get("bb").unwrap().as_deref(), Some(&b"new"[..]));
    let prefixed: Vec<_> = db.prefix("b").map(|kv| kv.unwrap().0).collect();
    assert_eq!(prefixed, ["bb"]);
    // The snapshot from before sees every old key, whatever happens next.
    let old = ["a", "b", "b\0", "ba", "c", "d"];
    assert_eq!(before.iter().count(), old.len());
    db.flush().unwrap();
    db.compact().unwrap();
    for k in old {
        assert_eq!(before.get(k).unwrap().as_deref(), Some(&b"old"[..]), "{k:?}");
    }
    assert_eq!(before.iter().rev().count(), old.len());
    assert_eq!(keys(&db), ["a", "bb", "c", "d"]);
    // A batch's later put in the range survives the batch's range delete.
    let mut batch = WriteBatch::new();
    batch.delete_range("a", "z");
    batch.put("m", "in the same batch, after");
    db.write(batch).unwrap();
    assert_eq!(keys(&db), ["m"]);
}

/// Issue 60, done when: a range tombstone in a newer table covers a key
/// whose older table's filter answers "present" and whose newer table's
/// filter (the tombstone's own table) answers "absent"; the read returns
/// nothing, and so does a key only the newer table's filter rules out.
#[test]
fn a_filter_that_answers_absent_does_not_hide_its_tables_tombstones() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    db.put("k1", "old").unwrap();
    db.put("k5", "old").unwrap();
    db.flush().unwrap();
    db.delete_range("k0", "k9").unwrap();
    db.put("z", "newer table's only key").unwrap();
    db.flush().unwrap();
    let tables = db.tables();
    assert_eq!(tables.len(), 2);
    let (newer, older) = (&tables[0], &tables[1]);
    assert!(newer.record.max_seq > older.record.max_seq);
    let open = |path| Table::open(&StdFs, path).unwrap();
    let (newer_t, older_t) = (open(&newer.path), open(&older.path));
    assert_eq!(newer_t.range_dels().map(|d| d.len()), Some(1));
    for k in [&b"k1"[..], b"k5"] {
        assert_eq!(older_t.filter_answer(k), FilterAnswer::MayContain, "{k:?}");
        assert_eq!(newer_t.filter_answer(k), FilterAnswer::Absent, "{k:?}");
        assert_eq!(db.get(k).unwrap(), None, "{k:?}");
    }
    // The newer table's range covers its tombstone, so it is a candidate.
    assert_eq!((newer.record.smallest.as_slice(), newer.record.largest.as_slice()), (&b"k0"[..], &b"z"[..]));
    assert_eq!(keys(&db), ["z"]);
    // Compacted into one table, the tombstone keeps hiding the older version.
    db.compact().unwrap();
    assert_eq!(db.get("k1").unwrap(), None);
    assert_eq!(keys_rev(&db), ["z"]);
    drop(db);
    let db = Db::open(dir.path(), opts()).unwrap();
    assert_eq!((db.get("k5").unwrap(), keys(&db)), (None, vec!["z".to_owned()]));
}

#[test]
fn range_deletes_in_the_wal_replay_after_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    let o = || Options { fs: Arc::new(fs.clone()), sync: true, ..opts() };
    let db = Db::open(dir.path(), o()).unwrap();
    for i in 0..20 {
        db.put(format!("k{i:02}"), "v").unwrap();
    }
    db.flush().unwrap();
    db.delete_range("k05", "k15").unwrap();
    let mut batch = WriteBatch::new();
    batch.delete_range("k00", "k02");
    batch.put("k01", "rewritten");
    db.write(batch).unwrap();
    fs.fail_after(siftdb::fs::FaultOp::Any, 0);
    drop(db);
    fs.crash(CrashMode::DropUnsynced).unwrap();
    fs.disable_faults();
    let db = Db::open(dir.path(), o()).unwrap();
    let want: Vec<String> = ["k01", "k02", "k03", "k04"]
        .into_iter()
        .map(String::from)
        .chain((15..20).map(|i| format!("k{i:02}")))
        .collect();
    assert_eq!(keys(&db), want);
    assert_eq!(db.get("k01").unwrap().as_deref(), Some(&b"rewritten"[..]));
    assert_eq!(db.get("k10").unwrap(), None);
    // And as every crash test checks: the whole contents, three ways.
    let put = |k: &str, v: &str| oracle::Write::Put(k.into(), v.into());
    let range = |a: &str, b: &str| oracle::Write::DeleteRange(a.into(), b.into());
    let mut acked: Vec<Vec<oracle::Write>> = (0..20).map(|i| vec![put(&format!("k{i:02}"), "v")]).collect();
    acked.push(vec![range("k05", "k15")]);
    acked.push(vec![range("k00", "k02"), put("k01", "rewritten")]);
    oracle::check(&db, &oracle::Model::new(), &acked, &[], "range deletes replayed from the WAL");
}

/// A database an older build made (format 1, `fixtures/pre_policy_db`)
/// takes range deletes, and records format 8 or later so an older build refuses it
/// rather than misread the WAL's new op.
#[test]
fn an_older_database_takes_range_deletes_and_records_the_new_format() {
    let (_tmp, dir) = format_patch::fixture_copy("pre_policy_db");
    let db = Db::open(&dir, Options::default()).unwrap();
    assert_eq!(db.get("banana").unwrap().as_deref(), Some(&b"yellow"[..]));
    db.delete_range("b", "c").unwrap();
    assert_eq!(keys(&db), ["cherry"]);
    db.close().unwrap();
    drop(db);
    let scan = siftdb::recovery::inspect_db(&StdFs, &dir).unwrap();
    assert_eq!(scan.manifest.state.format_version, Some(siftdb::manifest::DB_FORMAT_VERSION));
    let db = Db::open(&dir, Options::default()).unwrap();
    assert_eq!(keys(&db), ["cherry"]);
}
