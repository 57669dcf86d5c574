//! Applying a recovery scan on open: the scan (`crate::recovery`) reads
//! everything and decides; this takes its tables and memtable and, for a
//! writer, makes the cuts it found durable.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use crate::Result;
use crate::fs::FileSystem;
use crate::key::SeqNo;
use crate::manifest::{FileKind, WalEnd, parse_file_name};
use crate::memtable::Memtable;
use crate::recovery::{RecoveryReport, RecoveryScan, scan};
use crate::tree::TableFile;
use crate::wal::{LogEnd, RecoveryMode};

/// Scans `dir` and returns the scan if the database opens, else the first
/// reason it does not.
pub(crate) fn scan_to_open(fs: &dyn FileSystem, dir: &Path, mode: RecoveryMode) -> Result<RecoveryScan> {
    let mut scanned = scan(fs, dir, mode)?;
    match scanned.refusal() {
        Some(e) => Err(e),
        None => Ok(scanned),
    }
}

/// The scan's opened tables, as the tree holds them (none for a new database).
pub(crate) fn table_files(
    fs: &Arc<dyn FileSystem>,
    scanned: Option<&mut RecoveryScan>,
    cleanup_failures: &Arc<AtomicU64>,
) -> HashMap<u64, Arc<TableFile>> {
    let mut out = HashMap::new();
    for t in scanned.map(|s| &mut s.tables).into_iter().flatten() {
        // `scan_to_open` refused any table that did not open.
        if let Some(table) = t.table.take() {
            let file = TableFile::new(
                Arc::clone(&t.record),
                table,
                t.path.clone(),
                Arc::clone(fs),
                Arc::clone(cleanup_failures),
            );
            out.insert(t.record.file_number, Arc::new(file));
        }
    }
    out
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
    /// What was replayed and lost.
    pub report: RecoveryReport,
    /// The synced ends of the logs kept (see
    /// [`RecoveryScan::kept_wal_ends`]).
    pub wal_ends: BTreeMap<u64, WalEnd>,
}

/// Takes the scan's replayed writes for a writer, after cutting what it
/// found: torn tails are truncated to their valid length, and after a
/// point-in-time stop the later logs are deleted (durably) before the
/// stopped log is cut. Cut first, a crash before the later logs were
/// deleted would leave a clean log k beside an intact k + 1, and the next
/// open would replay k + 1 after the gap.
pub(crate) fn apply(
    fs: &dyn FileSystem,
    dir: &Path,
    scanned: Option<RecoveryScan>,
    manifest_seq: SeqNo,
) -> Result<Replayed> {
    let Some(mut s) = scanned else {
        return Ok(Replayed {
            mem: Memtable::new(),
            last_seq: manifest_seq,
            active_log: None,
            discard: Vec::new(),
            report: RecoveryReport::default(),
            wal_ends: BTreeMap::new(),
        });
    };
    for log in s.logs.iter().filter(|l| l.replayed) {
        if let Some(LogEnd::TornTail { at, .. }) = &log.end {
            fs.truncate(&log.path, *at)?;
        }
    }
    // A cut at a missing log stops recovery with nothing to truncate.
    if !s.discard.is_empty() {
        for later in s.discard.drain(..) {
            fs.remove_file(&later)?;
        }
        fs.sync_dir(dir)?;
    }
    if let Some((path, at)) = s.stop.take() {
        fs.truncate(&path, at)?;
    }
    Ok(read_only(s))
}

/// Takes the scan's replayed writes and cuts nothing: a torn tail or the
/// damage stays in place, and logs after a stop are skipped, not deleted.
pub(crate) fn read_only(s: RecoveryScan) -> Replayed {
    let last_seq = s.last_seq();
    let report = s.report();
    let wal_ends = s.kept_wal_ends();
    Replayed { mem: s.mem, last_seq, active_log: s.active_log, discard: s.discard, report, wal_ends }
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
