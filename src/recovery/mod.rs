//! Recovery as one read-only scan of a database directory.
//!
//! [`scan`] does everything opening a database reads, and nothing it writes:
//! it reads `CURRENT`, replays the manifest it names, checks the stored
//! filter policy, opens every table the manifest names, and replays the
//! write-ahead logs from the manifest's log number on into a memtable, in
//! the recovery mode given. What it finds is a [`RecoveryScan`]: the state,
//! the opened tables, the memtable, what a writer must cut (torn tails, a
//! point-in-time stop) and discard, and every reason opening must refuse.
//!
//! `Db::open` applies a scan (it returns the first [`RecoveryScan::refusal`]
//! as its error, then cuts, discards and starts a new manifest); `siftdb db
//! info` and `db verify` display one. Both read the same facts from the same
//! code, so they cannot disagree about whether a database opens.
//!
//! Rules:
//! - A damaged manifest is `Corruption` naming it (a torn last edit was
//!   never acknowledged and is dropped).
//! - Every table the manifest names must exist and open, else `Corruption`
//!   naming the table file.
//! - The manifest's oldest live WAL must exist if newer WALs do: if it is
//!   gone, the manifest has lost the later edit that let it be deleted.
//! - WALs numbered at or above the log number are replayed oldest first. A
//!   torn tail is dropped (a writer truncates the log to its valid length).
//!   Damage with valid records after it is `Corruption` naming the log
//!   (strict mode), or ends recovery there (point-in-time mode: the log is
//!   cut at the damage and later logs are discarded). Older WALs are read
//!   for the report only: they were flushed, and opening deletes them.
//! - A live WAL whose whole records end before the synced end the manifest
//!   recorded for it (or that is missing) was cut after its sync: strict
//!   mode refuses with `Corruption` naming the log and both lengths (see
//!   [`WalCut`]); point-in-time mode stops there as at damage, and reports
//!   the synced writes lost ([`RecoveryReport`]). Past the recorded end, a
//!   torn tail is still just dropped.
//!
//! The scan never writes, so it is safe on a database another process has
//! open (though it may then see a log mid-append, as a torn tail).

mod cut;
mod logs;
mod whole;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::fs::FileSystem;
use crate::manifest::{
    CURRENT, FileKind, TableRecord, VersionSet, WalEnd, log_file_name, manifest_file_name, parse_file_name,
    read_current, replay, table_file_name,
};
use crate::memtable::Memtable;
use crate::policy::FilterPolicy;
use crate::table::Table;
use crate::wal::{LogEnd, RecoveryMode};
use crate::{Error, Result};

pub use cut::{RecoveryReport, WalCut};
pub use logs::LogInfo;
pub use whole::SCAN_RETRY_TIME;
pub(crate) use whole::scan_whole;

/// The manifest named by `CURRENT`, replayed.
#[derive(Debug, Clone, PartialEq)]
pub struct ManifestInfo {
    /// The manifest's file number.
    pub number: u64,
    /// The manifest file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// Edits replayed.
    pub edits: usize,
    /// Bytes of whole edits (less than `size` after a torn last edit).
    pub valid_len: u64,
    /// How the manifest ended (a torn last edit was never acknowledged).
    pub end: LogEnd,
    /// The state it describes: live tables and counters.
    pub state: VersionSet,
}

/// One live table as the manifest records it, and what opening it found.
#[derive(Debug)]
pub struct LiveTable {
    /// Its level.
    pub level: usize,
    /// The manifest's record.
    pub record: Arc<TableRecord>,
    /// Where the file should be.
    pub path: PathBuf,
    /// The file's actual size, or `None` if it is missing.
    pub actual_size: Option<u64>,
    /// The opened table (footer, index, properties and filter checked).
    pub table: Option<Table>,
    /// Why it is missing or does not open: opening the database refuses.
    pub error: Option<Error>,
}

/// Everything [`scan`] read, and what recovery would do with it.
#[derive(Debug)]
pub struct RecoveryScan {
    /// The database directory.
    pub dir: PathBuf,
    /// The live manifest.
    pub manifest: ManifestInfo,
    /// Live tables, level by level in the manifest's order.
    pub tables: Vec<LiveTable>,
    /// Write-ahead logs in the directory, oldest first.
    pub logs: Vec<LogInfo>,
    /// Table files the manifest does not name (left by an interrupted
    /// flush or compaction; deleted on the next open).
    pub unreferenced_tables: Vec<PathBuf>,
    /// Manifests other than the live one.
    pub old_manifests: Vec<PathBuf>,
    /// The writes of the replayed logs.
    pub mem: Memtable,
    /// The newest replayed log, which a writer keeps appending to.
    pub active_log: Option<u64>,
    /// Where a point-in-time recovery stopped: a writer cuts this log here,
    /// after deleting [`RecoveryScan::discard`].
    pub stop: Option<(PathBuf, u64)>,
    /// Live logs after a point-in-time stop or a cut: never replayed; a
    /// writer deletes them.
    pub discard: Vec<PathBuf>,
    /// The first live log found short of its recorded synced end (in
    /// either mode: strict opening refuses with its error, point-in-time
    /// opening stops there).
    pub cut: Option<WalCut>,
    /// The stored filter policy does not parse: opening refuses.
    pub policy_error: Option<Error>,
    /// The manifest's oldest live WAL is missing while newer ones exist:
    /// opening refuses.
    pub chain_error: Option<Error>,
}

