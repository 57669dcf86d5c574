//! A crash at every step of an ingest (issue 64): an I/O error injected at
//! the N-th file-system operation of `Db::ingest`, for every N until one
//! succeeds, then a power loss. After reopening, the database holds all of
//! the ingest or none of it, its earlier writes intact, byte for byte
//! (`common/oracle.rs`), and no table file the manifest does not name.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use siftdb::fs::{CrashMode, FaultFs, FaultOp};
use siftdb::records::ValueKind;
use siftdb::table::{TableBuilder, TableOptions};
use siftdb::{Compression, CompressionPolicy, Db, Options};

#[path = "common/oracle.rs"]
mod oracle;

use oracle::Write;

fn scratch() -> tempfile::TempDir {
    // fsync on tmpfs is free; the model, not the disk, decides durability.
    let shm = Path::new("/dev/shm");
    if shm.is_dir() { tempfile::tempdir_in(shm) } else { tempfile::tempdir() }.unwrap()
}

fn options(fs: &FaultFs) -> Options {
    Options {
        fs: Arc::new(fs.clone()),
        sync: true,
        memtable_bytes: 4096,
        table_target_bytes: 8192,
        hash_salt: Some(0x1e57),
        auto_compaction: false,
        compression: CompressionPolicy::uniform(Compression::None),
        ..Options::default()
    }
}

fn key(i: u64) -> String {
    format!("key{i:05}")
}

/// Two tables outside the database: keys 0..150 (half over earlier
/// writes) and 300..400, every value "ingested".
fn sources(dir: &Path) -> Vec<PathBuf> {
    [(0..150u64, "a.sst"), (300..400, "b.sst")]
        .into_iter()
        .map(|(range, name)| {
            let path = dir.join(name);
            let o = TableOptions { seed: 0x1e57, ..TableOptions::default() };
            let mut b = TableBuilder::create(&path, o).unwrap();
            for i in range {
                b.add(key(i).as_bytes(), 0, ValueKind::Value, b"ingested").unwrap();
            }
            b.finish().unwrap();
            path
        })
        .collect()
}

/// The ingest as the model's batch: the sources' keys, each "ingested".
fn ingest_writes() -> Vec<Write> {
    (0..150u64).chain(300..400).map(|i| Write::Put(key(i).into_bytes(), b"ingested".to_vec())).collect()
}

fn tables_on_disk(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "sst"))
        .count()
}

#[test]
fn a_crash_at_every_step_of_an_ingest_leaves_all_or_none() {
    let src = tempfile::tempdir().unwrap();
    let files = sources(src.path());
    let before: oracle::Model = (100..250u64).map(|i| (key(i).into_bytes(), b"written".to_vec())).collect();
    let mut outcomes = [0usize; 2];
    for n in 0.. {
        let mut done = false;
        // The N-th operation fails and so does every later one (the
        // machine is dying), or it fails alone and the process goes on
        // (cleaning up after the error) until the crash.
        for (mode, once) in [
            (CrashMode::DropUnsynced, false),
            (CrashMode::KillProcess, false),
            (CrashMode::DropUnsynced, true),
            (CrashMode::KillProcess, true),
        ] {
            let dir = scratch();
            let fs = FaultFs::new();
            let db = Db::open(dir.path(), options(&fs)).unwrap();
            // Earlier writes over keys 100..250: some in tables, the last
            // in the memtable, which the ingest must flush first.
            for i in (100..250).chain(120..130) {
                db.put(key(i), "written").unwrap();
            }
            // Settled, so the N-th operation is the same one on every run.
            db.wait_for_background_work().unwrap();
            if once {
                fs.fail_once_after(FaultOp::Any, n);
            } else {
                fs.fail_after(FaultOp::Any, n);
            }
            let result = db.ingest(&files);
            // The machine dies now: the closing handle makes nothing more durable.
            fs.fail_after(FaultOp::Any, 0);
            drop(db);
            fs.crash(mode).unwrap();
            let db = match Db::open(dir.path(), options(&fs)) {
                Ok(db) => db,
                Err(e) => panic!("step {n}, {mode:?}, once {once}: the database does not open: {e}"),
            };
            // All of the ingest over the earlier writes, or none of it; all
            // once `ingest` returned Ok.
            let what = format!("step {n}, {mode:?}, once {once}");
            let ingest = ingest_writes();
            let got = if result.is_ok() {
                oracle::check(&db, &before, std::slice::from_ref(&ingest), &[], &what)
            } else {
                oracle::check(&db, &before, &[], std::slice::from_ref(&ingest), &what)
            };
            outcomes[usize::from(got != before)] += 1;
            let named = db.tables().len();
            db.close().unwrap();
            drop(db);
            assert_eq!(
                tables_on_disk(dir.path()),
                named,
                "step {n}, {mode:?}, once {once}: a table the manifest does not name"
            );
            // Once an ingest whose every operation after the N-th would fail
            // succeeds, N is past its last operation.
            done |= result.is_ok() && !once;
        }
        if done {
            assert!(outcomes[0] > 0 && outcomes[1] > 0, "{outcomes:?}");
            eprintln!("ingest crash: {n} cut points, {} none, {} all", outcomes[0], outcomes[1]);
            return;
        }
        assert!(n < 500, "the ingest never succeeded");
    }
}
