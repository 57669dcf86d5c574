//! The crate's error type.
//!
//! Every fallible public function returns [`Result`]. Variants carry the
//! evidence a user needs to act: a corrupt file names itself and the byte
//! offset at which the damage was found.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::filter::BuildError;

/// The result type used throughout siftdb.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in siftdb.
#[non_exhaustive]
#[derive(Debug)]
pub enum Error {
    /// An operating-system I/O error.
    Io(std::io::Error),
    /// Bytes on disk (or handed to a decoder) are not what was written.
    Corruption {
        /// The file holding the damage; `None` when decoding a bare buffer.
        file: Option<PathBuf>,
        /// Byte offset of the damaged region (relative to the file, or to the buffer).
        offset: u64,
        /// What was wrong, in words.
        what: String,
    },
    /// The caller passed something siftdb cannot accept.
    InvalidArgument(String),
    /// A filter could not be built: a static filter (xor, binary fuse,
    /// Ribbon) that did not peel or band, one that failed validation, too
    /// many keys for the kind, or a kind with no filter (`none`).
    FilterBuild(BuildError),
    /// Another process (or another `Db` in this one) holds the database lock.
    Locked(PathBuf),
    /// Writes are disabled after a failure: an earlier write or fsync
    /// failed (the string says which), so the database refuses every later
    /// write, flush and compaction until it is reopened, and no write is
    /// acknowledged that may be lost. Reads still work. (Not to be confused
    /// with [`Error::OpenedReadOnly`], a handle opened for reading only.)
    WritesDisabled(String),
    /// The database has been closed.
    Closed,
    /// The database was opened with [`crate::Db::open_read_only`]: writes,
    /// flushes, compactions and syncs are refused by design, nothing failed.
    /// (A failure that disables writes is [`Error::WritesDisabled`].)
    OpenedReadOnly,
    /// A file was written by a newer siftdb, in a format version this build
    /// does not read. Nothing is wrong with it: open it with a newer build.
    /// (Damage is [`Error::Corruption`].)
    Unsupported {
        /// The file; `None` when decoding a bare buffer.
        file: Option<PathBuf>,
        /// Which format: `"table"` or `"database"`.
        format: &'static str,
        /// The format version the file declares.
        found: u32,
        /// The newest version this build reads.
        supported: u32,
    },
}

impl Error {
    /// A corruption found at `offset` of an anonymous buffer.
    #[must_use]
    pub fn corruption(offset: u64, what: impl Into<String>) -> Self {
        Error::Corruption { file: None, offset, what: what.into() }
    }

    /// A corruption found at `offset` of `file`.
    #[must_use]
    pub fn corruption_in(file: &Path, offset: u64, what: impl Into<String>) -> Self {
        Error::Corruption { file: Some(file.to_path_buf()), offset, what: what.into() }
    }

    /// Attaches a file name to a corruption error whose offsets are relative
    /// to a region starting at `base` in that file. Other errors pass through.
    #[must_use]
    pub fn at_file(self, file: &Path, base: u64) -> Self {
        match self {
            Error::Unsupported { file: None, format, found, supported } => {
                Error::Unsupported { file: Some(file.to_path_buf()), format, found, supported }
            }
            Error::Corruption { file: None, offset, what } => Error::Corruption {
                file: Some(file.to_path_buf()),
                offset: base.saturating_add(offset),
                what,
            },
            other => other,
        }
    }

    /// Whether this is an [`Error::Unsupported`]: a file from a newer build.
    #[must_use]
    pub fn is_unsupported(&self) -> bool {
        matches!(self, Error::Unsupported { .. })
    }

    /// Whether this is a [`Error::Corruption`].
    #[must_use]
    pub fn is_corruption(&self) -> bool {
        matches!(self, Error::Corruption { .. })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(e) => write!(f, "I/O error: {e}"),
            Error::Corruption { file: Some(file), offset, what } => {
                write!(f, "{}: corruption at offset {offset}: {what}", file.display())
            }
            Error::Corruption { file: None, offset, what } => {
                write!(f, "corruption at offset {offset}: {what}")
            }
            Error::InvalidArgument(msg) => write!(f, "invalid argument: {msg}"),
            Error::FilterBuild(e) => write!(f, "filter build failed: {e}"),
            Error::Locked(path) => write!(
                f,
                "{}: database is locked by another process (or already open in this one)",
                path.display()
            ),
            Error::WritesDisabled(why) => {
                write!(f, "writes are disabled after an earlier failure ({why}); reopen the database")
            }
            Error::Closed => write!(f, "database is closed"),
            Error::OpenedReadOnly => write!(f, "database was opened read-only: writes are refused"),
            Error::Unsupported { file, format, found, supported } => {
                if let Some(file) = file {
                    write!(f, "{}: ", file.display())?;
                }
                write!(
                    f,
                    "written by a newer siftdb ({format} format version {found}; this build reads up to \
                     {supported})"
                )
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            Error::FilterBuild(e) => Some(e),
            _ => None,
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}

impl From<BuildError> for Error {
    fn from(e: BuildError) -> Self {
        Error::FilterBuild(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    #[test]
    fn at_file_rebases_offsets_and_names_the_file() {
        let e = Error::corruption(10, "bad crc").at_file(Path::new("000012.sst"), 4096);
        assert_eq!(e.to_string(), "000012.sst: corruption at offset 4106: bad crc");
        assert!(e.is_corruption());
    }

    #[test]
    fn io_errors_chain_their_source() {
        let e = Error::from(std::io::Error::other("disk on fire"));
        assert_eq!(e.source().map(ToString::to_string).as_deref(), Some("disk on fire"));
    }
}