impl RecoveryScan {
    /// The largest sequence number recovery reaches: the manifest's, or a
    /// replayed log's if larger.
    #[must_use]
    pub fn last_seq(&self) -> u64 {
        self.logs
            .iter()
            .filter(|l| l.replayed)
            .filter_map(|l| l.last_seq)
            .fold(self.manifest.state.last_seq, u64::max)
    }

    /// Whether recovery has stopped: logs read from here on are not replayed.
    fn halted(&self) -> bool {
        self.stop.is_some() || self.cut.is_some()
    }

    /// What recovery replays and loses (what [`crate::Stats::recovery`]
    /// reports after an open).
    #[must_use]
    pub fn report(&self) -> RecoveryReport {
        let replayed = || self.logs.iter().filter(|l| l.replayed);
        let torn_bytes = replayed()
            .map(|l| match &l.end {
                Some(LogEnd::TornTail { dropped, .. }) => *dropped,
                Some(LogEnd::Stopped { at, .. }) => l.size.saturating_sub(*at),
                _ => 0,
            })
            .sum();
        let synced_writes_lost = self.cut.as_ref().and_then(|_| {
            let ends = self.manifest.state.wal_ends.values();
            let newest = ends.map(|e| e.last_seq).try_fold(0, |m, s| s.map(|s| s.max(m)))?;
            Some(newest.saturating_sub(self.last_seq()))
        });
        RecoveryReport {
            logs_replayed: replayed().count() as u64,
            ops_replayed: replayed().map(|l| l.ops).sum(),
            torn_bytes,
            cut: self.cut.clone(),
            synced_writes_lost,
        }
    }

    /// The synced ends the reopened database starts from: the recorded ones
    /// of the logs it keeps, a cut log's lowered to what recovery kept (so
    /// the next open does not refuse what this one accepted), and none for a
    /// log it discards.
    #[must_use]
    pub fn kept_wal_ends(&self) -> BTreeMap<u64, WalEnd> {
        let last_seq = self.last_seq();
        let mut out = BTreeMap::new();
        for l in self.logs.iter().filter(|l| l.replayed) {
            if let Some(&end) = self.manifest.state.wal_ends.get(&l.number) {
                let kept = match &self.cut {
                    Some(cut) if cut.number == l.number => WalEnd { len: cut.found, last_seq: Some(last_seq) },
                    _ => end,
                };
                out.insert(l.number, kept);
            }
        }
        out
    }

    /// Whether opening refuses ([`RecoveryScan::refusal`] would be `Some`),
    /// taking nothing.
    #[must_use]
    pub fn refuses(&self) -> bool {
        self.policy_error.is_some()
            || self.tables.iter().any(|t| t.error.is_some())
            || self.chain_error.is_some()
            || self.logs.iter().any(|l| (l.replayed || l.missing) && l.error.is_some())
    }

    /// The error opening returns, if it refuses: the first reason it
    /// meets, in its order (the stored policy, the tables, the WAL chain,
    /// then the replayed logs). `None` when the database opens.
    #[must_use]
    pub fn refusal(&mut self) -> Option<Error> {
        self.policy_error
            .take()
            .or_else(|| self.tables.iter_mut().find_map(|t| t.error.take()))
            .or_else(|| self.chain_error.take())
            .or_else(|| self.logs.iter_mut().filter(|l| l.replayed || l.missing).find_map(|l| l.error.take()))
    }
}

/// Scans the database in `dir` as opening it would, in recovery `mode`,
/// without modifying anything.
///
/// # Errors
/// `InvalidArgument` if `dir` is missing, is not a directory, or has no
/// `CURRENT` (not a database); `Io` if a file cannot be read; `Corruption`
/// naming the file if `CURRENT` or the manifest is damaged. Damage in
/// tables or logs is not an error here: it is recorded in the result, and
/// [`RecoveryScan::refusal`] says whether opening refuses.
pub fn scan(fs: &dyn FileSystem, dir: &Path, mode: RecoveryMode) -> Result<RecoveryScan> {
    scan_reusing(fs, dir, mode, &|_| false)
}

