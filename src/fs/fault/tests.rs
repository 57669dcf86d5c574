//! Behaviour of the simulated disk, observed through real files.

use std::path::Path;
use std::sync::Arc;

use super::*;
use crate::fs::write_file_atomic;

fn disk(dir: &Path, name: &str) -> Option<Vec<u8>> {
    std::fs::read(dir.join(name)).ok()
}

/// Creates `dir/name` holding `bytes`, synced and linked durably.
fn durable_file(fs: &FaultFs, dir: &Path, name: &str, bytes: &[u8]) {
    let mut f = fs.create(&dir.join(name)).unwrap();
    f.write_all(bytes).unwrap();
    f.sync().unwrap();
    fs.sync_dir(dir).unwrap();
}

#[test]
fn synced_write_survives_and_unsynced_write_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    durable_file(&fs, dir.path(), "log", b"synced");
    let mut f = fs.open_append(&dir.path().join("log")).unwrap();
    f.write_all(b"+unsynced").unwrap();
    assert_eq!(disk(dir.path(), "log").unwrap(), b"synced+unsynced", "live view sees every write");
    fs.crash(CrashMode::DropUnsynced).unwrap();
    assert_eq!(disk(dir.path(), "log").unwrap(), b"synced");
}

#[test]
fn torn_tails_keep_a_prefix_between_synced_and_written_lengths() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    let mut lengths = std::collections::BTreeSet::new();
    let written: Vec<u8> = (0..64u8).collect();
    for seed in 0..40 {
        let _ = std::fs::remove_file(dir.path().join("log"));
        durable_file(&fs, dir.path(), "log", written.get(..16).unwrap());
        let mut f = fs.open_append(&dir.path().join("log")).unwrap();
        f.write_all(written.get(16..).unwrap()).unwrap();
        fs.crash(CrashMode::TornTails { seed }).unwrap();
        let got = disk(dir.path(), "log").unwrap();
        assert!(got.len() >= 16 && written.starts_with(&got), "seed {seed}: {got:?}");
        lengths.insert(got.len());
    }
    assert!(lengths.len() > 10, "torn lengths should vary with the seed: {lengths:?}");
}

#[test]
fn torn_tails_are_reproducible_per_seed() {
    let run = |seed| {
        let dir = tempfile::tempdir().unwrap();
        let fs = FaultFs::new();
        let mut out = Vec::new();
        for name in ["a", "b", "c"] {
            durable_file(&fs, dir.path(), name, b"head");
            let mut f = fs.open_append(&dir.path().join(name)).unwrap();
            f.write_all(&[7; 100]).unwrap();
        }
        fs.crash(CrashMode::TornTails { seed }).unwrap();
        for name in ["a", "b", "c"] {
            out.push(disk(dir.path(), name).unwrap().len());
        }
        out
    };
    assert_eq!(run(42), run(42));
    assert!((0..8).any(|s| run(s) != run(42)), "different seeds should tear differently");
}

#[test]
fn file_whose_creation_was_never_dir_synced_vanishes() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    let mut f = fs.create(&dir.path().join("new")).unwrap();
    f.write_all(b"synced but unlinked").unwrap();
    f.sync().unwrap();
    drop(f);
    fs.crash(CrashMode::TornTails { seed: 1 }).unwrap();
    assert!(!dir.path().join("new").exists());
}

#[test]
fn rename_not_dir_synced_is_undone() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    durable_file(&fs, dir.path(), "a", b"A");
    durable_file(&fs, dir.path(), "b", b"B");
    fs.rename(&dir.path().join("a"), &dir.path().join("b")).unwrap();
    assert_eq!(disk(dir.path(), "a"), None);
    assert_eq!(disk(dir.path(), "b").unwrap(), b"A");
    fs.crash(CrashMode::DropUnsynced).unwrap();
    assert_eq!(disk(dir.path(), "a").unwrap(), b"A");
    assert_eq!(disk(dir.path(), "b").unwrap(), b"B");

    fs.rename(&dir.path().join("a"), &dir.path().join("b")).unwrap();
    fs.sync_dir(dir.path()).unwrap();
    fs.crash(CrashMode::DropUnsynced).unwrap();
    assert_eq!(disk(dir.path(), "a"), None);
    assert_eq!(disk(dir.path(), "b").unwrap(), b"A");
}

