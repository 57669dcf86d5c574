//! One whole state of a database a writer may be changing while it is
//! read: the rule both `inspect_db` (`db info`, `db verify`) and a
//! secondary (`Db::open_secondary`, `refresh`) read by.
//!
//! The writer appends manifest edits, rolls to a new manifest, and deletes
//! the tables and logs an edit has dropped. Each deletion comes only after
//! the edit that makes it safe is in the manifest, and every edit grows the
//! manifest or moves `CURRENT` ([`manifest_mark`]). So a scan that found
//! every file its manifest names (tables opened, logs read) holds that
//! manifest's state whole, whatever the writer did next. A scan that found
//! one missing is damage only if the mark held through it; else the writer
//! deleted the file after a newer edit, and the scan is repeated, reusing
//! the tables it opened, so a busy writer costs the repeats only its new
//! tables. The logs are read as they stand: a batch being appended is a
//! torn tail and left out (it was not acknowledged before the scan began).

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use super::{RecoveryScan, scan_reusing};
use crate::fs::FileSystem;
use crate::manifest::{manifest_file_name, read_current};
use crate::table::Table;
use crate::wal::RecoveryMode;
use crate::{Error, Result};

/// How long a scan of a database a writer is changing is repeated before
/// its last verdict stands: a writer whose every edit lands inside a scan
/// would otherwise keep a reader out for ever.
pub const SCAN_RETRY_TIME: Duration = Duration::from_secs(10);

/// Where the manifest stands: `CURRENT`'s manifest number and that
/// manifest's length. Every edit a writer publishes changes one of them.
///
/// # Errors
/// `Io` or `Corruption` reading `CURRENT`; `Io` if its manifest is gone
/// (a roll in between).
pub(crate) fn manifest_mark(fs: &dyn FileSystem, dir: &Path) -> Result<(u64, u64)> {
    let number = read_current(fs, dir)?;
    let len = fs.open_read(&dir.join(manifest_file_name(number))).and_then(|f| f.metadata())?.len();
    Ok((number, len))
}

/// [`super::scan`] repeated until it stands (the module's rule), for up to
/// [`SCAN_RETRY_TIME`]; then the last attempt's verdict. Tables in `opened`
/// are not opened again (their `LiveTable::table` is filled from it), and
/// every table an attempt opens is added to it.
///
/// # Errors
/// As [`super::scan`], once it stands.
pub(crate) fn scan_whole(
    fs: &dyn FileSystem,
    dir: &Path,
    mode: RecoveryMode,
    opened: &mut HashMap<u64, Table>,
) -> Result<RecoveryScan> {
    let started = Instant::now();
    let mut attempt: u64 = 0;
    loop {
        let before = manifest_mark(fs, dir);
        let mut scanned = scan_reusing(fs, dir, mode, &|n| opened.contains_key(&n));
        if let Ok(s) = &mut scanned {
            for t in &mut s.tables {
                match &t.table {
                    Some(fresh) => {
                        opened.insert(t.record.file_number, fresh.clone());
                    }
                    None if t.error.is_none() => t.table = opened.get(&t.record.file_number).cloned(),
                    None => {}
                }
            }
        }
        // A file gone under the scan is no verdict even with the mark held:
        // the writer deletes what an edit already dropped (an older log the
        // scan reads for its report) after that edit.
        let vanished = matches!(&scanned, Err(Error::Io(e)) if e.kind() == std::io::ErrorKind::NotFound);
        let clean = scanned.as_ref().is_ok_and(|s| !s.refuses());
        // No mark before (not a database, or a roll in between): nothing
        // says a writer moved, and the scan's verdict stands.
        let settled = before.map_or(true, |b| manifest_mark(fs, dir).is_ok_and(|after| after == b));
        if clean || (settled && !vanished) || started.elapsed() >= SCAN_RETRY_TIME {
            return scanned;
        }
        attempt += 1;
        std::thread::sleep(Duration::from_millis(attempt.min(10)));
    }
}
