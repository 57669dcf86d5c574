//! A [`FileSystem`] that simulates power loss and injects I/O errors.
//!
//! [`FaultFs`] runs over a real directory through [`StdFs`], so readers
//! (memory maps, log replay) see exactly what a live process would. Next to
//! it, it keeps a model of what a disk would hold after a power loss: each
//! file's content as of its last `sync`, each name as of its directory's last
//! `sync_dir`. [`FaultFs::crash`] rewrites the real directory to that durable
//! state (optionally keeping torn tails) and kills every open handle.
//! [`FaultFs::fail_after`] makes the next operations of a kind fail.
//!
//! The full model, and what it does not simulate, is in docs/reliability.md, section "`FaultFs`".
//!
//! ```
//! use siftdb::fs::{CrashMode, FaultFs, FileSystem};
//! let dir = tempfile::tempdir()?;
//! let fs = FaultFs::new();
//! let path = dir.path().join("log");
//! let mut f = fs.create(&path)?;
//! f.write_all(b"kept")?;
//! f.sync()?;
//! fs.sync_dir(dir.path())?;
//! f.write_all(b" lost")?;
//! fs.crash(CrashMode::DropUnsynced)?;
//! assert_eq!(fs.read(&path)?, b"kept");
//! assert!(f.write_all(b"x").is_err(), "handles die with the crash");
//! # Ok::<(), std::io::Error>(())
//! ```

mod faults;
mod model;
#[cfg(test)]
mod tests;

use std::fmt;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

pub use faults::{FaultError, FaultOp, OpCounts};

use super::{FileSystem, StdFs, WritableFile};
use faults::Faults;
use model::{Ino, Model, Tails, XorShift};

/// What a simulated crash does to data not yet durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CrashMode {
    /// The process dies but the machine stays up: every acknowledged write
    /// stays (the kernel has it); only open handles die.
    KillProcess,
    /// Power loss: every file goes back to its last synced content, and every
    /// creation, rename and removal not made durable by `sync_dir` is undone.
    DropUnsynced,
    /// Power loss as in [`CrashMode::DropUnsynced`], except each file keeps a
    /// random prefix of its unsynced appended tail, drawn from `seed`.
    TornTails {
        /// Seed for the lengths kept; the same seed and history give the same result.
        seed: u64,
    },
}

/// Shared by the [`FaultFs`] clones and their open files.
#[derive(Debug, Default)]
struct State {
    model: Model,
    faults: Faults,
    /// Bumped by every crash; a handle from an older epoch is dead.
    epoch: u64,
}

/// The fault-injecting [`FileSystem`]; see the module docs.
///
/// Clones share one simulated disk. Names are keyed by their canonical parent
/// directory, so `sync_dir` finds them however the directory is spelled.
#[derive(Clone, Default)]
pub struct FaultFs {
    state: Arc<Mutex<State>>,
}

impl fmt::Debug for FaultFs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FaultFs").finish_non_exhaustive()
    }
}

impl FaultFs {
    /// A simulated disk with no faults planned. Files already on disk are
    /// taken as durable.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes the next `n` operations of kind `op` succeed and every later one
    /// fail with [`FaultError::Injected`] (a dead disk), counting from this
    /// call. `n = 0` fails the very next one. Replaces any earlier plan.
    ///
    /// A failed write first writes the first half of its buffer (a short
    /// write); every other failed operation changes nothing.
    pub fn fail_after(&self, op: FaultOp, n: u64) {
        self.state.lock().faults.plan(op, n, true);
    }

    /// As [`FaultFs::fail_after`], but only the one operation fails; later
    /// ones succeed again (a transient error).
    pub fn fail_once_after(&self, op: FaultOp, n: u64) {
        self.state.lock().faults.plan(op, n, false);
    }

    /// Cancels any planned failure.
    pub fn disable_faults(&self) {
        self.state.lock().faults.disable();
    }

    /// Operations attempted so far, per kind (failed ones included), since
    /// creation or [`FaultFs::reset_counts`]. Run a workload once, read
    /// `counts().get(FaultOp::Any)`, and fail each of that many ops in turn.
    #[must_use]
    pub fn counts(&self) -> OpCounts {
        self.state.lock().faults.counts()
    }