#[test]
fn rename_keeps_the_file_and_its_handle_across_names() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    let mut f = fs.create(&dir.path().join("tmp")).unwrap();
    f.write_all(b"one").unwrap();
    fs.rename(&dir.path().join("tmp"), &dir.path().join("final")).unwrap();
    f.write_all(b"two").unwrap();
    f.sync().unwrap();
    fs.sync_dir(dir.path()).unwrap();
    fs.crash(CrashMode::DropUnsynced).unwrap();
    assert_eq!(disk(dir.path(), "final").unwrap(), b"onetwo");
    assert_eq!(disk(dir.path(), "tmp"), None);
}

#[test]
fn a_renamed_directory_takes_its_names_along_durable_or_not() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    let (stage, dst) = (dir.path().join("stage"), dir.path().join("dst"));
    fs.create_dir_all(&stage).unwrap();
    durable_file(&fs, &stage, "kept", b"synced");
    let mut f = fs.open_append(&stage.join("kept")).unwrap();
    f.write_all(b"+unsynced").unwrap();
    let mut g = fs.create(&stage.join("unlinked")).unwrap();
    g.write_all(b"never dir-synced").unwrap();
    g.sync().unwrap();
    fs.rename(&stage, &dst).unwrap();
    fs.crash(CrashMode::DropUnsynced).unwrap();
    // Keyed at the old name, the files would come back under `stage`.
    assert!(!stage.exists(), "the old directory stays gone");
    assert_eq!(disk(&dst, "kept").unwrap(), b"synced");
    assert_eq!(disk(&dst, "unlinked"), None);
}

#[test]
fn a_removed_directory_brings_back_none_of_its_names() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    let sub = dir.path().join("sub");
    fs.create_dir_all(&sub).unwrap();
    durable_file(&fs, &sub, "f", b"content");
    fs.remove_file(&sub.join("f")).unwrap();
    fs.remove_dir(&sub).unwrap();
    fs.crash(CrashMode::DropUnsynced).unwrap();
    assert!(!sub.exists());
    fs.fail_after(FaultOp::Remove, 0);
    fs.create_dir_all(&sub).unwrap();
    assert!(FaultFs::is_simulated(&fs.remove_dir(&sub).unwrap_err()), "counted as a Remove");
}

#[test]
fn remove_not_dir_synced_is_undone() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    durable_file(&fs, dir.path(), "gone", b"content");
    let mut f = fs.open_append(&dir.path().join("gone")).unwrap();
    f.write_all(b" unsynced").unwrap();
    drop(f);
    fs.remove_file(&dir.path().join("gone")).unwrap();
    assert!(!fs.exists(&dir.path().join("gone")));
    fs.crash(CrashMode::DropUnsynced).unwrap();
    assert_eq!(disk(dir.path(), "gone").unwrap(), b"content");

    fs.remove_file(&dir.path().join("gone")).unwrap();
    fs.sync_dir(dir.path()).unwrap();
    fs.crash(CrashMode::DropUnsynced).unwrap();
    assert_eq!(disk(dir.path(), "gone"), None);
}

#[test]
fn files_from_before_the_simulation_count_as_durable() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("old"), b"from an earlier run").unwrap();
    std::fs::write(dir.path().join("untouched"), b"never opened").unwrap();
    let fs = FaultFs::new();
    let mut f = fs.create(&dir.path().join("old")).unwrap();
    f.write_all(b"rewritten, never synced").unwrap();
    fs.crash(CrashMode::DropUnsynced).unwrap();
    assert_eq!(disk(dir.path(), "old").unwrap(), b"from an earlier run");
    assert_eq!(disk(dir.path(), "untouched").unwrap(), b"never opened");
}

