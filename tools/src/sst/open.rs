//! Opening a table read-only, with one-line errors that name the path.

use std::path::Path;

use siftdb::Error;
use siftdb::table::Table;

/// Opens `path` as a table (read-only: the file is mapped, never written).
///
/// # Errors
/// One line naming the path and the problem: missing, a directory, not a
/// table, truncated or corrupt.
pub fn open_table(path: &Path) -> Result<Table, String> {
    if path.is_dir() {
        return Err(format!("{}: is a directory, not a table file", path.display()));
    }
    Table::open_path(path).map_err(|e| describe(path, &e))
}

/// One line for `e`, naming `path` once.
#[must_use]
pub fn describe(path: &Path, e: &Error) -> String {
    match e {
        Error::Corruption { file: Some(_), what, .. } if what.contains("magic") => {
            format!("{}: not a siftdb table, or truncated ({what})", path.display())
        }
        Error::Corruption { file: Some(_), what, .. } if what.contains("too short") => {
            format!("{}: truncated or not a table ({what})", path.display())
        }
        Error::Corruption { file: Some(_), .. } | Error::Unsupported { file: Some(_), .. } => e.to_string(),
        Error::Io(io) => format!("{}: {io}", path.display()),
        other => format!("{}: {other}", path.display()),
    }
}

/// A problem found while reading a table's data, as the `{offset, what}`
/// object the reports share: `offset` is the file offset of the damage
/// (`null` for an error that is not about a byte), `what` the one-line
/// message naming the path.
#[must_use]
pub fn problem_json(path: &Path, e: &Error) -> serde_json::Value {
    let offset = match e {
        Error::Corruption { offset, .. } => Some(*offset),
        _ => None,
    };
    serde_json::json!({ "offset": offset, "what": describe(path, e) })
}
