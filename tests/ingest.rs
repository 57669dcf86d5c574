//! `Db::ingest` (issue 64, step 2): tables built outside the database are
//! checked whole, numbered newer than every earlier write and older than
//! every later one, installed in one edit at the deepest level that keeps
//! lookups right, and survive reopening; a bad ingest changes nothing.

use std::path::{Path, PathBuf};

use siftdb::records::ValueKind;
use siftdb::table::{TableBuilder, TableOptions};
use siftdb::{Compression, CompressionPolicy, Db, Error, FilterKind, IngestOptions, Options};

const SALT: u64 = 64;

fn opts() -> Options {
    Options {
        memtable_bytes: 16 << 10,
        table_target_bytes: 32 << 10,
        base_level_bytes: 64 << 10,
        hash_salt: Some(SALT),
        compression: CompressionPolicy::uniform(Compression::None),
        ..Options::default()
    }
}

fn key(i: u64) -> String {
    format!("key{i:06}")
}

/// A table at `path` of `keys` (ascending), each `value(i)`; `None` is a
/// deletion. Entries carry the placeholder sequence number 0.
fn build(path: &Path, keys: impl IntoIterator<Item = (u64, Option<String>)>, salt: u64) -> PathBuf {
    let o = TableOptions { filter: FilterKind::BinaryFuse8, seed: salt, ..TableOptions::default() };
    let mut b = TableBuilder::create(path, o).unwrap();
    for (i, v) in keys {
        match v {
            Some(v) => b.add(key(i).as_bytes(), 0, ValueKind::Value, v.as_bytes()).unwrap(),
            None => b.add(key(i).as_bytes(), 0, ValueKind::Tombstone, b"").unwrap(),
        }
    }
    b.finish().unwrap();
    path.to_path_buf()
}

fn values(range: std::ops::Range<u64>, tag: &str) -> Vec<(u64, Option<String>)> {
    range.map(|i| (i, Some(format!("{tag}{i}")))).collect()
}

fn get(db: &Db, i: u64) -> Option<String> {
    db.get(key(i)).unwrap().map(|v| String::from_utf8(v.to_vec()).unwrap())
}

#[test]
fn ingested_keys_are_newer_than_earlier_writes_and_older_than_later_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Db::open(tmp.path().join("db"), opts()).unwrap();
    // Earlier writes: some in tables at several levels, some in the memtable.
    for i in 0..3000 {
        db.put(key(i), format!("old{i}")).unwrap();
    }
    db.compact().unwrap();
    db.put(key(10), "memtable").unwrap();
    let snap = db.snapshot();
    let a = build(&tmp.path().join("a.sst"), values(0..1000, "ing"), SALT);
    let mut b_keys = Vec::new();
    b_keys.extend(values(2000..2500, "ing"));
    b_keys.push((2600, None));
    let b = build(&tmp.path().join("b.sst"), b_keys, SALT);
    let ingested = db.ingest([&a, &b]).unwrap();
    assert_eq!(ingested.tables.len(), 2);
    assert_eq!(ingested.tables.iter().map(|t| t.entries).sum::<u64>(), 1501);
    // Newer than everything before, the memtable's write included.
    assert_eq!(get(&db, 10).as_deref(), Some("ing10"));
    assert_eq!(get(&db, 999).as_deref(), Some("ing999"));
    assert_eq!(get(&db, 1500).as_deref(), Some("old1500"));
    assert_eq!(get(&db, 2100).as_deref(), Some("ing2100"));
    assert_eq!(get(&db, 2600), None, "the ingested deletion hides the older value");
    assert_eq!(get(&db, 2700).as_deref(), Some("old2700"));
    // A snapshot from before sees none of it.
    assert_eq!(snap.get(key(10)).unwrap().as_deref(), Some(&b"memtable"[..]));
    assert_eq!(snap.get(key(999)).unwrap().as_deref(), Some(&b"old999"[..]));
    // Older than every later write.
    db.put(key(5), "later").unwrap();
    assert_eq!(get(&db, 5).as_deref(), Some("later"));
    // Scans agree with gets, both ways.
    let forward: Vec<_> = db.iter().map(|r| r.unwrap()).collect();
    assert_eq!(forward.len(), 2999);
    let mut backward: Vec<_> = db.iter().rev().map(|r| r.unwrap()).collect();
    backward.reverse();
    assert_eq!(forward, backward);
    for (k, v) in forward.iter().step_by(53) {
        assert_eq!(db.get(k).unwrap().as_ref(), Some(v));
    }
    // And all of it survives compaction and reopening.
    db.compact().unwrap();
    drop(snap);
    db.close().unwrap();
    drop(db);
    let db = Db::open(tmp.path().join("db"), opts()).unwrap();
    assert_eq!((get(&db, 10).as_deref(), get(&db, 5).as_deref()), (Some("ing10"), Some("later")));
    assert_eq!((get(&db, 2100).as_deref(), get(&db, 2600)), (Some("ing2100"), None));
    assert_eq!(db.iter().count(), 2999);
}

