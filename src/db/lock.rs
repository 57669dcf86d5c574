//! The `LOCK` file that keeps a second `Db` (in this process or another)
//! from opening the same directory.
//!
//! The lock is an advisory `flock`-style lock taken with std's
//! [`std::fs::File::try_lock`]. It is tied to the open file description, so
//! it is released when the `Db` is dropped or the process dies, even by
//! SIGKILL: a crashed process never leaves a stale lock behind.
//!
//! Being tied to the open file description has one cost: a thread that
//! spawns a child process copies every descriptor into the child for the
//! moment between fork and exec (close-on-exec only closes them at exec).
//! A `Db` closed and reopened during that moment finds its own lock still
//! held by the half-started child. So a refused lock is retried for a
//! short while ([`LOCK_WAIT`]) before `Locked` is returned; a real second
//! holder keeps it far longer than that.

use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::fs::FileSystem;
use crate::manifest::LOCK;
use crate::{Error, Result};

/// How long a refused lock is retried before `Locked` is returned: enough
/// for a child process forked by another thread to reach exec on a loaded
/// machine, short enough that a user who opened the database twice hears
/// of it at once.
const LOCK_WAIT: Duration = Duration::from_millis(250);

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
        let locked = retry_while_blocked(|| file.try_lock());
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
        let locked = retry_while_blocked(|| file.try_lock_shared());
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

/// Calls `try_lock` until it stops answering `WouldBlock` or [`LOCK_WAIT`]
/// has passed, sleeping a little longer each time.
fn retry_while_blocked(mut try_lock: impl FnMut() -> Result<(), TryLockError>) -> Result<(), TryLockError> {
    let deadline = Instant::now() + LOCK_WAIT;
    let mut pause = Duration::from_millis(1);
    loop {
        match try_lock() {
            Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(20));
            }
            other => return other,
        }
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

    /// A lock released within `LOCK_WAIT` (as a forked child's copy is at
    /// exec) is taken, not refused.
    #[test]
    fn a_lock_released_soon_is_waited_for() {
        let dir = tempfile::tempdir().unwrap();
        let first = DirLock::acquire(&StdFs, dir.path()).unwrap();
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(LOCK_WAIT / 5);
            drop(first);
        });
        DirLock::acquire(&StdFs, dir.path()).unwrap();
        releaser.join().unwrap();
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