/// [`scan`], except that a table `open` says is open already is not opened
/// again: its [`LiveTable::table`] is `None`, with no error. A secondary
/// catching up opens only the tables that are new since it last looked.
pub(crate) fn scan_reusing(
    fs: &dyn FileSystem,
    dir: &Path,
    mode: RecoveryMode,
    open: &dyn Fn(u64) -> bool,
) -> Result<RecoveryScan> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(Error::InvalidArgument(format!("{}: not a directory", dir.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::InvalidArgument(format!("{}: no such directory", dir.display())));
        }
        Err(e) => return Err(Error::Io(e)),
    }
    if !fs.exists(&dir.join(CURRENT)) {
        return Err(Error::InvalidArgument(format!(
            "{}: not a siftdb database (no CURRENT file)",
            dir.display()
        )));
    }
    let manifest = read_manifest(fs, dir)?;
    let policy_error = manifest.state.filter_policy.as_deref().and_then(|text| {
        text.parse::<FilterPolicy>()
            .err()
            .map(|e| Error::corruption_in(&manifest.path, 0, format!("stored filter policy: {e}")))
    });
    let tables = manifest
        .state
        .version
        .tables()
        .map(|(level, record)| {
            if !open(record.file_number) {
                return open_table(fs, dir, level, record);
            }
            let path = dir.join(table_file_name(record.file_number));
            LiveTable { level, record: Arc::clone(record), path, actual_size: Some(record.file_size), table: None, error: None }
        })
        .collect();

    let mut files: Vec<(FileKind, u64, PathBuf)> = fs
        .list_dir(dir)?
        .into_iter()
        .filter_map(|p| {
            let (kind, n) = p.file_name()?.to_str().and_then(parse_file_name)?;
            Some((kind, n, p))
        })
        .collect();
    let log_numbers: Vec<u64> = files.iter().filter(|(k, ..)| *k == FileKind::Log).map(|(_, n, _)| *n).collect();
    let chain_error = chain_error(dir, manifest.state.log_number, &log_numbers);
    // A log the manifest says was synced with writes in it must be there:
    // read as empty, it is a cut like any other.
    for (&n, end) in manifest.state.wal_ends.range(manifest.state.log_number..) {
        if end.len > 0 && !log_numbers.contains(&n) {
            files.push((FileKind::Log, n, dir.join(log_file_name(n))));
        }
    }
    files.sort_by_key(|(_, n, _)| *n);
    let mut report = RecoveryScan {
        dir: dir.to_path_buf(),
        tables,
        logs: Vec::new(),
        unreferenced_tables: Vec::new(),
        old_manifests: Vec::new(),
        mem: Memtable::new(),
        active_log: None,
        stop: None,
        discard: Vec::new(),
        cut: None,
        policy_error,
        chain_error,
        manifest,
    };
    for (kind, n, p) in files {
        match kind {
            FileKind::Log => logs::read_log(fs, &mut report, n, p, mode)?,
            FileKind::Table if !report.tables.iter().any(|t| t.record.file_number == n) => {
                report.unreferenced_tables.push(p);
            }
            FileKind::Manifest if n != report.manifest.number => report.old_manifests.push(p),
            _ => {}
        }
    }
    Ok(report)
}

/// [`scan`] in the default (strict) recovery mode: what `db info` and `db
/// verify` show, repeated beside a writer as `recovery::whole` says, so damage
/// it reports is not the writer's work in progress.
///
/// # Errors
/// As [`scan`].
pub fn inspect_db(fs: &dyn FileSystem, dir: &Path) -> Result<RecoveryScan> {
    scan_whole(fs, dir, RecoveryMode::default(), &mut std::collections::HashMap::new())
}

fn read_manifest(fs: &dyn FileSystem, dir: &Path) -> Result<ManifestInfo> {
    let number = read_current(fs, dir)?;
    let path = dir.join(manifest_file_name(number));
    let bytes = fs.read(&path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::corruption_in(&path, 0, "manifest named by CURRENT is missing"),
        _ => Error::Io(e),
    })?;
    let replayed = replay(&bytes).map_err(|e| e.at_file(&path, 0))?;
    Ok(ManifestInfo {
        number,
        path,
        size: bytes.len() as u64,
        edits: replayed.edits,
        valid_len: replayed.valid_len,
        end: replayed.end,
        state: replayed.state,
    })
}

fn open_table(fs: &dyn FileSystem, dir: &Path, level: usize, record: &Arc<TableRecord>) -> LiveTable {
    let path = dir.join(table_file_name(record.file_number));
    let actual_size =
        fs.open_read(&path).and_then(|f| f.metadata()).ok().filter(std::fs::Metadata::is_file).map(|m| m.len());
    let (table, error) = match actual_size {
        None => (None, Some(Error::corruption_in(&path, 0, "table named by the manifest is missing"))),
        Some(_) => match Table::open(fs, &path) {
            Ok(t) => (Some(t), None),
            Err(e) => (None, Some(e.at_file(&path, 0))),
        },
    };
    LiveTable { level, record: Arc::clone(record), path, actual_size, table, error }
}

/// The WAL the manifest names as oldest live one is created before the
/// edit naming it and deleted only after a later edit supersedes it. If it
/// is gone while newer WALs exist, the manifest has lost that later edit
/// (damage its reader took for a torn tail): the flushed table that edit
/// installed, whose WAL is deleted, would silently vanish.
fn chain_error(dir: &Path, log_number: u64, logs: &[u64]) -> Option<Error> {
    (log_number > 0 && !logs.contains(&log_number) && logs.iter().any(|&n| n > log_number)).then(|| {
        Error::corruption_in(
            &dir.join(log_file_name(log_number)),
            0,
            "the manifest's oldest live WAL is missing while newer ones exist: \
             the manifest has lost an edit (a flush or compaction)",
        )
    })
}
