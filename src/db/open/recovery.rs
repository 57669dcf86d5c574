//! Rebuilding the state on open: the manifest, its tables, and the WALs
//! written since the last flush.
//!
//! Rules:
//! - `CURRENT` names the manifest; its replay gives the tables and the
//!   oldest WAL still needed (the log number). A damaged manifest is
//!   `Corruption` naming it (a torn last edit was never acknowledged and is
//!   dropped).
//! - Every table the manifest names must exist and open, else `Corruption`
//!   naming the table file.
//! - WALs numbered at or above the log number are replayed oldest first.
//!   A torn tail is dropped and the log truncated to its valid length
//!   before anything is appended. Damage with valid records after it is
//!   `Corruption` naming the log (strict mode), or ends recovery there
//!   (point-in-time mode: the log is cut at the damage and later logs are
//!   discarded, so the database holds exactly the writes before it).
//! - Opened read-only, replay reads the same records but cuts no log: a
//!   torn tail or the damage is left in place, and later logs are skipped
//!   rather than discarded.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use crate::batch::WriteBatch;
use crate::fs::FileSystem;
use crate::key::SeqNo;
use crate::manifest::{FileKind, VersionSet, manifest_file_name, parse_file_name, read_current, replay};
use crate::memtable::Memtable;
use crate::table::Table;
use crate::wal::{HEADER_LEN, LogEnd, RecordType, RecoveryMode, WalReader};
use crate::{Error, Result};

use crate::tree::TableFile;

/// The manifest state and where it came from.
pub(crate) struct LoadedManifest {
    pub set: VersionSet,
    pub number: u64,
}

/// Reads `CURRENT` and replays the manifest it names.
pub(crate) fn load_manifest(fs: &dyn FileSystem, dir: &Path) -> Result<LoadedManifest> {
    let number = read_current(fs, dir)?;
    let path = dir.join(manifest_file_name(number));
    let bytes = fs.read(&path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            Error::corruption_in(&path, 0, "manifest named by CURRENT is missing")
        }
        _ => Error::Io(e),
    })?;
    let replayed = replay(&bytes).map_err(|e| e.at_file(&path, 0))?;
    Ok(LoadedManifest { set: replayed.state, number })
}

/// Opens every table the manifest names.
pub(crate) fn open_tables(
    fs: &Arc<dyn FileSystem>,
    dir: &Path,
    set: &VersionSet,
    cleanup_failures: &Arc<AtomicU64>,
) -> Result<HashMap<u64, Arc<TableFile>>> {
    let mut out = HashMap::new();
    for (_, record) in set.version.tables() {
        let path = dir.join(crate::manifest::table_file_name(record.file_number));
        if !fs.exists(&path) {
            return Err(Error::corruption_in(&path, 0, "table named by the manifest is missing"));
        }
        let table = Table::open(&**fs, &path).map_err(|e| e.at_file(&path, 0))?;
        out.insert(
            record.file_number,
            Arc::new(TableFile::new(
                Arc::clone(record),
                table,
                path,
                Arc::clone(fs),
                Arc::clone(cleanup_failures),
            )),
        );
    }
    Ok(out)
}

/// What WAL replay produced.
pub(crate) struct Replayed {
    pub mem: Memtable,
    /// The largest sequence number seen (at least the manifest's).
    pub last_seq: SeqNo,
    /// The newest surviving log, to keep appending to.
    pub active_log: Option<u64>,
    /// Logs to delete once the new state is durable.
    pub discard: Vec<PathBuf>,
}

/// Numbers of the `.log` files in `dir`, ascending.
pub(crate) fn list_logs(fs: &dyn FileSystem, dir: &Path) -> Result<Vec<u64>> {
    let mut logs: Vec<u64> = fs
        .list_dir(dir)?
        .iter()
        .filter_map(|p| p.file_name()?.to_str().and_then(parse_file_name))
        .filter(|(kind, _)| *kind == FileKind::Log)
        .map(|(_, n)| n)
        .collect();
    logs.sort_unstable();
    Ok(logs)
}

/// Replays the WALs numbered `log_number` and above into a memtable,
/// cutting torn tails and damage from the logs unless `read_only`.
pub(crate) fn replay_logs(
    fs: &dyn FileSystem,
    dir: &Path,
    log_number: u64,
    mut last_seq: SeqNo,
    mode: RecoveryMode,
    read_only: bool,
) -> Result<Replayed> {
    let mem = Memtable::new();
    let mut active_log = None;
    let mut discard = Vec::new();
    let mut stopped = false;
    let mut stop_at: Option<(std::path::PathBuf, u64)> = None;
    let logs = list_logs(fs, dir)?;
    // The WAL the manifest names as oldest live one is created before the
    // edit naming it and deleted only after a later edit supersedes it. If it
    // is gone while newer WALs exist, the manifest has lost that later edit
    // (damage its reader took for a torn tail): the flushed table that edit
    // installed, whose WAL is deleted, would silently vanish.
    if log_number > 0 && !logs.contains(&log_number) && logs.iter().any(|&n| n > log_number) {
        return Err(Error::corruption_in(
            &dir.join(crate::manifest::log_file_name(log_number)),
            0,
            "the manifest's oldest live WAL is missing while newer ones exist: \
             the manifest has lost an edit (a flush or compaction)",
        ));
    }
    for number in logs.into_iter().filter(|&n| n >= log_number) {
        let path = dir.join(crate::manifest::log_file_name(number));
        if stopped {
            discard.push(path);
            continue;
        }
        let bytes = fs.read(&path)?;
        let mut reader = WalReader::new(&bytes, RecordType::Batch, mode);
        for record in reader.by_ref() {
            let record = record.map_err(|e| e.at_file(&path, 0))?;
            let (base, batch) = WriteBatch::decode(record.payload)
                .map_err(|e| e.at_file(&path, record.offset + HEADER_LEN as u64))?;
            mem.apply_batch(base, &batch).map_err(|e| match e {
                Error::InvalidArgument(what) => Error::corruption_in(&path, record.offset, what),
                other => other,
            })?;
            if !batch.is_empty() {
                last_seq = last_seq.max(base + batch.len() as u64 - 1);
            }
        }
        match reader.end() {
            Some(LogEnd::TornTail { at, .. }) if !read_only => fs.truncate(&path, *at)?,
            Some(LogEnd::Stopped { at, .. }) => {
                stop_at = Some((path.clone(), *at));
                stopped = true;
            }
            Some(LogEnd::Clean | LogEnd::TornTail { .. }) | None => {}
        }
        active_log = Some(number);
    }
    if let Some((path, at)) = stop_at.filter(|_| !read_only) {
        // The logs after a point-in-time stop go first, durably, and only
        // then is the damaged one cut: cut first, a crash before the later
        // logs were deleted would leave a clean log k beside an intact
        // k + 1, and the next open would replay k + 1 after the gap.
        for later in discard.drain(..) {
            fs.remove_file(&later)?;
        }
        fs.sync_dir(dir)?;
        fs.truncate(&path, at)?;
    }
    Ok(Replayed { mem, last_seq, active_log, discard })
}
