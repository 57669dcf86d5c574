//! `db verify` and `Db::open` read a database through the same recovery
//! scan, so they agree on whether it opens: swept over every length a
//! MANIFEST can be cut to.

mod common;

use std::path::Path;

use common::{p, siftdb};
use siftdb::{Db, Options};

fn opts() -> Options {
    Options { memtable_bytes: 2048, table_target_bytes: 2048, base_level_bytes: 4096, ..Options::default() }
}

fn copy_dir(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let path = e.unwrap().path();
        std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
    }
}

#[test]
fn verify_fails_exactly_where_open_refuses_a_cut_manifest() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), opts()).unwrap();
        for round in 0..4u32 {
            for i in 0..40u32 {
                db.put(format!("key{:03}", (i * 7 + round) % 60), format!("value {round} {i}")).unwrap();
            }
            db.flush().unwrap();
        }
        db.compact().unwrap();
        db.put("in the wal", "only").unwrap();
    }
    let manifest = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("MANIFEST-"))
        .unwrap();
    let bytes = std::fs::read(&manifest).unwrap();
    let (mut refused, mut lengths) = (0, 0);
    for len in 0..=bytes.len() {
        let copy = tempfile::tempdir().unwrap();
        copy_dir(dir.path(), copy.path());
        std::fs::write(copy.path().join(manifest.file_name().unwrap()), &bytes[..len]).unwrap();
        let verify = siftdb(&["db", "verify", p(copy.path())]);
        let verify_ok = match verify.status.code() {
            Some(0) => true,
            Some(1) => false,
            other => {
                panic!("length {len}: verify exited {other:?}: {}", String::from_utf8_lossy(&verify.stderr))
            }
        };
        let open = Db::open(copy.path(), opts());
        assert_eq!(
            verify_ok,
            open.is_ok(),
            "length {len}: verify says {}, open {:?}",
            String::from_utf8_lossy(&verify.stdout),
            open.as_ref().err()
        );
        refused += usize::from(!verify_ok);
        lengths += 1;
    }
    // The sweep saw both answers: cuts that lose edits the directory
    // depends on, and cuts that only drop a torn last edit.
    assert!(refused > 0 && refused < lengths, "{refused} of {lengths} refused");
}