#[test]
fn kill_process_keeps_written_data_but_kills_handles() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    let mut f = fs.create(&dir.path().join("log")).unwrap();
    f.write_all(b"unsynced").unwrap();
    fs.crash(CrashMode::KillProcess).unwrap();
    assert!(f.write_all(b"x").is_err());
    assert_eq!(disk(dir.path(), "log").unwrap(), b"unsynced");
    // What survived a process kill is on disk for good: a later power loss keeps it.
    fs.crash(CrashMode::DropUnsynced).unwrap();
    assert_eq!(disk(dir.path(), "log").unwrap(), b"unsynced");
}

#[test]
fn handles_from_before_a_crash_fail_and_new_ones_work() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    durable_file(&fs, dir.path(), "log", b"");
    let mut old = fs.open_append(&dir.path().join("log")).unwrap();
    fs.crash(CrashMode::DropUnsynced).unwrap();
    let err = old.write_all(b"late").unwrap_err();
    assert!(FaultFs::is_simulated(&err));
    assert_eq!(err.get_ref().unwrap().downcast_ref::<FaultError>(), Some(&FaultError::DeadHandle));
    assert!(old.sync().is_err());
    assert_eq!(disk(dir.path(), "log").unwrap(), b"", "a dead handle writes nothing");

    let mut new = fs.open_append(&dir.path().join("log")).unwrap();
    new.write_all(b"reopened").unwrap();
    new.sync().unwrap();
    fs.crash(CrashMode::DropUnsynced).unwrap();
    assert_eq!(disk(dir.path(), "log").unwrap(), b"reopened");
}

#[test]
fn nth_write_sync_and_rename_failures_reach_write_file_atomic() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    write_file_atomic(&fs, dir.path(), "CURRENT", b"old").unwrap();
    for op in [FaultOp::Create, FaultOp::Write, FaultOp::Sync, FaultOp::Rename, FaultOp::SyncDir] {
        fs.fail_after(op, 0);
        let err = write_file_atomic(&fs, dir.path(), "CURRENT", b"new").unwrap_err();
        assert_eq!(err.get_ref().unwrap().downcast_ref::<FaultError>(), Some(&FaultError::Injected(op)));
        fs.disable_faults();
        write_file_atomic(&fs, dir.path(), "CURRENT", b"old").unwrap();
    }
    // The third write fails; the two before it succeed.
    fs.fail_after(FaultOp::Write, 2);
    write_file_atomic(&fs, dir.path(), "A", b"1").unwrap();
    write_file_atomic(&fs, dir.path(), "B", b"2").unwrap();
    assert!(write_file_atomic(&fs, dir.path(), "C", b"3").is_err());
    assert!(write_file_atomic(&fs, dir.path(), "D", b"4").is_err(), "sticky: later writes fail too");
    fs.fail_once_after(FaultOp::Write, 0);
    assert!(write_file_atomic(&fs, dir.path(), "E", b"5").is_err());
    write_file_atomic(&fs, dir.path(), "F", b"6").unwrap();
}

#[test]
fn failed_write_leaves_a_short_write_behind() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    let mut f = fs.create(&dir.path().join("log")).unwrap();
    fs.fail_after(FaultOp::Write, 0);
    assert!(f.write_all(b"abcdef").is_err());
    assert_eq!(disk(dir.path(), "log").unwrap(), b"abc");
}

#[test]
fn counters_count_every_attempt_by_kind() {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    write_file_atomic(&fs, dir.path(), "x", b"1").unwrap();
    let c = fs.counts();
    let expect = [(FaultOp::Create, 1), (FaultOp::Write, 1), (FaultOp::Sync, 1), (FaultOp::Rename, 1)];
    for (op, n) in expect {
        assert_eq!(c.get(op), n, "{op:?}");
    }
    assert_eq!(c.get(FaultOp::SyncDir), 1);
    assert_eq!(c.get(FaultOp::Any), 5);
    fs.reset_counts();
    assert_eq!(fs.counts().get(FaultOp::Any), 0);
}