/// Into a tree that does not meet its range, a file goes to the deepest
/// level; where level 0 meets it, to level 0, as the newest.
#[test]
fn a_file_lands_at_the_deepest_level_nothing_above_meets() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Db::open(tmp.path().join("db"), Options { auto_compaction: false, ..opts() }).unwrap();
    for i in 0..2000 {
        db.put(key(i), "old").unwrap();
    }
    db.compact().unwrap();
    let deepest = db.stats().levels.iter().rposition(|l| l.tables > 0).unwrap();
    let apart = build(&tmp.path().join("apart.sst"), values(5000..6000, "n"), SALT);
    let got = db.ingest([&apart]).unwrap();
    assert!(got.tables[0].level >= deepest, "{got:?} vs deepest {deepest}");
    db.put(key(100), "l0").unwrap();
    db.flush().unwrap();
    let within = build(&tmp.path().join("within.sst"), values(50..150, "n"), SALT);
    let got = db.ingest([&within]).unwrap();
    assert_eq!(got.tables[0].level, 0);
    assert_eq!(get(&db, 100).as_deref(), Some("n100"));
    assert_eq!(get(&db, 5500).as_deref(), Some("n5500"));
}

#[test]
fn bad_ingests_are_refused_and_change_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = Db::open(&dir, opts()).unwrap();
    db.put(key(1), "kept").unwrap();
    db.flush().unwrap();
    let files_before = names(&dir);
    let a = build(&tmp.path().join("a.sst"), values(0..100, "a"), SALT);
    let b = build(&tmp.path().join("b.sst"), values(50..150, "b"), SALT);
    let err = db.ingest([&a, &b]).unwrap_err();
    assert!(matches!(&err, Error::InvalidArgument(m) if m.contains("overlap")), "{err}");
    // Several versions of a key.
    let o = TableOptions { seed: SALT, ..TableOptions::default() };
    let mut tb = TableBuilder::create(tmp.path().join("versions.sst"), o).unwrap();
    tb.add(b"k", 9, ValueKind::Value, b"new").unwrap();
    tb.add(b"k", 3, ValueKind::Value, b"old").unwrap();
    tb.finish().unwrap();
    let err = db.ingest([tmp.path().join("versions.sst")]).unwrap_err();
    assert!(matches!(&err, Error::InvalidArgument(m) if m.contains("one version per key")), "{err}");
    // A damaged file: one byte of a data block flipped.
    let bad = build(&tmp.path().join("bad.sst"), values(0..100, "x"), SALT);
    let mut bytes = std::fs::read(&bad).unwrap();
    bytes[20] ^= 0x40;
    std::fs::write(&bad, bytes).unwrap();
    let err = db.ingest([&bad]).unwrap_err();
    assert!(err.is_corruption(), "{err}");
    assert!(err.to_string().contains("bad.sst"), "{err}");
    // Missing file, no files.
    assert!(db.ingest([tmp.path().join("missing.sst")]).is_err());
    assert!(matches!(db.ingest(Vec::<PathBuf>::new()), Err(Error::InvalidArgument(_))));
    // A memtable overlap, refused on request.
    db.put(key(60), "mem").unwrap();
    let refuse = IngestOptions { refuse_memtable_overlap: true, ..IngestOptions::default() };
    assert!(matches!(db.ingest_with([&a], &refuse), Err(Error::InvalidArgument(_))));
    assert_eq!(get(&db, 60).as_deref(), Some("mem"));
    assert_eq!(get(&db, 1).as_deref(), Some("kept"));
    assert_eq!(get(&db, 0), None);
    assert_eq!(names(&dir), files_before, "no table was left behind");
    assert!(a.exists() && b.exists(), "sources untouched");
}

#[test]
fn overlapping_files_when_allowed_go_newest_last() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Db::open(tmp.path().join("db"), opts()).unwrap();
    let a = build(&tmp.path().join("a.sst"), values(0..100, "a"), SALT);
    let b = build(&tmp.path().join("b.sst"), values(50..150, "b"), SALT);
    let allow = IngestOptions { allow_overlap: true, move_files: true, ..IngestOptions::default() };
    let got = db.ingest_with([&a, &b], &allow).unwrap();
    assert!(got.tables.iter().all(|t| t.level == 0), "{got:?}");
    assert_eq!(
        (get(&db, 10).as_deref(), get(&db, 60).as_deref(), get(&db, 120).as_deref()),
        (Some("a10"), Some("b60"), Some("b120"))
    );
    assert!(!a.exists() && !b.exists(), "moved");
    db.compact().unwrap();
    assert_eq!(get(&db, 60).as_deref(), Some("b60"));
}

/// A table built under another salt is rewritten with the database's:
/// lookups hash each key once, under the database's salt, and a table of
/// another would cost a second hash on every probe for as long as it lives.
/// Every key is found either way.
#[test]
fn a_table_built_under_another_salt_is_rebuilt_and_found() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = Db::open(&dir, opts()).unwrap();
    let other = build(&tmp.path().join("other.sst"), values(0..2000, "v"), SALT + 1);
    let same = build(&tmp.path().join("same.sst"), values(3000..4000, "v"), db.options().hash_salt.unwrap());
    let got = db.ingest([&other, &same]).unwrap();
    assert_eq!(got.tables.iter().map(|t| t.rebuilt).collect::<Vec<_>>(), [true, false]);
    for t in &got.tables {
        let path = dir.join(siftdb::manifest::table_file_name(t.file_number));
        let table = siftdb::table::Table::open(&siftdb::fs::StdFs, &path).unwrap();
        assert_eq!(table.filter_details().header.map(|h| h.seed), Some(SALT), "{}", path.display());
    }
    for i in (0..2000).chain(3000..4000) {
        assert_eq!(get(&db, i), Some(format!("v{i}")), "key {i}");
    }
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v.retain(|n| n.ends_with(".sst"));
    v
}
