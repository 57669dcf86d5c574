//! Input the database refuses, and what it accepts at the edges.

use siftdb::{Db, Error, MAX_KEY_BYTES, MAX_VALUE_BYTES, Options, WriteBatch};

fn opts() -> Options {
    Options {
        hash_salt: Some(3),
        filter_policy: Some(siftdb::policy::FilterPolicy::per_level(vec![])),
        ..Options::default()
    }
}

#[test]
fn empty_key_is_an_ordinary_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    db.put(b"", b"empty").unwrap();
    db.put(b"a", b"1").unwrap();
    assert_eq!(db.get(b"").unwrap().as_deref(), Some(&b"empty"[..]));
    let first = db.iter().next().unwrap().unwrap();
    assert_eq!(&first.0[..], b"");
    db.flush().unwrap();
    assert_eq!(db.get(b"").unwrap().as_deref(), Some(&b"empty"[..]));
    db.delete(b"").unwrap();
    assert_eq!(db.get(b"").unwrap(), None);
    assert_eq!(db.iter().count(), 1);
}

#[test]
fn oversize_keys_and_values_are_invalid_arguments_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    let big_key = vec![b'k'; MAX_KEY_BYTES + 1];
    assert!(matches!(db.put(&big_key, b"v"), Err(Error::InvalidArgument(_))));
    let big_value = vec![0u8; MAX_VALUE_BYTES + 1];
    assert!(matches!(db.put(b"k", &big_value), Err(Error::InvalidArgument(_))));
    let mut batch = WriteBatch::new();
    batch.put(b"ok", b"1");
    batch.delete(&big_key);
    assert!(matches!(db.write(batch), Err(Error::InvalidArgument(_))));
    assert_eq!(db.get(b"ok").unwrap(), None, "a rejected batch applies nothing");
    // The limits themselves are accepted.
    db.put(vec![b'k'; MAX_KEY_BYTES], b"max key").unwrap();
    assert_eq!(db.get(vec![b'k'; MAX_KEY_BYTES]).unwrap().as_deref(), Some(&b"max key"[..]));
    db.put(b"ok", b"still writable").unwrap();
}

#[test]
fn opening_a_regular_file_is_an_error_and_leaves_it_alone() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("data.bin");
    std::fs::write(&file, b"precious").unwrap();
    match Db::open(&file, opts()) {
        Err(Error::InvalidArgument(msg)) => assert!(msg.contains("data.bin"), "{msg}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(std::fs::read(&file).unwrap(), b"precious");
}

#[test]
fn opening_a_foreign_directory_is_an_error_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("thesis.tex"), b"draft").unwrap();
    match Db::open(dir.path(), opts()) {
        Err(Error::InvalidArgument(msg)) => assert!(msg.contains(&*dir.path().to_string_lossy()), "{msg}"),
        other => panic!("{other:?}"),
    }
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names, ["thesis.tex"]);
}

#[test]
fn a_second_open_is_locked_until_the_first_closes() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    assert!(matches!(Db::open(dir.path(), opts()), Err(Error::Locked(_))));
    db.close().unwrap();
    assert!(matches!(db.put(b"k", b"v"), Err(Error::Closed)));
    let again = Db::open(dir.path(), opts()).unwrap();
    again.put(b"k", b"v").unwrap();
}

#[test]
fn bad_options_are_invalid_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let o = Options { max_levels: 99, ..opts() };
    assert!(matches!(Db::open(dir.path(), o), Err(Error::InvalidArgument(_))));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// Every file in `dir` with its contents, sorted by name.
fn snapshot_files(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap())
        })
        .collect();
    out.sort();
    out
}

