//! The file-system layer every writer goes through.
//!
//! The WAL, the manifest and the table builder write only through
//! [`FileSystem`], so tests can swap in a fault-injecting implementation that
//! loses unsynced data, tears tails, fails the Nth operation, or forgets
//! directory entries that were never fsynced. Reads (memory maps, log replay)
//! use real files, which the fault-injecting layer keeps on disk as well.

mod atomic;
/// Fault injection: the project's own tests and crash loops (feature
/// `internals`).
#[cfg(feature = "internals")]
mod fault;
mod std_fs;

use std::fmt;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

pub use atomic::write_file_atomic;
#[cfg(feature = "internals")]
pub use fault::{CrashMode, FaultError, FaultFs, FaultOp, OpCounts};
pub use std_fs::StdFs;

/// A file open for appending writes.
///
/// Writes go straight to the operating system (no user-space buffer), so an
/// acknowledged write survives a process kill even before [`WritableFile::sync`].
/// Callers batch their own writes.
pub trait WritableFile: Send + fmt::Debug {
    /// Appends all of `buf`.
    ///
    /// # Errors
    /// The operating system's error.
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()>;
    /// Makes everything written so far durable (fdatasync).
    ///
    /// # Errors
    /// The operating system's error. After a failed sync the file's durable
    /// state is unknown; callers must not acknowledge later writes.
    fn sync(&mut self) -> io::Result<()>;
    /// Bytes written through this handle plus the length it was opened at.
    fn len(&self) -> u64;
    /// Whether [`WritableFile::len`] is zero.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A [`WritableFile`] that refuses every write: the log writers of a
/// database opened read-only hold one, so no path can append by mistake.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RefuseWrites;

impl WritableFile for RefuseWrites {
    fn write_all(&mut self, _buf: &[u8]) -> io::Result<()> {
        Err(io::Error::new(io::ErrorKind::PermissionDenied, "database opened read-only"))
    }

    /// Nothing was written, so there is nothing to make durable.
    fn sync(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn len(&self) -> u64 {
        0
    }
}

/// File operations siftdb performs on its directory.
pub trait FileSystem: Send + Sync + fmt::Debug {
    /// Creates `path` and its parents if missing.
    ///
    /// # Errors
    /// The operating system's error.
    fn create_dir_all(&self, path: &Path) -> io::Result<()>;
    /// Creates (or truncates) `path` for writing.
    ///
    /// # Errors
    /// The operating system's error.
    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>>;
    /// Opens an existing `path` to append at its end.
    ///
    /// # Errors
    /// The operating system's error.
    fn open_append(&self, path: &Path) -> io::Result<Box<dyn WritableFile>>;
    /// Opens `path` read-only (for memory maps and replay).
    ///
    /// # Errors
    /// The operating system's error.
    fn open_read(&self, path: &Path) -> io::Result<File>;
    /// Reads all of `path`.
    ///
    /// # Errors
    /// The operating system's error.
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        use io::Read as _;
        let mut buf = Vec::new();
        self.open_read(path)?.read_to_end(&mut buf)?;
        Ok(buf)
    }
    /// Atomically renames `from` to `to` (durable only after [`FileSystem::sync_dir`]).
    /// `from` may be a directory; it then replaces `to` only if `to` is
    /// missing or an empty directory (rename(2) on Linux).
    ///
    /// # Errors
    /// The operating system's error.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Removes a file.
    ///
    /// # Errors
    /// The operating system's error.
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    /// Removes an empty directory. The default refuses with
    /// [`io::ErrorKind::Unsupported`], so implementations written before it
    /// existed still compile; only `Db::checkpoint` needs it, to clear its
    /// staging directory.
    ///
    /// # Errors
    /// The operating system's error (the directory is not empty, or missing).
    fn remove_dir(&self, path: &Path) -> io::Result<()> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!("remove_dir({}) is not supported by this file system", path.display()),
        ))
    }
    /// Makes the directory's entries (creations, renames, removals) durable.
    ///
    /// # Errors
    /// The operating system's error.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// Cuts `path` to `len` bytes and makes that durable.
    ///
    /// # Errors
    /// The operating system's error.
    fn truncate(&self, path: &Path, len: u64) -> io::Result<()>;
    /// The paths of the entries of `dir`.
    ///
    /// # Errors
    /// The operating system's error.
    fn list_dir(&self, dir: &Path) -> io::Result<Vec<PathBuf>>;
    /// Whether `path` exists.
    fn exists(&self, path: &Path) -> bool;
    /// Makes `to` a durable copy of the immutable file `from`: a hard link
    /// where the file system allows one, else a copy, synced. The default
    /// copies.
    ///
    /// # Errors
    /// The operating system's error.
    fn link_or_copy(&self, from: &Path, to: &Path) -> io::Result<()> {
        let bytes = self.read(from)?;
        let mut out = self.create(to)?;
        out.write_all(&bytes)?;
        out.sync()
    }
}
