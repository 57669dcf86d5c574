//! `db verify` and `Db::open` read a database through the same recovery
//! scan, so they agree on whether it opens: swept over every length a
//! MANIFEST can be cut to. Agreement alone would not see data loss, so an
//! open that succeeds must hold exactly what was written, and one that
//! refuses must name the MANIFEST it refused.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{p, siftdb};
use siftdb::{Db, Options};

type State = BTreeMap<Vec<u8>, Vec<u8>>;

/// No background work, only the flushes the test asks for and a fixed
/// salt, so the MANIFEST (and so each cut of it) is the same on every run.
fn opts() -> Options {
    Options {
        memtable_bytes: 1 << 20,
        table_target_bytes: 2048,
        base_level_bytes: 4096,
        auto_compaction: false,
        hash_salt: Some(59),
        ..Options::default()
    }
}

fn copy_dir(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let path = e.unwrap().path();
        std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
    }
}

fn contents(db: &Db) -> State {
    db.iter().map(|r| r.unwrap()).map(|(k, v)| (k.to_vec(), v.to_vec())).collect()
}

/// Four flushed rounds of overwrites, compacted, one write left in the WAL,
/// closed cleanly; what was written, and the MANIFEST.
fn build(dir: &Path) -> (State, PathBuf) {
    let mut model = State::new();
    let db = Db::open(dir, opts()).unwrap();
    let mut put = |k: String, v: String| {
        db.put(&k, &v).unwrap();
        model.insert(k.into_bytes(), v.into_bytes());
    };
    for round in 0..4u32 {
        for i in 0..40u32 {
            put(format!("key{:03}", (i * 7 + round) % 60), format!("value {round} {i}"));
        }
        db.flush().unwrap();
    }
    db.compact().unwrap();
    put("in the wal".to_string(), "only".to_string());
    assert_eq!(contents(&db), model, "the database holds what was written");
    db.close().unwrap();
    let manifest = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("MANIFEST-"))
        .unwrap();
    (model, manifest)
}

#[test]
fn verify_fails_exactly_where_open_refuses_a_cut_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let (model, manifest) = build(dir.path());
    let name = manifest.file_name().unwrap().to_string_lossy().into_owned();
    let bytes = std::fs::read(&manifest).unwrap();
    // The same MANIFEST on every run: a second build writes it byte for byte.
    let again = tempfile::tempdir().unwrap();
    let (_, manifest_again) = build(again.path());
    assert_eq!(std::fs::read(&manifest_again).unwrap(), bytes, "the MANIFEST is the same on every build");
    let (mut refused, mut lengths) = (0, 0);
    for len in 0..=bytes.len() {
        let copy = tempfile::tempdir().unwrap();
        copy_dir(dir.path(), copy.path());
        std::fs::write(copy.path().join(&name), &bytes[..len]).unwrap();
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
        match open {
            Ok(db) => assert_eq!(contents(&db), model, "length {len}: an open that succeeds lost nothing"),
            // The refusal blames the MANIFEST: it names the file, or a
            // file the MANIFEST names that is gone, or the edit it lost.
            Err(e) => {
                let said = e.to_string();
                assert!(e.is_corruption(), "length {len}: {said}");
                assert!(
                    said.contains(&name)
                        || said.contains("named by the manifest is missing")
                        || said.contains("the manifest has lost an edit"),
                    "length {len}: the refusal blames {name}: {said}"
                );
            }
        }
        refused += usize::from(!verify_ok);
        lengths += 1;
    }
    // The sweep saw both answers: cuts that lose edits the directory
    // depends on, and cuts short of the whole MANIFEST that only drop a
    // torn last edit (the whole MANIFEST, the last length, always opens).
    assert!(refused > 0 && refused < lengths - 1, "{refused} of {lengths} refused");
}