    /// Zeroes the operation counters.
    pub fn reset_counts(&self) {
        self.state.lock().faults.reset_counts();
    }

    /// Whether `err` was made by this module (an injected fault or a handle
    /// that died in a crash) rather than by the operating system.
    #[must_use]
    pub fn is_simulated(err: &io::Error) -> bool {
        err.get_ref().and_then(|e| e.downcast_ref::<FaultError>()).is_some()
    }

    /// Simulates a crash: rewrites every file and name this `FaultFs` touched
    /// to what a disk could hold afterwards (see [`CrashMode`]), makes every
    /// handle opened before it fail, and cancels any planned fault, so the
    /// directory can be reopened through the same `FaultFs` at once.
    ///
    /// # Errors
    /// An operating-system error while rewriting the real directory; the
    /// simulation is then unusable.
    pub fn crash(&self, mode: CrashMode) -> io::Result<()> {
        let mut st = self.state.lock();
        st.epoch += 1;
        st.faults.disable();
        let mut rng;
        let tails = match mode {
            CrashMode::KillProcess => {
                st.model = Model::default();
                return Ok(());
            }
            CrashMode::DropUnsynced => Tails::Drop,
            CrashMode::TornTails { seed } => {
                rng = XorShift::new(seed);
                Tails::Torn(&mut rng)
            }
        };
        let after = st.model.crash(tails);
        // Rebuild every touched name from the model: the file on disk now
        // need not be the one its durable entry points at.
        for (path, _) in &after {
            if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) {
                std::fs::remove_file(path)?;
            }
        }
        for (path, content) in &after {
            if let Some(bytes) = content {
                std::fs::write(path, bytes)?;
            }
        }
        Ok(())
    }

    /// Runs one operation of kind `op` under the lock, after the fault check.
    fn op<T>(&self, op: FaultOp, f: impl FnOnce(&mut State) -> io::Result<T>) -> io::Result<T> {
        let mut st = self.state.lock();
        st.faults.check(op)?;
        f(&mut st)
    }

    fn handle(
        &self,
        st: &State,
        inner: Box<dyn WritableFile>,
        ino: Ino,
        append: bool,
    ) -> Box<dyn WritableFile> {
        Box::new(FaultFile { state: Arc::clone(&self.state), inner, ino, append, epoch: st.epoch })
    }
}

/// The model's key for `path`: canonical parent plus file name, so that
/// `sync_dir` finds its entries however the directory was spelled.
fn key(path: &Path) -> PathBuf {
    // A bare file name has parent "", which canonicalize rejects.
    let parent = path.parent().map(|d| if d.as_os_str().is_empty() { Path::new(".") } else { d });
    match (parent.and_then(|d| d.canonicalize().ok()), path.file_name()) {
        (Some(dir), Some(name)) => dir.join(name),
        _ => path.to_path_buf(),
    }
}

/// Starts tracking `path` (already a key) if needed; returns its live inode
/// (`None`: no regular file there).
fn adopt(model: &mut Model, path: &Path) -> io::Result<Option<Ino>> {
    if model.is_tracked(path) {
        return Ok(model.live(path));
    }
    let content = match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() => Some(std::fs::read(path)?),
        // Directories are not modelled.
        Ok(_) => return Ok(None),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    Ok(model.track(path, content))
}

fn not_a_file(path: &Path) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, format!("faultfs: {} is not a regular file", path.display()))
}

