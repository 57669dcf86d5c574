//! The `LOCK` file that keeps a second `Db` (in this process or another)
//! from opening the same directory.
//!
//! The lock is an advisory `flock`-style lock taken with std's
//! [`std::fs::File::try_lock`]. It is tied to the open file description, so
//! it is released when the `Db` is dropped or the process dies, even by
//! SIGKILL: a crashed process never leaves a stale lock behind.

use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};

use crate::fs::FileSystem;
use crate::manifest::LOCK;
use crate::{Error, Result};

/// Holds the lock for as long as it lives.
#[derive(Debug)]
pub(crate) struct DirLock {
    _file: File,
    path: PathBuf,
}

impl DirLock {
    /// Locks `dir/LOCK`, creating the file if needed.
    ///
    /// # Errors
    /// `Locked` if another holder has it; `Io` if the file cannot be made.
    pub fn acquire(fs: &dyn FileSystem, dir: &Path) -> Result<DirLock> {
        let path = dir.join(LOCK);
        if !fs.exists(&path) {
            let mut f = fs.create(&path)?;
            f.sync()?;
            drop(f);
            fs.sync_dir(dir)?;
        }
        let file = fs.open_read(&path)?;
        let locked = file.try_lock();
        Self::held(file, path, dir, locked)
    }

    /// Takes a shared lock on `dir/LOCK` for a read-only user: any number
    /// of them may hold it together, but not while a writer holds the
    /// exclusive lock (nor may a writer take it while they do). Creates
    /// nothing: without a `LOCK` file (a database last opened before locks
    /// existed, or copied without it) no lock is taken and `None` returned.
    ///
    /// # Errors
    /// `Locked` if a writer holds the lock; `Io` if the file cannot be opened.
    pub fn acquire_shared(fs: &dyn FileSystem, dir: &Path) -> Result<Option<DirLock>> {
        let path = dir.join(LOCK);
        if !fs.exists(&path) {
            return Ok(None);
        }
        let file = fs.open_read(&path)?;
        let locked = file.try_lock_shared();
        Self::held(file, path, dir, locked).map(Some)
    }

    fn held(file: File, path: PathBuf, dir: &Path, locked: Result<(), TryLockError>) -> Result<DirLock> {
        match locked {
            Ok(()) => Ok(DirLock { _file: file, path }),
            Err(TryLockError::WouldBlock) => Err(Error::Locked(dir.to_path_buf())),
            Err(TryLockError::Error(e)) => Err(Error::Io(e)),
        }
    }

    /// The lock file's path.
    #[allow(dead_code, reason = "kept for diagnostics")]
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::StdFs;

    #[test]
    fn second_lock_fails_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let first = DirLock::acquire(&StdFs, dir.path()).unwrap();
        assert!(matches!(DirLock::acquire(&StdFs, dir.path()), Err(Error::Locked(_))));
        drop(first);
        DirLock::acquire(&StdFs, dir.path()).unwrap();
    }

    #[test]
    fn shared_locks_coexist_and_exclude_the_writer() {
        let dir = tempfile::tempdir().unwrap();
        assert!(DirLock::acquire_shared(&StdFs, dir.path()).unwrap().is_none(), "no LOCK file: no lock");
        assert!(!dir.path().join(LOCK).exists(), "a shared lock creates nothing");
        let writer = DirLock::acquire(&StdFs, dir.path()).unwrap();
        assert!(matches!(DirLock::acquire_shared(&StdFs, dir.path()), Err(Error::Locked(_))));
        drop(writer);
        let a = DirLock::acquire_shared(&StdFs, dir.path()).unwrap().unwrap();
        let b = DirLock::acquire_shared(&StdFs, dir.path()).unwrap().unwrap();
        assert!(matches!(DirLock::acquire(&StdFs, dir.path()), Err(Error::Locked(_))));
        drop((a, b));
        DirLock::acquire(&StdFs, dir.path()).unwrap();
    }
}
