//! Changing the stored filter policy survives a crash at any point of the
//! open that changes it: afterwards the database holds the old policy or
//! the new one (the new one once that open returned `Ok`), never something
//! else, and the data is exactly what it was (`common/oracle.rs`).

use std::path::Path;
use std::sync::Arc;

use siftdb::fs::{CrashMode, FaultFs, FaultOp};
use siftdb::{Db, FilterPolicy, Options};

#[path = "common/oracle.rs"]
mod oracle;

fn options(fs: &FaultFs, policy: Option<&str>) -> Options {
    Options {
        fs: Arc::new(fs.clone()),
        hash_salt: Some(7),
        filter_policy: policy.map(|p| p.parse().unwrap()),
        ..Options::default()
    }
}

fn scratch() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() { tempfile::tempdir_in(shm) } else { tempfile::tempdir() }.unwrap()
}

#[test]
fn a_crash_while_changing_the_policy_keeps_the_old_or_the_new() {
    let old: FilterPolicy = "fuse8+skip-last".parse().unwrap();
    let new: FilterPolicy = "per-level:blocked-bloom:10,xor16".parse().unwrap();
    let setup = |fs: &FaultFs, dir: &Path| {
        let db = Db::open(dir, options(fs, Some("fuse8+skip-last"))).unwrap();
        db.put(b"flushed", b"1").unwrap();
        db.flush().unwrap();
        db.put(b"logged", b"2").unwrap();
        db.close().unwrap();
    };

    // How many file-system operations the changing open makes.
    let dir = scratch();
    let fs = FaultFs::new();
    setup(&fs, dir.path());
    fs.reset_counts();
    drop(Db::open(dir.path(), options(&fs, Some(&new.to_string()))).unwrap());
    let ops = fs.counts().get(FaultOp::Any);
    assert!(ops > 3, "the open made only {ops} operations");

    // What setup wrote, all of it acknowledged before the changing open.
    let data: oracle::Model =
        [(b"flushed".to_vec(), b"1".to_vec()), (b"logged".to_vec(), b"2".to_vec())].into();
    let (mut saw_old, mut saw_new) = (false, false);
    for n in 0..ops {
        for mode in [CrashMode::DropUnsynced, CrashMode::TornTails { seed: n }] {
            let dir = scratch();
            let fs = FaultFs::new();
            setup(&fs, dir.path());
            fs.fail_after(FaultOp::Any, n);
            let opened = Db::open(dir.path(), options(&fs, Some(&new.to_string())));
            let succeeded = opened.is_ok();
            drop(opened);
            fs.crash(mode).unwrap();

            let db = Db::open(dir.path(), options(&fs, None))
                .unwrap_or_else(|e| panic!("op {n}, {mode:?}: reopen failed: {e}"));
            let now = db.filter_policy().clone();
            assert!(now == old || now == new, "op {n}, {mode:?}: policy became {now}");
            if succeeded {
                assert_eq!(now, new, "op {n}, {mode:?}: the open returned Ok but the change was lost");
            }
            saw_old |= now == old;
            saw_new |= now == new;
            oracle::check(&db, &data, &[], &[], &format!("op {n}, {mode:?}"));
        }
    }
    assert!(saw_old && saw_new, "the sweep never crossed the change (old {saw_old}, new {saw_new})");
}
