//! A table is visible at its path only once complete.

mod table_common;

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use siftdb::ValueKind;
use siftdb::filter::FilterKind;
use siftdb::fs::{FileSystem, StdFs, WritableFile};
use siftdb::table::{FilterStatus, Table, TableBuilder, TableOptions};
use table_common::{build_with, key, kinds, opts, rows, table_path};

/// Which operation [`FailingFs`] fails.
#[derive(Debug, Clone, Copy, PartialEq)]
enum FailAt {
    Write,
    Sync,
    Rename,
    SyncDir,
}

#[derive(Debug)]
struct FailingFs(FailAt);

#[derive(Debug)]
struct FailingFile(Box<dyn WritableFile>, FailAt);

impl WritableFile for FailingFile {
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        if self.1 == FailAt::Write {
            // Tear the write, as a full disk might.
            self.0.write_all(&buf[..buf.len() / 2])?;
            return Err(io::Error::other("injected write failure"));
        }
        self.0.write_all(buf)
    }
    fn sync(&mut self) -> io::Result<()> {
        if self.1 == FailAt::Sync {
            return Err(io::Error::other("injected sync failure"));
        }
        self.0.sync()
    }
    fn len(&self) -> u64 {
        self.0.len()
    }
}

impl FileSystem for FailingFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        StdFs.create_dir_all(path)
    }
    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        Ok(Box::new(FailingFile(StdFs.create(path)?, self.0)))
    }
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        Ok(Box::new(FailingFile(StdFs.open_append(path)?, self.0)))
    }
    fn open_read(&self, path: &Path) -> io::Result<File> {
        StdFs.open_read(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        if self.0 == FailAt::Rename {
            return Err(io::Error::other("injected rename failure"));
        }
        StdFs.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        StdFs.remove_file(path)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        if self.0 == FailAt::SyncDir {
            return Err(io::Error::other("injected directory sync failure"));
        }
        StdFs.sync_dir(dir)
    }
    fn truncate(&self, path: &Path, len: u64) -> io::Result<()> {
        StdFs.truncate(path, len)
    }
    fn list_dir(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        StdFs.list_dir(dir)
    }
    fn exists(&self, path: &Path) -> bool {
        StdFs.exists(path)
    }
}

fn dir_is_empty(dir: &Path) -> bool {
    StdFs.list_dir(dir).unwrap().is_empty()
}

#[test]
fn dropping_an_unfinished_builder_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = table_path(&dir, "000001.sst");
    let mut b =
        TableBuilder::create(&path, TableOptions { block_bytes: 256, ..opts(FilterKind::None) }).unwrap();
    for (i, r) in rows(5000).iter().enumerate() {
        b.add(&r.key, r.seq, r.kind, &r.value).unwrap();
        if i == 2000 {
            // Some blocks are already on disk, under the temp name only.
            assert!(!path.exists());
        }
    }
    drop(b);
    assert!(dir_is_empty(dir.path()), "{:?}", StdFs.list_dir(dir.path()).unwrap());
}

#[test]
fn a_failed_finish_leaves_nothing_at_the_path() {
    for fail in [FailAt::Write, FailAt::Sync, FailAt::Rename, FailAt::SyncDir] {
        let dir = tempfile::tempdir().unwrap();
        let path = table_path(&dir, "000002.sst");
        let fs = Arc::new(FailingFs(fail));
        let mut b = TableBuilder::new(fs, &path, opts(FilterKind::None)).unwrap();
        // Small enough that nothing is written before finish.
        for r in rows(100) {
            b.add(&r.key, r.seq, r.kind, &r.value).unwrap();
        }
        let err = b.finish().unwrap_err();
        assert!(matches!(err, siftdb::Error::Io(_)), "{fail:?}: {err}");
        assert!(!path.exists(), "{fail:?}: a table appeared at its path");
        assert!(dir_is_empty(dir.path()), "{fail:?}: {:?}", StdFs.list_dir(dir.path()).unwrap());
    }
}

#[test]
fn a_write_error_poisons_the_builder() {
    let dir = tempfile::tempdir().unwrap();
    let path = table_path(&dir, "000003.sst");
    let mut b = TableBuilder::new(Arc::new(FailingFs(FailAt::Write)), &path, opts(FilterKind::None)).unwrap();
    let mut failed_at = None;
    // Enough data to overflow the write buffer mid-build.
    for (i, r) in rows(40_000).iter().enumerate() {
        if b.add(&r.key, r.seq, r.kind, &r.value).is_err() {
            failed_at = Some(i);
            break;
        }
    }
    assert!(failed_at.is_some(), "the injected write failure never surfaced");
    assert!(b.add(b"zzz", 1, ValueKind::Value, b"").is_err(), "a poisoned builder accepted a key");
    assert!(b.finish().is_err());
    assert!(dir_is_empty(dir.path()));
}

#[test]
fn injected_static_filter_failure_falls_back_to_blocked_bloom() {
    let dir = tempfile::tempdir().unwrap();
    let rows = rows(3000);
    let statics: Vec<FilterKind> = kinds().into_iter().filter(FilterKind::is_static).collect();
    assert_eq!(statics.len(), 5, "xor8, xor16, fuse8, fuse16, ribbon");
    for kind in statics {
        let path = table_path(&dir, &format!("{kind}.sst"));
        let o = TableOptions { inject_filter_build_failure: true, ..opts(kind) };
        let meta = build_with(&path, o, &rows);
        assert!(matches!(meta.filter, FilterKind::BlockedBloom { .. }), "{kind}: {:?}", meta.filter);
        // The fallback's evidence is the properties' pair: requested and built.
        let t = Table::open_path(&path).unwrap();
        let reason = t.properties().filter_fallback_reason.clone().unwrap();
        assert!(reason.contains("injected"), "{reason}");
        assert_eq!(t.properties().filter_requested, kind.to_string());
        assert_eq!(t.properties().filter_kind, meta.filter.to_string());
        let details = t.filter_details();
        assert_eq!(details.status, FilterStatus::Loaded);
        assert_eq!(details.fallback_reason.as_deref(), Some(reason.as_str()));
        for i in 0..3000 {
            assert!(t.get(&key(i), u64::MAX).unwrap().entry.is_some(), "{kind}: key {i} lost");
        }
    }
}

#[test]
fn bad_options_are_invalid_arguments_and_create_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = table_path(&dir, "000004.sst");
    for o in [
        TableOptions { block_bytes: 0, ..opts(FilterKind::None) },
        opts(FilterKind::Bloom { bits_per_key: f64::NAN }),
        opts(FilterKind::BlockedBloom { bits_per_key: 0.0 }),
        opts(FilterKind::BlockedBloom { bits_per_key: 65.0 }),
    ] {
        let r = TableBuilder::create(&path, o.clone());
        assert!(matches!(r, Err(siftdb::Error::InvalidArgument(_))), "{o:?}");
    }
    assert!(dir_is_empty(dir.path()));
}
