//! Helpers shared by the engine's integration tests.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use siftdb::fs::{FileSystem, StdFs, WritableFile};

/// The real file system with `sync` and `sync_dir` turned into no-ops.
///
/// For tests that check what the database *returns* (model, shape, stats),
/// not what survives a power loss: thousands of tiny flushes would
/// otherwise spend their time waiting for fsyncs on a shared disk. Crash
/// and fault tests use the real thing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoSyncFs;

#[derive(Debug)]
struct NoSyncFile(Box<dyn WritableFile>);

impl WritableFile for NoSyncFile {
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.0.write_all(buf)
    }
    fn sync(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn len(&self) -> u64 {
        self.0.len()
    }
}

impl FileSystem for NoSyncFs {
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        StdFs.create_dir_all(path)
    }
    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        Ok(Box::new(NoSyncFile(StdFs.create(path)?)))
    }
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        Ok(Box::new(NoSyncFile(StdFs.open_append(path)?)))
    }
    fn open_read(&self, path: &Path) -> io::Result<File> {
        StdFs.open_read(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        StdFs.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        StdFs.remove_file(path)
    }
    fn sync_dir(&self, _dir: &Path) -> io::Result<()> {
        Ok(())
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

/// A shareable [`NoSyncFs`] for `Options::fs`.
#[must_use]
pub fn no_sync_fs() -> Arc<dyn FileSystem> {
    Arc::new(NoSyncFs)
}
