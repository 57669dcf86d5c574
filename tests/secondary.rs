//! `Db::open_secondary` and `Db::refresh` (issue 63, step 2): a view of a
//! database a writer holds reads every write acknowledged before its open
//! (or refresh), each batch whole; it survives the writer deleting the
//! tables it reads; its snapshots keep their state across refreshes; and
//! it never writes a byte.

#[path = "common/batch_prefix.rs"]
mod batch_prefix;

use batch_prefix::{BatchWriters, dir_files, prefix_of};
use siftdb::{Compression, CompressionPolicy, Db, Error, Options};

const KEYS_PER_BATCH: usize = 3;

fn opts() -> Options {
    Options {
        memtable_bytes: 8 << 10,
        table_target_bytes: 16 << 10,
        base_level_bytes: 64 << 10,
        hash_salt: Some(63),
        // Raw, so small test values still make a tree of many tables.
        compression: CompressionPolicy::uniform(Compression::None),
        ..Options::default()
    }
}

fn key(i: u32) -> String {
    format!("key{i:06}")
}

#[test]
fn a_view_reads_beside_its_writer_and_catches_up_on_refresh() {
    let dir = tempfile::tempdir().unwrap();
    let writer = Db::open(dir.path(), opts()).unwrap();
    for i in 0..3000 {
        writer.put(key(i), format!("old{i}")).unwrap();
    }
    writer.wait_for_background_work().unwrap();
    // Some writes only in the log: the view must read them there.
    writer.put("logged", "only in the WAL").unwrap();
    let view = Db::open_secondary(dir.path(), opts()).unwrap();
    assert!(view.is_secondary() && view.is_read_only() && !writer.is_secondary());
    let tables_at_open = writer.stats().levels.iter().map(|l| l.tables).sum::<u64>();
    assert!(tables_at_open >= 4, "tables at open: {tables_at_open}");
    assert_eq!(view.get("logged").unwrap().as_deref(), Some(&b"only in the WAL"[..]));
    assert_eq!(view.iter().count(), 3001);

    // The writer rewrites everything: every table the view holds is
    // compacted away and its file deleted.
    for i in 0..3000 {
        writer.put(key(i), format!("new{i}")).unwrap();
    }
    writer.delete_range(key(0), key(1000)).unwrap();
    writer.compact().unwrap();
    for i in (0..3000).step_by(97) {
        assert_eq!(
            view.get(key(i)).unwrap().unwrap(),
            format!("old{i}").as_bytes(),
            "key {i} before refresh"
        );
    }
    assert_eq!(view.iter().count(), 3001, "the deleted tables still read");

    view.refresh().unwrap();
    for i in (0..3000).step_by(97) {
        let want = (i >= 1000).then(|| format!("new{i}"));
        assert_eq!(view.get(key(i)).unwrap().map(|v| v.to_vec()), want.map(String::into_bytes), "key {i}");
    }
    assert_eq!(view.iter().count(), 2001);
    assert_eq!(writer.iter().count(), 2001, "the writer is unaffected");

    assert!(matches!(view.put("k", "v"), Err(Error::OpenedReadOnly)));
    assert!(matches!(view.flush(), Err(Error::OpenedReadOnly)));
    assert!(matches!(writer.refresh(), Err(Error::InvalidArgument(_))));
}

/// A snapshot taken on a view reads the state it was taken in after a
/// refresh brings in a compaction that dropped the versions it needs.
#[test]
fn a_views_snapshot_keeps_its_state_across_refreshes() {
    let dir = tempfile::tempdir().unwrap();
    let writer = Db::open(dir.path(), Options { auto_compaction: false, ..opts() }).unwrap();
    writer.put("k", "v1").unwrap();
    writer.put("gone", "soon").unwrap();
    writer.flush().unwrap();
    let view = Db::open_secondary(dir.path(), opts()).unwrap();
    let snap = view.snapshot();
    writer.put("k", "v2").unwrap();
    writer.delete("gone").unwrap();
    writer.compact().unwrap();
    view.refresh().unwrap();
    assert_eq!(view.get("k").unwrap().as_deref(), Some(&b"v2"[..]));
    assert_eq!(view.get("gone").unwrap(), None);
    assert_eq!(snap.get("k").unwrap().as_deref(), Some(&b"v1"[..]));
    assert_eq!(snap.get("gone").unwrap().as_deref(), Some(&b"soon"[..]));
    let seen: Vec<_> = snap.iter().map(|r| r.unwrap().0).collect();
    assert_eq!(seen, [&b"gone"[..], &b"k"[..]]);
}

/// Views opened and refreshed while two writers write batches, and the
/// writer flushes and compacts underneath (deleting tables and logs the
/// views are reading): each view holds every batch acknowledged before it
/// opened or refreshed, whole, and no batch after a missing one.
#[test]
fn views_under_writes_hold_every_acknowledged_batch_whole() {
    const WRITERS: usize = 2;
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    let writers = BatchWriters::start(&db, WRITERS, KEYS_PER_BATCH, 60);
    let mut checks = 0;
    let mut refreshed = None::<Db>;
    for round in 0..12 {
        std::thread::sleep(std::time::Duration::from_millis(60));
        let before = writers.acked();
        let view = match refreshed.take() {
            Some(view) if round % 2 == 1 => {
                view.refresh().unwrap();
                view
            }
            _ => Db::open_secondary(dir.path(), opts()).unwrap(),
        };
        let after = writers.acked();
        for w in 0..WRITERS {
            // A writer counts a batch only after `write` returns, so one more
            // may already be in the database: acknowledged or not, whole.
            let n = prefix_of(&view, w, after[w] + 2, KEYS_PER_BATCH);
            assert!(
                (before[w]..=after[w] + 1).contains(&n),
                "round {round} writer {w}: {n}, acked {before:?}..{after:?}"
            );
            checks += 1;
        }
        refreshed = Some(view);
    }
    writers.stop();
    let tables = db.stats().levels.iter().map(|l| l.tables).sum::<u64>();
    assert!(checks == 24 && tables > 4, "the tree grew under the views: {tables} tables");
}

/// Opening a view, reading, refreshing and closing it change no file: the
/// directory is byte for byte what it was (no lock file, no log, no
/// manifest).
#[test]
fn a_view_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let writer = Db::open(dir.path(), opts()).unwrap();
    for i in 0..2000 {
        writer.put(key(i), "v").unwrap();
    }
    writer.wait_for_background_work().unwrap();
    writer.put("logged", "v").unwrap();
    let before = dir_files(dir.path());
    let view = Db::open_secondary(dir.path(), opts()).unwrap();
    assert_eq!(view.iter().count(), 2001);
    view.refresh().unwrap();
    view.close().unwrap();
    drop(view);
    assert_eq!(dir_files(dir.path()), before);
    // And it does not need the lock: the writer kept it throughout.
    assert!(matches!(Db::open_read_only(dir.path(), opts()), Err(Error::Locked(_))));
}

#[test]
fn a_view_of_what_is_no_database_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let err = Db::open_secondary(dir.path(), opts()).unwrap_err();
    assert!(matches!(&err, Error::InvalidArgument(m) if m.contains("not a siftdb database")), "{err}");
    let err = Db::open_secondary(dir.path().join("missing"), opts()).unwrap_err();
    assert!(matches!(&err, Error::InvalidArgument(m) if m.contains("no such directory")), "{err}");
}