impl FileSystem for FaultFs {
    /// Directories are not modelled: a created directory is durable at once.
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.op(FaultOp::CreateDir, |_| StdFs.create_dir_all(path))
    }

    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        self.op(FaultOp::Create, |st| {
            let k = key(path);
            adopt(&mut st.model, &k)?;
            let inner = StdFs.create(path)?;
            let ino = st.model.create(&k);
            Ok(self.handle(st, inner, ino, false))
        })
    }

    fn open_append(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        self.op(FaultOp::OpenAppend, |st| {
            let k = key(path);
            let ino = adopt(&mut st.model, &k)?;
            let inner = StdFs.open_append(path)?;
            let ino = ino.ok_or_else(|| not_a_file(path))?;
            Ok(self.handle(st, inner, ino, true))
        })
    }

    fn open_read(&self, path: &Path) -> io::Result<File> {
        StdFs.open_read(path)
    }

    /// A file's rename is durable only after `sync_dir`, as on a real disk. A
    /// directory's is durable at once, as `create_dir_all` is (directories
    /// are not modelled), and the names under it move with it, so a crash
    /// rebuilds them under the new name.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.op(FaultOp::Rename, |st| {
            let (kf, kt) = (key(from), key(to));
            if std::fs::symlink_metadata(from).is_ok_and(|m| m.is_dir()) {
                StdFs.rename(from, to)?;
                st.model.rename_dir(&kf, &kt);
                return Ok(());
            }
            adopt(&mut st.model, &kf)?;
            adopt(&mut st.model, &kt)?;
            StdFs.rename(from, to)?;
            st.model.rename(&kf, &kt);
            Ok(())
        })
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.op(FaultOp::Remove, |st| {
            let k = key(path);
            adopt(&mut st.model, &k)?;
            StdFs.remove_file(path)?;
            st.model.remove(&k);
            Ok(())
        })
    }

    /// Counted and failed as a `Remove`. Durable at once, as directories
    /// are not modelled: the names once under it are forgotten, so a crash
    /// recreates none of them in a directory that is gone.
    fn remove_dir(&self, path: &Path) -> io::Result<()> {
        self.op(FaultOp::Remove, |st| {
            let k = path.canonicalize()?;
            StdFs.remove_dir(path)?;
            st.model.remove_dir(&k);
            Ok(())
        })
    }

    /// Durability is simulated, so the real directory is not fsynced (tests
    /// stay fast); only its existence is checked.
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        self.op(FaultOp::SyncDir, |st| {
            let dir = dir.canonicalize()?;
            st.model.sync_dir(&dir);
            Ok(())
        })
    }

    fn truncate(&self, path: &Path, len: u64) -> io::Result<()> {
        self.op(FaultOp::Truncate, |st| {
            let k = key(path);
            let ino = adopt(&mut st.model, &k)?.ok_or_else(|| not_a_file(path))?;
            let new_len = usize::try_from(len).map_err(|_| not_a_file(path))?;
            StdFs.truncate(path, len)?;
            st.model.truncate(ino, new_len);
            Ok(())
        })
    }

    fn list_dir(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        StdFs.list_dir(dir)
    }

    fn exists(&self, path: &Path) -> bool {
        StdFs.exists(path)
    }
}

/// A file open for writing through [`FaultFs`].
struct FaultFile {
    state: Arc<Mutex<State>>,
    inner: Box<dyn WritableFile>,
    ino: Ino,
    /// Opened by `open_append` (`O_APPEND`: writes land at the end) rather
    /// than `create` (writes land at this handle's cursor).
    append: bool,
    epoch: u64,
}

impl fmt::Debug for FaultFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FaultFile")
            .field("ino", &self.ino)
            .field("len", &self.inner.len())
            .field("epoch", &self.epoch)
            .finish_non_exhaustive()
    }
}

impl FaultFile {
    /// Where a write through a `create` handle lands: `StdFs` counts the
    /// bytes written from offset zero, and the cursor moves only by writes.
    fn cursor(&self) -> io::Result<usize> {
        usize::try_from(self.inner.len()).map_err(io::Error::other)
    }

    fn alive(&self, st: &State) -> io::Result<()> {
        if st.epoch == self.epoch { Ok(()) } else { Err(io::Error::other(FaultError::DeadHandle)) }
    }
}

impl WritableFile for FaultFile {
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        let mut st = self.state.lock();
        self.alive(&st)?;
        let at = if self.append { None } else { Some(self.cursor()?) };
        if let Err(e) = st.faults.check(FaultOp::Write) {
            let short = buf.get(..buf.len() / 2).unwrap_or_default();
            self.inner.write_all(short)?;
            st.model.write(self.ino, at, short);
            return Err(e);
        }
        self.inner.write_all(buf)?;
        st.model.write(self.ino, at, buf);
        Ok(())
    }

    /// Durability is simulated, so the real file is not fsynced.
    fn sync(&mut self) -> io::Result<()> {
        let mut st = self.state.lock();
        self.alive(&st)?;
        st.faults.check(FaultOp::Sync)?;
        st.model.sync(self.ino);
        Ok(())
    }

    fn len(&self) -> u64 {
        self.inner.len()
    }
}
