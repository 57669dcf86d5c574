//! A database written before the filter policy was stored (`fixtures/
//! pre_policy_db`, made by the build of 2957098 with `--policy xor8`: one
//! level-0 xor8 table holding apple and banana, and a live WAL holding
//! cherry and the delete of apple) opens with the default policy, loses
//! nothing, and stores the policy from then on.

use std::path::{Path, PathBuf};

use siftdb::{Db, FilterKind, FilterPolicy, Options};

fn fixture_copy() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    std::fs::create_dir(&dir).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pre_policy_db");
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
    }
    (tmp, dir)
}

fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().is_some_and(|n| n != "LOCK"))
        .map(|p| (p.clone(), std::fs::read(p).unwrap()))
        .collect();
    v.sort();
    v
}

fn check_contents(db: &Db) {
    assert_eq!(db.get(b"apple").unwrap(), None);
    assert_eq!(db.get(b"banana").unwrap().as_deref(), Some(&b"yellow"[..]));
    assert_eq!(db.get(b"cherry").unwrap().as_deref(), Some(&b"dark"[..]));
}

#[test]
fn a_database_from_before_stored_policies_opens_with_the_default() {
    let (_tmp, dir) = fixture_copy();

    // Read-only: the default policy, the data, and not a byte written.
    let before = files(&dir);
    let ro = Db::open_read_only(&dir, Options::default()).unwrap();
    assert_eq!(ro.filter_policy(), &FilterPolicy::default());
    assert_eq!(ro.stats().replaced_policy, None);
    check_contents(&ro);
    drop(ro);
    assert_eq!(files(&dir), before);

    // Writable: the old table keeps its xor8 filter; the default is now stored.
    let db = Db::open(&dir, Options::default()).unwrap();
    assert_eq!(db.filter_policy(), &FilterPolicy::default());
    check_contents(&db);
    assert_eq!(db.tables().iter().map(|t| t.filter).collect::<Vec<_>>(), [FilterKind::Xor8]);
    db.put(b"date", b"brown").unwrap();
    db.flush().unwrap();
    db.close().unwrap();
    drop(db);

    let chosen: FilterPolicy = "xor16".parse().unwrap();
    let db = Db::open(&dir, Options { filter_policy: Some(chosen.clone()), ..Options::default() }).unwrap();
    check_contents(&db);
    assert_eq!(db.stats().replaced_policy, Some(FilterPolicy::default().to_string()));
    db.close().unwrap();
    drop(db);
    let db = Db::open(&dir, Options::default()).unwrap();
    assert_eq!(db.filter_policy(), &chosen);
    assert_eq!(db.get(b"date").unwrap().as_deref(), Some(&b"brown"[..]));
}