/// The target after a crash in the middle of publishing `new` over `old`.
/// `ops` is how many operations a whole publish takes.
fn publish_then_crash(
    old: Option<&[u8]>,
    (fail_at, ops): (u64, u64),
    sticky: bool,
    mode: CrashMode,
) -> Option<Vec<u8>> {
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    if let Some(old) = old {
        write_file_atomic(&fs, dir.path(), "CURRENT", old).unwrap();
    }
    if sticky {
        fs.fail_after(FaultOp::Any, fail_at);
    } else {
        fs.fail_once_after(FaultOp::Any, fail_at);
    }
    let result = write_file_atomic(&fs, dir.path(), "CURRENT", b"the new content");
    assert_eq!(result.is_ok(), fail_at >= ops, "fail_at {fail_at}: {result:?}");
    fs.crash(mode).unwrap();
    let names = fs.list_dir(dir.path()).unwrap();
    assert!(names.iter().all(|p| p.ends_with("CURRENT") || p.ends_with("CURRENT.tmp")), "{names:?}");
    let after = disk(dir.path(), "CURRENT");
    if result.is_ok() {
        assert_eq!(after.as_deref(), Some(&b"the new content"[..]), "acknowledged, so durable");
    }
    after
}

#[test]
fn write_file_atomic_leaves_old_or_new_after_a_crash_at_any_point() {
    let fs = FaultFs::new();
    let dir = tempfile::tempdir().unwrap();
    write_file_atomic(&fs, dir.path(), "CURRENT", b"x").unwrap();
    let ops = fs.counts().get(FaultOp::Any);
    assert!(ops >= 4, "create, write, sync, rename at least: {ops}");
    let mut outcomes = std::collections::BTreeSet::new();
    for fail_at in 0..=ops {
        for sticky in [true, false] {
            for mode in [CrashMode::DropUnsynced, CrashMode::TornTails { seed: fail_at }] {
                let got = publish_then_crash(Some(b"old"), (fail_at, ops), sticky, mode).unwrap();
                assert!(got == b"old" || got == b"the new content", "{fail_at} {mode:?}: {got:?}");
                outcomes.insert(got);
                let got = publish_then_crash(None, (fail_at, ops), sticky, mode);
                assert!(got.is_none() || got.as_deref() == Some(b"the new content"), "{got:?}");
            }
        }
    }
    assert_eq!(outcomes.len(), 2, "both the old and the new content must come up");
}

#[test]
fn publishing_without_fsync_before_rename_is_caught() {
    // The bug write_file_atomic avoids: rename before the data is durable.
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    write_file_atomic(&fs, dir.path(), "CURRENT", b"old").unwrap();
    let mut f = fs.create(&dir.path().join("CURRENT.tmp")).unwrap();
    f.write_all(b"new").unwrap();
    drop(f);
    fs.rename(&dir.path().join("CURRENT.tmp"), &dir.path().join("CURRENT")).unwrap();
    fs.sync_dir(dir.path()).unwrap();
    fs.crash(CrashMode::DropUnsynced).unwrap();
    assert_eq!(disk(dir.path(), "CURRENT").unwrap(), b"", "neither old nor new: the bug shows");
}

#[test]
fn sync_dir_matches_entries_however_the_directory_is_spelled() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("db");
    let fs = FaultFs::new();
    fs.create_dir_all(&sub).unwrap();
    let mut f = fs.create(&sub.join("f")).unwrap();
    f.sync().unwrap();
    fs.sync_dir(&dir.path().join("db/../db/.")).unwrap();
    fs.crash(CrashMode::DropUnsynced).unwrap();
    assert!(sub.join("f").exists());
}

#[test]
fn clones_share_one_disk_and_work_as_a_trait_object() {
    fn assert_send_sync<T: Send + Sync + 'static>() {}
    assert_send_sync::<FaultFs>();
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultFs::new();
    let shared: Arc<dyn FileSystem> = Arc::new(fs.clone());
    let mut f = shared.create(&dir.path().join("f")).unwrap();
    f.write_all(b"data").unwrap();
    let worker = std::thread::spawn(move || {
        f.sync().unwrap();
        shared.sync_dir(dir.path()).unwrap();
        dir
    });
    let dir = worker.join().unwrap();
    fs.crash(CrashMode::DropUnsynced).unwrap();
    assert_eq!(disk(dir.path(), "f").unwrap(), b"data");
}

mod random_histories {
    use proptest::prelude::*;

    use super::*;