/// Regression: a database whose `CURRENT` was lost was taken for a fresh
/// directory and its tables, manifest and log were deleted.
#[test]
fn a_missing_current_with_data_is_corruption_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    for k in [b"k1", b"k2", b"k3"] {
        db.put(k, b"v").unwrap();
    }
    db.flush().unwrap();
    db.put(b"k9", b"v").unwrap();
    drop(db);
    std::fs::remove_file(dir.path().join("CURRENT")).unwrap();
    let before = snapshot_files(dir.path());
    assert!(before.iter().any(|(n, _)| n.ends_with(".sst")), "{before:?}");
    for _ in 0..2 {
        match Db::open(dir.path(), opts()) {
            Err(Error::Corruption { file: Some(f), what, .. }) => {
                assert!(f.ends_with("CURRENT"), "{f:?}");
                assert!(what.contains("CURRENT is missing"), "{what}");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(snapshot_files(dir.path()), before, "a refused open changed the directory");
    }
    // The same holds with only the unflushed write (a log with records) left.
    for (name, _) in &before {
        if name.ends_with(".sst") || name.starts_with("MANIFEST-") {
            std::fs::remove_file(dir.path().join(name)).unwrap();
        }
    }
    let logs_only = snapshot_files(dir.path());
    assert!(matches!(Db::open(dir.path(), opts()), Err(Error::Corruption { .. })));
    assert_eq!(snapshot_files(dir.path()), logs_only);
}

/// What a creation that crashed before writing `CURRENT` leaves (a lock
/// file, an empty log, the manifest of an empty database, temporary files)
/// is still initialised as a new database.
#[test]
fn leftovers_of_an_unfinished_create_are_a_fresh_database() {
    let dir = tempfile::tempdir().unwrap();
    Db::open(dir.path(), opts()).unwrap().close().unwrap();
    std::fs::remove_file(dir.path().join("CURRENT")).unwrap();
    std::fs::write(dir.path().join("CURRENT.tmp"), b"MANI").unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    db.put(b"k", b"v").unwrap();
    drop(db);
    let db = Db::open(dir.path(), opts()).unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
}

/// A create that crashed while writing its first manifest edit leaves the
/// manifest zero-filled or cut short (it is written in place, not renamed):
/// still a fresh directory, not a lost database that must never be opened.
#[test]
fn a_create_cut_inside_its_first_manifest_edit_is_a_fresh_database() {
    for damage in ["zeros", "cut"] {
        let dir = tempfile::tempdir().unwrap();
        Db::open(dir.path(), opts()).unwrap().close().unwrap();
        std::fs::remove_file(dir.path().join("CURRENT")).unwrap();
        let manifest = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("MANIFEST-"))
            .unwrap();
        let len = std::fs::metadata(&manifest).unwrap().len() as usize;
        let bytes = if damage == "zeros" {
            vec![0; len]
        } else {
            std::fs::read(&manifest).unwrap()[..len / 2].to_vec()
        };
        std::fs::write(&manifest, bytes).unwrap();
        let db = Db::open(dir.path(), opts()).unwrap_or_else(|e| panic!("{damage}: {e}"));
        db.put(b"k", b"v").unwrap();
        db.close().unwrap();
        let db = Db::open(dir.path(), opts()).unwrap();
        assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]), "{damage}");
    }
}

/// Regression: another thread spawning a child process while the database
/// is open copies the lock's descriptor into the child until its exec; a
/// close and reopen in that window was refused as `Locked` (seen in CI).
#[test]
fn reopen_while_another_thread_spawns_a_child_process() {
    use std::io::{Read as _, Write as _};
    use std::os::unix::process::CommandExt as _;
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    // The child says "forked" through a pipe from inside its pre-exec hook,
    // then sleeps there holding copies of this process's descriptors.
    let (mut forked, says_forked) = std::io::pipe().unwrap();
    let spawner = std::thread::spawn(move || {
        let mut cmd = std::process::Command::new("true");
        // SAFETY: the hook runs in the forked child before exec and only
        // calls write(2) and nanosleep, both async-signal-safe; it allocates
        // nothing and takes no lock.
        unsafe {
            cmd.pre_exec(move || {
                (&says_forked).write_all(b"F")?;
                std::thread::sleep(std::time::Duration::from_millis(100));
                Ok(())
            });
        }
        cmd.status().unwrap()
    });
    let mut byte = [0u8; 1];
    forked.read_exact(&mut byte).unwrap();
    // The child now holds the lock's descriptor, and will until it execs.
    db.put(b"k", b"v").unwrap();
    db.close().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    assert!(spawner.join().unwrap().success());
}

const LOCK_CHILD_DIR: &str = "SIFTDB_LOCK_CHILD_DIR";

/// Child mode of the cross-process lock test: opens the database, says so
/// on stdout, and holds it until stdin closes. Run directly, it does nothing.
#[test]
fn lock_child_holds_the_database() {
    let Some(dir) = std::env::var_os(LOCK_CHILD_DIR) else { return };
    let db = Db::open(std::path::Path::new(&dir), opts()).unwrap();
    db.put(b"child", b"was here").unwrap();
    println!("OPEN");
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
    db.close().unwrap();
}

/// Another process holding the database makes `Db::open` fail with a clear
/// `Locked` error; once it exits, the open succeeds.
#[test]
fn a_second_process_is_locked_out_until_the_first_exits() {
    use std::io::{BufRead as _, Write as _};
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["lock_child_holds_the_database", "--exact", "--nocapture", "--test-threads=1"])
        .env(LOCK_CHILD_DIR, dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains("OPEN") {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "child exited before opening the database");
    }
    match Db::open(dir.path(), opts()) {
        Err(e @ Error::Locked(_)) => {
            let msg = e.to_string();
            assert!(msg.contains(&*dir.path().to_string_lossy()), "{msg}");
            assert!(msg.to_lowercase().contains("lock"), "{msg}");
        }
        other => panic!("open while another process holds the database: {other:?}"),
    }
    child.stdin.take().unwrap().write_all(b"done\n").unwrap();
    assert!(child.wait().unwrap().success());
    let db = Db::open(dir.path(), opts()).unwrap();
    assert_eq!(db.get(b"child").unwrap().as_deref(), Some(&b"was here"[..]));
}
