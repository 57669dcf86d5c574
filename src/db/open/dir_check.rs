//! Deciding what the path handed to `Db::open` is, before touching it.

use std::path::Path;

use crate::fs::FileSystem;
use crate::manifest::{CURRENT, FileKind, parse_file_name, replay};
use crate::{Error, Result};

/// What `Db::open` found at its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Found {
    /// Nothing: create the directory and a new database.
    Missing,
    /// An empty directory, or one holding only what a creation that crashed
    /// before `CURRENT` was written leaves (a lock file, temporary files, an
    /// empty log, a manifest of an empty database): a new database.
    Fresh,
    /// A database (`CURRENT` exists).
    Database,
}

/// Whether `name` is one siftdb writes, temporary files included.
pub(crate) fn is_siftdb_name(name: &str) -> bool {
    let base = name.strip_suffix(".tmp").unwrap_or(name);
    parse_file_name(base).is_some()
}

/// Classifies `path` without changing anything.
///
/// # Errors
/// `InvalidArgument` naming the path if it is not a directory, or is a
/// non-empty directory holding something siftdb did not write and no
/// `CURRENT`; `Corruption` naming `CURRENT` if it is missing but the
/// directory holds data (see [`check_fresh`]); `Io` if it cannot be read.
pub(crate) fn classify(fs: &dyn FileSystem, path: &Path) -> Result<Found> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Found::Missing),
        Err(e) => return Err(Error::Io(e)),
    };
    if !meta.is_dir() {
        return Err(Error::InvalidArgument(format!("{} is not a directory", path.display())));
    }
    if fs.exists(&path.join(CURRENT)) {
        return Ok(Found::Database);
    }
    for entry in fs.list_dir(path)? {
        let name = entry.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if !is_siftdb_name(name) || entry.is_dir() {
            return Err(Error::InvalidArgument(format!(
                "{} is not a siftdb database (it holds '{}' and no CURRENT file)",
                path.display(),
                entry.file_name().unwrap_or_default().display()
            )));
        }
    }
    check_fresh(fs, path)?;
    Ok(Found::Fresh)
}

/// Checks that a directory without `CURRENT` holds no data, so creating a
/// database there (which deletes the files the new state does not name)
/// loses nothing.
///
/// A creation that crashed before `CURRENT` was written leaves at most a
/// lock file, temporary files, an empty log and a manifest holding the one
/// snapshot edit of an empty database (or that edit cut short or
/// zero-filled, if the crash came while it was written). Anything more (a
/// table, a log with records, a manifest naming tables or writes, or one
/// damaged after a complete edit) means `CURRENT` was lost from a real
/// database.
///
/// # Errors
/// `Corruption` naming the missing `CURRENT` and the file that holds data;
/// `Io` if a file cannot be read.
pub(crate) fn check_fresh(fs: &dyn FileSystem, path: &Path) -> Result<()> {
    for entry in fs.list_dir(path)? {
        let Some(name) = entry.file_name().and_then(|n| n.to_str()) else { continue };
        let holds_data = match parse_file_name(name) {
            Some((FileKind::Table, _)) => true,
            Some((FileKind::Log, _)) => !fs.read(&entry)?.is_empty(),
            Some((FileKind::Manifest, _)) => {
                // The manifest is written in place, so a create that crashed
                // can leave it zero-filled or cut inside its first edit:
                // damage at offset 0 means no edit ever became durable.
                // (Damage later on, after a complete edit, is a real history.)
                let bytes = fs.read(&entry)?;
                match replay(&bytes) {
                    Ok(r) => r.state.version.tables().next().is_some() || r.state.last_seq > 0,
                    Err(Error::Corruption { offset: 0, .. }) => false,
                    Err(_) => true,
                }
            }
            _ => false,
        };
        if holds_data {
            return Err(Error::corruption_in(
                &path.join(CURRENT),
                0,
                format!(
                    "CURRENT is missing but the directory holds data ({name}); \
                     refusing to create a new database over it"
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::StdFs;

    #[test]
    fn classifies_files_foreign_dirs_and_leftovers() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(classify(&StdFs, &dir.path().join("new")).unwrap(), Found::Missing);
        assert_eq!(classify(&StdFs, dir.path()).unwrap(), Found::Fresh);
        std::fs::write(dir.path().join("LOCK"), b"").unwrap();
        std::fs::write(dir.path().join("MANIFEST-000001.tmp"), b"x").unwrap();
        assert_eq!(classify(&StdFs, dir.path()).unwrap(), Found::Fresh);
        std::fs::write(dir.path().join("notes.txt"), b"x").unwrap();
        assert!(matches!(classify(&StdFs, dir.path()), Err(Error::InvalidArgument(_))));
        assert!(matches!(classify(&StdFs, &dir.path().join("notes.txt")), Err(Error::InvalidArgument(_))));
        std::fs::write(dir.path().join("CURRENT"), b"MANIFEST-000001\n").unwrap();
        assert_eq!(classify(&StdFs, dir.path()).unwrap(), Found::Database);
    }
}