    const NAMES: [&str; 3] = ["a", "b", "c"];

    #[derive(Debug, Clone)]
    enum Step {
        Create(usize),
        OpenAppend(usize),
        Write(usize, Vec<u8>),
        Sync(usize),
        Rename(usize, usize),
        Remove(usize),
        SyncDir,
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            (0..3usize).prop_map(Step::Create),
            (0..3usize).prop_map(Step::OpenAppend),
            (0..4usize, proptest::collection::vec(any::<u8>(), 1..8)).prop_map(|(h, b)| Step::Write(h, b)),
            (0..4usize).prop_map(Step::Sync),
            (0..3usize, 0..3usize).prop_map(|(a, b)| Step::Rename(a, b)),
            (0..3usize).prop_map(Step::Remove),
            Just(Step::SyncDir),
        ]
    }

    /// Runs `steps`, ignoring the errors a real file system would also give
    /// (renaming a missing file and the like); returns the open handles.
    fn run(fs: &FaultFs, dir: &Path, steps: &[Step]) -> Vec<Box<dyn WritableFile>> {
        let path = |i: usize| dir.join(NAMES.get(i).unwrap());
        let mut handles: Vec<Box<dyn WritableFile>> = Vec::new();
        for s in steps {
            match s {
                Step::Create(i) => handles.extend(fs.create(&path(*i)).ok()),
                Step::OpenAppend(i) => handles.extend(fs.open_append(&path(*i)).ok()),
                Step::Write(h, bytes) => {
                    if let Some(f) = handles.get_mut(*h) {
                        f.write_all(bytes).unwrap();
                    }
                }
                Step::Sync(h) => {
                    if let Some(f) = handles.get_mut(*h) {
                        f.sync().unwrap();
                    }
                }
                Step::Rename(a, b) => drop(fs.rename(&path(*a), &path(*b))),
                Step::Remove(i) => drop(fs.remove_file(&path(*i))),
                Step::SyncDir => fs.sync_dir(dir).unwrap(),
            }
        }
        handles
    }

    fn snapshot(dir: &Path) -> Vec<Option<Vec<u8>>> {
        NAMES.iter().map(|n| disk(dir, n)).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// What a crash leaves is durable: a second power loss changes nothing.
        #[test]
        fn state_after_a_crash_is_durable(steps in proptest::collection::vec(step(), 0..30), seed: u64) {
            let dir = tempfile::tempdir().unwrap();
            let fs = FaultFs::new();
            let _handles = run(&fs, dir.path(), &steps);
            fs.crash(CrashMode::TornTails { seed }).unwrap();
            let after = snapshot(dir.path());
            fs.crash(CrashMode::DropUnsynced).unwrap();
            prop_assert_eq!(snapshot(dir.path()), after);
        }

        /// Once every file and the directory are synced, a crash loses nothing.
        #[test]
        fn fully_synced_state_survives_a_crash(steps in proptest::collection::vec(step(), 0..30), seed: u64) {
            let dir = tempfile::tempdir().unwrap();
            let fs = FaultFs::new();
            for mut f in run(&fs, dir.path(), &steps) {
                f.sync().unwrap();
            }
            fs.sync_dir(dir.path()).unwrap();
            let live = snapshot(dir.path());
            fs.crash(CrashMode::TornTails { seed }).unwrap();
            prop_assert_eq!(snapshot(dir.path()), live);
        }

        /// With no sync at all, a power loss restores the directory as it was
        /// before the simulation, whatever was created, renamed or removed.
        #[test]
        fn crash_without_any_sync_restores_the_start(steps in proptest::collection::vec(step(), 0..30)) {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("a"), b"pre-existing").unwrap();
            let fs = FaultFs::new();
            let steps: Vec<Step> =
                steps.into_iter().filter(|s| !matches!(s, Step::Sync(_) | Step::SyncDir)).collect();
            let _handles = run(&fs, dir.path(), &steps);
            fs.crash(CrashMode::DropUnsynced).unwrap();
            prop_assert_eq!(snapshot(dir.path()), vec![Some(b"pre-existing".to_vec()), None, None]);
        }
    }
}
