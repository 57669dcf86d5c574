//! Names of the files in a database directory.
//!
//! | file                | name              |
//! |---------------------|-------------------|
//! | table               | `000042.sst`      |
//! | write-ahead log     | `000043.log`      |
//! | manifest            | `MANIFEST-000044` |
//! | manifest pointer    | `CURRENT`         |
//! | process lock        | `LOCK`            |
//!
//! Numbers come from one counter (the manifest's next file number), so a
//! number names at most one file of any kind. Numbers print with at least six
//! digits and grow wider past 999999; the parser accepts exactly the names
//! the formatters produce, so `0042.sst` or `42.sst` is not a table.

/// What a file in the database directory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileKind {
    /// An immutable sorted table.
    Table,
    /// A write-ahead log.
    Log,
    /// A manifest (log of version edits).
    Manifest,
    /// The file naming the live manifest.
    Current,
    /// The lock file held while a process has the database open.
    Lock,
}

/// The name of the file holding `CURRENT`.
pub const CURRENT: &str = "CURRENT";
/// The name of the lock file.
pub const LOCK: &str = "LOCK";
const MANIFEST_PREFIX: &str = "MANIFEST-";

/// `{number:06}.sst`
#[must_use]
pub fn table_file_name(number: u64) -> String {
    format!("{number:06}.sst")
}

/// `{number:06}.log`
#[must_use]
pub fn log_file_name(number: u64) -> String {
    format!("{number:06}.log")
}

/// `MANIFEST-{number:06}`
#[must_use]
pub fn manifest_file_name(number: u64) -> String {
    format!("{MANIFEST_PREFIX}{number:06}")
}

/// Parses a file name (no directory) into its kind and number; `CURRENT` and
/// `LOCK` have number 0. `None` for anything siftdb did not name, including
/// temporary files.
///
/// ```
/// use siftdb::manifest::{FileKind, parse_file_name};
/// assert_eq!(parse_file_name("000042.sst"), Some((FileKind::Table, 42)));
/// assert_eq!(parse_file_name("MANIFEST-1234567"), Some((FileKind::Manifest, 1_234_567)));
/// assert_eq!(parse_file_name("CURRENT.tmp"), None);
/// ```
#[must_use]
pub fn parse_file_name(name: &str) -> Option<(FileKind, u64)> {
    match name {
        CURRENT => return Some((FileKind::Current, 0)),
        LOCK => return Some((FileKind::Lock, 0)),
        _ => {}
    }
    let (kind, digits) = if let Some(d) = name.strip_prefix(MANIFEST_PREFIX) {
        (FileKind::Manifest, d)
    } else if let Some(d) = name.strip_suffix(".sst") {
        (FileKind::Table, d)
    } else if let Some(d) = name.strip_suffix(".log") {
        (FileKind::Log, d)
    } else {
        return None;
    };
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let number: u64 = digits.parse().ok()?;
    // Only canonical spellings: exactly what the formatters print.
    (format!("{number:06}") == digits).then_some((kind, number))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for n in [0, 7, 999_999, 1_000_000, u64::MAX] {
            assert_eq!(parse_file_name(&table_file_name(n)), Some((FileKind::Table, n)));
            assert_eq!(parse_file_name(&log_file_name(n)), Some((FileKind::Log, n)));
            assert_eq!(parse_file_name(&manifest_file_name(n)), Some((FileKind::Manifest, n)));
        }
        assert_eq!(table_file_name(42), "000042.sst");
        assert_eq!(log_file_name(42), "000042.log");
        assert_eq!(manifest_file_name(42), "MANIFEST-000042");
        assert_eq!(parse_file_name("CURRENT"), Some((FileKind::Current, 0)));
        assert_eq!(parse_file_name("LOCK"), Some((FileKind::Lock, 0)));
    }

    #[test]
    fn foreign_names_are_rejected() {
        for name in [
            "",
            ".sst",
            "42.sst",
            "0000042.sst",
            "+00042.sst",
            "00004a.log",
            "MANIFEST-",
            "MANIFEST-12",
            "MANIFEST-000001.tmp",
            "CURRENT.tmp",
            "000001.sst.tmp",
            "99999999999999999999.log",
            "current",
        ] {
            assert_eq!(parse_file_name(name), None, "{name}");
        }
    }
}
